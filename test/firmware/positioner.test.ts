/**
 * The positioner firmware on the virtual clock, driving the simulated
 * machine: moves, busy refusals, stop, homing from an unknown power-on
 * position, switch and driver faults, lost steps at over-speed, limits and
 * settings. The simulator's true shaft positions are the ground truth the
 * firmware cannot see.
 *
 * Default machine (cli/assemble.ts): 320 microsteps/deg on theta, 800 on phi;
 * it powers on at theta 37.5 deg, phi 123.25 deg while the firmware believes
 * 0, 0; motors stall above 16000 microsteps/s.
 */
import t, { type Test } from 'tap';
import { PositionerError, type PositionerErrorCode } from '../../firmware/errors';
import { SEC, simOnVirtualClock } from '../helpers/sim';

const THETA_POWER_ON = 37.5 * 320;
const PHI_POWER_ON = 123.25 * 800;
const PHI_REV = 360 * 800;

function throwsCode(t: Test, fn: () => unknown, code: PositionerErrorCode, what: string): void {
  let thrown: unknown = null;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  t.ok(thrown instanceof PositionerError, `${what}: throws a PositionerError`);
  t.equal((thrown as PositionerError | null)?.code, code, `${what}: code ${code}`);
}

type Rig = ReturnType<typeof simOnVirtualClock>;

/** Homes both axes and checks it worked; the firmware frame is then the sim's true frame. */
function homeBoth(t: Test, r: Rig): void {
  r.positioner.home('both');
  r.clock.runUntilIdle();
  t.equal(r.positioner.status().state, 'idle', 'homing completes');
  t.equal(r.positioner.status().homed, true);
}

function stepsReceived(r: Rig): number {
  return r.sim.theta.stepsReceived + r.sim.phi.stepsReceived;
}

t.test('a move reaches its target: firmware status and true shaft position agree', async (t) => {
  const r = simOnVirtualClock();
  const changes: string[] = [];
  r.positioner.onChange(() => changes.push(`${r.positioner.status().state}@${r.clock.nowUs()}`));
  t.same(r.positioner.moveTo(90, 180), { status: 'moving', targetThetaDeg: 90, targetPhiDeg: 180 });
  // phi leads: 180 deg at 10 deg/s after 0.5 s of accel and before 0.5 s of decel: 18.5 s.
  let s = r.positioner.status();
  t.equal(s.state, 'moving');
  t.equal(s.moving, true);

  r.clock.advanceTo(9 * SEC);
  s = r.positioner.status();
  t.equal(s.moving, true, 'moving during the move');
  t.ok(Math.abs(s.axes.phi.velocityDegS - 10) < 1e-9, 'phi cruises at the set speed');
  t.ok(Math.abs(s.axes.theta.velocityDegS - 5) < 1e-9, 'theta at half of it: both axes arrive together');
  t.ok(s.thetaDeg > 0 && s.thetaDeg < 90 && s.phiDeg > 0 && s.phiDeg < 180);
  // Coordinated: the path is a straight line in (theta, phi).
  t.ok(Math.abs(s.thetaDeg / 90 - s.phiDeg / 180) < 1e-3, `on the line: theta ${s.thetaDeg}, phi ${s.phiDeg}`);

  r.clock.advanceTo(18.49 * SEC);
  t.equal(r.positioner.status().moving, true, 'still moving just before the end');
  r.clock.advanceTo(18.51 * SEC);
  s = r.positioner.status();
  t.equal(s.moving, false, 'not moving after the end');
  t.equal(s.state, 'idle');
  t.same(changes, ['moving@0', `idle@${18.5 * SEC}`], 'ends exactly at the planned duration');
  t.equal(s.thetaDeg, 90);
  t.equal(s.phiDeg, 180);
  t.same([s.axes.theta.velocityDegS, s.axes.phi.velocityDegS], [0, 0]);
  t.same([s.axes.theta.positionSteps, s.axes.phi.positionSteps], [90 * 320, 180 * 800]);
  t.equal(r.sim.theta.lostSteps + r.sim.phi.lostSteps, 0, 'no steps lost at the default speed');
  t.equal(r.sim.theta.truePositionSteps, THETA_POWER_ON + 90 * 320, 'theta really moved 90 deg');
  t.equal(r.sim.phi.truePositionSteps, PHI_POWER_ON + 180 * 800, 'phi really moved 180 deg');
  t.equal(s.homed, false, 'not homed: the firmware frame is the power-on position');
});

t.test('a relative move lands on start + delta, in both directions', async (t) => {
  const r = simOnVirtualClock();
  r.positioner.moveTo(20, 30);
  r.clock.runUntilIdle();
  t.same(r.positioner.moveBy(-5.5, 12.25), { status: 'moving', targetThetaDeg: 14.5, targetPhiDeg: 42.25 });
  r.clock.runUntilIdle();
  const s = r.positioner.status();
  t.same([s.thetaDeg, s.phiDeg, s.state], [14.5, 42.25, 'idle']);
  t.equal(r.sim.theta.truePositionSteps, THETA_POWER_ON + 14.5 * 320);
  t.equal(r.sim.phi.truePositionSteps, PHI_POWER_ON + 42.25 * 800);
});

t.test('motion commands while moving or homing throw POS_ERR_BUSY and leave the running motion alone', async (t) => {
  const r = simOnVirtualClock();
  r.positioner.moveTo(10, 20);
  r.clock.advanceBy(0.5 * SEC);
  throwsCode(t, () => r.positioner.moveTo(50, 50), 'POS_ERR_BUSY', 'move while moving');
  throwsCode(t, () => r.positioner.moveBy(1, 1), 'POS_ERR_BUSY', 'relative move while moving');
  throwsCode(t, () => r.positioner.home('both'), 'POS_ERR_BUSY', 'home while moving');
  throwsCode(t, () => r.positioner.home('theta'), 'POS_ERR_BUSY', 'home one axis while moving');
  t.equal(r.positioner.status().state, 'moving');
  r.clock.runUntilIdle();
  const s = r.positioner.status();
  t.same([s.thetaDeg, s.phiDeg, s.state], [10, 20, 'idle'], 'the first move finished as planned');

  r.positioner.home('phi');
  r.clock.advanceBy(0.5 * SEC);
  t.equal(r.positioner.status().state, 'homing');
  t.equal(r.positioner.status().moving, true, 'moving is true while homing');
  throwsCode(t, () => r.positioner.moveTo(50, 50), 'POS_ERR_BUSY', 'move while homing');
  throwsCode(t, () => r.positioner.moveBy(1, 1), 'POS_ERR_BUSY', 'relative move while homing');
  throwsCode(t, () => r.positioner.home('both'), 'POS_ERR_BUSY', 'home while homing');
  r.clock.runUntilIdle();
  t.equal(r.positioner.status().state, 'idle');
  t.equal(r.positioner.status().axes.phi.homed, true);
  t.equal(r.positioner.status().axes.theta.homed, false, 'only phi was homed');
});

t.test('stop mid-move: position strictly between start and target, no step after stop, state stopped', async (t) => {
  const r = simOnVirtualClock();
  r.positioner.moveTo(90, 180);
  r.clock.advanceBy(3 * SEC);
  t.same(r.positioner.stop(), { status: 'stopped' });
  const s = r.positioner.status();
  t.equal(s.state, 'stopped');
  t.equal(s.moving, false);
  t.ok(s.axes.theta.positionSteps > 0 && s.axes.theta.positionSteps < 90 * 320, `theta stopped at ${s.thetaDeg} deg`);
  t.ok(s.axes.phi.positionSteps > 0 && s.axes.phi.positionSteps < 180 * 800, `phi stopped at ${s.phiDeg} deg`);
  t.equal(r.sim.theta.truePositionSteps - THETA_POWER_ON, s.axes.theta.positionSteps, 'the firmware counted every step theta took');
  t.equal(r.sim.phi.truePositionSteps - PHI_POWER_ON, s.axes.phi.positionSteps, 'the firmware counted every step phi took');
  const received = stepsReceived(r);
  r.clock.advanceBy(3600 * SEC);
  t.equal(stepsReceived(r), received, 'no step reaches the motors after stop');
  t.equal(r.clock.pendingTimers(), 0, 'nothing left scheduled');
  t.same(r.positioner.status().axes.theta.positionSteps, s.axes.theta.positionSteps, 'position unchanged');

  t.same(r.positioner.moveTo(45, 90), { status: 'moving', targetThetaDeg: 45, targetPhiDeg: 90 }, 'a new move is accepted after stop');
  r.clock.runUntilIdle();
  const after = r.positioner.status();
  t.same([after.thetaDeg, after.phiDeg, after.state], [45, 90, 'idle']);
  t.equal(r.sim.phi.truePositionSteps, PHI_POWER_ON + 90 * 800);
});

t.test('stop at an arbitrary instant during an advance: no step is timed after it', async (t) => {
  const r = simOnVirtualClock();
  r.sim.theta.startRecording();
  r.sim.phi.startRecording();
  r.positioner.moveTo(90, 180);
  const stopUs = 2_345_678;
  r.clock.setTimerAt(stopUs, () => r.positioner.stop());
  r.clock.advanceBy(60 * SEC);
  const records = [...(r.sim.theta.records ?? []), ...(r.sim.phi.records ?? [])];
  t.ok(records.length > 0);
  t.equal(Math.max(...records.map((rec) => rec.tUs)) < stopUs, true, 'every step is timed before the stop');
  const s = r.positioner.status();
  t.equal(s.state, 'stopped');
  t.equal(s.axes.phi.positionSteps, r.sim.phi.records?.length, 'position = steps actually issued');
});

t.test('stop during homing ends it: stopped, not homed, no further steps', async (t) => {
  const r = simOnVirtualClock();
  r.positioner.home('both');
  r.clock.advanceBy(1 * SEC);
  r.positioner.stop();
  const s = r.positioner.status();
  t.equal(s.state, 'stopped');
  t.equal(s.homed, false);
  t.equal(s.axes.theta.homed, false);
  const received = stepsReceived(r);
  r.clock.advanceBy(600 * SEC);
  t.equal(stepsReceived(r), received);
});

t.test('homing from the unknown power-on position finds the true zero', async (t) => {
  const r = simOnVirtualClock();
  r.sim.theta.startRecording();
  t.equal(r.positioner.status().thetaDeg, 0, 'the firmware believes it powered on at 0');
  t.same(r.positioner.home('both'), { status: 'homing', axis: 'both' });
  t.equal(r.positioner.status().state, 'homing');
  const endUs = r.clock.runUntilIdle();
  t.ok(endUs < 60 * SEC, `homing took ${endUs / SEC} s of virtual time`);
  const s = r.positioner.status();
  t.equal(s.state, 'idle');
  t.equal(s.homed, true);
  t.same([s.axes.theta.homed, s.axes.phi.homed], [true, true]);
  t.same([s.axes.theta.positionSteps, s.axes.phi.positionSteps], [0, 0], 'firmware position 0');
  t.same([r.sim.theta.truePositionSteps, r.sim.phi.truePositionSteps], [0, 0], 'true position 0: the firmware zero is the switch');
  t.same([s.axes.theta.homingErrorSteps, s.axes.phi.homingErrorSteps], [null, null], 'nothing to compare with on the first homing');
  t.equal(r.sim.theta.lostSteps + r.sim.phi.lostSteps, 0);

  // Seek down to the switch, back off up, re-approach down: three runs in alternating direction.
  const runs: { direction: number; steps: number }[] = [];
  for (const rec of r.sim.theta.records ?? []) {
    const last = runs[runs.length - 1];
    if (last && last.direction === rec.direction) last.steps++;
    else runs.push({ direction: rec.direction, steps: 1 });
  }
  t.same(runs, [
    { direction: -1, steps: THETA_POWER_ON },
    { direction: 1, steps: 2 * 320 },
    { direction: -1, steps: 2 * 320 },
  ]);

  // In the homed frame, targets are true angles; a second homing finds no error.
  r.positioner.moveTo(90, 270);
  r.clock.runUntilIdle();
  t.same([r.sim.theta.truePositionSteps, r.sim.phi.truePositionSteps], [90 * 320, 270 * 800]);
  r.positioner.home('both');
  r.clock.runUntilIdle();
  const again = r.positioner.status();
  t.same([again.axes.theta.homingErrorSteps, again.axes.phi.homingErrorSteps], [0, 0], 'no steps lost at the default speed');
  t.same([r.sim.theta.truePositionSteps, r.sim.phi.truePositionSteps], [0, 0]);
});

t.test('homing while already sitting on the switch backs off and re-approaches without seeking', async (t) => {
  // theta exactly at its home point; phi 1 deg short of a full turn, inside the cam's closed arc.
  const r = simOnVirtualClock((_c, s) => {
    s.axes.theta.powerOnDeg = 0;
    s.axes.phi.powerOnDeg = 359;
  });
  t.equal(r.sim.theta.homeSwitch.isTriggered(), true);
  t.equal(r.sim.phi.homeSwitch.isTriggered(), true);
  r.sim.theta.startRecording();
  r.sim.phi.startRecording();
  r.positioner.home('both');
  r.clock.runUntilIdle();
  const s = r.positioner.status();
  t.equal(s.state, 'idle');
  t.equal(s.homed, true);
  t.same([s.axes.theta.positionSteps, s.axes.phi.positionSteps], [0, 0]);
  t.equal(r.sim.theta.truePositionSteps, 0);
  t.equal(r.sim.phi.truePositionSteps, PHI_REV, 'phi zero is the home point one turn up (360 deg = 0 deg)');
  t.equal(r.sim.theta.records?.[0].direction, 1, 'theta starts by backing off, not seeking');
  t.equal(r.sim.phi.records?.[0].direction, 1, 'phi starts by backing off, not seeking');
  t.equal(r.sim.theta.records?.length, 4 * 320, 'theta: back off 2 deg, re-approach 2 deg');
  t.equal(r.sim.phi.records?.length, 2 * 800 + 2 * 800 - 800, 'phi: back off 2 deg, re-approach to the switch 1 deg below');
});

t.test('a switch stuck open ends homing in the error state within the axis travel, not a hang', async (t) => {
  // Axes one after another, so phi's cycle has not started when theta's fails (together: test/firmware/simultaneous-homing.test.ts).
  const r = simOnVirtualClock((c) => (c.simultaneousHoming = false));
  r.sim.theta.faults.switch = 'stuck-open';
  r.positioner.home('both');
  const endUs = r.clock.runUntilIdle();
  // The seek gives up after 1.05 x 180 deg at 10 deg/s: about 19 s.
  t.ok(endUs < 25 * SEC, `gave up after ${endUs / SEC} s of virtual time`);
  t.equal(r.clock.pendingTimers(), 0, 'nothing left running');
  const s = r.positioner.status();
  t.equal(s.state, 'error');
  t.equal(s.moving, false);
  t.equal(s.fault?.code, 'POS_ERR_HOMING_SWITCH_NOT_FOUND');
  t.equal(s.homed, false);
  t.equal(r.sim.phi.stepsReceived, 0, 'phi was not homed after theta failed');
  t.equal(r.sim.theta.stepsReceived, Math.ceil(180 * 1.05 * 320), 'theta travelled exactly the search distance');
  throwsCode(t, () => r.positioner.moveTo(10, 10), 'POS_ERR_FAULT', 'move in the error state');
});

t.test('a phi switch stuck open gives up after 1.05 turns', async (t) => {
  const r = simOnVirtualClock();
  r.sim.phi.faults.switch = 'stuck-open';
  r.positioner.home('phi');
  const endUs = r.clock.runUntilIdle();
  t.ok(endUs < 45 * SEC, `gave up after ${endUs / SEC} s`);
  t.equal(r.positioner.status().fault?.code, 'POS_ERR_HOMING_SWITCH_NOT_FOUND');
  t.equal(r.sim.phi.stepsReceived, Math.ceil(360 * 1.05 * 800));
});

t.test('a switch stuck closed ends homing with POS_ERR_HOMING_SWITCH_STUCK', async (t) => {
  const r = simOnVirtualClock();
  r.sim.theta.faults.switch = 'stuck-closed';
  r.positioner.home('theta');
  const endUs = r.clock.runUntilIdle();
  t.ok(endUs < 5 * SEC, `failed after ${endUs / SEC} s`);
  const s = r.positioner.status();
  t.equal(s.state, 'error');
  t.equal(s.fault?.code, 'POS_ERR_HOMING_SWITCH_STUCK');
  t.equal(s.axes.theta.homed, false);
  t.equal(r.sim.theta.stepsReceived, 2 * 320, 'it only backed off the pull-off distance');

  // Repaired: homing succeeds and clears the fault.
  r.sim.theta.faults.switch = 'none';
  r.positioner.home('theta');
  r.clock.runUntilIdle();
  t.equal(r.positioner.status().state, 'idle');
  t.equal(r.positioner.status().fault, null);
});

t.test('a driver fault mid-move: error state, POS_ERR_HARDWARE, moves refused until a homing succeeds', async (t) => {
  const r = simOnVirtualClock();
  r.positioner.moveTo(90, 180);
  r.clock.advanceBy(2 * SEC);
  r.sim.phi.faults.driver = 'over-temperature';
  r.clock.advanceBy(1 * SEC);
  let s = r.positioner.status();
  t.equal(s.state, 'error');
  t.equal(s.moving, false);
  t.equal(s.fault?.code, 'POS_ERR_HARDWARE');
  t.match(s.fault?.message, /over-temperature/);
  const received = stepsReceived(r);
  r.clock.advanceBy(60 * SEC);
  t.equal(stepsReceived(r), received, 'both axes stopped at the fault');
  t.ok(s.axes.theta.positionSteps > 0 && s.axes.theta.positionSteps < 90 * 320, 'theta stopped part-way');

  throwsCode(t, () => r.positioner.moveTo(10, 10), 'POS_ERR_FAULT', 'move after the fault');
  throwsCode(t, () => r.positioner.moveBy(1, 1), 'POS_ERR_FAULT', 'relative move after the fault');
  r.positioner.stop();
  t.equal(r.positioner.status().state, 'error', 'stop does not clear the fault');
  t.equal(r.positioner.status().fault?.code, 'POS_ERR_HARDWARE');

  // Homing with the driver still failing fails again, and the fault stays.
  r.positioner.home('both');
  r.clock.runUntilIdle();
  t.equal(r.positioner.status().state, 'error');
  t.equal(r.positioner.status().fault?.code, 'POS_ERR_HARDWARE');

  r.sim.phi.faults.driver = null;
  r.positioner.home('both');
  r.clock.runUntilIdle();
  s = r.positioner.status();
  t.equal(s.state, 'idle', 'a successful homing clears the fault');
  t.equal(s.fault, null);
  t.equal(s.homed, true);
  r.positioner.moveTo(10, 10);
  r.clock.runUntilIdle();
  t.same([r.positioner.status().thetaDeg, r.positioner.status().phiDeg], [10, 10]);
  t.same([r.sim.theta.truePositionSteps, r.sim.phi.truePositionSteps], [10 * 320, 10 * 800]);
});

t.test('over-speed: the motor loses steps, the firmware does not know, and homing reveals it', async (t) => {
  const r = simOnVirtualClock();
  homeBoth(t, r);
  r.positioner.updateSettings({ speedDegS: 40 });
  r.positioner.moveTo(0, 300);
  r.clock.runUntilIdle();
  const s = r.positioner.status();
  t.equal(s.state, 'idle', 'the firmware thinks the move succeeded');
  t.equal(s.axes.phi.positionSteps, 300 * 800);
  const lost = r.sim.phi.lostSteps;
  t.ok(lost > 0, `phi lost ${lost} steps at 40 deg/s (32000 microsteps/s)`);
  t.not(r.sim.phi.truePositionSteps, s.axes.phi.positionSteps, 'true position differs from the belief');
  t.equal(s.axes.phi.positionSteps - r.sim.phi.truePositionSteps, lost, 'by exactly the lost steps');
  t.equal(r.sim.theta.lostSteps, 0);

  r.positioner.updateSettings({ speedDegS: 10 });
  r.positioner.home('phi');
  r.clock.runUntilIdle();
  const after = r.positioner.status();
  t.equal(after.state, 'idle');
  t.equal(after.axes.phi.homingErrorSteps, lost, 'homing reports the lost steps');
  t.equal(after.axes.theta.homingErrorSteps, null, 'theta was not re-homed');
  t.equal(r.sim.phi.truePositionSteps, 0, 'and the axis is back on its true zero');
  t.equal(after.axes.phi.positionSteps, 0);
});

t.test('at the default speed a long move loses no steps', async (t) => {
  const r = simOnVirtualClock();
  homeBoth(t, r);
  r.positioner.moveTo(180, 360);
  r.clock.runUntilIdle();
  r.positioner.moveTo(0, 0);
  r.clock.runUntilIdle();
  t.equal(r.sim.theta.lostSteps + r.sim.phi.lostSteps, 0);
  t.same([r.sim.theta.truePositionSteps, r.sim.phi.truePositionSteps], [0, 0]);
});

t.test('limits: targets outside theta 0..180, phi 0..360 are refused, and nothing moves', async (t) => {
  const r = simOnVirtualClock();
  const cases: [string, () => unknown][] = [
    ['theta above 180', () => r.positioner.moveTo(180.01, 0)],
    ['theta below 0', () => r.positioner.moveTo(-0.01, 0)],
    ['phi above 360', () => r.positioner.moveTo(0, 360.01)],
    ['phi below 0', () => r.positioner.moveTo(0, -0.01)],
    ['theta NaN', () => r.positioner.moveTo(NaN, 0)],
    ['phi infinite', () => r.positioner.moveTo(0, Infinity)],
    ['relative theta below 0', () => r.positioner.moveBy(-1, 0)],
    ['relative phi below 0', () => r.positioner.moveBy(0, -0.01)],
    ['relative phi past 360', () => r.positioner.moveBy(10, 361)],
    ['relative theta NaN', () => r.positioner.moveBy(NaN, 0)],
    ['relative phi infinite', () => r.positioner.moveBy(0, Infinity)],
  ];
  for (const [name, fn] of cases) throwsCode(t, fn, 'POS_ERR_OUT_OF_RANGE', name);
  t.equal(r.positioner.status().state, 'idle', 'still idle');
  t.equal(r.clock.pendingTimers(), 0);
  r.clock.advanceBy(10 * SEC);
  t.equal(stepsReceived(r), 0, 'no refused command moved anything');

  // The range ends themselves are allowed, and relative moves up to them.
  r.positioner.moveTo(170, 350);
  r.clock.runUntilIdle();
  throwsCode(t, () => r.positioner.moveBy(10.01, 0), 'POS_ERR_OUT_OF_RANGE', 'relative theta past 180');
  throwsCode(t, () => r.positioner.moveBy(0, 10.01), 'POS_ERR_OUT_OF_RANGE', 'relative phi past 360');
  r.positioner.moveBy(10, 10);
  r.clock.runUntilIdle();
  t.same([r.positioner.status().thetaDeg, r.positioner.status().phiDeg], [180, 360]);
  r.positioner.moveTo(0, 0);
  r.clock.runUntilIdle();
  t.same([r.positioner.status().thetaDeg, r.positioner.status().phiDeg], [0, 0]);
});

t.test('updateSettings: speed and accel within (0, max] are taken by the next move; others refused, nothing applied', async (t) => {
  const r = simOnVirtualClock();
  const before = r.positioner.settings();
  t.same([before.speedDegS, before.accelDegS2, before.maxSpeedDegS, before.maxAccelDegS2], [10, 20, 60, 500]);
  t.same(before.stepsPerDeg, { theta: 320, phi: 800 });
  const bad: [string, { speedDegS?: number; accelDegS2?: number }][] = [
    ['zero speed', { speedDegS: 0 }],
    ['negative speed', { speedDegS: -5 }],
    ['NaN speed', { speedDegS: NaN }],
    ['speed above the maximum', { speedDegS: 60.001 }],
    ['infinite speed', { speedDegS: Infinity }],
    ['zero accel', { accelDegS2: 0 }],
    ['negative accel', { accelDegS2: -1 }],
    ['accel above the maximum', { accelDegS2: 500.1 }],
    ['good speed with bad accel', { speedDegS: 30, accelDegS2: 0 }],
  ];
  for (const [name, update] of bad) throwsCode(t, () => r.positioner.updateSettings(update), 'POS_ERR_OUT_OF_RANGE', name);
  t.same(r.positioner.settings(), before, 'nothing changed');

  t.equal(r.positioner.updateSettings({ speedDegS: 60 }).speedDegS, 60, 'the maximum itself is allowed');
  const updated = r.positioner.updateSettings({ speedDegS: 15, accelDegS2: 30 });
  t.same([updated.speedDegS, updated.accelDegS2], [15, 30]);
  r.positioner.moveTo(0, 90);
  // Reaches 15 deg/s after 0.5 s at 30 deg/s^2.
  r.clock.advanceBy(0.25 * SEC);
  t.ok(Math.abs(r.positioner.status().axes.phi.velocityDegS - 7.5) < 1e-9, 'accelerates at the new accel');
  r.clock.advanceBy(2 * SEC);
  t.ok(Math.abs(r.positioner.status().axes.phi.velocityDegS - 15) < 1e-9, 'cruises at the new speed');
  // A change during a move applies to the next one only.
  r.positioner.updateSettings({ speedDegS: 5 });
  r.clock.advanceBy(1 * SEC);
  t.ok(Math.abs(r.positioner.status().axes.phi.velocityDegS - 15) < 1e-9, 'the running move keeps its speed');
  r.clock.runUntilIdle();
  r.positioner.moveTo(0, 0);
  r.clock.advanceBy(3 * SEC);
  t.ok(Math.abs(r.positioner.status().axes.phi.velocityDegS + 5) < 1e-9, 'the next move uses the new speed');
});

t.test('motion energises the drivers: a released motor is enabled by the next move and then follows it', (t) => {
  const { positioner, clock, sim } = simOnVirtualClock();
  sim.theta.stepper.setEnabled(false);
  sim.phi.stepper.setEnabled(false);
  const before = sim.theta.truePositionSteps;
  positioner.moveTo(1, 1);
  t.equal(sim.theta.enabled, true);
  t.equal(sim.phi.enabled, true);
  clock.runUntilIdle();
  t.equal(sim.theta.truePositionSteps - before, 320, 'theta really moved 1 deg');
  t.equal(sim.theta.lostSteps + sim.phi.lostSteps, 0);
  t.end();
});

t.test('a driver that cannot be enabled fails the move at once into the error state, and no step is issued', (t) => {
  const { positioner, clock, sim } = simOnVirtualClock();
  sim.phi.faults.driver = 'enable line stuck';
  positioner.moveTo(5, 5);
  const s = positioner.status();
  t.equal(s.state, 'error');
  t.equal(s.fault?.code, 'POS_ERR_HARDWARE');
  t.match(s.fault?.message, /enable line stuck/);
  clock.runUntilIdle();
  t.equal(sim.theta.stepsReceived + sim.phi.stepsReceived, 0);
  t.end();
});
