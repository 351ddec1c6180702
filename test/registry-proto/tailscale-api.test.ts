/**
 * Tailscale's device API v2, replayed as Tailscale's own clients send it, on a
 * real server over real HTTP:
 *
 * - the Tailscale Go client (tailscale/tailscale client/tailscale/devices.go
 *   Client.Device / Devices / DeleteDevice, routes.go Routes / SetRoutes,
 *   tailscale.go APIKey.modifyRequest): Basic auth with the key as user name
 *   and an empty password, `?fields=default|all` always added, a JSON POST
 *   body with no Content-Type, Go's User-Agent and Accept-Encoding;
 * - tailscale-client-go v2 (tailscale/tailscale-client-go v2/client.go
 *   buildRequest, v2/devices.go), which terraform's tailscale provider calls:
 *   User-Agent tailscale-client-go, Accept application/json on GETs,
 *   Content-Type application/json on bodies, Basic auth, no ?fields, and
 *   SetSubnetRoutes(nil) marshalled as {"routes":null};
 * - the curl recipes of Tailscale's API docs (tailscale/tailscale api.md):
 *   `-u "KEY:"`, `-X DELETE`, `--data-binary '{"routes": [...]}'` (curl then
 *   sends Content-Type application/x-www-form-urlencoded), Accept `*\/*`.
 *
 * Each request is written byte for byte with node:http (method, path,
 * headers, body) and each answer is checked field by field against the
 * device object, routes and error shapes that document describes. The
 * fixtures are our own made-up devices in Tailscale's JSON.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { codecFor } from '../../registry-proto/codec';
import type { GetDeviceResponse } from '../../registry-proto/messages';
import { startRegistryServer, type RunningRegistry } from '../../registry-proto/server/server';
import { RegistryStore } from '../../registry-proto/server/store';
import { splitTailscaleDevice } from '../../registry-proto/tailscale-json';

const deviceCodec = codecFor<GetDeviceResponse>('registry.v1.GetDeviceResponse');

/** A subnet router in Tailscale's JSON, every field of the documented device object set. */
const router = {
  addresses: ['100.101.7.12', 'fd7a:115c:a1e0:ab12:4843:cd96:6265:70c'],
  id: '40211730551862712',
  nodeId: 'nQx7Rk2CNTRL',
  user: 'grace@example.test',
  name: 'lab-gw.tail1234.ts.net',
  hostname: 'lab-gw',
  clientVersion: '1.70.0-t5d4c3b2a1',
  updateAvailable: true,
  os: 'linux',
  tags: ['tag:router', 'tag:lab'],
  created: '2024-02-03T04:05:06Z',
  lastSeen: '2024-11-07T17:22:03.25Z',
  keyExpiryDisabled: true,
  expires: '2025-08-01T00:00:00Z',
  authorized: true,
  isExternal: false,
  machineKey: 'mkey:1d2c3b4a59687766554433221100ffeeddccbbaa99887766554433221100ffee',
  nodeKey: 'nodekey:aa11bb22cc33dd44ee55ff6600112233445566778899aabbccddeeff00112233',
  blocksIncomingConnections: false,
  tailnetLockKey: 'tlpub:0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9',
  tailnetLockError: '',
  enabledRoutes: ['10.44.0.0/16'],
  advertisedRoutes: ['10.44.0.0/16', '192.168.50.0/24'],
  clientConnectivity: {
    endpoints: ['203.0.113.9:41641', '10.44.0.2:41641'],
    derp: '',
    mappingVariesByDestIP: true,
    latency: { Amsterdam: { latencyMs: 18.5 }, Toronto: { preferred: true, latencyMs: 9.25 } },
    clientSupports: { hairPinning: false, ipv6: true, pcp: false, pmp: false, udp: true, upnp: true },
  },
};

/** A device shared in from another tailnet: no created time, no client version (api.md: "empty for external devices"). */
const sharedIn = {
  addresses: ['100.88.9.10'],
  id: '50511',
  nodeId: 'nSh4r3dCNTRL',
  user: 'someone@elsewhere.test',
  name: 'printer.other.ts.net',
  hostname: 'printer',
  clientVersion: '',
  updateAvailable: false,
  os: 'linux',
  created: '',
  lastSeen: '2024-10-01T10:00:00Z',
  keyExpiryDisabled: false,
  expires: '2025-01-01T00:00:00Z',
  authorized: true,
  isExternal: true,
  machineKey: '',
  nodeKey: 'nodekey:0011223344556677889900112233445566778899001122334455667788990011',
  blocksIncomingConnections: false,
};

/**
 * The device object of Tailscale's API docs: each attribute and its JSON
 * type; `all` marks those that ?fields=default leaves out.
 */
const DOCUMENTED: [string, 'string' | 'boolean' | 'string[]' | 'object', 'all'?][] = [
  ['addresses', 'string[]'],
  ['id', 'string'],
  ['nodeId', 'string'],
  ['user', 'string'],
  ['name', 'string'],
  ['hostname', 'string'],
  ['clientVersion', 'string'],
  ['updateAvailable', 'boolean'],
  ['os', 'string'],
  ['tags', 'string[]'],
  ['created', 'string'],
  ['lastSeen', 'string'],
  ['keyExpiryDisabled', 'boolean'],
  ['expires', 'string'],
  ['authorized', 'boolean'],
  ['isExternal', 'boolean'],
  ['machineKey', 'string'],
  ['nodeKey', 'string'],
  ['blocksIncomingConnections', 'boolean'],
  ['tailnetLockKey', 'string'],
  ['tailnetLockError', 'string'],
  ['enabledRoutes', 'string[]', 'all'],
  ['advertisedRoutes', 'string[]', 'all'],
  ['clientConnectivity', 'object', 'all'],
];

const typeOf = (v: unknown) => (Array.isArray(v) ? (v.every((x) => typeof x === 'string') ? 'string[]' : 'array') : v === null ? 'null' : typeof v);

/** Checks a device answer field by field against the documented object and the fixture it was imported from. */
function checkDevice(t: Test, got: Record<string, unknown>, fixture: Record<string, unknown>, fields: 'default' | 'all'): void {
  const expectedKeys = DOCUMENTED.filter(([, , only]) => fields === 'all' || only !== 'all').map(([k]) => k);
  t.same(Object.keys(got).sort(), [...expectedKeys].sort(), `fields=${fields}: exactly the documented attributes`);
  for (const [key, type, only] of DOCUMENTED) {
    if (only === 'all' && fields !== 'all') continue;
    t.equal(typeOf(got[key]), type, `${key} is a ${type}`);
    if (key === 'clientConnectivity') continue;
    const want = fixture[key] ?? (type === 'string[]' ? [] : type === 'boolean' ? false : '');
    t.same(got[key], want, `${key}: ${JSON.stringify(want)}`);
  }
  if (fields !== 'all') return;
  const cc = got.clientConnectivity as Record<string, unknown>;
  const want = (fixture.clientConnectivity ?? {}) as Record<string, unknown>;
  t.same(Object.keys(cc), ['endpoints', 'derp', 'mappingVariesByDestIP', 'latency', 'clientSupports'], 'clientConnectivity: the documented keys, mappingVariesByDestIP spelled as Tailscale does');
  t.same(cc.endpoints, want.endpoints ?? []);
  t.equal(cc.derp, want.derp ?? '');
  t.equal(cc.mappingVariesByDestIP, want.mappingVariesByDestIP ?? false);
  t.same(cc.latency, want.latency ?? {}, 'latency: preferred only when true, latencyMs always');
  t.same(Object.keys(cc.clientSupports as object), ['hairPinning', 'ipv6', 'pcp', 'pmp', 'udp', 'upnp']);
  t.same(cc.clientSupports, want.clientSupports ?? { hairPinning: false, ipv6: false, pcp: false, pmp: false, udp: false, upnp: false });
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  json: any;
}

/** One raw HTTP request: exactly these headers, in this order, and this body. */
function raw(url: string, method: string, p: string, headers: [string, string][], body?: string): Promise<Answer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path: p, setHost: false, headers: [['Host', u.host], ...headers].flat() as unknown as http.OutgoingHttpHeaders });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const data = Buffer.concat(chunks);
        let json: unknown;
        try {
          json = JSON.parse(data.toString('utf8'));
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data, json });
      });
    });
    req.end(body);
  });
}

async function start(t: Test): Promise<{ registry: RunningRegistry; key: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-tailscale-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const dbFile = path.join(dir, 'registry.db');
  const store = new RegistryStore(dbFile);
  const split = [router, sharedIn].map((d) => splitTailscaleDevice(d));
  store.importDevices(
    split.map((s) => deviceCodec.fromJson(s.protoJson)),
    { extras: split.map((s) => s.extras) },
  );
  const { key } = store.createApiKey({ description: 'tailscale replay' });
  store.close();
  const registry = await startRegistryServer({ dbFile, host: '127.0.0.1', port: 0, tailnet: 'example.test' });
  t.teardown(() => registry.close());
  return { registry, key };
}

/** What Go's net/http adds to every request of the Tailscale client, with its Basic auth. */
const goHeaders = (key: string): [string, string][] => [
  ['User-Agent', 'Go-http-client/1.1'],
  ['Authorization', `Basic ${Buffer.from(`${key}:`).toString('base64')}`],
  ['Accept-Encoding', 'gzip'],
];
/** What `curl -u "KEY:"` sends. */
const curlHeaders = (key: string): [string, string][] => [
  ['Authorization', `Basic ${Buffer.from(`${key}:`).toString('base64')}`],
  ['User-Agent', 'curl/7.88.1'],
  ['Accept', '*/*'],
];

function checkJsonAnswer(t: Test, a: Answer, status = 200): void {
  t.equal(a.status, status, `HTTP ${status}: ${a.body.toString().slice(0, 200)}`);
  t.match(a.headers['content-type'], /^application\/json/);
}

t.test('Go client: Device(ctx, id, DeviceDefaultFields / DeviceAllFields)', async (t) => {
  const { registry, key } = await start(t);
  const def = await raw(registry.url, 'GET', `/api/v2/device/${router.id}?fields=default`, goHeaders(key));
  checkJsonAnswer(t, def);
  checkDevice(t, def.json, router, 'default');
  const all = await raw(registry.url, 'GET', `/api/v2/device/${router.id}?fields=all`, goHeaders(key));
  checkJsonAnswer(t, all);
  checkDevice(t, all.json, router, 'all');
  const byNodeId = await raw(registry.url, 'GET', `/api/v2/device/${router.nodeId}?fields=all`, goHeaders(key));
  t.same(byNodeId.json, all.json, 'the nodeId names the same device (api.md: nodeId is preferred, id still accepted)');
  const ext = await raw(registry.url, 'GET', `/api/v2/device/${sharedIn.id}?fields=all`, goHeaders(key));
  checkDevice(t, ext.json, sharedIn, 'all');
  t.equal(ext.json.created, '', 'an external device has "" for created, as Tailscale sends it');
});

t.test('Go client: Devices(ctx, fields) lists the tailnet, "-" and the tailnet name alike', async (t) => {
  const { registry, key } = await start(t);
  for (const tailnet of ['-', 'example.test']) {
    const a = await raw(registry.url, 'GET', `/api/v2/tailnet/${tailnet}/devices?fields=default`, goHeaders(key));
    checkJsonAnswer(t, a);
    t.same(Object.keys(a.json), ['devices'], 'GetDevicesResponse: {"devices": [...]}');
    t.same(a.json.devices.map((d: { id: string }) => d.id).sort(), [router.id, sharedIn.id].sort());
    for (const d of a.json.devices) checkDevice(t, d, d.id === router.id ? router : sharedIn, 'default');
  }
  const all = await raw(registry.url, 'GET', '/api/v2/tailnet/-/devices?fields=all', goHeaders(key));
  for (const d of all.json.devices) checkDevice(t, d, d.id === router.id ? router : sharedIn, 'all');
  const other = await raw(registry.url, 'GET', '/api/v2/tailnet/other.test/devices?fields=default', goHeaders(key));
  checkJsonAnswer(t, other, 404);
  t.same(Object.keys(other.json), ['message'], 'errors are {"message": ...} (tailscale.go ErrResponse)');
});

t.test('Go client: Routes and SetRoutes (JSON body without a Content-Type)', async (t) => {
  const { registry, key } = await start(t);
  const get = await raw(registry.url, 'GET', `/api/v2/device/${router.id}/routes`, goHeaders(key));
  checkJsonAnswer(t, get);
  t.same(get.json, { advertisedRoutes: router.advertisedRoutes, enabledRoutes: router.enabledRoutes }, 'both lists');
  // json.Marshal(postRoutesParams{Routes: []netip.Prefix{...}}): prefixes as strings
  const body = JSON.stringify({ routes: ['192.168.50.0/24', '172.20.0.0/14'] });
  const set = await raw(registry.url, 'POST', `/api/v2/device/${router.nodeId}/routes`, [...goHeaders(key), ['Content-Length', String(body.length)]], body);
  checkJsonAnswer(t, set);
  t.same(set.json, { advertisedRoutes: router.advertisedRoutes, enabledRoutes: ['192.168.50.0/24', '172.20.0.0/14'] }, 'the enabled list replaced; an unadvertised route pre-approved');
  const none = await raw(registry.url, 'POST', `/api/v2/device/${router.id}/routes`, [...goHeaders(key), ['Content-Length', '13']], '{"routes":[]}');
  t.same(none.json, { advertisedRoutes: router.advertisedRoutes, enabledRoutes: [] }, 'an empty list is written as [], not left out');
});

t.test('Go client: DeleteDevice answers an empty 200; external devices 501 with a message', async (t) => {
  const { registry, key } = await start(t);
  const ext = await raw(registry.url, 'DELETE', `/api/v2/device/${sharedIn.id}`, goHeaders(key));
  checkJsonAnswer(t, ext, 501);
  t.same(Object.keys(ext.json), ['message']);
  const del = await raw(registry.url, 'DELETE', `/api/v2/device/${router.nodeId}`, goHeaders(key));
  t.equal(del.status, 200);
  t.equal(del.body.length, 0, 'the body is empty');
  const gone = await raw(registry.url, 'GET', `/api/v2/device/${router.id}?fields=default`, goHeaders(key));
  checkJsonAnswer(t, gone, 404);
  t.same(Object.keys(gone.json), ['message']);
});

t.test('tailscale-client-go v2 (the terraform provider): Get, List, SubnetRoutes, SetSubnetRoutes, Delete', async (t) => {
  const { registry, key } = await start(t);
  const get: [string, string][] = [
    ['User-Agent', 'tailscale-client-go'],
    ['Accept', 'application/json'],
    ['Authorization', `Basic ${Buffer.from(`${key}:`).toString('base64')}`],
    ['Accept-Encoding', 'gzip'],
  ];
  const post = (body: string): [string, string][] => [
    ['User-Agent', 'tailscale-client-go'],
    ['Content-Length', String(Buffer.byteLength(body))],
    ['Content-Type', 'application/json'],
    ['Authorization', `Basic ${Buffer.from(`${key}:`).toString('base64')}`],
    ['Accept-Encoding', 'gzip'],
  ];
  const one = await raw(registry.url, 'GET', `/api/v2/device/${router.id}`, get);
  checkJsonAnswer(t, one);
  checkDevice(t, one.json, router, 'default');
  const list = await raw(registry.url, 'GET', '/api/v2/tailnet/example.test/devices', get);
  t.same(list.json.devices.map((d: { id: string }) => d.id).sort(), [router.id, sharedIn.id].sort());
  t.same((await raw(registry.url, 'GET', `/api/v2/device/${router.id}/routes`, get)).json, { advertisedRoutes: router.advertisedRoutes, enabledRoutes: router.enabledRoutes });
  const set = await raw(registry.url, 'POST', `/api/v2/device/${router.id}/routes`, post('{"routes":["192.168.50.0/24"]}'), '{"routes":["192.168.50.0/24"]}');
  checkJsonAnswer(t, set);
  t.same(set.json.enabledRoutes, ['192.168.50.0/24']);
  const cleared = await raw(registry.url, 'POST', `/api/v2/device/${router.id}/routes`, post('{"routes":null}'), '{"routes":null}');
  t.same(cleared.json.enabledRoutes, [], 'a nil Go slice ({"routes":null}) disables every route');
  const del = await raw(registry.url, 'DELETE', `/api/v2/device/${router.id}`, get);
  t.equal(del.status, 200);
  t.equal(del.body.length, 0);
});

t.test("the API docs' curl recipes", async (t) => {
  const { registry, key } = await start(t);
  // curl 'https://api.tailscale.com/api/v2/device/12345?fields=all' -u "tskey-...:"
  const all = await raw(registry.url, 'GET', `/api/v2/device/${router.id}?fields=all`, curlHeaders(key));
  checkJsonAnswer(t, all);
  checkDevice(t, all.json, router, 'all');
  // no fields parameter: the default set
  const def = await raw(registry.url, 'GET', `/api/v2/device/${router.id}`, curlHeaders(key));
  checkDevice(t, def.json, router, 'default');
  // fields=default,all: "all is used"
  checkDevice(t, (await raw(registry.url, 'GET', `/api/v2/device/${router.id}?fields=default,all`, curlHeaders(key))).json, router, 'all');
  // curl .../tailnet/example.com/devices
  const list = await raw(registry.url, 'GET', '/api/v2/tailnet/example.test/devices', curlHeaders(key));
  t.equal(list.json.devices.length, 2);
  // curl .../device/11055/routes
  const routes = await raw(registry.url, 'GET', `/api/v2/device/${router.id}/routes`, curlHeaders(key));
  t.same(routes.json, { advertisedRoutes: router.advertisedRoutes, enabledRoutes: router.enabledRoutes });
  // curl .../device/11055/routes --data-binary '{"routes": [...]}': a POST with curl's form Content-Type
  const body = '{"routes": ["10.44.0.0/16", "192.168.50.0/24"]}';
  const set = await raw(registry.url, 'POST', `/api/v2/device/${router.id}/routes`, [...curlHeaders(key), ['Content-Length', String(body.length)], ['Content-Type', 'application/x-www-form-urlencoded']], body);
  checkJsonAnswer(t, set);
  t.same(set.json, { advertisedRoutes: router.advertisedRoutes, enabledRoutes: ['10.44.0.0/16', '192.168.50.0/24'] });
  // curl -X DELETE .../device/12345 -u "tskey-...:" -v
  const del = await raw(registry.url, 'DELETE', `/api/v2/device/${router.id}`, curlHeaders(key));
  t.equal(del.status, 200);
  t.equal(del.body.length, 0);
  // Bearer, as the docs also allow
  const bearer = await raw(registry.url, 'GET', `/api/v2/device/${sharedIn.id}`, [['Authorization', `Bearer ${key}`]]);
  checkDevice(t, bearer.json, sharedIn, 'default');
});

t.test('errors are Tailscale\'s {"message": ...} with the right status', async (t) => {
  const { registry, key } = await start(t);
  const cases: [string, string, [string, string][], string | undefined, number][] = [
    ['GET', `/api/v2/device/${router.id}`, [], undefined, 401],
    ['GET', `/api/v2/device/${router.id}`, [['Authorization', 'Basic ' + Buffer.from('tskey-api-nope:').toString('base64')]], undefined, 401],
    ['GET', `/api/v2/device/${router.id}`, [['Authorization', `Bearer ${key} extra`]], undefined, 401],
    ['GET', '/api/v2/device/nope', curlHeaders(key), undefined, 404],
    ['GET', `/api/v2/device/${router.id}?fields=some`, curlHeaders(key), undefined, 400],
    ['POST', `/api/v2/device/${router.id}/routes`, [...curlHeaders(key), ['Content-Type', 'application/json'], ['Content-Length', '25']], '{"routes": ["10.0.0.1/8"]}'.slice(0, 25), 400],
    ['POST', `/api/v2/device/${router.id}/routes`, [...curlHeaders(key), ['Content-Type', 'application/json'], ['Content-Length', '26']], '{"routes": ["10.0.0.1/8"]}', 400],
    ['PUT', `/api/v2/device/${router.id}`, curlHeaders(key), undefined, 405],
  ];
  for (const [method, p, headers, body, status] of cases) {
    const a = await raw(registry.url, method, p, headers, body);
    checkJsonAnswer(t, a, status);
    t.same(Object.keys(a.json ?? {}), ['message'], `${method} ${p} -> ${status}: ${a.json?.message}`);
    t.type(a.json?.message, 'string');
  }
  const twice = '{"routes": ["10.44.0.0/16"], "routes": []}';
  const dup = await raw(registry.url, 'POST', `/api/v2/device/${router.id}/routes`, [...curlHeaders(key), ['Content-Type', 'application/json'], ['Content-Length', String(twice.length)]], twice);
  checkJsonAnswer(t, dup, 400);
  t.match(dup.json.message, /key "routes" appears twice/, 'a key given twice is refused, named');
  const unchanged = await raw(registry.url, 'GET', `/api/v2/device/${router.id}/routes`, curlHeaders(key));
  t.same(unchanged.json.enabledRoutes, router.enabledRoutes, 'refused requests changed nothing');
});

t.test('protobuf on v2 by content negotiation; v1 serves the same store without the Tailscale-only fields', async (t) => {
  const { registry, key } = await start(t);
  const pb: [string, string] = ['Accept', 'application/x-protobuf'];
  const all = await raw(registry.url, 'GET', `/api/v2/device/${router.nodeId}?fields=all`, [['Authorization', `Bearer ${key}`], pb]);
  t.equal(all.headers['content-type'], 'application/x-protobuf');
  const d = deviceCodec.decode(all.body);
  t.equal(d.id, router.id);
  t.same(d.advertisedRoutes, router.advertisedRoutes);
  const def = deviceCodec.decode((await raw(registry.url, 'GET', `/api/v2/device/${router.id}`, [['Authorization', `Bearer ${key}`], pb])).body);
  t.same(def.advertisedRoutes ?? [], [], 'fields=default leaves the routes out in binary too');
  t.notOk(def.clientConnectivity, 'and the connectivity');
  const list = await raw(registry.url, 'GET', '/api/v2/tailnet/-/devices?fields=all', [['Authorization', `Bearer ${key}`], pb]);
  t.match(list.headers['content-type'], /^application\/x-protobuf; *delimited=true/);
  t.same(deviceCodec.decodeDelimited(list.body).map((x) => x.id).sort(), [router.id, sharedIn.id].sort(), 'a length-delimited stream of devices');
  const body = Buffer.from(codecFor('registry.v1.EnableDeviceRoutesRequest').encode({ routes: ['10.44.0.0/16'] }));
  const set = await raw(registry.url, 'POST', `/api/v2/device/${router.id}/routes`, [['Authorization', `Bearer ${key}`], pb, ['Content-Type', 'application/x-protobuf'], ['Content-Length', String(body.length)]], body as unknown as string);
  t.same(codecFor('registry.v1.EnableDeviceRoutesResponse').decode(set.body).enabledRoutes, ['10.44.0.0/16']);
  const v1 = await raw(registry.url, 'GET', `/api/v1/device/${router.id}`, [['Authorization', `Bearer ${key}`]]);
  t.equal(v1.json.enabledRoutes[0], '10.44.0.0/16', 'v1 sees the change made through v2: one store');
  t.equal(v1.json.clientConnectivity.mappingVariesByDestIp, true, 'v1 speaks ProtoJSON');
  for (const k of ['nodeId', 'tags', 'tailnetLockKey']) t.notOk(k in v1.json, `v1 has no ${k} (not in registry.v1)`);
  t.equal((await raw(registry.url, 'GET', `/api/v1/device/${router.nodeId}`, [['Authorization', `Bearer ${key}`]])).status, 404, 'v1 names devices by id only');
  const after = await raw(registry.url, 'GET', `/api/v2/device/${router.id}`, [['Authorization', `Bearer ${key}`]]);
  t.same(after.json.tags, router.tags, 'the Tailscale-only fields survive a route change');
});

t.test('a database of schema version 1 (before API v2) is migrated on open, its devices kept', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-migrate-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const dbFile = path.join(dir, 'v1.db');
  // The version-1 layout as the previous release made it.
  const Database = (await import('better-sqlite3')).default;
  const old = new Database(dbFile);
  old.exec(`CREATE TABLE devices (id TEXT PRIMARY KEY NOT NULL, is_external INTEGER NOT NULL DEFAULT 0, record BLOB NOT NULL) STRICT;
    CREATE TABLE api_keys (id TEXT PRIMARY KEY NOT NULL, hash BLOB NOT NULL, description TEXT NOT NULL DEFAULT '', created_ms INTEGER NOT NULL, expires_ms INTEGER, last_used_ms INTEGER, revoked INTEGER NOT NULL DEFAULT 0) STRICT;
    PRAGMA user_version = 1;`);
  old.prepare('INSERT INTO devices (id, is_external, record) VALUES (?, 0, ?)').run('7', Buffer.from(deviceCodec.encode({ id: '7', name: 'old-box', advertisedRoutes: ['10.7.0.0/16'] })));
  old.close();
  const store = new RegistryStore(dbFile);
  t.equal(store.db.pragma('user_version', { simple: true }), 2, 'migrated to version 2');
  const { key } = store.createApiKey();
  store.close();
  const registry = await startRegistryServer({ dbFile, host: '127.0.0.1', port: 0 });
  t.teardown(() => registry.close());
  const a = await raw(registry.url, 'GET', '/api/v2/device/7?fields=all', [['Authorization', `Bearer ${key}`]]);
  t.equal(a.json.name, 'old-box');
  t.equal(a.json.nodeId, '', 'no Tailscale-only fields yet: their defaults');
  t.same(a.json.advertisedRoutes, ['10.7.0.0/16']);
});
