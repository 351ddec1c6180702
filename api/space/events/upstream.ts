/**
 * GET from an upstream with a timeout and a size cap. A 429 becomes an
 * UpstreamThrottledError carrying when the upstream allows the next call
 * (its Retry-After, or an hour when it gives none); any other non-2xx an
 * UpstreamHttpError. Nothing here retries: the caller decides when to ask
 * again.
 */
import { retryAfterMs } from '../push';

export class UpstreamHttpError extends Error {
  constructor(readonly status: number, url: string) {
    super(`${new URL(url).host} answered HTTP ${status}`);
    this.name = 'UpstreamHttpError';
  }
}

export class UpstreamThrottledError extends Error {
  constructor(readonly retryAt: Date, url: string) {
    super(`${new URL(url).host} is rate limiting us (HTTP 429); next call after ${retryAt.toISOString()}`);
    this.name = 'UpstreamThrottledError';
  }
}

export interface FetchOptions {
  timeoutMs: number;
  maxBytes: number;
  now: Date;
}

const DEFAULT_THROTTLE_MS = 3600_000;

/** The answer of a GET whose status and declared size are acceptable; its body is still unread. */
async function openUpstream(url: string, opts: FetchOptions): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { 'User-Agent': 'positioner-space-service/0.1', Accept: 'application/json, text/csv, */*' },
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
  } catch (e) {
    throw fetchError(e, url, opts);
  }
  if (res.status === 429) {
    await res.body?.cancel();
    const wait = retryAfterMs(res.headers.get('retry-after'), opts.now) ?? DEFAULT_THROTTLE_MS;
    throw new UpstreamThrottledError(new Date(opts.now.getTime() + wait), url);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new UpstreamHttpError(res.status, url);
  }
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > opts.maxBytes) {
    await res.body?.cancel();
    throw new Error(`${new URL(url).host} answer is too large (${declared} bytes, limit ${opts.maxBytes})`);
  }
  return res;
}

function fetchError(e: unknown, url: string, opts: FetchOptions): Error {
  const err = e as Error;
  if (err.name === 'TimeoutError') return new Error(`${new URL(url).host} did not answer within ${opts.timeoutMs} ms`);
  const cause = (err.cause as { code?: string; message?: string } | undefined) ?? {};
  return new Error(`${new URL(url).host} unreachable: ${cause.code ?? cause.message ?? err.message}`);
}

export async function fetchText(url: string, opts: FetchOptions): Promise<string> {
  const res = await openUpstream(url, opts);
  const text = await res.text().catch((e: unknown) => {
    throw fetchError(e, url, opts);
  });
  if (text.length > opts.maxBytes) throw new Error(`${new URL(url).host} answer is too large (limit ${opts.maxBytes} bytes)`);
  return text;
}

/**
 * The answer's text as it arrives, chunk by chunk (UTF-8 decoded across
 * chunk boundaries), for parsers that read a large file without holding it
 * or blocking the event loop; the size cap and timeout apply while reading.
 */
export async function* fetchTextChunks(url: string, opts: FetchOptions): AsyncGenerator<string> {
  const res = await openUpstream(url, opts);
  if (!res.body) return;
  const decoder = new TextDecoder('utf-8');
  let bytes = 0;
  const reader = res.body.getReader();
  try {
    for (;;) {
      let r: ReadableStreamReadResult<Uint8Array>;
      try {
        r = await reader.read();
      } catch (e) {
        throw fetchError(e, url, opts);
      }
      if (r.done) break;
      bytes += r.value.byteLength;
      if (bytes > opts.maxBytes) throw new Error(`${new URL(url).host} answer is too large (limit ${opts.maxBytes} bytes)`);
      yield decoder.decode(r.value, { stream: true });
    }
    const tail = decoder.decode();
    if (tail) yield tail;
  } finally {
    await reader.cancel().catch(() => {});
  }
}

export async function fetchJson(url: string, opts: FetchOptions): Promise<unknown> {
  const text = await fetchText(url, opts);
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${new URL(url).host} answered something that is not JSON: ${JSON.stringify(text.slice(0, 60))}`);
  }
}
