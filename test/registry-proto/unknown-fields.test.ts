/**
 * Unknown fields survive binary round trips, as the protobuf language guide
 * asks of a parser ("Unknown fields": kept on parse, written on serialize):
 *
 * - real peer: `protoc --encode` with an extended schema (the registry's
 *   device.proto plus fields a newer version might add, at every nesting
 *   level) makes the bytes; our CLI converts binary to binary; the output is
 *   byte-identical to protoc's, and `protoc --decode_raw` prints the same;
 * - `--discard-unknown` drops them; JSON and text output never show them;
 * - the server's stored record keeps them through a route change.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { codecFor } from '../../registry-proto/codec';
import type { GetDeviceResponse } from '../../registry-proto/messages';
import { REGISTRY_PROTO_DIR, PROTO_FILE } from '../../registry-proto/generate';
import { startRegistryServer } from '../../registry-proto/server/server';
import { RegistryStore } from '../../registry-proto/server/store';
import { registryCli } from '../helpers/registry-cli';

const device = codecFor<GetDeviceResponse>('registry.v1.GetDeviceResponse');
const { file, run } = registryCli(t);

/** device.proto with fields a newer schema could add, in the top message and in nested ones. */
function extendedSchema(dir: string): string {
  let proto = fs.readFileSync(path.join(REGISTRY_PROTO_DIR, 'proto', PROTO_FILE), 'utf8');
  const add = (message: string, fields: string) => {
    const at = proto.indexOf(`message ${message} {`);
    if (at < 0) throw new Error(`no message ${message} in ${PROTO_FILE}`);
    const open = proto.indexOf('{', at);
    proto = `${proto.slice(0, open + 1)}\n${fields}\n${proto.slice(open + 1)}`;
  };
  add('Latency', '  double jitter_ms = 3;');
  add('ClientConnectivity', '  uint32 path_mtu = 6;\n  repeated string relays = 7;');
  add('GetDeviceResponse', '  string posture_note = 21;\n  repeated sint64 counters = 22;\n  Extra extra = 30;\n  fixed32 checksum = 31;');
  proto += '\nmessage Extra {\n  string label = 1;\n  bool flag = 2;\n}\n';
  const out = path.join(dir, 'registry', 'v1');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'device.proto'), proto);
  // The well-known Timestamp (libprotobuf-dev may be missing): the same two fields at the same numbers.
  fs.mkdirSync(path.join(dir, 'google', 'protobuf'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'google', 'protobuf', 'timestamp.proto'), 'syntax = "proto3";\npackage google.protobuf;\nmessage Timestamp {\n  int64 seconds = 1;\n  int32 nanos = 2;\n}\n');
  return dir;
}

const TEXT = `
addresses: "100.64.1.2"
id: "77"
name: "newer-schema-box"
authorized: true
enabled_routes: "10.9.0.0/16"
advertised_routes: "10.9.0.0/16"
client_connectivity {
  endpoints: "198.51.100.3:41641"
  latency { key: "Oslo" value { latency_ms: 22.5 preferred: true jitter_ms: 1.25 } }
  client_supports { udp: true }
  path_mtu: 1280
  relays: "relay-a"
  relays: "relay-b"
}
posture_note: "kept by older readers"
counters: -3
counters: 70000
extra { label: "x" flag: true }
checksum: 3735928559
`;

const protoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-unknown-'));
t.teardown(() => fs.rmSync(protoDir, { recursive: true, force: true }));
extendedSchema(protoDir);

function protoc(args: string[], input: string | Uint8Array): Buffer {
  const schema = args[0] === '--decode_raw' ? [] : [`-I${protoDir}`, 'registry/v1/device.proto'];
  const r = spawnSync('protoc', [...args, ...schema], { input, timeout: 30_000 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`protoc ${args.join(' ')}: ${r.stderr.toString()}`);
  return r.stdout;
}

const newerBytes = protoc(['--encode=registry.v1.GetDeviceResponse'], TEXT);

t.test('protoc --encode (extended schema) -> our CLI convert binary->binary: byte-identical, and protoc --decode_raw agrees', async (t) => {
  fs.writeFileSync(file('newer.bin'), newerBytes);
  const r = await run(['convert', 'GetDeviceResponse', '--from', 'binary', '--to', 'binary', '-i', file('newer.bin'), '-o', file('ours.bin')]);
  t.equal(r.code, 0, r.stderr);
  const ours = fs.readFileSync(file('ours.bin'));
  t.ok(ours.equals(newerBytes), `byte-identical (${ours.length} vs ${newerBytes.length} bytes)`);
  const rawTheirs = protoc(['--decode_raw'], newerBytes).toString();
  t.equal(protoc(['--decode_raw'], ours).toString(), rawTheirs, 'protoc --decode_raw prints the same');
  t.match(rawTheirs, /^21: "kept by older readers"$/m, 'the raw decode shows the unknown top-level field');
  const back = protoc(['--decode=registry.v1.GetDeviceResponse'], ours).toString();
  for (const line of ['posture_note: "kept by older readers"', 'path_mtu: 1280', 'relays: "relay-b"', 'jitter_ms: 1.25', 'checksum: 3735928559', 'counters: 70000', 'label: "x"']) {
    t.match(back, line, `the newer schema reads ${line} from our output`);
  }
  // stdin to stdout and delimited streams too
  const piped = await run(['convert', 'GetDeviceResponse', '--from', 'binary', '--to', 'binary', '-o', '-'], newerBytes);
  t.ok(piped.stdout.equals(newerBytes), 'stdin -> stdout: identical');
  const stream = Buffer.concat([Buffer.from([newerBytes.length & 0x7f | 0x80, newerBytes.length >> 7]), newerBytes, Buffer.from([newerBytes.length & 0x7f | 0x80, newerBytes.length >> 7]), newerBytes]);
  const delimited = await run(['convert', 'GetDeviceResponse', '--from', 'binary', '--to', 'binary', '--delimited', '-o', '-'], stream);
  t.equal(delimited.code, 0, delimited.stderr);
  t.ok(delimited.stdout.equals(stream), 'a length-delimited stream: identical');
});

t.test('--discard-unknown drops them; JSON and text output never show them', async (t) => {
  const dropped = await run(['convert', 'GetDeviceResponse', '--from', 'binary', '--to', 'binary', '--discard-unknown', '-o', '-'], newerBytes);
  t.equal(dropped.code, 0, dropped.stderr);
  const raw = protoc(['--decode_raw'], dropped.stdout).toString();
  t.notMatch(raw, /^(21|22|30|31):/m, 'no unknown top-level field');
  t.notMatch(raw, /relay-a|^\s+6: 1280/m, 'none nested either');
  t.match(raw, /^2: "77"$/m, 'the known fields are there');
  const json = await run(['decode', 'GetDeviceResponse', '--indent', '0'], newerBytes);
  t.equal(json.code, 0, json.stderr);
  const parsed = JSON.parse(json.stdout.toString());
  t.same(Object.keys(parsed).sort(), ['addresses', 'advertisedRoutes', 'authorized', 'clientConnectivity', 'enabledRoutes', 'id', 'name'], 'JSON: known fields only');
  t.same(Object.keys(parsed.clientConnectivity).sort(), ['clientSupports', 'endpoints', 'latency']);
  const text = await run(['decode', 'GetDeviceResponse', '--to', 'text'], newerBytes);
  t.notMatch(text.stdout.toString(), /posture|relay|jitter|^21/m, 'text: known fields only');
  // JSON -> binary after a binary -> JSON trip has nothing left to keep
  const again = await run(['encode', 'GetDeviceResponse', '-o', '-'], json.stdout);
  t.notMatch(protoc(['--decode_raw'], again.stdout).toString(), /^21:/m);
});

t.test('the codec keeps unknown fields in memory: decode -> encode, and a change to a known field', async (t) => {
  const m = device.decode(newerBytes);
  t.ok(Buffer.from(device.encode(m)).equals(newerBytes), 'decode -> encode is identity');
  m.name = 'renamed';
  const changed = protoc(['--decode=registry.v1.GetDeviceResponse'], device.encode(m)).toString();
  t.match(changed, 'name: "renamed"');
  t.match(changed, 'posture_note: "kept by older readers"', 'unknown fields outlive a change to a known one');
  t.notOk(Object.keys(m).includes('$unknowns'), 'they are not an enumerable property (JSON.stringify, spreads and comparisons do not see them)');
  const dropped = device.decode(newerBytes, { discardUnknown: true });
  t.ok(device.encode(dropped).length < newerBytes.length, 'discardUnknown: fewer bytes');
});

t.test("the server's stored record keeps unknown fields through a route change", async (t) => {
  const dbFile = file('server.db');
  const store = new RegistryStore(dbFile);
  store.importDevices([device.decode(newerBytes)]);
  const { key } = store.createApiKey();
  store.close();
  const registry = await startRegistryServer({ dbFile, host: '127.0.0.1', port: 0 });
  t.teardown(() => registry.close());
  const auth = { authorization: `Bearer ${key}` };
  const post = await fetch(`${registry.url}/api/v1/device/77/routes`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"routes": ["10.9.0.0/16", "10.10.0.0/16"]}' });
  t.equal(post.status, 200);
  for (const p of ['/api/v1/device/77', '/api/v2/device/77?fields=all']) {
    const bin = Buffer.from(await (await fetch(registry.url + p, { headers: { ...auth, accept: 'application/x-protobuf' } })).arrayBuffer());
    const text = protoc(['--decode=registry.v1.GetDeviceResponse'], bin).toString();
    t.match(text, 'enabled_routes: "10.10.0.0/16"', `${p}: the change is there`);
    t.match(text, 'posture_note: "kept by older readers"', `${p}: and the unknown top-level field`);
    t.match(text, 'relays: "relay-b"', `${p}: and the nested ones`);
  }
  const json = await (await fetch(`${registry.url}/api/v1/device/77`, { headers: auth })).json();
  t.notOk('postureNote' in json, 'JSON answers leave them out');
});
