/**
 * MotionController for an Arduino running ConfigurableFirmata with
 * AccelStepperFirmata and two step/dir drivers, over USB serial: a
 * johnny-five `Board` with a firmata.js `io` whose transport is our own
 * self-reopening serial line (hal/serial-link.ts on serialport 13).
 * johnny-five gives the connection lifecycle (version, firmware,
 * capabilities, 'ready'); its `Stepper` has no stop, so the steppers are
 * driven with the firmata.js AccelStepperFirmata calls under it.
 *
 * Per connection: configure both steppers (device 0 theta, 1 phi) as
 * step/dir drivers, put them in multi-stepper group 0, zero them (the
 * firmware's frame restarts where the board is), set the switch inputs to
 * INPUT_PULLUP (a switch to ground reads 0 when closed) and report them,
 * and the same for the drivers' nFAULT outputs (low = driver in fault:
 * both axes stopped, POS_ERR_HARDWARE).
 * Moves: each stepper gets its speed and acceleration scaled by its share of
 * the move, then its target, in one write: the two trapezoids are
 * proportional, so both axes start and arrive together with acceleration
 * (AccelStepperFirmata's multi-stepper move would arrive together too, but
 * MultiStepper runs at constant speed with no ramps, which stalls a loaded
 * motor at our speeds; the group is used for the one-message stop).
 * Stop: `multiStepperStop` on the group. Homing runs here, per axis, against
 * the switch reports: seek, stop on the switch, back off, approach slowly,
 * stop, zero. Positions come from `accelStepperReportPosition` polls (40 ms
 * while moving, 250 ms idle) and move-complete replies; the velocity is read
 * off the commanded trapezoid at the reported position.
 * Faults: a dropped or silent line (no position report within 2 s) is
 * POS_ERR_DISCONNECTED and the driver reconnects by itself; a version report
 * nobody asked for means the board reset: positions are lost and the
 * firmware hears `reconnected` once it is configured again.
 */
import { EventEmitter } from 'node:events';
import type { AxisName, AxisPair } from './axes';
import { AXES, mapAxes } from './axes';
import type { Clock, TimerHandle } from './clock';
import { HalError } from './errors';
import type { ControllerEvent, MotionController, MotionEnd, MotionFault, MoveRequest } from './motion-controller';
import { ACCEL, encodeCustomFloat, FIRMATA } from './firmata-protocol';
import { SerialLink, type SerialTrace } from './serial-link';

/** The firmata.js calls this driver uses (firmata-io has no type declarations). */
interface FirmataIo extends EventEmitter {
  isReady: boolean;
  STEPPER: { TYPE: { DRIVER: number }; STEP_SIZE: { WHOLE: number } };
  MODES: { PULLUP: number };
  accelStepperConfig(o: { deviceNum: number; type: number; stepSize: number; stepPin: number; directionPin: number }): void;
  accelStepperZero(n: number): void;
  accelStepperTo(n: number, position: number): void;
  accelStepperStop(n: number): void;
  accelStepperReportPosition(n: number): void;
  sysexCommand(message: number[]): void;
  multiStepperConfig(o: { groupNum: number; devices: number[] }): void;
  multiStepperStop(group: number): void;
  pinMode(pin: number, mode: number): void;
  reportDigitalPin(pin: number, on: 0 | 1): void;
}
type FirmataClass = new (transport: EventEmitter, options: Record<string, unknown>) => FirmataIo;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Firmata = (require('firmata-io') as { Firmata: FirmataClass }).Firmata;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const five = require('johnny-five') as { Board: new (o: Record<string, unknown>) => EventEmitter };

export interface FirmataWiring {
  stepPin: AxisPair<number>;
  dirPin: AxisPair<number>;
  /** Digital inputs of the home switches (switch to ground, internal pull-up). */
  switchPin: AxisPair<number>;
  /** Digital inputs wired to the drivers' open-drain nFAULT outputs (internal pull-up; low = driver in fault). */
  faultPin: AxisPair<number>;
}

export interface FirmataDriverOptions {
  path: string;
  baudRate: number;
  clock: Clock;
  stepsPerDeg: AxisPair<number>;
  wiring: FirmataWiring;
  homing: AxisPair<{ seekDegS: number; feedDegS: number; pullOffDeg: number }>;
  travelDeg: AxisPair<number>;
  /** Acceleration of homing moves, deg/s^2. */
  homingAccelDegS2: () => number;
  pollMovingMs?: number;
  pollIdleMs?: number;
  answerTimeoutMs?: number;
  retryMs?: number;
  /** Sees every byte on the line (hal/serial-link.ts). */
  trace?: SerialTrace;
}

const DEVICE: AxisPair<number> = { theta: 0, phi: 1 };
const GROUP = 0;

type Phase = 'connecting' | 'handshake' | 'ready' | 'silent';

/** The trapezoid an axis was last told to run, to read its velocity off its position. */
interface Segment {
  fromSteps: number;
  toSteps: number;
  speedStepsS: number;
  accelStepsS2: number;
}

interface Motion {
  onEnd: (end: MotionEnd) => void;
  /** Per device: what to do when its move-complete arrives. */
  onDone: Map<number, (position: number) => void>;
  /** Per axis: what to do when its switch closes (homing). */
  onSwitch: Map<AxisName, () => void>;
}

/**
 * firmata.js writes through this: our serial line, as the stream it expects.
 * The messages of one call stack (the two steppers' speed, acceleration and
 * target) leave in one write, so the board starts both axes together.
 */
class LinkTransport extends EventEmitter {
  private pending: Buffer[] = [];

  constructor(private readonly link: SerialLink) {
    super();
  }

  write(data: Buffer, callback?: () => void): void {
    if (this.pending.length === 0) queueMicrotask(() => this.flush());
    this.pending.push(data);
    callback?.();
  }

  private flush(): void {
    const data = Buffer.concat(this.pending);
    this.pending = [];
    this.link.write(data);
  }
}

export class FirmataDriver implements MotionController {
  readonly stats = { reconnects: 0, positionReports: 0, boardResets: 0 };
  private readonly link: SerialLink;
  private readonly listeners = new Set<(e: ControllerEvent) => void>();
  private transport: LinkTransport | null = null;
  private io: FirmataIo | null = null;
  private phase: Phase = 'connecting';
  private firstOpenPending = true;
  private everReady = false;
  private lostSinceReady = false;
  private readonly pos: AxisPair<number> = { theta: 0, phi: 0 };
  private readonly segment: AxisPair<Segment | null> = { theta: null, phi: null };
  private readonly switchClosed: AxisPair<boolean | null> = { theta: null, phi: null };
  private readonly driverFault: AxisPair<boolean> = { theta: false, phi: false };
  private isHomed: AxisPair<boolean> = { theta: false, phi: false };
  private readonly everHomed: AxisPair<boolean> = { theta: false, phi: false };
  private readonly homingError: AxisPair<number | null> = { theta: null, phi: null };
  private motion: Motion | null = null;
  private asked = 0;
  private pendingTheta: number | null = null;
  private answered = 0;
  private lastAnswerUs = 0;
  private positionWaiters: { at: number; resolve: () => void }[] = [];
  private settleWaiters: (() => void)[] = [];
  private poll: TimerHandle | null = null;
  private closed = false;

  constructor(private readonly opts: FirmataDriverOptions) {
    this.link = new SerialLink(
      { path: opts.path, baudRate: opts.baudRate, clock: opts.clock, retryMs: opts.retryMs, trace: opts.trace },
      {
        onOpen: () => this.onOpen(),
        onData: (chunk) => this.transport?.emit('data', chunk),
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
    this.dropIo();
    await this.link.close();
    this.wake();
  }

  connectionPhase(): Phase {
    return this.phase;
  }

  /** Resolves once the board is configured (or the line is down) and fresh positions have been read. */
  async settle(): Promise<void> {
    while (!this.closed && (this.phase === 'handshake' || (this.phase === 'connecting' && this.firstOpenPending))) {
      await new Promise<void>((resolve) => this.settleWaiters.push(resolve));
    }
    if (this.phase === 'ready') await this.requestPositions();
  }

  positionSteps(): AxisPair<number> {
    return { ...this.pos };
  }

  velocityDegS(): AxisPair<number> {
    const out = { theta: 0, phi: 0 };
    if (!this.motion) return out;
    for (const axis of AXES) {
      const s = this.segment[axis];
      if (!s || s.toSteps === s.fromSteps) continue;
      const dir = Math.sign(s.toSteps - s.fromSteps);
      const done = Math.max(0, (this.pos[axis] - s.fromSteps) * dir);
      const left = Math.max(0, (s.toSteps - this.pos[axis]) * dir);
      const v = s.accelStepsS2 > 0 ? Math.min(s.speedStepsS, Math.sqrt(2 * s.accelStepsS2 * done), Math.sqrt(2 * s.accelStepsS2 * left)) : s.speedStepsS;
      out[axis] = (dir * v) / this.opts.stepsPerDeg[axis];
    }
    return out;
  }

  homed(): AxisPair<boolean> {
    return { ...this.isHomed };
  }

  lastHomingErrorSteps(): AxisPair<number | null> {
    return { ...this.homingError };
  }

  busy(): boolean {
    return this.motion !== null;
  }

  subscribe(listener: (e: ControllerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  move(request: MoveRequest, onEnd: (end: MotionEnd) => void): void {
    const io = this.readyIo();
    const dDeg = mapAxes(request.targetSteps, (target, axis) => (target - this.pos[axis]) / this.opts.stepsPerDeg[axis]);
    const longest = Math.max(Math.abs(dDeg.theta), Math.abs(dDeg.phi));
    const motion = this.begin(onEnd);
    let left = 0;
    for (const axis of AXES) {
      if (request.targetSteps[axis] === this.pos[axis]) continue;
      // Proportional trapezoids: each axis's speed and accel scaled by its share of the longest travel.
      const share = Math.abs(dDeg[axis]) / longest;
      left++;
      this.runAxis(io, axis, request.targetSteps[axis], request.speedDegS * share, request.accelDegS2 * share, (position) => {
        this.pos[axis] = position;
        if (--left === 0) this.end(motion, { outcome: 'completed' });
      });
    }
    if (left === 0) this.end(motion, { outcome: 'completed' });
  }

  home(axes: readonly AxisName[], onEnd: (end: MotionEnd) => void): void {
    const io = this.readyIo();
    const motion = this.begin(onEnd);
    for (const axis of axes) this.isHomed[axis] = false;
    const next = (i: number): void => {
      if (this.motion !== motion) return;
      if (i >= axes.length) return this.end(motion, { outcome: 'completed' });
      this.homeAxis(io, motion, axes[i], () => next(i + 1));
    };
    next(0);
  }

  stop(): void {
    const motion = this.motion;
    if (!motion) return;
    if (this.io && this.phase === 'ready') {
      this.io.multiStepperStop(GROUP);
      void this.requestPositions();
    }
    this.end(motion, { outcome: 'halted' });
  }

  // ---- motion ----

  private readyIo(): FirmataIo {
    if (this.motion) throw new Error('motion controller is busy');
    if (this.phase === 'ready' && this.io) return this.io;
    if (this.phase === 'silent') throw new HalError('DISCONNECTED', `the Firmata board on ${this.opts.path} is not answering; check the board and its USB cable`);
    throw new HalError('DISCONNECTED', `the Firmata board on ${this.opts.path} is not connected${this.link.lastError ? ` (${this.link.lastError})` : ''}; it reconnects by itself when the line is back`);
  }

  private begin(onEnd: (end: MotionEnd) => void): Motion {
    const motion: Motion = { onEnd, onDone: new Map(), onSwitch: new Map() };
    this.motion = motion;
    this.schedulePoll();
    return motion;
  }

  private end(motion: Motion, end: MotionEnd): void {
    if (this.motion !== motion) return;
    this.motion = null;
    this.segment.theta = null;
    this.segment.phi = null;
    motion.onEnd(end);
    this.schedulePoll();
  }

  /** One axis to `target` (steps) on a trapezoid; `done` gets the position the board reports at the end. */
  private runAxis(io: FirmataIo, axis: AxisName, target: number, speedDegS: number, accelDegS2: number, done: (position: number) => void): void {
    const perDeg = this.opts.stepsPerDeg[axis];
    const segment = { fromSteps: this.pos[axis], toSteps: target, speedStepsS: speedDegS * perDeg, accelStepsS2: accelDegS2 * perDeg };
    this.segment[axis] = segment;
    this.motion?.onDone.set(DEVICE[axis], done);
    // Speed and acceleration with our own float encoder: firmata.js's overflows from 100,000 up.
    io.sysexCommand([FIRMATA.ACCELSTEPPER, ACCEL.SET_SPEED, DEVICE[axis], ...encodeCustomFloat(segment.speedStepsS)]);
    io.sysexCommand([FIRMATA.ACCELSTEPPER, ACCEL.SET_ACCELERATION, DEVICE[axis], ...encodeCustomFloat(segment.accelStepsS2)]);
    io.accelStepperTo(DEVICE[axis], target);
  }

  /** Seek, back off, approach, zero: the step controller's homing cycle, with the board doing the steps. */
  private homeAxis(io: FirmataIo, motion: Motion, axis: AxisName, done: () => void): void {
    const cfg = this.opts.homing[axis];
    const perDeg = this.opts.stepsPerDeg[axis];
    const accel = this.opts.homingAccelDegS2();
    const pullOff = Math.max(1, Math.round(cfg.pullOffDeg * perDeg));
    const fail = (code: string, message: string) => this.end(motion, { outcome: 'failed', fault: { code, message } });
    /** Runs toward `target` until the switch closes (then stops there) or the target is reached. */
    const untilSwitch = (target: number, speedDegS: number, found: () => void, notFound: () => void) => {
      let stopping = false;
      motion.onSwitch.set(axis, () => {
        if (stopping) return;
        stopping = true;
        io.accelStepperStop(DEVICE[axis]);
      });
      this.runAxis(io, axis, target, speedDegS, accel, (position) => {
        this.pos[axis] = position;
        motion.onSwitch.delete(axis);
        if (stopping || this.switchClosed[axis]) found();
        else notFound();
      });
    };
    const zero = () => {
      if (this.everHomed[axis]) this.homingError[axis] = this.pos[axis];
      io.accelStepperZero(DEVICE[axis]);
      this.pos[axis] = 0;
      this.isHomed[axis] = true;
      this.everHomed[axis] = true;
      done();
    };
    const approach = () =>
      untilSwitch(this.pos[axis] - 2 * pullOff, cfg.feedDegS, zero, () => fail('POS_ERR_HOMING_SWITCH_NOT_FOUND', `${axis}: home switch not found again on the slow re-approach; check the switch`));
    const backOff = () =>
      this.runAxis(io, axis, this.pos[axis] + pullOff, cfg.seekDegS, accel, (position) => {
        this.pos[axis] = position;
        if (this.switchClosed[axis]) return fail('POS_ERR_HOMING_SWITCH_STUCK', `${axis}: home switch still closed after backing off ${cfg.pullOffDeg} deg; the switch is stuck or the axis cannot move`);
        approach();
      });
    if (this.switchClosed[axis]) return backOff();
    const travel = Math.ceil(this.opts.travelDeg[axis] * 1.05 * perDeg);
    untilSwitch(this.pos[axis] - travel, cfg.seekDegS, backOff, () => fail('POS_ERR_HOMING_SWITCH_NOT_FOUND', `${axis}: home switch not found within ${(travel / perDeg).toFixed(1)} deg of travel; check the switch wiring`));
  }

  private fault(fault: MotionFault): void {
    if (this.motion) this.end(this.motion, { outcome: 'failed', fault });
    else for (const l of this.listeners) l({ type: 'fault', fault });
  }

  // ---- connection ----

  private onOpen(): void {
    this.firstOpenPending = false;
    this.phase = 'handshake';
    this.transport = new LinkTransport(this.link);
    const io = new Firmata(this.transport, { reportVersionTimeout: 1000 });
    this.io = io;
    const board = new five.Board({ io, repl: false, debug: false, timeout: 10_000 });
    // The port is already open: say so, as a serialport stream would (johnny-five waits for 'connect').
    const transport = this.transport;
    process.nextTick(() => transport.emit('open'));
    board.on('error', () => undefined); // a handshake that times out is seen as silence
    board.once('ready', () => {
      if (this.io !== io) return;
      this.listen(io);
      this.configure(io);
    });
  }

  private listen(io: FirmataIo): void {
    for (const axis of AXES) {
      const dev = DEVICE[axis];
      io.on(`stepper-position-${dev}`, (position: number) => this.onPosition(axis, position));
      io.on(`stepper-done-${dev}`, (position: number) => {
        // Not an answer to a poll: counting it as one would let settle() resolve before its own answer.
        if (!this.heard()) return;
        this.pos[axis] = position;
        const done = this.motion?.onDone.get(dev);
        if (done) {
          this.motion!.onDone.delete(dev);
          done(position);
        }
      });
      io.on(`digital-read-${this.opts.wiring.switchPin[axis]}`, (value: number) => {
        const closed = value === 0;
        this.switchClosed[axis] = closed;
        if (closed) this.motion?.onSwitch.get(axis)?.();
      });
      io.on(`digital-read-${this.opts.wiring.faultPin[axis]}`, (value: number) => {
        const wasLow = this.driverFault[axis];
        this.driverFault[axis] = value === 0;
        // Every port report repeats the pin: act when it goes low.
        if (value !== 0 || wasLow) return;
        // The driver shut its outputs off: halt the other axis too and latch a hardware fault.
        if (this.motion) io.multiStepperStop(GROUP);
        this.fault({ code: 'POS_ERR_HARDWARE', message: `hardware driver fault: the ${axis} stepper driver pulled its nFAULT line (D${this.opts.wiring.faultPin[axis]}) low: overcurrent or overtemperature; check the motor wiring and cooling, then home again` });
      });
    }
    // A version report after the handshake: the board rebooted and forgot its steppers.
    io.on('reportversion', () => {
      if (this.io !== io || (this.phase !== 'ready' && this.phase !== 'silent')) return;
      this.stats.boardResets++;
      this.lostPosition(`the Firmata board on ${this.opts.path} reset by itself`);
      this.phase = 'handshake';
      // ConfigurableFirmata sends its firmware name right after the version; configure after it.
      io.once('queryfirmware', () => this.configure(io));
    });
  }

  private configure(io: FirmataIo): void {
    const { wiring } = this.opts;
    for (const axis of AXES) {
      io.accelStepperConfig({ deviceNum: DEVICE[axis], type: io.STEPPER.TYPE.DRIVER, stepSize: io.STEPPER.STEP_SIZE.WHOLE, stepPin: wiring.stepPin[axis], directionPin: wiring.dirPin[axis] });
      io.accelStepperZero(DEVICE[axis]);
    }
    // Every input pulled up before any port reports: a port report must not read an input that is still floating.
    const inputs = AXES.flatMap((axis) => [wiring.switchPin[axis], wiring.faultPin[axis]]);
    for (const pin of inputs) io.pinMode(pin, io.MODES.PULLUP);
    for (const pin of inputs) io.reportDigitalPin(pin, 1);
    io.multiStepperConfig({ groupNum: GROUP, devices: [DEVICE.theta, DEVICE.phi] });
    this.driverFault.theta = false;
    this.driverFault.phi = false;
    this.pos.theta = 0;
    this.pos.phi = 0;
    this.isHomed = { theta: false, phi: false };
    this.phase = 'ready';
    this.lastAnswerUs = this.opts.clock.nowUs();
    void this.requestPositions().then(() => {
      if (this.lostSinceReady) {
        this.lostSinceReady = false;
        this.stats.reconnects++;
        for (const l of this.listeners) l({ type: 'reconnected', message: `the Firmata board on ${this.opts.path} is back after a drop or reset; its positions are lost: home the axes (POST /home)` });
      }
      this.everReady = true;
      this.wake();
    });
    this.schedulePoll();
  }

  /** The board said something: false when that ends a silence (the board is configured afresh, the report is stale). */
  private heard(): boolean {
    this.lastAnswerUs = this.opts.clock.nowUs();
    if (this.phase === 'silent' && this.io) {
      // The board answers again; we cannot know what it did meanwhile: configure it afresh.
      this.phase = 'handshake';
      this.configure(this.io);
      return false;
    }
    return true;
  }

  private onPosition(axis: AxisName, position: number): void {
    this.stats.positionReports++;
    if (!this.heard()) return;
    // Polls ask theta then phi: keep theta's answer until phi's arrives, so a status never pairs
    // a theta from one poll with a phi from the one before.
    if (axis === 'theta') {
      this.pendingTheta = position;
      return;
    }
    this.pos.phi = position;
    if (this.pendingTheta !== null) this.pos.theta = this.pendingTheta;
    this.pendingTheta = null;
    {
      this.answered = Math.min(this.answered + 1, this.asked);
      const due = this.positionWaiters.filter((w) => w.at <= this.answered);
      this.positionWaiters = this.positionWaiters.filter((w) => w.at > this.answered);
      for (const w of due) w.resolve();
    }
  }

  /** Asks both positions; resolves when phi's answer (asked last) has come, or the line resets. */
  private requestPositions(): Promise<void> {
    if (!this.io) return Promise.resolve();
    this.io.accelStepperReportPosition(DEVICE.theta);
    this.io.accelStepperReportPosition(DEVICE.phi);
    const at = ++this.asked;
    return new Promise((resolve) => this.positionWaiters.push({ at, resolve }));
  }

  private releaseWaiters(): void {
    this.answered = this.asked;
    const waiters = this.positionWaiters;
    this.positionWaiters = [];
    for (const w of waiters) w.resolve();
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
    this.dropIo();
    this.releaseWaiters();
    this.lostPosition(`serial line ${this.opts.path} dropped (${reason})`);
    if (wasUp) this.fault({ code: 'POS_ERR_DISCONNECTED', message: `serial line ${this.opts.path} dropped (${reason}); reconnecting, then home again` });
    this.wake();
  }

  private dropIo(): void {
    this.io?.removeAllListeners();
    this.io = null;
    this.transport = null;
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

  private pollOnce(): void {
    if (!this.io || (this.phase !== 'ready' && this.phase !== 'silent')) return;
    const timeoutMs = this.opts.answerTimeoutMs ?? 2000;
    if (this.phase === 'ready' && this.asked > this.answered && this.opts.clock.nowUs() - this.lastAnswerUs > timeoutMs * 1000) {
      this.phase = 'silent';
      this.releaseWaiters();
      this.lostPosition(`the Firmata board on ${this.opts.path} stopped answering`);
      this.fault({ code: 'POS_ERR_DISCONNECTED', message: `the Firmata board on ${this.opts.path} stopped answering (no position report for ${timeoutMs} ms); waiting for it, then home again` });
    }
    if (this.asked === this.answered) this.lastAnswerUs = this.opts.clock.nowUs();
    void this.requestPositions();
  }

  private wake(): void {
    const waiters = this.settleWaiters;
    this.settleWaiters = [];
    for (const w of waiters) w();
  }
}
