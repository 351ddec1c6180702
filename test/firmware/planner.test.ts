/**
 * The planner's invariants (see the header of firmware/planner.ts), checked on
 * hand-picked moves and as fast-check properties over random moves.
 *
 * Every check works on the step times the executor will use (stepTimeSec),
 * never on the plan's own summary fields alone, so a wrong closed form for the
 * step times cannot hide behind a right-looking duration.
 *
 * Float tolerance: a step time t carries a rounding error of a few ulps of the
 * move's duration, growing like sqrt(N) near the end of the deceleration (where
 * D - x cancels). Limits are checked with that error propagated into the
 * quantity compared, plus a relative 1e-9; nothing looser.
 */
import fc from 'fast-check';
import t from 'tap';
import { defaultConfig, axisStepsPerDeg } from '../../firmware/config';
import type { AxisMoveInput, MovePlan } from '../../firmware/planner';
import { PlanError, planMove } from '../../firmware/planner';

const THETA_PER_DEG = axisStepsPerDeg(defaultConfig(), 'theta');
const PHI_PER_DEG = axisStepsPerDeg(defaultConfig(), 'phi');
const REL = 1e-9;

t.test('the default drive trains give 320 and 800 microsteps per degree', async (t) => {
  t.equal(THETA_PER_DEG, 320);
  t.equal(PHI_PER_DEG, 800);
});

/** Step times 1..N of one axis, preceded by t = 0 (the start, at rest). */
function stepTimes(plan: MovePlan, axisIndex: number): number[] {
  const n = plan.axes[axisIndex].steps;
  const times = new Array<number>(n + 1);
  times[0] = 0;
  for (let k = 1; k <= n; k++) times[k] = plan.stepTimeSec(axisIndex, k);
  return times;
}

/** Absolute rounding error to allow in a step time of this plan (see header). */
function timeErrorSec(plan: MovePlan, axisIndex: number): number {
  return 16 * Number.EPSILON * plan.durationSec * (1 + Math.sqrt(plan.axes[axisIndex].steps));
}

/** Axis limits in microsteps: the path limits scaled by this axis's share of the move. */
function axisLimits(plan: MovePlan, axisIndex: number, speedDegS: number, accelDegS2: number, stepsPerDeg: number) {
  const share = plan.axes[axisIndex].distanceDeg / plan.distanceDeg;
  return { speed: speedDegS * stepsPerDeg * share, accel: accelDegS2 * stepsPerDeg * share };
}

interface Violation {
  k: number;
  value: number;
  limit: number;
}

/** (a) 1 / interval between consecutive steps (and from the start to step 1) never exceeds the axis speed limit. */
function speedViolation(times: number[], limit: number, errSec: number): Violation | null {
  for (let k = 1; k < times.length; k++) {
    const dt = times[k] - times[k - 1];
    if (!(dt > 0)) return { k, value: Infinity, limit };
    const rate = 1 / dt;
    const tol = limit * REL + (2 * errSec) / (dt * dt);
    if (rate > limit + tol) return { k, value: rate, limit };
  }
  return null;
}

/**
 * (b) With x(t_k) = k and |x''| <= a, every second divided difference
 * satisfies 2*|[t0,t1,t2]x| <= a. The start and the end are at rest, so the
 * confluent differences [0,0,t1]x = 1/t1^2 and [t_{N-1},T,T]x = -1/dt^2 obey
 * the same bound: the first step from rest and the last step into rest.
 */
function accelViolation(times: number[], limit: number, errSec: number): Violation | null {
  const n = times.length - 1;
  if (n === 0) return null;
  const first = times[1];
  const firstTol = limit * REL + (4 * errSec) / first ** 3;
  if (2 / (first * first) > limit + firstTol) return { k: 1, value: 2 / (first * first), limit };
  const last = times[n] - times[n - 1];
  const lastTol = limit * REL + (8 * errSec) / last ** 3;
  if (2 / (last * last) > limit + lastTol) return { k: n, value: 2 / (last * last), limit };
  for (let k = 1; k + 1 <= n; k++) {
    const d1 = times[k] - times[k - 1];
    const d2 = times[k + 1] - times[k];
    const dd = (1 / d2 - 1 / d1) / (d1 + d2);
    // Slope 1/d carries error ~2*err/d^2; propagate both into the difference.
    const tol = limit * REL + (2 * ((2 * errSec) / (d1 * d1) + (2 * errSec) / (d2 * d2))) / (d1 + d2);
    if (2 * Math.abs(dd) > limit + tol) return { k, value: 2 * Math.abs(dd), limit };
  }
  return null;
}

/** All four planner invariants (a)-(d) for one plan, reported as failing messages (empty when all hold). */
function invariantFailures(inputs: readonly AxisMoveInput[], speedDegS: number, accelDegS2: number): string[] {
  const plan = planMove(inputs, speedDegS, accelDegS2);
  const failures: string[] = [];
  inputs.forEach((input, i) => {
    const ax = plan.axes[i];
    const n = Math.abs(input.targetSteps - input.startSteps);
    // (c) exactly |target - start| steps, in the direction that ends on the target microstep.
    if (ax.steps !== n) failures.push(`axis ${i}: ${ax.steps} steps planned, expected ${n}`);
    if (input.startSteps + ax.direction * ax.steps !== input.targetSteps) {
      failures.push(`axis ${i}: ends on ${input.startSteps + ax.direction * ax.steps}, target ${input.targetSteps}`);
    }
    if (n === 0) return;
    const times = stepTimes(plan, i);
    // (d) the last step of every axis is at the end of the move, after the step before it.
    if (times[n] !== plan.durationSec) failures.push(`axis ${i}: last step at ${times[n]} s, move ends at ${plan.durationSec} s`);
    if (!(times[n - 1] < plan.durationSec)) failures.push(`axis ${i}: step ${n - 1} at ${times[n - 1]} s is not before the end`);
    const err = timeErrorSec(plan, i);
    const lim = axisLimits(plan, i, speedDegS, accelDegS2, input.stepsPerDeg);
    const sv = speedViolation(times, lim.speed, err);
    if (sv) failures.push(`axis ${i}: step rate ${sv.value} /s at step ${sv.k} exceeds ${sv.limit} /s`);
    const av = accelViolation(times, lim.accel, err);
    if (av) failures.push(`axis ${i}: acceleration ${av.value} /s^2 at step ${av.k} exceeds ${av.limit} /s^2`);
  });
  return failures;
}

/** For fast-check properties: throws with every broken invariant listed. */
function assertInvariants(inputs: readonly AxisMoveInput[], speedDegS: number, accelDegS2: number): void {
  const failures = invariantFailures(inputs, speedDegS, accelDegS2);
  if (failures.length > 0) throw new Error(failures.join('\n'));
}

/** Step k of each axis happens within 1 us of the time the analytic profile reaches D*k/N. */
function profileMismatches(plan: MovePlan): string[] {
  const out: string[] = [];
  plan.axes.forEach((ax, i) => {
    for (let k = 1; k <= ax.steps; k++) {
      const tSec = plan.stepTimeSec(i, k);
      // The last step is the end of the path itself (D*N/N may round off D).
      const xDeg = k === ax.steps ? plan.distanceDeg : (plan.distanceDeg * k) / ax.steps;
      const before = plan.pathDegAt(tSec - 1e-6);
      const after = plan.pathDegAt(tSec + 1e-6);
      if (!(before <= xDeg && xDeg <= after)) {
        out.push(`axis ${i} step ${k} at ${tSec} s: profile is at ${before}..${after} deg within 1 us, step is at ${xDeg} deg`);
        if (out.length > 5) return;
      }
    }
  });
  return out;
}

const speedArb = fc.double({ min: 0.05, max: 60, noNaN: true });
const accelArb = fc.double({ min: 0.05, max: 500, noNaN: true });
const microstepArb = fc.integer({ min: -60_000, max: 60_000 });
const perDegArb = fc.oneof(fc.constant(THETA_PER_DEG), fc.constant(PHI_PER_DEG), fc.double({ min: 0.5, max: 2000, noNaN: true }));

const moveArb = fc.record({
  theta: fc.record({ startSteps: microstepArb, targetSteps: microstepArb, stepsPerDeg: perDegArb }),
  phi: fc.record({ startSteps: microstepArb, targetSteps: microstepArb, stepsPerDeg: perDegArb }),
  speedDegS: speedArb,
  accelDegS2: accelArb,
});

t.test('properties over random two-axis moves', async (t) => {
  t.test('speed and acceleration limits hold, every axis lands on its target, and both arrive together', async (t) => {
    fc.assert(
      fc.property(moveArb, ({ theta, phi, speedDegS, accelDegS2 }) => assertInvariants([theta, phi], speedDegS, accelDegS2)),
      { numRuns: 300 },
    );
    t.pass('300 random moves');
  });

  t.test('the same holds at the real resolutions (320 and 800 /deg) over the full axis travel', async (t) => {
    const theta = fc.record({ startSteps: fc.integer({ min: 0, max: 180 * THETA_PER_DEG }), targetSteps: fc.integer({ min: 0, max: 180 * THETA_PER_DEG }) });
    const phi = fc.record({ startSteps: fc.integer({ min: 0, max: 360 * PHI_PER_DEG }), targetSteps: fc.integer({ min: 0, max: 360 * PHI_PER_DEG }) });
    fc.assert(
      fc.property(theta, phi, speedArb, accelArb, (th, ph, speedDegS, accelDegS2) =>
        assertInvariants([{ ...th, stepsPerDeg: THETA_PER_DEG }, { ...ph, stepsPerDeg: PHI_PER_DEG }], speedDegS, accelDegS2),
      ),
      { numRuns: 40 },
    );
    t.pass('40 full-range moves');
  });

  t.test('short moves (a few microsteps) keep the limits too', async (t) => {
    const tiny = fc.integer({ min: -4, max: 4 });
    fc.assert(
      fc.property(tiny, tiny, perDegArb, perDegArb, speedArb, accelArb, (dTheta, dPhi, pTheta, pPhi, speedDegS, accelDegS2) =>
        assertInvariants(
          [
            { startSteps: 100, targetSteps: 100 + dTheta, stepsPerDeg: pTheta },
            { startSteps: -7, targetSteps: -7 + dPhi, stepsPerDeg: pPhi },
          ],
          speedDegS,
          accelDegS2,
        ),
      ),
      { numRuns: 300 },
    );
    t.pass('300 short moves');
  });

  t.test('each step is within 1 us of the analytic profile', async (t) => {
    fc.assert(
      fc.property(moveArb, ({ theta, phi, speedDegS, accelDegS2 }) => {
        const mismatches = profileMismatches(planMove([theta, phi], speedDegS, accelDegS2));
        if (mismatches.length > 0) throw new Error(mismatches.join('\n'));
      }),
      { numRuns: 150 },
    );
    t.pass('150 random moves');
  });

  t.test('triangle exactly when the move is shorter than v^2/a, with the closed-form duration', async (t) => {
    fc.assert(
      fc.property(moveArb, ({ theta, phi, speedDegS, accelDegS2 }) => {
        const plan = planMove([theta, phi], speedDegS, accelDegS2);
        const d = Math.max(Math.abs(theta.targetSteps - theta.startSteps) / theta.stepsPerDeg, Math.abs(phi.targetSteps - phi.startSteps) / phi.stepsPerDeg);
        const close = (a: number, b: number) => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b));
        if (!close(plan.distanceDeg, d)) throw new Error(`distance ${plan.distanceDeg}, expected ${d}`);
        if (d === 0) {
          if (plan.shape !== 'none' || plan.durationSec !== 0) throw new Error(`zero move planned as ${plan.shape} of ${plan.durationSec} s`);
        } else if (d < (speedDegS * speedDegS) / accelDegS2) {
          if (plan.shape !== 'triangle') throw new Error(`short move (${d} deg < v^2/a) planned as ${plan.shape}`);
          if (!(plan.peakSpeedDegS <= speedDegS)) throw new Error(`triangle peaks at ${plan.peakSpeedDegS} > ${speedDegS}`);
          if (!close(plan.durationSec, 2 * Math.sqrt(d / accelDegS2))) throw new Error(`triangle lasts ${plan.durationSec} s`);
        } else {
          if (plan.shape !== 'trapezoid') throw new Error(`long move (${d} deg >= v^2/a) planned as ${plan.shape}`);
          if (plan.peakSpeedDegS !== speedDegS) throw new Error(`trapezoid cruises at ${plan.peakSpeedDegS}, not ${speedDegS}`);
          if (!close(plan.durationSec, d / speedDegS + speedDegS / accelDegS2)) throw new Error(`trapezoid lasts ${plan.durationSec} s`);
        }
      }),
      { numRuns: 500 },
    );
    t.pass('500 random moves');
  });
});

/** Inputs of a move at the real resolutions: [start, target] microsteps per axis. */
function realMove(theta: [number, number], phi: [number, number]): AxisMoveInput[] {
  return [
    { startSteps: theta[0], targetSteps: theta[1], stepsPerDeg: THETA_PER_DEG },
    { startSteps: phi[0], targetSteps: phi[1], stepsPerDeg: PHI_PER_DEG },
  ];
}

t.test('a long move is a trapezoid: accelerate, cruise at the set speed, decelerate', async (t) => {
  // phi 90 deg at 10 deg/s, 20 deg/s^2: 0.5 s and 2.5 deg to reach speed, 8.5 s cruising.
  const plan = planMove(realMove([0, 0], [0, 90 * PHI_PER_DEG]), 10, 20);
  t.equal(plan.shape, 'trapezoid');
  t.equal(plan.distanceDeg, 90);
  t.equal(plan.peakSpeedDegS, 10);
  t.equal(plan.accelTimeSec, 0.5);
  t.equal(plan.cruiseTimeSec, 8.5);
  t.equal(plan.durationSec, 9.5);
  t.equal(plan.pathDegAt(0.5), 2.5);
  t.equal(plan.pathSpeedAt(5), 10);
  t.equal(plan.pathSpeedAt(0.25), 5);
  t.equal(plan.pathSpeedAt(9.25), 5);
  // Cruising at 10 deg/s and 800 /deg: one step every 125 us.
  const mid = 45 * PHI_PER_DEG;
  t.ok(Math.abs(plan.stepTimeSec(1, mid + 1) - plan.stepTimeSec(1, mid) - 125e-6) < 1e-12);
  // From rest: step 1 at x = 1/800 deg, t = sqrt(2x/a).
  t.ok(Math.abs(plan.stepTimeSec(1, 1) - Math.sqrt((2 / 800) / 20)) < 1e-15);
  t.equal(plan.stepTimeSec(1, 90 * PHI_PER_DEG), 9.5);
  t.same(invariantFailures(realMove([0, 0], [0, 90 * PHI_PER_DEG]), 10, 20), [], 'and keeps every invariant');
});

t.test('a short move is a triangle that never reaches the set speed', async (t) => {
  // 1 deg at 20 deg/s^2: v^2/a = 5 deg > 1 deg, so peak sqrt(20) deg/s at t = sqrt(1/20) s.
  const plan = planMove([{ startSteps: 320, targetSteps: 0, stepsPerDeg: THETA_PER_DEG }], 10, 20);
  t.equal(plan.shape, 'triangle');
  t.equal(plan.cruiseTimeSec, 0);
  t.ok(Math.abs(plan.peakSpeedDegS - Math.sqrt(20)) < 1e-12);
  t.ok(Math.abs(plan.durationSec - 2 * Math.sqrt(1 / 20)) < 1e-12);
  t.equal(plan.axes[0].direction, -1);
  t.equal(plan.axes[0].steps, 320);
  // Half way in steps is half way in time (symmetric profile).
  t.ok(Math.abs(plan.stepTimeSec(0, 160) - plan.durationSec / 2) < 1e-12);
});

t.test('a coordinated move: the shorter axis runs slower so both arrive together', async (t) => {
  // theta 10 deg (3200 steps), phi 40 deg (32000 steps): phi dominates; theta moves at a quarter of the path speed.
  const plan = planMove(realMove([3200, 6400], [32000, 0]), 10, 20);
  t.equal(plan.distanceDeg, 40);
  t.same(plan.axes.map((a) => [a.steps, a.direction, a.distanceDeg]), [
    [3200, 1, 10],
    [32000, -1, 40],
  ]);
  t.equal(plan.stepTimeSec(0, 3200), plan.durationSec);
  t.equal(plan.stepTimeSec(1, 32000), plan.durationSec);
  // Theta step 1600 and phi step 16000 are the same point of the path: mid-move.
  t.ok(Math.abs(plan.stepTimeSec(0, 1600) - plan.stepTimeSec(1, 16000)) < 1e-12);
  // Cruise: theta at 2.5 deg/s = 800 steps/s, phi at 10 deg/s = 8000 steps/s.
  t.ok(Math.abs(plan.stepTimeSec(0, 1601) - plan.stepTimeSec(0, 1600) - 1 / 800) < 1e-12);
  t.ok(Math.abs(plan.stepTimeSec(1, 16001) - plan.stepTimeSec(1, 16000) - 1 / 8000) < 1e-12);
});

t.test('a zero-length move plans nothing and takes no time', async (t) => {
  const plan = planMove(realMove([5, 5], [-3, -3]), 10, 20);
  t.equal(plan.shape, 'none');
  t.equal(plan.distanceDeg, 0);
  t.equal(plan.durationSec, 0);
  t.same(plan.axes.map((a) => a.steps), [0, 0]);
  t.equal(plan.pathDegAt(1), 0);
  t.equal(plan.pathSpeedAt(0), 0);
});

t.test('an axis that does not move gets no steps while the other moves', async (t) => {
  const plan = planMove(realMove([1000, 1000], [0, 800]), 10, 20);
  t.equal(plan.axes[0].steps, 0);
  t.equal(plan.axes[0].distanceDeg, 0);
  t.equal(plan.axes[1].steps, 800);
  t.equal(plan.distanceDeg, 1);
  t.ok(plan.durationSec > 0);
});

t.test('a single-microstep move starts and ends at rest', async (t) => {
  const plan = planMove([{ startSteps: 0, targetSteps: 1, stepsPerDeg: PHI_PER_DEG }], 10, 20);
  t.equal(plan.shape, 'triangle');
  t.equal(plan.stepTimeSec(0, 1), plan.durationSec);
  // 1/800 deg in a triangle at 20 deg/s^2: T = 2*sqrt(D/a).
  t.ok(Math.abs(plan.durationSec - 2 * Math.sqrt(1 / 800 / 20)) < 1e-15);
});

t.test('invalid inputs throw PlanError', async (t) => {
  const ok: AxisMoveInput = { startSteps: 0, targetSteps: 100, stepsPerDeg: 320 };
  const cases: [string, () => unknown][] = [
    ['zero speed', () => planMove([ok], 0, 20)],
    ['negative speed', () => planMove([ok], -1, 20)],
    ['NaN speed', () => planMove([ok], NaN, 20)],
    ['infinite speed', () => planMove([ok], Infinity, 20)],
    ['zero accel', () => planMove([ok], 10, 0)],
    ['negative accel', () => planMove([ok], 10, -5)],
    ['NaN accel', () => planMove([ok], 10, NaN)],
    ['infinite accel', () => planMove([ok], 10, Infinity)],
    ['fractional start', () => planMove([{ ...ok, startSteps: 0.5 }], 10, 20)],
    ['fractional target', () => planMove([{ ...ok, targetSteps: 99.9 }], 10, 20)],
    ['NaN target', () => planMove([{ ...ok, targetSteps: NaN }], 10, 20)],
    ['zero steps/deg', () => planMove([{ ...ok, stepsPerDeg: 0 }], 10, 20)],
    ['negative steps/deg', () => planMove([{ ...ok, stepsPerDeg: -320 }], 10, 20)],
    ['NaN steps/deg', () => planMove([{ ...ok, stepsPerDeg: NaN }], 10, 20)],
    // Infinite steps/deg would make every step 0 deg long: all steps at t = 0, no speed limit at all.
    ['infinite steps/deg', () => planMove([{ ...ok, stepsPerDeg: Infinity }], 10, 20)],
  ];
  for (const [name, fn] of cases) {
    let thrown: unknown = null;
    try {
      fn();
    } catch (error) {
      thrown = error;
    }
    t.ok(thrown instanceof PlanError, `${name}: throws PlanError`);
    t.equal((thrown as PlanError | null)?.code, 'PLAN_INVALID', `${name}: code`);
  }
});
