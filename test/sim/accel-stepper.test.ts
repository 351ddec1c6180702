/**
 * The AccelStepper model (sim/accel-stepper.ts) against the library's own
 * description (AccelStepper.cpp, REFERENCE.md): David Austin's c0/cn ramp,
 * the speed ceiling, stop() as a deceleration, and what survives a stop.
 */
import fc from 'fast-check';
import t from 'tap';
import { AccelStepperModel } from '../../sim/accel-stepper';

/** Runs the model as an infinitely fast loop would, from `startUs`; returns the step times. */
function runToEnd(m: AccelStepperModel, startUs = 1e6, limit = 1e6): number[] {
  const times: number[] = [];
  let tUs = startUs;
  for (let i = 0; i < limit; i++) {
    const { stepped, running } = m.run(tUs);
    if (stepped !== 0) times.push(tUs);
    if (!running) break;
    tUs = m.nextDueUs() ?? tUs;
  }
  return times;
}

t.test('c0 = 0.676 sqrt(2/a), c_n = c_{n-1} - 2 c_{n-1} / (4n + 1); the first step leaves at once (its c0 is spent waiting on a step long past)', (t) => {
  const m = new AccelStepperModel();
  m.setMaxSpeed(1000);
  m.setAcceleration(500);
  m.moveTo(2000);
  const c0 = 0.676 * Math.sqrt(2 / 500) * 1e6;
  t.equal(m.stepIntervalUs, Math.trunc(c0), `c0 ${c0.toFixed(1)} us`);
  const times = runToEnd(m);
  t.equal(times[0], 1e6, 'the first step at once');
  let cn = c0;
  for (let n = 1; n < 5; n++) {
    cn = cn - (2 * cn) / (4 * n + 1);
    t.ok(Math.abs(times[n] - times[n - 1] - cn) <= 1, `c${n} ${cn.toFixed(1)} us (got ${times[n] - times[n - 1]})`);
  }
  t.equal(times.length, 2000, 'every step, then rest');
  t.equal(m.currentPos, 2000);
  t.equal(m.speedStepsS, 0);
  t.end();
});

t.test('never faster than maxSpeed; a symmetric trapezoid ends at rest on the target', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 3000 }), fc.integer({ min: 50, max: 4000 }), fc.integer({ min: 50, max: 20_000 }), (distance, speed, accel) => {
      const m = new AccelStepperModel();
      m.setMaxSpeed(speed);
      m.setAcceleration(accel);
      m.moveTo(distance);
      const times = runToEnd(m);
      const minGap = Math.min(...times.slice(1).map((x, i) => x - times[i]));
      return m.currentPos === distance && times.length === distance && (times.length < 2 || minGap >= Math.trunc(1e6 / speed) - 1);
    }),
    { numRuns: 60 },
  );
  t.end();
});

t.test('stop() decelerates (v^2 / 2a + 1 steps more); setCurrentPosition() forgets the speed', (t) => {
  const m = new AccelStepperModel();
  m.setMaxSpeed(4000);
  m.setAcceleration(4000);
  m.moveTo(1_000_000);
  let tUs = 1e6;
  for (let i = 0; i < 3000; i++) {
    m.run(tUs);
    tUs = m.nextDueUs()!;
  }
  const v = m.speedStepsS;
  const at = m.currentPos;
  m.stop();
  t.equal(m.targetPos - at, Math.trunc((v * v) / (2 * 4000)) + 1, `target moved ${m.targetPos - at} steps ahead at ${v.toFixed(0)} steps/s`);
  // A new target behind: the ramp still runs forward first (the run-on seen after ACCELSTEPPER_STOP).
  m.moveTo(at - 100);
  const { stepped } = m.run(tUs);
  t.equal(stepped, 1, 'the next step is still forward');
  m.setCurrentPosition(0);
  t.strictSame([m.speedStepsS, m.n, m.stepIntervalUs], [0, 0, 0], 'ZERO clears speed, n and the interval');
  m.moveTo(-100);
  t.equal(m.run(tUs + 1e6).stepped, -1, 'after it the first step goes toward the target');
  t.end();
});
