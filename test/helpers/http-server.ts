/**
 * Test helpers for the HTTP layer: the REST app on a real server bound to a
 * free port of 127.0.0.1, a small fetch client for it, and the one assertion
 * every error answer must pass (status, `{"error": "..."}` body and the
 * Positioner-Error-Code header).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { LIVE_STATUS_PATH, type LiveStatus, type LiveStatusOptions } from '../../api/live-status';
import { createApiServer } from '../../api/server';
import type { AppDeps } from '../../api/app';
import type { Positioner } from '../../firmware/positioner';
import { driverRigs, type DriverRig } from './sim';

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Raw body text. */
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
}

export interface SendOptions {
  /** Sent as is (no Content-Type is added). */
  raw?: string | Uint8Array;
  /** JSON-encoded and sent with Content-Type: application/json. */
  json?: unknown;
  headers?: Record<string, string>;
}

export interface ApiClient {
  baseUrl: string;
  server: http.Server;
  /** The live status feed on the same server; its WebSocket URL. */
  live: LiveStatus;
  wsUrl: string;
  send(method: string, path: string, opts?: SendOptions): Promise<ApiResponse>;
  get(path: string): Promise<ApiResponse>;
  /** POST with a JSON body; with no body argument, POST with no body at all. */
  post(path: string, json?: unknown): Promise<ApiResponse>;
}

/**
 * Over a serial line (test/helpers/sim.ts): the board catches up before the
 * request is handled and again before its answer leaves, so what a test sees
 * is what the machine did at the virtual time it set.
 */
function inStepWithTheLine(server: http.Server, rig: DriverRig): void {
  const listeners = server.listeners('request') as http.RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    void rig.settle().then(() => {
      const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
      res.end = ((...args: unknown[]) => {
        void rig.settle().then(() => end(...args));
        return res;
      }) as typeof res.end;
      for (const listener of listeners) listener(req, res);
    });
  });
}

/** Serves the API and its live feed (createApiServer, as `positioner serve` does) on 127.0.0.1 and a free port until the test ends. */
export async function serveApi(t: Test, positioner: Positioner, liveStatus?: LiveStatusOptions, extra: Omit<AppDeps, 'positioner'> = {}): Promise<ApiClient> {
  const rig = driverRigs.get(positioner);
  if (rig) {
    t.teardown(() => rig.close());
    await rig.ready;
  }
  const api = createApiServer({ positioner, ...extra }, { liveStatus });
  const { server } = api;
  if (rig) inStepWithTheLine(server, rig);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  t.teardown(() => api.close());
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;

  const send = async (method: string, path: string, opts: SendOptions = {}): Promise<ApiResponse> => {
    const headers: Record<string, string> = { ...opts.headers };
    // A copy makes any Uint8Array (a Buffer too) a BodyInit.
    let payload: string | Uint8Array<ArrayBuffer> | undefined = typeof opts.raw === 'string' ? opts.raw : opts.raw && new Uint8Array(opts.raw);
    if (opts.json !== undefined) {
      payload = JSON.stringify(opts.json);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(baseUrl + path, { method, headers, body: payload });
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, text, body };
  };

  return {
    baseUrl,
    server,
    live: api.live,
    wsUrl: `ws://127.0.0.1:${port}${LIVE_STATUS_PATH}`,
    send,
    get: (path) => send('GET', path),
    post: (path, json) => send('POST', path, json === undefined ? {} : { json }),
  };
}

/** The response is JSON (by Content-Type and by parse). */
export function assertJson(t: Test, res: ApiResponse, what = 'response'): void {
  t.match(res.headers.get('content-type') ?? '', /^application\/json/, `${what} has a JSON Content-Type`);
  t.ok(res.body !== undefined, `${what} body parses as JSON: ${res.text.slice(0, 80)}`);
}

/**
 * An error answer: the given status, a body whose only key is `error` (a
 * non-empty string), and the stable code in Positioner-Error-Code.
 */
export function assertError(t: Test, res: ApiResponse, status: number, code: string, what = 'error'): void {
  t.equal(res.status, status, `${what}: HTTP ${status} (body ${res.text.slice(0, 160)})`);
  assertJson(t, res, what);
  const body = res.body as Record<string, unknown> | undefined;
  t.same(body && typeof body === 'object' ? Object.keys(body) : body, ['error'], `${what}: the body's only key is error`);
  t.ok(typeof body?.error === 'string' && body.error.length > 0, `${what}: error is a non-empty string`);
  t.equal(res.headers.get('positioner-error-code'), code, `${what}: Positioner-Error-Code is ${code}`);
}
