/**
 * The `registry-proto` CLI's message tools as a user runs them (child
 * processes, files, pipes): conversions checked against protoc, streams,
 * describe, the descriptor set read by protoc, bad input and exit codes.
 * (test/registry-proto/cli-registry.test.ts covers serve, call, keys, devices.)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import t from 'tap';
import { codecFor } from '../../registry-proto/codec';
import type { GetDeviceResponse } from '../../registry-proto/messages';
import { canonical, sampleDevice } from '../helpers/registry';
import { registryCli } from '../helpers/registry-cli';

const device = codecFor<GetDeviceResponse>('registry.v1.GetDeviceResponse');
const { file, run } = registryCli(t);
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
