/**
 * The positioner: the state machine behind the API, in degrees.
 *
 *            move / move-relative                 home
 *   idle ──────────────────────────► moving   idle ─────► homing
 *   stopped                            │      stopped      │
 *     ▲   ◄─────── completed ──────────┘      error        │ completed ─► idle (homed)
 *     │                                                    │ switch fault ─► error
 *     └──── stop (any state but error) ◄─── moving/homing ─┘
 *   moving ── hardware fault ──► error ── home (succeeds) ──► idle
 *   any ── controller fault / link lost (outside a motion) ──► error
 *   error ── link back (controller reconnected) ──► error (POS_ERR_NOT_HOMED) ── home ──► idle
 *   connecting ── controller connected ──► idle   (a controller behind a link, until its first
 *               └─ fault ──► error ── connected ──► idle       connection; commands: 503)
 *
 * - Motion commands while moving or homing: POS_ERR_BUSY (HTTP 503).
 * - stop: at any time, immediate; no step is issued once it returns. In the
 *   error state the fault stays latched: only a successful homing clears it.
 * - Limits: no command drives an axis outside theta 0..180 or phi 0..360 (in
 *   the firmware's frame: from power-on until homing, from the switch after).
 * - Config: speed and accel change at run time (the next move uses them);
 *   microstepping and the derived steps/deg are read-only.
 */
import type { AxisName, AxisPair } from '../hal/axes';
import { AXES, mapAxes } from '../hal/axes';
import { HalError } from '../hal/errors';
import type { ControllerEvent, HomingPhase, MotionController, MotionEnd, MotionFault } from '../hal/motion-controller';
import type { PositionerConfig } from './config';
import { AXIS_RANGE_DEG, MIN_ACCEL_DEG_S2, MIN_SPEED_DEG_S, axisStepsPerDeg } from './config';
import { PositionerError } from './errors';
import { degToSteps, stepsToDeg } from './units';

export type PositionerState = 'connecting' | 'idle' | 'moving' | 'homing' | 'stopped' | 'error';
export type HomeAxis = AxisName | 'both';

export interface AxisStatus {
  homed: boolean;
  positionSteps: number;
  positionDeg: number;
  velocityDegS: number;
  /** Microsteps between where the last homing found the switch and where the firmware expected it (lost steps). */
  homingErrorSteps: number | null;
  /** Where this axis's homing cycle is, null when it is not homing (or the controller cannot tell). */
  homingPhase: HomingPhase | null;
}

/** Where the running move goes (the rounded targets the move was accepted with). */
export interface MoveTarget {
  thetaDeg: number;
  phiDeg: number;
}

export interface PositionerStatus {
  thetaDeg: number;
  phiDeg: number;
  moving: boolean;
  homed: boolean;
  state: PositionerState;
  fault: MotionFault | null;
  /** The target of the move in progress; null when no move runs. */
  target: MoveTarget | null;
  axes: AxisPair<AxisStatus>;
}

export interface MoveAccepted {
  status: 'moving';
  targetThetaDeg: number;
  targetPhiDeg: number;
}

export interface MotionSettings {
  speedDegS: number;
  accelDegS2: number;
  microstepping: number;
  stepsPerDeg: AxisPair<number>;
  maxSpeedDegS: number;
  maxAccelDegS2: number;
}

/**
 * A hold on the positioner's motion (a scan, firmware/scan.ts): while one is
 * held, motion commands without it get POS_ERR_BUSY; stop() drops it and
 * calls its `onStop`, so a stop from anywhere ends the holder's work too.
 */
export interface MotionClaim {
  readonly owner: string;
  /** Gives the positioner back (no-op once stopped or released). */
  release(): void;
}

/** Optional extras a controller may offer (the step controller measures lost steps at homing). */
interface HomingErrorSource {
  lastHomingErrorSteps(): AxisPair<number | null>;
}

export class Positioner {
  private state: PositionerState = 'idle';
  private fault: MotionFault | null = null;
  private target: MoveTarget | null = null;
  private readonly config: PositionerConfig;
  private readonly perDeg: AxisPair<number>;
  private readonly listeners = new Set<() => void>();
  private claim: { token: MotionClaim; onStop: () => void } | null = null;

  constructor(
    private readonly controller: MotionController & Partial<HomingErrorSource>,
    config: PositionerConfig,
  ) {
    this.config = structuredClone(config);
    this.perDeg = { theta: axisStepsPerDeg(config, 'theta'), phi: axisStepsPerDeg(config, 'phi') };
    if (controller.connecting?.()) this.state = 'connecting';
    controller.subscribe((event) => this.onControllerEvent(event));
  }

  /** Calls `listener` after every state change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  status(): PositionerStatus {
    const steps = this.controller.positionSteps();
    const velocity = this.controller.velocityDegS();
    const homed = this.controller.homed();
    const homingError = this.controller.lastHomingErrorSteps?.() ?? { theta: null, phi: null };
    const phases = this.state === 'homing' ? (this.controller.homingPhases?.() ?? { theta: null, phi: null }) : { theta: null, phi: null };
    const axes = mapAxes(steps, (s, axis) => ({
      homed: homed[axis],
      positionSteps: s,
      positionDeg: stepsToDeg(s, this.perDeg[axis]),
      velocityDegS: velocity[axis],
      homingErrorSteps: homingError[axis],
      homingPhase: phases[axis],
    }));
    return {
      thetaDeg: axes.theta.positionDeg,
      phiDeg: axes.phi.positionDeg,
      moving: this.state === 'moving' || this.state === 'homing',
      homed: homed.theta && homed.phi,
      state: this.state,
      fault: this.fault,
      target: this.state === 'moving' && this.target ? { ...this.target } : null,
      axes,
    };
  }

  moveTo(thetaDeg: number, phiDeg: number, claim?: MotionClaim): MoveAccepted {
    this.assertCanMove(claim);
    const target = {
      theta: this.targetSteps('theta', thetaDeg, `theta_deg ${thetaDeg}`),
      phi: this.targetSteps('phi', phiDeg, `phi_deg ${phiDeg}`),
    };
    return this.startMove(target);
  }

  moveBy(dThetaDeg: number, dPhiDeg: number): MoveAccepted {
    this.assertCanMove();
    const now = this.controller.positionSteps();
    const delta = { theta: dThetaDeg, phi: dPhiDeg };
    const target = mapAxes(now, (s, axis) => {
      const steps = s + degToSteps(delta[axis], this.perDeg[axis]);
      const resultDeg = stepsToDeg(steps, this.perDeg[axis]);
      this.checkRange(axis, steps, `relative move of ${delta[axis]} deg from ${round(stepsToDeg(s, this.perDeg[axis]))} would end at ${axis} ${round(resultDeg)} deg`);
      return steps;
    });
    return this.startMove(target);
  }

  home(axis: HomeAxis): { status: 'homing'; axis: HomeAxis } {
    this.assertNotBusy();
    const axes: AxisName[] = axis === 'both' ? [...AXES] : [axis];
    this.begin('homing', () => this.controller.home(axes, (end) => this.onMotionEnd(end, true)));
    return { status: 'homing', axis };
  }

  stop(): { status: 'stopped' } {
    const claim = this.claim;
    this.claim = null;
    this.controller.stop();
    if (this.state !== 'error' && this.state !== 'connecting') this.state = 'stopped';
    this.changed();
    claim?.onStop();
    return { status: 'stopped' };
  }

  /**
   * Holds the positioner for `owner` (a scan): until released, motion
   * commands not given the claim are refused with POS_ERR_BUSY naming the
   * owner. `stop()` drops the claim and calls `onStop`. Refused while busy,
   * in error, or already claimed.
   */
  claimMotion(owner: string, onStop: () => void): MotionClaim {
    this.assertCanMove();
    const token: MotionClaim = {
      owner,
      release: () => {
        if (this.claim?.token === token) this.claim = null;
      },
    };
    this.claim = { token, onStop };
    return token;
  }

  /** Who holds the positioner's motion (`scan`), or null. */
  heldBy(): string | null {
    return this.claim?.token.owner ?? null;
  }

  /** Outputs a pulse on the controller's trigger output (firmware/scan.ts's trigger source); refused when the hardware has none. */
  pulseOutput(durationMs: number): Promise<void> {
    const pulse = this.controller.pulseOutput?.bind(this.controller);
    if (!pulse) return Promise.reject(new PositionerError('POS_ERR_HARDWARE', 'this motion controller has no trigger output; use a source without a trigger pulse'));
    return pulse(durationMs);
  }

  settings(): MotionSettings {
    return {
      speedDegS: this.config.speedDegS,
      accelDegS2: this.config.accelDegS2,
      microstepping: this.config.microstepping,
      stepsPerDeg: { ...this.perDeg },
      maxSpeedDegS: this.maxSpeedDegS(),
      maxAccelDegS2: this.config.maxAccelDegS2,
    };
  }

  /** The config's max_speed, or less where the hardware cannot step that fast (grbl's 30 kHz). */
  private maxSpeedDegS(): number {
    return Math.min(this.config.maxSpeedDegS, this.controller.maxSpeedDegS?.() ?? Infinity);
  }

  /** Changes only the fields given; all are checked before any is applied. */
  updateSettings(update: { speedDegS?: number; accelDegS2?: number }): MotionSettings {
    const { speedDegS, accelDegS2 } = update;
    if (speedDegS !== undefined) checkBetween('speed', speedDegS, MIN_SPEED_DEG_S, this.maxSpeedDegS(), 'deg/s');
    if (accelDegS2 !== undefined) checkBetween('accel', accelDegS2, MIN_ACCEL_DEG_S2, this.config.maxAccelDegS2, 'deg/s^2');
    if (speedDegS !== undefined) this.config.speedDegS = speedDegS;
    if (accelDegS2 !== undefined) this.config.accelDegS2 = accelDegS2;
    this.changed();
    return this.settings();
  }

  private startMove(target: AxisPair<number>): MoveAccepted {
    const targetDeg = { thetaDeg: stepsToDeg(target.theta, this.perDeg.theta), phiDeg: stepsToDeg(target.phi, this.perDeg.phi) };
    this.target = targetDeg;
    this.begin('moving', () =>
      this.controller.move(
        { targetSteps: target, speedDegS: this.config.speedDegS, accelDegS2: this.config.accelDegS2 },
        (end) => this.onMotionEnd(end, false),
      ),
    );
    return { status: 'moving', targetThetaDeg: targetDeg.thetaDeg, targetPhiDeg: targetDeg.phiDeg };
  }

  /**
   * Enters `state` and starts the controller. The state is set first because a
   * controller may end the motion from inside the call; if the call throws,
   * nothing started and the previous state comes back.
   */
  private begin(state: 'moving' | 'homing', start: () => void): void {
    const previous = this.state;
    this.state = state;
    try {
      start();
    } catch (error) {
      this.state = previous;
      // A controller that cannot take the command (its link is down) is a clear, stable error, not a crash.
      if (error instanceof HalError) {
        throw new PositionerError(error.kind === 'DISCONNECTED' ? 'POS_ERR_DISCONNECTED' : 'POS_ERR_HARDWARE', error.message);
      }
      throw error;
    }
    this.changed();
  }

  /**
   * Faults outside a motion latch the error state as a failed motion does; a
   * reconnection keeps it latched with a fault that says homing is needed,
   * because the controller's positions no longer mean what they meant.
   */
  private onControllerEvent(event: ControllerEvent): void {
    if (event.type === 'connected') {
      // The first connection: nothing was homed or moved yet; a fault from trying to connect is over.
      this.fault = null;
      this.state = 'idle';
      this.changed();
      return;
    }
    if (event.type === 'fault') {
      this.fault = event.fault;
    } else {
      this.fault = { code: 'POS_ERR_NOT_HOMED', message: event.message };
    }
    this.state = 'error';
    this.changed();
  }

  private onMotionEnd(end: MotionEnd, homing: boolean): void {
    if (end.outcome === 'completed') {
      if (homing) this.fault = null;
      this.state = 'idle';
    } else if (end.outcome === 'halted') {
      if (this.state !== 'error') this.state = 'stopped';
    } else {
      this.fault = end.fault;
      this.state = 'error';
    }
    this.changed();
  }

  private assertNotBusy(claim?: MotionClaim): void {
    if (this.claim && this.claim.token !== claim) {
      throw new PositionerError('POS_ERR_BUSY', `positioner is held by a ${this.claim.token.owner}; pause it (POST /scan/pause) or POST /stop to abort it`);
    }
    if (this.state === 'moving' || this.state === 'homing' || this.controller.busy()) {
      throw new PositionerError('POS_ERR_BUSY', `positioner is busy ${this.state === 'homing' ? 'homing' : 'moving'}; wait for it to finish or POST /stop`);
    }
  }

  private assertCanMove(claim?: MotionClaim): void {
    this.assertNotBusy(claim);
    if (this.state === 'error') {
      throw new PositionerError('POS_ERR_FAULT', `positioner is in its error state (${this.fault?.message ?? 'unknown fault'}); home the axes (POST /home) to clear it`);
    }
  }

  private targetSteps(axis: AxisName, deg: number, what: string): number {
    if (!Number.isFinite(deg)) throw new PositionerError('POS_ERR_OUT_OF_RANGE', `${what} is not a finite number`);
    const steps = degToSteps(deg, this.perDeg[axis]);
    this.checkRange(axis, steps, what);
    return steps;
  }

  private checkRange(axis: AxisName, steps: number, what: string): void {
    const { min, max } = AXIS_RANGE_DEG[axis];
    // Written so that NaN (a NaN relative move) fails the check too.
    if (!(steps >= degToSteps(min, this.perDeg[axis]) && steps <= degToSteps(max, this.perDeg[axis]))) {
      throw new PositionerError('POS_ERR_OUT_OF_RANGE', `${what} is outside ${axis}'s range ${min}..${max} deg`);
    }
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

function checkBetween(name: string, value: number, min: number, max: number, unit: string): void {
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new PositionerError('POS_ERR_OUT_OF_RANGE', `${name} must be between ${min} and ${max} ${unit}, got ${value}`);
  }
}

function round(deg: number): number {
  return Math.round(deg * 1e4) / 1e4;
}
