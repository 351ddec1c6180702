/**
 * `positioner scan`: start a radiation-pattern scan on a running positioner
 * (POST /scan), follow it with a progress bar and ETA (`--wait`), and write
 * its results (`--out pattern.csv`); `scan results|status|pause|resume`.
 *
 *   positioner scan --theta 0:180:5 --phi 0:355:5 --settle 0.2 --wait --out pattern.csv
 *   positioner scan --phi-cuts 0,90 --theta 0:180:2 --source exec ./vna.sh --wait
 *   positioner scan results --format csv > pattern.csv
 *
 * Exit codes as the other client commands: 0 done, 1 refused or the scan
 * ended aborted or failed, 2 usage, 3 unreachable, 130 Ctrl-C (which stops
 * the positioner: the scan is aborted, resumable with `scan resume`).
 */
import fs from 'node:fs';
import type { Argv, CommandModule } from 'yargs';
import { ClientError, type PositionerClient } from './client';
import { progressBar } from './progress';

export interface ScanCliHelpers {
  client(argv: { host?: string; timeout: number }): PositionerClient;
  fail(message: string, code: number): never;
  exit: { ok: number; failed: number; usage: number; unreachable: number; interrupted: number };
}

interface ScanBody {
  id: string;
  state: string;
  points_done: number;
  points_total: number;
  points_failed: number;
  elapsed_s: number;
  remaining_s: number | null;
  error: string | null;
}

interface Common {
  host?: string;
  json: boolean;
  timeout: number;
}

/** API field names in refusals, as the CLI's flags (a user typed --settle, not settle_s). */
const FLAG_OF_FIELD: [RegExp, string][] = [
  [/\bplan\.theta\b/g, '--theta'],
  [/\bplan\.phi\b/g, '--phi'],
  [/\bplan\.phi_deg\b/g, '--phi-cuts'],
  [/\bplan\.theta_deg\b/g, '--theta-cuts'],
  [/\bsettle_s\b/g, '--settle'],
  [/\bdwell_s\b/g, '--dwell'],
  [/\bsample_interval_s\b/g, '--interval'],
  [/\bsamples\b(?= must)/g, '--samples'],
  [/\bsource\.timeout_s\b/g, '--measure-timeout'],
  [/\bsource\.command\b/g, '--source exec CMD'],
  [/\bsource\.url\b/g, '--source http URL'],
];

export function inFlags(message: string): string {
  let m = message;
  for (const [field, flag] of FLAG_OF_FIELD) m = m.replace(field, flag);
  return m.replace(/\.start_deg\b/g, ' START').replace(/\.stop_deg\b/g, ' STOP').replace(/\.step_deg\b/g, ' STEP');
}

/** START:STOP:STEP in degrees. */
export function parseRange(text: string, flag: string): { start_deg: number; stop_deg: number; step_deg: number } {
  const parts = text.split(':');
  const nums = parts.map((p) => (p.trim() === '' ? Number.NaN : Number(p)));
  if (parts.length !== 3 || nums.some((n) => !Number.isFinite(n))) throw new ScanUsageError(`${flag} takes START:STOP:STEP in degrees, e.g. ${flag === '--theta' ? '0:180:5' : '0:355:5'}; got '${text}'`);
  return { start_deg: nums[0], stop_deg: nums[1], step_deg: nums[2] };
}

function parseList(text: string, flag: string): number[] {
  const nums = text.split(',').map((p) => (p.trim() === '' ? Number.NaN : Number(p)));
  if (nums.length === 0 || nums.some((n) => !Number.isFinite(n))) throw new ScanUsageError(`${flag} takes angles in degrees separated by commas, e.g. 0,90; got '${text}'`);
  return nums;
}

export class ScanUsageError extends Error {}

interface StartArgs extends Common {
  theta: string;
  phi: string;
  'phi-cuts'?: string;
  'theta-cuts'?: string;
  order: string;
  mode: string;
  settle: number;
  dwell: number;
  samples: number;
  interval: number;
  source?: string[];
  'measure-timeout'?: number;
  'pulse-ms'?: number;
  'on-error': string;
  name?: string;
  out?: string;
  format?: string;
  wait: boolean;
}

/** The POST /scan body the flags describe. */
export function scanRequestFromFlags(argv: StartArgs): Record<string, unknown> {
  let plan: Record<string, unknown>;
  if (argv['phi-cuts'] !== undefined && argv['theta-cuts'] !== undefined) throw new ScanUsageError('give --phi-cuts or --theta-cuts, not both');
  if (argv['phi-cuts'] !== undefined) plan = { kind: 'phi_cuts', phi_deg: parseList(argv['phi-cuts'], '--phi-cuts'), theta: parseRange(argv.theta, '--theta') };
  else if (argv['theta-cuts'] !== undefined) plan = { kind: 'theta_cuts', theta_deg: parseList(argv['theta-cuts'], '--theta-cuts'), phi: parseRange(argv.phi, '--phi') };
  else plan = { kind: 'grid', theta: parseRange(argv.theta, '--theta'), phi: parseRange(argv.phi, '--phi'), order: argv.order };
  const body: Record<string, unknown> = {
    plan,
    mode: argv.mode,
    settle_s: argv.settle,
    dwell_s: argv.dwell,
    samples: argv.samples,
    on_error: argv['on-error'],
    source: sourceFromFlags(argv),
  };
  if (argv.mode === 'sweep') body.sample_interval_s = argv.interval;
  if (argv.name !== undefined) body.name = argv.name;
  return body;
}

function sourceFromFlags(argv: StartArgs): Record<string, unknown> {
  const [kind = 'sim', ...rest] = argv.source ?? [];
  const arg = rest.join(' ');
  const timeout = argv['measure-timeout'] !== undefined ? { timeout_s: argv['measure-timeout'] } : {};
  switch (kind) {
    case 'sim':
      if (arg) throw new ScanUsageError(`--source sim takes nothing after it (got '${arg}')`);
      return { kind: 'sim' };
    case 'exec':
      if (!arg) throw new ScanUsageError("--source exec needs the command to run at each point: --source exec './vna.sh'");
      return { kind: 'exec', command: arg, ...timeout };
    case 'http':
      if (!arg) throw new ScanUsageError('--source http needs the webhook URL: --source http http://127.0.0.1:9000/measure');
      return { kind: 'http', url: arg, ...timeout };
    case 'trigger': {
      // --source trigger [exec CMD | http URL]: the pulse, then optionally the reading.
      const [thenKind, ...thenRest] = rest;
      const then = thenKind === undefined ? null : sourceFromFlags({ ...argv, source: [thenKind, ...thenRest] });
      if (then && then.kind !== 'exec' && then.kind !== 'http') throw new ScanUsageError('--source trigger is followed by nothing, exec CMD or http URL');
      return { kind: 'trigger', pulse_ms: argv['pulse-ms'] ?? 10, then };
    }
    default:
      throw new ScanUsageError(`--source is sim, exec CMD, http URL or trigger [exec CMD|http URL]; got '${kind}'`);
  }
}

function duration(s: number | null): string {
  if (s === null || !Number.isFinite(s)) return '--';
  const total = Math.round(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  return h > 0 ? `${h}h ${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m ${String(sec).padStart(2, '0')}s` : `${sec}s`;
}

function describe(s: ScanBody): string {
  const failed = s.points_failed > 0 ? `, ${s.points_failed} failed` : '';
  return `scan ${s.id}: ${s.state}, ${s.points_done}/${s.points_total} points${failed}, elapsed ${duration(s.elapsed_s)}${s.state === 'running' ? `, ETA ${duration(s.remaining_s)}` : ''}${s.error ? ` (${s.error})` : ''}`;
}

/** Fetches results as text (CSV) or JSON text. */
async function resultsText(api: PositionerClient, format: 'csv' | 'json', id?: string): Promise<string> {
  const query = `?format=${format}${id ? `&id=${encodeURIComponent(id)}` : ''}`;
  if (format === 'json') return `${JSON.stringify(await api.get<unknown>(`/scan/results${query}`))}\n`;
  const res = await fetch(`${api.base}/scan/results${query}`).catch((e: unknown) => {
    throw new ClientError(`cannot reach the positioner at ${api.base} (${(e as Error).message})`, 0);
  });
  const text = await res.text();
  if (!res.ok) throw new ClientError(`GET /scan/results failed (${res.status}): ${(JSON.parse(text) as { error?: string }).error ?? text}`, res.status);
  return text;
}

function formatOf(out: string | undefined, format: string | undefined): 'csv' | 'json' {
  if (format === 'csv' || format === 'json') return format;
  return out?.toLowerCase().endsWith('.json') ? 'json' : 'csv';
}

/** Follows the scan with a progress bar; writes the results to `out` at the end (also after an abort: what was measured). */
async function follow(h: ScanCliHelpers, api: PositionerClient, argv: Common & { out?: string; format?: string }, first: ScanBody): Promise<never> {
  const bar = argv.json ? null : progressBar(process.stderr, 'scan');
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
  };
  process.on('SIGINT', onSigint);
  let s = first;
  try {
    for (;;) {
      if (interrupted) {
        await api.post('/stop').catch(() => undefined);
        s = await api.get<ScanBody>('/scan').catch(() => s);
        bar?.done(`scan: interrupted at ${s.points_done}/${s.points_total} points; positioner stopped (positioner scan resume continues)`);
        await writeOut(api, argv, s);
        process.exit(h.exit.interrupted);
      }
      if (s.state !== 'running') break;
      bar?.update(s.points_total > 0 ? s.points_done / s.points_total : null, `${s.points_done}/${s.points_total} points  ETA ${duration(s.remaining_s)}${s.points_failed ? `  ${s.points_failed} failed` : ''}`);
      await new Promise((r) => setTimeout(r, 250));
      s = await api.get<ScanBody>('/scan');
    }
  } finally {
    process.off('SIGINT', onSigint);
  }
  bar?.done(describe(s));
  await writeOut(api, argv, s);
  if (argv.json) process.stdout.write(`${JSON.stringify(s)}\n`);
  if (s.state !== 'done') h.fail(`the scan ended ${s.state}: ${s.error ?? 'no reason given'}`, h.exit.failed);
  process.exit(h.exit.ok);
}

async function writeOut(api: PositionerClient, argv: { out?: string; format?: string; json: boolean }, s: ScanBody): Promise<void> {
  if (!argv.out) return;
  const text = await resultsText(api, formatOf(argv.out, argv.format), s.id);
  fs.writeFileSync(argv.out, text);
  if (!argv.json) process.stderr.write(`wrote ${argv.out} (${s.points_done} points)\n`);
}

export function scanCommand(h: ScanCliHelpers): CommandModule<object, StartArgs> {
  const run = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ScanUsageError) h.fail(e.message, h.exit.usage);
      if (e instanceof ClientError) h.fail(inFlags(e.message), e.status === 0 ? h.exit.unreachable : h.exit.failed);
      throw e;
    }
  };
  return {
    command: 'scan',
    describe: 'measure a radiation pattern: start a scan (a theta x phi grid or cuts), follow it with --wait, write --out; also scan results|status|pause|resume',
    builder: (y: Argv) =>
      (y as Argv)
        .command(
          'results',
          'print (or --out) the results of the current or last scan',
          (r) =>
            r
              .option('format', { choices: ['csv', 'json'] as const, describe: 'csv (default) or json' })
              .option('id', { type: 'string', describe: 'a scan id (default: the current or last scan)' })
              .option('out', { alias: 'o', type: 'string', describe: 'write to this file instead of stdout' }),
          (argv) =>
            run(async () => {
              const a = argv as unknown as Common & { format?: string; id?: string; out?: string };
              const format = a.json ? 'json' : formatOf(a.out, a.format);
              const text = await resultsText(h.client(a), format, a.id);
              if (a.out) fs.writeFileSync(a.out, text);
              else process.stdout.write(text);
            }),
        )
        .command('status', 'progress of the current or last scan', (r) => r, (argv) =>
          run(async () => {
            const a = argv as unknown as Common;
            const s = await h.client(a).get<ScanBody>('/scan');
            process.stdout.write(a.json ? `${JSON.stringify(s)}\n` : `${s.state === 'none' ? 'no scan has run yet' : describe(s)}\n`);
          }),
        )
        .command('pause', 'pause the running scan at the next point', (r) => r, (argv) =>
          run(async () => {
            const a = argv as unknown as Common;
            const s = await h.client(a).post<ScanBody>('/scan/pause');
            process.stdout.write(a.json ? `${JSON.stringify(s)}\n` : `${describe(s)}; pausing at the next point\n`);
          }),
        )
        .command(
          'resume',
          'resume the paused, stopped or interrupted scan at the first point not done',
          (r) => r.option('wait', { alias: 'w', type: 'boolean', default: false, describe: 'follow it to its end' }).option('out', { alias: 'o', type: 'string', describe: 'with --wait: write the results to this file' }),
          (argv) =>
            run(async () => {
              const a = argv as unknown as Common & { wait: boolean; out?: string };
              const api = h.client(a);
              const s = await api.post<ScanBody>('/scan/resume');
              if (a.wait || a.out) await follow(h, api, a, s);
              process.stdout.write(a.json ? `${JSON.stringify(s)}\n` : `${describe(s)}\n`);
            }),
        )
        .option('theta', { type: 'string', default: '0:180:5', describe: 'theta range START:STOP:STEP, degrees (0..180)' })
        .option('phi', { type: 'string', default: '0:355:5', describe: 'phi range START:STOP:STEP, degrees (0..360)' })
        .option('phi-cuts', { type: 'string', describe: 'phi cuts instead of a grid: theta swept (--theta) at each of these phi angles, e.g. 0,90' })
        .option('theta-cuts', { type: 'string', describe: 'theta cuts instead of a grid: phi swept (--phi) at each of these theta angles, e.g. 90' })
        .option('order', { choices: ['serpentine', 'raster'], default: 'serpentine', describe: 'grid order: serpentine reverses every other line to save travel' })
        .option('mode', { choices: ['step', 'sweep'], default: 'step', describe: 'step: stop and measure at each point; sweep: measure while moving along each line' })
        .option('settle', { type: 'number', default: 0.2, describe: 'seconds to wait after each arrival before measuring' })
        .option('dwell', { type: 'number', default: 0, describe: 'step mode: seconds before each sample (instrument integration time)' })
        .option('samples', { type: 'number', default: 1, describe: 'step mode: samples per point, averaged' })
        .option('interval', { type: 'number', default: 0.1, describe: 'sweep mode: seconds between samples' })
        .option('source', { type: 'array', string: true, describe: "where values come from: sim (default in simulation), exec CMD, http URL, trigger [exec CMD|http URL]" })
        .option('measure-timeout', { type: 'number', describe: 'exec/http: seconds before a point is marked timed out (default 10 / 5)' })
        .option('pulse-ms', { type: 'number', describe: 'trigger: pulse length on the board output, ms (default 10)' })
        .option('on-error', { choices: ['continue', 'stop'], default: 'continue', describe: 'a failed measurement: mark the point and go on, or end the scan' })
        .option('name', { type: 'string', describe: 'a label for the scan' })
        .option('out', { alias: 'o', type: 'string', describe: 'write the results to this file at the end (CSV, or JSON for *.json); implies --wait' })
        .option('format', { choices: ['csv', 'json'], describe: 'format of --out (default from its extension, else csv)' })
        .option('wait', { alias: 'w', type: 'boolean', default: false, describe: 'follow the scan with a progress bar and ETA; exit 0 only if it completes' }) as unknown as Argv<StartArgs>,
    handler: (argv) =>
      run(async () => {
        for (const [flag, v, min] of [['--settle', argv.settle, 0], ['--dwell', argv.dwell, 0], ['--samples', argv.samples, 1], ['--interval', argv.interval, 0.001]] as const) {
          if (!Number.isFinite(v) || v < min) throw new ScanUsageError(`${flag} must be a number >= ${min}, got ${String(v)}`);
        }
        const body = scanRequestFromFlags(argv);
        const api = h.client(argv);
        const s = await api.post<ScanBody>('/scan', body);
        if (argv.wait || argv.out) {
          if (!argv.json) process.stderr.write(`scan ${s.id}: ${s.points_total} points\n`);
          await follow(h, api, argv, s);
        }
        process.stdout.write(argv.json ? `${JSON.stringify(s)}\n` : `${describe(s)}\n`);
      }),
  };
}
