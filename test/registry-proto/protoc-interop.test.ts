/**
 * Interop with the reference implementation, protoc (Debian's
 * protobuf-compiler), both ways: our bytes decoded by `protoc --decode`, and
 * protoc's bytes (`protoc --encode`) decoded by our codec, comparing decoded
 * values (map order differs between encoders, so bytes are not compared).
 * protoc reads the schema from the FileDescriptorSet that buf built, so the
 * peer never sees our reflection of it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { codecFor, type MessageCodec } from '../../registry-proto/codec';
import { fileDescriptorSetBytes } from '../../registry-proto/messages';
import { canonical, messageArbitrary, sampleDevice } from '../helpers/registry';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-protoc-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
const descriptorSet = path.join(dir, 'registry.binpb');
fs.writeFileSync(descriptorSet, fileDescriptorSetBytes());

function protoc(args: string[], input: Uint8Array | string): { status: number | null; stdout: Buffer; stderr: string } {
  // --decode_raw reads no schema (protoc refuses one with it).
  const schema = args[0] === '--decode_raw' ? [] : [`--descriptor_set_in=${descriptorSet}`];
  const r = spawnSync('protoc', [...schema, ...args], { input, timeout: 30_000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
}

function ourBytesThroughProtoc(t: Test, codec: MessageCodec, message: Record<string, unknown>): void {
  const r = protoc([`--decode=${codec.name}`], codec.encode(message));
  t.equal(r.status, 0, `protoc --decode: ${r.stderr}`);
  // protoc prints the text format; read it back and compare values.
  t.same(canonical(codec.type, codec.fromText(r.stdout.toString())), canonical(codec.type, message), `${codec.name}: protoc decodes our bytes to the same values`);
}

function protocBytesThroughUs(t: Test, codec: MessageCodec, message: Record<string, unknown>): void {
  const r = protoc([`--encode=${codec.name}`], codec.toText(codec.decode(codec.encode(message))));
  t.equal(r.status, 0, `protoc --encode: ${r.stderr}`);
  t.same(canonical(codec.type, codec.decode(r.stdout)), canonical(codec.type, message), `${codec.name}: we decode protoc's bytes to the same values`);
}

t.test('a full device record: protoc decodes our bytes, we decode protoc\'s', async (t) => {
  const codec = codecFor('registry.v1.GetDeviceResponse');
  ourBytesThroughProtoc(t, codec, sampleDevice() as Record<string, unknown>);
  protocBytesThroughUs(t, codec, sampleDevice() as Record<string, unknown>);
});

t.test('protoc --decode_raw sees field 20 (client_connectivity) with the latency map as field 4 entries', async (t) => {
  const codec = codecFor('registry.v1.GetDeviceResponse');
  const r = protoc(['--decode_raw'], codec.encode(sampleDevice() as Record<string, unknown>));
  t.equal(r.status, 0, r.stderr);
  const raw = r.stdout.toString();
  t.match(raw, /^20 \{\n/m, 'field 20 is a nested message');
  t.equal((raw.match(/^  4 \{/gm) ?? []).length, 3, 'three latency entries');
  t.match(raw, /^2: "27"$/m, 'id is field 2');
});

for (const name of ['registry.v1.GetDeviceResponse', 'registry.v1.EnableDeviceRoutesRequest', 'registry.v1.GetDeviceRoutesResponse', 'registry.v1.Latency']) {
  t.test(`${name}: random messages interoperate with protoc both ways`, async (t) => {
    const codec = codecFor(name);
    // Each sample spawns protoc twice: a few dozen keep the test quick under load.
    const samples = fc.sample(messageArbitrary(codec.type), { numRuns: name.endsWith('GetDeviceResponse') ? 20 : 8, seed: 6 });
    for (const message of samples) {
      ourBytesThroughProtoc(t, codec, message);
      protocBytesThroughUs(t, codec, message);
    }
  });
}
