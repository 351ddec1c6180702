/**
 * Test helpers for the space service: the service on a real server bound to
 * a free port (on a real SQLite file in the test's own folder), a JSON
 * client, the error-answer assertion, a real local push service
 * (web-push-testing run in-process) and a fake upstream HTTP server whose
 * routes a test programs.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Test } from 'tap';
import { ManualClock, type Clock } from '../../api/space/clock';
import { configFromEnv, type SpaceConfig } from '../../api/space/config';
import { generateVapidKeys, type VapidConfig } from '../../api/space/push';
import { startSpaceService, type SpaceService } from '../../api/space/serve';
import { freePort } from './cli';
import { listenLocal } from './listen';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests index into answers freely
}

export interface JsonClient {
  baseUrl: string;
  send(method: string, path: string, opts?: { json?: unknown; raw?: string; headers?: Record<string, string> }): Promise<Reply>;
  get(path: string): Promise<Reply>;
  post(path: string, json?: unknown): Promise<Reply>;
  put(path: string, json?: unknown): Promise<Reply>;
  del(path: string): Promise<Reply>;
}

export function jsonClient(baseUrl: string): JsonClient {
  const send: JsonClient['send'] = async (method, p, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    let body: string | undefined = opts.raw;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(baseUrl + p, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  };
  return {
    baseUrl,
    send,
    get: (p) => send('GET', p),
    post: (p, json) => send('POST', p, { json }),
    put: (p, json) => send('PUT', p, { json }),
    del: (p) => send('DELETE', p),
  };
}

/** An error answer: the status, a JSON body `{error, code}` with a non-empty message and the stable code. */
export function assertSpaceError(t: Test, res: Reply, status: number, code: string, what = 'error'): void {
  t.equal(res.status, status, `${what}: HTTP ${status} (body ${res.text.slice(0, 200)})`);
  t.match(res.headers.get('content-type') ?? '', /^application\/json/, `${what}: JSON content type`);
  t.strictSame(Object.keys(res.body ?? {}).sort(), ['code', 'error'], `${what}: body is {error, code}`);
  t.ok(typeof res.body?.error === 'string' && res.body.error.length > 0, `${what}: error is a non-empty string`);
  t.equal(res.body?.code, code, `${what}: code ${code}`);
}

/** Upstreams that refuse connections at once: nothing here reaches the internet. */
export const DEAD_UPSTREAMS = {
  SOCRATES_URL: 'http://127.0.0.1:9/socrates.csv',
  NEOWS_URL: 'http://127.0.0.1:9/neo/rest/v1/feed',
  LL2_ASTRONAUTS_URL: 'http://127.0.0.1:9/2.2.0/astronaut/?in_space=true',
  OPEN_NOTIFY_URL: 'http://127.0.0.1:9/astros.json',
};

export interface StartOptions {
  /** The database file (default: a new one in the test's folder). */
  dbPath?: string;
  vapid?: VapidConfig | null;
  clock?: Clock;
  /** Extra environment (upstream URLs …) read by configFromEnv. */
  env?: Record<string, string>;
  /** Wait for the start-up refresh before returning (default true). */
  awaitInitialRefresh?: boolean;
}

export interface Harness {
  service: SpaceService;
  api: JsonClient;
  config: SpaceConfig;
  dbPath: string;
  /** Every wait (ms) the push sender asked for between retries; nothing really waits. */
  sleeps: number[];
  /** Stops the service (also done at teardown). */
  stop(): Promise<void>;
}

export function testVapid(): VapidConfig {
  return { ...generateVapidKeys(), subject: 'mailto:tests@example.org' };
}

/** The service on 127.0.0.1:0 with timers off (tests call tick()), retries recorded instead of waited for. */
export async function startService(t: Test, opts: StartOptions = {}): Promise<Harness> {
  const dbPath = opts.dbPath ?? path.join(t.testdir(), 'space.db');
  const config = configFromEnv({ ...DEAD_UPSTREAMS, UPSTREAM_MIN_INTERVAL_SECONDS: '0', ...opts.env, PORT: '0', HOST: '127.0.0.1', DATABASE_PATH: dbPath });
  config.vapid = opts.vapid === undefined ? testVapid() : opts.vapid;
  config.push = { ...config.push, timeoutMs: 5000 };
  const sleeps: number[] = [];
  const service = await startSpaceService(config, { clock: opts.clock ?? new ManualClock('2026-11-21T12:00:00Z'), timers: false,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await service.close();
  };
  t.teardown(stop);
  if (opts.awaitInitialRefresh !== false) await service.initialRefresh;
  return { service, api: jsonClient(service.url), config, dbPath, sleeps, stop };
}

// --- a real push service --------------------------------------------------

export interface PushSubscriptionJson {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  clientHash: string;
}

export interface LocalPushService {
  url: string;
  subscribe(applicationServerKey: string): Promise<PushSubscriptionJson>;
  /** Payloads the service decrypted for this client, oldest first. */
  received(clientHash: string): Promise<string[]>;
  /** Later pushes to this client answer 410 Gone. */
  expire(clientHash: string): Promise<void>;
}

/**
 * web-push-testing's server in this process: it verifies the VAPID JWT and
 * decrypts each payload. Its package `main` is broken, so src/server.js is
 * loaded directly; it keeps its model in module state, so one per process.
 * Also used by bench/space-push.ts.
 */
export async function launchPushService(): Promise<LocalPushService & { close(): Promise<void> }> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const Server = require('web-push-testing/src/server.js') as new (model: unknown, port: number) => { startServer(): void; _server: http.Server };
  const Model = require('web-push-testing/src/PushApiModel.js').PushApiModel as new () => { notifyUrl: string };
  /* eslint-enable @typescript-eslint/no-require-imports */
  const port = await freePort();
  const model = new Model();
  const server = new Server(model, port);
  const log = console.log;
  console.log = () => {}; // it announces its port on stdout, which would confuse tap
  server.startServer();
  await new Promise<void>((resolve) => (server._server.listening ? resolve() : server._server.once('listening', () => resolve())));
  console.log = log;
  const url = `http://127.0.0.1:${port}`;
  model.notifyUrl = `${url}/notify/`;
  const call = async (p: string, body?: unknown) => {
    const res = await fetch(url + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
    const text = await res.text();
    if (!res.ok) throw new Error(`push service ${p}: ${res.status} ${text}`);
    return res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as { data: unknown }) : { data: undefined };
  };
  return {
    url,
    subscribe: async (key) => (await call('/subscribe', { applicationServerKey: key, userVisibleOnly: 'true' })).data as PushSubscriptionJson,
    received: async (clientHash) => ((await call('/get-notifications', { clientHash })).data as { messages: string[] }).messages,
    expire: async (clientHash) => {
      await call(`/expire-subscription/${clientHash}`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server._server.close(() => resolve());
        server._server.closeAllConnections();
      }),
  };
}

/** launchPushService() until the test ends. */
export async function startPushService(t: Test): Promise<LocalPushService> {
  const service = await launchPushService();
  t.teardown(() => service.close());
  return service;
}

// --- a fake upstream ----------------------------------------------------------

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface FakeUpstream {
  url: string;
  /** Requests seen per path (without the query). */
  hits: Map<string, number>;
  /** Query strings seen per path. */
  queries: Map<string, string[]>;
  route(pathname: string, handler: Handler): void;
}

/** A local HTTP server standing in for CelesTrak, NeoWs, Launch Library 2 and Open Notify. */
export async function startFakeUpstream(t: Test): Promise<FakeUpstream> {
  const routes = new Map<string, Handler>();
  const hits = new Map<string, number>();
  const queries = new Map<string, string[]>();
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    hits.set(u.pathname, (hits.get(u.pathname) ?? 0) + 1);
    queries.set(u.pathname, [...(queries.get(u.pathname) ?? []), u.search]);
    const h = routes.get(u.pathname);
    if (!h) {
      res.writeHead(404).end('not here');
      return;
    }
    h(req, res);
  });
  const port = await listenLocal(t, server);
  return { url: `http://127.0.0.1:${port}`, hits, queries, route: (p, h) => routes.set(p, h) };
}

/** A handler answering with a fixture file from test/space/fixtures. */
export function serveFixture(name: string, contentType: string): Handler {
  const body = fs.readFileSync(path.join(__dirname, '..', 'space', 'fixtures', name));
  return (_req, res) => {
    res.writeHead(200, { 'content-type': contentType, 'content-length': body.length });
    res.end(body);
  };
}

/** The env that points every upstream at a fake upstream. */
export function upstreamEnv(u: FakeUpstream): Record<string, string> {
  return {
    SOCRATES_URL: `${u.url}/SOCRATES/sort-minRange.csv`,
    NEOWS_URL: `${u.url}/neo/rest/v1/feed`,
    NASA_API_KEY: 'TEST_KEY',
    LL2_ASTRONAUTS_URL: `${u.url}/2.2.0/astronaut/?in_space=true`,
    OPEN_NOTIFY_URL: `${u.url}/astros.json`,
  };
}
