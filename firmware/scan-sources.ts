/**
 * The measurement sources a scan can use besides the simulated antenna
 * (sim/antenna.ts, wired in by the composition root):
 *
 * - exec: a command run at each point, the way a user plugs in a VNA or
 *   power-meter script. It gets THETA_DEG, PHI_DEG, POINT_INDEX and
 *   SAMPLE_INDEX in its environment and theta, phi, index as its arguments
 *   (a lone program, `./vna.sh`, is run with them; a command line runs in
 *   `sh -c` where they are $1 $2 $3); every number it prints on stdout is a value. A non-zero exit,
 *   no number, or no answer within the timeout marks the point.
 * - http: a webhook POSTed the point as JSON
 *   ({"theta_deg", "phi_deg", "index", "sample"}); its JSON answer gives the
 *   values: a number, a list of numbers, {"value": n}, {"values": [...]} or
 *   else every top-level number in key order. A non-2xx answer, a body that
 *   is not JSON with a number, or the timeout marks the point.
 * - trigger: a pulse on the board's trigger output (Positioner.pulseOutput),
 *   then optionally one of the above for the value.
 *
 * Timeouts are timers on the scan's clock (a virtual clock in tests: a hung
 * command times out when the test advances time, never because the machine
 * was slow).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Clock } from '../hal/clock';
import type { Positioner } from './positioner';
import type { MeasurementSource, MeasurePoint, SourceSpec } from './scan';

/** Stdout beyond this is not read (a command that prints a whole trace is cut, not buffered forever). */
const MAX_OUTPUT_BYTES = 64 * 1024;
const NUMBER = /[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/g;

/** A source this machine cannot build (no antenna model outside simulation, no trigger output). */
export class ScanSourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScanSourceError';
  }
}

/** Every number in `text`, in order. */
export function numbersIn(text: string): number[] {
  return (text.match(NUMBER) ?? []).map(Number).filter((n) => Number.isFinite(n));
}

/** Calls `fn` with a timeout on `clock`: rejects with a message naming the timeout, and calls `onTimeout` (to kill what runs). */
function withTimeout<T>(clock: Clock, timeoutS: number, what: string, start: () => Promise<T>, onTimeout: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimerAt(clock.nowUs() + Math.round(timeoutS * 1e6), () => {
      onTimeout();
      reject(new Error(`${what} gave no answer within ${timeoutS} s (timeout_s)`));
    });
    start().then(
      (v) => {
        timer.cancel();
        resolve(v);
      },
      (e: unknown) => {
        timer.cancel();
        reject(e);
      },
    );
  });
}

/** Kills a command and everything it started (it runs in its own process group). */
function killGroup(proc: ChildProcess | null): void {
  if (!proc?.pid || proc.exitCode !== null || proc.signalCode !== null) return;
  try {
    process.kill(-proc.pid, 'SIGKILL');
  } catch {
    proc.kill('SIGKILL');
  }
}

export class ExecSource implements MeasurementSource {
  private readonly running = new Set<ChildProcess>();

  constructor(
    private readonly clock: Clock,
    private readonly command: string,
    private readonly timeoutS: number,
  ) {}

  measure(point: MeasurePoint): Promise<number[]> {
    let child: ChildProcess | null = null;
    const args = [String(point.thetaDeg), String(point.phiDeg), String(point.index)];
    return withTimeout(
      this.clock,
      this.timeoutS,
      `the command '${this.command}'`,
      () =>
        new Promise<number[]>((resolve, reject) => {
          // A lone program (./vna.sh) gets the point as its arguments; a command line runs in sh with the point as $1 $2 $3.
          const lone = /^[^\s;&|<>()$`'"\\*?]+$/.test(this.command);
          const proc = spawn(lone ? this.command : '/bin/sh', lone ? args : ['-c', this.command, 'sh', ...args], {
            env: { ...process.env, THETA_DEG: args[0], PHI_DEG: args[1], POINT_INDEX: args[2], SAMPLE_INDEX: String(point.sample) },
            stdio: ['ignore', 'pipe', 'pipe'],
            // Its own process group, so a timeout kills the whole command line (`sh -c 'sleep 30; ...'` too).
            detached: true,
          });
          child = proc;
          this.running.add(proc);
          let out = '';
          let err = '';
          proc.stdout.on('data', (d: Buffer) => {
            if (out.length < MAX_OUTPUT_BYTES) out += d.toString('utf8');
          });
          proc.stderr.on('data', (d: Buffer) => {
            if (err.length < MAX_OUTPUT_BYTES) err += d.toString('utf8');
          });
          proc.on('error', (e) => {
            this.running.delete(proc);
            reject(new Error(`cannot run '${this.command}': ${e.message}`));
          });
          proc.on('close', (code, signal) => {
            this.running.delete(proc);
            const stderr = err.trim().split('\n').slice(-1)[0] ?? '';
            if (signal) return reject(new Error(`the command '${this.command}' was killed by ${signal}`));
            if (code !== 0) return reject(new Error(`the command '${this.command}' exited with status ${code}${stderr ? `: ${stderr}` : ''}`));
            const values = numbersIn(out);
            if (values.length === 0) return reject(new Error(`the command '${this.command}' printed no number on stdout (got ${JSON.stringify(out.slice(0, 80))})`));
            resolve(values);
          });
        }),
      () => killGroup(child),
    );
  }

  close(): void {
    for (const proc of this.running) killGroup(proc);
    this.running.clear();
  }
}

export class HttpSource implements MeasurementSource {
  private readonly controllers = new Set<AbortController>();

  constructor(
    private readonly clock: Clock,
    private readonly url: string,
    private readonly timeoutS: number,
  ) {}

  measure(point: MeasurePoint): Promise<number[]> {
    const abort = new AbortController();
    this.controllers.add(abort);
    const body = JSON.stringify({ theta_deg: point.thetaDeg, phi_deg: point.phiDeg, index: point.index, sample: point.sample });
    return withTimeout(
      this.clock,
      this.timeoutS,
      `the webhook ${this.url}`,
      async () => {
        try {
          const res = await fetch(this.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: abort.signal });
          const text = await res.text();
          if (!res.ok) throw new Error(`the webhook ${this.url} answered HTTP ${res.status}: ${text.slice(0, 120)}`);
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            throw new Error(`the webhook ${this.url} answered something that is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
          }
          const values = valuesFromJson(parsed);
          if (values.length === 0) throw new Error(`the webhook ${this.url} answered JSON with no number in it: ${text.slice(0, 80)}`);
          return values;
        } catch (e) {
          if (abort.signal.aborted) throw new Error(`the webhook ${this.url} call was cancelled`);
          const cause = (e as { cause?: { code?: string } }).cause?.code;
          throw cause ? new Error(`cannot reach the webhook ${this.url} (${cause})`) : e;
        } finally {
          this.controllers.delete(abort);
        }
      },
      () => abort.abort(),
    );
  }

  close(): void {
    for (const c of this.controllers) c.abort();
    this.controllers.clear();
  }
}

/** The numbers of a webhook's JSON answer (see the header). */
export function valuesFromJson(v: unknown): number[] {
  if (typeof v === 'number') return Number.isFinite(v) ? [v] : [];
  if (Array.isArray(v)) return v.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (Array.isArray(o.values)) return valuesFromJson(o.values);
    if (typeof o.value === 'number') return valuesFromJson(o.value);
    return Object.values(o).filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  }
  return [];
}

export class TriggerSource implements MeasurementSource {
  constructor(
    private readonly positioner: Positioner,
    private readonly pulseMs: number,
    private readonly then: MeasurementSource | null,
  ) {}

  async measure(point: MeasurePoint): Promise<number[]> {
    await this.positioner.pulseOutput(this.pulseMs);
    return this.then ? this.then.measure(point) : [];
  }

  close(): void {
    this.then?.close?.();
  }
}

export interface SourceFactoryDeps {
  clock: Clock;
  positioner: Positioner;
  /** The simulated antenna under test, where there is one (measure(theta, phi, index, sample) in dB). */
  antenna?: { measureDb(thetaDeg: number, phiDeg: number, index: number, sample: number): number };
}

/** Builds a scan's source from its spec (the `source` ScannerDeps wants). */
export function sourceFactory(deps: SourceFactoryDeps): (spec: SourceSpec) => MeasurementSource {
  const build = (spec: SourceSpec): MeasurementSource => {
    switch (spec.kind) {
      case 'sim': {
        const antenna = deps.antenna;
        if (!antenna) throw new ScanSourceError('this server has no simulated antenna; use an exec or http source');
        return { measure: (p) => [antenna.measureDb(p.thetaDeg, p.phiDeg, p.index, p.sample)] };
      }
      case 'exec':
        return new ExecSource(deps.clock, spec.command, spec.timeoutS);
      case 'http':
        return new HttpSource(deps.clock, spec.url, spec.timeoutS);
      case 'trigger':
        return new TriggerSource(deps.positioner, spec.pulseMs, spec.then ? build(spec.then) : null);
    }
  };
  return build;
}
