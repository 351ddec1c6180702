/**
 * Golden-trace helpers: turn the simulator's step records into text lines and
 * compare a produced trace with a checked-in file (or rewrite the file when
 * UPDATE_GOLDEN=1).
 */
import fs from 'node:fs';
import type { Test } from 'tap';
import type { SimAxis, SimStepRecord } from '../../sim/sim-axis';

/** One line per step: time (us), axis, direction, and whether the shaft moved or the step was lost. */
export function formatStep(axis: string, rec: SimStepRecord): string {
  return `${rec.tUs} ${axis} ${rec.direction > 0 ? '+' : '-'} ${rec.moved ? 'moved' : 'lost'}`;
}

/**
 * Reads each axis's step records from where the last call stopped and merges
 * them in time order; steps at the same microsecond keep the order of `axes`
 * (the step executor issues ties lowest axis first).
 */
export class StepTraceReader {
  private readonly read: number[];

  constructor(private readonly axes: readonly { name: string; sim: SimAxis }[]) {
    for (const { sim } of axes) if (sim.records === null) sim.startRecording();
    this.read = axes.map(() => 0);
  }

  /** The steps recorded since the previous call, as formatted lines in time order. */
  drain(): string[] {
    const fresh = this.axes.map(({ name, sim }, i) => {
      const records = sim.records ?? [];
      const out = records.slice(this.read[i]).map((rec) => ({ name, rec, axisIndex: i }));
      this.read[i] = records.length;
      return out;
    });
    return fresh
      .flat()
      .sort((a, b) => a.rec.tUs - b.rec.tUs || a.axisIndex - b.axisIndex)
      .map(({ name, rec }) => formatStep(name, rec));
  }
}

/**
 * Compares `actual` with the file at `file`, reporting the first differing
 * line; with UPDATE_GOLDEN=1 in the environment it writes the file instead.
 */
export function matchGoldenFile(t: Test, file: string, actual: string): void {
  if (process.env.UPDATE_GOLDEN === '1') {
    fs.writeFileSync(file, actual);
    t.pass(`wrote ${file} (${actual.split('\n').length - 1} lines)`);
    return;
  }
  if (!fs.existsSync(file)) {
    t.fail(`${file} is missing; run with UPDATE_GOLDEN=1 to create it`);
    return;
  }
  const expected = fs.readFileSync(file, 'utf8');
  if (expected === actual) {
    t.pass(`trace matches ${file}`);
    return;
  }
  const want = expected.split('\n');
  const got = actual.split('\n');
  let i = 0;
  while (i < want.length && i < got.length && want[i] === got[i]) i++;
  const context = (lines: string[]) => lines.slice(Math.max(0, i - 3), i + 4).join('\n');
  t.fail(`trace differs from ${file} at line ${i + 1} (expected ${want.length} lines, got ${got.length}); if the change is intended, rerun with UPDATE_GOLDEN=1 and review the diff`, {
    found: context(got),
    wanted: context(want),
  });
}
