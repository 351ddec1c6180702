/**
 * `positioner grbl-setup --serial PATH [--baud N] [--config FILE] [--write] [--json]`:
 * sets up a grbl board for the positioner without a serial terminal. It
 * resets the board, reads `$I` (the build: single-axis homing must be there)
 * and `$$`, and prints each setting the config needs against what the board
 * has. With `--write` it sends the differing ones one at a time, each
 * answered before the next (send-response: grbl writes its EEPROM with
 * interrupts off and loses bytes that arrive meanwhile; interface.md
 * "EEPROM Issues"), then reads `$$` again to verify.
 *
 * Exit codes (as the other positioner commands): 0 the board is set up as the
 * config needs (after --write: written and verified); 1 it is not (settings
 * differ, a write was refused, the build lacks an option, or the config asks
 * for more than grbl's step rate); 2 usage or config error; 3 no grbl
 * answered on the port.
 */
import { SerialPort } from 'serialport';
import { axisStepsPerDeg, type PositionerConfig } from '../firmware/config';
import { checkBuild, stepRateProblem } from '../hal/grbl-driver';
import { BANNER_RE, describeError, MAX_STEP_RATE_HZ, parseCode, parseOptionsLine, parseSetting, parseVersionLine, RT_RESET } from '../hal/grbl-protocol';
import type { Clock } from '../hal/clock';
import { grblSettingsFor } from './assemble';

export const GRBL_SETUP_EXIT = { ok: 0, differs: 1, usage: 2, unreachable: 3 } as const;

/** What each setting the positioner needs means, and when the board's value is good enough. */
const MEANING: Record<number, { what: string; ok?: (have: number, want: number, all: Map<number, number>) => boolean }> = {
  10: { what: 'status report carries the machine position (bit 0)', ok: (h) => (h & 1) === 1 },
  13: { what: 'report in mm (degrees)' },
  20: { what: 'soft limits off (the firmware checks every target)', ok: (h, _w, all) => h === 0 || ((all.get(130) ?? 0) >= 180 && (all.get(131) ?? 0) >= 360) },
  21: { what: 'hard limits off (a homed axis rests on its switch)' },
  22: { what: 'homing enabled' },
  23: { what: 'X and Y home toward their minimum', ok: (h) => (h & 3) === 3 },
  24: { what: 'homing feed (slow re-approach), deg/min' },
  25: { what: 'homing seek, deg/min' },
  27: { what: 'homing pull-off, deg' },
  100: { what: 'theta steps per degree' },
  101: { what: 'phi steps per degree' },
  110: { what: 'theta max rate, deg/min (at least max_speed x 60)', ok: (h, w) => h >= w - 1e-6 },
  111: { what: 'phi max rate, deg/min (at least max_speed x 60)', ok: (h, w) => h >= w - 1e-6 },
  120: { what: 'theta acceleration, deg/s^2 (the driver rewrites it when accel changes)' },
  121: { what: 'phi acceleration, deg/s^2 (the driver rewrites it when accel changes)' },
  130: { what: 'theta max travel, deg (homing searches 1.5 x this)' },
  131: { what: 'phi max travel, deg (homing searches 1.5 x this)' },
};

export interface SettingRow {
  id: number;
  meaning: string;
  want: number;
  have: number | null;
  ok: boolean;
}

export interface SetupReport {
  port: string;
  version: string | null;
  options: string | null;
  settings: SettingRow[];
  /** Build and config problems, each with what to change. */
  problems: string[];
  written: { id: number; value: number; answer: string }[];
  verified: boolean | null;
}

export interface SetupOptions {
  path: string;
  baudRate: number;
  config: PositionerConfig;
  write: boolean;
  clock: Clock;
  /** How long to wait for each answer, ms. */
  answerTimeoutMs?: number;
}

export class GrblSetupError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** A send-response session with a grbl board: one line out, wait for its `ok` / `error:N`, collecting what came before it. */
class Session {
  private buf = '';
  private lines: string[] = [];
  private wake: (() => void) | null = null;

  constructor(
    private readonly port: SerialPort,
    private readonly clock: Clock,
    private timeoutMs: number,
  ) {
    port.on('data', (d: Buffer) => {
      this.buf += d.toString('latin1');
      let i: number;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        this.lines.push(this.buf.slice(0, i).replace(/\r$/, ''));
        this.buf = this.buf.slice(i + 1);
      }
      this.wake?.();
    });
  }

  /** Waits until a line matches `done`; resolves the lines up to and including it, or null on timeout. */
  private async until(done: (line: string) => boolean): Promise<string[] | null> {
    const deadline = this.clock.nowUs() + this.timeoutMs * 1000;
    for (;;) {
      const at = this.lines.findIndex(done);
      if (at >= 0) return this.lines.splice(0, at + 1);
      if (this.clock.nowUs() >= deadline) return null;
      await new Promise<void>((resolve) => {
        const timer = this.clock.setTimerAt(deadline, () => resolve());
        this.wake = () => {
          timer.cancel();
          this.wake = null;
          resolve();
        };
      });
    }
  }

  async reset(): Promise<boolean> {
    this.lines = [];
    this.port.write(Buffer.from([RT_RESET]));
    if ((await this.until((l) => BANNER_RE.test(l))) === null) return false;
    // A banner can be stale (printed at power-up before the port was open) with ours still to come, and grbl
    // drops what arrives while it re-initialises: wait until no further banner comes for a while.
    const quietMs = this.timeoutMs;
    this.timeoutMs = Math.min(250, quietMs);
    while ((await this.until((l) => BANNER_RE.test(l))) !== null);
    this.timeoutMs = quietMs;
    return true;
  }

  /** Sends one line and waits for its answer: the lines before it, and the answer. */
  async send(line: string): Promise<{ lines: string[]; answer: string } | null> {
    this.port.write(`${line}\n`);
    const got = await this.until((l) => l === 'ok' || parseCode(l, 'error') !== null || parseCode(l, 'ALARM') !== null);
    return got ? { lines: got.slice(0, -1), answer: got[got.length - 1] } : null;
  }
}

async function readSettings(s: Session): Promise<Map<number, number>> {
  const got = await s.send('$$');
  if (!got || got.answer !== 'ok') throw new GrblSetupError(`\`$$\` was answered ${got ? got.answer : 'with nothing'}: is the board idle and unlocked?`, GRBL_SETUP_EXIT.differs);
  const map = new Map<number, number>();
  for (const line of got.lines) {
    const setting = parseSetting(line);
    if (setting) map.set(setting.id, setting.value);
  }
  return map;
}

function compare(config: PositionerConfig, have: Map<number, number>): SettingRow[] {
  const want = grblSettingsFor(config);
  return Object.entries(want).map(([key, value]) => {
    const id = Number(key);
    const meaning = MEANING[id] ?? { what: '' };
    const h = have.get(id) ?? null;
    const ok = h !== null && (meaning.ok ? meaning.ok(h, value, have) : Math.abs(h - value) < 1e-3);
    return { id, meaning: meaning.what, want: value, have: h, ok };
  });
}

export async function grblSetup(opts: SetupOptions): Promise<SetupReport> {
  const port = new SerialPort({ path: opts.path, baudRate: opts.baudRate, autoOpen: false });
  try {
    await new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(e) : resolve())));
  } catch (e) {
    throw new GrblSetupError(`cannot open ${opts.path}: ${(e as Error).message}`, GRBL_SETUP_EXIT.unreachable);
  }
  port.on('error', () => undefined);
  try {
    const s = new Session(port, opts.clock, opts.answerTimeoutMs ?? 3000);
    // An Uno resets when the port opens and its bootloader may eat the first byte: try the reset twice.
    if (!(await s.reset()) && !(await s.reset())) {
      throw new GrblSetupError(`no grbl banner on ${opts.path} after a reset (0x18): is it a grbl board, at ${opts.baudRate} baud?`, GRBL_SETUP_EXIT.unreachable);
    }
    const info = await s.send('$I');
    let version: string | null = null;
    let options: string | null = null;
    for (const line of info?.lines ?? []) {
      version = parseVersionLine(line) ?? version;
      options = parseOptionsLine(line)?.options ?? options;
    }
    const problems = checkBuild(version, options);
    const perDeg = { theta: axisStepsPerDeg(opts.config, 'theta'), phi: axisStepsPerDeg(opts.config, 'phi') };
    const tooFast = stepRateProblem(perDeg, opts.config.maxSpeedDegS, MAX_STEP_RATE_HZ);
    if (tooFast) problems.push(`the config's max_speed: ${tooFast} (set "max_speed" in the config file)`);
    let rows = compare(opts.config, await readSettings(s));
    const report: SetupReport = { port: opts.path, version, options, settings: rows, problems, written: [], verified: null };
    if (!opts.write) return report;
    for (const row of rows.filter((r) => !r.ok)) {
      // One at a time, each answered before the next: never streamed.
      const got = await s.send(`$${row.id}=${row.want}`);
      report.written.push({ id: row.id, value: row.want, answer: got ? got.answer : 'no answer' });
    }
    rows = compare(opts.config, await readSettings(s));
    report.settings = rows;
    report.verified = rows.every((r) => r.ok);
    return report;
  } finally {
    await new Promise<void>((resolve) => port.close(() => resolve()));
  }
}

export function exitCodeOf(report: SetupReport): number {
  const settingsOk = report.settings.every((r) => r.ok);
  const writesOk = report.written.every((w) => w.answer === 'ok');
  return settingsOk && writesOk && report.problems.length === 0 ? GRBL_SETUP_EXIT.ok : GRBL_SETUP_EXIT.differs;
}

/** The table a person reads. */
export function formatReport(report: SetupReport): string {
  const out: string[] = [`grbl ${report.version ?? '(unknown version)'} on ${report.port}, build options [${report.options ?? '?'}]`, ''];
  const fmt = (v: number | null) => (v === null ? 'missing' : String(Number(v.toFixed(3))));
  out.push('setting  needed    board     ok   meaning');
  for (const r of report.settings) out.push(`$${String(r.id).padEnd(7)} ${fmt(r.want).padEnd(9)} ${fmt(r.have).padEnd(9)} ${r.ok ? 'yes ' : 'NO  '} ${r.meaning}`);
  for (const w of report.written) out.push(`wrote $${w.id}=${w.value}: ${w.answer === 'ok' ? 'ok' : w.answer.startsWith('error:') ? describeError(Number(w.answer.slice(6))) : w.answer}`);
  if (report.verified !== null) out.push(report.verified ? 'read back: every setting as needed' : 'read back: some settings still differ (see NO above)');
  for (const p of report.problems) out.push(`problem: ${p}`);
  const differing = report.settings.filter((r) => !r.ok);
  if (report.written.length === 0 && differing.length > 0) out.push(`to fix: positioner grbl-setup --serial ${report.port} --write   (sends ${differing.map((r) => `$${r.id}=${r.want}`).join(' ')})`);
  return out.join('\n');
}
