/**
 * The registry's limits: routes per device, body size, and route checking in
 * chunks that give the event loop back (the benchmark bench/registry-limits.ts
 * measures what that buys: GET latency while large bodies are processed).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { RegistryError } from '../../registry-proto/errors';
import { checkRoute, MAX_ROUTES_PER_DEVICE, normaliseRoutesInChunks, ROUTE_CHUNK } from '../../registry-proto/server/routes';
import { startRegistryServer } from '../../registry-proto/server/server';
import { RegistryStore } from '../../registry-proto/server/store';
import { sampleDevice } from '../helpers/registry';

/** `n` distinct canonical IPv4 /32 routes. */
const routes = (n: number) => Array.from({ length: n }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/32`);
/** `n` distinct IPv6 prefixes of the longest canonical form (8 groups of 4 digits). */
const longRoutes = (n: number) => Array.from({ length: n }, (_, i) => `fd7a:115c:a1e0:ab12:4843:cd96:${(0x1000 + i).toString(16)}:ffff/128`);

async function start(t: Test) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-limits-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const dbFile = path.join(dir, 'registry.db');
  const store = new RegistryStore(dbFile);
  store.importDevices([sampleDevice('27')]);
  const { key } = store.createApiKey();
  store.close();
  const registry = await startRegistryServer({ dbFile, host: '127.0.0.1', port: 0 });
  t.teardown(() => registry.close());
  const post = async (p: string, body: string) => {
    const res = await fetch(registry.url + p, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    return { status: res.status, json: (await res.json()) as Record<string, unknown>, code: res.headers.get('registry-error-code') };
  };
  return { registry, post };
}

t.test(`a device takes at most ${MAX_ROUTES_PER_DEVICE} routes, on v1 and v2; the longest such body is accepted`, async (t) => {
  const { post } = await start(t);
  for (const p of ['/api/v1/device/27/routes', '/api/v2/device/27/routes']) {
    const most = await post(p, JSON.stringify({ routes: longRoutes(MAX_ROUTES_PER_DEVICE) }));
    t.equal(most.status, 200, `${p}: ${MAX_ROUTES_PER_DEVICE} of the longest IPv6 prefixes fit the body limit`);
    t.equal((most.json.enabledRoutes as string[]).length, MAX_ROUTES_PER_DEVICE);
    const over = await post(p, JSON.stringify({ routes: routes(MAX_ROUTES_PER_DEVICE + 1) }));
    t.equal(over.status, 400);
    t.equal(over.code, 'REG_ERR_TOO_MANY_ROUTES');
    t.match(over.json.message, /1001 routes: a device has at most 1000/);
  }
});

t.test('a body over 64 KB is refused with 413 before it is parsed', async (t) => {
  const { post } = await start(t);
  const big = await post('/api/v2/device/27/routes', JSON.stringify({ routes: ['10.0.0.0/8'], id: 'x'.repeat(70_000) }));
  t.equal(big.status, 413);
  t.match(big.json.message, /larger than 64kb/);
});

t.test('import refuses a device with too many routes, naming it', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-limits-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const store = new RegistryStore(path.join(dir, 'r.db'));
  t.teardown(() => store.close());
  t.throws(() => store.importDevices([{ ...sampleDevice('5'), advertisedRoutes: routes(MAX_ROUTES_PER_DEVICE + 1) }]), { code: 'REG_ERR_IMPORT', message: /device #1 \(id 5\): 1001 advertised routes/ });
  t.equal(store.deviceCount(), 0);
});

t.test(`routes are checked ${ROUTE_CHUNK} at a time, the event loop running between chunks`, async (t) => {
  let turns = 0;
  let done = false;
  const tick = () => {
    turns++;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  const out = await normaliseRoutesInChunks(routes(MAX_ROUTES_PER_DEVICE));
  done = true;
  t.equal(out.length, MAX_ROUTES_PER_DEVICE);
  t.ok(turns >= MAX_ROUTES_PER_DEVICE / ROUTE_CHUNK - 1, `other work ran ${turns} times while ${MAX_ROUTES_PER_DEVICE} routes were checked`);
  await t.rejects(normaliseRoutesInChunks(['10.0.0.0/8', '10.0.0.1/8']), RegistryError, 'a bad route in a later position still fails');
  await t.rejects(normaliseRoutesInChunks([...routes(150), '10.0.0.1/8']), { code: 'REG_ERR_INVALID_ROUTE', message: /did you mean "10.0.0.0\/8"/ });
});

t.test('IPv4 routes are checked without BigInt and give the same verdicts', async (t) => {
  t.equal(checkRoute('0.0.0.0/0'), '0.0.0.0/0');
  t.equal(checkRoute('255.255.255.255/32'), '255.255.255.255/32');
  t.equal(checkRoute('192.168.128.0/17'), '192.168.128.0/17');
  t.throws(() => checkRoute('192.168.129.0/17'), { message: /did you mean "192.168.128.0\/17"/ });
  t.throws(() => checkRoute('1.2.3.4/0'), { message: /did you mean "0.0.0.0\/0"/ });
  t.throws(() => checkRoute('10.0.0.0/33'), { message: /at most 32 bits/ });
});
