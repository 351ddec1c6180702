/**
 * The registry's HTTP API (express): the four operations of DeviceService at
 * Tailscale's paths, under /api/v1.
 *
 *   GET    /api/v1/device/{id}          -> GetDeviceResponse
 *   DELETE /api/v1/device/{id}          -> DeleteDeviceResponse (501 for an external device)
 *   GET    /api/v1/device/{id}/routes   -> GetDeviceRoutesResponse
 *   POST   /api/v1/device/{id}/routes   EnableDeviceRoutesRequest -> EnableDeviceRoutesResponse
 *
 * Content negotiation: the answer is ProtoJSON unless Accept prefers
 * application/x-protobuf (application/protobuf and
 * application/vnd.google.protobuf are understood too); the POST body is read
 * by its Content-Type the same way. Errors are always JSON, Tailscale's
 * `{"message": "..."}`, with the stable code in the Registry-Error-Code
 * header. Every request needs an API key: `Authorization: Bearer rpk_…`
 * (or, as Tailscale also allows, HTTP Basic with the key as user name).
 *
 * buildRegistryApp() never listens; server.ts and the tests bind it.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { codecFor, type MessageCodec } from '../codec';
import { CodecError, RegistryError, type RegistryErrorCode } from '../errors';
import type { EnableDeviceRoutesRequest, EnableDeviceRoutesResponse, GetDeviceResponse, GetDeviceRoutesResponse } from '../messages';
import type { RegistryStore } from './store';

export interface RegistryAppDeps {
  store: RegistryStore;
}

export const PROTOBUF_TYPE = 'application/x-protobuf';
const PROTOBUF_TYPES = [PROTOBUF_TYPE, 'application/protobuf', 'application/vnd.google.protobuf'];
const JSON_TYPE = 'application/json';
const MAX_BODY = '1mb';

const codecs = {
  device: codecFor<GetDeviceResponse>('registry.v1.GetDeviceResponse'),
  deleted: codecFor('registry.v1.DeleteDeviceResponse'),
  routes: codecFor<GetDeviceRoutesResponse>('registry.v1.GetDeviceRoutesResponse'),
  enableRequest: codecFor<EnableDeviceRoutesRequest>('registry.v1.EnableDeviceRoutesRequest'),
  enabled: codecFor<EnableDeviceRoutesResponse>('registry.v1.EnableDeviceRoutesResponse'),
};

type Format = 'json' | 'binary';

/** The response encoding the client asked for; 406 when it accepts neither. */
function responseFormat(req: Request): Format {
  const best = req.accepts([JSON_TYPE, ...PROTOBUF_TYPES]);
  if (best === false) throw new RegistryError('REG_ERR_NOT_ACCEPTABLE', `cannot answer in ${req.headers.accept}: ask for ${JSON_TYPE} or ${PROTOBUF_TYPE}`);
  return best === JSON_TYPE ? 'json' : 'binary';
}

function send<T extends object>(res: Response, format: Format, codec: MessageCodec<T>, message: T): void {
  if (format === 'binary') res.type(PROTOBUF_TYPE).send(Buffer.from(codec.encode(message)));
  else res.type(JSON_TYPE).send(codec.toJsonString(message));
}

function sendError(res: Response, status: number, code: RegistryErrorCode, message: string): void {
  res.status(status).setHeader('Registry-Error-Code', code);
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="registry"');
  res.type(JSON_TYPE).send(JSON.stringify({ message }));
}

/** The API key of a request: Bearer token, or Basic with the key as user name. */
function presentedKey(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const [scheme, value = ''] = header.split(/\s+/, 2);
  if (/^bearer$/i.test(scheme)) return value;
  if (/^basic$/i.test(scheme)) return Buffer.from(value, 'base64').toString('utf8').split(':')[0];
  return '';
}

export function buildRegistryApp({ store }: RegistryAppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  app.use((req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    const key = presentedKey(req);
    if (key === undefined) return sendError(res, 401, 'REG_ERR_UNAUTHENTICATED', 'no API key: send "Authorization: Bearer <key>" (make one with `registry-proto keys create`)');
    const verdict = store.verifyApiKey(key);
    if (!verdict.ok) return sendError(res, 401, 'REG_ERR_UNAUTHENTICATED', `${verdict.reason}: send a current key as "Authorization: Bearer <key>"`);
    next();
  });

  const device = '/api/v1/device/:id';
  const routes = '/api/v1/device/:id/routes';

  app.get(device, (req, res) => {
    const format = responseFormat(req);
    const id = req.params.id as string;
    if (format === 'binary') {
      // The stored record is the wire form: no decode and re-encode.
      const bytes = store.getDeviceBytes(id);
      if (!bytes) throw new RegistryError('REG_ERR_NOT_FOUND', `device ${id} not found`);
      res.type(PROTOBUF_TYPE).send(bytes);
      return;
    }
    const d = store.getDevice(id);
    if (!d) throw new RegistryError('REG_ERR_NOT_FOUND', `device ${id} not found`);
    send(res, format, codecs.device, d);
  });

  app.delete(device, (req, res) => {
    const format = responseFormat(req);
    store.deleteDevice(req.params.id as string);
    send(res, format, codecs.deleted, {});
  });

  app.get(routes, (req, res) => {
    const format = responseFormat(req);
    send(res, format, codecs.routes, store.getRoutes(req.params.id as string));
  });

  app.post(routes, express.raw({ type: () => true, limit: MAX_BODY }), (req, res) => {
    const format = responseFormat(req);
    const id = req.params.id as string;
    const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    let request: EnableDeviceRoutesRequest;
    if (PROTOBUF_TYPES.includes(contentType)) request = codecs.enableRequest.decode(body);
    else if (contentType === JSON_TYPE || contentType === '' || contentType.endsWith('+json')) request = codecs.enableRequest.fromJsonString(body.toString('utf8'));
    else throw new RegistryError('REG_ERR_UNSUPPORTED_MEDIA_TYPE', `cannot read a ${contentType} body: send ${JSON_TYPE} ({"routes": [...]}) or ${PROTOBUF_TYPE} (registry.v1.EnableDeviceRoutesRequest)`);
    if (request.id && request.id !== id) throw new RegistryError('REG_ERR_BAD_REQUEST', `the body's id (${request.id}) is not the id in the path (${id}): leave it out or make them equal`);
    send(res, format, codecs.enabled, store.enableRoutes(id, request.routes ?? []));
  });

  // Known paths with another method: 405 with Allow; anything else: 404.
  app.all(device, (_req, res) => {
    res.setHeader('Allow', 'GET, DELETE');
    sendError(res, 405, 'REG_ERR_METHOD_NOT_ALLOWED', 'use GET or DELETE on a device');
  });
  app.all(routes, (_req, res) => {
    res.setHeader('Allow', 'GET, POST');
    sendError(res, 405, 'REG_ERR_METHOD_NOT_ALLOWED', 'use GET or POST on device routes');
  });
  app.use((req, res) => sendError(res, 404, 'REG_ERR_ROUTE_NOT_FOUND', `no ${req.method} ${req.path}: the API is /api/v1/device/{id} and /api/v1/device/{id}/routes`));

  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof RegistryError) return sendError(res, err.status, err.code, err.message);
    if (err instanceof CodecError) return sendError(res, 400, err.code, err.message);
    const e = err as { type?: string; status?: number; message?: string };
    if (e.type === 'entity.too.large') return sendError(res, 413, 'REG_ERR_PAYLOAD_TOO_LARGE', `the body is larger than ${MAX_BODY}`);
    if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) return sendError(res, e.status, 'REG_ERR_BAD_REQUEST', e.message ?? 'bad request');
    process.stderr.write(`registry-proto: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
    sendError(res, 500, 'REG_ERR_INTERNAL', 'internal error (logged by the server)');
  });
  return app;
}
