/**
 * The registry's HTTP API (express): the four operations of DeviceService at
 * headscale's paths under /api/v1 (ProtoJSON), and Tailscale's device API v2
 * on the same store and codec (mountApiV2 below; Tailscale's JSON).
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
 * Limits: bodies up to 64 KB, at most MAX_ROUTES_PER_DEVICE routes, checked
 * in slices with the event loop turning between them (routes.ts).
 *
 * buildRegistryApp() never listens; server.ts and the tests bind it.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { codecFor, type MessageCodec } from '../codec';
import { CodecError, RegistryError, type RegistryErrorCode } from '../errors';
import type { EnableDeviceRoutesRequest, EnableDeviceRoutesResponse, GetDeviceResponse, GetDeviceRoutesResponse } from '../messages';
import { parseFieldSet, tailscaleDeviceJson, tailscaleRoutesJson, type FieldSet } from '../tailscale-json';
import { MAX_ROUTES_PER_DEVICE, normaliseRoutesInChunks } from './routes';
import type { RegistryStore } from './store';

export interface RegistryAppDeps {
  store: RegistryStore;
  /**
   * The registry's tailnet name for API v2's /tailnet/{tailnet}/devices. One
   * registry is one tailnet: every key belongs to it, so `-` (Tailscale's "the
   * key's own tailnet") always names it. Unset: only `-` does.
   */
  tailnet?: string;
}

export const PROTOBUF_TYPE = 'application/x-protobuf';
const PROTOBUF_TYPES = [PROTOBUF_TYPE, 'application/protobuf', 'application/vnd.google.protobuf'];
const JSON_TYPE = 'application/json';
/**
 * Largest request body: MAX_ROUTES_PER_DEVICE IPv6 prefixes of the longest
 * form fit in about 46 KB of JSON; anything larger is refused (413) before it
 * is parsed, so one request's parse is bounded too.
 */
const MAX_BODY = '64kb';

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

/** A known path asked with a method it does not serve: 405 with `Allow` (Tailscale's and v1's answer alike). */
function refuseOtherMethods(app: express.Express, path: string, allow: string, use: string): void {
  app.all(path, (_req, res) => {
    res.setHeader('Allow', allow);
    sendError(res, 405, 'REG_ERR_METHOD_NOT_ALLOWED', use);
  });
}

/**
 * The API key of a request: Bearer token, or Basic with the key as user name
 * (Tailscale's docs: `curl -u "KEY:"`; its Go client: SetBasicAuth(key, "")).
 * The credentials are one token after the scheme (RFC 7235 token68): anything
 * after it (`Bearer KEY extra`) is refused rather than ignored.
 */
export function presentedKey(header: string | undefined): { key: string } | { error: string } | undefined {
  if (!header) return undefined;
  const m = /^([A-Za-z]+) +([A-Za-z0-9._~+/=-]+)$/.exec(header.trim());
  if (!m) return { error: 'malformed Authorization header: send exactly "Bearer <key>" or "Basic <base64 of key:>"' };
  if (/^bearer$/i.test(m[1])) return { key: m[2] };
  if (/^basic$/i.test(m[1])) return { key: Buffer.from(m[2], 'base64').toString('utf8').split(':')[0] };
  return { error: `unsupported authorization scheme ${m[1]}: send "Bearer <key>" or Basic with the key as user name` };
}

/**
 * The EnableDeviceRoutesRequest in a POST body, read by its Content-Type.
 * `tailscaleClients`: also read curl's default form type and a missing type
 * as JSON, as Tailscale's API does (its docs' recipes use `curl --data-binary`,
 * which sends application/x-www-form-urlencoded; its Go client sends none).
 */
function readRoutesRequest(req: Request, tailscaleClients: boolean): EnableDeviceRoutesRequest {
  const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (PROTOBUF_TYPES.includes(contentType)) return codecs.enableRequest.decode(body);
  if (contentType === JSON_TYPE || contentType === '' || contentType.endsWith('+json') || (tailscaleClients && contentType === 'application/x-www-form-urlencoded')) {
    return codecs.enableRequest.fromJsonString(body.toString('utf8'));
  }
  throw new RegistryError('REG_ERR_UNSUPPORTED_MEDIA_TYPE', `cannot read a ${contentType} body: send ${JSON_TYPE} ({"routes": [...]}) or ${PROTOBUF_TYPE} (registry.v1.EnableDeviceRoutesRequest)`);
}

/**
 * Tailscale's device API v2 on the same store and codec (tailscale/tailscale
 * client/tailscale/devices.go and routes.go: Client.Device, DeleteDevice,
 * Devices, Routes, SetRoutes; api.md "Device"):
 *
 *   GET    /api/v2/device/{deviceId}[?fields=default|all]   device in Tailscale's JSON
 *   DELETE /api/v2/device/{deviceId}                        200, empty body (501: external)
 *   GET    /api/v2/device/{deviceId}/routes                 {"advertisedRoutes", "enabledRoutes"}
 *   POST   /api/v2/device/{deviceId}/routes  {"routes"}     the same, after replacing the enabled list
 *   GET    /api/v2/tailnet/{tailnet}/devices[?fields=...]   {"devices": [...]}
 *
 * {deviceId} is the id or Tailscale's nodeId. JSON is Tailscale's
 * (tailscale-json.ts); protobuf (Accept / Content-Type as on v1) is the
 * registry.v1 message, with ?fields=default clearing the fields it leaves out;
 * the device list as protobuf is a length-delimited stream of GetDeviceResponse.
 */
function mountApiV2(app: express.Express, { store, tailnet }: RegistryAppDeps): void {
  const device = '/api/v2/device/:deviceId';
  const routes = '/api/v2/device/:deviceId/routes';
  const list = '/api/v2/tailnet/:tailnet/devices';
  const resolve = (req: Request): string => {
    const name = req.params.deviceId as string;
    const id = store.resolveDeviceId(name);
    if (id === undefined) throw new RegistryError('REG_ERR_NOT_FOUND', `device ${name} not found`);
    return id;
  };
  const trimmed = (d: GetDeviceResponse, fields: FieldSet): GetDeviceResponse => {
    if (fields === 'all') return d;
    const out = { ...d, enabledRoutes: [], advertisedRoutes: [], clientConnectivity: null };
    // Unknown fields of the stored record are a non-enumerable property: carry them over.
    const unknowns = (d as { $unknowns?: Uint8Array[] }).$unknowns;
    if (unknowns) Object.defineProperty(out, '$unknowns', { value: unknowns, enumerable: false });
    return out;
  };

  app.get(device, (req, res) => {
    const format = responseFormat(req);
    const fields = parseFieldSet(req.query.fields);
    const id = resolve(req);
    if (format === 'binary' && fields === 'all') {
      res.type(PROTOBUF_TYPE).send(store.getDeviceBytes(id)); // the stored wire form, unknown fields and all
      return;
    }
    const d = store.getDevice(id);
    if (!d) throw new RegistryError('REG_ERR_NOT_FOUND', `device ${req.params.deviceId} not found`);
    if (format === 'binary') send(res, format, codecs.device, trimmed(d, fields));
    else res.type(JSON_TYPE).send(JSON.stringify(tailscaleDeviceJson(d, store.getTailscaleExtras(id), fields)));
  });

  app.delete(device, (req, res) => {
    responseFormat(req);
    store.deleteDevice(resolve(req));
    res.status(200).end(); // Tailscale: an empty 200; also the (empty) DeleteDeviceResponse in binary
  });

  app.get(routes, (req, res) => {
    const format = responseFormat(req);
    const r = store.getRoutes(resolve(req));
    if (format === 'binary') send(res, format, codecs.routes, r);
    else res.type(JSON_TYPE).send(JSON.stringify(tailscaleRoutesJson(r)));
  });

  app.post(routes, express.raw({ type: () => true, limit: MAX_BODY }), async (req, res) => {
    const format = responseFormat(req);
    const id = resolve(req);
    const request = readRoutesRequest(req, true);
    if (request.id && request.id !== id && request.id !== req.params.deviceId) {
      throw new RegistryError('REG_ERR_BAD_REQUEST', `the body's id (${request.id}) is not the device in the path (${req.params.deviceId}): leave it out`);
    }
    const r = store.enableRoutes(id, await normaliseRoutesInChunks(request.routes ?? []), { checked: true });
    if (format === 'binary') send(res, format, codecs.enabled, r);
    else res.type(JSON_TYPE).send(JSON.stringify(tailscaleRoutesJson(r)));
  });

  app.get(list, (req, res) => {
    const format = responseFormat(req);
    const fields = parseFieldSet(req.query.fields);
    const name = req.params.tailnet as string;
    if (name !== '-' && name !== tailnet) {
      throw new RegistryError('REG_ERR_NOT_FOUND', `tailnet ${name} not found: use "-" (your key's tailnet)${tailnet ? ` or ${tailnet}` : ''}`);
    }
    const all = store.listDevicesWithExtras();
    if (format === 'binary') {
      res.type(`${PROTOBUF_TYPE}; delimited=true`).send(Buffer.from(codecs.device.encodeDelimited(all.map(({ device: d }) => trimmed(d, fields)))));
      return;
    }
    res.type(JSON_TYPE).send(JSON.stringify({ devices: all.map(({ device: d, extras }) => tailscaleDeviceJson(d, extras, fields)) }));
  });

  refuseOtherMethods(app, device, 'GET, DELETE', 'use GET or DELETE on a device');
  refuseOtherMethods(app, routes, 'GET, POST', 'use GET or POST on device routes');
  refuseOtherMethods(app, list, 'GET', 'use GET on the device list');
}

export function buildRegistryApp({ store, tailnet }: RegistryAppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  app.use((req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    const presented = presentedKey(req.headers.authorization);
    if (presented === undefined) return sendError(res, 401, 'REG_ERR_UNAUTHENTICATED', 'no API key: send "Authorization: Bearer <key>" (make one with `registry-proto keys create`)');
    if ('error' in presented) return sendError(res, 401, 'REG_ERR_UNAUTHENTICATED', presented.error);
    const verdict = store.verifyApiKey(presented.key);
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

  app.post(routes, express.raw({ type: () => true, limit: MAX_BODY }), async (req, res) => {
    const format = responseFormat(req);
    const id = req.params.id as string;
    const request = readRoutesRequest(req, false);
    if (request.id && request.id !== id) throw new RegistryError('REG_ERR_BAD_REQUEST', `the body's id (${request.id}) is not the id in the path (${id}): leave it out or make them equal`);
    send(res, format, codecs.enabled, store.enableRoutes(id, await normaliseRoutesInChunks(request.routes ?? []), { checked: true }));
  });

  mountApiV2(app, { store, tailnet });

  // Known paths with another method: 405 with Allow; anything else: 404.
  refuseOtherMethods(app, device, 'GET, DELETE', 'use GET or DELETE on a device');
  refuseOtherMethods(app, routes, 'GET, POST', 'use GET or POST on device routes');
  app.use((req, res) =>
    sendError(res, 404, 'REG_ERR_ROUTE_NOT_FOUND', `no ${req.method} ${req.path}: the API is /api/v1/device/{id}[/routes], and Tailscale's /api/v2/device/{deviceId}[/routes] and /api/v2/tailnet/-/devices`),
  );

  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof RegistryError) return sendError(res, err.status, err.code, err.message);
    if (err instanceof CodecError) return sendError(res, 400, err.code, err.message);
    const e = err as { type?: string; status?: number; message?: string };
    // Close the connection after a 413: the rest of the body is not read (draining it would cost as much as reading it).
    if (e.type === 'entity.too.large') res.setHeader('Connection', 'close');
    if (e.type === 'entity.too.large') return sendError(res, 413, 'REG_ERR_PAYLOAD_TOO_LARGE', `the body is larger than ${MAX_BODY}: a device has at most ${MAX_ROUTES_PER_DEVICE} routes, which fit in far less`);
    if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) return sendError(res, e.status, 'REG_ERR_BAD_REQUEST', e.message ?? 'bad request');
    process.stderr.write(`registry-proto: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
    sendError(res, 500, 'REG_ERR_INTERNAL', 'internal error (logged by the server)');
  });
  return app;
}
