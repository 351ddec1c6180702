/**
 * The notifications and space-events HTTP API (seed 002) as an express app.
 *
 * buildSpaceHandler() never listens: api/space/serve.ts binds it. It
 * answers the log's two hot reads itself (see there) and hands every other
 * request to the express app of buildSpaceApp().
 * Inputs are checked in api/space/validation.ts; every error answer is
 * `{"error": "...", "code": "SPACE_ERR_..."}` with the status of the
 * catalogue in api/space/errors.ts. It also serves the subscribe page
 * (api/space/web/) at `/` unless turned off, and answers pages on the
 * origins listed in CORS_ORIGINS (api/space/cors.ts).
 */
import type http from 'node:http';
import querystring from 'node:querystring';
import express, { type NextFunction, type Request, type Response } from 'express';
import { isCategory, isGlobalCategory, isLocationCategory } from './categories';
import type { Notifier } from './delivery';
import { SpaceError, type SpaceErrorCode } from './errors';
import type { EventRefresher } from './events/refresher';
import { FEED_PATH } from './ws-feed';
import type { Clock } from './clock';
import { Cors } from './cors';
import { checkCategoryConfig } from './rules';
import type { Store } from './store';
import { parseId, parsePage, parsePreference, parseSubscribe } from './validation';
import { loadPage, PAGE_PATHS } from './web/assets';

export interface SpaceAppDeps {
  store: Store;
  notifier: Notifier;
  events: EventRefresher;
  clock: Clock;
  /** The VAPID public key, or null when push is not configured. */
  vapidPublicKey: string | null;
  /** Serve the subscribe page at `/` (default true; SUBSCRIBE_PAGE=off turns it off). */
  page?: boolean;
  /** Origins allowed to call the API from their own pages (CORS); default none. */
  corsOrigins?: readonly string[];
}

const BODY_LIMIT = '16kb';

/** The command the 503 for missing VAPID keys names (test/space/cli.test.ts runs it as npm would). */
export const VAPID_KEYS_COMMAND = 'npm run --silent space -- vapid-keys';

function categoryParam(raw: string): string {
  if (!isCategory(raw)) throw new SpaceError('SPACE_ERR_INVALID', `unknown category "${raw}"; see GET /api/notifications/preferences docs for the list (docs/space.md)`);
  return raw;
}

/** What every answer carries: no caching anywhere (the log and the events change), and the CORS headers. */
function commonHeaders(cors: Cors, req: http.IncomingMessage, res: http.ServerResponse): void {
  res.setHeader('Cache-Control', 'no-store');
  cors.apply(req, res);
}

/**
 * GET /api/notifications: a page of the log as Store.notificationPage() keeps
 * it, with a `Link` to the next page by keyset when the page is full (it may
 * have more behind it, whichever way this one was asked for). Throws the
 * SpaceError of a bad query, or the store's error, before anything is set on
 * the answer.
 */
function logPageAnswer(store: Store, query: Record<string, unknown>): { link: string | null; body: string } {
  const { limit, offset, beforeId } = parsePage(query);
  const page = store.notificationPage(limit, beforeId === null ? { offset } : { beforeId });
  return { link: page.count === limit ? `</api/notifications?limit=${limit}&before_id=${page.lastId}>; rel="next"` : null, body: page.body };
}

function sendJson(res: http.ServerResponse, body: string, link: string | null = null): void {
  if (link !== null) res.setHeader('Link', link);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(body);
}

/**
 * The service's request handler: the express app, with the log's two hot
 * reads (the history page and the unread count: what the subscribe page and
 * polling clients ask for most) answered before it, on node:http alone. Under
 * load, express's routing and its per-request objects cost more than these
 * answers themselves (docs/benchmarks.md, bench:space-log). They send the
 * same headers and bytes as the express routes below, which still serve
 * every other spelling of these paths, HEAD, and any request these cannot
 * answer: a query that fails validation, or a store that throws (the express
 * route then answers with the JSON error).
 */
export function buildSpaceHandler(deps: SpaceAppDeps): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const cors = new Cors(deps.corsOrigins ?? []);
  const app = buildSpaceApp(deps, cors);
  const { store } = deps;
  const fast = (req: http.IncomingMessage): { link: string | null; body: string } | null => {
    if (req.method !== 'GET' || req.url === undefined || !req.url.startsWith('/api/notifications')) return null;
    const q = req.url.indexOf('?');
    const path = q === -1 ? req.url : req.url.slice(0, q);
    if (path === '/api/notifications/unread-count') return { link: null, body: `{"count":${store.unreadCount()}}` };
    // express's 'simple' query parser is querystring.parse: the same values reach parsePage() on both paths.
    if (path === '/api/notifications') return logPageAnswer(store, q === -1 ? {} : querystring.parse(req.url.slice(q + 1)));
    return null;
  };
  return (req, res) => {
    let answer: { link: string | null; body: string } | null = null;
    try {
      answer = fast(req);
    } catch {
      answer = null;
    }
    if (answer === null) {
      app(req, res);
      return;
    }
    commonHeaders(cors, req, res);
    sendJson(res, answer.body, answer.link);
  };
}

export function buildSpaceApp(deps: SpaceAppDeps, cors = new Cors(deps.corsOrigins ?? [])): express.Express {
  const { store, notifier, events, clock } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  app.use((req, res, next) => {
    commonHeaders(cors, req, res);
    next();
  });
  // Bodies are JSON whatever their Content-Type; an empty body reads as none.
  const json = express.json({ type: () => true, limit: BODY_LIMIT, strict: true });

  // --- notifications -------------------------------------------------------

  app.get('/api/notifications/vapid-key', (_req, res) => {
    if (!deps.vapidPublicKey) {
      throw new SpaceError('SPACE_ERR_VAPID_NOT_CONFIGURED', `push is not configured: set VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY and VAPID_SUBJECT; make a pair with \`${VAPID_KEYS_COMMAND}\` in the repository (\`space vapid-keys\` where the package is installed)`);
    }
    res.json({ public_key: deps.vapidPublicKey });
  });

  app.post('/api/notifications/subscribe', json, (req, res) => {
    const s = parseSubscribe(req.body);
    res.json(store.upsertSubscription(s, clock.now()));
  });

  app.delete('/api/notifications/subscribe/:sub_id', (req, res) => {
    const id = parseId(req.params.sub_id as string, 'sub_id');
    if (!store.deactivateSubscription(id, clock.now())) throw new SpaceError('SPACE_ERR_NOT_FOUND', `no subscription with id ${id}`);
    res.json({ ok: true });
  });

  app.get('/api/notifications/preferences', (_req, res) => {
    res.json(store.listPreferences());
  });

  app.put('/api/notifications/preferences/global/:category', json, (req, res) => {
    const category = categoryParam(req.params.category as string);
    if (isLocationCategory(category)) {
      throw new SpaceError('SPACE_ERR_LOCATION_CATEGORY_ON_GLOBAL', `"${category}" is a location category; write it with PUT /api/notifications/preferences/{location_id}/${category}`);
    }
    const fields = parsePreference(req.body);
    checkCategoryConfig(category, fields.config);
    res.json(store.savePreference(null, category, fields, clock.now()));
  });

  app.put('/api/notifications/preferences/:location_id/:category', json, (req, res) => {
    const locationId = parseId(req.params.location_id as string, 'location_id');
    const category = categoryParam(req.params.category as string);
    const fields = parsePreference(req.body);
    checkCategoryConfig(category, fields.config);
    res.json(store.savePreference(locationId, category, fields, clock.now()));
  });

  app.delete('/api/notifications/preferences/global/:category', (req, res) => {
    const category = categoryParam(req.params.category as string);
    if (!store.deletePreference(null, category)) throw new SpaceError('SPACE_ERR_NOT_FOUND', `no global preference for "${category}"`);
    res.json({ ok: true });
  });

  app.delete('/api/notifications/preferences/:location_id/:category', (req, res) => {
    const locationId = parseId(req.params.location_id as string, 'location_id');
    const category = categoryParam(req.params.category as string);
    if (!store.deletePreference(locationId, category)) throw new SpaceError('SPACE_ERR_NOT_FOUND', `no preference for "${category}" at location ${locationId}`);
    res.json({ ok: true });
  });

  app.get('/api/notifications', (req, res) => {
    const { link, body } = logPageAnswer(store, req.query as Record<string, unknown>);
    sendJson(res, body, link);
  });

  app.get('/api/notifications/unread-count', (_req, res) => {
    res.json({ count: store.unreadCount() });
  });

  // Before /:notification_id/read so "read-all" is never read as an id.
  app.post('/api/notifications/read-all', (_req, res) => {
    store.markAllRead(clock.now());
    res.json({ ok: true });
  });

  app.post('/api/notifications/test', async (_req, res) => {
    const r = await notifier.sendTest();
    res.json({ ok: true, sent_count: r.push?.sent ?? 0, notification_id: r.entry?.id ?? null });
  });

  app.post('/api/notifications/:notification_id/read', (req, res) => {
    const id = parseId(req.params.notification_id as string, 'notification_id');
    if (!store.markRead(id, clock.now())) throw new SpaceError('SPACE_ERR_NOT_FOUND', `no notification with id ${id}`);
    res.json({ ok: true });
  });

  // --- space events --------------------------------------------------------

  const meta = (s: { origin: string | null; fetched_at: string | null; last_error: string | null }) => ({
    source: s.origin,
    updated_at: s.fetched_at,
    last_error: s.last_error,
  });

  app.get('/api/events/conjunctions', (_req, res) => {
    const s = events.conjunctions();
    const list = s.data ?? [];
    res.json({ conjunctions: list, count: list.length, ...meta(s) });
  });

  app.get('/api/events/neos', (_req, res) => {
    const s = events.neos();
    const list = s.data ?? [];
    res.json({ neos: list, count: list.length, hazardous_count: list.filter((n) => n.is_potentially_hazardous).length, ...meta(s) });
  });

  app.get('/api/events/astronauts', (_req, res) => {
    const s = events.astronauts();
    const list = s.data?.astronauts ?? [];
    res.json({ astronauts: list, count: list.length, crafts: s.data?.crafts ?? [], ...meta(s) });
  });

  app.post('/api/events/refresh', (_req, res) => {
    const { started, done } = events.refresh();
    // The outcome is recorded per source (GET /api/events/status); nothing here waits for it.
    done.catch(() => {});
    res.json({
      status: 'refreshing',
      message: started
        ? 'refresh of conjunctions, NEOs and astronauts started in the background; see GET /api/events/status'
        : 'a refresh is already running; it was not started twice',
      already_running: !started,
    });
  });

  app.get('/api/events/status', (_req, res) => {
    res.json({ refreshing: events.running, sources: events.status(), last_refresh: events.lastRefresh });
  });

  // --- the subscribe page (api/space/web/) ---------------------------------

  const page = deps.page === false ? null : loadPage();
  if (page) {
    app.get(PAGE_PATHS, (req, res) => {
      const asset = page.get(req.path)!;
      res.set(asset.headers).send(asset.body);
    });
  }

  // --- everything else -----------------------------------------------------

  const routes: Record<string, string[]> = {
    '/api/notifications/vapid-key': ['GET'],
    '/api/notifications/subscribe': ['POST'],
    '/api/notifications/subscribe/:sub_id': ['DELETE'],
    '/api/notifications/preferences': ['GET'],
    '/api/notifications/preferences/:location_id/:category': ['PUT', 'DELETE'],
    '/api/notifications': ['GET'],
    '/api/notifications/unread-count': ['GET'],
    '/api/notifications/read-all': ['POST'],
    '/api/notifications/test': ['POST'],
    '/api/notifications/:notification_id/read': ['POST'],
    '/api/events/conjunctions': ['GET'],
    '/api/events/neos': ['GET'],
    '/api/events/astronauts': ['GET'],
    '/api/events/refresh': ['POST'],
    '/api/events/status': ['GET'],
    ...(page ? Object.fromEntries(PAGE_PATHS.map((p) => [p, ['GET']])) : {}),
  };
  for (const [path, methods] of Object.entries(routes)) {
    app.all(path, (req, res) => {
      if (cors.preflight(req, res, methods)) return;
      res.setHeader('Allow', methods.join(', '));
      throw new SpaceError('SPACE_ERR_METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.path}; use ${methods.join(' or ')}`);
    });
  }

  app.use((req) => {
    const hint =
      req.path === FEED_PATH
        ? ' (the live feed needs a WebSocket upgrade)'
        : !page && PAGE_PATHS.includes(req.path)
          ? `; the subscribe page is ${deps.page === false ? 'turned off (SUBSCRIBE_PAGE=off)' : 'not installed (api/space/web/ is missing)'}; the API is under /api (docs/space.md)`
          : '; see docs/space.md for the API';
    throw new SpaceError('SPACE_ERR_NOT_FOUND', `no such endpoint: ${req.method} ${req.path}${hint}`);
  });

  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const { status, code, message } = toHttpError(err);
    res.status(status).json({ error: message, code });
  });

  return app;
}

function toHttpError(err: unknown): { status: number; code: SpaceErrorCode; message: string } {
  if (err instanceof SpaceError) return { status: err.status, code: err.code, message: err.message };
  const e = err as { type?: string; status?: number; message?: string };
  if (e?.type === 'entity.parse.failed') return { status: 400, code: 'SPACE_ERR_MALFORMED_JSON', message: `request body is not a JSON object: ${e.message}` };
  if (e?.type === 'entity.too.large') return { status: 413, code: 'SPACE_ERR_PAYLOAD_TOO_LARGE', message: `request body too large (limit ${BODY_LIMIT})` };
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) return { status: 400, code: 'SPACE_ERR_MALFORMED_JSON', message: `unreadable request body: ${e.message}` };
  return { status: 500, code: 'SPACE_ERR_INTERNAL', message: `internal error: ${err instanceof Error ? err.message : String(err)}` };
}

/** Requests the HTTP parser rejects get the same JSON error body instead of Node's empty 400. */
export function answerClientErrorsWithJson(server: http.Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify({ error: `malformed HTTP request (${err.code ?? err.message})`, code: 'SPACE_ERR_MALFORMED_JSON' });
    socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}
