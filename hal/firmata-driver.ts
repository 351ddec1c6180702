/**
 * MotionController for an Arduino running ConfigurableFirmata 3.x with
 * AccelStepperFirmata (AccelStepper 1.57) and two step/dir drivers, over USB
 * serial (hal/serial-link.ts). It speaks the wire protocol itself
 * (hal/firmata-protocol.ts): every byte it sends and every reply it waits for
 * is its own, on the injected clock.
 *
 * What the firmware does, and what this driver does about it (docs/hardware.md
 * "Firmata" has the long form; the firmware's source is quoted by function):
 *
 * - Stop. MULTISTEPPER_STOP only clears a group's flag (AccelStepperFirmata::
 *   handleSysex()); steppers started with ACCELSTEPPER_TO run on. ACCELSTEPPER_
 *   STOP calls AccelStepper::stop(), which merely sets a deceleration target,
 *   but also clears isRunning[], so update() never runs that stepper again: it
 *   halts at the next pass of loop() (under 1 ms) and reports MOVE_COMPLETE
 *   with its position. Its speed, ramp counter and that target survive, so a
 *   later TO would start at the old speed and first run on in the old
 *   direction; ACCELSTEPPER_ZERO (setCurrentPosition(0)) is the one command
 *   that clears them. So a stop is, per axis, in one write:
 *       STOP θ, STOP φ, ZERO θ, ZERO φ, REPORT θ, REPORT φ
 *   The STOP answers give the exact halted positions; nothing steps between a
 *   STOP and its ZERO (the stepper is no longer run), so the board's frame
 *   moves by exactly that position: this driver keeps, per axis, the offset
 *   between its frame and the board's (`Frame`), and every reply is read in
 *   the frame it was produced in (the board answers in order: each request
 *   carries its frame in a FIFO, see `onStepper`).
 * - Speed ceiling. The steppers are stepped from loop(), each step costing
 *   ~224 us of float math on a 16 MHz AVR: one axis alone makes ~3,620
 *   steps/s, two together ~2,000 each. Moves are scaled down to fit
 *   (`maxStepRateStepsS`), keeping the two trapezoids proportional so both
 *   axes still arrive together, and the velocities reported are the scaled ones.
 * - Inputs are sampled every sampling interval (19 ms by default,
 *   FirmataReporting::reset()); this driver asks for 1 ms, the minimum, so a
 *   homing stops within about one step of the switch at the re-approach speed.
 * - Power-up: the sketch blinks its version for 1.9 s without reading its
 *   64-byte receive ring. So at most one poll is ever in flight; a silent
 *   board gets one byte (REPORT_VERSION) per retry; and any configuration
 *   starts with SYSTEM_RESET, which resets the board's parser whatever it
 *   holds, frees every stepper (CONFIG without it leaks one per stepper, and
 *   the seventh reconfiguration ran an Uno out of heap) and resets the pins.
 * - A version report nobody asked for means the board rebooted: positions are
 *   lost; it is configured again and the firmware hears `reconnected`.
 *
 * Homing runs here, per axis, on the switch reports: if the switch is
 * already closed (phi powered up inside its cam) back off until it opens
 * (at most HOMING_CLEAR_MAX_DEG); seek; stop on the switch; back off;
 * re-approach slowly; stop on the switch; that point is 0. With
 * `simultaneousHoming` (the default) both steppers run their cycles at once:
 * each cycle only ever commands its own stepper (TO, STOP, ZERO per device),
 * so they interleave on the line; the board shares its loop between them
 * (about 2,000 steps/s each instead of 3,620 alone), so where homing is
 * step-rate bound the saving is less than half.
 */
import type { AxisName, AxisPair } from './axes';
import { AXES, mapAxes } from './axes';
import type { Clock, TimerHandle } from './clock';
import { HalError } from './errors';
import type { ControllerEvent, HomingPhase, MotionController, MotionEnd, MotionFault, MoveRequest } from './motion-controller';
import { FirmataReader, firmataCommand as cmd, PIN_MODE, type FirmataMessage } from './firmata-protocol';
import { askedForMade, loopTimingFor, madeStepRate, stepRateScale, type BoardLoopTiming } from './firmata-step-rate';
import { SerialLink, type SerialTrace } from './serial-link';

export interface FirmataWiring {
  stepPin: AxisPair<number>;
  dirPin: AxisPair<number>;
  /** Digital inputs of the home switches (switch to ground, internal pull-up). */
  switchPin: AxisPair<number>;
  /** Digital inputs wired to the drivers' open-drain nFAULT outputs (internal pull-up; low = driver in fault). */
  faultPin: AxisPair<number>;
  /** Optional digital output pulsed as a measurement trigger (pulseOutput; a scan's trigger source). */
  triggerPin?: number;
}

export interface FirmataDriverOptions {
  path: string;
  baudRate: number;
  clock: Clock;
  /** Sees every chunk written and read (wire logs, test rigs). */
  trace?: SerialTrace;
  stepsPerDeg: AxisPair<number>;
  wiring: FirmataWiring;
  homing: AxisPair<{ seekDegS: number; feedDegS: number; pullOffDeg: number }>;
  travelDeg: AxisPair<number>;
  /** Acceleration of homing moves, deg/s^2. */
  homingAccelDegS2: () => number;
  /** Home both steppers at once (default true); false: one after another. */
  simultaneousHoming?: boolean;
  /**
   * Steps per second the board makes on one axis moving alone; two axes together share its loop
   * (hal/firmata-step-rate.ts). Default: an Uno, measured (UNO_MAX_STEP_RATE_STEPS_S).
   */
  maxStepRateStepsS?: number;
  /** Digital input sampling interval asked of the board, ms (1..16383; the firmware's default is 19). */
  samplingIntervalMs?: number;
  pollMovingMs?: number;
  pollIdleMs?: number;
  answerTimeoutMs?: number;
  retryMs?: number;
  /** Time after the line opens within which a configured board must answer before a fault names the baud rate. */
  handshakeTimeoutMs?: number;
}

/** One axis alone on an Uno (ATmega328P, 16 MHz) with ConfigurableFirmata 3.3.0, measured: 3,560-3,650 steps/s (two together: 1,980-2,000 each). */
export const UNO_MAX_STEP_RATE_STEPS_S = 3620;
/** How often, at most, the slower axis's speed is trimmed to the faster one's measured progress. */
const TRIM_EVERY_US = 200_000;
/** How far homing backs off a switch found closed at the start (3x phi's 5-degree cam) before it calls the switch stuck. */
export const HOMING_CLEAR_MAX_DEG = 15;

const DEVICE: AxisPair<number> = { theta: 0, phi: 1 };
const AXIS_OF_DEVICE: readonly AxisName[] = ['theta', 'phi'];

type Phase = 'connecting' | 'handshake' | 'configuring' | 'ready' | 'silent';

/** The offset between this driver's frame and the board's (driver steps = board steps + offset); null until the STOP before its ZERO is answered. */
interface Frame {
  offsetSteps: number | null;
}

/** A request that the board answers (REPORT_POSITION with a position, STOP with MOVE_COMPLETE), in the frame it will be answered in. */
interface Pending {
  seq: number;
  kind: 'report' | 'stop';
  frame: Frame;
  sentUs: number;
  onReply?: (boardSteps: number) => void;
}

interface DeviceLink {
  /** Frame of the commands sent now. */
  frame: Frame;
  /** Frame of the last request answered: what a MOVE_COMPLETE nobody asked for is read in. */
  lastFrame: Frame;
  pending: Pending[];
}

/** The trapezoid an axis was last told to run, and what it was seen to do. */
interface Segment {
  fromSteps: number;
  toSteps: number;
  /** Speed sent (SET_SPEED), steps/s; trims change it. */
  askedStepsS: number;
  /** What the board is expected to make at that speed (its loop is late), steps/s. */
  madeStepsS: number;
  accelStepsS2: number;
  /** Position answers during this segment (time, steps), the last few. */
  samples: { tUs: number; steps: number }[];
  /** Where the rate of the current cruise is measured from (reset by a trim). */
  cruiseFrom: { tUs: number; steps: number } | null;
  /** Homing: the speed the phase wants, before sharing the board's loop with the other stepper. */
  wantedStepsS?: number;
}

interface Run {
  /** The request sent right after the TO: a MOVE_COMPLETE before everything up to it is answered belongs to something older. */
  afterSeq: number;
  done: () => void;
}

interface Motion {
  /** A two-axis move (its slower axis is trimmed to the faster); homing is not. */
  coordinated: boolean;
  lastTrimUs: number;
  onEnd: (end: MotionEnd) => void;
  run: AxisPair<Run | null>;
  /** Per axis: called on every switch report while homing. */
  onSwitch: AxisPair<((closed: boolean) => void) | null>;
}

export class FirmataDriver implements MotionController {
  readonly stats = { reconnects: 0, positionReports: 0, boardResets: 0, configurations: 0, stops: 0 };
  private readonly link: SerialLink;
  private readonly listeners = new Set<(e: ControllerEvent) => void>();
  private reader: FirmataReader | null = null;
  private phase: Phase = 'connecting';
  /** The trigger pin is in OUTPUT mode (set at the first pulse after each configuration: a system reset clears it). */
  private triggerConfigured = false;
  /** Trigger pulses waiting for the motion in progress to end. */
  private afterMotion: (() => void)[] = [];
  private firstOpenPending = true;
  private everReady = false;
  private lostSinceReady = false;
  private handshakeFaulted = false;
  private openedUs = 0;
  private versionQueries = 0;
  /** A version report came since the line opened: the baud rate is right. */
  private versionSeen = false;
  private lastProbeUs = 0;
  private seq = 0;
  private readonly pos: AxisPair<number> = { theta: 0, phi: 0 };
  private readonly devices: AxisPair<DeviceLink> = { theta: freshDevice(), phi: freshDevice() };
  private readonly segment: AxisPair<Segment | null> = { theta: null, phi: null };
  private readonly switchClosed: AxisPair<boolean | null> = { theta: null, phi: null };
  private readonly driverFault: AxisPair<boolean> = { theta: false, phi: false };
  private isHomed: AxisPair<boolean> = { theta: false, phi: false };
  private readonly everHomed: AxisPair<boolean> = { theta: false, phi: false };
  private readonly homingError: AxisPair<number | null> = { theta: null, phi: null };
  private readonly homingPhase: AxisPair<HomingPhase | null> = { theta: null, phi: null };
  private motion: Motion | null = null;
  /** Work waiting for a frame to be known (a move right after a stop). */
  private afterFrames: (() => void)[] = [];
  private settleWaiters: (() => void)[] = [];
  private poll: TimerHandle | null = null;
  private closed = false;
  private readonly timing: BoardLoopTiming;

  constructor(private readonly opts: FirmataDriverOptions) {
    this.timing = loopTimingFor(opts.maxStepRateStepsS ?? UNO_MAX_STEP_RATE_STEPS_S);
    this.link = new SerialLink(
      { path: opts.path, baudRate: opts.baudRate, clock: opts.clock, retryMs: opts.retryMs, trace: opts.trace },
      {
        onOpen: () => this.onOpen(),
        onData: (chunk) => this.reader?.feed(chunk),
        onDown: (reason) => this.onDown(reason),
        onOpenFailed: () => this.onOpenFailed(),
      },
    );
  }

  start(): void {
    this.link.start();
    this.schedulePoll();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.poll?.cancel();
    this.reader = null;
    await this.link.close();
    this.wake();
  }

  connectionPhase(): Phase {
    return this.phase;
  }

  /** True until the board has been configured once (the positioner shows `connecting`). */
  connecting(): boolean {
    return !this.everReady;
  }

  /** Resolves once the board is configured (or the line is down, or the handshake failed) and fresh positions have been read. */
  async settle(): Promise<void> {
    while (!this.closed && !this.handshakeFaulted && (this.phase === 'handshake' || this.phase === 'configuring' || (this.phase === 'connecting' && this.firstOpenPending))) {
      await new Promise<void>((resolve) => this.settleWaiters.push(resolve));
    }
    if (this.phase === 'ready') await this.readPositions();
  }

  positionSteps(): AxisPair<number> {
    return { ...this.pos };
  }

  /**
   * What the axes really do: the rate over the last position answers (100 ms or more, the last at most 100 ms old),
   * else the trapezoid at the rate the board is expected to make.
   */
  velocityDegS(): AxisPair<number> {
    const out = { theta: 0, phi: 0 };
    if (!this.motion) return out;
    const nowUs = this.opts.clock.nowUs();
    for (const axis of AXES) {
      const s = this.segment[axis];
      if (!s || s.toSteps === s.fromSteps) continue;
      // The last answer and the newest one at least 100 ms before it: a slow axis moves few steps per poll.
      const b = s.samples.at(-1);
      const a = b && [...s.samples].reverse().find((x) => b.tUs - x.tUs >= 100_000);
      if (a && b && nowUs - b.tUs <= 100_000) {
        out[axis] = ((b.steps - a.steps) / ((b.tUs - a.tUs) / 1e6)) / this.opts.stepsPerDeg[axis];
        continue;
      }
      const dir = Math.sign(s.toSteps - s.fromSteps);
      const done = Math.max(0, (this.pos[axis] - s.fromSteps) * dir);
      const left = Math.max(0, (s.toSteps - this.pos[axis]) * dir);
      // The first step leaves at once (AccelStepper runSpeed()), so a started axis is never at 0.
      const v = Math.min(s.madeStepsS, Math.sqrt(2 * s.accelStepsS2 * Math.max(done, 1)), Math.sqrt(2 * s.accelStepsS2 * left));
      out[axis] = (dir * v) / this.opts.stepsPerDeg[axis];
    }
    return out;
  }

  homed(): AxisPair<boolean> {
    return { ...this.isHomed };
  }

  homingPhases(): AxisPair<HomingPhase | null> {
    return { ...this.homingPhase };
  }

  lastHomingErrorSteps(): AxisPair<number | null> {
    return { ...this.homingError };
  }

  busy(): boolean {
    return this.motion !== null;
  }

  /**
   * A trigger pulse on `wiring.triggerPin`: SET_PIN_MODE OUTPUT the first time after each
   * configuration (DigitalOutputFirmata::handlePinMode() drives it low), then SET_DIGITAL_PIN_VALUE
   * high, and low again `durationMs` later on the driver's clock. Firmata has no queue of its own:
   * a pulse asked for during a motion starts when the motion ends.
   */
  pulseOutput(durationMs: number): Promise<void> {
    const pin = this.opts.wiring.triggerPin;
    if (pin === undefined) return Promise.reject(new HalError('OTHER', 'no trigger pin is wired: set "driver": {"trigger_pin": N} in the config file'));
    if (this.phase !== 'ready') return Promise.reject(new HalError('DISCONNECTED', `the Firmata board on ${this.opts.path} is not connected (${this.phase}); the trigger pulse was not given`));
    return new Promise<void>((resolve) => {
      const fire = () => {
        if (!this.triggerConfigured) {
          this.write(cmd.setPinMode(pin, PIN_MODE.OUTPUT));
          this.triggerConfigured = true;
        }
        this.write(cmd.setDigitalPinValue(pin, true));
        this.opts.clock.setTimerAt(this.opts.clock.nowUs() + Math.round(durationMs * 1000), () => {
          this.write(cmd.setDigitalPinValue(pin, false));
          resolve();
        });
      };
      if (this.motion) this.afterMotion.push(fire);
      else fire();
    });
  }

  subscribe(listener: (e: ControllerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  move(request: MoveRequest, onEnd: (end: MotionEnd) => void): void {
    this.assertReady();
    const motion = this.begin(onEnd);
    this.whenFramesKnown(() => {
      if (this.motion !== motion) return;
      const plan = this.planMove(request);
      let left = 0;
      const bytes: number[] = [];
      motion.coordinated = AXES.every((axis) => request.targetSteps[axis] !== this.pos[axis]);
      for (const axis of AXES) {
        if (request.targetSteps[axis] === this.pos[axis]) continue;
        left++;
        bytes.push(
          ...this.runBytes(axis, request.targetSteps[axis], plan[axis].speedStepsS, plan[axis].madeStepsS, plan[axis].accelStepsS2, () => {
            if (--left === 0) this.end(motion, { outcome: 'completed' });
          }),
        );
      }
      this.write(bytes);
      if (left === 0) this.end(motion, { outcome: 'completed' });
    });
  }

  home(axes: readonly AxisName[], onEnd: (end: MotionEnd) => void): void {
    this.assertReady();
    const motion = this.begin(onEnd);
    for (const axis of axes) {
      this.isHomed[axis] = false;
      this.homingPhase[axis] = 'waiting';
    }
    if (this.opts.simultaneousHoming ?? true) {
      let left = axes.length;
      this.whenFramesKnown(() => {
        for (const axis of axes) {
          if (this.motion !== motion) return;
          this.homeAxis(motion, axis, () => --left === 0 && this.end(motion, { outcome: 'completed' }));
        }
      });
      return;
    }
    const next = (i: number): void => {
      if (this.motion !== motion) return;
      if (i >= axes.length) return this.end(motion, { outcome: 'completed' });
      this.homeAxis(motion, axes[i], () => next(i + 1));
    };
    this.whenFramesKnown(() => next(0));
  }

  stop(): void {
    const motion = this.motion;
    if (!motion) return;
    if (this.phase === 'ready') this.write(this.haltBytes(AXES, 'keep'));
    this.end(motion, { outcome: 'halted' });
  }

  // ---- motion ----

  private assertReady(): void {
    if (this.motion) throw new Error('motion controller is busy');
    if (this.phase === 'ready') return;
    if (this.phase === 'silent') throw new HalError('DISCONNECTED', `the Firmata board on ${this.opts.path} is not answering; check the board and its USB cable`);
    if (this.phase === 'handshake' || this.phase === 'configuring') {
      throw new HalError('DISCONNECTED', `the Firmata board on ${this.opts.path} is still connecting (${this.opts.baudRate} baud); try again in a few seconds`);
    }
    throw new HalError('DISCONNECTED', `the Firmata board on ${this.opts.path} is not connected${this.link.lastError ? ` (${this.link.lastError})` : ''}; it reconnects by itself when the line is back`);
  }

  private begin(onEnd: (end: MotionEnd) => void): Motion {
    const motion: Motion = { coordinated: false, lastTrimUs: 0, onEnd, run: { theta: null, phi: null }, onSwitch: { theta: null, phi: null } };
    this.motion = motion;
    this.schedulePoll();
    return motion;
  }

  private end(motion: Motion, end: MotionEnd): void {
    if (this.motion !== motion) return;
    this.motion = null;
    this.homingPhase.theta = null;
    this.homingPhase.phi = null;
    this.segment.theta = null;
    this.segment.phi = null;
    motion.onEnd(end);
    this.schedulePoll();
    for (const fire of this.afterMotion.splice(0)) fire();
  }

  /**
   * Speeds and accelerations per axis: each scaled by its share of the longest travel (proportional
   * trapezoids arrive together), then both by one factor so the pair fits the board's step rate.
   */
  private planMove(request: MoveRequest): AxisPair<{ speedStepsS: number; madeStepsS: number; accelStepsS2: number }> {
    const perDeg = this.opts.stepsPerDeg;
    const dDeg = mapAxes(request.targetSteps, (target, axis) => Math.abs(target - this.pos[axis]) / perDeg[axis]);
    const longest = Math.max(dDeg.theta, dDeg.phi) || 1;
    const wanted = mapAxes(dDeg, (d, axis) => ({ speedStepsS: (request.speedDegS * d * perDeg[axis]) / longest, accelStepsS2: (request.accelDegS2 * d * perDeg[axis]) / longest }));
    const k = stepRateScale(wanted.theta.speedStepsS, wanted.phi.speedStepsS, this.timing);
    const speed = mapAxes(wanted, (w) => w.speedStepsS * k);
    // The faster axis is made late by the loop; ask the slower one for what keeps the ratio of what is made.
    const fast: AxisName = speed.theta >= speed.phi ? 'theta' : 'phi';
    const slow: AxisName = fast === 'theta' ? 'phi' : 'theta';
    const made = { theta: 0, phi: 0 };
    made[fast] = madeStepRate(speed[fast], speed[slow], this.timing);
    made[slow] = speed[fast] > 0 ? (made[fast] * speed[slow]) / speed[fast] : 0;
    made[fast] = madeStepRate(speed[fast], made[slow], this.timing);
    made[slow] = speed[fast] > 0 ? (made[fast] * speed[slow]) / speed[fast] : 0;
    const asked = { theta: 0, phi: 0 };
    asked[fast] = speed[fast];
    asked[slow] = askedForMade(made[slow], made[fast], this.timing);
    return mapAxes(wanted, (w, axis) => ({ speedStepsS: asked[axis], madeStepsS: made[axis], accelStepsS2: w.accelStepsS2 }));
  }

  /**
   * One axis on its own (homing): the speed within the ceiling, and what the board makes of it
   * while the other stepper runs what it was last asked (it homes too) or nothing.
   */
  private loneSpeed(speedDegS: number, axis: AxisName): { speedStepsS: number; madeStepsS: number; wantedStepsS: number } {
    const wanted = speedDegS * this.opts.stepsPerDeg[axis];
    const partnerStepsS = this.segment[axis === 'theta' ? 'phi' : 'theta']?.askedStepsS ?? 0;
    const speedStepsS = wanted * stepRateScale(wanted, partnerStepsS, this.timing);
    return { speedStepsS, madeStepsS: madeStepRate(speedStepsS, partnerStepsS, this.timing), wantedStepsS: wanted };
  }

  /**
   * Homing both at once: a stepper's speed was fitted to what the other ran when its phase
   * began. When the other's phase changes (it starts, stops, or it is done), the speed is fitted
   * again (SET_SPEED mid-run, as the trim does), so an axis left alone runs at the lone rate.
   */
  private rebalanceHoming(changed: AxisName): void {
    const other: AxisName = changed === 'theta' ? 'phi' : 'theta';
    const s = this.segment[other];
    if (!this.motion || this.motion.coordinated || !s || s.wantedStepsS === undefined) return;
    const partnerStepsS = this.segment[changed]?.askedStepsS ?? 0;
    const asked = s.wantedStepsS * stepRateScale(s.wantedStepsS, partnerStepsS, this.timing);
    if (Math.abs(asked - s.askedStepsS) < 0.01 * s.askedStepsS) return;
    s.askedStepsS = asked;
    s.madeStepsS = madeStepRate(asked, partnerStepsS, this.timing);
    s.cruiseFrom = null;
    this.write(cmd.stepperSpeed(DEVICE[other], asked));
  }

  /** The board's frame of `axis` in driver steps, for a command sent now. */
  private boardSteps(axis: AxisName, driverSteps: number): number {
    return driverSteps - this.devices[axis].frame.offsetSteps!;
  }

  /** Speed, acceleration, target and a fence, for one axis; `done` when its MOVE_COMPLETE comes. */
  private runBytes(axis: AxisName, target: number, speedStepsS: number, madeStepsS: number, accelStepsS2: number, done: () => void): number[] {
    const dev = DEVICE[axis];
    this.segment[axis] = { fromSteps: this.pos[axis], toSteps: target, askedStepsS: speedStepsS, madeStepsS, accelStepsS2, samples: [], cruiseFrom: null };
    const bytes = [...cmd.stepperSpeed(dev, speedStepsS), ...cmd.stepperAcceleration(dev, accelStepsS2), ...cmd.stepperTo(dev, this.boardSteps(axis, target))];
    const fence = this.request(axis, 'report');
    if (this.motion) this.motion.run[axis] = { afterSeq: fence.seq, done };
    return [...bytes, ...cmd.stepperReportPosition(dev)];
  }

  /**
   * Stops `axes` at once and clears AccelStepper's speed: STOP (halts now, answers with the
   * position), ZERO (setCurrentPosition(0): speed and ramp forgotten), REPORT (the fence of the
   * new frame). `keep` keeps this driver's frame (offset += halted position); `home` makes the
   * halted point 0. `then` runs once every axis's halt has been answered.
   */
  private haltBytes(axes: readonly AxisName[], mode: 'keep' | 'home', then?: () => void): number[] {
    this.stats.stops++;
    const stops: number[] = [];
    const zeros: number[] = [];
    const reports: number[] = [];
    let left = axes.length;
    for (const axis of axes) {
      const d = this.devices[axis];
      const old = d.frame;
      const next: Frame = { offsetSteps: null };
      this.segment[axis] = null;
      if (this.motion) this.motion.run[axis] = null;
      this.request(axis, 'stop', (boardSteps) => {
        const haltedSteps = old.offsetSteps! + boardSteps;
        if (mode === 'home') {
          if (this.everHomed[axis]) this.homingError[axis] = haltedSteps;
          next.offsetSteps = 0;
          this.pos[axis] = 0;
        } else {
          next.offsetSteps = haltedSteps;
          this.pos[axis] = haltedSteps;
        }
        if (--left === 0) then?.();
        this.runAfterFrames();
      });
      stops.push(...cmd.stepperStop(DEVICE[axis]));
      zeros.push(...cmd.stepperZero(DEVICE[axis]));
      d.frame = next;
      this.request(axis, 'report');
      reports.push(...cmd.stepperReportPosition(DEVICE[axis]));
    }
    return [...stops, ...zeros, ...reports];
  }

  /** Registers a request of `axis` answered in its current frame. */
  private request(axis: AxisName, kind: Pending['kind'], onReply?: (boardSteps: number) => void): Pending {
    const d = this.devices[axis];
    const p: Pending = { seq: ++this.seq, kind, frame: d.frame, sentUs: this.opts.clock.nowUs(), onReply };
    d.pending.push(p);
    return p;
  }

  private whenFramesKnown(work: () => void): void {
    this.afterFrames.push(work);
    this.runAfterFrames();
  }

  private runAfterFrames(): void {
    if (AXES.some((axis) => this.devices[axis].frame.offsetSteps === null)) return;
    const work = this.afterFrames;
    this.afterFrames = [];
    for (const w of work) w();
  }

  /**
   * Runs `axis` toward `target` until its switch reads `wantClosed` (then halts there) or the target is reached.
   * `found` gets the position last sampled when the switch report was read: about where the switch changed, however
   * far the board ran on before the halt reached it.
   */
  private untilSwitch(motion: Motion, axis: AxisName, target: number, speedDegS: number, wantClosed: boolean, mode: 'keep' | 'home', found: (seenAt: number) => void, notFound: () => void): void {
    if (this.switchClosed[axis] === wantClosed) {
      const seenAt = this.pos[axis];
      this.write(this.haltBytes([axis], mode, () => this.motion === motion && found(seenAt)));
      return;
    }
    let halting = false;
    motion.onSwitch[axis] = (closed) => {
      if (halting || closed !== wantClosed) return;
      halting = true;
      motion.onSwitch[axis] = null;
      const seenAt = this.pos[axis];
      this.write(this.haltBytes([axis], mode, () => this.motion === motion && found(seenAt)));
      this.rebalanceHoming(axis);
    };
    const { speedStepsS, madeStepsS, wantedStepsS } = this.loneSpeed(speedDegS, axis);
    this.write(
      this.runBytes(axis, target, speedStepsS, madeStepsS, this.opts.homingAccelDegS2() * this.opts.stepsPerDeg[axis], () => {
        motion.onSwitch[axis] = null;
        this.rebalanceHoming(axis);
        if (halting || this.motion !== motion) return;
        // Reached the target without the switch changing.
        notFound();
      }),
    );
    this.segment[axis]!.wantedStepsS = wantedStepsS;
    this.rebalanceHoming(axis);
  }

  /** Clear the switch if closed, seek, back off, re-approach slowly; the halted point is 0. */
  private homeAxis(motion: Motion, axis: AxisName, done: () => void): void {
    const cfg = this.opts.homing[axis];
    const perDeg = this.opts.stepsPerDeg[axis];
    const pullOff = Math.max(1, Math.round(cfg.pullOffDeg * perDeg));
    const fail = (code: string, message: string) => {
      // The other stepper may still be homing: it stops with this one.
      if (this.motion === motion) this.write(this.haltBytes(AXES.filter((a) => a !== axis && this.segment[a]), 'keep'));
      this.end(motion, { outcome: 'failed', fault: { code, message } });
    };
    const finish = () => {
      this.homingPhase[axis] = 'done';
      this.isHomed[axis] = true;
      this.everHomed[axis] = true;
      done();
    };
    // The re-approach runs to 2 x pull-off beyond `closedAt`, a point where the switch was seen closed (where the seek
    // halted, or where the axis powered up on it): the switch closes again on the way, however far the back-off ran on
    // past the edge before its halt reached the board (a host that reads the switch late: the board keeps stepping).
    // From where the pull-off ended, 2 x pull-off fell short of the switch whenever the back-off overran by more than
    // the pull-off (test/hal/firmata-driver.test.ts, the host that stalls).
    const approach = (closedAt: number) => {
      this.homingPhase[axis] = 'approach';
      const target = Math.min(this.pos[axis], closedAt) - 2 * pullOff;
      this.untilSwitch(motion, axis, target, cfg.feedDegS, true, 'home', finish, () =>
        fail('POS_ERR_HOMING_SWITCH_NOT_FOUND', `${axis}: home switch not found again on the slow re-approach (${(2 * cfg.pullOffDeg).toFixed(1)} deg beyond where it was closed); check the switch`),
      );
    };
    // Back off until the switch opens, then the pull-off beyond.
    const backOff = (maxDeg: number) => {
      this.homingPhase[axis] = 'back_off';
      const closedAt = this.pos[axis];
      this.untilSwitch(motion, axis, this.pos[axis] + Math.round(maxDeg * perDeg), cfg.seekDegS, false, 'keep', () => this.runThen(motion, axis, this.pos[axis] + pullOff, cfg.seekDegS, () => approach(closedAt)), () =>
        fail('POS_ERR_HOMING_SWITCH_STUCK', `${axis}: home switch still closed after backing off ${maxDeg.toFixed(1)} deg; the switch is stuck or the axis cannot move`),
      );
    };
    const travel = Math.ceil(this.opts.travelDeg[axis] * 1.05 * perDeg);
    const seek = () => {
      this.homingPhase[axis] = 'seek';
      // The back-off's bound counts from where the switch was seen closing, not from where the seek halted: a host that
      // reads the switch late (a busy machine) lets the board run on, with the switch closed all the way (theta's
      // switch stays closed below home), and a bound from the halt ended the back-off short of the edge:
      // POS_ERR_HOMING_SWITCH_STUCK (test/hal/firmata-driver.test.ts, the host that reads the switch closing late).
      this.untilSwitch(motion, axis, this.pos[axis] - travel, cfg.seekDegS, true, 'keep', (seenAt) => backOff(Math.max(cfg.pullOffDeg * 2, HOMING_CLEAR_MAX_DEG) + Math.abs(seenAt - this.pos[axis]) / perDeg), () =>
        fail('POS_ERR_HOMING_SWITCH_NOT_FOUND', `${axis}: home switch not found within ${(travel / perDeg).toFixed(1)} deg of travel; check the switch wiring`),
      );
    };
    // Powered up on the switch (phi inside its cam): clear it first, with a bounded travel.
    if (this.switchClosed[axis]) backOff(HOMING_CLEAR_MAX_DEG);
    else seek();
  }

  /** A plain move of one axis (homing's pull-off), then `then`. */
  private runThen(motion: Motion, axis: AxisName, target: number, speedDegS: number, then: () => void): void {
    const { speedStepsS, madeStepsS, wantedStepsS } = this.loneSpeed(speedDegS, axis);
    this.write(
      this.runBytes(axis, target, speedStepsS, madeStepsS, this.opts.homingAccelDegS2() * this.opts.stepsPerDeg[axis], () => {
        this.rebalanceHoming(axis);
        if (this.motion === motion) then();
      }),
    );
    this.segment[axis]!.wantedStepsS = wantedStepsS;
    this.rebalanceHoming(axis);
  }

  private fault(fault: MotionFault): void {
    if (this.motion) this.end(this.motion, { outcome: 'failed', fault });
    else this.tell({ type: 'fault', fault });
  }

  private tell(event: ControllerEvent): void {
    for (const l of this.listeners) l(event);
  }

  private write(bytes: number[]): void {
    if (bytes.length > 0) this.link.write(Buffer.from(bytes));
  }

  // ---- what the board says ----

  private onMessage(m: FirmataMessage): void {
    switch (m.kind) {
      case 'version':
        return this.onVersion();
      case 'stepper':
        return this.onStepper(m.device, m.steps, m.complete);
      case 'digital':
        return this.onDigital(m.port, m.value);
      default:
        return; // firmware name, strings, group reports: nothing to do
    }
  }

  /** A version report: the answer to our query, or the board (re)booted (setup() sends it unasked). */
  private onVersion(): void {
    this.versionSeen = true;
    const asked = this.versionQueries > 0;
    if (asked) this.versionQueries--;
    if (this.phase === 'handshake') return this.configure();
    // While configuring: the answer to our query after the board's own boot report (an Uno resets as the port
    // opens); a reboot in the middle would leave the fence unanswered, and pollOnce() configures again.
    if (this.phase === 'configuring') return;
    if (this.phase === 'ready' && asked) return; // a probe's late answer: the board is fine
    if (this.phase === 'ready') {
      this.stats.boardResets++;
      this.lostPosition(`the Firmata board on ${this.opts.path} reset by itself`);
    }
    // Ready (a reboot) or silent (the board is back): its steppers and our frames are gone.
    this.configure();
  }

  /**
   * A position. REPORT_POSITION answers and STOP's MOVE_COMPLETE are the answers to our
   * requests, in order: the FIFO says which frame each is in. Any other MOVE_COMPLETE is a
   * move finishing, read in the frame of the last answer (nothing reframes a running stepper).
   */
  private onStepper(device: number, boardSteps: number, complete: boolean): void {
    const axis = AXIS_OF_DEVICE[device];
    if (!axis || (this.phase !== 'ready' && this.phase !== 'configuring')) return;
    const d = this.devices[axis];
    const head = d.pending[0];
    if (head && (head.kind === 'stop') === complete) {
      d.pending.shift();
      d.lastFrame = head.frame;
      this.stats.positionReports++;
      if (head.frame.offsetSteps !== null) this.pos[axis] = head.frame.offsetSteps + boardSteps;
      head.onReply?.(boardSteps);
      if (this.phase === 'configuring' && AXES.every((a) => this.devices[a].pending.length === 0)) this.configured();
      else if (!complete && head.frame.offsetSteps !== null) this.sampled(axis);
      return;
    }
    if (!complete) return; // an answer to a request from before a reconfiguration
    if (d.lastFrame.offsetSteps !== null) this.pos[axis] = d.lastFrame.offsetSteps + boardSteps;
    const run = this.motion?.run[axis];
    if (run && (head === undefined || head.seq >= run.afterSeq)) {
      this.motion!.run[axis] = null;
      this.segment[axis] = null;
      run.done();
    }
  }

  /** A fresh position of a moving axis: a velocity sample, and maybe a trim of the slower axis. */
  private sampled(axis: AxisName): void {
    const s = this.segment[axis];
    if (!s || !this.motion) return;
    const nowUs = this.opts.clock.nowUs();
    // Answers at one instant (a settle() without time passing) are one sample: the velocity must not move while time stands still.
    if (s.samples.at(-1)?.tUs === nowUs) s.samples.pop();
    s.samples.push({ tUs: nowUs, steps: this.pos[axis] });
    if (s.samples.length > 8) s.samples.shift();
    const dir = Math.sign(s.toSteps - s.fromSteps);
    const done = (this.pos[axis] - s.fromSteps) * dir;
    const rampSteps = (s.askedStepsS * s.askedStepsS) / (2 * s.accelStepsS2);
    const cruising = done >= rampSteps && (s.toSteps - this.pos[axis]) * dir > rampSteps;
    if (!cruising) s.cruiseFrom = null;
    else s.cruiseFrom ??= { tUs: nowUs, steps: this.pos[axis] };
    if (axis === 'phi') this.trim(nowUs);
  }

  /**
   * Keeps a two-axis move together: the board makes neither speed exactly (its loop is late by
   * a pass, more when the partner steps), so the slower axis's speed is set, every
   * TRIM_EVERY_US of cruise, to what finishes its travel when the faster axis, measured, will.
   */
  private trim(nowUs: number): void {
    const motion = this.motion;
    if (!motion?.coordinated || nowUs - motion.lastTrimUs < TRIM_EVERY_US) return;
    const seg = this.segment;
    if (!seg.theta?.cruiseFrom || !seg.phi?.cruiseFrom) return;
    const travel = (axis: AxisName) => Math.abs(seg[axis]!.toSteps - seg[axis]!.fromSteps) / this.opts.stepsPerDeg[axis];
    const fast: AxisName = travel('theta') >= travel('phi') ? 'theta' : 'phi';
    const slow: AxisName = fast === 'theta' ? 'phi' : 'theta';
    const f = seg[fast]!;
    const s = seg[slow]!;
    const rate = (x: Segment) => Math.abs(this.pos[x === f ? fast : slow] - x.cruiseFrom!.steps) / ((nowUs - x.cruiseFrom!.tUs) / 1e6);
    if (nowUs - f.cruiseFrom!.tUs < TRIM_EVERY_US || nowUs - s.cruiseFrom!.tUs < TRIM_EVERY_US) return;
    const fastRate = rate(f);
    const slowRate = rate(s);
    if (!(fastRate > 0 && slowRate > 0)) return;
    const fastLeftS = Math.abs(f.toSteps - this.pos[fast]) / fastRate;
    const wantSlow = Math.abs(s.toSteps - this.pos[slow]) / fastLeftS;
    const factor = Math.min(1.5, Math.max(0.67, wantSlow / slowRate));
    if (Math.abs(factor - 1) < 0.002) return;
    motion.lastTrimUs = nowUs;
    s.askedStepsS *= factor;
    s.madeStepsS = wantSlow;
    s.cruiseFrom = { tUs: nowUs, steps: this.pos[slow] };
    this.write(cmd.stepperSpeed(DEVICE[slow], s.askedStepsS));
  }

  private onDigital(port: number, value: number): void {
    const { wiring } = this.opts;
    for (const axis of AXES) {
      if (wiring.switchPin[axis] >> 3 === port) {
        const closed = (value & (1 << (wiring.switchPin[axis] & 7))) === 0;
        this.switchClosed[axis] = closed;
        this.motion?.onSwitch[axis]?.(closed);
      }
      if (wiring.faultPin[axis] >> 3 === port) {
        const low = (value & (1 << (wiring.faultPin[axis] & 7))) === 0;
        const wasLow = this.driverFault[axis];
        this.driverFault[axis] = low;
        if (low && !wasLow && this.phase === 'ready') this.onDriverFault(axis);
      }
    }
  }

  /** A driver shut its outputs off: halt both axes (the healthy one too) and latch a hardware fault. */
  private onDriverFault(axis: AxisName): void {
    if (this.motion) this.write(this.haltBytes(AXES, 'keep'));
    this.fault({
      code: 'POS_ERR_HARDWARE',
      message: `hardware driver fault: the ${axis} stepper driver pulled its nFAULT line (D${this.opts.wiring.faultPin[axis]}) low: overcurrent or overtemperature; both axes were stopped; check the motor wiring and cooling, then home again`,
    });
  }

  // ---- connection ----

  private onOpen(): void {
    this.firstOpenPending = false;
    this.phase = 'handshake';
    this.openedUs = this.opts.clock.nowUs();
    this.reader = new FirmataReader((m) => this.onMessage(m));
    this.versionSeen = false;
    this.resetDevices();
    // A board that reset as the port opened (an Uno's DTR) says its version by itself after its blink; one that did not answers this.
    this.probe();
  }

  private probe(): void {
    this.versionQueries++;
    this.lastProbeUs = this.opts.clock.nowUs();
    this.write(cmd.reportVersion());
  }

  private resetDevices(): void {
    for (const axis of AXES) {
      const frame = { offsetSteps: 0 };
      this.devices[axis] = { frame, lastFrame: frame, pending: [] };
    }
    this.afterFrames = [];
  }

  /** SYSTEM_RESET first (the parser, the steppers, the pins), then the steppers, the inputs, and a fence. */
  private configure(): void {
    this.stats.configurations++;
    this.phase = 'configuring';
    this.triggerConfigured = false;
    this.resetDevices();
    const { wiring } = this.opts;
    const inputs = AXES.flatMap((axis) => [wiring.switchPin[axis], wiring.faultPin[axis]]);
    const ports = [...new Set(inputs.map((pin) => pin >> 3))];
    const bytes = [
      ...cmd.systemReset(),
      ...cmd.samplingInterval(this.opts.samplingIntervalMs ?? 1),
      ...AXES.flatMap((axis) => cmd.stepperConfigDriver(DEVICE[axis], wiring.stepPin[axis], wiring.dirPin[axis])),
      // Every input pulled up before its port reports: a port report must not read a floating input.
      ...inputs.flatMap((pin) => cmd.setPinMode(pin, PIN_MODE.PULLUP)),
      ...ports.flatMap((port) => cmd.reportDigital(port, true)),
    ];
    for (const axis of AXES) {
      this.request(axis, 'report');
      bytes.push(...cmd.stepperReportPosition(DEVICE[axis]));
    }
    this.switchClosed.theta = this.switchClosed.phi = null;
    this.driverFault.theta = this.driverFault.phi = false;
    this.pos.theta = this.pos.phi = 0;
    this.isHomed = { theta: false, phi: false };
    this.write(bytes);
  }

  /** The fence of a configuration came back: the board is ours. */
  private configured(): void {
    this.phase = 'ready';
    this.handshakeFaulted = false;
    if (!this.everReady) {
      this.everReady = true;
      this.tell({ type: 'connected', message: `the Firmata board on ${this.opts.path} is configured (${this.opts.baudRate} baud); home the axes (POST /home)` });
    } else if (this.lostSinceReady) {
      this.lostSinceReady = false;
      this.stats.reconnects++;
      this.tell({ type: 'reconnected', message: `the Firmata board on ${this.opts.path} is back after a drop or reset; its positions are lost: home the axes (POST /home)` });
    }
    this.wake();
    this.schedulePoll();
  }

  /** Asks both positions (if nothing is in flight) and resolves once they are answered or the line resets. */
  private readPositions(): Promise<void> {
    return new Promise((resolve) => {
      let left = AXES.length;
      const bytes: number[] = [];
      for (const axis of AXES) {
        this.request(axis, 'report', () => --left === 0 && resolve());
        bytes.push(...cmd.stepperReportPosition(DEVICE[axis]));
      }
      this.settleWaiters.push(resolve);
      this.write(bytes);
    });
  }

  private lostPosition(why: string): void {
    if (this.everReady) this.lostSinceReady = true;
    this.isHomed = { theta: false, phi: false };
    if (this.motion) this.end(this.motion, { outcome: 'failed', fault: { code: 'POS_ERR_DISCONNECTED', message: `${why} mid-motion; home again once it is back` } });
  }

  private onOpenFailed(): void {
    if (!this.firstOpenPending) return;
    this.firstOpenPending = false;
    this.fault({ code: 'POS_ERR_DISCONNECTED', message: `cannot open serial line ${this.opts.path} (${this.link.lastError}); retrying every ${this.opts.retryMs ?? 500} ms` });
    this.wake();
  }

  private onDown(reason: string): void {
    const wasUp = this.phase !== 'connecting';
    this.phase = 'connecting';
    this.reader = null;
    this.resetDevices();
    this.lostPosition(`serial line ${this.opts.path} dropped (${reason})`);
    if (wasUp) this.fault({ code: 'POS_ERR_DISCONNECTED', message: `serial line ${this.opts.path} dropped (${reason}); reconnecting, then home again` });
    this.wake();
  }

  private schedulePoll(): void {
    if (this.closed) return;
    this.poll?.cancel();
    const periodMs = this.motion ? (this.opts.pollMovingMs ?? 40) : (this.opts.pollIdleMs ?? 250);
    this.poll = this.opts.clock.setTimerAt(this.opts.clock.nowUs() + periodMs * 1000, () => {
      this.poll = null;
      this.pollOnce();
      this.schedulePoll();
    });
  }

  /** One poll: never a second request while one is unanswered (the board's 64-byte ring may be unread). */
  private pollOnce(): void {
    const nowUs = this.opts.clock.nowUs();
    const retryUs = (this.opts.retryMs ?? 1000) * 1000;
    if (this.phase === 'handshake' || this.phase === 'configuring') {
      const timeoutUs = (this.opts.handshakeTimeoutMs ?? 5000) * 1000;
      if (!this.handshakeFaulted && nowUs - this.openedUs >= timeoutUs) {
        this.handshakeFaulted = true;
        this.fault({ code: 'POS_ERR_DISCONNECTED', message: this.handshakeFailure() });
        this.wake();
      }
      if (this.phase === 'handshake' && nowUs - this.lastProbeUs >= Math.max(retryUs, 2_500_000)) this.probe();
      if (this.phase === 'configuring' && nowUs - this.oldestPendingUs() > (this.opts.answerTimeoutMs ?? 2000) * 1000) this.configure();
      return;
    }
    if (this.phase === 'silent') {
      if (nowUs - this.lastProbeUs >= retryUs) this.probe();
      return;
    }
    if (this.phase !== 'ready') return;
    const oldest = this.oldestPendingUs();
    if (oldest !== Infinity) {
      const timeoutMs = this.opts.answerTimeoutMs ?? 2000;
      if (nowUs - oldest > timeoutMs * 1000) this.goSilent(timeoutMs);
      return;
    }
    if (this.afterFrames.length > 0) return;
    void this.readPositions();
  }

  private oldestPendingUs(): number {
    return Math.min(...AXES.map((axis) => this.devices[axis].pending[0]?.sentUs ?? Infinity));
  }

  private goSilent(timeoutMs: number): void {
    this.phase = 'silent';
    this.resetDevices();
    this.lostPosition(`the Firmata board on ${this.opts.path} stopped answering`);
    this.fault({ code: 'POS_ERR_DISCONNECTED', message: `the Firmata board on ${this.opts.path} stopped answering (no answer for ${timeoutMs} ms); waiting for it, then home again` });
    this.wake();
  }

  /** Why the handshake failed, naming the baud rate: garbage means the rates differ; silence may too. */
  private handshakeFailure(): string {
    const seconds = ((this.opts.handshakeTimeoutMs ?? 5000) / 1000).toFixed(0);
    const other = this.opts.baudRate === 115200 ? 57600 : 115200;
    const garbage = this.reader?.garbageBytes ?? 0;
    if (!this.versionSeen && garbage > 0) {
      return `the board on ${this.opts.path} answers garbage at ${this.opts.baudRate} baud (${garbage} bytes that are no Firmata message): the baud rates differ; ConfigurableFirmata 3.x examples use 115200, 2.x 57600: try --baud ${other}`;
    }
    if (this.versionSeen) {
      return `the Firmata board on ${this.opts.path} answered at ${this.opts.baudRate} baud but its steppers did not: is AccelStepperFirmata in the build? (docs/hardware.md "Firmata")`;
    }
    return `no answer from a Firmata board on ${this.opts.path} at ${this.opts.baudRate} baud within ${seconds} s: check that it runs ConfigurableFirmata with AccelStepperFirmata, and its baud rate (3.x examples use 115200: try --baud ${other})`;
  }

  private wake(): void {
    const waiters = this.settleWaiters;
    this.settleWaiters = [];
    for (const w of waiters) w();
  }
}

function freshDevice(): DeviceLink {
  const frame = { offsetSteps: 0 };
  return { frame, lastFrame: frame, pending: [] };
}
