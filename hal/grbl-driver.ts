/**
 * MotionController for a grbl 1.1 board (an Arduino with a CNC shield) over
 * USB serial: X is theta, Y is phi, one grbl "mm" is one degree.
 *
 * Connection (and every reconnection):
 *   open the port -> 0x18 soft reset -> wait for the banner -> `$$`, checked
 *   against our config (steps/deg, max rate, homing enabled and direction,
 *   soft-limit travel, status report mask, mm units) -> `$X` unlock -> `G21`
 *   -> one status report, whose position becomes the firmware's 0, 0.
 * Moves: `$120`/`$121` when the acceleration changed, then
 *   `G53 G1 X.. Y.. F..` (machine coordinates, so stored work offsets cannot
 *   shift us) with the feed chosen so that the axis that travels furthest
 *   runs at the requested speed and both arrive together, then `G4 P0`:
 *   grbl answers that `ok` only when the machine has arrived, which is when
 *   the move completes. Lines are streamed with character counting: at most
 *   127 unanswered bytes in grbl's 128-byte receive buffer.
 * Homing: `$H` (or `$HX`, `$HY`), then the switch point (the position grbl
 *   pulled off from by $27) becomes 0 and the axis goes back onto it, so a
 *   homed axis rests at 0 as with the step controller.
 * Stop: the real-time bytes feed hold and soft reset in one write: they skip
 *   every queued line. grbl keeps its position across the reset; the driver
 *   waits for the banner, unlocks and goes on.
 * Status: `?` every `pollMovingMs` while moving, `pollIdleMs` otherwise; a
 *   status that does not come within `answerTimeoutMs` means the board is
 *   gone (the line is up but nobody answers).
 * Faults: `error:N` fails the motion it answers (POS_ERR_CONTROLLER_REJECTED);
 *   `ALARM:N` fails the motion or is reported as a fault (homing alarms as
 *   the homing codes, the rest POS_ERR_HARDWARE) and the board is reset and
 *   left locked until homing; a dropped or silent line is POS_ERR_DISCONNECTED
 *   and the driver reconnects by itself; a banner nobody asked for means the
 *   board reset: positions are lost, and the firmware hears `reconnected`.
 * Garbage on the line is counted in `stats.garbageLines` and otherwise ignored.
 */
import type { AxisName, AxisPair } from './axes';
import { AXES } from './axes';
import type { Clock, TimerHandle } from './clock';
import { HalError } from './errors';
import {
  BANNER_RE,
  describeAlarm,
  describeError,
  formatNumber,
  LineSplitter,
  parseCode,
  parseSetting,
  parseStatusReport,
  RT_FEED_HOLD,
  RT_RESET,
  RT_STATUS,
  RX_BUFFER_BYTES,
  type StatusReport,
} from './grbl-protocol';
import type { ControllerEvent, MotionController, MotionEnd, MotionFault, MoveRequest } from './motion-controller';
import { SerialLink, type SerialTrace } from './serial-link';

export interface GrblDriverOptions {
  path: string;
  baudRate: number;
  /** Times polls, answer timeouts and reconnection attempts. */
  clock: Clock;
  stepsPerDeg: AxisPair<number>;
  /** The firmware's highest speed, deg/s: grbl's $110/$111 must allow it. */
  maxSpeedDegS: number;
  /** Each axis's travel, deg: with soft limits on, $130/$131 must cover it. */
  travelDeg: AxisPair<number>;
  pollMovingMs?: number;
  pollIdleMs?: number;
  answerTimeoutMs?: number;
  retryMs?: number;
  /** How long to wait for the banner after a reset before resetting again. */
  bannerTimeoutMs?: number;
  /** Sees every byte on the line (hal/serial-link.ts). */
  trace?: SerialTrace;
}

type Phase =
  | 'connecting' // the port is not open
  | 'resetting' // 0x18 sent, waiting for the banner
  | 'configuring' // banner seen, settings / unlock / first status in progress
  | 'ready'
  | 'misconfigured' // grbl's settings do not match our config
  | 'silent'; // the port is open but grbl stopped answering

type Answer = { ok: true } | { ok: false; error: number };

interface Line {
  text: string;
  done: (answer: Answer) => void;
}

interface Motion {
  kind: 'move' | 'home';
  onEnd: (end: MotionEnd) => void;
  /** Per axis, the share of the path speed (move only). */
  unit: AxisPair<number>;
}

const AXIS_LETTER: AxisPair<'X' | 'Y'> = { theta: 'X', phi: 'Y' };
/** How long grbl may sit idle with our lines unanswered before their answers count as lost. */
const LOST_ANSWER_US = 500_000;

export interface GrblDriverStats {
  garbageLines: number;
  /** Answers taken as lost in noise (grbl idle, the lines long sent, no answer): see onReport. */
  lostAnswers: number;
  resets: number;
  reconnects: number;
  statusReports: number;
  /** Most bytes ever in flight in grbl's receive buffer. */
  maxInFlightBytes: number;
}

export class GrblDriver implements MotionController {
  readonly stats: GrblDriverStats = { garbageLines: 0, lostAnswers: 0, resets: 0, reconnects: 0, statusReports: 0, maxInFlightBytes: 0 };
  /** grbl's `$` settings as last read. */
  readonly settings = new Map<number, number>();
  private readonly link: SerialLink;
  private readonly splitter: LineSplitter;
  private readonly listeners = new Set<(event: ControllerEvent) => void>();
  private phase: Phase = 'connecting';
  private queue: Line[] = [];
  private inFlight: Line[] = [];
  private inFlightBytes = 0;
  private motion: Motion | null = null;
  /** A motion asked for while the driver recovers from its own stop; started once ready. */
  private deferred: (() => void) | null = null;
  /** The soft reset in progress is ours after a stop (position kept, no settings check). */
  private recovering = false;
  /** grbl was left in alarm on purpose (after an ALARM:N): no `$X` until homing. */
  private alarmLatched = false;
  /** True once the link has been ready; a later handshake is a reconnection. */
  private everReady = false;
  private lostSinceReady = false;
  /** The last `[MSG:...]`, which names the cause of an ALARM that follows it. */
  private lastMessage: string | null = null;
  private configProblems: string | null = null;
  private report: StatusReport | null = null;
  private mposSteps: AxisPair<number> = { theta: 0, phi: 0 };
  private previousMposSteps: AxisPair<number> = { theta: 0, phi: 0 };
  /** Machine position (steps) of the firmware's 0 on each axis. */
  private origin: AxisPair<number> = { theta: 0, phi: 0 };
  private isHomed: AxisPair<boolean> = { theta: false, phi: false };
  private everHomed: AxisPair<boolean> = { theta: false, phi: false };
  private homingError: AxisPair<number | null> = { theta: null, phi: null };
  private accelWritten: number | null = null;
  private statusAsked = 0;
  private statusAnswered = 0;
  private statusWaiters: { at: number; resolve: () => void }[] = [];
  private lastAnswerUs = 0;
  /** When the last line was written (for answers lost in noise). */
  private lastSendUs = 0;
  private poll: TimerHandle | null = null;
  private bannerTimer: TimerHandle | null = null;
  private settleWaiters: (() => void)[] = [];
  private closed = false;
  /** Until the first attempt to open the device has succeeded or failed. */
  private firstOpenPending = true;

  constructor(private readonly opts: GrblDriverOptions) {
    this.splitter = new LineSplitter((line, overlong) => this.onLine(line, overlong));
    this.link = new SerialLink(
      { path: opts.path, baudRate: opts.baudRate, clock: opts.clock, retryMs: opts.retryMs, trace: opts.trace },
      { onOpen: () => this.onOpen(), onData: (d) => this.splitter.push(d.toString('latin1')), onDown: (r) => this.onDown(r), onOpenFailed: () => this.onOpenFailed() },
    );
  }

  /** Opens the line; the handshake runs in the background (see `settle()`). */
  start(): void {
    this.link.start();
    this.schedulePoll();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.poll?.cancel();
    this.bannerTimer?.cancel();
    await this.link.close();
    this.wakeSettlers();
  }

  /** Where the driver is in its connection cycle. */
  connectionPhase(): Phase {
    return this.phase;
  }

  /**
   * Resolves once grbl has processed everything sent so far and its answer
   * to a fresh `?` has been read (or at once when the line is down). Tests on
   * a virtual clock use it to keep the serial line in step with time.
   */
  async settle(): Promise<void> {
    const transitional = () =>
      this.phase === 'resetting' || this.phase === 'configuring' || this.queue.length > 0 || (this.phase === 'connecting' && this.firstOpenPending);
    for (;;) {
      while (!this.closed && transitional()) await new Promise<void>((resolve) => this.settleWaiters.push(resolve));
      if (this.closed || !this.link.isUp || this.phase === 'silent' || this.phase === 'connecting') return;
      await this.requestStatus();
      // Answers can start more traffic (a homing that ends asks for a position): go on until quiet.
      if (this.statusWaiters.length === 0 && !transitional()) return;
    }
  }

  positionSteps(): AxisPair<number> {
    return { theta: this.mposSteps.theta - this.origin.theta, phi: this.mposSteps.phi - this.origin.phi };
  }

  velocityDegS(): AxisPair<number> {
    const r = this.report;
    const out = { theta: 0, phi: 0 };
    if (!this.motion || !r || r.feed === null || (r.state !== 'Run' && r.state !== 'Home' && r.state !== 'Jog')) return out;
    const pathDegS = r.feed / 60;
    for (const axis of AXES) {
      if (this.motion.kind === 'move') out[axis] = pathDegS * this.motion.unit[axis];
      else out[axis] = Math.sign(this.mposSteps[axis] - this.previousMposSteps[axis]) * pathDegS;
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
    return this.motion !== null || this.deferred !== null;
  }

  subscribe(listener: (event: ControllerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  move(request: MoveRequest, onEnd: (end: MotionEnd) => void): void {
    this.startMotion(() => {
      const from = this.positionSteps();
      const dDeg = AXES.map((a) => (request.targetSteps[a] - from[a]) / this.opts.stepsPerDeg[a]);
      const length = Math.hypot(dDeg[0], dDeg[1]);
      const longest = Math.max(Math.abs(dDeg[0]), Math.abs(dDeg[1]));
      const unit = { theta: length > 0 ? dDeg[0] / length : 0, phi: length > 0 ? dDeg[1] / length : 0 };
      const motion: Motion = { kind: 'move', onEnd, unit };
      this.motion = motion;
      if (this.accelWritten !== request.accelDegS2) {
        // grbl has no G-code for acceleration: it is a setting ($120/$121, stored in EEPROM), written only on change.
        const value = formatNumber(request.accelDegS2, 3);
        this.sendLine(`$120=${value}`, this.failOnError(motion));
        this.sendLine(`$121=${value}`, this.failOnError(motion));
        this.accelWritten = request.accelDegS2;
      }
      // Path feed (deg/min along the straight line) that gives the furthest axis `speedDegS`.
      const feed = longest > 0 ? (request.speedDegS * 60 * length) / longest : request.speedDegS * 60;
      this.sendLine(`G53 G1 ${this.axisWords(request.targetSteps)} F${formatNumber(feed, 3)}`, this.failOnError(motion));
      this.sendLine('G4 P0', (answer) => {
        if (this.motion !== motion) return;
        if (!answer.ok) return this.endMotion(rejected(answer.error));
        // Arrived: the position is the target exactly (grbl counts steps); a status report follows.
        for (const axis of AXES) this.mposSteps[axis] = this.origin[axis] + request.targetSteps[axis];
        this.endMotion({ outcome: 'completed' });
      });
    });
  }

  home(axes: readonly AxisName[], onEnd: (end: MotionEnd) => void): void {
    this.startMotion(() => {
      const motion: Motion = { kind: 'home', onEnd, unit: { theta: 0, phi: 0 } };
      this.motion = motion;
      for (const axis of axes) this.isHomed[axis] = false;
      const command = axes.length === AXES.length ? '$H' : `$H${axes.map((a) => AXIS_LETTER[a]).join('')}`;
      // grbl leaves each homed axis $27 off its switch; going back by $27 puts it on the switch
      // point, which becomes 0 (as the step controller's homing ends). The move is queued behind
      // `$H` rather than sent after its answer, so homing costs no extra round trip; `G4 P0`
      // answers once the axes are back.
      const pullOff = this.settings.get(27) ?? 0;
      const seekFeed = this.settings.get(25) ?? 500;
      const back = axes.map((a) => `${AXIS_LETTER[a]}${formatNumber(-pullOff, 3)}`).join(' ');
      this.sendLine(command, (answer) => {
        if (this.motion !== motion) return;
        if (!answer.ok) return this.endMotion(rejected(answer.error));
        this.alarmLatched = false;
      });
      if (pullOff > 0) this.sendLine(`G91 G1 ${back} F${formatNumber(seekFeed, 3)}`, this.failOnError(motion));
      this.sendLine('G90 G4 P0', (answer) => {
        if (this.motion !== motion) return;
        if (!answer.ok) return this.endMotion(rejected(answer.error));
        void this.requestStatus().then(() => {
          if (this.motion !== motion) return;
          for (const axis of axes) {
            const switchAt = this.mposSteps[axis];
            if (this.everHomed[axis]) this.homingError[axis] = switchAt - this.origin[axis];
            this.origin[axis] = switchAt;
            this.isHomed[axis] = true;
            this.everHomed[axis] = true;
          }
          this.endMotion({ outcome: 'completed' });
        });
      });
    });
  }

  stop(): void {
    this.deferred = null;
    const motion = this.motion;
    const active = motion !== null || this.inFlight.length > 0 || this.queue.length > 0;
    if (active && (this.phase === 'ready' || this.phase === 'configuring')) {
      // Feed hold first (so motion stops even if the reset byte were lost), then the reset
      // that flushes grbl's queue. Both are real-time bytes: nothing queued delays them.
      this.link.write(Buffer.from([RT_FEED_HOLD, RT_RESET]));
      this.recovering = true;
      this.expectBanner();
    }
    if (motion) {
      this.motion = null;
      motion.onEnd({ outcome: 'halted' });
    }
  }

  // ---- motion bookkeeping ----

  private startMotion(start: () => void): void {
    if (this.motion || this.deferred) throw new Error('motion controller is busy');
    if (this.phase === 'ready') return start();
    if (this.recovering && (this.phase === 'resetting' || this.phase === 'configuring')) {
      this.deferred = start;
      return;
    }
    throw this.notReadyError();
  }

  private notReadyError(): HalError {
    if (this.phase === 'misconfigured') return new HalError('OTHER', `grbl on ${this.opts.path} does not match the configuration: ${this.configProblems ?? 'see the fault'}`);
    if (this.phase === 'silent') return new HalError('DISCONNECTED', `grbl on ${this.opts.path} is not answering; check the board and its USB cable`);
    return new HalError('DISCONNECTED', `grbl on ${this.opts.path} is not connected${this.link.lastError ? ` (${this.link.lastError})` : ''}; it reconnects by itself when the line is back`);
  }

  private endMotion(end: MotionEnd): void {
    const motion = this.motion;
    this.motion = null;
    motion?.onEnd(end);
    this.schedulePoll();
  }

  private failOnError(motion: Motion): (answer: Answer) => void {
    return (answer) => {
      if (!answer.ok && this.motion === motion) this.endMotion(rejected(answer.error));
    };
  }

  private axisWords(targetSteps: AxisPair<number>): string {
    return AXES.map((a) => `${AXIS_LETTER[a]}${formatNumber((this.origin[a] + targetSteps[a]) / this.opts.stepsPerDeg[a], 6)}`).join(' ');
  }

  /** A fault: ends the motion in progress with it, or tells the firmware when nothing runs. */
  private fault(fault: MotionFault): void {
    if (this.motion) this.endMotion({ outcome: 'failed', fault });
    else for (const listener of this.listeners) listener({ type: 'fault', fault });
  }

  // ---- line protocol ----

  private sendLine(text: string, done: (answer: Answer) => void): void {
    this.queue.push({ text, done });
    this.flush();
  }

  /** Character counting: send queued lines while grbl's receive buffer has room for them. */
  private flush(): void {
    while (this.queue.length > 0) {
      const bytes = this.queue[0].text.length + 1;
      if (this.inFlightBytes + bytes > RX_BUFFER_BYTES - 1) break;
      const line = this.queue.shift()!;
      if (!this.link.write(`${line.text}\n`)) {
        this.queue.unshift(line);
        break;
      }
      this.inFlight.push(line);
      this.inFlightBytes += bytes;
      this.lastSendUs = this.opts.clock.nowUs();
      this.stats.maxInFlightBytes = Math.max(this.stats.maxInFlightBytes, this.inFlightBytes);
    }
    if (this.queue.length === 0) this.wakeSettlers();
  }

  private answer(answer: Answer): void {
    const line = this.inFlight.shift();
    if (!line) {
      this.stats.garbageLines++; // an answer to nothing: noise on the line
      return;
    }
    this.inFlightBytes -= line.text.length + 1;
    this.lastMessage = null;
    line.done(answer);
    this.flush();
  }

  private dropLines(): void {
    this.queue = [];
    this.inFlight = [];
    this.inFlightBytes = 0;
  }

  /** Resolves when the answer to a fresh `?` has been read, or when the line resets or drops (no answer will come). */
  private requestStatus(): Promise<void> {
    this.askStatus();
    const at = this.statusAsked;
    return new Promise((resolve) => this.statusWaiters.push({ at, resolve }));
  }

  private releaseStatusWaiters(): void {
    this.statusAnswered = this.statusAsked;
    const waiters = this.statusWaiters;
    this.statusWaiters = [];
    for (const w of waiters) w.resolve();
  }

  private askStatus(): void {
    if (this.link.write(Buffer.from([RT_STATUS]))) this.statusAsked++;
  }

  private onLine(raw: string, overlong: boolean): void {
    const line = raw.trim();
    if (overlong) {
      this.stats.garbageLines++;
      return;
    }
    if (line === '') return;
    if (BANNER_RE.test(line)) return this.onBanner();
    if (this.phase === 'resetting') return; // what grbl said before the reset (oks, ALARM:3) is stale
    const report = parseStatusReport(line);
    if (report) return this.onReport(report);
    if (this.phase === 'silent') {
      this.stats.garbageLines++;
      return;
    }
    if (line === 'ok') return this.answer({ ok: true });
    const error = parseCode(line, 'error');
    if (error !== null) return this.answer({ ok: false, error });
    const alarm = parseCode(line, 'ALARM');
    if (alarm !== null) return this.onAlarm(alarm);
    const msg = /^\[MSG:(.*)\]$/.exec(line);
    if (msg) {
      this.lastMessage = msg[1];
      return;
    }
    const setting = parseSetting(line);
    if (setting) {
      this.settings.set(setting.id, setting.value);
      return;
    }
    if (/^\[.*\]$/.test(line)) return; // other feedback ([GC:..], [VER:..]): informational
    this.stats.garbageLines++;
    // Noise without a newline glues itself to the front of the next real line: keep the answer at its end,
    // or the `ok` a motion waits for would be lost with the noise.
    const tail = /[^A-Za-z0-9:](ok|error:\d{1,3}|ALARM:\d{1,3})$/.exec(line) ?? /.(<[A-Z][a-z]+[|:][^<>]*>)$/.exec(line);
    if (tail) this.onLine(tail[1], false);
  }

  private onReport(report: StatusReport): void {
    this.stats.statusReports++;
    this.statusAnswered = Math.min(this.statusAnswered + 1, this.statusAsked);
    this.lastAnswerUs = this.opts.clock.nowUs();
    if (this.phase === 'silent') {
      // Someone answers again: we do not know what happened meanwhile, so start over.
      this.resetBoard();
      return;
    }
    this.report = report;
    if (report.mpos) {
      this.previousMposSteps = this.mposSteps;
      this.mposSteps = { theta: Math.round(report.mpos[0] * this.opts.stepsPerDeg.theta), phi: Math.round(report.mpos[1] * this.opts.stepsPerDeg.phi) };
    }
    // Noise can swallow an `ok` (a half line glued in front of it). grbl idle with lines sent long ago
    // and unanswered means it has processed them: take their answers as lost, or a move would never end.
    if (report.state === 'Idle' && this.phase === 'ready' && this.inFlight.length > 0 && this.opts.clock.nowUs() - this.lastSendUs > LOST_ANSWER_US) {
      while (this.inFlight.length > 0) {
        this.stats.lostAnswers++;
        this.answer({ ok: true });
      }
    }
    const waiters = this.statusWaiters.filter((w) => w.at <= this.statusAnswered);
    this.statusWaiters = this.statusWaiters.filter((w) => w.at > this.statusAnswered);
    for (const w of waiters) w.resolve();
  }

  private onAlarm(code: number): void {
    const detail = this.lastMessage ? `: ${this.lastMessage}` : '';
    this.lastMessage = null;
    const message = `${describeAlarm(code)}${detail}`;
    const faultCode = code === 9 ? 'POS_ERR_HOMING_SWITCH_NOT_FOUND' : code === 8 ? 'POS_ERR_HOMING_SWITCH_STUCK' : 'POS_ERR_HARDWARE';
    // Reset for a clean slate (grbl may wait for one after an alarm), and leave it locked: only homing clears an alarm.
    this.alarmLatched = true;
    this.isHomed = { theta: false, phi: false };
    this.resetBoard();
    this.fault({ code: faultCode, message });
  }

  private onBanner(): void {
    this.bannerTimer?.cancel();
    this.bannerTimer = null;
    this.splitter.clear();
    const expected = this.phase === 'resetting' || this.phase === 'configuring';
    if (!expected) {
      // Nobody asked for this reset: the board rebooted (power, DTR, a crash). Its position is gone.
      this.lostPosition(`grbl on ${this.opts.path} reset by itself (its banner arrived unasked)`);
    }
    this.configure(!this.recovering);
  }

  /** The board lost its frame: fail the motion, forget homing, and announce a reconnection once ready. */
  private lostPosition(why: string): void {
    this.recovering = false;
    this.deferred = null;
    this.dropLines();
    this.isHomed = { theta: false, phi: false };
    if (this.phase === 'ready' || this.phase === 'misconfigured') this.lostSinceReady = true;
    if (this.motion) this.endMotion({ outcome: 'failed', fault: { code: 'POS_ERR_DISCONNECTED', message: `${why} mid-motion; home again once it is back` } });
  }

  // ---- connection cycle ----

  private onOpen(): void {
    this.firstOpenPending = false;
    this.resetBoard();
  }

  private onOpenFailed(): void {
    if (!this.firstOpenPending) return;
    this.firstOpenPending = false;
    // The device is not there at start-up: say so once (retries continue quietly).
    this.fault({ code: 'POS_ERR_DISCONNECTED', message: `cannot open serial line ${this.opts.path} (${this.link.lastError}); retrying every ${this.opts.retryMs ?? 500} ms` });
    this.wakeSettlers();
  }

  private onDown(reason: string): void {
    const wasUp = this.phase !== 'connecting';
    this.phase = 'connecting';
    this.bannerTimer?.cancel();
    this.bannerTimer = null;
    this.splitter.clear();
    this.recovering = false;
    this.deferred = null;
    this.dropLines();
    this.isHomed = { theta: false, phi: false };
    if (this.everReady) this.lostSinceReady = true;
    this.releaseStatusWaiters();
    if (wasUp) this.fault({ code: 'POS_ERR_DISCONNECTED', message: `serial line ${this.opts.path} dropped (${reason}); reconnecting, then home again` });
    this.wakeSettlers();
  }

  private resetBoard(): void {
    this.dropLines();
    this.link.write(Buffer.from([RT_RESET]));
    this.expectBanner();
  }

  private expectBanner(): void {
    this.stats.resets++;
    this.phase = 'resetting';
    this.dropLines();
    this.releaseStatusWaiters(); // answers to earlier `?` may never come
    this.bannerTimer?.cancel();
    this.bannerTimer = this.opts.clock.setTimerAt(this.opts.clock.nowUs() + (this.opts.bannerTimeoutMs ?? 2500) * 1000, () => {
      this.bannerTimer = null;
      if (this.phase !== 'resetting') return;
      this.recovering = false;
      if (this.everReady) this.lostSinceReady = true;
      this.deferred = null;
      this.enterSilent('no banner after a reset');
    });
  }

  private enterSilent(why: string): void {
    const wasSilent = this.phase === 'silent';
    this.phase = 'silent';
    this.dropLines();
    this.isHomed = { theta: false, phi: false };
    if (this.everReady) this.lostSinceReady = true;
    this.releaseStatusWaiters();
    if (!wasSilent) this.fault({ code: 'POS_ERR_DISCONNECTED', message: `grbl on ${this.opts.path} stopped answering (${why}); waiting for it, then home again` });
    this.wakeSettlers();
  }

  /** After a banner: check the settings (full handshake), unlock, millimetres, and read where we are. */
  private configure(full: boolean): void {
    this.phase = 'configuring';
    const afterSettings = () => {
      if (!this.alarmLatched) this.sendLine('$X', () => undefined);
      this.sendLine('G21', () => undefined);
      void this.requestStatus().then(() => {
        if (this.phase !== 'configuring') return;
        if (full) {
          // A fresh frame: the firmware counts from where the board is now, unhomed.
          this.origin = { ...this.mposSteps };
          this.isHomed = { theta: false, phi: false };
          this.accelWritten = this.settings.get(120) === this.settings.get(121) ? (this.settings.get(120) ?? null) : null;
        }
        this.phase = 'ready';
        this.recovering = false;
        this.lastAnswerUs = this.opts.clock.nowUs();
        const reconnected = this.lostSinceReady;
        this.lostSinceReady = false;
        if (reconnected && full) {
          this.stats.reconnects++;
          for (const listener of this.listeners) listener({ type: 'reconnected', message: `grbl on ${this.opts.path} is back after a drop or reset; its position reference is lost: home the axes (POST /home)` });
        }
        this.everReady = true;
        const deferred = this.deferred;
        this.deferred = null;
        this.wakeSettlers();
        this.schedulePoll();
        deferred?.();
      });
    };
    if (!full) return afterSettings();
    this.settings.clear();
    this.sendLine('$$', (answer) => {
      if (this.phase !== 'configuring') return;
      const problems = answer.ok ? checkSettings(this.settings, this.opts) : [describeError(answer.error)];
      if (problems.length > 0) {
        this.phase = 'misconfigured';
        this.configProblems = problems.join('; ');
        this.wakeSettlers();
        for (const listener of this.listeners) {
          listener({ type: 'fault', fault: { code: 'POS_ERR_HARDWARE', message: `grbl on ${this.opts.path} is set up differently from the positioner's config: ${problems.join('; ')}` } });
        }
        return;
      }
      afterSettings();
    });
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
    if (!this.link.isUp || this.phase === 'resetting') return;
    const timeoutUs = (this.opts.answerTimeoutMs ?? 2000) * 1000;
    if (this.phase !== 'silent' && this.statusAsked > this.statusAnswered && this.opts.clock.nowUs() - this.lastAnswerUs > timeoutUs) {
      this.enterSilent(`no status report for ${this.opts.answerTimeoutMs ?? 2000} ms`);
    }
    if (this.statusAsked === this.statusAnswered) this.lastAnswerUs = this.opts.clock.nowUs();
    this.askStatus();
  }

  private wakeSettlers(): void {
    const waiters = this.settleWaiters;
    this.settleWaiters = [];
    for (const w of waiters) w();
  }
}

function rejected(code: number): MotionEnd {
  return { outcome: 'failed', fault: { code: 'POS_ERR_CONTROLLER_REJECTED', message: describeError(code) } };
}

/** What in grbl's `$$` contradicts our config, each with the setting to send. */
export function checkSettings(settings: Map<number, number>, opts: Pick<GrblDriverOptions, 'stepsPerDeg' | 'maxSpeedDegS' | 'travelDeg'>): string[] {
  const problems: string[] = [];
  const get = (id: number) => settings.get(id);
  const want = (id: number, ok: (v: number) => boolean, fix: string, what: string) => {
    const v = get(id);
    if (v === undefined) problems.push(`$${id} missing from $$ (${what})`);
    else if (!ok(v)) problems.push(`$${id}=${v} but ${what}: send ${fix}`);
  };
  want(100, (v) => Math.abs(v - opts.stepsPerDeg.theta) < 1e-3, `$100=${opts.stepsPerDeg.theta}`, `theta has ${opts.stepsPerDeg.theta} steps/deg`);
  want(101, (v) => Math.abs(v - opts.stepsPerDeg.phi) < 1e-3, `$101=${opts.stepsPerDeg.phi}`, `phi has ${opts.stepsPerDeg.phi} steps/deg`);
  const rate = opts.maxSpeedDegS * 60;
  want(110, (v) => v >= rate - 1e-6, `$110=${rate}`, `max_speed is ${opts.maxSpeedDegS} deg/s`);
  want(111, (v) => v >= rate - 1e-6, `$111=${rate}`, `max_speed is ${opts.maxSpeedDegS} deg/s`);
  want(22, (v) => v === 1, '$22=1', 'homing must be enabled');
  want(23, (v) => (v & 3) === 3, '$23=3', 'X and Y must home toward their minimum');
  want(13, (v) => v === 0, '$13=0', 'reports must be in mm (degrees)');
  want(10, (v) => (v & 1) === 1, '$10=1', 'status reports must carry the machine position');
  if (get(20) === 1) {
    want(130, (v) => v >= opts.travelDeg.theta, `$130=${opts.travelDeg.theta + 10}`, `soft limits are on and theta travels ${opts.travelDeg.theta} deg`);
    want(131, (v) => v >= opts.travelDeg.phi, `$131=${opts.travelDeg.phi + 10}`, `soft limits are on and phi travels ${opts.travelDeg.phi} deg`);
  }
  return problems;
}
