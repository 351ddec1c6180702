/**
 * Both axes home at the same time (the default, `simultaneous_homing`), each
 * on its own step executor, on the virtual clock: the homing takes as long as
 * the slower axis instead of the sum, both still find their true zero, the
 * status says where each axis's cycle is, a failing axis stops the other, and
 * STOP halts both. `/status` also carries the target of a move in progress.
 */
import t from 'tap';
import { SEC, simOnVirtualClock } from '../helpers/sim';

type Rig = ReturnType<typeof simOnVirtualClock>;

/** Both axes powered on 60 deg above their switches: the same homing work on each. */
function rig(simultaneous: boolean): Rig {
  return simOnVirtualClock((c, s) => {
    c.simultaneousHoming = simultaneous;
    s.axes.theta.powerOnDeg = 60;
    s.axes.phi.powerOnDeg = 60;
  });
}

/** Homes both axes from power-on; returns the virtual time it took, in seconds. */
function homingTimeSec(r: Rig): number {
  const startUs = r.clock.nowUs();
  r.positioner.home('both');
  const endUs = r.clock.runUntilIdle();
  return (endUs - startUs) / SEC;
}

t.test('homing both axes together takes half the time of one after the other, and finds the same zero', async (t) => {
  const together = rig(true);
  const apart = rig(false);
  const togetherSec = homingTimeSec(together);
  const apartSec = homingTimeSec(apart);
  const ratio = togetherSec / apartSec;
  t.ok(ratio > 0.45 && ratio < 0.55, `together ${togetherSec.toFixed(3)} s, one after the other ${apartSec.toFixed(3)} s: ratio ${ratio.toFixed(3)}`);
  for (const r of [together, apart]) {
    const s = r.positioner.status();
    t.equal(s.state, 'idle');
    t.equal(s.homed, true);
    t.same([s.axes.theta.positionSteps, s.axes.phi.positionSteps], [0, 0]);
    t.equal(r.sim.theta.truePositionSteps, 0, 'theta at its true zero');
    t.equal(r.sim.phi.truePositionSteps, 0, 'phi at its true zero');
  }
});

t.test('the default config homes both axes at once', async (t) => {
  const r = simOnVirtualClock();
  t.equal(r.config.simultaneousHoming, true);
  r.positioner.home('both');
  r.clock.advanceTo(r.clock.nowUs() + SEC);
  const s = r.positioner.status();
  t.ok(s.axes.theta.velocityDegS < 0 && s.axes.phi.velocityDegS < 0, `both seek toward their switches at once (${s.axes.theta.velocityDegS}, ${s.axes.phi.velocityDegS} deg/s)`);
});

t.test("the status names each axis's homing phase: together both seek; apart phi waits", async (t) => {
  const together = rig(true);
  together.positioner.home('both');
  together.clock.advanceTo(together.clock.nowUs() + SEC);
  let s = together.positioner.status();
  t.same([s.axes.theta.homingPhase, s.axes.phi.homingPhase], ['seek', 'seek']);
  t.equal(s.target, null, 'a homing has no move target');
  // 60 deg at 10 deg/s: both reach their switches at about 6 s, then back off and re-approach.
  const seen = new Set<string>();
  while (together.positioner.status().state === 'homing') {
    together.clock.advanceTo(together.clock.nowUs() + SEC / 20);
    s = together.positioner.status();
    seen.add(`${s.axes.theta.homingPhase}`);
  }
  t.ok(['back_off', 'approach'].every((p) => seen.has(p)), `theta went through back_off and approach (${[...seen].join(', ')})`);
  t.same([s.axes.theta.homingPhase, s.axes.phi.homingPhase], [null, null], 'no phase once homed');

  const apart = rig(false);
  apart.positioner.home('both');
  apart.clock.advanceTo(apart.clock.nowUs() + SEC);
  s = apart.positioner.status();
  t.same([s.axes.theta.homingPhase, s.axes.phi.homingPhase], ['seek', 'waiting']);
  t.equal(s.axes.phi.velocityDegS, 0, 'phi waits for theta');
});

t.test('an axis whose switch is stuck stops the other axis that homes with it', async (t) => {
  const r = simOnVirtualClock((c, s) => {
    s.axes.phi.powerOnDeg = 300;
  });
  r.sim.theta.faults.switch = 'stuck-closed';
  r.positioner.home('both');
  r.clock.runUntilIdle();
  const s = r.positioner.status();
  t.equal(s.state, 'error');
  t.equal(s.fault?.code, 'POS_ERR_HOMING_SWITCH_STUCK');
  t.equal(s.axes.phi.homed, false, 'phi did not finish');
  const phiSteps = r.sim.phi.stepsReceived;
  t.ok(phiSteps > 0 && phiSteps < 60 * 800, `phi moved only until theta failed (${phiSteps} steps)`);
  t.equal(r.clock.pendingTimers(), 0, 'nothing left running');
});

t.test('STOP during a simultaneous homing halts both axes at once', async (t) => {
  const r = rig(true);
  r.positioner.home('both');
  r.clock.advanceTo(r.clock.nowUs() + 2 * SEC);
  r.positioner.stop();
  const steps = [r.sim.theta.stepsReceived, r.sim.phi.stepsReceived];
  t.ok(steps[0] > 0 && steps[1] > 0, 'both had moved');
  r.clock.runUntilIdle();
  t.same([r.sim.theta.stepsReceived, r.sim.phi.stepsReceived], steps, 'no step after the stop');
  const s = r.positioner.status();
  t.equal(s.state, 'stopped');
  t.same([s.axes.theta.homingPhase, s.axes.phi.homingPhase], [null, null]);
  t.same([s.axes.theta.velocityDegS, s.axes.phi.velocityDegS], [0, 0]);
});

t.test('the status carries the target of the move in progress, and null once it ends', async (t) => {
  const r = simOnVirtualClock();
  t.equal(r.positioner.status().target, null, 'no target at rest');
  r.positioner.moveTo(45.5, 91);
  r.clock.advanceTo(r.clock.nowUs() + SEC);
  t.same(r.positioner.status().target, { thetaDeg: 45.5, phiDeg: 91 }, 'the target while moving');
  r.clock.runUntilIdle();
  t.equal(r.positioner.status().state, 'idle');
  t.equal(r.positioner.status().target, null, 'none after arrival');
  r.positioner.moveBy(10, -20);
  t.same(r.positioner.status().target, { thetaDeg: 55.5, phiDeg: 71 }, 'a relative move gives the absolute target');
  r.positioner.stop();
  t.equal(r.positioner.status().target, null, 'none after a stop');
});
