/**
 * A simulated grbl 1.1h board (an Arduino Uno with a CNC shield) as seen from
 * its USB serial line, built from grbl's own source (gnea/grbl, v1.1h) and
 * checked byte for byte against the real firmware on a simulated ATmega328P
 * (test/fixtures/grbl-real-*.json). Each behaviour cites where grbl does it.
 *
 *   serial bytes ──► USART (2-byte FIFO; lost while interrupts are off)
 *                    └► RX ISR: '?', '!', '~', 0x18 acted on at once,
 *                       the rest into the 128-byte ring buffer
 *   main loop ──► one line at a time: `$` commands, G-code into a
 *                 15-block planner; G4 and `$` commands wait for it
 *   stepper ──► one block at a time, a trapezoid per block, Bresenham over
 *               the axes; a step is counted one interrupt before it is output
 *
 * Simplifications, each on purpose: blocks start and end at rest (grbl's
 * planner joins consecutive blocks at speed; the positioner's driver sends
 * one move at a time); only the G-code the driver and a user at a terminal
 * need is understood (G0 G1 G4 G17 G21 G40 G53 G54 G90 G91 G94, F X Y Z P N,
 * M2 M5 M8 M9 M30); above the 30 kHz step-rate ceiling a block runs at the
 * ceiling (the real firmware misbehaves there: hal/grbl-protocol.ts
 * MAX_STEP_RATE_HZ); the status report carries MPos/WPos, Bf, FS, Pn, WCO, Ov.
 */
import type { AxisPair } from '../hal/axes';
import type { Clock, TimerHandle } from '../hal/clock';
import type { OutputPin } from '../hal/output-pin';
import { MAX_STEP_RATE_HZ, RT_FEED_HOLD, RT_RESET, RT_RESUME, RT_STATUS, RX_BUFFER_BYTES } from '../hal/grbl-protocol';
import { Profile } from './grbl-profile';
import type { SimAxis } from './sim-axis';

export const SIM_GRBL_VERSION = '1.1h';
/** report.c report_build_info(): the version and build date of the tagged 1.1h release, then the build info string ($I=, empty). */
const VERSION_LINE = '[VER:1.1h.20190825:]';
const PLANNER_BLOCKS = 15; // config.h BLOCK_BUFFER_SIZE 16, one kept free (planner.c)
const LINE_BUFFER_SIZE = 80; // protocol.c LINE_BUFFER_SIZE
/** One byte at 115200 baud 8N1. */
const BYTE_US = 1e6 * 10 / 115200;
/** report.c report_alarm_message(): delay_ms(500) after printing an alarm. */
const ALARM_PAUSE_US = 500_000;
/** ATmega328P datasheet: an EEPROM erase+write takes 3.4 ms; eeprom.c eeprom_put_char() waits for it with interrupts off. */
const EEPROM_BYTE_US = 3400;
/** config.h DWELL_TIME_STEP: nuts_bolts.c delay_sec() dwells in whole steps of 50 ms. */
const DWELL_TIME_STEP_MS = 50;

/** nuts_bolts.c delay_sec(): ceil(1000 / DWELL_TIME_STEP * seconds) steps of DWELL_TIME_STEP ms (in float, as the AVR computes it). */
function dwellUs(seconds: number): number {
  return Math.ceil(Math.fround(Math.fround(1000 / DWELL_TIME_STEP_MS) * Math.fround(seconds))) * DWELL_TIME_STEP_MS * 1000;
}

/** How often the simulated stepper catches up with its step times (each step keeps its exact time). */
const TICK_US = 1000;

type Axis3 = [number, number, number];
const LETTERS = ['X', 'Y', 'Z'] as const;

/** Compile-time options of the grbl build (grbl/config.h). */
export interface SimGrblBuild {
  /** HOMING_CYCLE_0, _1, ...: the axes of each homing cycle, in order. */
  homingCycles: readonly (readonly ('X' | 'Y' | 'Z')[])[];
  /** HOMING_SINGLE_AXIS_COMMANDS: `$HX`, `$HY`, `$HZ`. */
  singleAxisHoming: boolean;
}

/** The build docs/hardware.md asks for (and ../shared/grbl-real runs): one X|Y cycle, single-axis homing. */
export const XY_BUILD: SimGrblBuild = { homingCycles: [['X', 'Y']], singleAxisHoming: true };
/** An unmodified config.h: Z homes first (HOMING_CYCLE_0), then X and Y; no single-axis homing. */
export const STOCK_BUILD: SimGrblBuild = { homingCycles: [['Z'], ['X', 'Y']], singleAxisHoming: false };

export interface SimGrblOptions {
  clock: Clock;
  axes: AxisPair<SimAxis>;
  /** Initial `$` settings (unlisted ones take grbl's defaults). $100/$101 must match the simulated drive trains. */
  settings: Record<number, number>;
  /** Where the board writes its bytes (the serial line). */
  send: (text: string) => void;
  build?: SimGrblBuild;
  /** Model the EEPROM write time and the USART overrun it causes (default true, as the chip). */
  eepromTiming?: boolean;
  /** The flood coolant pin (M8/M9; D-A3 on a CNC shield), used as a measurement trigger output. */
  coolantOutput?: OutputPin;
}

type SimState = 'Idle' | 'Run' | 'Hold' | 'Home' | 'Alarm';

export interface SimGrblEvent {
  type: 'halt' | 'alarm' | 'reset' | 'line' | 'realtime';
  detail: string;
}

/** grbl's `$$` settings and their defaults (defaults.h DEFAULTS_GENERIC), and which print as integers (report.c report_grbl_settings()). */
const DEFAULTS: Record<number, number> = {
  0: 10, 1: 25, 2: 0, 3: 0, 4: 0, 5: 0, 6: 0, 10: 1, 11: 0.01, 12: 0.002, 13: 0, 20: 0, 21: 0, 22: 0, 23: 0,
  24: 25, 25: 500, 26: 250, 27: 1, 30: 1000, 31: 0, 32: 0, 100: 250, 101: 250, 102: 250, 110: 500, 111: 500,
  112: 500, 120: 10, 121: 10, 122: 10, 130: 200, 131: 200, 132: 200,
};
export const GRBL_SETTING_IDS = Object.keys(DEFAULTS).map(Number);
const INTEGER_SETTINGS = new Set([0, 1, 2, 3, 4, 5, 6, 10, 13, 20, 21, 22, 23, 26, 30, 31, 32]);

interface Block {
  targetSteps: Axis3;
  /** Path rate, mm/min (G0: null, the axes' max rates). */
  rateMmMin: number | null;
}

interface HomingPhase {
  approach: boolean;
  cycleAxes: number[];
  /** Axes whose switch has been found in this approach: still counted, no longer stepped (stepper.c homing_axis_lock). */
  locked: Set<number>;
}

interface Run {
  startSteps: Axis3;
  delta: Axis3;
  events: number;
  lengthMm: number;
  profile: Profile;
  t0Us: number;
  done: number;
  counter: Axis3;
  accelMmS2: number;
  vmaxMmS: number;
  homing: HomingPhase | null;
  onEnd: (how: 'done' | 'locked') => void;
  lastEventUs: number;
  prevEventUs: number;
}

export class SimGrblController {
  readonly settings = new Map<number, number>();
  /** Every line the main loop took from the receive buffer, as received (for tests). */
  readonly linesReceived: string[] = [];
  /** Bytes lost because the 128-byte receive buffer was full. */
  rxOverflows = 0;
  /** Bytes lost in the USART while interrupts were off (EEPROM writes). */
  rxOverruns = 0;
  readonly build: SimGrblBuild;
  private readonly listeners = new Set<(event: SimGrblEvent) => void>();
  private readonly eepromTiming: boolean;

  private state: SimState = 'Idle';
  private powered = false;
  /** sys_position: the steps grbl has counted. */
  private readonly sysPos: Axis3 = [0, 0, 0];
  /** The step each axis has counted but not yet output (stepper.c: the outbits of one interrupt go out at the next). */
  private readonly pendingOut: Axis3 = [0, 0, 0];
  /** Where the planner's last block ends (planner.c pl.position). */
  private plannedSteps: Axis3 = [0, 0, 0];
  private ring: number[] = [];
  private line = '';
  private lineOverflow = false;
  private lineComment = false;
  private readonly blocks: Block[] = [];
  private run: Run | null = null;
  private runTimer: TimerHandle | null = null;
  /** Feed hold: 'decel' until the machine stands, then 'complete' (Hold:1 / Hold:0). */
  private hold: 'none' | 'decel' | 'complete' = 'none';
  /** What keeps the main loop from taking the next line. */
  private busy: 'sync' | 'dwell' | 'home' | 'eeprom' | 'abort' | 'planner' | null = null;
  /** The motion line waiting for a free planner block. */
  private plannerWait: string | null = null;
  /** The line being executed (its `ok` is owed even when a reset cuts it short). */
  private executing = false;
  private reportPending = false;
  /** Waiting for a reset after a hard or soft limit (protocol.c critical event loop). */
  private critical = false;
  private generation = 0;
  private lastRxUs = -Infinity;
  private eepromWindow: { startUs: number; endUs: number; kept: number[] } | null = null;
  private modal = { rapid: true, relative: false, feedMmMin: 0 };
  private coolantFlood = false;
  private wcoCounter = 0;
  private ovrCounter = 0;

  constructor(private readonly opts: SimGrblOptions) {
    this.build = opts.build ?? XY_BUILD;
    this.eepromTiming = opts.eepromTiming ?? true;
    for (const id of GRBL_SETTING_IDS) this.settings.set(id, opts.settings[id] ?? DEFAULTS[id]);
  }

  /**
   * Power-up, or the reset an Uno's auto-reset gives when a port opens (DTR): the banner
   * (report.c report_init_message()), and with homing enabled the alarm lock
   * (main.c HOMING_INIT_LOCK; protocol.c protocol_main_loop(): "[MSG:'$H'|'$X' to unlock]").
   */
  powerUp(): void {
    this.powered = true;
    this.state = this.setting(22) ? 'Alarm' : 'Idle';
    this.reinit();
  }

  onEvent(listener: (event: SimGrblEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  currentState(): SimState {
    return this.state;
  }

  /** The machine position grbl has counted, in steps (X, Y, Z). */
  countedSteps(): Axis3 {
    return [...this.sysPos];
  }

  /** Raises an alarm as the board would (tests: "the controller raised an alarm"); 1 and 2 are critical. */
  raiseAlarm(code: number, message?: string): void {
    if (message) this.sendLine(`[MSG:${message}]`);
    this.abort(code, code === 1 || code === 2);
  }

  /** Bytes from the serial line, arriving one byte time apart from now on. */
  receive(data: Buffer): void {
    // Before power-up (an Uno in its bootloader after the DTR reset) nothing runs grbl: bytes are lost.
    if (!this.powered) return;
    for (const byte of data) {
      const atUs = Math.max(this.now(), this.lastRxUs + BYTE_US);
      this.lastRxUs = atUs;
      if (this.lostInUsart(atUs)) continue;
      this.rxIsr(byte);
      this.mainLoop(atUs);
    }
  }

  // ---- serial (serial.c) ----

  /**
   * While the main loop waits for an EEPROM write with interrupts off (eeprom.c eeprom_put_char()), the
   * USART keeps two bytes; any further byte in the same wait is lost (ATmega328P data overrun).
   */
  private lostInUsart(atUs: number): boolean {
    const w = this.eepromWindow;
    if (!w || atUs < w.startUs || atUs >= w.endUs) return false;
    const slot = Math.floor((atUs - w.startUs) / EEPROM_BYTE_US);
    w.kept[slot] = (w.kept[slot] ?? 0) + 1;
    if (w.kept[slot] <= 2) return false;
    this.rxOverruns++;
    return true;
  }

  /** serial.c ISR(SERIAL_RX): real-time commands are picked out of the stream, the rest goes to the ring buffer. */
  private rxIsr(byte: number): void {
    if (byte === RT_RESET) return this.softReset();
    if (byte === RT_STATUS) {
      this.reportPending = true;
      return;
    }
    if (byte === RT_FEED_HOLD) return this.feedHold();
    if (byte === RT_RESUME) return this.resume();
    if (byte >= 0x80) return; // extended real-time commands (overrides, jog cancel): nothing the positioner uses
    if (this.ring.length >= RX_BUFFER_BYTES) {
      this.rxOverflows++; // serial.c: the byte is dropped when the ring buffer is full
      return;
    }
    this.ring.push(byte);
  }

  // ---- main loop (protocol.c protocol_main_loop()) ----

  private mainLoop(atUs = this.now()): void {
    this.realtime();
    while (this.busy === null && !this.critical && this.ring.length > 0) {
      const c = this.ring.shift()!;
      if (c === 0x0a || c === 0x0d) {
        const text = this.line;
        const overflow = this.lineOverflow;
        this.line = '';
        this.lineOverflow = false;
        this.lineComment = false;
        this.executeLine(text, overflow, atUs);
        this.realtime();
        continue;
      }
      // protocol.c: spaces and control characters dropped, comments skipped, letters upper-cased.
      if (this.lineComment || this.lineOverflow) {
        if (c === 0x29 && this.lineComment) this.lineComment = false; // ')' ends a comment
        continue;
      }
      if (c <= 0x20 || c === 0x2f) continue;
      if (c === 0x28 || c === 0x3b) {
        this.lineComment = true;
        continue;
      }
      if (this.line.length >= LINE_BUFFER_SIZE - 1) {
        this.lineOverflow = true;
        continue;
      }
      this.line += String.fromCharCode(c).toUpperCase();
    }
    // protocol.c protocol_auto_cycle_start(): once the input is drained, queued blocks start.
    if (this.ring.length === 0 || this.busy === 'sync') this.cycleStart();
  }

  /** protocol.c protocol_execute_realtime(): a pending status report goes out whenever the main loop checks. */
  private realtime(): void {
    if (!this.reportPending || this.busy === 'home' || this.busy === 'eeprom' || this.busy === 'abort') return;
    this.reportPending = false;
    this.sendStatus();
  }

  private executeLine(text: string, overflow: boolean, atUs: number): void {
    this.linesReceived.push(text);
    this.emit('line', text);
    this.executing = true;
    let status: number | null;
    if (overflow) status = 11;
    else if (text === '') status = 0;
    else if (text.startsWith('$')) status = this.systemCommand(text, atUs);
    else if (this.state === 'Alarm') status = 9; // protocol.c: G-code locked out in alarm
    else if (this.blocks.length >= PLANNER_BLOCKS && /[XYZ]/.test(text.replace(/\(.*?\)/g, ''))) {
      // motion_control.c mc_line(): with the planner full the main loop waits for a free block (and reads no input).
      this.plannerWait = text;
      this.busy = 'planner';
      return;
    } else status = this.gcode(text);
    if (status !== null) this.answer(status);
  }

  /** report.c report_status_message(): `ok` or `error:N` for the line being executed. */
  private answer(status: number): void {
    this.executing = false;
    this.sendLine(status === 0 ? 'ok' : `error:${status}`);
  }

  // ---- `$` commands (system.c system_execute_line()) ----

  private systemCommand(line: string, atUs: number): number | null {
    const idleOrAlarm = this.state === 'Idle' || this.state === 'Alarm';
    if (line === '$') return 0; // the help line is not modelled; answered as grbl answers it, with ok
    if (line === '$$') {
      if (this.state === 'Run' || this.state === 'Hold') return 8;
      for (const id of GRBL_SETTING_IDS) this.sendLine(`$${id}=${this.settingText(id)}`);
      return 0;
    }
    if (line === '$X') {
      if (this.state === 'Alarm') {
        this.sendLine('[MSG:Caution: Unlocked]');
        this.state = 'Idle';
      }
      return 0;
    }
    if (line === '$G' || line === '$C' || line === '$#') return 3; // not modelled
    if (!idleOrAlarm) return 8; // system.c: EEPROM and homing commands need IDLE or ALARM
    if (line === '$I') {
      this.sendLine(VERSION_LINE);
      this.sendLine(`[OPT:V${this.build.singleAxisHoming ? 'H' : ''},${PLANNER_BLOCKS},${RX_BUFFER_BYTES}]`);
      return 0;
    }
    if (line.startsWith('$H')) {
      if (!this.setting(22)) return 5;
      const rest = line.slice(2);
      let cycles: number[][];
      if (rest === '') cycles = this.build.homingCycles.map((c) => c.map((l) => LETTERS.indexOf(l)));
      else if (this.build.singleAxisHoming && rest.length === 1 && 'XYZ'.includes(rest)) cycles = [[LETTERS.indexOf(rest as 'X')]];
      else return 3;
      this.homingCycle(cycles);
      return null;
    }
    const set = /^\$(\d+)=(.*)$/.exec(line);
    if (set) {
      const id = Number(set[1]);
      if (!/^[-+]?(\d+\.?\d*|\.\d+)$/.test(set[2])) return 2;
      const value = Number(set[2]);
      if (!this.settings.has(id)) return 3;
      if (value < 0) return 4;
      if (id === 0 && value < 3) return 6;
      return this.storeSetting(id, value, atUs);
    }
    return 3;
  }

  /**
   * settings.c settings_store_global_setting() then write_global_settings(): the whole settings struct goes
   * through eeprom_put_char(), which writes only the bytes that change, 3.4 ms each with interrupts off.
   */
  private storeSetting(id: number, value: number, atUs: number): number | null {
    const before = storedBytes(id, this.setting(id));
    this.settings.set(id, INTEGER_SETTINGS.has(id) ? Math.trunc(value) : value);
    const after = storedBytes(id, this.setting(id));
    const changed = before.reduce((n, b, i) => n + (b === after[i] ? 0 : 1), 0);
    if (!this.eepromTiming || changed === 0) return 0;
    const startUs = Math.max(atUs, this.now());
    const endUs = startUs + changed * EEPROM_BYTE_US;
    this.eepromWindow = { startUs, endUs, kept: [] };
    this.busy = 'eeprom';
    const gen = this.generation;
    this.opts.clock.setTimerAt(endUs, () => {
      if (gen !== this.generation) return;
      this.eepromWindow = null;
      this.busy = null;
      this.answer(0);
      this.mainLoop();
    });
    return null;
  }

  // ---- G-code (gcode.c gc_execute_line(), the part the positioner uses) ----

  private gcode(line: string): number | null {
    const words: { letter: string; value: number }[] = [];
    let at = 0;
    while (at < line.length) {
      const letter = line[at];
      if (letter < 'A' || letter > 'Z') return 1; // STATUS_EXPECTED_COMMAND_LETTER
      const m = /^[-+]?(\d+\.?\d*|\.\d+)/.exec(line.slice(at + 1));
      if (!m) return 2; // STATUS_BAD_NUMBER_FORMAT
      words.push({ letter, value: Number(m[0]) });
      at += 1 + m[0].length;
    }
    const seen = new Set<string>();
    let motion: 'G0' | 'G1' | null = null;
    let dwell = false;
    let coolant: boolean | null = null;
    let machine = false;
    let relative = this.modal.relative;
    const axis: (number | undefined)[] = [undefined, undefined, undefined];
    let feed: number | null = null;
    let p: number | null = null;
    for (const { letter, value } of words) {
      if (letter !== 'G' && letter !== 'M') {
        if (seen.has(letter)) return 25; // STATUS_GCODE_WORD_REPEATED
        seen.add(letter);
      }
      if (letter === 'G') {
        if (value === 0 || value === 1) motion = value === 0 ? 'G0' : 'G1';
        else if (value === 4) dwell = true;
        else if (value === 53) machine = true;
        else if (value === 90) relative = false;
        else if (value === 91) relative = true;
        else if (![17, 21, 40, 54, 94].includes(value)) return 20;
      } else if (letter === 'M') {
        if (![2, 5, 8, 9, 30].includes(value)) return 20;
        if (value === 8 || value === 9) coolant = value === 8;
      } else if (letter === 'F') {
        if (value < 0) return 4;
        feed = value;
      } else if (letter === 'X' || letter === 'Y' || letter === 'Z') axis[LETTERS.indexOf(letter)] = value;
      else if (letter === 'P') p = value;
      else if (letter !== 'N') return 20;
    }
    const hasAxis = axis.some((v) => v !== undefined);
    if (machine && !(motion || (hasAxis && this.modal.rapid !== null))) return 30;
    if (dwell && p === null) return 28; // STATUS_GCODE_VALUE_WORD_MISSING
    if (dwell && p !== null && p < 0) return 4;
    const rapid = motion ? motion === 'G0' : this.modal.rapid;
    const feedNow = feed ?? this.modal.feedMmMin;
    if (hasAxis && !rapid && !(feedNow > 0)) return 22; // STATUS_GCODE_UNDEFINED_FEED_RATE
    this.modal.relative = relative;
    this.modal.rapid = rapid;
    if (feed !== null) this.modal.feedMmMin = feed;
    if (coolant !== null && coolant !== this.coolantFlood) {
      // gcode.c gc_execute_line() step 8: a coolant word that changes the state calls coolant_sync()
      // (coolant_control.c): protocol_buffer_synchronize(), so the output switches only once every motion
      // queued before it has ended, then coolant_set_state() drives the flood pin; the `ok` follows.
      // A word that changes nothing does not synchronise. (Simplification: motion or a dwell on the same line
      // as a coolant change is not run; the driver sends M8 and M9 on lines of their own.)
      const on = coolant;
      this.busy = 'sync';
      this.afterSync(() => {
        this.setCoolant(on);
        this.answerSync();
      });
      return null;
    }
    if (dwell) {
      // motion_control.c mc_dwell(): protocol_buffer_synchronize(), then the dwell.
      this.busy = 'sync';
      this.afterSync(() => {
        if (p! <= 0) return this.answerSync();
        this.busy = 'dwell';
        const gen = this.generation;
        this.opts.clock.setTimerAt(this.now() + dwellUs(p!), () => gen === this.generation && this.answerSync());
      });
      return null;
    }
    if (!hasAxis) return 0;
    const target: Axis3 = [0, 1, 2].map((i) => {
      const v = axis[i];
      if (v === undefined) return this.plannedSteps[i];
      const mm = relative && !machine ? this.plannedSteps[i] / this.stepsPerMm(i) + v : v;
      return Math.round(mm * this.stepsPerMm(i)); // planner.c: lround(target * steps_per_mm)
    }) as Axis3;
    this.blocks.push({ targetSteps: target, rateMmMin: rapid ? null : feedNow });
    this.plannedSteps = target;
    return 0;
  }

  /** coolant_control.c coolant_set_state() / coolant_stop(): the flood output (M8 on, M9 off), wired to `coolantOutput`. */
  private setCoolant(on: boolean): void {
    if (on === this.coolantFlood) return;
    this.coolantFlood = on;
    this.opts.coolantOutput?.write(on, this.now());
  }

  /** True while the flood coolant output (M8) is on: the trigger line of a scan's trigger source. */
  coolantOn(): boolean {
    return this.coolantFlood;
  }

  private answerSync(): void {
    this.busy = null;
    this.answer(0);
    this.mainLoop();
  }

  /** protocol.c protocol_buffer_synchronize(): waits while a block is queued or the machine cycles (a hold included). */
  private afterSync(then: () => void): void {
    this.cycleStart();
    if (!this.run && this.blocks.length === 0 && this.hold === 'none') return then();
    this.syncWaiter = then;
  }

  private syncWaiter: (() => void) | null = null;

  private checkSync(): void {
    if (!this.syncWaiter || this.run || this.blocks.length > 0 || this.hold !== 'none') return;
    const then = this.syncWaiter;
    this.syncWaiter = null;
    then();
  }

  // ---- stepper (stepper.c) ----

  private cycleStart(): void {
    if (this.run || this.hold !== 'none' || this.state === 'Alarm' || this.busy === 'home') return;
    const block = this.blocks.shift();
    if (!block) return;
    this.state = 'Run';
    const delta = [0, 1, 2].map((i) => block.targetSteps[i] - this.sysPos[i]) as Axis3;
    const mm = delta.map((d, i) => d / this.stepsPerMm(i));
    const length = Math.hypot(...mm);
    // planner.c plan_buffer_line(): the path rate and acceleration limited so that no axis exceeds its own.
    let rate = block.rateMmMin ?? Infinity;
    let accel = Infinity;
    for (let i = 0; i < 3; i++) {
      if (mm[i] === 0) continue;
      const unit = Math.abs(mm[i]) / length;
      rate = Math.min(rate, this.setting(110 + i) / unit);
      accel = Math.min(accel, this.setting(120 + i) / unit);
    }
    if (this.busy === 'planner' && this.plannerWait !== null) {
      const text = this.plannerWait;
      this.plannerWait = null;
      this.busy = null;
      const status = this.gcode(text);
      if (status !== null) this.answer(status);
    }
    this.startRun(delta, rate / 60, accel, null, () => {
      if (this.blocks.length > 0) this.cycleStart();
      else if (this.hold === 'none') this.state = 'Idle';
      this.checkSync();
      this.mainLoop();
    });
  }

  /** Starts stepping `delta` from where the axes are; `onEnd` runs when the last step is out (or the homing lock ends it). */
  private startRun(delta: Axis3, vmaxMmS: number, accelMmS2: number, homing: HomingPhase | null, onEnd: (how: 'done' | 'locked') => void): void {
    const events = Math.max(...delta.map(Math.abs));
    const length = Math.hypot(...delta.map((d, i) => d / this.stepsPerMm(i)));
    // The step interrupt cannot run faster than MAX_STEP_RATE_HZ: a block that would ask more runs at the ceiling.
    const ceiling = events > 0 ? (MAX_STEP_RATE_HZ * length) / events : Infinity;
    const vmax = Math.min(vmaxMmS, ceiling);
    const run: Run = {
      startSteps: [...this.sysPos],
      delta,
      events,
      lengthMm: length,
      profile: Profile.block(length, 0, vmax, accelMmS2),
      t0Us: this.now(),
      done: 0,
      counter: [events >> 1, events >> 1, events >> 1], // stepper.c: Bresenham counters start at half
      accelMmS2,
      vmaxMmS: vmax,
      homing,
      onEnd,
      lastEventUs: this.now(),
      prevEventUs: this.now(),
    };
    this.run = run;
    if (events === 0) return this.finishRun(run, 'done');
    this.scheduleTick();
  }

  private scheduleTick(): void {
    this.runTimer?.cancel();
    const gen = this.generation;
    this.runTimer = this.opts.clock.setTimerAt(this.now() + TICK_US, () => {
      this.runTimer = null;
      if (gen === this.generation) this.tick();
    });
  }

  /** Issues every step due by now, each at its own time. */
  private tick(): void {
    const run = this.run;
    if (!run) return;
    const nowUs = this.now();
    while (run.done < run.events) {
      const tUs = run.t0Us + run.profile.timeAtDistance(((run.done + 1) / run.events) * run.lengthMm) * 1e6;
      if (!(tUs <= nowUs)) break;
      run.done++;
      run.prevEventUs = run.lastEventUs;
      run.lastEventUs = tUs;
      this.stepEvent(run, tUs);
      if (this.run !== run) return; // the homing lock ended the phase
    }
    if (run.done >= run.events) {
      // The last counted steps go out at the next interrupt, one step period later, then the stepper idles.
      this.flushPending(run.lastEventUs + Math.max(run.lastEventUs - run.prevEventUs, 1));
      if (this.hold === 'decel') this.holdComplete();
      return this.finishRun(run, 'done');
    }
    if (this.hold === 'decel' && run.profile.speedAt((nowUs - run.t0Us) / 1e6) <= 0 && nowUs >= run.t0Us + run.profile.durationS * 1e6) {
      this.flushPending(run.lastEventUs + Math.max(run.lastEventUs - run.prevEventUs, 1));
      this.holdComplete();
      return;
    }
    this.scheduleTick();
  }

  /** One interrupt: output last interrupt's steps, then count this one's (stepper.c ISR(TIMER1_COMPA_vect)). */
  private stepEvent(run: Run, tUs: number): void {
    this.flushPending(tUs);
    for (let i = 0; i < 3; i++) {
      run.counter[i] += Math.abs(run.delta[i]);
      if (run.counter[i] <= run.events) continue;
      run.counter[i] -= run.events;
      const dir = Math.sign(run.delta[i]);
      this.sysPos[i] += dir;
      // stepper.c: during homing, the outbits of locked axes are masked: counted, never output.
      if (run.homing?.locked.has(i)) continue;
      this.pendingOut[i] = dir;
    }
    const h = run.homing;
    if (h?.approach) {
      // limits.c limits_go_home(): each axis whose switch closed is locked; the approach ends when all are.
      for (const i of h.cycleAxes) if (!h.locked.has(i) && this.switchClosed(i)) h.locked.add(i);
      if (h.cycleAxes.every((i) => h.locked.has(i))) {
        this.dropPending(); // st_reset(): killed at once
        this.finishRun(run, 'locked');
      }
    }
  }

  private flushPending(tUs: number): void {
    for (let i = 0; i < 2; i++) {
      if (this.pendingOut[i] === 0) continue;
      const axis = i === 0 ? this.opts.axes.theta : this.opts.axes.phi;
      try {
        axis.stepper.step(this.pendingOut[i] as 1 | -1, tUs);
      } catch {
        // A stepper driver that shut down takes no steps; grbl has no input for it and counts on.
      }
      this.pendingOut[i] = 0;
    }
    this.pendingOut[2] = 0;
  }

  private dropPending(): void {
    this.pendingOut.fill(0);
  }

  private finishRun(run: Run, how: 'done' | 'locked'): void {
    if (this.run !== run) return;
    this.run = null;
    this.runTimer?.cancel();
    this.runTimer = null;
    run.onEnd(how);
  }

  private currentSpeedMmS(): number {
    const run = this.run;
    if (!run) return 0;
    return run.profile.speedAt((this.now() - run.t0Us) / 1e6);
  }

  // ---- feed hold, resume (protocol.c protocol_exec_rt_system(), stepper.c STEP_CONTROL_EXECUTE_HOLD) ----

  private feedHold(): void {
    this.emit('realtime', 'feed hold');
    if (this.busy === 'home' || this.state === 'Alarm') return;
    if (this.state === 'Idle') {
      this.state = 'Hold';
      this.hold = 'complete'; // nothing moves: the hold is complete at once
      return;
    }
    if (this.state !== 'Run' || !this.run) return;
    this.state = 'Hold';
    this.hold = 'decel';
    const run = this.run;
    // Decelerate from the current speed at the block's acceleration: the rest of the block is replanned.
    const tS = (this.now() - run.t0Us) / 1e6;
    const stop = Profile.stop(run.profile.speedAt(tS), run.accelMmS2);
    run.profile = Profile.compose(run.profile, tS, stop);
  }

  private holdComplete(): void {
    this.hold = 'complete';
    this.emit('halt', 'feed hold complete');
    this.checkSync();
  }

  private resume(): void {
    this.emit('realtime', 'resume');
    if (this.state !== 'Hold' || this.hold !== 'complete') return;
    this.hold = 'none';
    const run = this.run;
    if (run) {
      // Carry on from rest with what is left of the block.
      const left = run.events - run.done;
      const rest = [0, 1, 2].map((i) => run.startSteps[i] + run.delta[i] - this.sysPos[i]) as Axis3;
      this.run = null;
      this.state = 'Run';
      if (left > 0) return this.startRun(rest, run.vmaxMmS, run.accelMmS2, null, run.onEnd);
      return run.onEnd('done');
    }
    this.state = 'Idle';
    this.cycleStart();
    this.checkSync();
  }

  // ---- homing (motion_control.c mc_homing_cycle(), limits.c limits_go_home()) ----

  private homingCycle(cycles: number[][]): void {
    this.state = 'Home';
    this.busy = 'home';
    const gen = this.generation;
    const next = (k: number) => {
      if (gen !== this.generation) return;
      if (k >= cycles.length) {
        // mc_homing_cycle(): protocol_execute_realtime() still in the homing state, then system.c sets IDLE and answers.
        this.busy = null;
        this.realtimeIn('Home');
        this.state = 'Idle';
        this.plannedSteps = [...this.sysPos];
        this.answer(0);
        this.mainLoop();
        return;
      }
      this.goHome(cycles[k], () => next(k + 1));
    };
    next(0);
  }

  /** A status report owed from inside a cycle goes out with the state it was asked in. */
  private realtimeIn(state: SimState): void {
    if (!this.reportPending) return;
    const keep = this.state;
    this.state = state;
    this.reportPending = false;
    this.sendStatus();
    this.state = keep;
  }

  private goHome(axes: number[], done: () => void): void {
    const gen = this.generation;
    const seekMmS = this.setting(25) / 60;
    const feedMmS = this.setting(24) / 60;
    const pullOff = this.setting(27);
    // limits.c: the search covers 1.5 x the largest max travel of the cycle's axes.
    let travel = Math.max(...axes.map((i) => 1.5 * this.setting(130 + i)));
    let rate = seekMmS;
    let approach = true;
    let phasesLeft = 3; // n_cycle = 2 * N_HOMING_LOCATE_CYCLE + 1, the loop runs it + 1 times
    const phase = () => {
      if (gen !== this.generation) return;
      const toMin = (i: number) => (this.setting(23) >> i) & 1;
      const delta = [0, 0, 0] as Axis3;
      for (const i of axes) {
        this.sysPos[i] = 0; // limits.c: the cycle's axes restart from 0 in each phase
        const dir = toMin(i) ? (approach ? -1 : 1) : approach ? 1 : -1;
        delta[i] = dir * Math.round(travel * this.stepsPerMm(i));
      }
      // limits.c: homing_rate *= sqrt(n_active_axis), so each axis runs at the homing rate.
      const pathRate = rate * Math.sqrt(axes.length);
      const mm = delta.map((d, i) => d / this.stepsPerMm(i));
      const length = Math.hypot(...mm);
      let accel = Infinity;
      for (const i of axes) accel = Math.min(accel, this.setting(120 + i) / (Math.abs(mm[i]) / length));
      const h: HomingPhase = { approach, cycleAxes: axes, locked: new Set() };
      this.startRun(delta, pathRate, accel, h, (how) => {
        if (gen !== this.generation) return;
        if (approach && how === 'done') return this.abort(9); // EXEC_ALARM_HOMING_FAIL_APPROACH
        if (!approach && axes.some((i) => this.switchClosed(i))) return this.abort(8); // EXEC_ALARM_HOMING_FAIL_PULLOFF
        // st_reset(); delay_ms(settings.homing_debounce_delay)
        this.opts.clock.setTimerAt(this.now() + this.setting(26) * 1000, () => {
          if (gen !== this.generation) return;
          approach = !approach;
          if (approach) {
            travel = pullOff * 5; // HOMING_AXIS_LOCATE_SCALAR
            rate = feedMmS;
          } else {
            travel = pullOff;
            rate = seekMmS;
          }
          if (phasesLeft-- > 0) return phase();
          // Machine position of the homed axes, HOMING_FORCE_SET_ORIGIN off: -max_travel + pull-off toward the minimum.
          for (const i of axes) {
            this.sysPos[i] = toMin(i) ? Math.round((-this.setting(130 + i) + pullOff) * this.stepsPerMm(i)) : Math.round(-pullOff * this.stepsPerMm(i));
          }
          done();
        });
      });
    };
    phase();
  }

  // ---- reset and alarms (motion_control.c mc_reset(), protocol.c, main.c) ----

  /** 0x18: mc_reset(). In motion it is an alarm (3, or 6 in homing); otherwise a plain re-initialisation. */
  private softReset(): void {
    this.emit('realtime', 'reset');
    if (this.busy === 'abort' && !this.critical) return; // EXEC_RESET already set: mc_reset() does nothing more
    if (this.critical) {
      this.critical = false;
      return this.reinitAfter(this.setting(1) * 1000);
    }
    const moving = this.run !== null && this.hold !== 'complete';
    if (this.busy === 'home') {
      // limits.c: a reset in the cycle is ALARM:6, unless a pull-off still has its switch closed (ALARM:8 then wins).
      const h = this.run?.homing;
      const pulloffStuck = h && !h.approach && h.cycleAxes.some((i) => this.switchClosed(i));
      return this.abort(pulloffStuck ? 8 : 6);
    }
    if (moving) return this.abort(3);
    this.stopEverything();
    if (this.executing) this.answer(0); // the line cut short by the abort still gets its ok
    this.emit('reset', 'soft reset');
    this.reinitAfter(this.setting(1) * 1000);
  }

  private stopEverything(): void {
    this.generation++;
    this.runTimer?.cancel();
    this.runTimer = null;
    if (this.run) this.emit('halt', 'reset');
    this.run = null;
    this.dropPending(); // st_go_idle(): the step counted but not output is never output
    this.blocks.length = 0;
    this.hold = 'none';
    this.syncWaiter = null;
    this.plannerWait = null;
    this.eepromWindow = null;
    this.reportPending = false;
    // motion_control.c mc_reset(): spindle_stop() and coolant_stop() on every reset and alarm.
    this.setCoolant(false);
  }

  /**
   * An alarm: the motion killed at once, ALARM:N (report.c report_alarm_message(), then its 500 ms pause),
   * then, for all but a hard or soft limit, the abort: the `ok` of the line cut short, and the
   * re-initialisation with the banner. Hard and soft limits wait for a reset ("[MSG:Reset to continue]").
   */
  private abort(code: number, critical = false): void {
    this.stopEverything();
    const owed = this.executing;
    this.state = 'Alarm';
    this.busy = 'abort';
    this.sendLine(`ALARM:${code}`);
    this.emit('alarm', `ALARM:${code}`);
    const gen = this.generation;
    this.opts.clock.setTimerAt(this.now() + ALARM_PAUSE_US, () => {
      if (gen !== this.generation) return;
      if (critical) {
        this.sendLine('[MSG:Reset to continue]');
        this.critical = true;
        return;
      }
      if (owed) this.answer(0);
      this.emit('reset', `ALARM:${code}`);
      this.reinitAfter(this.setting(1) * 1000);
    });
  }

  /** main.c: the stepper idle delay of st_go_idle() ($1 ms), then everything re-initialised and the banner. */
  private reinitAfter(delayUs: number): void {
    this.busy = 'abort';
    const gen = this.generation;
    this.opts.clock.setTimerAt(this.now() + delayUs, () => gen === this.generation && this.reinit());
  }

  private reinit(): void {
    this.generation++;
    this.busy = null;
    this.executing = false;
    this.critical = false;
    this.ring = []; // serial_reset_read_buffer()
    this.line = '';
    this.lineOverflow = false;
    this.lineComment = false;
    this.blocks.length = 0;
    this.run = null;
    this.hold = 'none';
    this.reportPending = false;
    this.plannedSteps = [...this.sysPos];
    this.modal = { rapid: true, relative: false, feedMmMin: 0 }; // gc_init()
    this.wcoCounter = 0;
    this.ovrCounter = 0;
    this.opts.send(`\r\nGrbl ${SIM_GRBL_VERSION} ['$' for help]\r\n`);
    if (this.state === 'Alarm') this.sendLine("[MSG:'$H'|'$X' to unlock]");
    else this.state = 'Idle';
  }

  // ---- output ----

  /**
   * report.c report_realtime_status(): state, position, buffer (with $10 bit 1), feed and spindle, pins,
   * and every few reports the work offset or the overrides (REPORT_WCO_REFRESH_*, REPORT_OVR_REFRESH_*).
   */
  private sendStatus(): void {
    const state = this.state === 'Hold' ? `Hold:${this.hold === 'complete' ? 0 : 1}` : this.state;
    const mask = this.setting(10);
    const pos = this.sysPos.map((s, i) => printCoord(s / this.stepsPerMm(i))).join(',');
    let text = `<${state}|${mask & 1 ? 'MPos' : 'WPos'}:${pos}`;
    if (mask & 2) text += `|Bf:${PLANNER_BLOCKS - this.blocks.length - (this.run ? 1 : 0)},${RX_BUFFER_BYTES - this.ring.length}`;
    text += `|FS:${Math.round(this.currentSpeedMmS() * 60)},0`;
    const pins = [0, 1].filter((i) => this.switchClosed(i)).map((i) => LETTERS[i]).join('');
    if (pins) text += `|Pn:${pins}`;
    const busy = this.state !== 'Idle' && this.state !== 'Alarm';
    if (this.wcoCounter > 0) this.wcoCounter--;
    else {
      this.wcoCounter = busy ? 29 : 9;
      if (this.ovrCounter === 0) this.ovrCounter = 1;
      text += '|WCO:0.000,0.000,0.000';
    }
    if (this.ovrCounter > 0) this.ovrCounter--;
    else {
      this.ovrCounter = busy ? 19 : 9;
      text += '|Ov:100,100,100';
      // report.c report_realtime_status(): with the overrides, the accessory state: F for flood coolant on.
      if (this.coolantFlood) text += '|A:F';
    }
    this.sendLine(`${text}>`);
  }

  private sendLine(text: string): void {
    this.opts.send(`${text}\r\n`);
  }

  private settingText(id: number): string {
    const v = this.setting(id);
    return INTEGER_SETTINGS.has(id) ? String(Math.trunc(v)) : printCoord(v);
  }

  private setting(id: number): number {
    return this.settings.get(id) ?? 0;
  }

  private stepsPerMm(axis: number): number {
    return this.setting(100 + axis);
  }

  private switchClosed(axis: number): boolean {
    if (axis === 0) return this.opts.axes.theta.homeSwitch.isTriggered();
    if (axis === 1) return this.opts.axes.phi.homeSwitch.isTriggered();
    return false; // no Z switch on a positioner
  }

  private now(): number {
    return this.opts.clock.nowUs();
  }

  private emit(type: SimGrblEvent['type'], detail: string): void {
    for (const listener of this.listeners) listener({ type, detail });
  }
}

/** print.c printFloat(n, 3) on grbl's float: rounds half away from zero, no exponent. */
function printCoord(value: number): string {
  const f = Math.fround(value);
  const negative = f < 0;
  const scaled = Math.floor(Math.abs(f) * 1000 + 0.5);
  const text = `${Math.floor(scaled / 1000)}.${String(scaled % 1000).padStart(3, '0')}`;
  return negative ? `-${text}` : text; // printFloat() writes the sign of any negative value, even -0.000
}

/**
 * The bytes a setting occupies in grbl's settings struct (settings.h settings_t): floats as IEEE single
 * (acceleration stored per minute squared, max travel negated), the rest as bytes (masks, flags, the
 * debounce as 16 bits). Only their change counts, so the exact offsets do not matter.
 */
function storedBytes(id: number, value: number): number[] {
  const buf = Buffer.alloc(4);
  if (id >= 120 && id <= 122) buf.writeFloatLE(value * 3600, 0);
  else if (id >= 130 && id <= 132) buf.writeFloatLE(-value, 0);
  else if (id === 26) buf.writeUInt16LE(Math.trunc(value) & 0xffff, 0);
  else if (INTEGER_SETTINGS.has(id) && id !== 30 && id !== 31) buf.writeUInt8(Math.trunc(value) & 0xff, 0);
  else buf.writeFloatLE(value, 0);
  return [...buf];
}
