/**
 * The compiled ProtoJSON writer (registry-proto/json-writer.ts) writes exactly
 * what the reflective path (protobufjs/ext/protojson + our options) writes, for
 * every message type, random messages (static instances and plain objects) and
 * every combination of options; timestamps outside 0001..9999 fail alike.
 */
import fc from 'fast-check';
import t from 'tap';
import { codecFor, messageTypeNames } from '../../registry-proto/codec';
import { CodecError } from '../../registry-proto/errors';
import { compiledWriter, timestampJson } from '../../registry-proto/json-writer';
import { messageArbitrary, sampleDevice } from '../helpers/registry';

const OPTIONS = [{}, { emitDefaults: true }, { protoNames: true }, { emitDefaults: true, protoNames: true }];

t.test('every registry type has a compiled writer; a top-level Timestamp keeps the reflective path', async (t) => {
  for (const name of messageTypeNames()) {
    const codec = codecFor(name);
    if (name === 'google.protobuf.Timestamp') t.equal(compiledWriter(codec.type), undefined, name);
    else t.type(compiledWriter(codec.type), 'function', name);
  }
});

t.test('the full device record: the same JSON both ways', async (t) => {
  const codec = codecFor('registry.v1.GetDeviceResponse');
  const m = codec.decode(codec.encode(sampleDevice() as Record<string, unknown>));
  for (const o of OPTIONS) t.same(codec.toJson(m, o), codec.toJsonReflective(m, o), JSON.stringify(o));
  t.equal(JSON.stringify(codec.toJson(m)), JSON.stringify(codec.toJsonReflective(m)), 'same key order too');
});

for (const name of messageTypeNames().filter((n) => n !== 'google.protobuf.Timestamp')) {
  t.test(`${name}: random messages give the same JSON both ways`, async (t) => {
    const codec = codecFor(name);
    let n = 0;
    fc.assert(
      fc.property(messageArbitrary(codec.type), (plain) => {
        for (const message of [plain, codec.decode(codec.encode(plain))]) {
          for (const o of OPTIONS) {
            const fast = JSON.stringify(codec.toJson(message, o));
            const reflective = JSON.stringify(codec.toJsonReflective(message, o));
            if (fast !== reflective) throw new Error(`${JSON.stringify(o)}: ${fast} != ${reflective}`);
          }
        }
        n++;
      }),
      { numRuns: 100 },
    );
    t.equal(n, 100);
  });
}

t.test('timestamps: fractional digits 0, 3, 6 or 9, and the range 0001..9999', async (t) => {
  t.equal(timestampJson({ seconds: 0, nanos: 0 }), '1970-01-01T00:00:00Z');
  t.equal(timestampJson({ seconds: 1, nanos: 500_000_000 }), '1970-01-01T00:00:01.500Z');
  t.equal(timestampJson({ seconds: 1, nanos: 1_000 }), '1970-01-01T00:00:01.000001Z');
  t.equal(timestampJson({ seconds: 1, nanos: 1 }), '1970-01-01T00:00:01.000000001Z');
  t.equal(timestampJson({ seconds: -62_135_596_800, nanos: 0 }), '0001-01-01T00:00:00Z');
  t.equal(timestampJson({ seconds: 253_402_300_799, nanos: 999_999_999 }), '9999-12-31T23:59:59.999999999Z');
  const codec = codecFor('registry.v1.GetDeviceResponse');
  for (const created of [{ seconds: 253_402_300_800, nanos: 0 }, { seconds: -62_135_596_801, nanos: 0 }, { seconds: 0, nanos: 1_000_000_000 }, { seconds: 0, nanos: -1 }]) {
    t.throws(() => codec.toJson({ created }), CodecError, `compiled: ${JSON.stringify(created)}`);
    t.throws(() => codec.toJsonReflective({ created }), CodecError, `reflective: ${JSON.stringify(created)}`);
  }
});
