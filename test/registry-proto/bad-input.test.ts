/**
 * Malformed input never crashes the codec and never yields a half-decoded
 * message: truncated and random bytes, wrong wire types, bad tags and
 * lengths, invalid UTF-8, JSON with unknown fields, bad timestamps and wrong
 * types, broken text format. Each failure is a CodecError with a stable code
 * that names the field, the byte offset or the position.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { codecFor } from '../../registry-proto/codec';
import { CodecError } from '../../registry-proto/errors';
import { fileDescriptorSetBytes, type GetDeviceResponse } from '../../registry-proto/messages';
import { canonical, sampleDevice } from '../helpers/registry';

const device = codecFor<GetDeviceResponse>('registry.v1.GetDeviceResponse');
const latency = codecFor('registry.v1.Latency');

/** The CodecError `fn` throws (fails the test when it throws anything else or nothing). */
function codecError(t: Test, fn: () => unknown, what: string): CodecError | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof CodecError) return err;
    t.fail(`${what}: threw ${String(err)} instead of a CodecError`);
    return undefined;
  }
  t.fail(`${what}: accepted`);
  return undefined;
}

const hex = (s: string) => Buffer.from(s.replace(/\s/g, ''), 'hex');

t.test('a truncated device record is refused unless the cut falls between top-level fields', async (t) => {
  const full = sampleDevice();
  const bytes = device.encode(full);
  // Fields are written in number order (a repeated field element by element), so
  // each prefix of fields encodes to a prefix of the bytes.
  const boundaries = new Set<number>([0]);
  const partial: Record<string, unknown> = {};
  for (const field of device.type.fieldsArray.slice().sort((a, b) => a.id - b.id)) {
    const value = (full as Record<string, unknown>)[field.name];
    if (Array.isArray(value)) {
      for (let n = 1; n <= value.length; n++) {
        partial[field.name] = value.slice(0, n);
        boundaries.add(device.encode(partial as GetDeviceResponse).length);
      }
    } else {
      partial[field.name] = value;
      boundaries.add(device.encode(partial as GetDeviceResponse).length);
    }
  }
  let refused = 0;
  for (let cut = 0; cut < bytes.length; cut++) {
    const prefix = bytes.subarray(0, cut);
    if (boundaries.has(cut)) {
      t.doesNotThrow(() => device.decode(prefix), `cut at ${cut} (a field boundary) decodes`);
      continue;
    }
    const err = codecError(t, () => device.decode(prefix), `cut at ${cut}`);
    if (!err) continue;
    refused++;
    t.equal(err.code, 'REG_ERR_WIRE');
    t.ok(err.offset !== undefined && err.offset <= cut, `cut at ${cut}: the offset (${err.offset}) is inside the input`);
    t.match(err.message, /at byte offset \d+/);
  }
  t.ok(refused > bytes.length / 2, `most cuts are refused (${refused} of ${bytes.length})`);
});

t.test('a known field with the wrong wire type is refused, naming the field path', async (t) => {
  const top = codecError(t, () => device.decode(hex('10 05')), 'id as a varint');
  t.equal(top?.code, 'REG_ERR_WIRE');
  t.equal(top?.field, 'id');
  t.equal(top?.offset, 0);
  t.match(top?.message, /wire type 0 \(varint\) where field 2 \(id\) is 2 \(length-delimited\)/);
  // field 20 (client_connectivity) holding field 3 (mapping_varies_by_dest_ip, a bool) as a string
  const nested = codecError(t, () => device.decode(hex('12 01 78  a2 01 04 1a 02 68 69')), 'nested bool as a string');
  t.equal(nested?.field, 'client_connectivity.mapping_varies_by_dest_ip');
  t.equal(nested?.offset, 6, 'the offset of the bad tag in the whole input');
  const float = codecError(t, () => latency.decode(hex('08 01')), 'float as a varint');
  t.equal(float?.field, 'latency_ms');
});

t.test('bad tags, lengths, strings and nesting are refused with what and where', async (t) => {
  const cases: [string, string, RegExp][] = [
    ['field number 0', '02 00', /field number 0/],
    ['wire type 7', '17 00', /invalid wire type 7/],
    ['wire type 6', '16', /invalid wire type 6/],
    ['truncated tag varint', 'a2', /truncated varint at byte offset 0/],
    ['varint of 11 bytes', '38 ff ff ff ff ff ff ff ff ff ff 01', /varint longer than 10 bytes/],
    ['length past the end', '12 09 61 62', /length 9 runs past the end of the input \(2 bytes left\) at byte offset 1/],
    ['length >= 2^32', '12 ff ff ff ff 7f', /length >= 2\^32/],
    ['truncated fixed32', '0d 00 00', /truncated fixed32/],
    ['invalid UTF-8 in a string', '12 02 c3 28', /id: string is not valid UTF-8 at byte offset 2/],
    ['invalid UTF-8 in a map key', 'a2 01 07 22 05 0a 03 ff fe fd', /key: string is not valid UTF-8/],
    ['unclosed group', '9b 06 08 01', /start-group of field 99 is never closed/],
    ['stray end group', '9c 06', /end-group tag for field 99 without a matching start-group/],
  ];
  for (const [what, bytes, message] of cases) {
    const codec = what.startsWith('truncated fixed32') ? latency : device;
    const err = codecError(t, () => codec.decode(hex(bytes)), what);
    t.equal(err?.code, 'REG_ERR_WIRE', `${what}: REG_ERR_WIRE`);
    t.match(err?.message, message, `${what}: ${err?.message}`);
  }
  const deep = Buffer.concat([Buffer.from('a306'.repeat(101), 'hex'), Buffer.from('a406'.repeat(101), 'hex')]);
  t.match(codecError(t, () => device.decode(deep), '101 nested groups')?.message, /nesting deeper than 100/);
});

t.test('unknown fields are skipped, as the spec asks', async (t) => {
  // field 99 varint, field 98 fixed64, field 97 group holding a varint, then id = "ok"
  const m = device.decode(hex('98 06 2a  91 06 0102030405060708  8b 06 08 01 8c 06  12 02 6f 6b'));
  t.equal(m.id, 'ok');
});

t.test('random bytes: a CodecError or a whole message, never a crash; protoc agrees whenever we accept', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-random-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const set = path.join(dir, 'set.binpb');
  fs.writeFileSync(set, fileDescriptorSetBytes());
  let accepted = 0;
  let checkedWithProtoc = 0;
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      let message: GetDeviceResponse;
      try {
        message = device.decode(bytes);
      } catch (err) {
        if (!(err instanceof CodecError) || err.code !== 'REG_ERR_WIRE') throw err;
        if (err.offset === undefined || err.offset < 0 || err.offset > bytes.length) throw new Error(`offset ${err.offset} outside the input`);
        return;
      }
      accepted++;
      // a whole message: it re-encodes to bytes that decode to the same value
      const again = device.decode(device.encode(message));
      if (JSON.stringify(canonical(device.type, again)) !== JSON.stringify(canonical(device.type, message))) throw new Error('re-encoding changed the message');
      if (checkedWithProtoc < 40) {
        checkedWithProtoc++;
        const r = spawnSync('protoc', [`--descriptor_set_in=${set}`, '--decode=registry.v1.GetDeviceResponse'], { input: bytes, timeout: 30_000 });
        if (r.status !== 0) throw new Error(`we accepted bytes protoc refuses: ${Buffer.from(bytes).toString('hex')}: ${r.stderr}`);
      }
    }),
    { numRuns: 3000, seed: 61 },
  );
  t.ok(accepted > 0, `some random inputs are valid messages (${accepted}); ${checkedWithProtoc} of them checked with protoc`);
});

t.test('a length-delimited stream with a broken frame names the message and offset', async (t) => {
  const stream = device.encodeDelimited([sampleDevice('1'), sampleDevice('2')]);
  const err = codecError(t, () => device.decodeDelimited(stream.subarray(0, stream.length - 5)), 'truncated stream');
  t.equal(err?.code, 'REG_ERR_WIRE');
  t.match(err?.message, /message #2: length \d+ at byte offset \d+ runs past the end/);
  const bad = Buffer.concat([device.encodeDelimited([sampleDevice('1')]), hex('02 10 05')]);
  t.match(codecError(t, () => device.decodeDelimited(bad), 'bad second message')?.message, /message #2 \(starting at byte \d+\): id: wire type 0/);
});

t.test('JSON: unknown fields are refused unless asked to ignore them', async (t) => {
  const err = codecError(t, () => device.fromJson({ id: '1', nmae: 'typo' }), 'unknown field');
  t.equal(err?.code, 'REG_ERR_JSON');
  t.match(err?.message, /unknown field: "nmae"/);
  const nested = codecError(t, () => device.fromJson({ clientConnectivity: { latency: { fra: { latencyMs: 1, jitter: 2 } } } }), 'nested unknown');
  t.match(nested?.message, /registry\.v1\.Latency: unknown field: "jitter"/);
  t.equal(device.fromJson({ id: '1', nmae: 'typo' }, { ignoreUnknownFields: true }).id, '1');
});

t.test('JSON: proto field names are accepted on input, null means the default', async (t) => {
  const m = device.fromJson({ last_seen: '2024-05-01T10:00:00Z', client_connectivity: { mapping_varies_by_dest_ip: true }, machine_key: null });
  t.equal(device.toJson(m) && (device.toJson(m) as Record<string, unknown>).lastSeen, '2024-05-01T10:00:00Z');
  t.equal(m.clientConnectivity?.mappingVariesByDestIp, true);
  t.equal(m.machineKey, '');
  const both = codecError(t, () => device.fromJson({ lastSeen: '2024-05-01T10:00:00Z', last_seen: '2024-05-01T10:00:00Z' }), 'both names');
  t.match(both?.message, /duplicate field/);
});

t.test('JSON: bad timestamps are refused, naming the Timestamp', async (t) => {
  const bad = ['yesterday', '2024-13-01T00:00:00Z', '2024-02-30T00:00:00Z', '2024-05-01T10:00:00', '2024-05-01 10:00:00Z', '0000-12-31T23:59:59Z', '10000-01-01T00:00:00Z', '2024-05-01T10:00:00.1234567891Z', 1714557600, true];
  for (const value of bad) {
    const err = codecError(t, () => device.fromJson({ created: value }), `created: ${JSON.stringify(value)}`);
    t.equal(err?.code, 'REG_ERR_JSON', `created: ${JSON.stringify(value)}: ${err?.message}`);
    t.match(err?.message, /Timestamp/);
  }
  // offsets are RFC 3339 and normalised to UTC
  t.equal((device.toJson(device.fromJson({ created: '2024-05-01T12:00:00+02:00' })) as Record<string, unknown>).created, '2024-05-01T10:00:00Z');
});

t.test('JSON: wrong types are refused, naming the field', async (t) => {
  const cases: [unknown, RegExp][] = [
    [{ authorized: 'yes' }, /GetDeviceResponse\.authorized: expected boolean/],
    [{ id: 5 }, /GetDeviceResponse\.id: expected string/],
    [{ addresses: 'a' }, /GetDeviceResponse\.addresses: expected array/],
    [{ addresses: [1] }, /GetDeviceResponse\.addresses: expected string/],
    [{ clientConnectivity: [] }, /ClientConnectivity: expected object/],
    [{ clientConnectivity: { latency: { fra: 5 } } }, /Latency: expected object/],
    [{ clientConnectivity: { latency: { fra: { latencyMs: 'fast' } } } }, /Latency\.latencyMs: invalid number/],
    [{ clientConnectivity: { latency: { fra: { latencyMs: 1e300 } } } }, /out of range for float/],
    [[], /GetDeviceResponse: expected object/],
    ['device', /GetDeviceResponse: expected object/],
  ];
  for (const [json, message] of cases) {
    const err = codecError(t, () => device.fromJson(json), JSON.stringify(json));
    t.equal(err?.code, 'REG_ERR_JSON');
    t.match(err?.message, message, JSON.stringify(json));
  }
});

t.test('a map key "__proto__" is refused in binary, JSON and text, naming the field (JavaScript objects would lose it)', async (t) => {
  const connectivity = codecFor('registry.v1.ClientConnectivity');
  // an entry with a nine-letter key, which then becomes "__proto__" in the bytes
  const bytes = Buffer.from(connectivity.encode({ latency: { abcdefghi: { latencyMs: 1 } } }));
  const at = bytes.indexOf('abcdefghi');
  bytes.write('__proto__', at);
  const binary = codecError(t, () => connectivity.decode(bytes), 'binary');
  t.equal(binary?.code, 'REG_ERR_WIRE');
  t.equal(binary?.field, 'latency[].key');
  t.equal(binary?.offset, at, 'offset of the key');
  t.match(binary?.message, /__proto__/);
  const json = codecError(t, () => connectivity.fromJsonString('{"latency":{"__proto__":{"latencyMs":1},"fra":{"latencyMs":2}}}'), 'JSON');
  t.equal(json?.code, 'REG_ERR_JSON');
  t.match(json?.message, /latency\[\]\.key.*__proto__/);
  const text = codecError(t, () => connectivity.fromText('latency { key: "__proto__" value { latency_ms: 1 } }'), 'text');
  t.equal(text?.code, 'REG_ERR_TEXT');
  t.match(text?.message, /__proto__/);
  // the same key as an ordinary string value is data like any other
  t.equal(device.fromJson({ hostname: '__proto__' }).hostname, '__proto__');
  t.same(Object.keys((connectivity.fromJson({ latency: { constructor: { latencyMs: 2 } } }) as { latency: object }).latency), ['constructor']);
});

t.test('JSON text that is not JSON gives its position', async (t) => {
  const err = codecError(t, () => device.fromJsonString('{"id": "1",'), 'truncated JSON');
  t.equal(err?.code, 'REG_ERR_JSON_SYNTAX');
  t.equal(err?.offset, 11);
});

t.test('a timestamp outside 0001..9999 cannot be written as JSON (it can as binary)', async (t) => {
  const m = { created: { seconds: 253_402_300_800, nanos: 0 } };
  t.equal(String(device.decode(device.encode(m)).created?.seconds), '253402300800');
  const err = codecError(t, () => device.toJson(m), 'year 10000');
  t.equal(err?.code, 'REG_ERR_ENCODE');
  t.match(err?.message, /Timestamp out of range/);
});

t.test('text format: unknown fields and wrong values are refused with the line', async (t) => {
  const unknown = codecError(t, () => device.fromText('id: "1"\nnmae: "x"\n'), 'unknown text field');
  t.equal(unknown?.code, 'REG_ERR_TEXT');
  t.match(unknown?.message, /nmae.*line 2/);
  const wrong = codecError(t, () => device.fromText('authorized: "yes"'), 'string for a bool');
  t.equal(wrong?.code, 'REG_ERR_TEXT');
  t.match(codecError(t, () => device.fromText('client_connectivity {'), 'unclosed')?.code, 'REG_ERR_TEXT');
});

t.test('binary keeps -0 in a float (JSON and text print it as 0: a documented limit)', async (t) => {
  t.ok(Object.is(latency.decode(latency.encode({ latencyMs: -0 })).latencyMs, -0));
});
