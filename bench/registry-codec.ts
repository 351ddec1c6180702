/**
 * Encode and decode of a full GetDeviceResponse (every field, connectivity
 * with a three-region latency map), measured in the same run for:
 *
 *   ours        registry-proto's codec: encode by the encoder generated per
 *               type (binary-encoder.ts); decode by the one-pass decoder
 *               generated per type, which checks the wire format as it goes
 *               (binary-decoder.ts), as every caller gets it
 *   old paths   the pbjs static encoder; wire-check.ts then the pbjs static
 *               decode (two passes); the pbjs decode alone (no check)
 *   JSON        JSON.stringify / JSON.parse of the same record's ProtoJSON
 *               text (the baseline every JS programmer has for free)
 *   ProtoJSON   our ProtoJSON text: written by the compiled writer, read by the
 *               compiled reader (json-reader.ts: JSON.parse, the reader, the
 *               duplicate-key check), and the reflective paths they replaced
 *   bufbuild    @bufbuild/protobuf 2 (toBinary / fromBinary, toJsonString /
 *               fromJsonString). Its generated
 *               code needs protoc-gen-es, which is not installed here, so it
 *               runs on its runtime reflection: the message descriptor comes
 *               from our FileDescriptorSet via createFileRegistry. This is how
 *               @bufbuild/protobuf works with generated code too (generated
 *               code holds descriptors, not per-message functions), so the
 *               comparison is fair to it.
 *
 * After a warm-up, ROUNDS rounds that each run every case for at least MIN_MS,
 * in turn (so load drift hits all cases alike); the median rate is printed
 * with its spread, and the median over rounds of the ratio to JSON in that
 * round; the last lines compare with the targets of issue 14 and with
 * @bufbuild/protobuf.
 *
 * Run: npm run bench:registry-codec   (node dist/bench/registry-codec.js after npm run build)
 * Env: ROUNDS (7), MIN_MS (300)
 */
import { create, createFileRegistry, fromBinary, fromJsonString, toBinary, toJsonString, type DescMessage } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema, timestampFromMs } from '@bufbuild/protobuf/wkt';
import { codecFor } from '../registry-proto/codec';
import { fileDescriptorSetBytes, v1, type GetDeviceResponse } from '../registry-proto/messages';
import { checkWire, wireRules } from '../registry-proto/wire-check';
import { sampleDevice } from '../test/helpers/registry';
import os from 'node:os';
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
const rules = wireRules(codec.type);

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
  ['encode', 'ours (generated encoder)', () => codec.encode(message)],
  ['encode', 'pbjs static encode', () => v1.GetDeviceResponse.encode(message).finish()],
  ['encode', '@bufbuild/protobuf toBinary', () => toBinary(desc, bufMessage)],
  ['encode', 'ours ProtoJSON toJsonString (compiled writer)', () => codec.toJsonString(message)],
  ['encode', 'ours ProtoJSON, reflective path (ext/protojson)', () => JSON.stringify(codec.toJsonReflective(message))],
  ['encode', '@bufbuild/protobuf toJsonString', () => toJsonString(desc, bufMessage)],
  ['decode', 'JSON.parse', () => JSON.parse(jsonText)],
  ['decode', 'ours (one pass, wire check included)', () => codec.decode(bytes)],
  ['decode', 'wire check + pbjs static decode (two passes)', () => (checkWire(rules, bytes), v1.GetDeviceResponse.decode(bytes))],
  ['decode', 'pbjs static decode alone (no check)', () => v1.GetDeviceResponse.decode(bytes)],
  ['decode', '@bufbuild/protobuf fromBinary', () => fromBinary(desc, bytes)],
  ['decode', 'ours ProtoJSON fromJsonString (compiled reader)', () => codec.fromJsonString(jsonText)],
  ['decode', 'ours ProtoJSON, reflective path (ext/protojson)', () => codec.fromJsonReflective(JSON.parse(jsonText))],
  ['decode', '@bufbuild/protobuf fromJsonString', () => fromJsonString(desc, jsonText)],
];

// Rounds interleave the cases (every case once per round, in turn), so that
// drift in the machine's load falls on all of them alike.
for (const [, , fn] of cases) for (let i = 0; i < 2000; i++) sink = fn(); // warm-up (JIT)
const rates = cases.map(() => [] as number[]);
for (let round = 0; round < ROUNDS; round++) cases.forEach(([, , fn], i) => rates[i].push(oneRound(fn)));
if (sink === Symbol.for('never')) console.log(sink); // keep results alive

// Each round's rates are divided by the same round's baseline (JSON.stringify
// for encoders, JSON.parse for decoders), and the median of those ratios is
// the figure: load that changes between rounds cancels out.
const baseIndex = (op: string) => cases.findIndex(([o, n]) => o === op && n === (op === 'encode' ? 'JSON.stringify' : 'JSON.parse'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ratio = (i: number, j: number) => median(rates[i].map((r, round) => r / rates[j][round]));
const index = (op: string, name: string) => cases.findIndex(([o, n]) => o === op && n === name);
console.log('| op | implementation | ops/s (median) | min-max | vs JSON (median of per-round ratios) |');
console.log('| --- | --- | ---: | --- | ---: |');
cases.forEach(([op, name], i) => {
  const sorted = [...rates[i]].sort((a, b) => a - b);
  console.log(`| ${op} | ${name} | ${fmtInt(median(rates[i]))} | ${fmtInt(sorted[0])}-${fmtInt(sorted[sorted.length - 1])} | ${ratio(i, baseIndex(op)).toFixed(2)}x |`);
});
const line = (what: string, op: string, ours: string, buf: string, target: number) => {
  const vsJson = ratio(index(op, ours), baseIndex(op));
  const vsBuf = ratio(index(op, ours), index(op, buf));
  console.log(`${what}: ${vsJson.toFixed(2)}x ${op === 'encode' ? 'JSON.stringify' : 'JSON.parse'} (target >= ${target}x: ${vsJson >= target ? 'met' : 'NOT met'}); ${vsBuf.toFixed(2)}x @bufbuild/protobuf`);
};
console.log('');
line('binary encode', 'encode', 'ours (generated encoder)', '@bufbuild/protobuf toBinary', 1.5);
line('binary decode with wire check', 'decode', 'ours (one pass, wire check included)', '@bufbuild/protobuf fromBinary', 1);
line('ProtoJSON read', 'decode', 'ours ProtoJSON fromJsonString (compiled reader)', '@bufbuild/protobuf fromJsonString', 0.5);
console.log(`the old paths: pbjs encode ${ratio(index('encode', 'pbjs static encode'), baseIndex('encode')).toFixed(2)}x, wire check + pbjs decode ${ratio(index('decode', 'wire check + pbjs static decode (two passes)'), baseIndex('decode')).toFixed(2)}x, reflective ProtoJSON read ${ratio(index('decode', 'ours ProtoJSON, reflective path (ext/protojson)'), baseIndex('decode')).toFixed(2)}x`);
console.log(`load average (1 min) at the end: ${os.loadavg()[0].toFixed(2)}`);
