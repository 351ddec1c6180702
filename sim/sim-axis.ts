/**
 * A simulated stepper axis: motor, drive train and home switch with a simple
 * physical model. It knows the true shaft position, which the firmware never
 * sees; tests compare the two.
 *
 * Motor: each microstep moves the shaft one microstep, unless the motor has
 * stalled. A step that comes sooner after the previous one than the motor's
 * top step rate allows makes it stall (as a real stepper falls out of sync
 * when driven too fast); a stalled motor loses every step until the step rate
 * falls below its pull-in rate or it comes to rest, then follows again.
 *
 * Home switch: closed while the shaft is at or just below the home point
 * (within `switchWidthSteps`), with `hysteresisSteps` of travel needed before
 * it opens again. For a rotary axis (`revolutionSteps`) the home point repeats
 * every revolution.
 *
 * Faults for tests: a forced stall, a switch stuck open or closed, and a
 * driver fault that makes step() throw.
 */
import { HalError } from '../hal/errors';
import type { HomeSwitch } from '../hal/home-switch';
import type { Direction, StepperAxis } from '../hal/stepper-axis';

export interface SimAxisOptions {
  /** True shaft position at power-on, microsteps from the home point. */
  powerOnSteps: number;
  /** Above this step rate the motor stalls and loses steps (Hz of microsteps). */
  maxStepRateHz: number;
  /** A stalled motor recovers once steps come slower than this (default: a quarter of maxStepRateHz). */
  pullInRateHz?: number;
  /** Travel past the home point over which the switch stays closed (default: unlimited). */
  switchWidthSteps?: number;
  /** Travel beyond the home point needed to open the switch again. */
  hysteresisSteps: number;
  /** Microsteps per axis revolution for a rotary axis whose home point repeats; omit for a bounded axis. */
  revolutionSteps?: number;
}

export type SwitchFault = 'none' | 'stuck-open' | 'stuck-closed';

export interface SimStepRecord {
  tUs: number;
  direction: Direction;
  /** False when the step was lost to a stall. */
  moved: boolean;
}

export class SimAxis {
  readonly stepper: StepperAxis;
  readonly homeSwitch: HomeSwitch;
  /** Where the shaft really is, microsteps from the home point. */
  truePositionSteps: number;
  stepsReceived = 0;
  lostSteps = 0;
  stalled = false;
  enabled = true;
  readonly faults = { stall: false, switch: 'none' as SwitchFault, driver: null as string | null };
  /** Every step received, when recording is on (`startRecording()`). */
  records: SimStepRecord[] | null = null;

  private switchClosed: boolean;
  private lastStepUs = -Infinity;
  private readonly minIntervalUs: number;
  private readonly pullInIntervalUs: number;

  constructor(private readonly opts: SimAxisOptions) {
    if (!(opts.maxStepRateHz > 0)) throw new RangeError('maxStepRateHz must be positive');
    this.truePositionSteps = opts.powerOnSteps;
    this.minIntervalUs = 1e6 / opts.maxStepRateHz;
    this.pullInIntervalUs = 1e6 / (opts.pullInRateHz ?? opts.maxStepRateHz / 4);
    this.switchClosed = this.inClosedZone();
    this.stepper = {
      step: (direction, atUs) => this.step(direction, atUs),
      setEnabled: (on) => {
        if (this.faults.driver !== null) throw new HalError('DRIVER_FAULT', this.faults.driver);
        this.enabled = on;
      },
    };
    this.homeSwitch = { isTriggered: () => this.readSwitch() };
  }

  startRecording(): void {
    this.records = [];
  }

  private step(direction: Direction, atUs: number): void {
    if (this.faults.driver !== null) throw new HalError('DRIVER_FAULT', this.faults.driver);
    this.stepsReceived++;
    const intervalUs = atUs - this.lastStepUs;
    this.lastStepUs = atUs;
    if (this.stalled) {
      if (intervalUs >= this.pullInIntervalUs) this.stalled = false;
    } else if (intervalUs < this.minIntervalUs) {
      this.stalled = true;
    }
    const moved = this.enabled && !this.stalled && !this.faults.stall;
    if (moved) {
      this.truePositionSteps += direction;
      this.updateSwitch();
    } else {
      this.lostSteps++;
    }
    if (this.records !== null) this.records.push({ tUs: atUs, direction, moved });
  }

  /** Signed distance from the nearest home point (for a rotary axis, within half a revolution). */
  private fromHome(): number {
    const rev = this.opts.revolutionSteps;
    if (rev === undefined) return this.truePositionSteps;
    let p = this.truePositionSteps % rev;
    if (p > rev / 2) p -= rev;
    else if (p <= -rev / 2) p += rev;
    return p;
  }

  private inClosedZone(): boolean {
    const s = this.fromHome();
    return s <= 0 && s >= -(this.opts.switchWidthSteps ?? Infinity);
  }

  private updateSwitch(): void {
    if (this.switchClosed) {
      const s = this.fromHome();
      const width = this.opts.switchWidthSteps ?? Infinity;
      if (s > this.opts.hysteresisSteps || s < -width - this.opts.hysteresisSteps) this.switchClosed = false;
    } else if (this.inClosedZone()) {
      this.switchClosed = true;
    }
  }

  private readSwitch(): boolean {
    if (this.faults.switch === 'stuck-open') return false;
    if (this.faults.switch === 'stuck-closed') return true;
    return this.switchClosed;
  }
}
