/**
 * The grbl driver against the simulated grbl 1.1h board (sim/grbl-controller.ts,
 * checked against the real firmware by test/sim/grbl-fidelity.test.ts) over a
 * real pty pair, both on one LineClock: virtual time that stands still while
 * a byte is on the line, so every timeout (the driver's status silence, its
 * homing deadline, the board's 500 ms alarm pause) is exact whatever the load.
 * No wall-clock sleeps.
 */
import t, { type Test } from 'tap';
import { createGrblPositioner, createSimGrblBoard, defaultSimSettings, type SimGrblBoard } from '../../cli/assemble';
import { defaultConfig, type PositionerConfig } from '../../firmware/config';
import type { Positioner } from '../../firmware/positioner';
import type { GrblDriver, GrblDriverOptions } from '../../hal/grbl-driver';
import { checkBuild, stepRateProblem } from '../../hal/grbl-driver';
import { homingWorstCaseUs } from '../../hal/grbl-protocol';
import { STOCK_BUILD, XY_BUILD, type SimGrblBuild } from '../../sim/grbl-controller';
import { LineClock, openLine, type Line } from '../helpers/line-clock';

const SEC = 1e6;

interface Rig {
  clock: LineClock;
  line: Line<SimGrblBoard>;
  positioner: Positioner;
  driver: GrblDriver;
  board: SimGrblBoard;
  config: PositionerConfig;
  /** Every byte the driver wrote, with the virtual time it was written. */
  tx: { tUs: number; data: Buffer }[];
}

async function rig(t: Test, opts: { build?: SimGrblBuild; tuning?: Pick<GrblDriverOptions, 'stopMode'>; settings?: Record<number, number>; twoBanners?: boolean; configure?: (c: PositionerConfig) => void } = {}): Promise<Rig> {
  const clock = new LineClock();
  const line = await openLine<SimGrblBoard>(clock, 115200);
  const config = defaultConfig();
  opts.configure?.(config);
  const tx: Rig['tx'] = [];
  const trace = (direction: 'tx' | 'rx', data: Buffer) => {
    if (direction === 'tx') tx.push({ tUs: clock.nowUs(), data: Buffer.from(data) });
    line.trace(direction, data);
  };
  const { positioner, controller: driver } = createGrblPositioner(clock.background(), config, { path: line.hostPath, baudRate: 115200, trace }, { ...opts.tuning });
  const peer = await line.attachBoard((send) => createSimGrblBoard(clock, config, defaultSimSettings(), send, { build: opts.build ?? XY_BUILD, settings: opts.settings }));
  clock.setIdleCondition(() => !positioner.status().moving && positioner.status().state !== 'homing');
  t.teardown(async () => {
    await driver.close();
    await line.dispose();
  });
  driver.start();
  await line.hostWrote();
  // An Uno resets when its port opens; its bootloader eats the driver's first reset byte, then grbl starts.
  // With `twoBanners` grbl is up before that byte arrives: the power-up banner, then the reset's.
  if (!opts.twoBanners) await clock.whenSettled();
  peer.board.board.powerUp();
  await clock.runUntil('the driver connected', () => driver.connectionPhase() !== 'resetting' && driver.connectionPhase() !== 'configuring' && driver.connectionPhase() !== 'connecting', 30 * SEC);
  return { clock, line, positioner, driver, board: peer.board, config, tx };
}

async function home(r: Rig): Promise<void> {
  r.positioner.home('both');
  await r.clock.runUntil('homing to end', () => r.positioner.status().state !== 'homing', 120 * SEC);
}

/** Where the driver says each axis is, in steps, against the true shaft: the frame's 0 is the switch point once homed, else the power-on position. */
function offTrue(r: Rig, frame: 'switch' | 'power-on'): { theta: number; phi: number } {
  const s = r.positioner.status();
  const zero = frame === 'switch' ? { theta: 0, phi: 0 } : { theta: 37.5 * 320, phi: 123.25 * 800 };
  return { theta: s.axes.theta.positionSteps - (r.board.sim.theta.truePositionSteps - zero.theta), phi: s.axes.phi.positionSteps - (r.board.sim.phi.truePositionSteps - zero.phi) };
}

t.test('homing through grbl silence: no `?` answer for 17 s is not a lost board; the axes end on their switch points', async (t) => {
  const r = await rig(t);
  t.equal(r.driver.connectionPhase(), 'ready');
  await home(r);
  const s = r.positioner.status();
  t.equal(s.state, 'idle', `homing ended idle (fault: ${JSON.stringify(s.fault)})`);
  t.equal(s.homed, true);
  t.strictSame([s.thetaDeg, s.phiDeg], [0, 0], 'a homed axis rests at 0');
  t.equal(r.board.sim.theta.truePositionSteps, 0, 'theta really on its switch point');
  t.equal(r.board.sim.phi.truePositionSteps, 0, 'phi really on its switch point');
  t.equal(r.driver.connectionPhase(), 'ready', 'never taken for a lost board');
  t.equal(r.driver.stats.resets, 1, 'no reset but the one at connection');
  t.strictSame(r.board.board.linesReceived, ['$I', '$$', '$X', 'G21', '$H', 'G53G1X-190Y-370F600', 'G4P0'], 'the lines grbl received, in order');

  r.positioner.moveTo(30, 90);
  await r.clock.runUntil('the move to end', () => r.positioner.status().state !== 'moving', 60 * SEC);
  t.strictSame([r.positioner.status().thetaDeg, r.positioner.status().phiDeg], [30, 90]);
  t.equal(r.board.sim.theta.truePositionSteps, 30 * 320);
  t.equal(r.board.sim.phi.truePositionSteps, 90 * 800);
});

t.test('the homing deadline comes from the settings and the travel, and exceeds the real cycle', (t) => {
  const settings = new Map<number, number>([[24, 60], [25, 600], [26, 250], [27, 2], [120, 20], [121, 20], [130, 190], [131, 370]]);
  const bothS = homingWorstCaseUs(settings, ['X', 'Y']) / SEC;
  t.ok(bothS > 1.5 * 370 / 10 && bothS < 80, `both axes: ${bothS.toFixed(1)} s covers grbl's own 1.5 x 370 deg search at 10 deg/s`);
  const thetaS = homingWorstCaseUs(settings, ['X']) / SEC;
  t.ok(thetaS > 1.5 * 190 / 10 && thetaS < bothS, `theta alone: ${thetaS.toFixed(1)} s`);
  t.end();
});

t.test('stop during homing: ALARM:6, the position re-based on where grbl zeroed it, homing lost, and homing works again', async (t) => {
  const r = await rig(t);
  r.positioner.home('both');
  await r.clock.run(3 * SEC);
  r.positioner.stop();
  await r.clock.run(1 * SEC);
  const s = r.positioner.status();
  t.equal(s.state, 'stopped');
  t.equal(s.homed, false, 'homing marked lost');
  t.ok(s.thetaDeg < -20 && s.thetaDeg > -37.5, `theta moved toward its switch, still counted from its power-on position: ${s.thetaDeg}`);
  const off = offTrue(r, 'power-on');
  t.ok(Math.abs(off.theta) <= 1 && Math.abs(off.phi) <= 1, `the reported position is the true one within a step: ${JSON.stringify(off)}`);
  await home(r);
  t.equal(r.positioner.status().state, 'idle');
  t.equal(r.positioner.status().homed, true);
  t.equal(r.board.sim.phi.truePositionSteps, 0);
});

t.test('stop mid-move: the halted position is known at once (no 500 ms wait for the alarm), ALARM:3 loses homing', async (t) => {
  const r = await rig(t);
  await home(r);
  r.positioner.moveTo(90, 180);
  await r.clock.run(3.025 * SEC);
  r.positioner.stop();
  const stoppedAt = r.clock.nowUs();
  // Before any byte comes back: the last report (up to 40 ms old) moved on at its feed.
  const estimate = r.positioner.status().axes;
  const now = r.board.board.countedSteps();
  const estOff = Math.max(Math.abs(estimate.theta.positionSteps - (now[0] + 190 * 320)), Math.abs(estimate.phi.positionSteps - (now[1] + 370 * 800)));
  t.ok(estOff <= 8, `the status right after the stop is within ${estOff} steps of where grbl is (a 40 ms old poll would be up to 320 off)`);
  await r.clock.runUntil('the halt report', () => r.driver.stats.haltReports === 1, 1 * SEC);
  const counted = r.board.board.countedSteps();
  const at = r.positioner.status();
  t.ok(r.clock.nowUs() - stoppedAt < 10_000, `the halted position known ${(r.clock.nowUs() - stoppedAt) / 1000} ms after the stop, before ALARM:3's 500 ms pause`);
  const halted = { theta: counted[0] + 190 * 320, phi: counted[1] + 370 * 800 };
  t.ok(Math.abs(at.axes.theta.positionSteps - halted.theta) <= 2 && Math.abs(at.axes.phi.positionSteps - halted.phi) <= 2, `the next status gives the halted position: ${at.axes.theta.positionSteps}/${at.axes.phi.positionSteps} against ${halted.theta}/${halted.phi}`);
  await r.clock.run(2 * SEC);
  const s = r.positioner.status();
  t.equal(s.state, 'stopped');
  t.equal(s.homed, false, 'ALARM:3: grbl says the position may be lost');
  const off = offTrue(r, 'switch');
  t.ok(Math.abs(off.theta) <= 1 && Math.abs(off.phi) <= 1, `true position within the one step grbl counted but never output: ${JSON.stringify(off)}`);
  r.positioner.moveBy(1, -1);
  await r.clock.runUntil('the next move to end', () => r.positioner.status().state !== 'moving', 30 * SEC);
  t.equal(r.positioner.status().state, 'idle', 'a stopped positioner moves again');
});

t.test("stopMode 'hold': a decelerated stop to Hold:0, then the reset: no alarm, homing and the exact position kept", async (t) => {
  const r = await rig(t, { tuning: { stopMode: 'hold' } });
  await home(r);
  r.positioner.moveTo(90, 180);
  await r.clock.run(3 * SEC);
  const alarms: string[] = [];
  r.board.board.onEvent((e) => e.type === 'alarm' && alarms.push(e.detail));
  r.positioner.stop();
  await r.clock.run(2 * SEC);
  const s = r.positioner.status();
  t.strictSame(alarms, [], 'no alarm');
  t.equal(s.state, 'stopped');
  t.equal(s.homed, true, 'homing kept');
  t.strictSame(offTrue(r, 'switch'), { theta: 0, phi: 0 }, 'the position is exact');
});

t.test('settings go send-response: with the EEPROM writing ~3.4 ms per byte, nothing else is on the wire meanwhile', async (t) => {
  const r = await rig(t);
  r.positioner.updateSettings({ accelDegS2: 111.5 });
  const from = r.tx.length;
  r.positioner.moveTo(10, 20);
  await r.clock.runUntil('the move to end', () => r.positioner.status().state !== 'moving', 30 * SEC);
  t.equal(r.positioner.status().state, 'idle', `ended idle (fault: ${JSON.stringify(r.positioner.status().fault)})`);
  t.equal(r.board.board.rxOverruns, 0, 'no byte lost in the USART');
  t.equal(r.board.board.settings.get(120), 111.5);
  t.equal(r.board.board.settings.get(121), 111.5);
  const lines = r.board.board.linesReceived.slice(-4);
  t.match(lines, ['$120=111.500', '$121=111.500', /^G53G1X10Y20F/, 'G4P0']);
  // Between writing a `$N=` line and reading its `ok`, the driver wrote nothing but that line.
  const sent = r.tx.slice(from).map((x) => x.data.toString('latin1')).join('').replace(/\?/g, '');
  t.match(sent, /^\$120=111\.500\n\$121=111\.500\nG53G1X10Y20F[\d.]+\nG4P0\n$/, 'each setting alone, then the move');
  t.equal(r.board.board.rxOverruns, 0, 'and nothing was lost meanwhile');
  t.ok(r.driver.stats.maxInFlightBytes < 128, 'character counting for the rest');
});

t.test('a step rate above 30 kHz: max_speed is bounded by it, and a move still above it is refused with the highest speed that works', async (t) => {
  // A config file whose speed (60) is above what grbl can step on phi.
  const r = await rig(t, { configure: (c) => (c.speedDegS = 60) });
  t.equal(r.driver.maxSpeedDegS(), 37.5, '30,000 steps/s over 800 steps/deg');
  t.equal(r.positioner.settings().maxSpeedDegS, 37.5, 'GET /config says so');
  t.throws(() => r.positioner.updateSettings({ speedDegS: 40 }), { code: 'POS_ERR_OUT_OF_RANGE', message: /between 0\.001 and 37\.5 deg\/s/ }, 'POST /config refuses a faster speed');
  t.throws(() => r.positioner.moveTo(10, 100), { code: 'POS_ERR_HARDWARE', message: /48000 steps\/s on phi .*at most 37\.5 deg\/s/ });
  t.equal(r.positioner.status().state, 'idle', 'nothing started');
  t.match(stepRateProblem({ theta: 320, phi: 800 }, 60, 30_000), /at most 37\.5 deg\/s/);
  t.equal(stepRateProblem({ theta: 320, phi: 800 }, 37.5, 30_000), null);
  t.equal(stepRateProblem({ theta: 320, phi: 800 }, 60, 30_000, { theta: 10, phi: 0 }), null, 'theta alone at 60 deg/s is 19.2 kHz');
});

t.test('a build that homes Z first: ALARM:9 with X and Y untouched is explained with the config.h change', async (t) => {
  const r = await rig(t, { build: { homingCycles: STOCK_BUILD.homingCycles, singleAxisHoming: true } });
  t.equal(r.driver.connectionPhase(), 'ready');
  await home(r);
  const s = r.positioner.status();
  t.equal(s.state, 'error');
  t.equal(s.fault?.code, 'POS_ERR_HOMING_SWITCH_NOT_FOUND');
  t.match(s.fault?.message ?? '', /ALARM:9.*homes another axis \(Z\) first.*HOMING_CYCLE_0 \(\(1<<X_AXIS\)\|\(1<<Y_AXIS\)\)/);
  t.strictSame([s.thetaDeg, s.phiDeg], [0, 0], 'X and Y never moved');
});

t.test('a build without single-axis homing is refused at connection, saying what to change in config.h', async (t) => {
  const r = await rig(t, { build: STOCK_BUILD });
  t.equal(r.driver.connectionPhase(), 'misconfigured');
  const s = r.positioner.status();
  t.equal(s.state, 'error');
  t.match(s.fault?.message ?? '', /HOMING_SINGLE_AXIS_COMMANDS/);
  t.strictSame(checkBuild('1.1h.20190825', 'VH'), []);
  t.match(checkBuild('1.1h.20190825', 'V')[0], /uncomment `#define HOMING_SINGLE_AXIS_COMMANDS`/);
  t.match(checkBuild(null, null)[0], /not grbl 1\.1/);
});

t.test('an alarm raised by the board (hard limit) fails the move; the driver resets it and homing clears it', async (t) => {
  const r = await rig(t);
  await home(r);
  r.positioner.moveTo(20, 40);
  await r.clock.run(1 * SEC);
  r.board.board.raiseAlarm(1);
  await r.clock.runUntil('the fault', () => r.positioner.status().state === 'error', 5 * SEC);
  const s = r.positioner.status();
  t.equal(s.fault?.code, 'POS_ERR_HARDWARE');
  t.match(s.fault?.message ?? '', /ALARM:1 \(hard limit/);
  await r.clock.run(2 * SEC);
  t.equal(r.driver.connectionPhase(), 'ready', 'reset after [MSG:Reset to continue]');
  await home(r);
  t.equal(r.positioner.status().state, 'idle');
  t.equal(r.positioner.status().homed, true);
});

t.test('two banners at connection (the power-up one, then the reset\'s): the first handshake\'s lines are void, settings and moves still go through', async (t) => {
  const r = await rig(t, { twoBanners: true });
  t.equal(r.driver.connectionPhase(), 'ready');
  r.positioner.updateSettings({ accelDegS2: 300, speedDegS: 30 });
  r.positioner.moveTo(0, 30);
  await r.clock.runUntil('the move to end', () => r.positioner.status().state !== 'moving', 10 * SEC);
  t.equal(r.positioner.status().state, 'idle', `ended idle (fault: ${JSON.stringify(r.positioner.status().fault)})`);
  t.equal(r.positioner.status().phiDeg, 30);
});
