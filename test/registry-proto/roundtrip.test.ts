/**
 * Every message type of the schema survives binary, ProtoJSON (both naming
 * styles, with and without defaults) and text format round trips, checked on
 * a full device record and as fast-check properties over random messages.
 */
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { codecFor, messageTypeNames, type MessageCodec } from '../../registry-proto/codec';
import { canonical, messageArbitrary, sampleDevice } from '../helpers/registry';

const RUNS = 150;

t.test('the schema offers every message of the seed and the Timestamp it uses', async (t) => {
  t.same(messageTypeNames().sort(), [
    'google.protobuf.Timestamp',
    'registry.v1.ClientConnectivity',
    'registry.v1.ClientSupports',
    'registry.v1.DeleteDeviceRequest',
    'registry.v1.DeleteDeviceResponse',
    'registry.v1.EnableDeviceRoutesRequest',
    'registry.v1.EnableDeviceRoutesResponse',
    'registry.v1.GetDeviceRequest',
    'registry.v1.GetDeviceResponse',
    'registry.v1.GetDeviceRoutesRequest',
    'registry.v1.GetDeviceRoutesResponse',
    'registry.v1.Latency',
  ]);
});

function roundTrips(t: Test, codec: MessageCodec, message: Record<string, unknown>): void {
  const want = canonical(codec.type, message);
  const viaBinary = codec.decode(codec.encode(message));
  t.same(canonical(codec.type, viaBinary), want, 'binary');
  for (const options of [{}, { protoNames: true }, { emitDefaults: true }, { emitDefaults: true, protoNames: true }]) {
    const text = codec.toJsonString(viaBinary, options);
    t.same(canonical(codec.type, codec.fromJsonString(text)), want, `JSON ${JSON.stringify(options)}`);
  }
  t.same(canonical(codec.type, codec.fromText(codec.toText(viaBinary))), want, 'text format');
}

t.test('a full device record round-trips through binary, JSON and text', async (t) => {
  const codec = codecFor('registry.v1.GetDeviceResponse');
  const device = sampleDevice() as Record<string, unknown>;
  roundTrips(t, codec, device);
  // and the JSON is ProtoJSON: lowerCamelCase, RFC 3339 timestamps, floats as written
  const json = codec.toJson(codec.decode(codec.encode(device))) as Record<string, any>;
  t.equal(json.lastSeen, '2024-11-07T17:22:03.456Z');
  t.equal(json.clientConnectivity.mappingVariesByDestIp, undefined, 'false is a default: left out');
  t.same(json.clientConnectivity.latency.Frankfurt, { latencyMs: 12.5, preferred: true });
  t.same(json.clientConnectivity.clientSupports, { ipv6: true, pmp: true, udp: true });
});

for (const name of messageTypeNames()) {
  t.test(`${name}: random messages round-trip (binary, JSON, text)`, async (t) => {
    const codec = codecFor(name);
    let checked = 0;
    fc.assert(
      fc.property(messageArbitrary(codec.type), (message) => {
        const want = canonical(codec.type, message);
        const viaBinary = codec.decode(codec.encode(message));
        if (JSON.stringify(canonical(codec.type, viaBinary)) !== JSON.stringify(want)) throw new Error(`binary: ${JSON.stringify(canonical(codec.type, viaBinary))} != ${JSON.stringify(want)}`);
        for (const options of [{}, { protoNames: true }, { emitDefaults: true }]) {
          const got = canonical(codec.type, codec.fromJsonString(codec.toJsonString(viaBinary, options)));
          if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`JSON ${JSON.stringify(options)}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
        }
        const viaText = canonical(codec.type, codec.fromText(codec.toText(viaBinary)));
        if (JSON.stringify(viaText) !== JSON.stringify(want)) throw new Error(`text: ${JSON.stringify(viaText)} != ${JSON.stringify(want)}`);
        checked++;
      }),
      { numRuns: RUNS },
    );
    t.equal(checked, RUNS, `${RUNS} random messages`);
  });
}

t.test('length-delimited streams keep every message and its order', async (t) => {
  const codec = codecFor('registry.v1.GetDeviceResponse');
  fc.assert(
    fc.property(fc.array(messageArbitrary(codec.type), { maxLength: 6 }), (messages) => {
      const back = codec.decodeDelimited(codec.encodeDelimited(messages));
      const got = JSON.stringify(back.map((m) => canonical(codec.type, m)));
      const want = JSON.stringify(messages.map((m) => canonical(codec.type, m)));
      if (got !== want) throw new Error(`${got} != ${want}`);
    }),
    { numRuns: 50 },
  );
  t.pass('streams of 0-6 random devices');
});
