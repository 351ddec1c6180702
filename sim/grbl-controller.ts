/**
 * A simulated grbl 1.1 controller: an Arduino with a CNC shield, as seen
 * from the USB serial line. It speaks the real wire protocol (hal/grbl-protocol.ts)
 * over any byte stream and moves the same simulated steppers (sim/sim-axis.ts)
 * as the simulation backend, so the real grbl driver can be exercised
 * without hardware: attach it to the far end of a pty pair (sim/serial-peer.ts).
 *
 * Like a real board it plans on board: its "firmware" is our own step
 * controller (firmware/step-controller.ts) on the clock it is given, playing
 * the part of grbl's planner and stepper. What it models:
 *   - a 128-byte receive buffer (bytes beyond it are lost and counted in
 *     `rxOverflows`, as on the real board), lines answered `ok` / `error:N`;
 *   - real-time bytes picked out of the stream before the line queue:
 *     '?' status, '!' feed hold, '~' resume, 0x18 soft reset;
 *   - a planner queue of 15 blocks (G0/G1 are answered `ok` when queued; G4
 *     and `$` commands wait for the queue to drain, so `G4 P0` is answered
 *     when the machine has arrived);
 *   - `$$`, `$N=value`, `$X`, `$H`/`$HX`/`$HY` (seek, back-off, approach,
 *     then pull off by $27 as grbl does), `$I`;
 *   - alarms: homing failures (8, 9), reset while moving (3) or homing (6),
 *     a driver fault wired to the limit input (1, with a `[MSG:...]` naming
 *     it, then locked until reset), and `raiseAlarm()` for tests;
 *   - power-up and every reset print the banner; with homing enabled the
 *     board starts locked in Alarm until `$H` or `$X`.
 * Simplifications, on purpose: a feed hold halts at once (grbl decelerates),
 * only G0/G1/G4/G21/G53/G90/G91/G94 and F/X/Y/Z/P words are understood,
 * and the machine position is the step controller's (0 at power-on, the
 * switch + $27 after homing).
 */
import type { AxisName, AxisPair } from '../hal/axes';
import { AXES, mapAxes } from '../hal/axes';
import type { Clock, TimerHandle } from '../hal/clock';
import {
  formatNumber,
  LINE_MAX_CHARS,
  RT_FEED_HOLD,
  RT_RESET,
  RT_RESUME,
  RT_STATUS,
  RX_BUFFER_BYTES,
} from '../hal/grbl-protocol';
import type { MotionEnd } from '../hal/motion-controller';
import type { HomingConfig } from '../firmware/config';
import { StepMotionController } from '../firmware/step-controller';
import type { SimAxis } from './sim-axis';

export const SIM_GRBL_VERSION = '1.1h';
const PLANNER_BLOCKS = 15;

/** grbl settings the simulator knows, with their meaning (a subset of grbl's `$$`). */
export const GRBL_SETTING_IDS = [0, 1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 20, 21, 22, 23, 24, 25, 26, 27, 30, 31, 32, 100, 101, 102, 110, 111, 112, 120, 121, 122, 130, 131, 132] as const;

export interface SimGrblOptions {
  clock: Clock;
  axes: AxisPair<SimAxis>;
  /** Initial `$` settings (unlisted ones take grbl's defaults). $100/$101 must match the simulated drive trains. */
  settings: Record<number, number>;
  /** Where the board writes its bytes (the serial line). */
  send: (text: string) => void;
}

type SimState = 'Idle' | 'Run' | 'Hold' | 'Home' | 'Alarm';

interface Block {
  targetMm: [number, number];
  /** mm/min along the path; null = rapid (G0). */
  feedMmMin: number | null;
}

export interface SimGrblEvent {
  type: 'halt' | 'alarm' | 'reset' | 'line' | 'realtime';
  detail: string;
}

const DEFAULTS: Record<number, number> = {
  0: 10, 1: 25, 2: 0, 3: 0, 4: 0, 5: 0, 6: 0, 10: 1, 11: 0.01, 12: 0.002, 13: 0, 20: 0, 21: 0, 22: 1, 23: 3,
  24: 60, 25: 600, 26: 250, 27: 2, 30: 1000, 31: 0, 32: 0, 100: 320, 101: 800, 102: 250, 110: 3600, 111: 3600,
  112: 500, 120: 20, 121: 20, 122: 10, 130: 200, 131: 400, 132: 200,
};

export class SimGrblController {
  readonly settings = new Map<number, number>();
  /** Every line taken from the receive buffer, in order (for tests). */
  readonly linesReceived: string[] = [];
  /** Bytes lost because the host overfilled the 128-byte receive buffer. */
  rxOverflows = 0;
  private readonly listeners = new Set<(event: SimGrblEvent) => void>();

  private readonly motion: StepMotionController;
  private readonly homing: AxisPair<HomingConfig>;
  private readonly perDegInternal: AxisPair<number>;
  private state: SimState = 'Idle';
  /** Locked after a hard-limit alarm: every line is ignored until a reset. */
  private critical = false;
  private partial = '';
  private partialOverflow = false;
  private readonly pending: string[] = [];
  private readonly blocks: Block[] = [];
  private running: Block | null = null;
  private held: Block | null = null;
  /** A G4 or `$` command waiting for motion to finish, or running (dwell, homing). */
  private syncBusy = false;
  private dwell: TimerHandle | null = null;
  /** Bumped by every reset/alarm so callbacks of aborted motions are ignored. */
  private generation = 0;
  private modal = { rapid: false, relative: false, feedMmMin: 0 };
  private plannedMm: [number, number] = [0, 0];

  constructor(private readonly opts: SimGrblOptions) {
    for (const id of GRBL_SETTING_IDS) this.settings.set(id, opts.settings[id] ?? DEFAULTS[id]);
    this.perDegInternal = { theta: this.setting(100), phi: this.setting(101) };
    this.homing = mapAxes(opts.axes, () => ({ seekDegS: 10, feedDegS: 1, pullOffDeg: 2 }));
    this.motion = new StepMotionController({
      clock: opts.clock,
      hardware: mapAxes(opts.axes, (a) => ({ stepper: a.stepper, homeSwitch: a.homeSwitch })),
      stepsPerDeg: this.perDegInternal,
      homing: this.homing,
      travelDeg: { theta: this.setting(130), phi: this.setting(131) },
      homingAccelDegS2: () => Math.min(this.setting(120), this.setting(121)),
    });
  }

  /** Power-up: the banner, and the alarm lock when homing is enabled. */
  powerUp(): void {
    this.state = this.setting(22) ? 'Alarm' : 'Idle';
    this.sendBanner();
  }

  onEvent(listener: (event: SimGrblEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** What the board is doing, as its status report names it. */
  currentState(): SimState {
    return this.state;
  }

  /** Bytes from the serial line. */
  receive(data: Buffer): void {
    for (const byte of data) {
      if (byte === RT_STATUS) this.sendStatus();
      else if (byte === RT_FEED_HOLD) this.feedHold();
      else if (byte === RT_RESUME) this.resume();
      else if (byte === RT_RESET) this.reset();
      else if (byte >= 0x80) continue; // extended real-time commands (overrides, jog cancel): nothing to do here
      else this.receiveByte(byte);
    }
    this.pump();
  }

  /** Raises an alarm as the board would (tests: "the controller raised an alarm"). */
  raiseAlarm(code: number, message?: string): void {
    this.alarm(code, message);
  }

  private receiveByte(byte: number): void {
    const buffered = this.partial.length + this.pending.reduce((n, l) => n + l.length + 1, 0);
    if (buffered >= RX_BUFFER_BYTES - 1) {
      this.rxOverflows++;
      return;
    }
    if (byte === 0x0a || byte === 0x0d) {
      if (this.partial.length > 0 || this.partialOverflow) {
        this.pending.push(this.partialOverflow ? '\u0000overflow' : this.partial);
      } else if (byte === 0x0a) {
        this.pending.push(''); // an empty line is answered ok, as grbl does
      }
      this.partial = '';
      this.partialOverflow = false;
      return;
    }
    if (this.partial.length >= LINE_MAX_CHARS) this.partialOverflow = true;
    else this.partial += String.fromCharCode(byte);
  }

  private setting(id: number): number {
    return this.settings.get(id) ?? 0;
  }

  private emit(type: SimGrblEvent['type'], detail: string): void {
    for (const listener of this.listeners) listener({ type, detail });
  }

  private sendLine(text: string): void {
    this.opts.send(`${text}\r\n`);
  }

  private sendBanner(): void {
    this.opts.send(`\r\nGrbl ${SIM_GRBL_VERSION} ['$' for help]\r\n`);
    if (this.state === 'Alarm') this.sendLine("[MSG:'$H'|'$X' to unlock]");
  }

  private positionMm(): [number, number] {
    const steps = this.motion.positionSteps();
    return [steps.theta / this.setting(100), steps.phi / this.setting(101)];
  }

  private sendStatus(): void {
    const [x, y] = this.positionMm();
    const v = this.motion.velocityDegS();
    const feed = Math.round(Math.hypot(v.theta, v.phi) * 60);
    const state = this.state === 'Hold' ? 'Hold:0' : this.state;
    const pins = AXES.filter((a) => this.opts.axes[a].homeSwitch.isTriggered())
      .map((a) => (a === 'theta' ? 'X' : 'Y'))
      .join('');
    this.sendLine(`<${state}|MPos:${formatNumber(x)},${formatNumber(y)},0.000|FS:${feed},0${pins ? `|Pn:${pins}` : ''}>`);
  }

  private feedHold(): void {
    this.emit('realtime', 'feed hold');
    if (this.state !== 'Run') return;
    this.generation++;
    this.motion.stop();
    this.emit('halt', 'feed hold');
    this.held = this.running;
    this.running = null;
    this.state = 'Hold';
  }

  private resume(): void {
    this.emit('realtime', 'resume');
    if (this.state !== 'Hold') return;
    this.state = 'Idle';
    if (this.held) this.blocks.unshift(this.held);
    this.held = null;
    this.runNext();
  }

  private reset(): void {
    this.emit('realtime', 'reset');
    const wasMoving = this.state === 'Run' || this.state === 'Home';
    const alarmCode = this.state === 'Home' ? 6 : this.state === 'Run' ? 3 : null;
    this.abortAll();
    if (wasMoving) this.emit('halt', 'reset');
    if (alarmCode !== null) this.sendLine(`ALARM:${alarmCode}`);
    this.critical = false;
    if (alarmCode !== null || (this.state === 'Alarm' && this.setting(22))) this.state = 'Alarm';
    else this.state = 'Idle';
    this.modal = { rapid: false, relative: false, feedMmMin: 0 };
    this.emit('reset', alarmCode === null ? 'soft reset' : `soft reset, ALARM:${alarmCode}`);
    this.sendBanner();
  }

  /** Stops everything and forgets every queued line and block. */
  private abortAll(): void {
    this.generation++;
    this.motion.stop();
    this.dwell?.cancel();
    this.dwell = null;
    this.blocks.length = 0;
    this.pending.length = 0;
    this.partial = '';
    this.partialOverflow = false;
    this.running = null;
    this.held = null;
    this.syncBusy = false;
    this.plannedMm = this.positionMm();
  }

  private alarm(code: number, message?: string): void {
    const wasMoving = this.state === 'Run' || this.state === 'Home';
    this.abortAll();
    if (wasMoving) this.emit('halt', `ALARM:${code}`);
    this.state = 'Alarm';
    if (message) this.sendLine(`[MSG:${message}]`);
    this.sendLine(`ALARM:${code}`);
    this.emit('alarm', `ALARM:${code}${message ? ` ${message}` : ''}`);
    if (code === 1 || code === 2) {
      this.critical = true;
      this.sendLine('[MSG:Reset to continue]');
    }
  }

  /** Takes lines from the receive buffer while the one at its head can be handled now. */
  private pump(): void {
    while (this.pending.length > 0 && !this.syncBusy) {
      const line = this.pending[0];
      if (this.critical) {
        this.pending.shift();
        continue;
      }
      const compact = line.replace(/\s+/g, '').toUpperCase();
      if (line === '\u0000overflow') {
        this.pending.shift();
        this.sendLine('error:11');
        continue;
      }
      if (compact.startsWith('$')) {
        if (this.running || this.blocks.length > 0) return; // waits for the machine to stop
        this.pending.shift();
        this.linesReceived.push(line);
        this.emit('line', line);
        this.systemCommand(compact);
        continue;
      }
      const words = parseWords(compact);
      if (words === null) {
        this.pending.shift();
        this.linesReceived.push(line);
        this.sendLine(compact.length > 0 && !/^[A-Z]/.test(compact) ? 'error:1' : 'error:2');
        continue;
      }
      if (this.state === 'Alarm' && words.length > 0) {
        this.pending.shift();
        this.linesReceived.push(line);
        this.sendLine('error:9');
        continue;
      }
      const isDwell = words.some((w) => w.letter === 'G' && w.value === 4);
      if (isDwell && (this.running || this.blocks.length > 0 || this.state === 'Hold')) return;
      const isMotion = words.some((w) => 'XYZ'.includes(w.letter));
      if (isMotion && this.blocks.length >= PLANNER_BLOCKS) return;
      this.pending.shift();
      this.linesReceived.push(line);
      this.emit('line', line);
      const result = this.gcode(words);
      if (result !== null) this.sendLine(`error:${result}`);
    }
  }

  /** Executes one G-code line; returns an error code, or null when it was answered (or will be). */
  private gcode(words: Word[]): number | null {
    const seen = new Set<string>();
    let motion: 'G0' | 'G1' | null = null;
    let dwell = false;
    let machine = false;
    const axis: { X?: number; Y?: number } = {};
    let feed: number | null = null;
    let pSec: number | null = null;
    for (const { letter, value } of words) {
      if (letter !== 'G' && letter !== 'M') {
        if (seen.has(letter)) return 25;
        seen.add(letter);
      }
      if (letter === 'G') {
        if (value === 0 || value === 1) motion = value === 0 ? 'G0' : 'G1';
        else if (value === 4) dwell = true;
        else if (value === 53) machine = true;
        else if (value === 90) this.modal.relative = false;
        else if (value === 91) this.modal.relative = true;
        else if (value === 21 || value === 94 || value === 17 || value === 54) continue;
        else return 20;
      } else if (letter === 'M') {
        if (![2, 30, 5, 9].includes(value)) return 20;
      } else if (letter === 'F') {
        if (value <= 0) return 4;
        feed = value;
      } else if (letter === 'X' || letter === 'Y') axis[letter] = value;
      else if (letter === 'Z') continue;
      else if (letter === 'P') pSec = value;
      else if (letter === 'N') continue;
      else return 20;
    }
    if (feed !== null) this.modal.feedMmMin = feed;
    if (motion) this.modal.rapid = motion === 'G0';
    if (machine && !motion) return 30;
    if (dwell) {
      if (pSec === null) return 28;
      if (pSec < 0) return 4;
      this.syncBusy = true;
      const gen = this.generation;
      const done = () => {
        if (gen !== this.generation) return;
        this.syncBusy = false;
        this.dwell = null;
        this.sendLine('ok');
        this.pump();
      };
      if (pSec === 0) done();
      else this.dwell = this.opts.clock.setTimerAt(this.opts.clock.nowUs() + pSec * 1e6, done);
      return null;
    }
    if (axis.X !== undefined || axis.Y !== undefined) {
      if (!this.modal.rapid && !(this.modal.feedMmMin > 0)) return 22;
      const base = this.plannedMm;
      const rel = this.modal.relative && !machine;
      const target: [number, number] = [
        axis.X === undefined ? base[0] : rel ? base[0] + axis.X : axis.X,
        axis.Y === undefined ? base[1] : rel ? base[1] + axis.Y : axis.Y,
      ];
      this.plannedMm = target;
      this.blocks.push({ targetMm: target, feedMmMin: this.modal.rapid ? null : this.modal.feedMmMin });
      this.sendLine('ok');
      this.runNext();
      return null;
    }
    this.sendLine('ok');
    return null;
  }

  private systemCommand(cmd: string): void {
    if (cmd === '$$') {
      for (const id of GRBL_SETTING_IDS) this.sendLine(`$${id}=${formatNumber(this.setting(id), Number.isInteger(this.setting(id)) && id < 100 ? 0 : 3)}`);
      return this.sendLine('ok');
    }
    if (cmd === '$X') {
      if (this.state === 'Alarm') {
        this.state = 'Idle';
        this.sendLine('[MSG:Caution: Unlocked]');
      }
      return this.sendLine('ok');
    }
    if (cmd === '$I') {
      this.sendLine(`[VER:${SIM_GRBL_VERSION}.sim:positioner]`);
      this.sendLine(`[OPT:VH,${PLANNER_BLOCKS},${RX_BUFFER_BYTES}]`);
      return this.sendLine('ok');
    }
    const home = /^\$H([XY]*)$/.exec(cmd);
    if (home) {
      if (!this.setting(22)) return this.sendLine('error:5');
      const axes: AxisName[] = home[1] === '' ? [...AXES] : [...new Set(home[1])].map((c) => (c === 'X' ? 'theta' : 'phi'));
      return this.home(axes);
    }
    const set = /^\$(\d+)=(-?\d+(?:\.\d+)?)$/.exec(cmd);
    if (set) {
      const id = Number(set[1]);
      if (!this.settings.has(id)) return this.sendLine('error:3');
      if (this.state !== 'Idle' && this.state !== 'Alarm') return this.sendLine('error:8');
      this.settings.set(id, Number(set[2]));
      return this.sendLine('ok');
    }
    this.sendLine('error:3');
  }

  private home(axes: AxisName[]): void {
    this.syncBusy = true;
    this.state = 'Home';
    const gen = this.generation;
    for (const axis of AXES) {
      this.homing[axis].seekDegS = this.setting(25) / 60;
      this.homing[axis].feedDegS = this.setting(24) / 60;
      this.homing[axis].pullOffDeg = Math.max(this.setting(27), 0.01);
    }
    const fail = (end: MotionEnd) => {
      if (end.outcome !== 'failed') return;
      const code = end.fault.code === 'POS_ERR_HOMING_SWITCH_NOT_FOUND' ? 9 : end.fault.code === 'POS_ERR_HOMING_SWITCH_STUCK' ? 8 : 1;
      this.alarm(code, code === 1 ? end.fault.message : undefined);
    };
    this.motion.home(axes, (end) => {
      if (gen !== this.generation) return;
      if (end.outcome !== 'completed') return fail(end);
      // Pull off the switches by $27, as grbl leaves its axes.
      const pos = this.motion.positionSteps();
      const target = { ...pos };
      for (const axis of axes) target[axis] += Math.round(this.setting(27) * this.perDegInternal[axis]);
      this.motion.move({ targetSteps: target, speedDegS: this.setting(25) / 60, accelDegS2: Math.min(this.setting(120), this.setting(121)) }, (pulled) => {
        if (gen !== this.generation) return;
        if (pulled.outcome !== 'completed') return fail(pulled);
        this.state = 'Idle';
        this.syncBusy = false;
        this.plannedMm = this.positionMm();
        this.sendLine('ok');
        this.pump();
      });
    });
  }

  /** Starts the next planned block when the machine is free. */
  private runNext(): void {
    if (this.running || this.state === 'Hold' || this.state === 'Alarm' || this.syncBusy) return;
    const block = this.blocks.shift();
    if (!block) return;
    this.running = block;
    this.state = 'Run';
    const gen = this.generation;
    const from = this.positionMm();
    const d = [block.targetMm[0] - from[0], block.targetMm[1] - from[1]];
    const lengthMm = Math.hypot(d[0], d[1]);
    const maxRate = [this.setting(110), this.setting(111)];
    const maxAccel = [this.setting(120), this.setting(121)];
    // grbl limits the path speed so that no axis exceeds its max rate, and the path
    // acceleration so that no axis exceeds its own; the planner here thinks in the
    // speed and accel of the axis that travels furthest.
    let pathRate = block.feedMmMin ?? Infinity;
    let pathAccel = Infinity;
    for (let i = 0; i < 2; i++) {
      if (d[i] === 0) continue;
      const share = Math.abs(d[i]) / lengthMm;
      pathRate = Math.min(pathRate, maxRate[i] / share);
      pathAccel = Math.min(pathAccel, maxAccel[i] / share);
    }
    const longest = Math.max(Math.abs(d[0]), Math.abs(d[1]));
    const scale = lengthMm > 0 ? longest / lengthMm : 1;
    const speedDegS = lengthMm > 0 ? (pathRate / 60) * scale : 1;
    const accelDegS2 = lengthMm > 0 ? pathAccel * scale : 1;
    const targetSteps = {
      theta: Math.round(block.targetMm[0] * this.setting(100)),
      phi: Math.round(block.targetMm[1] * this.setting(101)),
    };
    this.motion.move({ targetSteps, speedDegS, accelDegS2 }, (end) => {
      if (gen !== this.generation) return;
      this.running = null;
      if (end.outcome === 'failed') return this.alarm(1, end.fault.message);
      if (end.outcome === 'halted') return;
      if (this.blocks.length === 0) this.state = 'Idle';
      this.runNext();
      this.pump();
    });
  }
}

interface Word {
  letter: string;
  value: number;
}

/** `G1X10.5Y-3F600` -> words; null when something in the line is not a letter followed by a number. */
function parseWords(compact: string): Word[] | null {
  const words: Word[] = [];
  const re = /([A-Z])([-+]?(?:\d+\.?\d*|\.\d+))/gy;
  let at = 0;
  while (at < compact.length) {
    re.lastIndex = at;
    const m = re.exec(compact);
    if (!m) return null;
    words.push({ letter: m[1], value: Number(m[2]) });
    at = re.lastIndex;
  }
  return words;
}
