/**
 * Where a scan's progress and samples are kept: an interface the scanner
 * (firmware/scan.ts) writes through, so a scan survives a restart of the
 * server (api/scan-store.ts keeps it in SQLite), and an in-memory store for
 * tests and benchmarks.
 */
import type { ScanSettings } from './scan';

export type ScanState = 'running' | 'paused' | 'done' | 'aborted' | 'failed';

/** One measured point (step mode) or one sample of a sweep. */
export interface ScanSample {
  /** Point index (step mode) or sample number (sweep mode), from 0. */
  index: number;
  thetaDeg: number;
  phiDeg: number;
  /** Seconds of scan time (active time: pauses and restarts excluded) when the sample was taken. */
  timeS: number;
  /** The measured values; empty when the measurement failed. */
  values: number[];
  /** Why the measurement failed, or null. */
  error: string | null;
}

/** Everything needed to report a scan and to resume it. */
export interface ScanRecord {
  id: string;
  name: string | null;
  state: ScanState;
  settings: ScanSettings;
  /** The request as the API accepted it, defaults filled (echoed by GET /scan). */
  request: unknown;
  pointsTotal: number;
  pointsDone: number;
  pointsFailed: number;
  /** Index of the first point (step) or line (sweep) not done yet: where a resume continues. */
  nextIndex: number;
  /** Samples recorded so far (the next sample's number in sweep mode). */
  samplesRecorded: number;
  /** Active scan time so far, seconds (while running only). */
  elapsedS: number;
  startedAt: string;
  endedAt: string | null;
  error: string | null;
}

export interface ScanStore {
  /** A new scan; ids are unique within a store. */
  insert(record: ScanRecord): void;
  /** Saves a scan's progress (everything but its id and samples). */
  update(record: ScanRecord): void;
  /** Adds a sample to scan `id` and saves its progress in the same transaction. */
  addSample(record: ScanRecord, sample: ScanSample): void;
  /** The most recently started scan, or null. */
  latest(): ScanRecord | null;
  get(id: string): ScanRecord | null;
  samples(id: string): ScanSample[];
  /** How many scans the store holds (numbers new ids). */
  count(): number;
  close(): void;
}

export class MemoryScanStore implements ScanStore {
  private readonly records = new Map<string, ScanRecord>();
  private readonly sampleLists = new Map<string, ScanSample[]>();
  private last: string | null = null;

  insert(record: ScanRecord): void {
    if (this.records.has(record.id)) throw new Error(`scan ${record.id} exists already`);
    this.records.set(record.id, structuredClone(record));
    this.sampleLists.set(record.id, []);
    this.last = record.id;
  }

  update(record: ScanRecord): void {
    this.records.set(record.id, structuredClone(record));
  }

  addSample(record: ScanRecord, sample: ScanSample): void {
    this.sampleLists.get(record.id)?.push({ ...sample, values: [...sample.values] });
    this.update(record);
  }

  latest(): ScanRecord | null {
    return this.last === null ? null : this.get(this.last);
  }

  get(id: string): ScanRecord | null {
    const r = this.records.get(id);
    return r ? structuredClone(r) : null;
  }

  samples(id: string): ScanSample[] {
    return (this.sampleLists.get(id) ?? []).map((s) => ({ ...s, values: [...s.values] }));
  }

  count(): number {
    return this.records.size;
  }

  close(): void {}
}
