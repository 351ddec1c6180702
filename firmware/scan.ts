/**
 * Radiation-pattern scans: the positioner visits the points of a plan
 * (firmware/scan-plan.ts) and a measurement source takes a sample at each.
 *
 *   step mode, per point:
 *     move ──arrived──► settle (settle_s) ──► [dwell (dwell_s), measure] x samples ──► record ──► next point
 *   sweep mode, per line (a cut):
 *     move to the line's start ──► settle ──► move to its end, measuring every sample_interval_s,
 *     each sample stamped with the position read at its time ──► arrived: one last sample ──► next line
 *
 *   running ──pause (at the next point or line boundary)──► paused ──resume──► running
 *   running ──last point──► done
 *   running | paused ──Positioner.stop() (POST /stop, rotctld S, the dashboard)──► aborted
 *   running ──positioner fault, or a failed point with on_error "stop"──► failed
 *   aborted | paused | failed ──resume──► running, from the first point not done
 *
 * The scan runs over the Positioner's state machine, never beside it: it
 * holds a MotionClaim (other motion commands get POS_ERR_BUSY while it
 * runs), moves through `moveTo` like any client, learns of arrivals, stops
 * and faults from `onChange`, and a stop from anywhere drops the claim and
 * aborts the scan. One scan at a time. Every wait (settle, dwell, sweep
 * sampling) is a timer on the injected clock, so a scan on the virtual clock
 * runs as fast as the simulation can go; nothing here reads the wall clock
 * except through `deps.now` (for the ISO dates in the record).
 *
 * A measurement source may answer synchronously (the simulated antenna: the
 * scan stays on the clock's time line, a whole scan runs inside one
 * `runUntilIdle`) or with a promise (a command, a webhook, a trigger pulse):
 * then the scan waits for it with no timer pending, and `pendingMeasurement()`
 * lets a test on a virtual clock wait for it before advancing time. Progress
 * and every sample go to the store as they happen: an interrupted scan loses
 * nothing it measured, and a new scanner on the same store finds it (state
 * `aborted`) and can resume it.
 */
import type { Clock, TimerHandle } from '../hal/clock';
import { PositionerError } from './errors';
import type { MotionClaim, Positioner, PositionerState } from './positioner';
import { planScan, type ScanPlan, type ScanPoint } from './scan-plan';
import type { ScanRecord, ScanSample, ScanState, ScanStore } from './scan-store';

export type { ScanSample, ScanState } from './scan-store';

/** What a source is asked to measure. */
export interface MeasurePoint {
  /** Point index (step) or sample number (sweep). */
  index: number;
  thetaDeg: number;
  phiDeg: number;
  /** Which of the point's samples (step mode, from 0). */
  sample: number;
}

/**
 * Where a scan's values come from. `measure` returns the values, or a promise
 * of them; throwing or rejecting marks the point with the error's message.
 */
export interface MeasurementSource {
  measure(point: MeasurePoint): number[] | Promise<number[]>;
  /** Ends anything in flight (a running command) when the scan ends. */
  close?(): void;
}

/** A source as the request describes it; the composition root turns it into a MeasurementSource. */
export type SourceSpec =
  | { kind: 'sim' }
  | { kind: 'exec'; command: string; timeoutS: number }
  | { kind: 'http'; url: string; timeoutS: number }
  | { kind: 'trigger'; pulseMs: number; then: Exclude<SourceSpec, { kind: 'trigger' } | { kind: 'sim' }> | null };

export interface ScanSettings {
  plan: ScanPlan;
  mode: 'step' | 'sweep';
  settleS: number;
  dwellS: number;
  samples: number;
  sampleIntervalS: number;
  source: SourceSpec;
  onError: 'continue' | 'stop';
  name: string | null;
}

/** Settings for `plan` with the API's defaults: step mode, settle 0.2 s, one sample, the simulated antenna. */
export function defaultScanSettings(plan: ScanPlan, over: Partial<ScanSettings> = {}): ScanSettings {
  return { plan, mode: 'step', settleS: 0.2, dwellS: 0, samples: 1, sampleIntervalS: 0.1, source: { kind: 'sim' }, onError: 'continue', name: null, ...over };
}

/** A scan as reported (GET /scan): its record plus the estimate of what is left. */
export interface ScanInfo extends Omit<ScanRecord, 'settings' | 'nextIndex' | 'samplesRecorded'> {
  /** Estimated seconds left (elapsed per point so far times points left); null before the first point. */
  remainingS: number | null;
}

export type ScanEvent = { type: 'scan'; scan: ScanInfo } | { type: 'sample'; scanId: string; sample: ScanSample };

export interface ScannerDeps {
  positioner: Positioner;
  clock: Clock;
  store: ScanStore;
  /** Builds the source a scan asked for (throws PositionerError/ScanSourceError for one this machine cannot offer). */
  source(spec: SourceSpec): MeasurementSource;
  /** Wall time for the record's dates (injected: the firmware reads no clock of its own). */
  now(): Date;
  /** The source of a request that names none: the simulated antenna in simulation; null on real hardware (a source must be named). */
  defaultSource?: SourceSpec | null;
}

interface Run {
  record: ScanRecord;
  points: ScanPoint[];
  /** Point indexes of each line: [first, last]. */
  lines: [number, number][];
  source: MeasurementSource;
  claim: MotionClaim | null;
  /** Clock time the current running stretch began, and the elapsed seconds before it. */
  sinceUs: number;
  elapsedBeforeS: number;
  phase: 'idle' | 'moving' | 'settling' | 'measuring' | 'sweeping';
  timer: TimerHandle | null;
  pauseRequested: boolean;
  /** Sweep: the line being swept, and measurements still in flight. */
  sweepLine: number;
  inFlight: Set<Promise<void>>;
  /** Bumped when the run ends or pauses, so late answers from an old stretch are dropped. */
  epoch: number;
}

/** The scanner: at most one scan at a time, over one positioner. */
export class Scanner {
  /** The running or paused scan; once it ends (or after a restart) the store has it. */
  private run: Run | null = null;
  private readonly listeners = new Set<(event: ScanEvent) => void>();
  private lastPositionerState: PositionerState;
  private measuring: Promise<void> | null = null;

  constructor(private readonly deps: ScannerDeps) {
    this.lastPositionerState = deps.positioner.status().state;
    deps.positioner.onChange(() => this.onPositionerChange());
    // A scan that was running or paused when the last server stopped: aborted, resumable.
    const last = deps.store.latest();
    if (last && (last.state === 'running' || last.state === 'paused')) {
      last.state = 'aborted';
      last.error = `interrupted at point ${last.pointsDone} of ${last.pointsTotal}: the server stopped during the scan; POST /scan/resume continues at the first point not done`;
      last.endedAt = deps.now().toISOString();
      deps.store.update(last);
    }
  }

  /** The source used when a request names none (null: one must be named). */
  defaultSource(): SourceSpec | null {
    return this.deps.defaultSource === undefined ? { kind: 'sim' } : this.deps.defaultSource;
  }

  onEvent(listener: (event: ScanEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** True while a scan runs (not paused). */
  active(): boolean {
    return this.run !== null && this.run.record.state === 'running';
  }

  /** A promise that settles when the measurement in flight has been recorded, or null when none is. */
  pendingMeasurement(): Promise<void> | null {
    return this.measuring;
  }

  /** Starts a scan of `settings`; `request` is kept as the API accepted it. */
  start(settings: ScanSettings, request: unknown): ScanInfo {
    if (this.run) throw new PositionerError('POS_ERR_BUSY', `scan ${this.run.record.id} is ${this.run.record.state}; wait for it, POST /scan/resume a paused one, or POST /stop to abort it`);
    const points = planScan(settings.plan);
    const source = this.deps.source(settings.source);
    const startedAt = this.deps.now();
    const record: ScanRecord = {
      id: `${startedAt.toISOString().slice(0, 19)}Z-${this.deps.store.count() + 1}`,
      name: settings.name,
      state: 'running',
      settings,
      request,
      pointsTotal: points.length,
      pointsDone: 0,
      pointsFailed: 0,
      nextIndex: 0,
      samplesRecorded: 0,
      elapsedS: 0,
      startedAt: startedAt.toISOString(),
      endedAt: null,
      error: null,
    };
    const run = this.newRun(record, points, source);
    run.claim = this.claim(run);
    this.deps.store.insert(record);
    this.run = run;
    this.emitScan(run.record);
    this.advance(run);
    return this.info(run.record);
  }

  /** Pauses at the next point (step) or line (sweep) boundary; the positioner is free while paused. */
  pause(): ScanInfo {
    const run = this.run;
    if (!run || run.record.state !== 'running') throw new ScanStateError(`no scan is running${run ? ` (scan ${run.record.id} is ${run.record.state})` : ''}; nothing to pause`);
    run.pauseRequested = true;
    if (run.phase === 'idle') this.enterPause(run);
    return this.info(run.record);
  }

  /** Resumes the current or last scan (paused, aborted or failed) at the first point not done. */
  resume(): ScanInfo {
    if (this.run && this.run.record.state === 'running') {
      this.run.pauseRequested = false;
      return this.info(this.run.record);
    }
    const record = this.run?.record ?? this.deps.store.latest();
    if (!record) throw new ScanStateError('no scan to resume; start one with POST /scan');
    if (record.state === 'done') throw new ScanStateError(`scan ${record.id} is done; start a new one with POST /scan`);
    let run = this.run;
    if (!run) run = this.newRun(record, planScan(record.settings.plan), this.deps.source(record.settings.source));
    run.claim = this.claim(run);
    run.record.state = 'running';
    run.record.error = null;
    run.record.endedAt = null;
    run.pauseRequested = false;
    run.sinceUs = this.deps.clock.nowUs();
    run.elapsedBeforeS = run.record.elapsedS;
    this.run = run;
    this.deps.store.update(run.record);
    this.emitScan(run.record);
    this.advance(run);
    return this.info(run.record);
  }

  /** Aborts a running or paused scan (POST /stop calls it for a paused one: a running one hears the stop through its claim). */
  abort(reason: string): void {
    if (this.run) this.finish(this.run, 'aborted', reason);
  }

  /** The current scan, else the last one in the store, else null. */
  current(): ScanInfo | null {
    if (this.run) return this.info(this.run.record);
    const last = this.deps.store.latest();
    return last ? this.info(last) : null;
  }

  /** A scan's record (the current or last one without `id`), or null. */
  record(id?: string): ScanRecord | null {
    if (this.run && (id === undefined || id === this.run.record.id)) return structuredClone(this.run.record);
    return id === undefined ? this.deps.store.latest() : this.deps.store.get(id);
  }

  samples(id: string): ScanSample[] {
    return this.deps.store.samples(id);
  }

  private newRun(record: ScanRecord, points: ScanPoint[], source: MeasurementSource): Run {
    const lines: [number, number][] = [];
    for (const p of points) {
      if (lines[p.line]) lines[p.line][1] = p.index;
      else lines[p.line] = [p.index, p.index];
    }
    return {
      record,
      points,
      lines,
      source,
      claim: null,
      sinceUs: this.deps.clock.nowUs(),
      elapsedBeforeS: record.elapsedS,
      phase: 'idle',
      timer: null,
      pauseRequested: false,
      sweepLine: -1,
      inFlight: new Set(),
      epoch: 0,
    };
  }

  private claim(run: Run): MotionClaim {
    return this.deps.positioner.claimMotion('scan', () => this.finish(run, 'aborted', 'stopped by a stop command (POST /stop); the samples so far are kept: POST /scan/resume continues'));
  }

  private info(record: ScanRecord): ScanInfo {
    const { settings: _settings, nextIndex: _next, samplesRecorded: _samples, ...rest } = record;
    const perPoint = record.pointsDone > 0 ? record.elapsedS / record.pointsDone : null;
    const remainingS = perPoint === null ? null : round3(perPoint * (record.pointsTotal - record.pointsDone));
    return { ...structuredClone(rest), elapsedS: round3(record.elapsedS), remainingS };
  }

  private nowS(run: Run): number {
    return run.elapsedBeforeS + (this.deps.clock.nowUs() - run.sinceUs) / 1e6;
  }

  private onPositionerChange(): void {
    const state = this.deps.positioner.status().state;
    const previous = this.lastPositionerState;
    this.lastPositionerState = state;
    const run = this.run;
    if (!run) return;
    if (run.record.state === 'paused') {
      // A paused scan holds no claim; a stop still ends it, as POST /stop promises.
      if (state === 'stopped' && previous !== 'stopped') this.finish(run, 'aborted', 'stopped by a stop command while paused; the samples so far are kept');
      return;
    }
    if (run.record.state !== 'running') return;
    if (state === 'error') {
      const fault = this.deps.positioner.status().fault;
      this.finish(run, 'failed', `the positioner faulted: ${fault?.message ?? 'unknown fault'}; home it, then POST /scan/resume`);
      return;
    }
    if (state === 'stopped') {
      this.finish(run, 'aborted', 'stopped by a stop command; the samples so far are kept: POST /scan/resume continues');
      return;
    }
    if (state === 'idle' && run.phase === 'moving') {
      run.phase = 'settling';
      run.timer = this.deps.clock.setTimerAt(this.deps.clock.nowUs() + toUs(run.record.settings.settleS), () => this.guard(run, () => this.afterSettle(run)));
    } else if (state === 'idle' && run.phase === 'sweeping') {
      this.guard(run, () => this.endSweepLine(run));
    }
  }

  /** Starts the next point or line, or pauses, or finishes. */
  private advance(run: Run): void {
    if (run.record.state !== 'running') return;
    run.phase = 'idle';
    if (run.pauseRequested) {
      this.enterPause(run);
      return;
    }
    const sweep = run.record.settings.mode === 'sweep';
    if (run.record.nextIndex >= (sweep ? run.lines.length : run.points.length)) {
      this.finish(run, 'done', null);
      return;
    }
    const target = sweep ? run.points[run.lines[run.record.nextIndex][0]] : run.points[run.record.nextIndex];
    if (sweep) run.sweepLine = run.record.nextIndex;
    this.moveTo(run, target.thetaDeg, target.phiDeg, 'moving');
  }

  private moveTo(run: Run, thetaDeg: number, phiDeg: number, phase: 'moving' | 'sweeping'): void {
    run.phase = phase;
    try {
      this.deps.positioner.moveTo(thetaDeg, phiDeg, run.claim ?? undefined);
    } catch (error) {
      this.finish(run, 'failed', `could not move to theta ${thetaDeg}, phi ${phiDeg}: ${(error as Error).message}`);
    }
  }

  private afterSettle(run: Run): void {
    run.timer = null;
    if (run.record.state !== 'running') return;
    if (run.record.settings.mode === 'sweep') {
      this.startSweep(run);
      return;
    }
    run.phase = 'measuring';
    this.takeSample(run, run.points[run.record.nextIndex], 0, []);
  }

  /** Step mode: waits the dwell, then measures sample `k` of `point`; all samples are averaged into one row. */
  private takeSample(run: Run, point: ScanPoint, k: number, taken: (number[] | string)[]): void {
    const dwellUs = toUs(run.record.settings.dwellS);
    if (dwellUs > 0) {
      run.timer = this.deps.clock.setTimerAt(this.deps.clock.nowUs() + dwellUs, () => {
        run.timer = null;
        this.guard(run, () => this.measureSample(run, point, k, taken));
      });
    } else {
      this.measureSample(run, point, k, taken);
    }
  }

  private measureSample(run: Run, point: ScanPoint, k: number, taken: (number[] | string)[]): void {
    if (run.record.state !== 'running') return;
    const epoch = run.epoch;
    const next = (result: number[] | string) => {
      if (run.epoch !== epoch || run.record.state !== 'running') return;
      taken.push(result);
      if (k + 1 < run.record.settings.samples) {
        this.takeSample(run, point, k + 1, taken);
      } else {
        this.recordPoint(run, point, taken);
      }
    };
    const result = this.measure(run, { index: point.index, thetaDeg: point.thetaDeg, phiDeg: point.phiDeg, sample: k });
    if (result instanceof Promise) {
      const done: Promise<void> = result
        .then(next)
        .catch((e: unknown) => this.finish(run, 'failed', `the scan could not go on after point ${point.index}: ${errorText(e)}`))
        .finally(() => {
          if (this.measuring === done) this.measuring = null;
        });
      this.measuring = done;
    } else {
      next(result);
    }
  }

  /** The source's answer: values, an error message, or a promise of either. */
  private measure(run: Run, point: MeasurePoint): number[] | string | Promise<number[] | string> {
    try {
      const r = run.source.measure(point);
      if (r instanceof Promise) return r.then(checkValues, (e: unknown) => errorText(e));
      return checkValues(r);
    } catch (e) {
      return errorText(e);
    }
  }

  private recordPoint(run: Run, point: ScanPoint, taken: (number[] | string)[]): void {
    const failure = taken.find((t): t is string => typeof t === 'string');
    const values = failure !== undefined ? [] : mean(taken as number[][]);
    const sample: ScanSample = { index: point.index, thetaDeg: point.thetaDeg, phiDeg: point.phiDeg, timeS: round6(this.nowS(run)), values, error: failure ?? null };
    run.record.pointsDone += 1;
    if (failure !== undefined) run.record.pointsFailed += 1;
    run.record.nextIndex = point.index + 1;
    this.saveSample(run, sample);
    if (failure !== undefined && run.record.settings.onError === 'stop') {
      this.finish(run, 'failed', `point ${point.index} (theta ${point.thetaDeg}, phi ${point.phiDeg}) failed: ${failure}; on_error is "stop"`);
      return;
    }
    this.advance(run);
  }

  private saveSample(run: Run, sample: ScanSample): void {
    run.record.samplesRecorded += 1;
    run.record.elapsedS = this.nowS(run);
    this.deps.store.addSample(run.record, sample);
    this.emit({ type: 'sample', scanId: run.record.id, sample });
    this.emitScan(run.record);
  }

  /**
   * Runs a step of the scan from a timer or an event: an exception (the store's disk is full, a
   * listener threw) ends the scan failed, saying why, instead of escaping into the clock's loop.
   */
  private guard(run: Run, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.finish(run, 'failed', `the scan stopped on an internal error: ${errorText(e)}`);
    }
  }

  // Sweep mode -----------------------------------------------------------

  private startSweep(run: Run): void {
    const [, last] = run.lines[run.sweepLine];
    const end = run.points[last];
    this.sweepSample(run);
    if (run.record.state !== 'running') return;
    this.moveTo(run, end.thetaDeg, end.phiDeg, 'sweeping');
    if (run.record.state === 'running' && run.phase === 'sweeping') this.armSweepTimer(run);
  }

  private armSweepTimer(run: Run): void {
    const intervalUs = Math.max(1, toUs(run.record.settings.sampleIntervalS));
    run.timer = this.deps.clock.setTimerAt(this.deps.clock.nowUs() + intervalUs, () => {
      run.timer = null;
      if (run.record.state !== 'running' || run.phase !== 'sweeping') return;
      this.guard(run, () => {
        this.sweepSample(run);
        this.armSweepTimer(run);
      });
    });
  }

  /** One sweep sample, stamped with where the positioner is now. */
  private sweepSample(run: Run): void {
    const s = this.deps.positioner.status();
    const index = run.record.samplesRecorded + run.inFlight.size;
    const base = { index, thetaDeg: s.thetaDeg, phiDeg: s.phiDeg, timeS: round6(this.nowS(run)) };
    const result = this.measure(run, { index, thetaDeg: s.thetaDeg, phiDeg: s.phiDeg, sample: 0 });
    const save = (r: number[] | string) => {
      const sample: ScanSample = typeof r === 'string' ? { ...base, values: [], error: r } : { ...base, values: r, error: null };
      this.saveSample(run, sample);
    };
    if (result instanceof Promise) {
      const epoch = run.epoch;
      const p: Promise<void> = result
        .then((r) => {
          run.inFlight.delete(p);
          if (run.epoch === epoch) save(r);
          if (run.inFlight.size === 0 && run.phase === 'idle' && run.record.state === 'running' && run.epoch === epoch) this.advance(run);
        })
        .catch((e: unknown) => this.finish(run, 'failed', `the sweep could not go on: ${errorText(e)}`));
      run.inFlight.add(p);
      const all: Promise<void> = Promise.all([...run.inFlight]).then(() => {
        if (this.measuring === all) this.measuring = null;
      });
      this.measuring = all;
    } else {
      save(result);
    }
  }

  private endSweepLine(run: Run): void {
    run.timer?.cancel();
    run.timer = null;
    this.sweepSample(run);
    if (run.record.state !== 'running') return;
    const [first, last] = run.lines[run.sweepLine];
    run.record.pointsDone += last - first + 1;
    run.record.nextIndex = run.sweepLine + 1;
    run.record.elapsedS = this.nowS(run);
    this.deps.store.update(run.record);
    this.emitScan(run.record);
    run.phase = 'idle';
    // The next line waits for the samples still being measured, so rows stay in order.
    if (run.inFlight.size === 0) this.advance(run);
  }

  // Ends -----------------------------------------------------------------

  private enterPause(run: Run): void {
    run.pauseRequested = false;
    run.record.state = 'paused';
    run.record.elapsedS = this.nowS(run);
    run.epoch += 1;
    run.claim?.release();
    run.claim = null;
    this.deps.store.update(run.record);
    this.emitScan(run.record);
  }

  private finish(run: Run, state: Exclude<ScanState, 'running' | 'paused'>, error: string | null): void {
    if (this.run !== run) return;
    const wasRunning = run.record.state === 'running';
    run.timer?.cancel();
    run.timer = null;
    run.epoch += 1;
    run.phase = 'idle';
    run.claim?.release();
    run.claim = null;
    run.source.close?.();
    this.measuring = null;
    if (wasRunning) run.record.elapsedS = this.nowS(run);
    run.record.state = state;
    run.record.error = error;
    run.record.endedAt = this.deps.now().toISOString();
    this.run = null;
    try {
      this.deps.store.update(run.record);
    } catch (e) {
      run.record.error = `${error ?? state}; and its end could not be saved: ${errorText(e)}`;
    }
    this.emitScan(run.record);
  }

  private emitScan(record: ScanRecord): void {
    if (this.listeners.size > 0) this.emit({ type: 'scan', scan: this.info(record) });
  }

  private emit(event: ScanEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

/** A scan command that does not apply in the scan's state (pause with nothing running, resume a finished scan): HTTP 409. */
export class ScanStateError extends Error {
  readonly code = 'SCAN_ERR_STATE';
  constructor(message: string) {
    super(message);
    this.name = 'ScanStateError';
  }
}

function checkValues(values: number[]): number[] | string {
  // An empty list is a measurement with no value (a bare trigger pulse); sources that must give one say so themselves.
  if (!Array.isArray(values)) return 'the source gave no list of values';
  if (values.some((v) => typeof v !== 'number' || !Number.isFinite(v))) return `the source gave a value that is not a finite number: ${JSON.stringify(values)}`;
  return values;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Column-wise mean of the samples of one point (a single sample is returned as is). */
function mean(samples: number[][]): number[] {
  if (samples.length === 1) return samples[0];
  const width = Math.max(...samples.map((s) => s.length));
  const out: number[] = [];
  for (let c = 0; c < width; c++) {
    const column = samples.map((s) => s[c]).filter((v) => v !== undefined);
    out.push(round6(column.reduce((a, b) => a + b, 0) / column.length));
  }
  return out;
}

function toUs(seconds: number): number {
  return Math.round(seconds * 1e6);
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}

function round6(v: number): number {
  return Math.round(v * 1e6) / 1e6;
}
