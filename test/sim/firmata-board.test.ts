/**
 * The simulated ConfigurableFirmata board against the real one: each
 * scenario of test/fixtures/firmata-real-exchanges.json (recorded from the
 * real firmware on a simulated Uno by bench/firmata-real-record.ts) is
 * replayed byte for byte, at the recorded times, into the simulated board,
 * and its answers are compared with the real board's: exactly where the
 * firmware is deterministic (handshake, replies, what stops and what runs on),
 * within a few percent where timing enters (positions after a second of
 * motion). Then the behaviours the fixture does not show, from the source.
 */
import t from 'tap';
import { createSimFirmataBoard, defaultSimSettings, type SimFirmataMachine } from '../../cli/assemble';
import { defaultConfig } from '../../firmware/config';
import { ACCEL, decodeInt32, encodeCustomFloat, encodeInt32, FIRMATA } from '../../hal/firmata-protocol';
import { UNO_FIRMATA } from '../../sim/firmata-board';
import { VirtualClock } from '../../sim/virtual-clock';
import fixture from '../fixtures/firmata-real-exchanges.json';

interface Scenario {
  name: string;
  steps: { atMs: number; sent: string }[];
  replies: string[];
}

function booted() {
  const clock = new VirtualClock();
  const out: Buffer[] = [];
  const m = createSimFirmataBoard(clock, defaultConfig(), defaultSimSettings(), (d) => out.push(d));
  m.board.powerUp();
  clock.advanceBy(UNO_FIRMATA.blinkUs + 100_000);
  out.length = 0;
  return { clock, m, out, take: () => Buffer.concat(out.splice(0)).toString('hex') };
}

/** Replays a recorded scenario into the simulated board; its replies split as the recording's are. */
function replay(s: Scenario): { replies: string[]; m: SimFirmataMachine } {
  const { clock, m, take } = booted();
  const t0 = clock.nowUs();
  const replies: string[] = [];
  s.steps.forEach((step, i) => {
    clock.advanceTo(t0 + step.atMs * 1000);
    if (i > 0) replies.push(take());
    if (step.sent) m.board.receive(Buffer.from(step.sent, 'hex'));
  });
  clock.advanceBy(200_000);
  replies.push(take());
  return { replies, m };
}

const scenario = (name: string) => (fixture.scenarios as Scenario[]).find((s) => s.name === name)!;
/** The AccelStepper replies in a reply chunk: [command, device, position]. */
const stepperReplies = (hex: string) =>
  (hex.match(/f062(06|0a)[0-9a-f]{12}f7/g) ?? []).map((m) => {
    const b = [...Buffer.from(m, 'hex')];
    return { complete: b[2] === ACCEL.MOVE_COMPLETE, device: b[3], steps: decodeInt32(b.slice(4, 9)) };
  });
const near = (sim: number, real: number, share: number) => Math.abs(sim - real) <= Math.max(2, Math.abs(real) * share);

t.test('handshake: version, firmware name, capabilities and analog mapping are the real bytes', (t) => {
  const real = scenario('handshake');
  const sim = replay(real);
  t.strictSame(sim.replies, real.replies);
  t.end();
});

t.test('ACCELSTEPPER_STOP: halts at once, reports MOVE_COMPLETE, and the next TO runs on in the old direction first, as the real one', (t) => {
  const real = scenario('stop');
  const { replies } = replay(real);
  const [stopReal, stopSim] = [stepperReplies(real.replies[2]), stepperReplies(replies[2])];
  t.strictSame(stopSim.map((r) => [r.complete, r.device]), stopReal.map((r) => [r.complete, r.device]), 'one MOVE_COMPLETE per STOP');
  // 1.5 s of ramp and run at the ceiling: two real recordings differ by 1.5% (the recorder's sends are timed by the wall clock).
  stopReal.forEach((r, i) => t.ok(near(stopSim[i].steps, r.steps, 0.05), `halted at ${stopSim[i].steps} (real ${r.steps})`));
  // 400 ms later: not a step more.
  t.strictSame(stepperReplies(replies[3]).map((r) => r.steps), stopSim.map((r) => r.steps), 'no step after the stop');
  // 300 ms into the move back to -50: both still beyond where they stopped (the old speed, the old direction).
  const runOnReal = stepperReplies(real.replies[5]).filter((r) => !r.complete).map((r, i) => r.steps - stopReal[i].steps);
  const runOnSim = stepperReplies(replies[5]).filter((r) => !r.complete).map((r, i) => r.steps - stopSim[i].steps);
  runOnReal.forEach((real, i) => t.ok(real > 400 && near(runOnSim[i], real, 0.15), `ran on ${runOnSim[i]} steps (real ${real})`));
  t.strictSame(stepperReplies(replies[6]), stepperReplies(real.replies[6]), 'both end at -50');
  t.end();
});

t.test('STOP then ZERO: the move back starts from rest in its own direction, as the real one', (t) => {
  const real = scenario('stop-zero');
  const { replies } = replay(real);
  t.strictSame(stepperReplies(replies[2]).slice(2), stepperReplies(real.replies[2]).slice(2), 'ZERO: both at 0');
  // The 50-step move back is over within 300 ms: no run-on.
  t.strictSame(replies.slice(3).map(stepperReplies), real.replies.slice(3).map(stepperReplies));
  t.end();
});

t.test('MULTISTEPPER_STOP only reports the group complete: steppers started with TO run on, as the real ones', (t) => {
  const real = scenario('multi-stop');
  const { replies } = replay(real);
  t.equal(replies[2], 'f0622400f7', 'MULTISTEPPER_MOVE_COMPLETE at once');
  t.equal(real.replies[2], 'f0622400f7');
  const [simPos, realPos] = [stepperReplies(replies[3]), stepperReplies(real.replies[3])];
  realPos.forEach((r, i) => t.ok(r.steps > 1000 && near(simPos[i].steps, r.steps, 0.03), `still running: ${simPos[i].steps} (real ${r.steps})`));
  t.end();
});

t.test('the loop sets the speed ceiling: both axes, then one alone, within 3% of the real step counts', (t) => {
  const real = scenario('rates');
  const { replies } = replay(real);
  // The real answers straddle the recording's step boundaries (the serial line is slower than the replay's): compare them in order.
  const [sim, rl] = [replies.flatMap(stepperReplies), real.replies.flatMap(stepperReplies)];
  t.strictSame(sim.map((r) => [r.complete, r.device]), rl.map((r) => [r.complete, r.device]), 'the same answers in the same order');
  rl.forEach((r, k) => t.ok(near(sim[k].steps, r.steps, 0.03), `${r.complete ? 'MOVE_COMPLETE' : 'position'} device ${r.device}: ${sim[k].steps} (real ${r.steps})`));
  t.end();
});

t.test('CONFIG without SYSTEM_RESET leaks a stepper each time: the seventh reconfiguration hangs the sketch, as the real one', (t) => {
  const real = scenario('leak');
  const { replies, m } = replay(real);
  t.strictSame(replies, real.replies);
  t.ok(m.board.crashed());
  t.end();
});

// ---- from the source, where the fixture does not reach ----

t.test('power-up: 1.875 s of blink with the port unread (63 bytes kept, the rest lost), then version, firmware, a string', (t) => {
  const clock = new VirtualClock();
  const out: string[] = [];
  const m = createSimFirmataBoard(clock, defaultConfig(), defaultSimSettings(), (d) => out.push(d.toString('hex')));
  m.board.powerUp();
  m.board.receive(Buffer.alloc(70, 0xf9));
  clock.advanceBy(1_874_000);
  t.strictSame(out, [], 'silent while blinking');
  clock.advanceBy(2000);
  t.equal(m.board.droppedBytes, 7);
  t.equal(out[0], 'f90207', 'VERSION 2.7');
  t.match(Buffer.from(out[1], 'hex').toString('latin1'), /\x03\x03C\x00o\x00n/, 'FIRMWARE 3.3 ConfigurableFirmata');
  t.equal(out.filter((o) => o === 'f90207').length, 1 + 63, 'the 63 queued REPORT_VERSIONs answered after the blink');
  t.end();
});

t.test('SYSTEM_RESET resets the parser mid-message; a START_SYSEX inside a sysex is data (a half message eats the next one)', (t) => {
  const { m, take } = booted();
  const config = [0xf0, 0x62, ACCEL.CONFIG, 0, 0x10, 2, 5, 0, 0xf7];
  m.board.receive(Buffer.from([0xf0, 0x62, 0x06, ...config, 0xf0, 0x62, 0x06, 0, 0xf7]));
  t.equal(take(), '', 'the half message swallowed the CONFIG: no stepper, no answer');
  t.equal(m.board.devicePosition(0), null);
  m.board.receive(Buffer.from([0xf0, 0x62, 0x06, 0xff, ...config, 0xf0, 0x62, 0x06, 0, 0xf7]));
  t.equal(take(), 'f06206000000000000f7', 'after 0xFF the CONFIG took');
  t.end();
});

t.test('inputs are read every sampling interval (19 ms, FirmataReporting::reset()) and a port is sent only when it changed', (t) => {
  const { clock, m, take } = booted();
  m.board.receive(Buffer.from([0xff, 0xf4, 9, 0x0b, 0xf4, 11, 0x0b, 0xd1, 1]));
  t.equal(take(), '910a00', 'REPORT_DIGITAL answers at once (D9, D11 high)');
  m.sim.theta.faults.driver = 'overcurrent';
  const start = clock.nowUs();
  let at = 0;
  for (let us = 0; us < 40_000 && !at; us += 100) {
    clock.advanceBy(100);
    if (take() === '910200') at = clock.nowUs() - start;
  }
  t.ok(at > 0 && at <= 20_000, `the nFAULT seen within one interval (${at} us)`);
  clock.advanceBy(100_000);
  t.equal(take(), '', 'nothing while nothing changes');
  m.board.receive(Buffer.from([0xf0, FIRMATA.SAMPLING_INTERVAL, 1, 0, 0xf7]));
  m.sim.theta.faults.driver = null;
  clock.advanceBy(2000);
  t.equal(take(), '910a00', 'at 1 ms, seen within 2 ms');
  t.end();
});

t.test('the CONFIG invert byte: without it the firmware reads the previous message buffer (a stale 1 flips DIR)', (t) => {
  const { clock, m } = booted();
  // A long message leaves 0x01 where CONFIG's invert byte would be; then a CONFIG without it.
  m.board.receive(Buffer.from([0xff, 0xf0, 0x62, ACCEL.TO, 7, 1, 1, 1, 1, 0xf7, 0xf0, 0x62, ACCEL.CONFIG, 0, 0x10, 2, 5, 0xf7]));
  const before = m.sim.theta.truePositionSteps;
  m.board.receive(Buffer.from([0xf0, 0x62, ACCEL.SET_SPEED, 0, ...encodeCustomFloat(1000), 0xf7, 0xf0, 0x62, ACCEL.TO, 0, ...encodeInt32(100), 0xf7]));
  clock.advanceBy(1_000_000);
  t.equal(m.sim.theta.truePositionSteps - before, -100, 'moved the wrong way');
  t.end();
});
