/**
 * Small helpers the benchmarks share: percentiles of a sample, number
 * formatting, and a one-line description of the machine and its load (so a
 * figure printed next to it can be read knowing what else was running).
 */
import os from 'node:os';

/** The p-th percentile (0..100) of `values` by nearest rank; NaN for an empty sample. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Integer with thousands separators. */
export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Milliseconds with `digits` decimals. */
export function fmtMs(ms: number, digits = 2): string {
  return `${ms.toFixed(digits)} ms`;
}

/** Node version, cores and the 1-minute load average at this moment. */
export function machineLine(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  return `node ${process.version}, ${cpus.length} cores (${model}), load average (1 min) ${os.loadavg()[0].toFixed(2)}`;
}

/** mulberry32: a small seeded PRNG, so a run's random choices (stop times) can be repeated. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const now = (): bigint => process.hrtime.bigint();

/** Milliseconds between two `now()` readings. */
export const ms = (from: bigint, to: bigint): number => Number(to - from) / 1e6;
