/**
 * MotionController for step/dir hardware: the firmware plans and times every
 * microstep itself (planner + step executor) and homes against the switches.
 *
 * Position is what this controller believes: the microsteps it has issued,
 * counted from power-on or from the last homing. It cannot see lost steps;
 * homing reveals them (see `lastHomingErrorSteps`).
 *
 * Homing one axis, as grbl does:
 *   SEEK      toward the minimum at the seek speed until the switch closes
 *             (a fault if the whole travel passes without it);
 *   BACK_OFF  away from the switch by the pull-off distance (a fault if the
 *             switch is still closed afterwards: it is stuck);
 *   APPROACH  back toward it at the slow feed speed until it closes again;
 *   ZERO      that point is position 0.
 * An axis that starts on its switch skips SEEK. With `simultaneousHoming` (the
 * default) both axes run their cycles at the same time, each on its own step
 * executor, as grbl homes the axes of one HOMING_CYCLE_n together (limits.c
 * limits_go_home() steps every axis of the cycle mask at once): the homing takes
 * as long as the slower axis, not the sum of both. Otherwise they home one after
 * another, in the order given.
 */
import type { AxisName, AxisPair } from '../hal/axes';
import { AXES } from '../hal/axes';
import type { Clock } from '../hal/clock';
import { HalError } from '../hal/errors';
import type { HomeSwitch } from '../hal/home-switch';
import type { ControllerEvent, HomingPhase, MotionController, MotionEnd, MotionFault, MoveRequest } from '../hal/motion-controller';
import type { StepperAxis } from '../hal/stepper-axis';
import type { OutputPin } from '../hal/output-pin';
import type { HomingConfig } from './config';
import { POSITIONER_ERRORS } from './errors';
import type { MovePlan } from './planner';
import { planMove } from './planner';
import type { JobOutcome } from './step-executor';
import { StepExecutor } from './step-executor';

export interface StepAxisHardware {
  stepper: StepperAxis;
  homeSwitch: HomeSwitch;
}

export interface StepControllerOptions {
  clock: Clock;
  hardware: AxisPair<StepAxisHardware>;
  stepsPerDeg: AxisPair<number>;
  homing: AxisPair<HomingConfig>;
  /** Length of each axis's travel in degrees; homing gives up after 1.05x this. */
  travelDeg: AxisPair<number>;
  /** Acceleration used by homing moves, deg/s^2. */
  homingAccelDegS2: () => number;
  /** The trigger output pulseOutput drives (a scan's trigger source); absent, pulses are refused. */
  trigger?: OutputPin;
  /** Home both axes at the same time (default true); false: one after another. */
  simultaneousHoming?: boolean;
}

/** The move or homing phase the executor is running now. */
interface ActiveJob {
  plan: MovePlan;
  axes: readonly AxisName[];
  startUs: number;
  executor: StepExecutor;
}

export class StepMotionController implements MotionController {
  /** One executor per axis: a move runs both axes on theta's; concurrent homing runs each axis on its own. */
  private readonly executors: AxisPair<StepExecutor>;
  private readonly pos: AxisPair<number> = { theta: 0, phi: 0 };
  private readonly phase: AxisPair<HomingPhase | null> = { theta: null, phi: null };
  private readonly isHomed: AxisPair<boolean> = { theta: false, phi: false };
  private readonly homingError: AxisPair<number | null> = { theta: null, phi: null };
  private readonly everHomed: AxisPair<boolean> = { theta: false, phi: false };
  /** The jobs running now: one (a move, a sequential homing phase) or one per axis (concurrent homing). */
  private readonly active = new Set<ActiveJob>();
  private onEnd: ((end: MotionEnd) => void) | null = null;
  /** Pulses asked for while a motion ran: they start when it ends (ordered with motion, as grbl's M8 is). */
  private afterMotion: (() => void)[] = [];

  constructor(private readonly opts: StepControllerOptions) {
    this.executors = { theta: new StepExecutor(opts.clock), phi: new StepExecutor(opts.clock) };
  }

  positionSteps(): AxisPair<number> {
    const out = { ...this.pos };
    // A job's axes are moved by that job only, so their folded position is its base.
    for (const job of this.active) {
      job.axes.forEach((axis, i) => {
        out[axis] = this.pos[axis] + job.plan.axes[i].direction * job.executor.issuedSteps(i);
      });
    }
    return out;
  }

  velocityDegS(): AxisPair<number> {
    const out = { theta: 0, phi: 0 };
    for (const job of this.active) {
      if (job.plan.distanceDeg === 0) continue;
      const tSec = (this.opts.clock.nowUs() - job.startUs) / 1e6;
      const pathSpeed = job.plan.pathSpeedAt(tSec);
      job.axes.forEach((axis, i) => {
        const ax = job.plan.axes[i];
        out[axis] = (ax.direction * pathSpeed * ax.distanceDeg) / job.plan.distanceDeg;
      });
    }
    return out;
  }

  /** Per axis: where its homing cycle is (null when it is not homing). */
  homingPhases(): AxisPair<HomingPhase | null> {
    return { ...this.phase };
  }

  homed(): AxisPair<boolean> {
    return { ...this.isHomed };
  }

  /** Per axis: how far (microsteps) the switch was from where the last homing expected it; null before a second homing. */
  lastHomingErrorSteps(): AxisPair<number | null> {
    return { ...this.homingError };
  }

  busy(): boolean {
    return this.onEnd !== null;
  }

  move(request: MoveRequest, onEnd: (end: MotionEnd) => void): void {
    this.startMotion(onEnd, () =>
      this.runPlan(
        this.executors.theta,
        AXES,
        AXES.map((axis) => ({ axis, target: request.targetSteps[axis] })),
        request.speedDegS,
        request.accelDegS2,
        undefined,
        (outcome, error) => this.end(outcomeToEnd(outcome, error)),
      ),
    );
  }

  home(axes: readonly AxisName[], onEnd: (end: MotionEnd) => void): void {
    this.startMotion(onEnd, () => {
      for (const axis of axes) {
        this.isHomed[axis] = false;
        this.phase[axis] = 'waiting';
      }
      if (this.opts.simultaneousHoming ?? true) return this.homeTogether(axes);
      const next = (index: number): void => {
        if (index >= axes.length) return this.end({ outcome: 'completed' });
        this.homeAxis(axes[index], this.executors.theta, (end) => (end.outcome === 'completed' ? next(index + 1) : this.end(end)));
      };
      next(0);
    });
  }

  /**
   * A pulse of `durationMs` on the trigger output, once the motion in
   * progress (if any) has ended; resolves when the output is low again.
   */
  pulseOutput(durationMs: number): Promise<void> {
    const pin = this.opts.trigger;
    if (!pin) return Promise.reject(new HalError('OTHER', 'no trigger output is wired to this controller'));
    const clock = this.opts.clock;
    return new Promise<void>((resolve, reject) => {
      const fire = () => {
        try {
          pin.write(true, clock.nowUs());
        } catch (e) {
          reject(e as Error);
          return;
        }
        clock.setTimerAt(clock.nowUs() + Math.round(durationMs * 1000), () => {
          try {
            pin.write(false, clock.nowUs());
            resolve();
          } catch (e) {
            reject(e as Error);
          }
        });
      };
      if (this.busy()) this.afterMotion.push(fire);
      else fire();
    });
  }

  /**
   * Every axis runs its own cycle on its own executor; the homing completes when the last one
   * does. The first axis that fails (or is halted) ends it, and the others are halted with it.
   */
  private homeTogether(axes: readonly AxisName[]): void {
    let left = axes.length;
    let over = false;
    for (const axis of axes) {
      this.homeAxis(axis, this.executors[axis], (end) => {
        if (over) return;
        if (end.outcome === 'completed') {
          if (--left === 0) this.end(end);
          return;
        }
        over = true;
        for (const other of axes) this.executors[other].halt();
        this.end(end);
      });
      if (over) return;
    }
  }

  stop(): void {
    // halt() runs each job's end handler, which ends the move or homing as 'halted'.
    let halted = false;
    for (const axis of AXES) halted = this.executors[axis].halt() || halted;
    if (!halted && this.onEnd) this.end({ outcome: 'halted' });
  }

  /**
   * Step/dir hardware has no link that can drop and no controller of its own
   * that raises alarms: its faults show up as a failing step() or switch read,
   * which end the motion in progress. Nothing is ever reported here.
   */
  subscribe(_listener: (event: ControllerEvent) => void): () => void {
    return () => undefined;
  }

  /** Claims the controller for one motion; a motion that cannot even be planned releases it and throws. */
  private startMotion(onEnd: (end: MotionEnd) => void, start: () => void): void {
    if (this.onEnd) throw new Error('motion controller is busy');
    this.onEnd = onEnd;
    try {
      start();
    } catch (error) {
      if (this.onEnd === onEnd) this.onEnd = null;
      throw error;
    }
  }

  private end(end: MotionEnd): void {
    this.phase.theta = null;
    this.phase.phi = null;
    const onEnd = this.onEnd;
    this.onEnd = null;
    onEnd?.(end);
    for (const fire of this.afterMotion.splice(0)) fire();
  }

  /** Plans and runs one executor job over `targets`; folds the issued steps into the position when it ends. */
  private runPlan(
    executor: StepExecutor,
    axes: readonly AxisName[],
    targets: { axis: AxisName; target: number }[],
    speedDegS: number,
    accelDegS2: number,
    haltWhen: ((axisIndex: number) => boolean) | undefined,
    done: (outcome: JobOutcome, error?: unknown) => void,
  ): void {
    const plan = planMove(
      targets.map(({ axis, target }) => ({
        startSteps: this.pos[axis],
        targetSteps: target,
        stepsPerDeg: this.opts.stepsPerDeg[axis],
      })),
      speedDegS,
      accelDegS2,
    );
    // Drivers are energised for motion and stay energised to hold position; a driver that
    // cannot be enabled fails the motion like a fault while stepping.
    try {
      for (const axis of axes) this.opts.hardware[axis].stepper.setEnabled(true);
    } catch (error) {
      return done('failed', error);
    }
    const startUs = this.opts.clock.nowUs();
    const job: ActiveJob = { plan, axes, startUs, executor };
    this.active.add(job);
    executor.start(
      {
        startUs,
        axes: axes.map((axis, i) => ({
          stepper: this.opts.hardware[axis].stepper,
          steps: plan.axes[i].steps,
          direction: plan.axes[i].direction,
        })),
        stepTimeSec: (i, k) => plan.stepTimeSec(i, k),
        haltWhen,
      },
      (outcome, error) => {
        const current = this.positionSteps();
        for (const axis of axes) this.pos[axis] = current[axis];
        this.active.delete(job);
        done(outcome, error);
      },
    );
  }

  private homeAxis(axis: AxisName, executor: StepExecutor, done: (end: MotionEnd) => void): void {
    const cfg = this.opts.homing[axis];
    const perDeg = this.opts.stepsPerDeg[axis];
    const sw = this.opts.hardware[axis].homeSwitch;
    const accel = this.opts.homingAccelDegS2();
    // After an earlier homing, the belief where the switch closes should be 0: any difference is lost steps.
    const wasHomedBefore = this.everHomed[axis];
    const travelSteps = Math.ceil(this.opts.travelDeg[axis] * 1.05 * perDeg);
    const pullOffSteps = Math.max(1, Math.round(cfg.pullOffDeg * perDeg));
    const switchClosed = (): boolean => sw.isTriggered();

    /** Reads the switch outside a move; a read that fails ends homing as a hardware fault. */
    const readSwitch = (then: (closed: boolean) => void): void => {
      let closed: boolean;
      try {
        closed = switchClosed();
      } catch (error) {
        return done(outcomeToEnd('failed', error));
      }
      then(closed);
    };
    /** Moves toward the switch until it closes; reaching `target` without it is a fault. */
    const moveUntilSwitch = (target: number, speedDegS: number, notFound: string, found: () => void): void =>
      this.runPlan(executor, [axis], [{ axis, target }], speedDegS, accel, switchClosed, (outcome, error) => {
        if (outcome === 'triggered') return found();
        if (outcome === 'completed') return done(fault('POS_ERR_HOMING_SWITCH_NOT_FOUND', notFound));
        done(outcomeToEnd(outcome, error));
      });

    const seek = (): void =>
      readSwitch((closed) => {
        if (closed) return backOff();
        this.phase[axis] = 'seek';
        moveUntilSwitch(this.pos[axis] - travelSteps, cfg.seekDegS, `${axis}: home switch not found within ${(travelSteps / perDeg).toFixed(1)} deg of travel; check the switch wiring`, backOff);
      });
    const backOff = (): void => {
      this.phase[axis] = 'back_off';
      this.runPlan(executor, [axis], [{ axis, target: this.pos[axis] + pullOffSteps }], cfg.seekDegS, accel, undefined, (outcome, error) => {
        if (outcome !== 'completed') return done(outcomeToEnd(outcome, error));
        readSwitch((stillClosed) =>
          stillClosed
            ? done(fault('POS_ERR_HOMING_SWITCH_STUCK', `${axis}: home switch still closed after backing off ${cfg.pullOffDeg} deg; the switch is stuck or the axis cannot move`))
            : approach(),
        );
      });
    };
    const approach = (): void => {
      this.phase[axis] = 'approach';
      moveUntilSwitch(this.pos[axis] - 2 * pullOffSteps, cfg.feedDegS, `${axis}: home switch not found again on the slow re-approach; check the switch`, setZero);
    };
    const setZero = (): void => {
      this.phase[axis] = 'done';
      if (wasHomedBefore) this.homingError[axis] = this.pos[axis];
      this.pos[axis] = 0;
      this.isHomed[axis] = true;
      this.everHomed[axis] = true;
      done({ outcome: 'completed' });
    };
    seek();
  }
}

function fault(code: keyof typeof POSITIONER_ERRORS, message: string): MotionEnd {
  return { outcome: 'failed', fault: { code, message } };
}

function outcomeToEnd(outcome: JobOutcome, error?: unknown): MotionEnd {
  if (outcome === 'completed' || outcome === 'triggered') return { outcome: 'completed' };
  if (outcome === 'halted') return { outcome: 'halted' };
  return { outcome: 'failed', fault: hardwareFault(error) };
}

function hardwareFault(error: unknown): MotionFault {
  if (error instanceof HalError) return { code: 'POS_ERR_HARDWARE', message: `hardware ${error.kind.toLowerCase().replace('_', ' ')}: ${error.message}` };
  return { code: 'POS_ERR_HARDWARE', message: `hardware failure: ${error instanceof Error ? error.message : String(error)}` };
}
