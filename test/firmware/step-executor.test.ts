/**
 * The step executor on a virtual clock, stepping recording axes: steps land
 * on the 1 us tick nearest the analytic step time, in time order across axes,
 * and a job ends exactly once, as completed, halted, triggered or failed.
 *
 * Two clocks: the VirtualClock itself, whose horizon lets the executor issue
 * the steps due before the next event in one wake-up, and the same clock seen
 * through the plain Clock interface (no horizon), as a real-time clock is:
 * there the executor wakes for every step.
 */
import t from 'tap';
import { planMove } from '../../firmware/planner';
import type { JobOutcome, StepJob } from '../../firmware/step-executor';
import { StepExecutor } from '../../firmware/step-executor';
import type { Clock } from '../../hal/clock';
import { HalError } from '../../hal/errors';
import type { Direction, StepperAxis } from '../../hal/stepper-axis';
import { VirtualClock } from '../../sim/virtual-clock';

interface StepRecord {
  axis: string;
  direction: Direction;
  atUs: number;
  /** Clock reading when the executor called step(). */
  nowUs: number;
}

/** A StepperAxis that records every call into a shared log; `onStep` lets a test act from inside step(). */
class RecordingAxis implements StepperAxis {
  onStep: ((count: number) => void) | null = null;
  count = 0;
  enabled = true;

  constructor(
    readonly name: string,
    private readonly clock: VirtualClock,
    private readonly log: StepRecord[],
  ) {}

  step(direction: Direction, atUs: number): void {
    this.count++;
    this.log.push({ axis: this.name, direction, atUs, nowUs: this.clock.nowUs() });
    this.onStep?.(this.count);
  }

  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
  }
}

/** The virtual clock without its horizon: the executor must wake at each step's time. */
function withoutHorizon(clock: VirtualClock): Clock {
  return { nowUs: () => clock.nowUs(), setTimerAt: (atUs, callback) => clock.setTimerAt(atUs, callback) };
}

type ClockKind = 'horizon' | 'plain';
const CLOCK_KINDS: ClockKind[] = ['horizon', 'plain'];

function rig(startUs = 1_000_000, kind: ClockKind = 'horizon') {
  const clock = new VirtualClock(startUs);
  const log: StepRecord[] = [];
  const theta = new RecordingAxis('theta', clock, log);
  const phi = new RecordingAxis('phi', clock, log);
  const executor = new StepExecutor(kind === 'horizon' ? clock : withoutHorizon(clock));
  const ends: { outcome: JobOutcome; error?: unknown; atUs: number }[] = [];
  const onEnd = (outcome: JobOutcome, error?: unknown) => ends.push({ outcome, error, atUs: clock.nowUs() });
  return { clock, log, theta, phi, executor, ends, onEnd };
}

/** A job running a real coordinated plan: theta +3 deg at 320 /deg, phi -2 deg at 800 /deg. */
function planJob(r: ReturnType<typeof rig>, startUs: number) {
  const plan = planMove(
    [
      { startSteps: 0, targetSteps: 960, stepsPerDeg: 320 },
      { startSteps: 1600, targetSteps: 0, stepsPerDeg: 800 },
    ],
    10,
    20,
  );
  const job: StepJob = {
    startUs,
    axes: [
      { stepper: r.theta, steps: plan.axes[0].steps, direction: plan.axes[0].direction },
      { stepper: r.phi, steps: plan.axes[1].steps, direction: plan.axes[1].direction },
    ],
    stepTimeSec: (i, k) => plan.stepTimeSec(i, k),
  };
  return { plan, job };
}

/** Both axes step forward together every 100 us, `steps` steps each. */
function lockstepJob(r: ReturnType<typeof rig>, steps: number): StepJob {
  return {
    startUs: 0,
    axes: [
      { stepper: r.theta, steps, direction: 1 },
      { stepper: r.phi, steps, direction: 1 },
    ],
    stepTimeSec: (_i, k) => k * 100e-6,
  };
}

for (const kind of CLOCK_KINDS) {
  t.test(`${kind} clock: steps are issued at startUs + round(stepTime * 1e6), within 1 us of the profile, in time order`, async (t) => {
    const r = rig(1_000_000, kind);
    const startUs = r.clock.nowUs();
    const { plan, job } = planJob(r, startUs);
    r.executor.start(job, r.onEnd);
    t.equal(r.executor.running, true);
    t.equal(r.log.length, 0, 'no step is issued inside start()');
    r.clock.runUntilIdle();

    t.same(r.ends.map((e) => e.outcome), ['completed']);
    t.equal(r.executor.running, false);
    t.equal(r.theta.count, 960);
    t.equal(r.phi.count, 1600);
    t.equal(r.executor.issuedSteps(0), 960);
    t.equal(r.executor.issuedSteps(1), 1600);

    const expected = { theta: 0, phi: 0 };
    let worstUs = 0;
    let orderOk = true;
    let scheduleOk = true;
    let neverLate = true;
    let onTime = true;
    let directionOk = true;
    for (let n = 0; n < r.log.length; n++) {
      const rec = r.log[n];
      const i = rec.axis === 'theta' ? 0 : 1;
      const k = ++expected[rec.axis as 'theta' | 'phi'];
      const exactUs = startUs + plan.stepTimeSec(i, k) * 1e6;
      if (rec.atUs !== startUs + Math.round(plan.stepTimeSec(i, k) * 1e6)) scheduleOk = false;
      worstUs = Math.max(worstUs, Math.abs(rec.atUs - exactUs));
      if (rec.nowUs > rec.atUs) neverLate = false;
      if (rec.nowUs !== rec.atUs) onTime = false;
      if (rec.direction !== plan.axes[i].direction) directionOk = false;
      if (n > 0 && rec.atUs < r.log[n - 1].atUs) orderOk = false;
    }
    t.ok(scheduleOk, 'every step is scheduled at startUs + round(t_k * 1e6)');
    t.ok(worstUs <= 0.5, `worst deviation from the analytic time is ${worstUs} us (at most half a tick)`);
    t.ok(neverLate, 'no step is issued after its time');
    if (kind === 'plain') t.ok(onTime, 'without a horizon, the executor wakes at each step\'s exact time');
    t.ok(directionOk, 'each axis steps in its planned direction');
    t.ok(orderOk, 'steps of both axes come out in time order');
    const lastUs = startUs + Math.round(plan.durationSec * 1e6);
    t.equal(r.log[r.log.length - 1].atUs, lastUs, 'the last step is at the end of the move');
    t.equal(r.ends[0].atUs, lastUs, 'the job ends at the time of its last step');
    t.equal(r.clock.pendingTimers(), 0, 'no timer is left behind');
  });

  t.test(`${kind} clock: overdue steps are issued at once with their own times, ties lowest axis first`, async (t) => {
    const r = rig(0, kind);
    // Both axes step every 100 us; the job starts 250 us in the past, so steps 1 and 2 are already due.
    r.executor.start(
      {
        startUs: -250,
        axes: [
          { stepper: r.theta, steps: 4, direction: 1 },
          { stepper: r.phi, steps: 4, direction: -1 },
        ],
        stepTimeSec: (_i, k) => k * 100e-6,
      },
      r.onEnd,
    );
    r.clock.advanceTo(0);
    t.same(
      r.log.map((s) => [s.axis, s.atUs, s.nowUs]),
      [
        ['theta', -150, 0],
        ['phi', -150, 0],
        ['theta', -50, 0],
        ['phi', -50, 0],
      ],
      'the two overdue steps of each axis, nothing due later',
    );
    r.clock.runUntilIdle();
    t.same(
      r.log.slice(4).map((s) => [s.axis, s.atUs]),
      [
        ['theta', 50],
        ['phi', 50],
        ['theta', 150],
        ['phi', 150],
      ],
    );
    if (kind === 'plain') t.same(r.log.slice(4).map((s) => s.nowUs), [50, 50, 150, 150]);
    t.same(r.ends.map((e) => [e.outcome, e.atUs]), [['completed', 150]]);
  });

  t.test(`${kind} clock: no step is issued ahead of another timer or of the end of an advance`, async (t) => {
    const r = rig(0, kind);
    const { job } = planJob(r, 0);
    const seenByOtherTimer: number[] = [];
    r.clock.setTimerAt(300_000, () => seenByOtherTimer.push(r.log.filter((s) => s.atUs >= 300_000).length, r.log.length));
    r.executor.start(job, r.onEnd);
    r.clock.advanceTo(123_457);
    t.ok(r.log.length > 0, 'steps were issued');
    t.ok(r.log.every((s) => s.atUs <= 123_457), 'nothing beyond the advance');
    r.clock.advanceTo(400_000);
    t.equal(seenByOtherTimer[0], 0, 'no step at or after 300 ms was issued before the 300 ms timer ran');
    t.ok(seenByOtherTimer[1] > 0);
    t.ok(r.log.every((s) => s.atUs <= 400_000));
    t.same(r.ends, [], 'still running');
  });
}

t.test('a job with no steps completes on the time line, not inside start()', async (t) => {
  const r = rig();
  r.executor.start({ startUs: r.clock.nowUs(), axes: [{ stepper: r.theta, steps: 0, direction: 1 }], stepTimeSec: () => 0 }, r.onEnd);
  t.same(r.ends, [], 'not ended inside start()');
  t.throws(() => r.executor.start({ startUs: 0, axes: [], stepTimeSec: () => 0 }, r.onEnd), 'a second job while one runs is refused');
  r.clock.runUntilIdle();
  t.same(r.ends.map((e) => e.outcome), ['completed']);
  t.equal(r.log.length, 0);
});

t.test('halt() mid-job: no step after it returns, even after advancing the clock far', async (t) => {
  const r = rig();
  const startUs = r.clock.nowUs();
  const { job } = planJob(r, startUs);
  r.executor.start(job, r.onEnd);
  r.clock.advanceBy(400_000);
  const issuedBefore = r.log.length;
  t.ok(issuedBefore > 0 && r.theta.count < 960 && r.phi.count < 1600, 'the job is part-way');
  t.equal(r.executor.halt(), true, 'halt() reports it stopped a job');
  t.same(r.ends.map((e) => e.outcome), ['halted'], 'the job ends as halted before halt() returns');
  t.equal(r.executor.running, false);
  t.equal(r.executor.issuedSteps(0), r.theta.count, 'issued count stays readable after the halt');
  r.clock.advanceBy(3600e6);
  t.equal(r.log.length, issuedBefore, 'no step after halt');
  t.equal(r.ends.length, 1, 'the end handler runs once');
  t.equal(r.executor.halt(), false, 'halting an idle executor does nothing');
  t.equal(r.clock.pendingTimers(), 0, 'the timer was cancelled');
});

for (const kind of CLOCK_KINDS) {
  t.test(`${kind} clock: halt() called from inside a step: no further step of the job, not even one due at the same tick`, async (t) => {
    const r = rig(0, kind);
    r.executor.start(lockstepJob(r, 10), r.onEnd);
    // A driver that reports trouble synchronously (an event handler that stops the machine).
    r.theta.onStep = (count) => {
      if (count === 3) r.executor.halt();
    };
    r.clock.runUntilIdle();
    t.same(
      r.log.map((s) => `${s.axis}@${s.atUs}`),
      ['theta@100', 'phi@100', 'theta@200', 'phi@200', 'theta@300'],
      'phi@300 was due at the same tick but comes after the halt',
    );
    t.same(r.ends.map((e) => e.outcome), ['halted']);
    t.equal(r.executor.issuedSteps(0), 3, 'the step during which halt() ran counts as issued');
    t.equal(r.executor.issuedSteps(1), 2);
  });

  t.test(`${kind} clock: a new job started from the halted job's end handler runs on its own, unmixed with the old one`, async (t) => {
    const r = rig(0, kind);
    const outcomes: string[] = [];
    let secondStartUs = NaN;
    r.executor.start(lockstepJob(r, 5), (outcome) => {
      outcomes.push(`first ${outcome}`);
      secondStartUs = r.clock.nowUs();
      r.executor.start(
        { startUs: secondStartUs, axes: [{ stepper: r.phi, steps: 2, direction: -1 }], stepTimeSec: (_i, k) => k * 1e-3 },
        (o) => outcomes.push(`second ${o}`),
      );
    });
    r.theta.onStep = (count) => {
      if (count === 2) r.executor.halt();
    };
    r.clock.runUntilIdle();
    t.same(outcomes, ['first halted', 'second completed']);
    t.same(
      r.log.map((s) => `${s.axis}${s.direction > 0 ? '+' : '-'}@${s.atUs}`),
      ['theta+@100', 'phi+@100', 'theta+@200', `phi-@${secondStartUs + 1000}`, `phi-@${secondStartUs + 2000}`],
    );
    t.equal(r.executor.issuedSteps(0), 2, 'the second job counts only its own steps');
  });
}

t.test('a stepper that throws ends the job as failed, with its error, and no step follows', async (t) => {
  const r = rig(0);
  const fault = new HalError('DRIVER_FAULT', 'over-temperature');
  r.phi.onStep = (count) => {
    if (count === 4) throw fault;
  };
  r.executor.start(
    {
      startUs: 0,
      axes: [
        { stepper: r.theta, steps: 10, direction: 1 },
        { stepper: r.phi, steps: 10, direction: 1 },
      ],
      stepTimeSec: (i, k) => k * 100e-6 + i * 10e-6,
    },
    r.onEnd,
  );
  r.clock.advanceBy(10e6);
  t.equal(r.ends.length, 1);
  t.equal(r.ends[0].outcome, 'failed');
  t.equal(r.ends[0].error, fault, 'the driver error is passed on');
  t.equal(r.ends[0].atUs, 410, 'the job fails at the step that threw');
  t.equal(r.log[r.log.length - 1].axis, 'phi', 'the failing step is the last one issued');
  t.equal(r.executor.issuedSteps(1), 3, 'the failed step is not counted as issued');
  t.equal(r.executor.running, false);
  t.equal(r.clock.pendingTimers(), 0);
});

t.test('haltWhen ends the job as triggered right after the step that satisfies it', async (t) => {
  const r = rig(0);
  const checkedAxes: number[] = [];
  r.executor.start(
    {
      startUs: 0,
      axes: [{ stepper: r.theta, steps: 100, direction: -1 }],
      stepTimeSec: (_i, k) => k * 1e-3,
      haltWhen: (axisIndex) => {
        checkedAxes.push(axisIndex);
        return r.theta.count >= 7;
      },
    },
    r.onEnd,
  );
  r.clock.advanceBy(1e6);
  t.same(r.ends.map((e) => [e.outcome, e.atUs]), [['triggered', 7000]]);
  t.equal(r.theta.count, 7, 'no step after the trigger');
  t.equal(r.executor.issuedSteps(0), 7);
  t.equal(checkedAxes.length, 7, 'checked after every step');
  t.ok(checkedAxes.every((i) => i === 0));
});

t.test('a haltWhen that throws fails the job', async (t) => {
  const r = rig(0);
  const broken = new HalError('DISCONNECTED', 'switch unreadable');
  r.executor.start(
    {
      startUs: 0,
      axes: [{ stepper: r.theta, steps: 100, direction: 1 }],
      stepTimeSec: (_i, k) => k * 1e-3,
      haltWhen: () => {
        if (r.theta.count === 2) throw broken;
        return false;
      },
    },
    r.onEnd,
  );
  r.clock.advanceBy(1e6);
  t.same(r.ends.map((e) => e.outcome), ['failed']);
  t.equal(r.ends[0].error, broken);
  t.equal(r.theta.count, 2);
});
