/**
 * The simulated grbl board on its own, fed bytes directly on a virtual clock:
 * the protocol behaviour the driver relies on (and that a real grbl has).
 */
import t from 'tap';
import { createSimGrblBoard, defaultSimSettings } from '../../cli/assemble';
import { defaultConfig } from '../../firmware/config';
import { VirtualClock } from '../../sim/virtual-clock';

function board() {
  const clock = new VirtualClock();
  let out = '';
  const machine = createSimGrblBoard(clock, defaultConfig(), defaultSimSettings(), (text) => (out += text));
  machine.board.powerUp();
  const send = (text: string | number[]) => machine.receive(Buffer.from(typeof text === 'string' ? Buffer.from(text, 'latin1') : text));
  const take = () => {
    const lines = out.split('\r\n').filter((l) => l !== '');
    out = '';
    return lines;
  };
  return { clock, machine, send, take };
}

t.test('power-up: the banner, locked in alarm because homing is enabled; $X unlocks', (t) => {
  const b = board();
  t.strictSame(b.take(), ["Grbl 1.1h ['$' for help]", "[MSG:'$H'|'$X' to unlock]"]);
  b.send('G1 X1 F60\n');
  t.strictSame(b.take(), ['error:9'], 'G-code is locked out in alarm');
  b.send('$X\n');
  t.strictSame(b.take(), ['[MSG:Caution: Unlocked]', 'ok']);
  t.end();
});

t.test('$$ lists the settings of the config; unknown $ commands are error:3', (t) => {
  const b = board();
  b.take();
  b.send('$$\n');
  const lines = b.take();
  t.ok(lines.includes('$100=320.000'), 'theta steps/deg');
  t.ok(lines.includes('$101=800.000'));
  t.ok(lines.includes('$22=1'));
  t.equal(lines[lines.length - 1], 'ok');
  b.send('$Q\n$999=1\n');
  t.strictSame(b.take(), ['error:3', 'error:3']);
  t.end();
});

t.test('G1 is answered when queued, G4 P0 only once the machine has arrived', (t) => {
  const b = board();
  b.send('$X\n');
  b.take();
  b.send('G53 G1 X1.000 Y2.000 F600\nG4 P0\n');
  t.strictSame(b.take(), ['ok'], 'the move is queued; the dwell waits');
  b.send('?');
  t.match(b.take()[0], /^<Run\|MPos:0\.000,0\.000/);
  b.clock.runUntilIdle();
  t.strictSame(b.take(), ['ok'], 'the dwell answered on arrival');
  b.send('?');
  t.match(b.take()[0], /^<Idle\|MPos:1\.000,2\.000,0\.000\|FS:0,0/);
  t.equal(b.machine.sim.phi.truePositionSteps - 123.25 * 800, 2 * 800, 'phi really moved 2 deg');
  t.end();
});

t.test('bad lines get their error codes; an overlong line is error:11', (t) => {
  const b = board();
  b.send('$X\n');
  b.take();
  b.send('G1 X\n');
  b.send('G1 X1\n');
  b.send('G7 X1\n');
  b.send('G1 X1 X2 F10\n');
  b.send('1234\n');
  t.strictSame(b.take(), ['error:2', 'error:22', 'error:20', 'error:25', 'error:1']);
  b.send(`G1 X${'1'.repeat(90)}\n`);
  t.strictSame(b.take(), ['error:11']);
  t.end();
});

t.test('more than 127 bytes unanswered overflow the receive buffer, and the board counts the loss', (t) => {
  const b = board();
  b.send('$X\n');
  b.take();
  // A long move occupies the planner; then 16 more blocks fill it, and the rest waits in the 128-byte buffer.
  // The planner takes 15 blocks; then the main loop waits in mc_line() and the rest stays in the 128-byte ring buffer.
  const line = 'G53 G1 X100.000 Y100.000 F60\n';
  b.send(line.repeat(30));
  t.ok(b.machine.board.rxOverflows > 0, `bytes lost: ${b.machine.board.rxOverflows}`);
  t.end();
});

t.test('feed hold + reset mid-move halt at once: ALARM:3, 500 ms later the ok of the cut-short dwell and the banner; the position kept', (t) => {
  const b = board();
  b.send('$X\n');
  b.send('G53 G1 X0 Y90 F600\nG4 P0\n');
  b.clock.advanceBy(2e6);
  b.take();
  b.send('?');
  const before = b.take()[0];
  b.send([0x21, 0x18]);
  t.strictSame(b.take(), ['ALARM:3'], 'the alarm at once (motion_control.c mc_reset())');
  const steps = b.machine.sim.phi.stepsReceived;
  b.clock.advanceBy(499_000);
  t.strictSame(b.take(), [], 'nothing during the 500 ms pause of report_alarm_message()');
  b.clock.advanceBy(2_000);
  t.strictSame(b.take(), ['ok'], 'then the ok of the G4 P0 the reset cut short');
  b.clock.advanceBy(25_000);
  t.strictSame(b.take(), ["Grbl 1.1h ['$' for help]", "[MSG:'$H'|'$X' to unlock]"], 'the banner after the $1 idle delay, locked');
  b.clock.runUntilIdle();
  t.equal(b.machine.sim.phi.stepsReceived, steps, 'no step after the halt');
  b.send('?');
  const after = b.take()[0];
  t.match(after, /^<Alarm\|MPos:/);
  t.not(before, after);
  const mposSteps = Math.round(Number(after.split('|')[1].split(',')[1]) * 800);
  const trueSteps = b.machine.sim.phi.truePositionSteps - 123.25 * 800;
  t.ok(mposSteps - trueSteps >= 0 && mposSteps - trueSteps <= 1, `grbl's count (${mposSteps}) is the true position (${trueSteps}) or one step ahead: the step counted but never output`);
  t.end();
});

t.test('a hard limit alarm (raised by the test) waits for a reset: ALARM:1, then [MSG:Reset to continue], lines ignored', (t) => {
  const b = board();
  b.send('$X\n');
  b.take();
  b.machine.board.raiseAlarm(1);
  t.strictSame(b.take(), ['ALARM:1']);
  b.clock.advanceBy(501_000);
  t.strictSame(b.take(), ['[MSG:Reset to continue]']);
  b.send('$X\n');
  b.clock.advanceBy(100_000);
  t.strictSame(b.take(), [], 'locked until reset');
  b.send([0x18]);
  b.clock.advanceBy(30_000);
  t.strictSame(b.take(), ["Grbl 1.1h ['$' for help]", "[MSG:'$H'|'$X' to unlock]"]);
  t.end();
});

t.test('a stepper driver that shuts down is invisible to grbl: it counts on, the shaft stays', (t) => {
  const b = board();
  b.send('$X\nG53 G1 X10 Y0 F600\nG4 P0\n');
  b.clock.advanceBy(3e5);
  b.machine.sim.theta.faults.driver = 'overcurrent';
  b.clock.runUntilIdle();
  b.send('?');
  t.match(b.take().pop(), /^<Idle\|MPos:10\.000,0\.000/);
  t.ok(b.machine.sim.theta.truePositionSteps - 37.5 * 320 < 10 * 320, 'the shaft fell behind');
  t.end();
});
