/**
 * Our Firmata number codecs agree with firmata.js's (what johnny-five hosts
 * send), so any host and our boards read each other's numbers; firmata.js
 * exposes its codecs only in its test mode. And our reader decodes what the
 * real board sends.
 */
import fc from 'fast-check';
import t from 'tap';
import { decodeCustomFloat, decodeInt32, encodeCustomFloat, encodeInt32, FirmataReader } from '../../hal/firmata-protocol';
import fixture from '../fixtures/firmata-real-exchanges.json';

process.env.IS_TEST_MODE = '1';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Firmata } = require('firmata-io') as { Firmata: { test: Record<string, (v: unknown) => unknown> } };
const theirs = Firmata.test as unknown as {
  encode32BitSignedInteger(n: number): number[];
  decode32BitSignedInteger(b: number[]): number;
  encodeCustomFloat(x: number): number[];
};

t.test('32-bit integers: ours and firmata.js encode the same bytes and read each other', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: -(2 ** 31) + 1, max: 2 ** 31 - 1 }), (n) => {
      const ours = encodeInt32(n);
      return JSON.stringify(ours) === JSON.stringify(theirs.encode32BitSignedInteger(n)) && decodeInt32(ours) === n && theirs.decode32BitSignedInteger(ours) === n;
    }),
    { numRuns: 2000 },
  );
  t.end();
});

t.test('speeds and accelerations firmata.js encodes decode to what it sent, below 100,000', (t) => {
  // Its significand is truncated to 23 bits after scaling by powers of ten: at worst 1 part in 838,860.
  fc.assert(
    fc.property(fc.double({ min: 0.001, max: 99_999, noNaN: true }), fc.boolean(), (x, negative) => {
      const value = negative ? -x : x;
      const decoded = decodeCustomFloat(theirs.encodeCustomFloat(value));
      return Math.abs(decoded - value) <= Math.abs(value) / 838_860;
    }),
    { numRuns: 2000 },
  );
  t.equal(decodeCustomFloat(theirs.encodeCustomFloat(3200)), 3200);
  t.end();
});

t.test('from 100,000 up firmata.js garbles the number; our encoder (which the driver uses) does not', (t) => {
  // 500 deg/s^2 on phi at 800 steps/deg: an acceleration the config allows. Ours rounds a significand
  // of at least 838,861 (the smallest exponent that fits): at worst half a part in 838,861.
  t.not(decodeCustomFloat(theirs.encodeCustomFloat(400_000)), 400_000, 'firmata.js: the exponent overflows');
  t.equal(decodeCustomFloat(encodeCustomFloat(400_000)), 400_000);
  fc.assert(
    fc.property(fc.double({ min: 1e-3, max: 1e10, noNaN: true }), fc.boolean(), (x, negative) => {
      const value = negative ? -x : x;
      return Math.abs(decodeCustomFloat(encodeCustomFloat(value)) - value) <= Math.abs(value) * 1e-6;
    }),
    { numRuns: 2000 },
  );
  t.end();
});

t.test('FirmataReader decodes what the real board sent, and counts the bytes that are no message', (t) => {
  const got: unknown[] = [];
  const reader = new FirmataReader((m) => got.push(m));
  const handshake = fixture.scenarios.find((s) => s.name === 'handshake')!;
  reader.feed(Buffer.from(handshake.replies.join(''), 'hex'));
  t.strictSame(got[0], { kind: 'version', major: 2, minor: 7 });
  t.strictSame(got[1], { kind: 'firmware', major: 3, minor: 3, name: 'ConfigurableFirmata' });
  t.equal(reader.garbageBytes, 0);
  got.length = 0;
  reader.feed(Buffer.from('911e00f0620a013200000008f0f0620601400c000000f7f0622400f7', 'hex'));
  t.strictSame(got, [
    { kind: 'digital', port: 1, value: 0x1e },
    { kind: 'stepper', device: 1, steps: 1600, complete: false },
    { kind: 'group-complete', group: 0 },
  ], 'a sysex broken by a new START_SYSEX is dropped; the next is read');
  t.ok(reader.garbageBytes > 0);
  reader.feed(Buffer.from('hello'));
  t.equal(got.length, 3, 'text is no message');
  t.end();
});
