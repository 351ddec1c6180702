/**
 * Encode and decode of a full GetDeviceResponse (every field, connectivity
 * with a three-region latency map), measured in the same run for:
 *
 *   ours        registry-proto's codec: pbjs static code; decode runs the wire
 *               check (wire-check.ts) first, as every caller gets it
 *   ours (no check)  the pbjs static decode alone, to show what the check costs
 *   JSON        JSON.stringify / JSON.parse of the same record's ProtoJSON
 *               object (the baseline every JS programmer has for free)
 *   ProtoJSON   our ProtoJSON text (toJsonString / fromJsonString), for scale;
 *               for writing, also the reflective path the compiled writer replaced
 *   bufbuild    @bufbuild/protobuf 2 (toBinary / fromBinary). Its generated
 *               code needs protoc-gen-es, which is not installed here, so it
 *               runs on its runtime reflection: the message descriptor comes
 *               from our FileDescriptorSet via createFileRegistry. This is how
 *               @bufbuild/protobuf works with generated code too (generated
 *               code holds descriptors, not per-message functions), so the
 *               comparison is fair to it.
 *
 * After a warm-up, ROUNDS rounds that each run every case for at least MIN_MS,
 * in turn (so load drift hits all cases alike); the median rate is printed
 * with its spread and the ratio to JSON.
 *
 * Run: npm run bench:registry-codec   (node dist/bench/registry-codec.js after npm run build)
 * Env: ROUNDS (7), MIN_MS (300)
 */
import { create, createFileRegistry, fromBinary, toBinary, type DescMessage } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema, timestampFromMs } from '@bufbuild/protobuf/wkt';
import { codecFor } from '../registry-proto/codec';
import { fileDescriptorSetBytes, v1, type GetDeviceResponse } from '../registry-proto/messages';
import { sampleDevice } from '../test/helpers/registry';
import { fmtInt, machineLine } from './bench-helpers';

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const MIN_MS = Number(process.env.MIN_MS ?? 300);

let sink: unknown;

/** Operations per second of `fn` over at least MIN_MS. */
function oneRound(fn: () => unknown): number {
  let n = 0;
  const start = process.hrtime.bigint();
  let elapsedNs = 0n;
  const minNs = BigInt(MIN_MS) * 1_000_000n;
  while (elapsedNs < minNs) {
    for (let i = 0; i < 200; i++) sink = fn();
    n += 200;
    elapsedNs = process.hrtime.bigint() - start;
  }
  return (n * 1e9) / Number(elapsedNs);
}

const codec = codecFor<GetDeviceResponse>('registry.v1.GetDeviceResponse');
const record = sampleDevice();
const message = v1.GetDeviceResponse.fromObject(record);
const bytes = codec.encode(message);
const protoJsonObject = codec.toJson(message);
const jsonText = JSON.stringify(protoJsonObject);

const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, fileDescriptorSetBytes()));
const desc = registry.getMessage('registry.v1.GetDeviceResponse') as DescMessage;
const ts = (t: { seconds: number; nanos: number }) => timestampFromMs(t.seconds * 1000 + t.nanos / 1e6);
const bufMessage = create(desc, {
  ...record,
  created: ts(record.created as { seconds: number; nanos: number }),
  lastSeen: ts(record.lastSeen as { seconds: number; nanos: number }),
  expires: ts(record.expires as { seconds: number; nanos: number }),
} as never);
// Same data both ways: bufbuild's bytes decode with our codec to the same JSON.
if (JSON.stringify(codec.toJson(codec.decode(toBinary(desc, bufMessage)))) !== jsonText) throw new Error('bufbuild message differs from ours');

console.log(`registry codec benchmark: ${machineLine()}`);
console.log(`GetDeviceResponse: ${bytes.length} bytes binary, ${jsonText.length} bytes JSON; ${ROUNDS} rounds of >= ${MIN_MS} ms each, median (min-max) ops/s\n`);

const cases: [string, string, () => unknown][] = [
  ['encode', 'JSON.stringify', () => JSON.stringify(protoJsonObject)],
  ['encode', 'ours (pbjs static)', () => codec.encode(message)],
  ['encode', '@bufbuild/protobuf toBinary', () => toBinary(desc, bufMessage)],
  ['encode', 'ours ProtoJSON toJsonString (compiled writer)', () => codec.toJsonString(message)],
  ['encode', 'ours ProtoJSON, reflective path (ext/protojson)', () => JSON.stringify(codec.toJsonReflective(message))],
  ['decode', 'JSON.parse', () => JSON.parse(jsonText)],
  ['decode', 'ours (wire check + pbjs static)', () => codec.decode(bytes)],
  ['decode', 'ours, pbjs static alone (no check)', () => v1.GetDeviceResponse.decode(bytes)],
  ['decode', '@bufbuild/protobuf fromBinary', () => fromBinary(desc, bytes)],
  ['decode', 'ours ProtoJSON fromJsonString', () => codec.fromJsonString(jsonText)],
];

// Rounds interleave the cases (every case once per round, in turn), so that
// drift in the machine's load falls on all of them alike.
for (const [, , fn] of cases) for (let i = 0; i < 2000; i++) sink = fn(); // warm-up (JIT)
const rates = cases.map(() => [] as number[]);
for (let round = 0; round < ROUNDS; round++) cases.forEach(([, , fn], i) => rates[i].push(oneRound(fn)));
if (sink === Symbol.for('never')) console.log(sink); // keep results alive

const results = new Map<string, number>();
console.log('| op | implementation | ops/s (median) | min-max | vs JSON |');
console.log('| --- | --- | ---: | --- | ---: |');
cases.forEach(([op, name], i) => {
  const sorted = rates[i].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  results.set(`${op} ${name}`, median);
  const base = results.get(`${op} ${op === 'encode' ? 'JSON.stringify' : 'JSON.parse'}`)!;
  console.log(`| ${op} | ${name} | ${fmtInt(median)} | ${fmtInt(sorted[0])}-${fmtInt(sorted[sorted.length - 1])} | ${(median / base).toFixed(2)}x |`);
});
const encodeBase = results.get('encode JSON.stringify')!;
console.log(`\nours encode vs JSON.stringify: ${(results.get('encode ours (pbjs static)')! / encodeBase).toFixed(2)}x; vs @bufbuild/protobuf: ${(results.get('encode ours (pbjs static)')! / results.get('encode @bufbuild/protobuf toBinary')!).toFixed(2)}x`);
console.log(`ours decode vs JSON.parse: ${(results.get('decode ours (wire check + pbjs static)')! / results.get('decode JSON.parse')!).toFixed(2)}x; vs @bufbuild/protobuf: ${(results.get('decode ours (wire check + pbjs static)')! / results.get('decode @bufbuild/protobuf fromBinary')!).toFixed(2)}x`);
console.log(`cost of the wire check: decode at ${((results.get('decode ours (wire check + pbjs static)')! / results.get('decode ours, pbjs static alone (no check)')!) * 100).toFixed(0)}% of the unchecked speed`);
