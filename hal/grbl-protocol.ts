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
