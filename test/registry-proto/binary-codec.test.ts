/**
 * The generated binary encoder (registry-proto/binary-encoder.ts) writes the
 * bytes the pbjs static encoder writes, for random messages of every type
 * (plain objects and decoded instances, unknown fields included).
 *
 * The one-pass binary decoder (registry-proto/binary-decoder.ts) against the
 * two passes it replaced (wire-check.ts, then the pbjs static decode): on
 * valid messages, on every single-byte change and truncation of a full
 * record, and on random bytes, both accept and decode to the same values, or
 * both refuse (and the error is still the wire check's, with path and offset).
 */
import fc from 'fast-check';
import protobuf from 'protobufjs';
import t from 'tap';
import { compiledDecoder, INVALID, UNSUPPORTED } from '../../registry-proto/binary-decoder';
import { compiledEncoder } from '../../registry-proto/binary-encoder';
import { codecFor, messageTypeNames } from '../../registry-proto/codec';
import { CodecError } from '../../registry-proto/errors';
import { staticClassOf } from '../../registry-proto/messages';
import { checkWire, wireRules } from '../../registry-proto/wire-check';
import { canonical, messageArbitrary, sampleDevice } from '../helpers/registry';

type Outcome = { ok: true; value: unknown; unknowns: string } | { ok: false };

function onePass(type: protobuf.Type, bytes: Uint8Array): Outcome {
  const decode = compiledDecoder(type)!;
  try {
    const m = decode(bytes, 0, bytes.length, true);
    return { ok: true, value: canonical(type, m), unknowns: unknownsOf(type, m) };
  } catch (err) {
    if (err === INVALID) return { ok: false };
    if (err === UNSUPPORTED) return twoPasses(type, bytes);
    throw err;
  }
}

function twoPasses(type: protobuf.Type, bytes: Uint8Array): Outcome {
  try {
    checkWire(wireRules(type), bytes);
  } catch (err) {
    if (err instanceof CodecError) return { ok: false };
    throw err;
  }
  const reader = protobuf.Reader.create(bytes);
  reader.discardUnknown = false;
  const m = staticClassOf(type)!.decode(reader) as Record<string, unknown>;
  return { ok: true, value: canonical(type, m), unknowns: unknownsOf(type, m) };
}

/** The unknown fields kept at every level, as hex, in order. */
function unknownsOf(type: protobuf.Type, m: Record<string, unknown>): string {
  const parts: string[] = ((m.$unknowns as Uint8Array[] | undefined) ?? []).map((u) => Buffer.from(u).toString('hex'));
  for (const f of type.fieldsArray) {
    if (!(f.resolvedType instanceof protobuf.Type)) continue;
    const v = m[f.name];
    if (!v) continue;
    const subs = f instanceof protobuf.MapField ? Object.values(v as object) : f.repeated ? (v as unknown[]) : [v];
    for (const s of subs) parts.push(`${f.name}{${unknownsOf(f.resolvedType, s as Record<string, unknown>)}}`);
  }
  return parts.join(',');
}

const types = messageTypeNames().map((n) => codecFor(n).type);

t.test('every message type has a one-pass decoder', async (t) => {
  for (const type of types) t.type(compiledDecoder(type), 'function', type.fullName);
});

t.test('every single-byte change and truncation of a full record: the same verdict and values', async (t) => {
  const type = codecFor('registry.v1.GetDeviceResponse').type;
  const bytes = Buffer.from(codecFor('registry.v1.GetDeviceResponse').encode(sampleDevice() as Record<string, unknown>));
  let compared = 0;
  for (let i = 0; i < bytes.length; i++) {
    for (const b of [0x00, 0x01, 0x07, 0x0a, 0x7f, 0x80, 0xff, bytes[i] ^ 0x04]) {
      const changed = Buffer.from(bytes);
      changed[i] = b;
      const [a, c] = [onePass(type, changed), twoPasses(type, changed)];
      if (JSON.stringify(a) !== JSON.stringify(c)) t.fail(`byte ${i} = ${b}: ${JSON.stringify(a).slice(0, 200)} vs ${JSON.stringify(c).slice(0, 200)}`);
      compared++;
    }
    const cut = bytes.subarray(0, i);
    t.same(onePass(type, cut), twoPasses(type, cut), `truncated to ${i} bytes`);
  }
  t.ok(compared > 3000, `${compared} changed records compared`);
});

for (const type of types) {
  t.test(`${type.fullName}: random messages and random bytes, the same verdict and values`, async (t) => {
    const codec = codecFor(type.fullName);
    fc.assert(
      fc.property(messageArbitrary(type), (m) => {
        const bytes = codec.encode(m);
        t.same(onePass(type, bytes), twoPasses(type, bytes));
      }),
      { numRuns: 50, seed: 141 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 48 }), (bytes) => {
        const [a, c] = [onePass(type, bytes), twoPasses(type, bytes)];
        if (JSON.stringify(a) !== JSON.stringify(c)) throw new Error(`${Buffer.from(bytes).toString('hex')}: ${JSON.stringify(a)} vs ${JSON.stringify(c)}`);
      }),
      { numRuns: 400, seed: 142 },
    );
    t.pass('agreed');
  });
}

t.test('an int64 beyond 2^53 is left to the pbjs decode (a Long), exactly', async (t) => {
  const ts = codecFor('google.protobuf.Timestamp');
  const bytes = Buffer.from('08ffffffffffffffff7f', 'hex'); // seconds = 2^63 - 1
  t.equal(String(ts.decode(bytes).seconds), '9223372036854775807');
  t.equal(String(ts.decode(Buffer.from('08' + 'ff'.repeat(9) + '01', 'hex')).seconds), '-1', 'a negative varint');
});

for (const type of types) {
  t.test(`${type.fullName}: the generated encoder writes the pbjs encoder's bytes`, async (t) => {
    const encode = compiledEncoder(type)!;
    t.type(encode, 'function');
    const cls = staticClassOf(type)!;
    fc.assert(
      fc.property(messageArbitrary(type), (plain) => {
        const withOdd = plain;
        const a = Buffer.from(encode(withOdd));
        const b = Buffer.from(cls.encode(withOdd).finish());
        if (!a.equals(b)) throw new Error(`plain: ${a.toString('hex')} != ${b.toString('hex')}`);
        // decoded with an unknown field appended at the top
        const bytes = Buffer.concat([b, Buffer.from('f8ff0305', 'hex')]);
        const reader = protobuf.Reader.create(bytes);
        reader.discardUnknown = false;
        const decoded = cls.decode(reader) as Record<string, unknown>;
        const c = Buffer.from(encode(decoded));
        if (!c.equals(Buffer.from(cls.encode(decoded).finish()))) throw new Error(`decoded: ${c.toString('hex')}`);
        if (!c.subarray(c.length - 4).equals(Buffer.from('f8ff0305', 'hex'))) throw new Error('the unknown field is not last');
      }),
      { numRuns: 150, seed: 143 },
    );
    t.pass('equal');
  });
}

t.test('a lone surrogate is written as U+FFFD (valid UTF-8 that decodes), where pbjs writes invalid bytes', async (t) => {
  const codec = codecFor('registry.v1.GetDeviceRequest');
  const bytes = Buffer.from(codec.encode({ id: 'a\ud800b' }));
  t.equal(bytes.toString('hex'), '0a0561efbfbd62');
  t.equal(codec.decode(bytes).id, 'a\ufffdb');
  t.equal(Buffer.from(codec.encode({ id: 'é😀' })).toString('hex'), '0a06' + Buffer.from('é😀').toString('hex'), 'pairs and 2-byte characters as UTF-8');
  const long = `${'x'.repeat(30)}\ud800${'é'.repeat(60)}\udc00`;
  t.equal(codec.decode(codec.encode({ id: long })).id, `${'x'.repeat(30)}\ufffd${'é'.repeat(60)}\ufffd`, 'long strings (the native writer) too, with a length over 127');
  for (const n of [24, 25, 42, 43, 127, 128, 200]) t.equal(codec.decode(codec.encode({ id: 'é'.repeat(n) })).id, 'é'.repeat(n), `${n} two-byte characters`);
});

t.test('a map entry whose value comes twice is merged, as pbjs and protoc merge a message field', async (t) => {
  const type = codecFor('registry.v1.ClientConnectivity').type;
  const entry = Buffer.from([0x0a, 1, 0x61, 0x12, 5, 0x0d, 0, 0, 0x80, 0x3f, 0x12, 2, 0x10, 1]);
  const bytes = Buffer.concat([Buffer.from([0x22, entry.length]), entry]);
  const ours = onePass(type, bytes);
  t.same(ours, twoPasses(type, bytes));
  t.same(ours.ok && ours.value, { latency: { a: { latencyMs: 1, preferred: true } } });
});
