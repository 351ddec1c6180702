/**
 * A small client for the positioner API at POSITIONER_HOST, used by the CLI's
 * client commands. Errors carry what to do next.
 */
export const DEFAULT_HOST = 'http://127.0.0.1:8080';

export class ClientError extends Error {
  constructor(
    message: string,
    /** HTTP status, or 0 when the positioner could not be reached. */
    readonly status: number,
    readonly code?: string,
    /** The API's own `error` text, when the positioner answered with one. */
    readonly apiError?: string,
  ) {
    super(message);
    this.name = 'ClientError';
  }
}

/** POSITIONER_HOST or --host that is neither a port, host:port nor a URL: a usage error. */
export class HostError extends Error {
  override readonly name = 'HostError';
}

/**
 * Accepts a bare port (`8080`, `:8080`: this machine, 127.0.0.1, where `serve`
 * listens by default), `host:port`, `http://host:port` or a full base URL;
 * trailing slashes are dropped. `from` names where the value came from.
 */
export function baseUrl(host: string | undefined, from = 'POSITIONER_HOST'): string {
  const h = (host && host.trim()) || DEFAULT_HOST;
  const port = /^:?(\d+)$/.exec(h);
  if (port && !(Number(port[1]) >= 1 && Number(port[1]) <= 65535)) throw new HostError(`${from} '${h}' is not a port from 1 to 65535`);
  const withScheme = port ? `http://127.0.0.1:${port[1]}` : /^[a-z][a-z0-9+.-]*:\/\//i.test(h) ? h : `http://${h}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new HostError(`${from} '${h}' is not a port, host:port or URL (e.g. 8080, 127.0.0.1:8080, http://lab-pc:8080)`);
  }
  return url.href.replace(/\/+$/, '');
}

export interface StatusBody {
  theta_deg: number;
  phi_deg: number;
  moving: boolean;
  homed: boolean;
  state?: string;
  fault?: { code: string; message: string } | null;
}

export class PositionerClient {
  constructor(
    readonly base: string,
    private readonly timeoutMs = 5000,
  ) {}

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        method,
        headers: body === undefined ? undefined : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      const c = (e as { cause?: { code?: string; message?: string } }).cause;
      const cause = c?.code ?? c?.message ?? (e as Error).message;
      throw new ClientError(
        `cannot reach the positioner at ${this.base} (${cause}); start it with \`positioner serve\` or point POSITIONER_HOST (or --host) at it`,
        0,
      );
    }
    const text = await res.text();
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : {};
    } catch {
      throw new ClientError(`${method} ${path}: the server at ${this.base} answered ${res.status} with non-JSON; is POSITIONER_HOST a positioner?`, res.status);
    }
    if (!res.ok) {
      const apiError = (data as { error?: string }).error;
      const msg = apiError ?? `HTTP ${res.status}`;
      throw new ClientError(`${method} ${path} failed (${res.status}): ${msg}`, res.status, res.headers.get('positioner-error-code') ?? undefined, apiError);
    }
    return data as T;
  }
}
