/**
 * The positioner's REST API (seed 000, part B) as an express app.
 *
 * buildApp() never listens: the server entry point (cli/serve.ts) and tests
 * bind it to a port. Every body is checked with one ajv schema
 * (api/schemas.ts); every error is `{"error": "..."}` with the status of the
 * catalogue (api/errors.ts). POST /stop ignores its body entirely so that
 * nothing, not even a garbled request, can keep it from stopping the motors.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import http from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { PositionerError } from '../firmware/errors';
import type { HomeAxis, Positioner } from '../firmware/positioner';
import { ApiError, POSITIONER_ERROR_STATUS } from './errors';
import { configBodySchema, homeBodySchema, moveBodySchema, moveRelativeBodySchema, READ_ONLY_CONFIG_FIELDS } from './schemas';
import { DASHBOARD_PATHS, loadDashboard } from './dashboard';
import { LIVE_STATUS_PATH } from './live-status';
import { openApiDocument } from './openapi';
import { configBody, statusBody } from './status-bodies';
import type { Scanner } from '../firmware/scan';
import { mountScanRoutes, SCAN_ROUTES } from './scan-routes';

export interface AppDeps {
  positioner: Positioner;
  /** Scans (POST /scan ...); without it those paths answer 404. */
  scanner?: Scanner;
}

const ajv = new Ajv({ allErrors: false, useDefaults: true, coerceTypes: false, strict: true });
const validators = {
  move: ajv.compile<{ theta_deg: number; phi_deg: number }>(moveBodySchema),
  moveRelative: ajv.compile<{ d_theta: number; d_phi: number }>(moveRelativeBodySchema),
  home: ajv.compile<{ axis: HomeAxis }>(homeBodySchema),
  config: ajv.compile<{ speed?: number; accel?: number }>(configBodySchema),
};

export { configBody, statusBody } from './status-bodies';

const RANGE_KEYWORDS = new Set<string | undefined>(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']);

/**
 * The API as a request listener for `http.createServer()`. GET /status, the
 * endpoint clients poll many times a second, is answered before express sees
 * the request: express's per-request set-up costs about four times what the
 * answer itself does (docs/benchmarks.md). Everything else goes to express.
 */
export function buildApp(deps: AppDeps): http.RequestListener {
  const app = buildExpressApp(deps);
  const { positioner } = deps;
  return (req, res) => {
    const url = req.url ?? '';
    if (req.method === 'GET' && (url === '/status' || url.startsWith('/status?'))) {
      const body = JSON.stringify(statusBody(positioner.status()));
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
      res.end(body);
      return;
    }
    app(req, res);
  };
}

/** The express app behind buildApp(): every route, its validation and its errors. */
export function buildExpressApp({ positioner, scanner }: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  // Live machine state: never cached, never answered 304 (express would for If-None-Match: *).
  app.use((req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    delete req.headers['if-none-match'];
    delete req.headers['if-modified-since'];
    next();
  });

  // Bodies are JSON whatever Content-Type says: a curl -d without -H still works.
  const json = express.json({ type: () => true, limit: '16kb', strict: true });
  const body = <T>(validate: ValidateFunction<T>, req: Request, what: string): T => {
    const value = req.body === undefined ? {} : req.body;
    if (!validate(value)) {
      const errors = validate.errors ?? [];
      // A value out of range has one code whoever catches it (schema or firmware), so clients can branch on it.
      if (RANGE_KEYWORDS.has(errors[0]?.keyword)) throw new PositionerError('POS_ERR_OUT_OF_RANGE', describe(errors, what));
      throw new ApiError('API_ERR_INVALID_BODY', describe(errors, what));
    }
    return value;
  };

  app.get('/status', (_req, res) => {
    res.json(statusBody(positioner.status()));
  });

  app.post('/move', json, (req, res) => {
    const { theta_deg, phi_deg } = body(validators.move, req, 'POST /move');
    const r = positioner.moveTo(theta_deg, phi_deg);
    res.json({ status: r.status, target_theta: r.targetThetaDeg, target_phi: r.targetPhiDeg });
  });

  app.post('/move/relative', json, (req, res) => {
    const { d_theta, d_phi } = body(validators.moveRelative, req, 'POST /move/relative');
    const r = positioner.moveBy(d_theta, d_phi);
    res.json({ status: r.status, target_theta: r.targetThetaDeg, target_phi: r.targetPhiDeg });
  });

  app.post('/home', json, (req, res) => {
    const { axis } = body(validators.home, req, 'POST /home');
    res.json(positioner.home(axis));
  });

  app.post('/stop', (_req, res) => {
    const answer = positioner.stop();
    // A running scan heard the stop through its claim; a paused one is ended here.
    scanner?.abort('stopped by POST /stop; the samples so far are kept: POST /scan/resume continues');
    res.json(answer);
  });

  if (scanner) mountScanRoutes(app, scanner, json);

  const dashboard = loadDashboard();
  app.get(DASHBOARD_PATHS, (req, res) => {
    const asset = dashboard?.get(req.path);
    if (!asset) throw new ApiError('API_ERR_NOT_FOUND', 'the dashboard files (api/dashboard/) are not installed; the API itself works: see /openapi.json');
    res.set(asset.headers).send(asset.body);
  });

  app.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument());
  });

  app.get(LIVE_STATUS_PATH, (_req, res) => {
    res.setHeader('Upgrade', 'websocket');
    throw new ApiError('API_ERR_UPGRADE_REQUIRED', `${LIVE_STATUS_PATH} is the live status feed: connect with a WebSocket client (ws://host:port${LIVE_STATUS_PATH})`);
  });

  app.get('/config', (_req, res) => {
    res.json(configBody(positioner));
  });

  app.post('/config', json, (req, res) => {
    const raw: unknown = req.body;
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
      const readOnly = Object.keys(raw).filter((k) => (READ_ONLY_CONFIG_FIELDS as readonly string[]).includes(k));
      if (readOnly.length > 0) {
        throw new PositionerError('POS_ERR_CONFIG_READ_ONLY', `${readOnly.join(', ')} ${readOnly.length > 1 ? 'are' : 'is'} read-only; POST /config changes only speed and accel`);
      }
    }
    const update = body(validators.config, req, 'POST /config');
    const s = positioner.updateSettings({ speedDegS: update.speed, accelDegS2: update.accel });
    res.json({ status: 'ok', speed: s.speedDegS, accel: s.accelDegS2, microstepping: s.microstepping });
  });

  const routes: Record<string, string[]> = {
    '/status': ['GET'],
    '/move': ['POST'],
    '/move/relative': ['POST'],
    '/home': ['POST'],
    '/stop': ['POST'],
    '/config': ['GET', 'POST'],
    '/openapi.json': ['GET'],
    [LIVE_STATUS_PATH]: ['GET'],
    ...(scanner ? SCAN_ROUTES : {}),
    ...Object.fromEntries(DASHBOARD_PATHS.map((p) => [p, ['GET']])),
  };
  for (const [path, methods] of Object.entries(routes)) {
    app.all(path, (req, res) => {
      res.setHeader('Allow', methods.join(', '));
      throw new ApiError('API_ERR_METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${path}; use ${methods.join(' or ')}`);
    });
  }

  app.use((req, _res) => {
    throw new ApiError('API_ERR_NOT_FOUND', `no such endpoint: ${req.method} ${req.path}; the API has /status, /move, /move/relative, /home, /stop and /config (described in /openapi.json) and the dashboard at /`);
  });

  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const { status, code, message } = toHttpError(err);
    // Busy passes; a fault does not (it needs a homing), so only busy says when to come back.
    if (code === 'POS_ERR_BUSY') res.setHeader('Retry-After', '1');
    res.status(status).setHeader('Positioner-Error-Code', code).json({ error: message });
  });

  return app;
}

function toHttpError(err: unknown): { status: number; code: string; message: string } {
  if (err instanceof ApiError) return { status: err.status, code: err.code, message: err.message };
  if (err instanceof PositionerError) return { status: POSITIONER_ERROR_STATUS[err.code], code: err.code, message: err.message };
  // body-parser errors carry a `type` and an HTTP status.
  const e = err as { type?: string; status?: number; message?: string; body?: string };
  if (e && e.type === 'entity.parse.failed') {
    // Strict parsing refuses valid JSON that is not an object or array (null, 5, "x"): say that, not "not valid JSON".
    const scalar = parsesAsJson(e.body);
    if (scalar.ok) return { status: 400, code: 'API_ERR_INVALID_BODY', message: `request body must be a JSON object, got ${scalar.value === null ? 'null' : typeof scalar.value}` };
    return { status: 400, code: 'API_ERR_MALFORMED_JSON', message: `malformed JSON body: ${e.message}` };
  }
  if (e && e.type === 'entity.too.large') return { status: 413, code: 'API_ERR_PAYLOAD_TOO_LARGE', message: 'request body too large (limit 16 KiB)' };
  if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return { status: e.status, code: 'API_ERR_INVALID_BODY', message: `bad request: ${e.message ?? 'unreadable body'}` };
  }
  return { status: 500, code: 'API_ERR_INTERNAL', message: `internal error: ${err instanceof Error ? err.message : String(err)}` };
}

function parsesAsJson(text: string | undefined): { ok: true; value: unknown } | { ok: false } {
  if (text === undefined) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** One readable sentence from ajv's first error. */
function describe(errors: ErrorObject[], what: string): string {
  const e = errors[0];
  if (!e) return `invalid body for ${what}`;
  const field = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : '';
  switch (e.keyword) {
    case 'additionalProperties':
      return `unknown field '${(e.params as { additionalProperty: string }).additionalProperty}' in ${what}; accepted fields: ${acceptedFields(what)}`;
    case 'required':
      return `${what} needs '${(e.params as { missingProperty: string }).missingProperty}'; accepted fields: ${acceptedFields(what)}`;
    case 'type':
      return field ? `${field} must be a ${(e.params as { type: string }).type}` : `${what} body must be a JSON object`;
    case 'enum':
      return `${field} must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${field} ${e.message} (out of range)`;
    default:
      return `${field || what} ${e.message ?? 'is invalid'}`;
  }
}

function acceptedFields(what: string): string {
  const schema = { 'POST /move': moveBodySchema, 'POST /move/relative': moveRelativeBodySchema, 'POST /home': homeBodySchema, 'POST /config': configBodySchema }[what];
  return schema ? Object.keys(schema.properties).join(', ') : '';
}

/**
 * Requests too broken for the HTTP parser (bad request line, oversized
 * headers) never reach express; answer them with the same JSON error body
 * instead of Node's empty 400.
 */
export function answerClientErrorsWithJson(server: http.Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
    const body = JSON.stringify({ error: tooLarge ? 'request headers too large' : `malformed HTTP request (${err.code ?? err.message})` });
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}
