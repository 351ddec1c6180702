/**
 * Scripted exchanges with a grbl board, run the same way against the real
 * firmware (../shared/grbl-real, over its pty, in real time) and against the
 * simulated board (sim/grbl-controller.ts, on a virtual clock), so the bytes
 * they answer can be compared. The real firmware's answers are recorded as
 * fixtures (test/fixtures/grbl-real-exchanges.json, by
 * bench/grbl-record-exchanges.ts); test/sim/grbl-fidelity.test.ts replays the
 * scripts on the simulated board and test/live/grbl-real.test.ts on the
 * running firmware, both compared after `normalise()`.
 *
 * The exchanges run in order on one board, each from where the last one left
 * it, starting from the board as ../shared/grbl-real/board.sh leaves it
 * (power-on position theta 37.5, phi 123.25 deg; the docs/hardware.md settings).
 */

export type ExchangeStep =
  /** A line, '\n' added. */
  | { line: string }
  /** Real-time bytes. */
  | { raw: number[] }
  /** Waits until grbl has sent `count` more lines matching `match` since the last wait (or the start). */
  | { until: string; count?: number; limitMs: number }
  /** Lets time pass. */
  | { waitMs: number };

export interface Exchange {
  name: string;
  /** What it shows of the firmware. */
  about: string;
  steps: ExchangeStep[];
  /**
   * Whether positions in Idle and Alarm reports must match exactly. Off where a position depends on when,
   * to the millisecond, a byte arrived (a stop mid-move): those are compared as numbers only.
   */
  exactIdlePositions: boolean;
}

const RESET = 0x18;
const STATUS = 0x3f;
const HOLD = 0x21;
const q: ExchangeStep = { raw: [STATUS] };

export const GRBL_EXCHANGES: Exchange[] = [
  {
    name: 'homing',
    about: 'no report during the cycle (the `?` is answered once, as Home, when it ends), MPos -max_travel + pull-off, then back onto the switches',
    exactIdlePositions: true,
    steps: [
      { raw: [RESET] },
      { until: '^Grbl ', limitMs: 3000 },
      q,
      { until: '^<', limitMs: 1000 },
      { line: '$H' },
      { waitMs: 1000 },
      q,
      { until: '^ok$', limitMs: 40_000 },
      q,
      { until: '^<', limitMs: 1000 },
      { line: 'G91G1X-2Y-2F600' },
      { line: 'G90G4P0' },
      { until: '^ok$', count: 2, limitMs: 5000 },
      q,
      { until: '^<', limitMs: 1000 },
    ],
  },
  {
    name: 'g4p0',
    about: 'G1 is answered when planned, G4 P0 only once the machine stands at the target',
    exactIdlePositions: true,
    steps: [
      { line: 'G53G1X-180Y-350F600' },
      { line: 'G4P0' },
      { until: '^ok$', limitMs: 1000 },
      q,
      { until: '^<', limitMs: 1000 },
      { until: '^ok$', limitMs: 10_000 },
      q,
      { until: '^<', limitMs: 1000 },
    ],
  },
  {
    name: 'settings-write',
    about: '$N= writes answered one by one (send-response), read back with $$',
    exactIdlePositions: true,
    steps: [
      { line: '$120=50' },
      { until: '^(ok|error)', limitMs: 2000 },
      { line: '$121=50.5' },
      { until: '^(ok|error)', limitMs: 2000 },
      { line: '$$' },
      { until: '^ok$', limitMs: 2000 },
      { line: '$120=20' },
      { until: '^(ok|error)', limitMs: 2000 },
      { line: '$121=20' },
      { until: '^(ok|error)', limitMs: 2000 },
      { line: '$I' },
      { until: '^ok$', limitMs: 2000 },
    ],
  },
  {
    name: 'stop-mid-move',
    about: 'feed hold and reset in one write while moving: ALARM:3, the 500 ms pause, the ok of the cut-short G4, the banner, locked',
    exactIdlePositions: false,
    steps: [
      { line: 'G53G1X-150Y-300F600' },
      { line: 'G4P0' },
      { until: '^ok$', limitMs: 1000 },
      { waitMs: 1000 },
      q,
      { until: '^<', limitMs: 1000 },
      { raw: [HOLD, RESET] },
      { until: '^Grbl ', limitMs: 3000 },
      q,
      { until: '^<', limitMs: 1000 },
      { line: '$X' },
      { until: '^ok$', limitMs: 1000 },
      q,
      { until: '^<', limitMs: 1000 },
    ],
  },
  {
    name: 'feed-hold',
    about: 'feed hold decelerates (Hold:1) to Hold:0; a reset then raises no alarm',
    exactIdlePositions: false,
    steps: [
      { line: 'G53G1X-150Y-300F600' },
      { line: 'G4P0' },
      { until: '^ok$', limitMs: 1000 },
      { waitMs: 800 },
      { raw: [HOLD] },
      { waitMs: 100 },
      q,
      { until: '^<', limitMs: 1000 },
      { waitMs: 1500 },
      q,
      { until: '^<', limitMs: 1000 },
      { raw: [RESET] },
      { until: '^Grbl ', limitMs: 3000 },
      q,
      { until: '^<', limitMs: 1000 },
    ],
  },
  {
    name: 'stop-during-homing',
    about: 'reset in the homing cycle: ALARM:6, the ok of $H, the banner; the axes were zeroed when the cycle started',
    exactIdlePositions: false,
    steps: [
      { line: 'G53G1X-160Y-320F1200' },
      { line: 'G4P0' },
      { until: '^ok$', count: 2, limitMs: 10_000 },
      { line: '$H' },
      { waitMs: 2000 },
      { raw: [RESET] },
      { until: '^Grbl ', limitMs: 3000 },
      q,
      { until: '^<', limitMs: 1000 },
    ],
  },
  {
    name: 'alarm',
    about: 'a homing that finds no switch within 1.5 x $130: ALARM:9 after the search, then the banner; settings restored',
    exactIdlePositions: false,
    steps: [
      { line: '$X' },
      { until: '^ok$', limitMs: 1000 },
      { line: '$130=4' },
      { until: '^(ok|error)', limitMs: 2000 },
      { line: '$HX' },
      { until: '^Grbl ', limitMs: 10_000 },
      q,
      { until: '^<', limitMs: 1000 },
      { line: '$130=190' },
      { until: '^(ok|error)', limitMs: 2000 },
      { line: '$X' },
      { until: '^ok$', limitMs: 1000 },
      { line: '$H' },
      { until: '^(ok|ALARM)', limitMs: 60_000 },
      q,
      { until: '^<', limitMs: 1000 },
    ],
  },
];

export interface Transcript {
  name: string;
  /** Lines grbl sent, in order, without their "\r\n" (the empty line before a banner kept). */
  lines: string[];
  /** When each line arrived, ms from the exchange's start. */
  atMs: number[];
}

/** Runs the steps against any board: `io` writes bytes and lets time pass (real or virtual). */
export interface ExchangeIo {
  write(bytes: Buffer): void;
  /** Lets `ms` of time pass. */
  wait(ms: number): Promise<void>;
  /** Resolves once `pred()` holds, letting time pass meanwhile; rejects after `limitMs`. */
  waitUntil(pred: () => boolean, limitMs: number, what: string): Promise<void>;
  /** Every line received so far. */
  lines(): string[];
  /** When each line arrived, ms on the io's own time line. */
  times(): number[];
  nowMs(): number;
}

export async function runExchange(exchange: Exchange, io: ExchangeIo): Promise<Transcript> {
  const start = io.lines().length;
  const t0 = io.nowMs();
  let mark = start;
  for (const step of exchange.steps) {
    if ('line' in step) io.write(Buffer.from(`${step.line}\n`, 'latin1'));
    else if ('raw' in step) io.write(Buffer.from(step.raw));
    else if ('waitMs' in step) await io.wait(step.waitMs);
    else {
      const re = new RegExp(step.until);
      const want = step.count ?? 1;
      let seenAt = -1;
      await io.waitUntil(
        () => {
          const lines = io.lines();
          let n = 0;
          for (let i = mark; i < lines.length; i++) {
            if (re.test(lines[i]) && ++n === want) {
              seenAt = i;
              return true;
            }
          }
          return false;
        },
        step.limitMs,
        `${exchange.name}: ${want} x /${step.until}/`,
      );
      mark = seenAt + 1;
    }
  }
  return { name: exchange.name, lines: io.lines().slice(start), atMs: io.times().slice(start).map((t) => Math.round(t - t0)) };
}

const MOVING = /^<(Run|Hold:1|Home|Jog)\|/;

/**
 * What must agree between two boards: every line, with the numbers that depend on when a byte arrived to
 * the millisecond replaced by `#` (positions and feed in reports while moving, and their switch pins;
 * with `exactIdlePositions` off, every position). Report fields and their order, states, alarms, messages, `ok`s and banners stay.
 */
export function normalise(transcript: Transcript, exchange: Exchange): string[] {
  return transcript.lines.map((line) => {
    if (!line.startsWith('<')) return line;
    const moving = MOVING.test(line);
    return line
      .replace(/(MPos|WPos):[-\d.,]+/, (m, k: string) => (moving || !exchange.exactIdlePositions ? `${k}:#` : m))
      .replace(/FS:\d+,/, (m) => (moving ? 'FS:#,' : m))
      // Which switches are still closed a few steps into a move depends on those same milliseconds.
      .replace(/\|Pn:[XYZ]+/, (m) => (moving ? '' : m));
  });
}

/** Splits a serial byte stream into grbl's lines ("\r\n" ends one). */
export class LineCollector {
  readonly lines: string[] = [];
  readonly times: number[] = [];
  private partial = '';

  constructor(private readonly nowMs: () => number) {}

  push(chunk: Buffer | string): void {
    this.partial += typeof chunk === 'string' ? chunk : chunk.toString('latin1');
    let i: number;
    while ((i = this.partial.indexOf('\n')) >= 0) {
      this.lines.push(this.partial.slice(0, i).replace(/\r$/, ''));
      this.times.push(this.nowMs());
      this.partial = this.partial.slice(i + 1);
    }
  }
}
