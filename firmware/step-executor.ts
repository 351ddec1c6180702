/**
 * The step executor: simple and dumb by design (as grbl's step interrupt).
 *
 * It is handed a job (per axis: how many microsteps, which way, and a function
 * giving each step's time) and, on each clock wake-up, issues every step that
 * is due, in time order across axes, then sleeps until the next one. It does
 * no planning, no unit conversion and no allocation per step.
 *
 * Step times are quantised to the 1 us timer tick: step k is scheduled at
 * startUs + round(stepTimeSec(k) * 1e6) and passed to the axis with that time,
 * so a host that wakes late still reports exact times to hardware that times
 * pulses itself (and to the simulator's physics).
 *
 * halt() is immediate: it cancels the timer and marks the job ended, so once
 * it returns no further step of the job is issued.
 */
import type { Clock, TimerHandle } from '../hal/clock';
import type { Direction, StepperAxis } from '../hal/stepper-axis';

export interface StepJobAxis {
  stepper: StepperAxis;
  steps: number;
  direction: Direction;
}

export interface StepJob {
  /** Clock time (us) of the job's t = 0. */
  startUs: number;
  axes: readonly StepJobAxis[];
  /** Exact time of step k (1-based) of axis i, seconds from startUs. */
  stepTimeSec(axisIndex: number, k: number): number;
  /**
   * Checked after every step of any axis; returning true halts the job with
   * outcome 'triggered' (homing uses it to stop on the switch).
   */
  haltWhen?: (axisIndex: number) => boolean;
}

export type JobOutcome = 'completed' | 'halted' | 'triggered' | 'failed';

export type JobEndHandler = (outcome: JobOutcome, error?: unknown) => void;

export class StepExecutor {
  private job: StepJob | null = null;
  private onEnd: JobEndHandler | null = null;
  private timer: TimerHandle | null = null;
  /** Steps issued so far, per axis of the current (or last) job. */
  private issued: number[] = [];
  /** Scheduled time (us) of each axis's next step; Infinity when the axis is done. */
  private nextUs: number[] = [];
  /** An outcome reached while running ahead, delivered at its own time. */
  private deferred: { outcome: JobOutcome; error?: unknown } | null = null;
  private readonly tick = (): void => this.onTimer();

  constructor(private readonly clock: Clock) {}

  get running(): boolean {
    return this.job !== null;
  }

  /** Steps issued so far on axis `axisIndex` of the current or last job. */
  issuedSteps(axisIndex: number): number {
    return this.issued[axisIndex] ?? 0;
  }

  start(job: StepJob, onEnd: JobEndHandler): void {
    if (this.job) throw new Error('step executor is already running a job');
    this.job = job;
    this.onEnd = onEnd;
    const n = job.axes.length;
    this.issued = new Array<number>(n).fill(0);
    this.nextUs = new Array<number>(n);
    for (let i = 0; i < n; i++) this.nextUs[i] = this.scheduleOf(job, i, 1);
    this.arm();
  }

  /** Stops the job now; no step is issued after this returns. */
  halt(): boolean {
    if (!this.job) return false;
    this.finish('halted');
    return true;
  }

  private scheduleOf(job: StepJob, axisIndex: number, k: number): number {
    if (k > job.axes[axisIndex].steps) return Infinity;
    return job.startUs + Math.round(job.stepTimeSec(axisIndex, k) * 1e6);
  }

  private arm(): void {
    let next = Infinity;
    for (let i = 0; i < this.nextUs.length; i++) if (this.nextUs[i] < next) next = this.nextUs[i];
    // A job with nothing (left) to do still ends on the time line, never inside start().
    this.timer = this.clock.setTimerAt(next === Infinity ? this.clock.nowUs() : next, this.tick);
  }

  private onTimer(): void {
    this.timer = null;
    const job = this.job;
    if (!job) return;
    if (this.deferred) {
      const { outcome, error } = this.deferred;
      this.deferred = null;
      this.finish(outcome, error);
      return;
    }
    const nowUs = this.clock.nowUs();
    // On a discrete-event clock, steps due before its horizon are issued in this
    // wake-up with their own times: nothing else could run between them.
    const horizonUs = this.clock.horizonUs ? this.clock.horizonUs() : nowUs;
    const nextUs = this.nextUs;
    const axes = job.axes;
    const n = axes.length;
    let lastUs = nowUs;
    for (;;) {
      let i = -1;
      let due = Infinity;
      for (let j = 0; j < n; j++) {
        if (nextUs[j] < due) {
          due = nextUs[j];
          i = j;
        }
      }
      if (i < 0) return this.endAt(lastUs, nowUs, 'completed');
      if (due > nowUs && due >= horizonUs) break;
      lastUs = due > nowUs ? due : nowUs;
      const axis = axes[i];
      // Counted before the call, so an end handler run from inside step() sees this step.
      const k = ++this.issued[i];
      try {
        axis.stepper.step(axis.direction, due);
      } catch (error) {
        if (this.job !== job) return;
        this.issued[i]--;
        return this.endAt(lastUs, nowUs, 'failed', error);
      }
      // halt() called from inside step() (or a new job started by its end handler): this job is over.
      if (this.job !== job) return;
      nextUs[i] = this.scheduleOf(job, i, k + 1);
      if (job.haltWhen !== undefined) {
        let triggered: boolean;
        try {
          triggered = job.haltWhen(i);
        } catch (error) {
          if (this.job !== job) return;
          return this.endAt(lastUs, nowUs, 'failed', error);
        }
        if (this.job !== job) return;
        if (triggered) return this.endAt(lastUs, nowUs, 'triggered');
      }
    }
    this.arm();
  }

  /** Ends the job at the time of its last step: now, or (after running ahead) on a timer at that time. */
  private endAt(atUs: number, nowUs: number, outcome: JobOutcome, error?: unknown): void {
    if (atUs <= nowUs) return this.finish(outcome, error);
    this.deferred = { outcome, error };
    this.timer = this.clock.setTimerAt(atUs, this.tick);
  }

  private finish(outcome: JobOutcome, error?: unknown): void {
    const onEnd = this.onEnd;
    this.timer?.cancel();
    this.timer = null;
    this.job = null;
    this.onEnd = null;
    this.deferred = null;
    onEnd?.(outcome, error);
  }
}
