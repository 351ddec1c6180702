/**
 * The `registry-proto` CLI as a user runs it (child processes, files, pipes):
 * conversions checked against protoc, streams, describe, the descriptor set
 * read by protoc, keys, import/export, and `call` against a real `serve`
 * on a free port, with its exit codes. Also a second process writing the
 * database while the server runs, and a restart.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { codecFor } from '../../registry-proto/codec';
import type { GetDeviceResponse } from '../../registry-proto/messages';
import { buildCli, cliEnv, startServe, type BuiltCli } from '../helpers/cli';
import { canonical, sampleDevice } from '../helpers/registry';

const device = codecFor<GetDeviceResponse>('registry.v1.GetDeviceResponse');
const cli: BuiltCli = buildCli(t, 'registry-proto');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-cli-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
const file = (name: string) => path.join(dir, name);

interface Run {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs the CLI with `input` on stdin (none: an empty stdin). */
function run(args: string[], input: string | Buffer = '', env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli.entry, ...args], { env: cliEnv({ NO_COLOR: '1', ...env }), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    });
    child.stdin.end(input);
  });
}

const deviceJson = () => device.toJsonString(sampleDevice());

t.test('--help lists every command; an unknown command is a usage error (exit 2)', async (t) => {
  const help = await run(['--help']);
  t.equal(help.code, 0);
  for (const c of ['encode', 'decode', 'convert', 'describe', 'descriptor-set', 'call', 'serve', 'keys', 'devices']) t.match(help.stdout.toString(), c);
  const bad = await run(['encdoe', 'GetDeviceResponse']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /Did you mean encode/);
});

t.test('encode (stdin -> stdout) makes bytes protoc decodes; its descriptor-set is what protoc reads', async (t) => {
  const set = await run(['descriptor-set', '-o', file('set.binpb')]);
  t.equal(set.code, 0, set.stderr);
  const enc = await run(['encode', 'GetDeviceResponse'], deviceJson());
  t.equal(enc.code, 0, enc.stderr);
  const protoc = spawnSync('protoc', [`--descriptor_set_in=${file('set.binpb')}`, '--decode=registry.v1.GetDeviceResponse'], { input: enc.stdout });
  t.equal(protoc.status, 0, protoc.stderr.toString());
  t.same(canonical(device.type, device.fromText(protoc.stdout.toString())), canonical(device.type, sampleDevice()), 'protoc reads back the same device');
  // and protoc's bytes decode with our decode (files this time)
  const text = spawnSync('protoc', [`--descriptor_set_in=${file('set.binpb')}`, '--encode=registry.v1.GetDeviceResponse'], { input: device.toText(sampleDevice()) });
  fs.writeFileSync(file('protoc.bin'), text.stdout);
  const dec = await run(['decode', 'registry.v1.GetDeviceResponse', '-i', file('protoc.bin'), '-o', file('protoc.json')]);
  t.equal(dec.code, 0, dec.stderr);
  t.same(JSON.parse(fs.readFileSync(file('protoc.json'), 'utf8')), JSON.parse(deviceJson()));
});

t.test('descriptor-set variants: without imports protoc cannot resolve Timestamp; with source info the comments are there', async (t) => {
  await run(['descriptor-set', '--exclude-imports', '-o', file('noimports.binpb')]);
  const r = spawnSync('protoc', [`--descriptor_set_in=${file('noimports.binpb')}`, '--decode=registry.v1.GetDeviceResponse'], { input: Buffer.alloc(0) });
  t.not(r.status, 0, 'protoc needs google/protobuf/timestamp.proto');
  const plain = await run(['descriptor-set', '--out', '-']);
  const withInfo = await run(['descriptor-set', '--include-source-info', '--out', '-']);
  t.ok(withInfo.stdout.includes(Buffer.from('The device record.')), 'comments kept');
  t.notOk(plain.stdout.includes(Buffer.from('The device record.')), 'no comments by default (as protoc)');
});

t.test('decode --to text and convert between all three formats round-trip', async (t) => {
  fs.writeFileSync(file('d.bin'), device.encode(sampleDevice()));
  const text = await run(['decode', 'GetDeviceResponse', '--to', 'text', '-i', file('d.bin')]);
  t.match(text.stdout.toString(), /^last_seen \{$/m);
  const back = await run(['convert', 'GetDeviceResponse', '--from', 'text', '--to', 'json', '--proto-names', '--indent', '0'], text.stdout);
  t.equal(back.code, 0, back.stderr);
  const json = JSON.parse(back.stdout.toString());
  t.equal(json.last_seen, '2024-11-07T17:22:03.456Z', 'proto names with --proto-names');
  t.equal(back.stdout.toString().trim().split('\n').length, 1, '--indent 0 is one line');
  const defaults = await run(['decode', 'GetDeviceRoutesResponse', '--emit-defaults', '--indent', '0'], Buffer.alloc(0));
  t.same(JSON.parse(defaults.stdout.toString()), { enabledRoutes: [], advertisedRoutes: [] }, '--emit-defaults prints empty lists');
});

t.test('length-delimited streams: NDJSON -> binary stream -> NDJSON and text', async (t) => {
  const devices = ['1', '2', '3'].map((id) => sampleDevice(id));
  const ndjson = devices.map((d) => device.toJsonString(d)).join('\n');
  const enc = await run(['encode', 'GetDeviceResponse', '--delimited'], ndjson);
  t.equal(enc.code, 0, enc.stderr);
  t.same(device.decodeDelimited(enc.stdout).map((d) => d.id), ['1', '2', '3']);
  const dec = await run(['decode', 'GetDeviceResponse', '--delimited'], enc.stdout);
  t.same(dec.stdout.toString().trim().split('\n').map((l) => JSON.parse(l).id), ['1', '2', '3'], 'one JSON per line');
  const array = await run(['encode', 'GetDeviceResponse', '--delimited'], `[${devices.map((d) => device.toJsonString(d)).join(',')}]`);
  t.same(array.stdout, enc.stdout, 'a JSON array reads as the same stream');
  const text = await run(['convert', 'GetDeviceResponse', '--delimited', '--from', 'binary', '--to', 'text'], enc.stdout);
  t.equal(text.stdout.toString().split(/^---$/m).length, 3, 'text messages separated by ---');
  const again = await run(['convert', 'GetDeviceResponse', '--delimited', '--from', 'text', '--to', 'binary'], text.stdout);
  t.same(device.decodeDelimited(again.stdout).map((d) => canonical(device.type, d)), devices.map((d) => canonical(device.type, d)));
  const broken = await run(['decode', 'GetDeviceResponse', '--delimited'], enc.stdout.subarray(0, enc.stdout.length - 4));
  t.equal(broken.code, 2);
  t.match(broken.stderr, /message #3: length \d+ at byte offset \d+ runs past the end/);
});

t.test('bad input: exit 2 with what and where', async (t) => {
  const unknownType = await run(['encode', 'Device'], '{}');
  t.equal(unknownType.code, 2);
  t.match(unknownType.stderr, /no message type 'Device'.*registry\.v1\.GetDeviceResponse/);
  const unknownField = await run(['encode', 'GetDeviceResponse'], '{"id":"1","colour":"red"}');
  t.equal(unknownField.code, 2);
  t.match(unknownField.stderr, /unknown field: "colour"/);
  t.equal((await run(['encode', 'GetDeviceResponse', '--ignore-unknown'], '{"id":"1","colour":"red"}')).code, 0, '--ignore-unknown');
  const badTime = await run(['encode', 'GetDeviceResponse'], '{"created":"last tuesday"}');
  t.match(badTime.stderr, /invalid timestamp/);
  const badBytes = await run(['decode', 'GetDeviceResponse'], Buffer.from('1205616263', 'hex'));
  t.equal(badBytes.code, 2);
  t.match(badBytes.stderr, /id: length 5 runs past the end of the input \(3 bytes left\) at byte offset 1/);
  const jsonToDecode = await run(['decode', 'GetDeviceResponse'], deviceJson());
  t.equal(jsonToDecode.code, 2);
  t.match(jsonToDecode.stderr, /looks like JSON/);
  const missing = await run(['decode', 'GetDeviceResponse', '-i', file('nope.bin')]);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /cannot read .*nope\.bin: ENOENT/);
});

t.test('describe prints the .proto definition with comments; --json gives fields', async (t) => {
  const d = await run(['describe', 'Latency']);
  t.match(d.stdout.toString(), /message Latency \{\n.*\n?  float latency_ms = 1; \/\/ JSON: latencyMs/);
  t.match(d.stdout.toString(), /Latency in milliseconds/);
  const j = JSON.parse((await run(['describe', 'GetDeviceResponse', '--json'])).stdout.toString());
  t.equal(j.fields.length, 20);
  t.same(j.fields.find((f: { number: number }) => f.number === 20), { name: 'client_connectivity', jsonName: 'clientConnectivity', number: 20, type: 'registry.v1.ClientConnectivity' });
  const svc = await run(['describe', 'DeviceService']);
  t.match(svc.stdout.toString(), /rpc EnableDeviceRoutes\(registry\.v1\.EnableDeviceRoutesRequest\) returns \(registry\.v1\.EnableDeviceRoutesResponse\); \/\/ POST \/api\/v1\/device\/\{id\}\/routes/);
  const list = await run(['describe']);
  t.match(list.stdout.toString(), /^service registry\.v1\.DeviceService$/m);
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
