/**
 * The registry server over real HTTP on a free port, on a real SQLite file:
 * every operation in both encodings, Tailscale's route semantics, auth
 * failures, unknown ids, bad bodies, concurrent requests and persistence
 * across a restart.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { codecFor } from '../../registry-proto/codec';
import type { EnableDeviceRoutesResponse, GetDeviceResponse, GetDeviceRoutesResponse } from '../../registry-proto/messages';
import { startRegistryServer, type RunningRegistry } from '../../registry-proto/server/server';
import { RegistryStore } from '../../registry-proto/server/store';
import { canonical, sampleDevice } from '../helpers/registry';

const device = codecFor<GetDeviceResponse>('registry.v1.GetDeviceResponse');
const routesCodec = codecFor<GetDeviceRoutesResponse>('registry.v1.GetDeviceRoutesResponse');
const enableReq = codecFor('registry.v1.EnableDeviceRoutesRequest');
const enableRes = codecFor<EnableDeviceRoutesResponse>('registry.v1.EnableDeviceRoutesResponse');
const PB = 'application/x-protobuf';

interface Fixture {
  dbFile: string;
  key: string;
  registry: RunningRegistry;
  call(method: string, p: string, opts?: { headers?: Record<string, string>; body?: string | Uint8Array; key?: string | null }): Promise<{ status: number; headers: Headers; bytes: Buffer; json: any }>;
}

function seedDevices(): GetDeviceResponse[] {
  const external = { ...sampleDevice('99'), name: 'shared-in', isExternal: true };
  return [sampleDevice('27'), { ...sampleDevice('28'), advertisedRoutes: [], enabledRoutes: [] }, external];
}

async function start(t: Test, dbFile?: string): Promise<Fixture> {
  let file = dbFile;
  let key = '';
  if (!file) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-server-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    file = path.join(dir, 'registry.db');
    const store = new RegistryStore(file);
    store.importDevices(seedDevices());
    key = store.createApiKey({ description: 'tests' }).key;
    store.close();
  }
  const registry = await startRegistryServer({ dbFile: file, host: '127.0.0.1', port: 0 });
  t.teardown(() => registry.close());
  const fixture: Fixture = {
    dbFile: file,
    key,
    registry,
    async call(method, p, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      const k = opts.key === undefined ? fixture.key : opts.key;
      if (k !== null) headers.authorization ??= `Bearer ${k}`;
      const res = await fetch(registry.url + p, { method, headers, body: typeof opts.body === 'string' ? opts.body : opts.body && new Uint8Array(opts.body) });
      const bytes = Buffer.from(await res.arrayBuffer());
      let json: any;
      try {
        json = JSON.parse(bytes.toString('utf8'));
      } catch {
        json = undefined;
      }
      return { status: res.status, headers: res.headers, bytes, json };
    },
  };
  return fixture;
}

function assertError(t: Test, res: { status: number; headers: Headers; json: any }, status: number, code: string, message?: RegExp): void {
  t.equal(res.status, status, `HTTP ${status}: ${JSON.stringify(res.json)}`);
  t.match(res.headers.get('content-type'), /^application\/json/, 'errors are JSON');
  t.same(Object.keys(res.json ?? {}), ['message'], 'the body is {"message": ...}');
  t.equal(res.headers.get('registry-error-code'), code);
  if (message) t.match(res.json?.message, message);
}

t.test('get device: ProtoJSON by default, protobuf when Accept asks for it', async (t) => {
  const f = await start(t);
  const json = await f.call('GET', '/api/v1/device/27');
  t.equal(json.status, 200);
  t.match(json.headers.get('content-type'), /^application\/json/);
  t.same(json.json, device.toJson(sampleDevice('27')), 'the ProtoJSON of the record');
  t.equal(json.json.lastSeen, '2024-11-07T17:22:03.456Z');
  const bin = await f.call('GET', '/api/v1/device/27', { headers: { accept: PB } });
  t.equal(bin.status, 200);
  t.equal(bin.headers.get('content-type'), PB);
  t.same(canonical(device.type, device.decode(bin.bytes)), canonical(device.type, sampleDevice('27')), 'the record in binary');
  const preferred = await f.call('GET', '/api/v1/device/27', { headers: { accept: 'application/json;q=0.5, application/x-protobuf' } });
  t.equal(preferred.headers.get('content-type'), PB, 'q-values are honoured');
  const any = await f.call('GET', '/api/v1/device/27', { headers: { accept: '*/*' } });
  t.match(any.headers.get('content-type'), /^application\/json/, '*/* gets JSON');
  assertError(t, await f.call('GET', '/api/v1/device/27', { headers: { accept: 'text/html' } }), 406, 'REG_ERR_NOT_ACCEPTABLE');
});

t.test('unknown ids are 404 with a JSON message, in every operation and encoding', async (t) => {
  const f = await start(t);
  for (const [method, p, body] of [['GET', '/api/v1/device/404'], ['DELETE', '/api/v1/device/404'], ['GET', '/api/v1/device/404/routes'], ['POST', '/api/v1/device/404/routes', '{"routes":[]}']] as const) {
    for (const accept of ['application/json', PB]) {
      assertError(t, await f.call(method, p, { headers: { accept, 'content-type': 'application/json' }, body }), 404, 'REG_ERR_NOT_FOUND', /device 404 not found/);
    }
  }
  assertError(t, await f.call('GET', '/api/v1/devices'), 404, 'REG_ERR_ROUTE_NOT_FOUND');
  const put = await f.call('PUT', '/api/v1/device/27');
  assertError(t, put, 405, 'REG_ERR_METHOD_NOT_ALLOWED');
  t.equal(put.headers.get('allow'), 'GET, DELETE');
});

t.test('auth: no key, a wrong key, a malformed header, a revoked or expired key are 401', async (t) => {
  const f = await start(t);
  const none = await f.call('GET', '/api/v1/device/27', { key: null });
  assertError(t, none, 401, 'REG_ERR_UNAUTHENTICATED', /no API key/);
  t.match(none.headers.get('www-authenticate'), /^Bearer/);
  assertError(t, await f.call('GET', '/api/v1/device/27', { key: f.key.slice(0, -1) + (f.key.endsWith('A') ? 'B' : 'A') }), 401, 'REG_ERR_UNAUTHENTICATED', /unknown API key/);
  assertError(t, await f.call('GET', '/api/v1/device/27', { key: 'tskey-api-123' }), 401, 'REG_ERR_UNAUTHENTICATED', /not a registry API key/);
  assertError(t, await f.call('GET', '/api/v1/device/27', { headers: { authorization: 'Token abc' } }), 401, 'REG_ERR_UNAUTHENTICATED');
  const revoked = f.registry.store.createApiKey({ description: 'revoke me' });
  t.equal((await f.call('GET', '/api/v1/device/27', { key: revoked.key })).status, 200, 'a new key works at once');
  f.registry.store.revokeApiKey(revoked.id);
  assertError(t, await f.call('GET', '/api/v1/device/27', { key: revoked.key }), 401, 'REG_ERR_UNAUTHENTICATED', /revoked/);
  const expired = f.registry.store.createApiKey({ expiresMs: Date.now() - 1000 });
  assertError(t, await f.call('GET', '/api/v1/device/27', { key: expired.key }), 401, 'REG_ERR_UNAUTHENTICATED', /expired/);
  const basic = Buffer.from(`${f.key}:`).toString('base64');
  t.equal((await f.call('GET', '/api/v1/device/27', { headers: { authorization: `Basic ${basic}` } })).status, 200, 'Basic with the key as user name works');
  const db = fs.readFileSync(f.dbFile);
  // Everything after the second underscore: a base64url secret may contain underscores itself.
  t.notOk(db.includes(Buffer.from(f.key.split('_').slice(2).join('_'))), 'the secret is not in the database file');
});

t.test('get routes in both encodings', async (t) => {
  const f = await start(t);
  const json = await f.call('GET', '/api/v1/device/27/routes');
  t.same(json.json, { enabledRoutes: ['10.20.0.0/16'], advertisedRoutes: ['10.20.0.0/16', '192.168.7.0/24'] });
  const bin = await f.call('GET', '/api/v1/device/27/routes', { headers: { accept: PB } });
  t.same(canonical(routesCodec.type, routesCodec.decode(bin.bytes)), { enabledRoutes: ['10.20.0.0/16'], advertisedRoutes: ['10.20.0.0/16', '192.168.7.0/24'] });
  const none = await f.call('GET', '/api/v1/device/28/routes');
  t.same(none.json, {}, 'empty lists are defaults: left out of ProtoJSON');
});

t.test('enable routes replaces the enabled list; unadvertised routes may be pre-approved', async (t) => {
  const f = await start(t);
  const post = (body: string | Uint8Array, headers: Record<string, string>) => f.call('POST', '/api/v1/device/27/routes', { body, headers });
  const a = await post(JSON.stringify({ routes: ['192.168.7.0/24', '172.16.0.0/12'] }), { 'content-type': 'application/json' });
  t.equal(a.status, 200);
  t.same(a.json, { enabledRoutes: ['192.168.7.0/24', '172.16.0.0/12'], advertisedRoutes: ['10.20.0.0/16', '192.168.7.0/24'] }, 'the old list is gone; 172.16.0.0/12 (not advertised) is pre-approved');
  t.same((await f.call('GET', '/api/v1/device/27')).json.enabledRoutes, ['192.168.7.0/24', '172.16.0.0/12'], 'the device record says the same');
  // protobuf in, protobuf out
  const b = await post(enableReq.encode({ routes: ['fd7a:115c:a1e0::/48', '10.20.0.0/16', '10.20.0.0/16'] }), { 'content-type': PB, accept: PB });
  t.equal(b.status, 200);
  t.equal(b.headers.get('content-type'), PB);
  t.same(canonical(enableRes.type, enableRes.decode(b.bytes)).enabledRoutes, ['fd7a:115c:a1e0::/48', '10.20.0.0/16'], 'repeats dropped, order kept');
  // proto field names and an id equal to the path are fine; an empty list disables all
  const c = await post(JSON.stringify({ id: '27', routes: [] }), { 'content-type': 'application/json' });
  t.same(c.json, { advertisedRoutes: ['10.20.0.0/16', '192.168.7.0/24'] });
});

t.test('enable routes refuses bad bodies with a clear 4xx', async (t) => {
  const f = await start(t);
  const post = (body: string | Uint8Array, headers: Record<string, string> = { 'content-type': 'application/json' }) => f.call('POST', '/api/v1/device/27/routes', { body, headers });
  assertError(t, await post('{"routes": ["10.20.0.1/16"]}'), 400, 'REG_ERR_INVALID_ROUTE', /did you mean "10.20.0.0\/16"/);
  assertError(t, await post('{"routes": ["example.com/8"]}'), 400, 'REG_ERR_INVALID_ROUTE', /not an IP prefix/);
  assertError(t, await post('{"routes": ["10.0.0.0/33"]}'), 400, 'REG_ERR_INVALID_ROUTE', /at most 32 bits/);
  assertError(t, await post('{"routes": "10.0.0.0/8"}'), 400, 'REG_ERR_JSON', /routes: expected array/);
  assertError(t, await post('{"route": ["10.0.0.0/8"]}'), 400, 'REG_ERR_JSON', /unknown field: "route"/);
  assertError(t, await post('{"routes": [10]}'), 400, 'REG_ERR_JSON');
  assertError(t, await post('{"routes": ['), 400, 'REG_ERR_JSON_SYNTAX');
  assertError(t, await post('{"id": "28", "routes": []}'), 400, 'REG_ERR_BAD_REQUEST', /not the id in the path/);
  assertError(t, await post(Buffer.from('1205' + '3130', 'hex'), { 'content-type': PB }), 400, 'REG_ERR_WIRE', /routes: length 5 runs past the end/);
  assertError(t, await post('routes=10.0.0.0/8', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'REG_ERR_UNSUPPORTED_MEDIA_TYPE');
  assertError(t, await post(JSON.stringify({ routes: Array.from({ length: 100_000 }, () => '10.0.0.0/8') })), 413, 'REG_ERR_PAYLOAD_TOO_LARGE');
  t.same((await f.call('GET', '/api/v1/device/27/routes')).json.enabledRoutes, ['10.20.0.0/16'], 'nothing refused changed anything');
});

t.test('delete removes a device; an external device is refused with 501', async (t) => {
  const f = await start(t);
  const del = await f.call('DELETE', '/api/v1/device/27');
  t.equal(del.status, 200);
  t.same(del.json, {}, 'DeleteDeviceResponse has no fields');
  assertError(t, await f.call('GET', '/api/v1/device/27'), 404, 'REG_ERR_NOT_FOUND');
  const bin = await f.call('DELETE', '/api/v1/device/28', { headers: { accept: PB } });
  t.equal(bin.status, 200);
  t.equal(bin.bytes.length, 0, 'an empty message is zero bytes');
  assertError(t, await f.call('DELETE', '/api/v1/device/99'), 501, 'REG_ERR_EXTERNAL_DEVICE', /external/);
  t.equal((await f.call('GET', '/api/v1/device/99')).status, 200, 'the external device is still there');
});

t.test('concurrent route updates and reads: every request answered, no update lost or torn', async (t) => {
  const f = await start(t);
  const sets = Array.from({ length: 40 }, (_, i) => [`10.${i}.0.0/16`, `172.16.${i}.0/24`]);
  const results = await Promise.all([
    ...sets.map((routes) => f.call('POST', '/api/v1/device/27/routes', { body: JSON.stringify({ routes }), headers: { 'content-type': 'application/json' } })),
    ...sets.map(() => f.call('GET', '/api/v1/device/27', { headers: { accept: PB } })),
  ]);
  t.same(results.map((r) => r.status), results.map(() => 200), 'all 200');
  for (const r of results.slice(sets.length)) {
    const enabled = device.decode(r.bytes).enabledRoutes;
    t.ok(JSON.stringify(enabled) === JSON.stringify(['10.20.0.0/16']) || sets.some((s) => JSON.stringify(s) === JSON.stringify(enabled)), 'each read sees a whole list');
  }
  const final = (await f.call('GET', '/api/v1/device/27/routes')).json.enabledRoutes;
  t.ok(sets.some((s) => JSON.stringify(s) === JSON.stringify(final)), `the final list is one of the posted lists: ${final}`);
});

t.test('the database file survives a restart: changes, deletions and keys persist', async (t) => {
  const f = await start(t);
  await f.call('POST', '/api/v1/device/27/routes', { body: '{"routes":["192.168.7.0/24"]}', headers: { 'content-type': 'application/json' } });
  await f.call('DELETE', '/api/v1/device/28');
  await f.registry.close();
  t.ok(fs.existsSync(f.dbFile), 'the file is there');
  const again = await start(t, f.dbFile);
  again.key = f.key;
  t.equal((await again.call('GET', '/api/v1/device/27/routes')).json.enabledRoutes[0], '192.168.7.0/24', 'the route change persisted');
  assertError(t, await again.call('GET', '/api/v1/device/28'), 404, 'REG_ERR_NOT_FOUND');
  t.equal((await again.call('GET', '/api/v1/device/99')).status, 200, 'the key from before the restart still works');
});
