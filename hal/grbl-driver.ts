/**
 * MotionController for a grbl 1.1 board (an Arduino with a CNC shield) over
 * USB serial: X is theta, Y is phi, one grbl "mm" is one degree.
 *
 * Connection (and every reconnection):
 *   open the port -> 0x18 soft reset -> wait for the banner (an Uno that
 *   resets itself when the port opens prints it unasked: same thing) -> `$I`,
 *   whose [OPT:..] must show single-axis homing (H) -> `$$`, checked against
 *   our config (steps/deg, max rate, homing enabled and direction, soft-limit
 *   travel, status report mask, mm units) -> `$X` unlock -> `G21` -> one
 *   status report, whose position becomes the firmware's 0, 0.
 * Moves: `$120`/`$121` when the acceleration changed, each sent alone and
 *   answered before anything else goes out (send-response: grbl writes the
 *   EEPROM with interrupts off, ~3.4 ms per byte, and loses bytes that
 *   arrive meanwhile; interface.md "EEPROM Issues"), then
 *   `G53 G1 X.. Y.. F..` (machine coordinates, so stored work offsets cannot
 *   shift us) with the feed chosen so that the axis that travels furthest
 *   runs at the requested speed and both arrive together, then `G4 P0`:
 *   grbl answers that `ok` only when the machine has arrived; a fresh status
 *   report then confirms the machine stands at the target (or the move fails
 *   saying where it stands). G-code lines are streamed with character
 *   counting: at most 127 unanswered bytes in grbl's 128-byte receive buffer.
 *   A move whose step rate would exceed grbl's 30 kHz is refused up front.
 * Homing: `$H` (or `$HX`, `$HY`), then the switch point (the position grbl
 *   pulled off from by $27) becomes 0 and the axis goes back onto it, so a
 *   homed axis rests at 0 as with the step controller. grbl answers no `?`
 *   during the cycle (limits.c limits_go_home() runs no real-time checks but
 *   reset), so the driver does not poll then; instead the cycle has a deadline
 *   derived from the settings and the travel (homingWorstCaseUs). An alarm in
 *   the cycle (8, 9; 6 after our own reset) fails the homing; the axes'
 *   positions are re-based (grbl zeroed them when the cycle started), and an
 *   ALARM:9 that left X and Y where they were means a build that homes Z first.
 * Stop (stopMode 'reset', the default): feed hold and soft reset in one
 *   write; they skip every queued line and the steps cease within a step
 *   period. grbl raises ALARM:3 (a reset in motion: position may be lost by
 *   the pulse grbl had counted but not yet output), pauses 500 ms (report.c
 *   report_alarm_message()), prints the banner; the driver unlocks, reads the
 *   true halted position and marks the axes unhomed, as grbl says.
 *   stopMode 'hold': feed hold alone, the machine decelerates under $120/$121
 *   to `Hold:0`, then the reset (no alarm: nothing moves), homing kept.
 *   During homing only the reset is sent (grbl: ALARM:6).
 * Status: `?` every `pollMovingMs` while moving, `pollIdleMs` otherwise; a
 *   status that does not come within `answerTimeoutMs` means the board is
 *   gone (the line is up but nobody answers).
 * Faults: `error:N` fails the motion it answers (POS_ERR_CONTROLLER_REJECTED);
 *   `ALARM:N` fails the motion or is reported as a fault (homing alarms as
 *   the homing codes, the rest POS_ERR_HARDWARE) and the board, which resets
 *   itself after every alarm but a hard or soft limit (those wait for our
 *   0x18), is left locked until homing; a dropped or silent line is POS_ERR_DISCONNECTED
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
  compactNumber,
  formatNumber,
  homingWorstCaseUs,
  LineSplitter,
  MAX_STEP_RATE_HZ,
  parseOptionsLine,
  parseVersionLine,
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
  /** How stop() halts a move: 'reset' (at once, ALARM:3, homing lost) or 'hold' (decelerated, homing kept). */
  stopMode?: 'reset' | 'hold';
  /** The board's step-rate ceiling, steps/s (grbl on an ATmega328P: 30 kHz). */
  maxStepRateHz?: number;
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
  /** Send-response: sent only when nothing else is in flight, and nothing follows until it is answered. */
  exclusive?: boolean;
  onSent?: () => void;
}

/** A homing cycle grbl is running (its `$H` line sent, not yet answered). */
interface HomingCycle {
  axes: readonly AxisName[];
  /** Machine position before the cycle: grbl zeroes the cycle's axes when it starts. */
  mposBefore: AxisPair<number>;
  deadline: TimerHandle | null;
}

/** What the next status after a reset must fix: positions grbl re-based, and a homing failure to explain. */
interface AfterReset {
  axes: readonly AxisName[];
  mposBefore: AxisPair<number>;
  /** The homing alarm to report once the position is known (null: the stop was ours). */
  alarm: number | null;
}

interface Motion {
  kind: 'move' | 'home';
  onEnd: (end: MotionEnd) => void;
  /** Per axis, the share of the path speed (move only). */
  unit: AxisPair<number>;
  /** Where the move ends, steps of the firmware's frame (move only). */
  targetSteps?: AxisPair<number>;
}

const AXIS_LETTER: AxisPair<'X' | 'Y'> = { theta: 'X', phi: 'Y' };
/**
 * Lines go out in bursts of at most this many bytes, each followed by a `?` and the next burst written only
 * once that `?` is answered (so the burst has left the USART). On the simulated ATmega328P with the USART's
 * 2-byte FIFO modelled (bridge --uart-overrun) a longer burst lost about one byte in 14 from the 15th on (a
 * 38-byte G1 line lost '0', ' ', '0': `G4 P0` became `G40`, a target another), and bursts spaced by time
 * merged whenever the machine was loaded. A real Uno does not need it; it costs a report per 12 bytes
 * (~6 ms), and lines are written without spaces to keep them short.
 */
const PACE_CHUNK_BYTES = 12;
const PACE_PROBE_RETRY_US = 100_000;
/** A `?` unanswered this long is sent again (see askStatus). */
const RESEND_STATUS_US = 100_000;
/** How long grbl may sit idle with our lines unanswered before their answers count as lost. */
const LOST_ANSWER_US = 500_000;

export interface GrblDriverStats {
  garbageLines: number;
  /** Answers taken as lost in noise (grbl idle, the lines long sent, no answer): see onReport. */
  lostAnswers: number;
  resets: number;
  reconnects: number;
  statusReports: number;
  /** Halted positions read from the report our stop asked for just ahead of its reset. */
  haltReports: number;
  /** Most bytes ever in flight in grbl's receive buffer. */
  maxInFlightBytes: number;
}

export class GrblDriver implements MotionController {
  readonly stats: GrblDriverStats = { garbageLines: 0, lostAnswers: 0, resets: 0, reconnects: 0, statusReports: 0, haltReports: 0, maxInFlightBytes: 0 };
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
  /** `$I` as last read. */
  buildVersion: string | null = null;
  buildOptions: string | null = null;
  private rxBufferBytes = RX_BUFFER_BYTES;
  private homingCycle: HomingCycle | null = null;
  private afterReset: AfterReset | null = null;
  /** The alarm grbl printed while we waited for its banner (ALARM:3 after our stop). */
  private alarmWhileResetting: number | null = null;
  /** Line bytes not yet written: they go out PACE_CHUNK_BYTES at a time (see writePaced). */
  private wire: Buffer = Buffer.alloc(0);
  /** A burst is out and its `?` not yet answered. */
  private wirePaused = false;
  /** Bumped when the wire queue is voided, so the answer to an old burst's `?` starts nothing. */
  private wireGeneration = 0;
  private wireProbe: TimerHandle | null = null;
  /** Called on the next status report, whichever `?` it answers. */
  private reportWaiters: (() => void)[] = [];
  /** Our stop's `?` went out just ahead of its reset: the report that answers it is the halted position. */
  private haltReportWanted = false;
  /** stopMode 'hold': the feed hold is out; the reset follows at Hold:0. */
  private holding = false;
  private statusAsked = 0;
  private statusAnswered = 0;
  private lastAskUs = 0;
  private statusWaiters: { at: number; resolve: () => void }[] = [];
  private lastAnswerUs = 0;
  /** When the last status report arrived. */
  private lastReportUs = 0;
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
    this.endHomingCycle();
    this.bannerTimer?.cancel();
    this.dropLines();
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
    // What grbl does only as time passes ends the wait: the banner after a reset ($1 ms, and 500 ms after an
    // alarm), a homing cycle (no report until it ends), an EEPROM write, a feed hold's deceleration.
    const needsTime = () =>
      (this.phase === 'resetting' && !this.haltReportWanted) || this.homingCycle !== null || this.exclusiveInFlight() || this.holding;
    const transitional = () =>
      !needsTime() &&
      (this.phase === 'resetting' || this.phase === 'configuring' || this.queue.length > 0 || this.wire.length > 0 || (this.phase === 'connecting' && this.firstOpenPending));
    for (;;) {
      while (!this.closed && transitional()) await new Promise<void>((resolve) => this.settleWaiters.push(resolve));
      if (this.closed || !this.link.isUp || this.phase === 'silent' || this.phase === 'connecting' || needsTime()) return;
      await this.requestStatus();
      // Answers can start more traffic (a homing that ends asks for a position): go on until quiet.
      if (this.statusWaiters.length === 0 && !transitional()) return;
    }
  }

  positionSteps(): AxisPair<number> {
    return { theta: this.mposSteps.theta - this.origin.theta, phi: this.mposSteps.phi - this.origin.phi };
  }

  /** Until the first handshake (reset, banner, $I, $$, unlock, first report) has finished: /status says `connecting`. */
  connecting(): boolean {
    return !this.everReady;
  }

  /** The fastest speed every move can run within the step-rate ceiling: the finest axis at full share. */
  maxSpeedDegS(): number {
    const ceilingHz = this.opts.maxStepRateHz ?? MAX_STEP_RATE_HZ;
    return Math.floor((ceilingHz / Math.max(this.opts.stepsPerDeg.theta, this.opts.stepsPerDeg.phi)) * 1000) / 1000;
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
    const from = this.positionSteps();
    const dDeg = AXES.map((a) => (request.targetSteps[a] - from[a]) / this.opts.stepsPerDeg[a]);
    const tooFast = stepRateProblem(this.opts.stepsPerDeg, request.speedDegS, this.opts.maxStepRateHz ?? MAX_STEP_RATE_HZ, { theta: dDeg[0], phi: dDeg[1] });
    if (tooFast) throw new HalError('OTHER', tooFast);
    this.startMotion(() => {
      const length = Math.hypot(dDeg[0], dDeg[1]);
      const longest = Math.max(Math.abs(dDeg[0]), Math.abs(dDeg[1]));
      const unit = { theta: length > 0 ? dDeg[0] / length : 0, phi: length > 0 ? dDeg[1] / length : 0 };
      const motion: Motion = { kind: 'move', onEnd, unit, targetSteps: request.targetSteps };
      this.motion = motion;
      if (this.accelWritten !== request.accelDegS2) {
        // grbl has no G-code for acceleration: it is a setting ($120/$121, an EEPROM write), written only on
        // change and send-response, never streamed (interface.md "EEPROM Issues"; settings.c write_global_settings()).
        const value = formatNumber(request.accelDegS2, 3);
        this.sendSetting(120, value, this.failOnError(motion));
        this.sendSetting(121, value, this.failOnError(motion));
        this.accelWritten = request.accelDegS2;
      }
      // Path feed (deg/min along the straight line) that gives the furthest axis `speedDegS`.
      const feed = longest > 0 ? (request.speedDegS * 60 * length) / longest : request.speedDegS * 60;
      this.sendLine(`G53G1${this.axisWords(request.targetSteps)}F${compactNumber(feed, 3)}`, this.failOnError(motion));
      this.sendLine('G4P0', (answer) => {
        if (this.motion !== motion) return;
        if (!answer.ok) return this.failOnError(motion)(answer);
        // grbl says it is done: read where it stands rather than assume the target (an `ok` taken as lost, or
        // a firmware pushed past its step rate, can end short of it).
        void this.requestStatus().then(() => {
          if (this.motion !== motion) return;
          const at = this.positionSteps();
          const off = AXES.filter((a) => Math.abs(at[a] - request.targetSteps[a]) > 1);
          if (off.length === 0) {
            for (const axis of AXES) this.mposSteps[axis] = this.origin[axis] + request.targetSteps[axis];
            return this.endMotion({ outcome: 'completed' });
          }
          const where = off.map((a) => `${a} at ${formatNumber(at[a] / this.opts.stepsPerDeg[a], 3)} deg instead of ${formatNumber(request.targetSteps[a] / this.opts.stepsPerDeg[a], 3)}`).join(', ');
          this.endMotion({ outcome: 'failed', fault: { code: 'POS_ERR_HARDWARE', message: `grbl on ${this.opts.path} reported the move finished but stands short of it: ${where}; check the step rate and the line, then home again` } });
        });
      });
    });
  }

  /**
   * A trigger pulse on grbl's flood coolant output: `M8`, `G4 P<s>`, `M9`, streamed in order. grbl runs
   * each only once every motion queued before it has ended (gcode.c gc_execute_line() step 8 calls
   * coolant_control.c coolant_sync(), which starts with protocol_buffer_synchronize(); mc_dwell() likewise),
   * so the pulse is ordered with motion in grbl's own planner. grbl dwells in 50 ms steps (nuts_bolts.c
   * delay_sec(), config.h DWELL_TIME_STEP): a pulse lasts durationMs rounded up to a multiple of 50 ms.
   * Resolves on the `ok` of `M9` (the output is off again).
   */
  pulseOutput(durationMs: number): Promise<void> {
    if (this.phase !== 'ready') return Promise.reject(new HalError('DISCONNECTED', `grbl on ${this.opts.path} is not connected (${this.phase}); the trigger pulse was not given`));
    return new Promise<void>((resolve, reject) => {
      let failed = false;
      const check = (what: string) => (answer: Answer) => {
        if (answer.ok || failed) return;
        failed = true;
        reject(new HalError('PROTOCOL', `grbl on ${this.opts.path} refused ${what} (error:${answer.error}: ${describeError(answer.error)})`));
      };
      this.sendLine('M8', check('M8 (coolant on, the trigger)'));
      this.sendLine(`G4P${compactNumber(durationMs / 1000, 3)}`, check('the trigger dwell'));
      this.sendLine('M9', (answer) => {
        check('M9 (coolant off)')(answer);
        if (answer.ok && !failed) resolve();
      });
    });
  }

  home(axes: readonly AxisName[], onEnd: (end: MotionEnd) => void): void {
    this.startMotion(() => {
      const motion: Motion = { kind: 'home', onEnd, unit: { theta: 0, phi: 0 } };
      this.motion = motion;
      for (const axis of axes) this.isHomed[axis] = false;
      // `$H` runs grbl's whole homing cycle (HOMING_CYCLE_0 = X|Y on a build set up as docs/hardware.md says);
      // one axis is `$HX` / `$HY` (system.c, HOMING_SINGLE_AXIS_COMMANDS; `$HXY` does not exist).
      const command = axes.length === AXES.length ? '$H' : `$H${AXIS_LETTER[axes[0]]}`;
      // grbl leaves each homed axis $27 off its switch; going back by $27 puts it on the switch
      // point, which becomes 0 (as the step controller's homing ends); `G4 P0` answers once the axes are back.
      const pullOff = this.settings.get(27) ?? 0;
      const seekFeed = this.settings.get(25) ?? 500;
      const mposBefore = { ...this.mposSteps };
      // The pull-back is sent once `$H` is answered, not queued behind it: bytes arriving while grbl homes
      // were lost on the simulated MCU with its USART FIFO modelled (the step interrupt runs throughout).
      // It goes to the switch points in machine coordinates, computed from where grbl says it homed, and is
      // checked: a damaged line cannot leave the axes $27 off while the frame says 0 (tried twice).
      const pullBack = (switchAt: AxisPair<number>, triesLeft: number) => {
        const words = AXES.map((a) => `${AXIS_LETTER[a]}${compactNumber((axes.includes(a) ? switchAt[a] : this.mposSteps[a]) / this.opts.stepsPerDeg[a], 4)}`).join('');
        this.sendLine(`G53G1${words}F${compactNumber(seekFeed, 3)}`, this.failOnError(motion));
        this.sendLine('G4P0', (answer) => {
          if (this.motion !== motion) return;
          if (!answer.ok) return this.failOnError(motion)(answer);
          void this.requestStatus().then(() => {
            if (this.motion !== motion) return;
            const off = axes.filter((a) => Math.abs(this.mposSteps[a] - switchAt[a]) > 1);
            if (off.length > 0) {
              if (triesLeft > 0) return pullBack(switchAt, triesLeft - 1);
              return this.endMotion({ outcome: 'failed', fault: { code: 'POS_ERR_HARDWARE', message: `grbl on ${this.opts.path} homed, but the move back onto the switch point did not arrive (${off.join(', ')}); home again` } });
            }
            for (const axis of axes) {
              if (this.everHomed[axis]) this.homingError[axis] = switchAt[axis] - this.origin[axis];
              this.origin[axis] = switchAt[axis];
              this.isHomed[axis] = true;
              this.everHomed[axis] = true;
            }
            this.endMotion({ outcome: 'completed' });
          });
        });
      };
      const afterHoming = () =>
        void this.requestStatus().then(() => {
          if (this.motion !== motion) return;
          // grbl leaves the axes $27 off the switch points (limits.c); those become 0.
          const switchAt = { ...this.mposSteps };
          for (const a of axes) switchAt[a] -= Math.round(pullOff * this.opts.stepsPerDeg[a]);
          pullBack(switchAt, 1);
        });
      this.sendLine(
        command,
        (answer) => {
          this.endHomingCycle();
          if (this.motion !== motion) return;
          if (!answer.ok) return this.endMotion(rejected(answer.error));
          this.alarmLatched = false;
          afterHoming();
        },
        { onSent: () => this.beginHomingCycle(axes, mposBefore) },
      );
    });
  }

  stop(): void {
    this.deferred = null;
    const motion = this.motion;
    const active = motion !== null || this.inFlight.length > 0 || this.queue.length > 0;
    if (active && (this.phase === 'ready' || this.phase === 'configuring') && !this.holding) {
      const cycle = this.homingCycle;
      if (cycle) {
        // Only reset stops a homing cycle (limits.c limits_go_home()): grbl answers ALARM:6 and has already
        // zeroed the cycle's axes at its start; the status after the banner is re-based on that.
        this.endHomingCycle();
        this.afterReset = { axes: cycle.axes, mposBefore: cycle.mposBefore, alarm: null };
        this.link.write(Buffer.from([RT_RESET]));
        this.recovering = true;
        this.expectBanner();
      } else if ((this.opts.stopMode ?? 'reset') === 'hold' && motion?.kind === 'move') {
        // Decelerate under $120/$121 to Hold:0, then reset (protocol.c: a reset once the hold is complete
        // raises no alarm, motion_control.c mc_reset()), so the position stays exact and homing stays valid.
        this.dropLines();
        this.link.write(Buffer.from([RT_FEED_HOLD]));
        this.askStatus();
        this.holding = true;
        this.recovering = true;
      } else {
        // A status request, a feed hold (so motion stops even if the reset byte were lost), then the reset that
        // flushes grbl's queue; all real-time bytes that nothing queued delays. grbl waiting in `G4 P0` runs its
        // real-time checks in a tight loop (protocol.c protocol_buffer_synchronize()), so it reports the position
        // two byte times (0.17 ms) before the reset lands: the halted position, known at once rather than after
        // ALARM:3 and its 500 ms pause. The report after the banner then confirms it.
        this.link.write(Buffer.from([RT_STATUS, RT_FEED_HOLD, RT_RESET]));
        this.recovering = true;
        this.expectBanner();
        this.haltReportWanted = true;
        if (motion?.kind === 'move') this.extrapolate(motion);
      }
    }
    if (motion) {
      this.motion = null;
      motion.onEnd({ outcome: 'halted' });
    }
    this.schedulePoll();
    this.wakeSettlers();
  }

  // ---- motion bookkeeping ----

  private startMotion(start: () => void): void {
    if (this.motion || this.deferred) throw new Error('motion controller is busy');
    if (this.holding) {
      // Our feed hold is still decelerating: the move starts once the reset after it is through.
      this.deferred = start;
      return;
    }
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
      if (answer.ok || this.motion !== motion) return;
      this.haltAfterRejection();
      this.endMotion(rejected(answer.error));
    };
  }

  /**
   * A line of a motion was refused: a damaged neighbour may have been taken as another, valid command (a
   * lost '.' makes X65.8 into X658), so nothing of what was sent may run on: feed hold and reset.
   */
  private haltAfterRejection(): void {
    if (this.phase !== 'ready') return;
    this.link.write(Buffer.from([RT_FEED_HOLD, RT_RESET]));
    this.recovering = true;
    this.expectBanner();
  }

  private axisWords(targetSteps: AxisPair<number>): string {
    // Four decimals are a twentieth of a step at 800 steps/deg: grbl rounds the target to the same step.
    return AXES.map((a) => `${AXIS_LETTER[a]}${compactNumber((this.origin[a] + targetSteps[a]) / this.opts.stepsPerDeg[a], 4)}`).join('');
  }

  /** A fault: ends the motion in progress with it, or tells the firmware when nothing runs. */
  private fault(fault: MotionFault): void {
    if (this.motion) this.endMotion({ outcome: 'failed', fault });
    else for (const listener of this.listeners) listener({ type: 'fault', fault });
  }

  // ---- line protocol ----

  private sendLine(text: string, done: (answer: Answer) => void, extra: Pick<Line, 'exclusive' | 'onSent'> = {}): void {
    this.queue.push({ text, done, ...extra });
    this.flush();
  }

  /** `$N=value`: an EEPROM write, sent send-response. */
  private sendSetting(id: number, value: string, done: (answer: Answer) => void): void {
    this.sendLine(`$${id}=${value}`, done, { exclusive: true });
  }

  /**
   * True while a send-response line is out: no other byte should reach grbl while it writes its EEPROM
   * (eeprom.c eeprom_put_char() waits for each byte's write with interrupts off, so the USART's 2-byte
   * FIFO overflows). Its `ok` comes once the writes are through (settings.c write_global_settings()).
   */
  private exclusiveInFlight(): boolean {
    return this.inFlight.some((l) => l.exclusive);
  }

  /** Character counting: send queued lines while grbl's receive buffer has room for them. */
  private flush(): void {
    while (this.queue.length > 0) {
      const next = this.queue[0];
      const bytes = next.text.length + 1;
      if (this.inFlightBytes + bytes > this.rxBufferBytes - 1) break;
      if (this.exclusiveInFlight() || (next.exclusive && this.inFlight.length > 0)) break;
      if (!this.link.isUp) break;
      const line = this.queue.shift()!;
      this.writePaced(`${line.text}\n`);
      this.inFlight.push(line);
      this.inFlightBytes += bytes;
      this.lastSendUs = this.opts.clock.nowUs();
      this.stats.maxInFlightBytes = Math.max(this.stats.maxInFlightBytes, this.inFlightBytes);
      line.onSent?.();
    }
    this.wakeSettlers(); // settle() re-checks what it waits for
  }

  /** Queues line bytes for the wire and writes the first burst now (real-time bytes bypass this queue). */
  private writePaced(text: string): void {
    this.wire = Buffer.concat([this.wire, Buffer.from(text, 'latin1')]);
    this.drainWire();
  }

  private drainWire(): void {
    if (this.wirePaused || this.wire.length === 0) return;
    if (!this.link.write(this.wire.subarray(0, PACE_CHUNK_BYTES))) {
      this.wire = Buffer.alloc(0); // the line is down: what was queued is void (the drop handler resets)
      return;
    }
    this.wire = this.wire.subarray(PACE_CHUNK_BYTES);
    if (this.wire.length === 0) return;
    this.wirePaused = true;
    const generation = this.wireGeneration;
    const probe = () => {
      if (generation !== this.wireGeneration || !this.wirePaused) return;
      // The `?` itself can be lost like any byte: ask again until a report comes. Written even while another
      // `?` is outstanding (one report answers both) and not counted: any report releases the next burst.
      if (this.statusAsked > this.statusAnswered) this.link.write(Buffer.from([RT_STATUS]));
      else this.askStatus();
      this.wireProbe = this.opts.clock.setTimerAt(this.opts.clock.nowUs() + PACE_PROBE_RETRY_US, probe);
    };
    this.reportWaiters.push(() => {
      if (generation !== this.wireGeneration) return;
      this.wireProbe?.cancel();
      this.wireProbe = null;
      this.wirePaused = false;
      this.drainWire();
    });
    probe();
  }

  // ---- homing cycle ----

  private beginHomingCycle(axes: readonly AxisName[], mposBefore: AxisPair<number>): void {
    const worstUs = homingWorstCaseUs(this.settings, axes.length === AXES.length ? ['X', 'Y'] : [AXIS_LETTER[axes[0]]]);
    // A margin over grbl's own bound (its alarms end a cycle that overruns it), plus the line's lag.
    const limitUs = Math.ceil(worstUs * 1.25) + 2_000_000;
    const cycle: HomingCycle = { axes, mposBefore, deadline: null };
    cycle.deadline = this.opts.clock.setTimerAt(this.opts.clock.nowUs() + limitUs, () => {
      cycle.deadline = null;
      if (this.homingCycle !== cycle) return;
      this.endHomingCycle();
      const message = `grbl on ${this.opts.path} did not finish homing within ${(limitUs / 1e6).toFixed(1)} s (its settings bound the cycle to ${(worstUs / 1e6).toFixed(1)} s); it was reset: check the board, then home again`;
      this.afterReset = { axes, mposBefore, alarm: null };
      this.resetBoard();
      this.fault({ code: 'POS_ERR_HARDWARE', message });
    });
    this.homingCycle = cycle;
    this.wakeSettlers();
  }

  private endHomingCycle(): void {
    this.homingCycle?.deadline?.cancel();
    this.homingCycle = null;
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
    // Bytes not yet written must never follow a reset: grbl would run them as new lines.
    this.wire = Buffer.alloc(0);
    this.wirePaused = false;
    this.wireGeneration++;
    this.wireProbe?.cancel();
    this.wireProbe = null;
    this.reportWaiters = [];
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

  /**
   * One `?` outstanding at a time: grbl keeps a single report request (a flag, protocol.c) and answers any
   * number of `?` with one report while it is busy (a homing cycle, an EEPROM write, an alarm's pause), so
   * counting every byte would leave the count behind for good. A `?` unanswered for RESEND_STATUS_US is sent
   * again (it may have been lost) as the same request.
   */
  private askStatus(): void {
    const nowUs = this.opts.clock.nowUs();
    if (this.statusAsked > this.statusAnswered) {
      if (this.homingCycle || nowUs - this.lastAskUs < RESEND_STATUS_US) return;
      if (this.link.write(Buffer.from([RT_STATUS]))) this.lastAskUs = nowUs;
      return;
    }
    if (this.link.write(Buffer.from([RT_STATUS]))) {
      this.statusAsked++;
      this.lastAskUs = nowUs;
    }
  }

  private onLine(raw: string, overlong: boolean): void {
    const line = raw.trim();
    if (overlong) {
      this.stats.garbageLines++;
      return;
    }
    if (line === '') return;
    if (BANNER_RE.test(line)) return this.onBanner();
    if (this.phase === 'resetting') {
      // What grbl says before its banner (the `ok`s of aborted lines) is stale, but its alarm says how the
      // reset met the machine (ALARM:3 in motion, 6 in homing), and a critical alarm waits for our reset.
      const alarm = parseCode(line, 'ALARM');
      if (alarm !== null) {
        this.alarmWhileResetting = alarm;
        this.haltReportWanted = false;
        this.wakeSettlers();
      }
      const halted = this.haltReportWanted ? parseStatusReport(line) : null;
      if (halted?.mpos) {
        this.haltReportWanted = false;
        this.stats.haltReports++;
        this.wakeSettlers();
        this.mposSteps = this.toSteps(halted.mpos);
      }
      if (line === '[MSG:Reset to continue]') this.link.write(Buffer.from([RT_RESET]));
      return;
    }
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
    const version = parseVersionLine(line);
    if (version !== null) {
      this.buildVersion = version;
      return;
    }
    const options = parseOptionsLine(line);
    if (options) {
      this.buildOptions = options.options;
      if (options.rxBufferBytes) this.rxBufferBytes = options.rxBufferBytes;
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
    this.lastReportUs = this.lastAnswerUs;
    if (this.phase === 'silent') {
      // Someone answers again: we do not know what happened meanwhile, so start over.
      this.resetBoard();
      return;
    }
    this.report = report;
    if (this.holding && ((report.state === 'Hold' && report.subState === 0) || report.state === 'Idle')) {
      // The hold is complete: nothing moves, so this reset raises no alarm and keeps the position.
      this.holding = false;
      this.link.write(Buffer.from([RT_RESET]));
      this.expectBanner();
    }
    if (report.mpos) {
      this.previousMposSteps = this.mposSteps;
      this.mposSteps = this.toSteps(report.mpos);
    }
    // Noise can swallow an `ok` (a half line glued in front of it). grbl idle with lines sent long ago
    // and unanswered means it has processed them: take their answers as lost, or a move would never end.
    if (report.state === 'Idle' && this.phase === 'ready' && this.inFlight.length > 0 && this.opts.clock.nowUs() - this.lastSendUs > LOST_ANSWER_US) {
      while (this.inFlight.length > 0) {
        this.stats.lostAnswers++;
        this.answer({ ok: true });
      }
    }
    const next = this.reportWaiters;
    this.reportWaiters = [];
    for (const w of next) w();
    const waiters = this.statusWaiters.filter((w) => w.at <= this.statusAnswered);
    this.statusWaiters = this.statusWaiters.filter((w) => w.at > this.statusAnswered);
    for (const w of waiters) w.resolve();
  }

  /**
   * Until grbl's report of the halted position arrives (a few ms), the best estimate: the last report moved
   * on at its feed for the time since, never past the target. The report then replaces it.
   */
  private extrapolate(motion: Motion): void {
    const r = this.report;
    if (!r || r.state !== 'Run' || r.feed === null || !motion.targetSteps) return;
    const elapsedS = (this.opts.clock.nowUs() - this.lastReportUs) / 1e6;
    for (const axis of AXES) {
      const target = this.origin[axis] + motion.targetSteps[axis];
      const step = (r.feed / 60) * motion.unit[axis] * elapsedS * this.opts.stepsPerDeg[axis];
      const next = Math.round(this.mposSteps[axis] + step);
      this.mposSteps[axis] = step >= 0 ? Math.min(next, Math.max(target, this.mposSteps[axis])) : Math.max(next, Math.min(target, this.mposSteps[axis]));
    }
  }

  private toSteps(mpos: [number, number]): AxisPair<number> {
    return { theta: Math.round(mpos[0] * this.opts.stepsPerDeg.theta), phi: Math.round(mpos[1] * this.opts.stepsPerDeg.phi) };
  }

  private onAlarm(code: number): void {
    const detail = this.lastMessage ? `: ${this.lastMessage}` : '';
    this.lastMessage = null;
    const message = `${describeAlarm(code)}${detail}`;
    // Leave it locked: only homing clears an alarm.
    this.alarmLatched = true;
    this.isHomed = { theta: false, phi: false };
    const cycle = this.homingCycle;
    this.endHomingCycle();
    this.dropLines();
    // grbl resets itself after an alarm (mc_reset() sets the abort; the banner follows the 500 ms pause of
    // report.c report_alarm_message()), except after a hard or soft limit: those wait for a reset
    // (protocol.c protocol_exec_rt_system(), "[MSG:Reset to continue]").
    if (code === 1 || code === 2) this.link.write(Buffer.from([RT_RESET]));
    this.recovering = true;
    this.expectBanner();
    if (cycle && this.motion?.kind === 'home') {
      // The cycle's axes were zeroed when it started: re-base them, then explain the failure once the
      // position is known (an ALARM:9 that left X and Y where they were means a Z-first build).
      this.afterReset = { axes: cycle.axes, mposBefore: cycle.mposBefore, alarm: code };
      return;
    }
    this.fault({ code: alarmFaultCode(code), message });
  }

  private onBanner(): void {
    this.haltReportWanted = false;
    // grbl re-initialised: its receive buffer is empty, and nothing sent before will be answered.
    this.dropLines();
    this.releaseStatusWaiters();
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
        if (!full) this.afterRecovery();
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
        const first = !this.everReady;
        this.everReady = true;
        if (first) for (const listener of this.listeners) listener({ type: 'connected', message: `grbl on ${this.opts.path} is set up; home the axes (POST /home)` });
        const deferred = this.deferred;
        this.deferred = null;
        this.wakeSettlers();
        this.schedulePoll();
        deferred?.();
      });
    };
    if (!full) return afterSettings();
    this.settings.clear();
    this.buildOptions = null;
    this.buildVersion = null;
    this.sendLine('$I', () => undefined);
    this.sendLine('$$', (answer) => {
      if (this.phase !== 'configuring') return;
      const problems = answer.ok ? [...checkBuild(this.buildVersion, this.buildOptions), ...checkSettings(this.settings, this.opts)] : [describeError(answer.error)];
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

  /**
   * After a reset we caused or an alarm: the status just read is the true halted position. A reset in
   * motion (ALARM:3) may have lost the step grbl had counted but not output: homing is lost, as grbl says.
   * A homing cycle that ended in reset or alarm had zeroed its axes at its start: re-base them so the
   * position stays continuous, and report the homing failure with what grbl's alarm means.
   */
  private afterRecovery(): void {
    const alarm = this.alarmWhileResetting;
    this.alarmWhileResetting = null;
    if (alarm === 3) this.isHomed = { theta: false, phi: false };
    const after = this.afterReset;
    this.afterReset = null;
    if (!after) return;
    let zFirst = true;
    for (const axis of after.axes) {
      // An axis grbl did not touch (not in its cycle) reads exactly what it read before.
      if (this.mposSteps[axis] === after.mposBefore[axis]) continue;
      zFirst = false;
      this.origin[axis] -= after.mposBefore[axis];
      this.isHomed[axis] = false;
    }
    for (const axis of after.axes) this.isHomed[axis] = false;
    if (after.alarm === null) return;
    const motion = this.motion;
    let message = describeAlarm(after.alarm);
    if (after.alarm === 9 && zFirst && after.axes.length === AXES.length) {
      message +=
        ': X and Y never moved, so this grbl build homes another axis (Z) first and found no switch there. ' +
        'In grbl/config.h set `#define HOMING_CYCLE_0 ((1<<X_AXIS)|(1<<Y_AXIS))` and comment out HOMING_CYCLE_1, ' +
        'keep `#define HOMING_SINGLE_AXIS_COMMANDS`, rebuild and flash (docs/hardware.md)';
    }
    const fault: MotionFault = { code: alarmFaultCode(after.alarm), message };
    if (motion) {
      this.motion = null;
      motion.onEnd({ outcome: 'failed', fault });
    } else for (const listener of this.listeners) listener({ type: 'fault', fault });
  }

  private schedulePoll(): void {
    if (this.closed) return;
    this.poll?.cancel();
    const periodMs = this.holding ? 10 : this.motion ? (this.opts.pollMovingMs ?? 40) : (this.opts.pollIdleMs ?? 250);
    this.poll = this.opts.clock.setTimerAt(this.opts.clock.nowUs() + periodMs * 1000, () => {
      this.poll = null;
      this.pollOnce();
      this.schedulePoll();
    });
  }

  private pollOnce(): void {
    if (!this.link.isUp || this.phase === 'resetting') return;
    // grbl answers no `?` in a homing cycle (the cycle has its own deadline), nor while it writes its EEPROM.
    if (this.homingCycle || this.exclusiveInFlight()) return;
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

function alarmFaultCode(code: number): MotionFault['code'] {
  // ALARM:9: no switch within the search distance; ALARM:8: pulling off did not clear the switch (alarm_codes, interface.md).
  return code === 9 ? 'POS_ERR_HOMING_SWITCH_NOT_FOUND' : code === 8 ? 'POS_ERR_HOMING_SWITCH_STUCK' : 'POS_ERR_HARDWARE';
}

/**
 * Why a move at `speedDegS` (the speed of the axis that travels furthest) would ask more steps per second
 * of some axis than grbl can give, with the highest speed that works; null when it fits.
 * `dDeg` is the move's travel per axis (only its direction matters); absent, each axis alone at full speed.
 */
export function stepRateProblem(stepsPerDeg: AxisPair<number>, speedDegS: number, ceilingHz: number, dDeg?: AxisPair<number>): string | null {
  const longest = dDeg ? Math.max(Math.abs(dDeg.theta), Math.abs(dDeg.phi)) : 1;
  let worst: { axis: AxisName; hz: number; share: number } | null = null;
  for (const axis of AXES) {
    const share = dDeg ? (longest > 0 ? Math.abs(dDeg[axis]) / longest : 0) : 1;
    const hz = speedDegS * share * stepsPerDeg[axis];
    if (hz > ceilingHz * (1 + 1e-9) && (!worst || hz > worst.hz)) worst = { axis, hz, share };
  }
  if (!worst) return null;
  const highest = Math.floor((ceilingHz / (stepsPerDeg[worst.axis] * worst.share)) * 1000) / 1000;
  return (
    `${formatNumber(speedDegS, 3)} deg/s needs ${Math.round(worst.hz)} steps/s on ${worst.axis} (${stepsPerDeg[worst.axis]} steps/deg), ` +
    `more than the ${ceilingHz} steps/s grbl can step on an ATmega328P: use at most ${highest} deg/s`
  );
}

/** What the build (`$I`) lacks that the positioner needs, each with what to change in grbl/config.h. */
export function checkBuild(version: string | null, options: string | null): string[] {
  if (options === null) return ['`$I` gave no [OPT:...] line: this is not grbl 1.1 (flash grbl 1.1h, see docs/hardware.md)'];
  const problems: string[] = [];
  if (version !== null && !/^1\.1/.test(version)) problems.push(`grbl ${version} is not 1.1: flash grbl 1.1h (docs/hardware.md)`);
  if (!options.includes('H')) {
    problems.push('this grbl build has no single-axis homing ($HX/$HY): in grbl/config.h uncomment `#define HOMING_SINGLE_AXIS_COMMANDS`, rebuild and flash (docs/hardware.md)');
  }
  return problems;
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
