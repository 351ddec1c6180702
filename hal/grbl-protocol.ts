/**
 * The grbl 1.1 serial protocol, as pure functions and tables: one place that
 * both the driver (hal/grbl-driver.ts) and the simulated controller
 * (sim/grbl-controller.ts) use, so the two cannot drift apart.
 *
 * The wire, in short:
 *   host -> grbl   G-code and `$` lines ending in '\n', answered one by one
 *                  with `ok` or `error:N`; at most RX_BUFFER_BYTES unanswered
 *                  bytes may be in grbl's receive buffer (character counting);
 *                  single real-time bytes that skip the line queue:
 *                  '?' status report, '!' feed hold, '~' resume, 0x18 reset.
 *   grbl -> host   `ok`, `error:N`, `ALARM:N`, `<State|MPos:x,y,z|FS:f,s|...>`
 *                  status reports, `$N=value` settings, `[MSG:...]` feedback
 *                  and the banner `Grbl 1.1h ['$' for help]` after a reset.
 *
 * Every line from the wire is untrusted: parsers return null for anything
 * malformed and never throw.
 */

export const RT_STATUS = 0x3f; // '?'
export const RT_FEED_HOLD = 0x21; // '!'
export const RT_RESUME = 0x7e; // '~'
export const RT_RESET = 0x18; // Ctrl-X
export const RT_JOG_CANCEL = 0x85;

/** grbl's serial receive buffer; a host may keep at most this many unanswered bytes in flight. */
export const RX_BUFFER_BYTES = 128;
/** grbl's longest line; longer lines are refused with error:11. */
export const LINE_MAX_CHARS = 80;
/**
 * The highest step rate grbl 1.1 sustains on a 16 MHz ATmega328P (config.h,
 * MAX_STEP_RATE_HZ; settings.md "30kHz"). Above it the real firmware does not
 * just run slow: on the simulated MCU a phi move asked for 40 kHz ended early,
 * Idle 80 deg short of its target, and the `G4 P0` behind it was never answered.
 */
export const MAX_STEP_RATE_HZ = 30_000;

/** grbl's build, from `$I`: `[VER:1.1h.20190825:]` and `[OPT:VH,15,128]`. */
export interface BuildInfo {
  version: string;
  /** The option letters of `[OPT:...]` (report.c report_build_info()): H = HOMING_SINGLE_AXIS_COMMANDS, Z = HOMING_FORCE_SET_ORIGIN, ... */
  options: string;
  plannerBlocks: number | null;
  rxBufferBytes: number | null;
}

/** `[VER:1.1h.20190825:]` -> '1.1h.20190825'; null otherwise. */
export function parseVersionLine(line: string): string | null {
  const m = /^\[VER:([^:\]]*)(?::[^\]]*)?\]$/.exec(line);
  return m ? m[1] : null;
}

/** `[OPT:VH,15,128]` -> options, planner blocks, rx buffer; null otherwise. */
export function parseOptionsLine(line: string): Omit<BuildInfo, 'version'> | null {
  const m = /^\[OPT:([A-Z*$#]*)(?:,(\d+))?(?:,(\d+))?\]$/.exec(line);
  if (!m) return null;
  return { options: m[1], plannerBlocks: m[2] === undefined ? null : Number(m[2]), rxBufferBytes: m[3] === undefined ? null : Number(m[3]) };
}

/**
 * The longest a homing cycle of `axes` can take with these `$` settings, in
 * microseconds, following grbl limits.c limits_go_home(): a search of
 * 1.5 x the largest max travel ($130..) at the seek rate ($25, the path rate
 * scaled by sqrt(axes) so each axis runs at $25), a pull-off ($27) at the
 * seek rate, a locate approach over 5 x $27 at the feed rate ($24), a final
 * pull-off, a debounce delay ($26 ms) after each of the four phases, and the
 * acceleration ($120/$121) at each start. A homing that has not ended by then
 * has gone wrong: grbl itself would have raised ALARM:8 or 9.
 */
export function homingWorstCaseUs(settings: ReadonlyMap<number, number>, axes: readonly ('X' | 'Y')[]): number {
  const get = (id: number, fallback: number) => settings.get(id) ?? fallback;
  const travel = Math.max(...axes.map((a) => get(a === 'X' ? 130 : 131, 200)));
  const seekDegS = Math.max(get(25, 500), 1e-3) / 60;
  const feedDegS = Math.max(get(24, 25), 1e-3) / 60;
  const pullOff = get(27, 1);
  const accel = Math.max(Math.min(...axes.map((a) => get(a === 'X' ? 120 : 121, 10))), 1e-3);
  const rampS = (v: number) => v / accel; // reaching speed v from rest costs at most v/a extra seconds
  const seconds =
    (1.5 * travel) / seekDegS + rampS(seekDegS) + // search
    (2 * pullOff) / seekDegS + 2 * rampS(seekDegS) + // two pull-offs
    (5 * pullOff) / feedDegS + rampS(feedDegS) + // locate
    (4 * get(26, 250)) / 1000; // debounce after each phase
  return Math.ceil(seconds * 1e6);
}

/** grbl 1.1 `error:N` codes, in our words. */
export const GRBL_ERRORS: Record<number, string> = {
  1: 'a G-code word has no letter',
  2: 'a number is malformed',
  3: 'the $ command is not recognised or not supported by this build',
  4: 'a value that must be positive is negative',
  5: 'homing is disabled ($22=0)',
  6: 'step pulse must be at least 3 us',
  7: 'EEPROM read failed; settings restored to defaults',
  8: '$ command refused while not idle',
  9: 'G-code locked out during an alarm or jog',
  10: 'soft limits need homing to be enabled',
  11: 'line too long',
  12: 'setting would exceed the maximum step rate',
  13: 'safety door open',
  14: 'build info or startup line too long',
  15: 'jog target beyond the machine travel',
  16: 'malformed jog command',
  17: 'laser mode needs a PWM output',
  20: 'unsupported or invalid G-code command',
  21: 'more than one command of a modal group in one line',
  22: 'feed rate not set',
  23: 'a command needs an integer value',
  24: 'two commands in one line both need the axis words',
  25: 'a word is repeated in the line',
  26: 'a command needs axis words and has none',
  27: 'line number out of range',
  28: 'a command is missing a required value',
  29: 'work coordinate system not supported',
  30: 'G53 is allowed only with G0 and G1',
  31: 'axis words given where no command uses them',
  32: 'arc without axis words in the selected plane',
  33: 'motion target is invalid',
  34: 'arc radius is invalid',
  35: 'arc without offsets in the selected plane',
  36: 'unused words left in the line',
  37: 'tool length offset is not on the configured axis',
  38: 'tool number too large',
};

/** grbl 1.1 `ALARM:N` codes, in our words. */
export const GRBL_ALARMS: Record<number, string> = {
  1: 'hard limit triggered (a limit or fault input closed while moving)',
  2: 'soft limit: the target is outside the machine travel',
  3: 'reset while in motion; the position may be lost',
  4: 'probe was not in its expected initial state',
  5: 'probe did not make contact',
  6: 'homing failed: reset during the homing cycle',
  7: 'homing failed: safety door opened',
  8: 'homing failed: pulling off did not clear the home switch',
  9: 'homing failed: the home switch was not found within the search distance',
};

export const BANNER_RE = /^Grbl (\d+\.\d+[a-z]?)\b.*\[.*help\]/;

export type GrblState = 'Idle' | 'Run' | 'Hold' | 'Jog' | 'Alarm' | 'Door' | 'Check' | 'Home' | 'Sleep';
const STATES = new Set<string>(['Idle', 'Run', 'Hold', 'Jog', 'Alarm', 'Door', 'Check', 'Home', 'Sleep']);

export interface StatusReport {
  state: GrblState;
  /** Sub-state (Hold:0 hold complete, Hold:1 decelerating), when given. */
  subState: number | null;
  /** Machine position, X and Y (mm; degrees for us). Null when the report gave WPos only. */
  mpos: [number, number] | null;
  wpos: [number, number] | null;
  /** Current feed rate, mm/min (degrees per minute for us), along the path. */
  feed: number | null;
  /** Pins reported closed (`Pn:XYZ...`). */
  pins: string;
}

function coords(text: string): [number, number] | null {
  const parts = text.split(',');
  if (parts.length < 2) return null;
  const x = Number(parts[0]);
  const y = Number(parts[1]);
  if (parts.some((p) => p === '' || !Number.isFinite(Number(p)))) return null;
  return [x, y];
}

/** Parses `<Run|MPos:1.000,2.000,0.000|FS:600,0|Pn:X>`; null for anything that is not a well-formed report. */
export function parseStatusReport(line: string): StatusReport | null {
  if (!line.startsWith('<') || !line.endsWith('>')) return null;
  const fields = line.slice(1, -1).split('|');
  const [stateText, subText, ...extra] = fields[0].split(':');
  if (!STATES.has(stateText) || extra.length > 0) return null;
  const subState = subText === undefined ? null : Number(subText);
  if (subState !== null && !Number.isInteger(subState)) return null;
  const report: StatusReport = { state: stateText as GrblState, subState, mpos: null, wpos: null, feed: null, pins: '' };
  for (const field of fields.slice(1)) {
    const colon = field.indexOf(':');
    if (colon < 0) return null;
    const key = field.slice(0, colon);
    const value = field.slice(colon + 1);
    if (key === 'MPos' || key === 'WPos') {
      const c = coords(value);
      if (!c) return null;
      if (key === 'MPos') report.mpos = c;
      else report.wpos = c;
    } else if (key === 'FS' || key === 'F') {
      const feed = Number(value.split(',')[0]);
      if (!Number.isFinite(feed) || feed < 0) return null;
      report.feed = feed;
    } else if (key === 'Pn') {
      report.pins = value;
    }
    // Other fields (Bf, Ln, WCO, Ov, A) carry nothing the positioner needs.
  }
  if (!report.mpos && !report.wpos) return null;
  return report;
}

/** Parses a settings line `$100=320.000`; null otherwise. */
export function parseSetting(line: string): { id: number; value: number } | null {
  const m = /^\$(\d{1,3})=(-?\d+(?:\.\d+)?)$/.exec(line);
  return m ? { id: Number(m[1]), value: Number(m[2]) } : null;
}

/** `error:N` -> N, `ALARM:N` -> N; null otherwise. */
export function parseCode(line: string, prefix: 'error' | 'ALARM'): number | null {
  const m = new RegExp(`^${prefix}:(\\d{1,3})$`).exec(line);
  return m ? Number(m[1]) : null;
}

export function describeError(code: number): string {
  return `grbl error:${code} (${GRBL_ERRORS[code] ?? 'unknown error code'})`;
}

export function describeAlarm(code: number): string {
  return `grbl ALARM:${code} (${GRBL_ALARMS[code] ?? 'unknown alarm code'})`;
}

/** A number as grbl prints and reads it: fixed decimals, no exponent, no "-0". */
export function formatNumber(value: number, decimals = 3): string {
  const text = value.toFixed(decimals);
  return /^-0\.?0*$/.test(text) ? text.slice(1) : text;
}

/** As formatNumber, without trailing zeros: `93.3` rather than `93.300000` (every byte on the wire counts). */
export function compactNumber(value: number, decimals = 4): string {
  const text = formatNumber(value, decimals);
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

/**
 * Splits a byte stream into lines ('\n' ends a line, '\r' is dropped). A line
 * longer than `maxChars` is cut off and reported with `overlong` so garbage
 * without newlines cannot grow memory without bound.
 */
export class LineSplitter {
  private buf = '';
  private overlong = false;

  constructor(
    private readonly onLine: (line: string, overlong: boolean) => void,
    private readonly maxChars = 256,
  ) {}

  push(chunk: string): void {
    for (const ch of chunk) {
      if (ch === '\n') {
        const line = this.buf;
        const overlong = this.overlong;
        this.buf = '';
        this.overlong = false;
        this.onLine(line, overlong);
      } else if (ch !== '\r') {
        if (this.buf.length < this.maxChars) this.buf += ch;
        else this.overlong = true;
      }
    }
  }

  /** Forgets a half-received line (after a reset or reconnect). */
  clear(): void {
    this.buf = '';
    this.overlong = false;
  }
}
