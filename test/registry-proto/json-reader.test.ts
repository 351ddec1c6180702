/**
 * The compiled ProtoJSON reader (json-reader.ts) against the reflective path
 * it replaced (protobufjs/ext/protojson), and the interop corners where they
 * differ on purpose: FLT_MAX as other encoders print it, -0 in JSON and
 * text, a key given twice in one object.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { codecFor, messageTypeNames } from '../../registry-proto/codec';
import { CodecError } from '../../registry-proto/errors';
import { countJsonKeys, findDuplicateKey, readTimestamp } from '../../registry-proto/json-reader';
import { fileDescriptorSetBytes, type GetDeviceResponse } from '../../registry-proto/messages';
import { canonical, messageArbitrary, sampleDevice } from '../helpers/registry';

const device = codecFor<GetDeviceResponse>('registry.v1.GetDeviceResponse');
const latency = codecFor('registry.v1.Latency');

function codecError(fn: () => unknown): CodecError | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof CodecError) return err;
    throw err;
  }
  return undefined;
}

for (const name of messageTypeNames().filter((n) => n.startsWith('registry.'))) {
  t.test(`${name}: the compiled reader reads what the reflective path reads`, async (t) => {
    const codec = codecFor(name);
    fc.assert(
      fc.property(messageArbitrary(codec.type), fc.boolean(), fc.boolean(), (message, emitDefaults, protoNames) => {
        // Through binary first: the message as any decoder would hold it.
        const m = codec.decode(codec.encode(message));
        const json = JSON.parse(codec.toJsonString(m, { emitDefaults, protoNames }));
        const fast = canonical(codec.type, codec.fromJson(json));
        t.same(fast, canonical(codec.type, codec.fromJsonReflective(json)));
        t.same(fast, canonical(codec.type, m));
      }),
      { numRuns: 60, seed: 14 },
    );
  });
}

t.test('both read the same errors the same way (field and kind)', async (t) => {
  const cases: unknown[] = [{ authorized: 'yes' }, { id: 5 }, { addresses: 'a' }, { addresses: [1] }, { addresses: [null] }, { nmae: 1 }, { clientConnectivity: [] }, { clientConnectivity: { latency: { fra: 5 } } }, { clientConnectivity: { latency: { fra: { latencyMs: 'fast' } } } }, { created: '2024-02-30T00:00:00Z' }, { created: 5 }, [], 'x', null];
  for (const json of cases) {
    const fast = codecError(() => device.fromJson(json));
    const slow = codecError(() => device.fromJsonReflective(json));
    t.ok(fast && slow, `both refuse ${JSON.stringify(json)}`);
    t.equal(fast?.code, slow?.code);
    t.equal(fast?.message.replace(/^invalid JSON: /, '').split(':')[0], slow?.message.replace(/^invalid JSON: /, '').split(':')[0], `same place: ${fast?.message}`);
  }
});

t.test('FLT_MAX as Go, buf and protoc print it (3.4028235e+38) is accepted; beyond it is out of range', async (t) => {
  const m = latency.fromJsonString('{"latencyMs": 3.4028235e+38}');
  t.equal(m.latencyMs, Math.fround(3.4028235e38), 'reads as FLT_MAX');
  t.equal(latency.fromJsonString('{"latencyMs": "-3.4028235e+38"}').latencyMs, -Math.fround(3.4028235e38), 'as a string and negative too');
  t.equal(latency.toJsonString(m), '{"latencyMs":3.4028235e+38}', 'and is printed the same way');
  t.match(latency.toText(m), /latency_ms: 3.4028235e\+38/);
  t.equal(latency.fromText('latency_ms: 3.4028235e+38').latencyMs, m.latencyMs, 'text reads it');
  t.match(codecError(() => latency.fromJsonString('{"latencyMs": 3.5e38}'))?.message, /out of range for float/);
  t.match(codecError(() => latency.fromJsonString('{"latencyMs": 1e39}'))?.message, /out of range for float/);
  // protoc 3.21 prints FLT_MAX with 9 digits (3.40282347e+38; newer ones print 3.4028235e+38): both read as FLT_MAX
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-fltmax-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'set.binpb'), fileDescriptorSetBytes());
  const set = `--descriptor_set_in=${path.join(dir, 'set.binpb')}`;
  const printed = spawnSync('protoc', [set, '--decode=registry.v1.Latency'], { input: latency.encode(m) }).stdout.toString();
  t.match(printed, /^latency_ms: 3\.402823\d*e\+38$/m, `protoc prints FLT_MAX: ${printed.trim()}`);
  t.equal(latency.fromText(printed).latencyMs, m.latencyMs, 'we read what protoc prints');
  const encoded = spawnSync('protoc', [set, '--encode=registry.v1.Latency'], { input: 'latency_ms: 3.4028235e+38' }).stdout;
  t.same(Buffer.from(latency.encode(m)), encoded, 'protoc encodes our printed value to the same bytes');
});

t.test('-0 is kept in JSON and text (both ways), as protoc keeps it', async (t) => {
  const m = latency.decode(latency.encode({ latencyMs: -0 }));
  t.ok(Object.is(m.latencyMs, -0), 'binary keeps -0');
  t.equal(latency.toJsonString(m), '{"latencyMs":-0}', 'JSON prints -0');
  t.equal(device.toJsonString({ clientConnectivity: { latency: { x: { latencyMs: -0 } } } }, { indent: 2 }), '{\n  "clientConnectivity": {\n    "latency": {\n      "x": {\n        "latencyMs": -0\n      }\n    }\n  }\n}', 'nested and indented too');
  t.ok(Object.is(latency.fromJsonString('{"latencyMs": -0}').latencyMs, -0), 'JSON reads -0');
  t.ok(Object.is(latency.fromJsonString('{"latencyMs": "-0"}').latencyMs, -0), 'as a string too');
  t.equal(latency.toText(m).trim(), 'latency_ms: -0', 'text prints -0');
  t.ok(Object.is(latency.fromText('latency_ms: -0').latencyMs, -0), 'text reads -0');
  t.equal(latency.encode(latency.fromJsonString('{"latencyMs": -0}')).length, 5, 'and -0 is written in binary (it is not the default)');
  t.equal(latency.toJsonString(latency.decode(latency.encode({ latencyMs: 0 }))), '{}', '+0 is still the default, left out');
});

t.test('a key given twice in one JSON object is refused, naming the key', async (t) => {
  const cases: [string, string, RegExp][] = [
    ['{"id": "1", "id": "2"}', 'id', /key "id" appears twice in the top object/],
    ['{"clientConnectivity": {"derp": "a", "derp": "b"}}', 'clientConnectivity.derp', /key "derp" appears twice in the object at clientConnectivity/],
    ['{"clientConnectivity": {"latency": {"fra": {"latencyMs": 1}, "fra": {"latencyMs": 2}}}}', 'clientConnectivity.latency.fra', /key "fra" appears twice/],
    ['{"a\\"b": 1, "nmae": 2, "a\\"b": 3}', 'a"b', /key "a\\"b" appears twice/],
    ['{"addresses": ["x\\\\"], "addresses": []}', 'addresses', /key "addresses" appears twice/],
  ];
  for (const [text, field, message] of cases) {
    const err = codecError(() => device.fromJsonString(text, { ignoreUnknownFields: true }));
    t.equal(err?.code, 'REG_ERR_JSON', text);
    t.equal(err?.field, field);
    t.match(err?.message, message);
  }
  t.same(device.fromJsonString('{"id": "1", "name": "id"}').name, 'id', 'a value equal to a key is no duplicate');
  t.same(device.fromJsonString('{"clientConnectivity": {"latency": {"id": {"latencyMs": 1}}}, "id": "x"}').id, 'x', 'the same key in different objects is fine');
  t.equal(countJsonKeys('{"a": "\\":", "b": ["c", {"d": 1}]}'), 3);
  t.equal(findDuplicateKey('{"a": {"b": 1}, "c": {"b": 2}}'), undefined);
});

t.test('the compiled reader keeps the reflective path\'s guarantees: __proto__ map keys, lone surrogates, nesting', async (t) => {
  t.match(codecError(() => device.fromJsonString('{"clientConnectivity": {"latency": {"__proto__": {"latencyMs": 1}}}}'))?.message, /latency\[\]\.key.*__proto__/);
  t.match(codecError(() => device.fromJsonString('{"hostname": "\\ud800"}'))?.message, /hostname: unpaired surrogate/);
  t.match(codecError(() => device.fromJsonString('{"hostname": "a\ud800"}'))?.message, /hostname: unpaired surrogate/, 'a raw lone surrogate in the text too');
  t.match(codecError(() => device.fromJsonString('{"clientConnectivity": {"latency": {"\\udc00": {}}}}'))?.message, /unpaired surrogate in map key/, 'and in a map key');
  t.equal(device.fromJsonString('{"hostname": "\\ud83d\\ude00 \\u00e9"}').hostname, '😀 é', 'escaped pairs are fine');
  t.same(canonical(device.type, device.fromJsonString(device.toJsonString(sampleDevice()))), canonical(device.type, sampleDevice()), 'a full record round trip');
});

t.test('timestamps read by position agree with Date.parse, offsets and fractions included', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: -62_135_596_800 + 86_400, max: 253_402_300_799 - 86_400 }), fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }), fc.integer({ min: 0, max: 9 }), (seconds, offsetMin, digits) => {
      const local = new Date((seconds + offsetMin * 60) * 1000).toISOString().slice(0, 19);
      const sign = offsetMin < 0 ? '-' : '+';
      const abs = Math.abs(offsetMin);
      const zone = offsetMin === 0 && digits % 2 === 0 ? 'Z' : `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
      const fraction = digits === 0 ? '' : `.${'123456789'.slice(0, digits)}`;
      const text = `${local}${fraction}${zone}`;
      const got = readTimestamp(text);
      if (got.seconds !== seconds) throw new Error(`${text}: ${got.seconds} != ${seconds}`);
      if (got.nanos !== (digits === 0 ? 0 : Number('123456789'.slice(0, digits).padEnd(9, '0')))) throw new Error(`${text}: nanos ${got.nanos}`);
    }),
    { numRuns: 500, seed: 145 },
  );
  t.pass('agreed');
});
