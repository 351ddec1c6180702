/**
 * The `registry-proto` CLI's registry commands: devices import/export, keys,
 * and `call` against a real `serve` on a free port with its exit codes; a
 * second process writing the database while the server runs, and a restart.
 */
import fs from 'node:fs';
import t from 'tap';
import { codecFor } from '../../registry-proto/codec';
import type { GetDeviceResponse } from '../../registry-proto/messages';
import { cliEnv, startServe } from '../helpers/cli';
import { canonical, sampleDevice } from '../helpers/registry';
import { registryCli } from '../helpers/registry-cli';

const device = codecFor<GetDeviceResponse>('registry.v1.GetDeviceResponse');
const { cli, file, run } = registryCli(t);
const deviceJson = () => device.toJsonString(sampleDevice());

t.test("devices import --tailscale keeps Tailscale's own fields; export --tailscale writes what API v2 serves; duplicate keys are refused", async (t) => {
  const db = file('ts-io.db');
  const tsDevice = {
    addresses: ['100.70.1.2'], id: '61', nodeId: 'nAbc9CNTRL', user: 'lin@example.test', name: 'edge.example.ts.net', hostname: 'edge',
    clientVersion: '1.70.0', updateAvailable: false, os: 'linux', tags: ['tag:edge'], created: '2024-01-02T03:04:05Z', lastSeen: '2024-06-01T00:00:00.5Z',
    keyExpiryDisabled: false, expires: '2025-01-02T03:04:05Z', authorized: true, isExternal: false, machineKey: 'mkey:ab', nodeKey: 'nodekey:cd',
    blocksIncomingConnections: false, tailnetLockKey: 'tlpub:ef', tailnetLockError: '', enabledRoutes: ['10.1.0.0/16'], advertisedRoutes: ['10.1.0.0/16'],
    clientConnectivity: { endpoints: ['192.0.2.1:41641'], derp: '', mappingVariesByDestIP: true, latency: { Paris: { preferred: true, latencyMs: 7.5 } }, clientSupports: { hairPinning: false, ipv6: true, pcp: false, pmp: false, udp: true, upnp: false } },
  };
  fs.writeFileSync(file('ts-in.json'), JSON.stringify({ devices: [tsDevice] }));
  const imp = await run(['devices', 'import', file('ts-in.json'), '--db', db, '--tailscale']);
  t.equal(imp.code, 0, imp.stderr);
  const exp = await run(['devices', 'export', '--db', db, '--tailscale']);
  t.equal(exp.code, 0, exp.stderr);
  t.same(JSON.parse(exp.stdout.toString()).devices, [tsDevice], 'every field back as Tailscale wrote it, nodeId, tags and the tailnet lock key included');
  fs.writeFileSync(file('ts-bad.json'), JSON.stringify({ devices: [{ ...tsDevice, tags: 'tag:edge' }] }));
  const bad = await run(['devices', 'import', file('ts-bad.json'), '--db', db, '--tailscale']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /device #1 \(id 61\): tags: expected an array of strings/);
  fs.writeFileSync(file('dup.json'), '{"devices": [{"id": "62", "id": "63"}]}');
  const dup = await run(['devices', 'import', file('dup.json'), '--db', db]);
  t.equal(dup.code, 2);
  t.match(dup.stderr, /key "id" appears twice in the object at devices\[0\]/);
});

t.test('devices import/export round-trip; a bad file changes nothing', async (t) => {
  const db = file('io.db');
  fs.writeFileSync(file('devices.json'), JSON.stringify({ devices: [device.toJson(sampleDevice('1')), device.toJson(sampleDevice('2'))] }));
  const imp = await run(['devices', 'import', file('devices.json'), '--db', db, '--json']);
  t.equal(imp.code, 0, imp.stderr);
  t.same(JSON.parse(imp.stdout.toString()), { added: 2, replaced: 0, removed: 0 });
  const exp = await run(['devices', 'export', '--db', db]);
  t.same(JSON.parse(exp.stdout.toString()).devices.map((d: unknown) => canonical(device.type, device.fromJson(d))), ['1', '2'].map((id) => canonical(device.type, sampleDevice(id))));
  fs.writeFileSync(file('bad.json'), JSON.stringify([device.toJson(sampleDevice('3')), { id: '4', enabledRoutes: ['10.0.0.1/8'] }]));
  const bad = await run(['devices', 'import', file('bad.json'), '--db', db]);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /device #2 \(id 4\): route "10.0.0.1\/8" is not in canonical form/);
  t.equal(JSON.parse((await run(['devices', 'export', '--db', db])).stdout.toString()).devices.length, 2, 'device 3 was not imported either');
  // Tailscale's own JSON spellings with --tailscale
  fs.writeFileSync(file('ts.json'), JSON.stringify({ devices: [{ id: '5', created: '', clientConnectivity: { mappingVariesByDestIP: true } }] }));
  t.equal((await run(['devices', 'import', file('ts.json'), '--db', db])).code, 2, 'refused without --tailscale');
  t.equal((await run(['devices', 'import', file('ts.json'), '--db', db, '--tailscale'])).code, 0);
  const replaced = await run(['devices', 'import', file('devices.json'), '--db', db, '--replace', '--json']);
  t.same(JSON.parse(replaced.stdout.toString()), { added: 0, replaced: 2, removed: 1 });
  const none = await run(['devices', 'export', '--db', file('missing.db')]);
  t.equal(none.code, 1);
  t.match(none.stderr, /no registry database at/);
});

t.test('serve + call: every operation in both wire encodings, and the exit codes', async (t) => {
  const db = file('serve.db');
  await run(['devices', 'import', '-', '--db', db], JSON.stringify([device.toJson(sampleDevice('27')), { ...(device.toJson(sampleDevice('99')) as object), isExternal: true }]));
  const created = JSON.parse((await run(['keys', 'create', '--db', db, '--description', 'cli test', '--json'])).stdout.toString());
  t.match(created.key, /^rpk_[0-9a-f]{16}_/);
  const server = await startServe(t, cli, ['--db', db, '--port', '0'], cliEnv());
  const env = { REGISTRY_URL: server.url, REGISTRY_API_KEY: created.key };
  for (const wire of ['binary', 'json']) {
    const g = await run(['call', 'GetDevice', '-d', '{"id":"27"}', '--wire', wire], '', env);
    t.equal(g.code, 0, g.stderr);
    const want = JSON.parse(deviceJson());
    if (wire === 'json') want.enabledRoutes = ['172.16.0.0/12']; // set over the binary wire just before
    t.same(JSON.parse(g.stdout.toString()), want, `GetDevice over ${wire}`);
    const e = await run(['call', 'registry.v1.DeviceService/EnableDeviceRoutes', '-d', '{"id":"27","routes":["172.16.0.0/12"]}', '--wire', wire], '', env);
    t.same(JSON.parse(e.stdout.toString()), { enabledRoutes: ['172.16.0.0/12'], advertisedRoutes: ['10.20.0.0/16', '192.168.7.0/24'] }, `EnableDeviceRoutes over ${wire}`);
    const r = await run(['call', 'GetDeviceRoutes', '--id', '27', '--wire', wire, '--to', 'text'], '', env);
    t.match(r.stdout.toString(), /^enabled_routes: "172.16.0.0\/12"$/m, `GetDeviceRoutes over ${wire}`);
  }
  const ext = await run(['call', 'DeleteDevice', '--id', '99'], '', env);
  t.equal(ext.code, 1, 'an external device is refused');
  t.match(ext.stderr, /external/);
  const del = await run(['call', 'DeleteDevice', '-d', 'id: "27"', '--format', 'text'], '', env);
  t.equal(del.code, 0, del.stderr);
  const gone = await run(['call', 'GetDevice', '--id', '27'], '', env);
  t.equal(gone.code, 1);
  t.match(gone.stderr, /device 27 not found/);
  const noKey = await run(['call', 'GetDevice', '--id', '99'], '', { REGISTRY_URL: server.url });
  t.equal(noKey.code, 4, 'no key: exit 4');
  t.match(noKey.stderr, /keys create/);
  const noId = await run(['call', 'GetDevice', '-d', '{}'], '', env);
  t.equal(noId.code, 2);
  t.match(noId.stderr, /needs the device id/);
  const badOp = await run(['call', 'ListDevices', '--id', '1'], '', env);
  t.equal(badOp.code, 2);
  t.match(badOp.stderr, /GetDevice, DeleteDevice, GetDeviceRoutes, EnableDeviceRoutes/);

  // keys list shows use; a revoked key is refused at once
  const listed = JSON.parse((await run(['keys', 'list', '--db', db, '--json'])).stdout.toString());
  t.ok(listed[0].lastUsedMs > 0, 'last use recorded');
  t.equal((await run(['keys', 'revoke', created.id, '--db', db])).code, 0);
  t.equal((await run(['call', 'GetDevice', '--id', '99'], '', env)).code, 4, 'revoked key refused by the running server');
  t.equal((await run(['keys', 'revoke', 'ffffffffffffffff', '--db', db])).code, 1, 'revoking an unknown key fails');
});

t.test('a second process writes the database while the server runs; a restart keeps everything', async (t) => {
  const db = file('shared.db');
  const key = JSON.parse((await run(['keys', 'create', '--db', db, '--json'])).stdout.toString()).key as string;
  const first = await startServe(t, cli, ['--db', db, '--port', '0'], cliEnv());
  const env = { REGISTRY_URL: first.url, REGISTRY_API_KEY: key };
  // imports from other processes, while requests are served
  const imports = ['1', '2', '3'].map((id) => run(['devices', 'import', '-', '--db', db], JSON.stringify([device.toJson(sampleDevice(id))])));
  const calls = ['1', '2', '3'].map(() => run(['call', 'GetDevice', '--id', '1'], '', env));
  const results = await Promise.all([...imports, ...calls]);
  t.same(results.slice(0, 3).map((r) => r.code), [0, 0, 0], 'every import committed');
  t.ok(results.slice(3).every((r) => r.code === 0 || /not found/.test(r.stderr)), 'every call answered (found, or not yet imported)');
  t.equal((await run(['call', 'GetDevice', '--id', '3'], '', env)).code, 0, 'the server sees what another process wrote');
  await run(['call', 'EnableDeviceRoutes', '-d', '{"id":"2","routes":["10.9.0.0/16"]}'], '', env);
  first.child.kill('SIGTERM');
  t.equal((await first.done).code, 0, 'SIGTERM stops the server cleanly');
  const second = await startServe(t, cli, ['--db', db, '--port', '0'], cliEnv());
  t.match(second.stdout(), /3 devices/);
  const routes = await run(['call', 'GetDeviceRoutes', '--id', '2'], '', { REGISTRY_URL: second.url, REGISTRY_API_KEY: key });
  t.same(JSON.parse(routes.stdout.toString()).enabledRoutes, ['10.9.0.0/16'], 'the route change survived the restart');
});
