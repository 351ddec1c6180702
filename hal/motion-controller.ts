/**
 * The motion controller: the level at which the positioner firmware commands
 * its axes, and the seam between "we generate every step" and "the controller
 * plans and steps by itself".
 *
 * - On step/dir hardware (and the simulator) the firmware provides this
 *   interface itself (firmware/step-controller.ts): its planner computes each
 *   microstep time and its step executor pulses StepperAxis, reading the
 *   HomeSwitch while homing.
 * - Controllers that plan on board (grbl over serial, AccelStepperFirmata)
 *   implement it directly as drivers in hal/: a move becomes a G1 line or a
 *   multi-stepper group move, stop a feed hold + reset or a stepper stop.
 *
 * Everything is callback-driven and synchronous at the edges: `onEnd` runs
 * exactly once, on the clock's time line, so a virtual clock can drive a whole
 * move and observe its completion deterministically.
 *
 * Three things happen outside any motion and reach the firmware through
 * `subscribe()`: the first connection of a controller behind a link, a
 * fault (the serial line drops while idle, the controller raises an alarm
 * by itself) and a reconnection (the link is back, but the
 * controller's position reference is gone: every axis is unhomed and the
 * firmware's frame restarts at the controller's power-on position). A fault
 * during a motion ends that motion with `failed` instead; it is never
 * reported twice.
 */
import type { AxisName, AxisPair } from './axes';

export interface MoveRequest {
  /** Absolute target of each axis in microsteps of the controller's frame. */
  targetSteps: AxisPair<number>;
  /** Top speed of the faster axis, degrees per second. */
  speedDegS: number;
  /** Acceleration limit of the faster axis, degrees per second squared. */
  accelDegS2: number;
}

/** A failure the controller reports; `code` comes from a documented catalogue. */
export interface MotionFault {
  code: string;
  message: string;
}

export type MotionEnd =
  | { outcome: 'completed' }
  | { outcome: 'halted' }
  | { outcome: 'failed'; fault: MotionFault };

/**
 * Where an axis is in its homing cycle: queued behind another axis, seeking the
 * switch, backing off it, re-approaching it slowly, or done (zeroed, waiting for
 * the other axis).
 */
export type HomingPhase = 'waiting' | 'seek' | 'back_off' | 'approach' | 'done';

/** What a controller reports outside a motion. */
export type ControllerEvent =
  /** The controller failed while no motion ran (or the link is gone); motion commands will fail until it recovers. */
  | { type: 'fault'; fault: MotionFault }
  /** The link is back after a drop or a board reset; positions restart from where the controller woke up and no axis is homed. */
  | { type: 'reconnected'; message: string }
  /** The controller finished its first connection (see `connecting()`): it takes commands now; no axis is homed. */
  | { type: 'connected'; message: string };

export interface MotionController {
  /** Where the controller believes each axis is, in microsteps. */
  positionSteps(): AxisPair<number>;
  /** Current commanded velocity of each axis, degrees per second (signed). */
  velocityDegS(): AxisPair<number>;
  /** Which axes have a valid home reference. */
  homed(): AxisPair<boolean>;
  /** True while a move or homing cycle runs. */
  busy(): boolean;
  /**
   * Optional: the highest `speedDegS` this hardware can run whatever the
   * move's direction (grbl: its step-rate ceiling over the finest axis).
   * The positioner bounds its speed setting by it; absent, only the config does.
   */
  maxSpeedDegS?(): number;
  /**
   * Optional: per axis, where its homing cycle is (null when not homing). Controllers that home
   * by themselves and report nothing meanwhile (grbl) leave it out.
   */
  homingPhases?(): AxisPair<HomingPhase | null>;
  /** Starts a coordinated move; both axes start and arrive together. */
  move(request: MoveRequest, onEnd: (end: MotionEnd) => void): void;
  /** Homes the axes (together where the controller can, else in order); on success their positions are 0. */
  home(axes: readonly AxisName[], onEnd: (end: MotionEnd) => void): void;
  /**
   * Stops all motion at once. When this returns no further step is issued;
   * a running move or homing ends with outcome `halted` before it returns.
   */
  stop(): void;
  /**
   * Optional: a pulse of `durationMs` on the board's trigger output, for
   * hardware-triggered instruments (a scan's `trigger` source). Ordered with
   * motion: it starts once every motion commanded before it has ended. The
   * promise resolves when the output is low again and rejects with a
   * HalError when the pulse cannot be given. Hardware without an output leaves it out.
   */
  pulseOutput?(durationMs: number): Promise<void>;
  /**
   * Calls `listener` for every fault or reconnection outside a motion; returns
   * the unsubscribe function. Hardware that cannot fail on its own between
   * motions (plain step/dir drivers) never calls it.
   */
  subscribe(listener: (event: ControllerEvent) => void): () => void;
  /**
   * True while a controller behind a link has not finished its first connection (the positioner
   * shows the state `connecting`; commands fail with POS_ERR_DISCONNECTED); it then sends
   * `connected`. Controllers that are there from the start leave it out.
   */
  connecting?(): boolean;
}
