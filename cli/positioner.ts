#!/usr/bin/env node
/**
 * `positioner`: serve the firmware in simulation, or drive a running
 * positioner at POSITIONER_HOST.
 *
 * Exit codes: 0 done; 1 the positioner refused the command or the motion did
 * not complete; 2 usage error; 3 the positioner could not be reached;
 * 130 interrupted (Ctrl-C during --wait, after stopping the motors).
 */
import yargs, { type Argv, type CommandModule } from 'yargs';
import { baseUrl, ClientError, HostError, PositionerClient, type StatusBody } from './client';
import { progressBar, useColor } from './progress';
import { ROTCTLD_DEFAULT_PORT } from '../api/rotctld';
import { scanCommand } from './scan-command';

const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3, interrupted: 130 } as const;

interface Common {
  host?: string;
  json: boolean;
  timeout: number;
}

const deg = (v: number) => `${v.toFixed(3)}°`;

function describeStatus(s: StatusBody): string {
  const state = s.state ?? (s.moving ? 'moving' : 'idle');
  const fault = s.fault ? `  fault: ${inCliWords(s.fault.message)}` : '';
  return `theta ${deg(s.theta_deg)}  phi ${deg(s.phi_deg)}  ${state}  homed: ${s.homed ? 'yes' : 'no'}${fault}`;
}

function print(argv: Common, body: unknown, human: string): void {
  process.stdout.write(argv.json ? `${JSON.stringify(body)}\n` : `${human}\n`);
}

function fail(message: string, code: number): never {
  const red = useColor(process.stderr) ? (s: string) => `\x1b[31m${s}\x1b[0m` : (s: string) => s;
  process.stderr.write(`${red('error:')} ${message}\n`);
  process.exit(code);
}

function client(argv: Common): PositionerClient {
  try {
    return new PositionerClient(argv.host !== undefined ? baseUrl(argv.host, '--host') : baseUrl(process.env.POSITIONER_HOST), argv.timeout * 1000);
  } catch (e) {
    if (e instanceof HostError) fail(e.message, EXIT.usage);
    throw e;
  }
}

/**
 * The API's words for what the CLI calls otherwise: its body fields become the
 * command's arguments and flags, its endpoints the commands that call them.
 */
const CLI_WORDS: [RegExp, string][] = [
  [/\(POST \/home\)/g, '(`positioner home`)'],
  [/POST \/home\b/g, '`positioner home`'],
  [/POST \/stop\b/g, '`positioner stop`'],
  [/POST \/scan\/resume\b/g, '`positioner scan resume`'],
  [/POST \/config\b/g, '`positioner config`'],
  [/POST \/move\/relative\b/g, '`positioner move-rel`'],
  [/POST \/move\b/g, '`positioner move`'],
  [/\btheta_deg\b/g, 'THETA'],
  [/\bphi_deg\b/g, 'PHI'],
  [/\bd_theta\b/g, 'DTHETA'],
  [/\bd_phi\b/g, 'DPHI'],
  [/\bspeed must\b/g, '--speed must'],
  [/\baccel must\b/g, '--accel must'],
  // ajv's bounds on the angles: the CLI's arguments are in degrees.
  [/\b(THETA|PHI|DTHETA|DPHI) must be ([<>]=?) (-?[0-9.]+)/g, '$1 must be $2 $3 degrees'],
];

export function inCliWords(message: string): string {
  return CLI_WORDS.reduce((m, [api, cli]) => m.replace(api, cli), message);
}

/** What a user of the CLI reads for a failed request: the positioner's refusal in the CLI's words, or why it could not be reached. */
function describeClientError(e: ClientError): string {
  if (e.status === 0 || e.apiError === undefined) return e.message;
  return `the positioner refused${e.code ? ` (${e.code})` : ''}: ${inCliWords(e.apiError)}`;
}

/**
 * Follows a move or homing to its end with a progress bar on stderr.
 * Ctrl-C stops the positioner before exiting: letting it run on unattended is the surprise.
 */
async function waitForEnd(api: PositionerClient, argv: Common, label: string, start: StatusBody, target?: { theta: number; phi: number }): Promise<void> {
  const bar = argv.json ? null : progressBar(process.stderr, label);
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
  };
  process.on('SIGINT', onSigint);
  try {
    for (;;) {
      await new Promise((r) => setTimeout(r, 100));
      if (interrupted) {
        await api.post('/stop').catch(() => undefined);
        bar?.done(`${label}: interrupted; positioner stopped`);
        process.exit(EXIT.interrupted);
      }
      const s = await api.get<StatusBody>('/status');
      const detail = `theta ${deg(s.theta_deg)}  phi ${deg(s.phi_deg)}`;
      if (s.moving) {
        bar?.update(target ? fractionDone(start, s, target) : null, detail);
        continue;
      }
      if (s.state === 'error') {
        bar?.done(`${label}: failed`);
        fail(inCliWords(s.fault?.message ?? 'the positioner reported an error'), EXIT.failed);
      }
      if (s.state === 'stopped') {
        bar?.done(`${label}: stopped at ${detail}`);
        if (argv.json) print(argv, s, '');
        fail('the motion was stopped before it completed', EXIT.failed);
      }
      bar?.done(`${label}: done at ${detail}`);
      if (argv.json) print(argv, s, '');
      return;
    }
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/**
 * `status --watch`: a line per change until Ctrl-C, which exits 130 as an
 * interrupted command does (the shell convention: 128 + SIGINT); a lost
 * server is an error (exit 3).
 */
async function watchStatus(api: PositionerClient, argv: Common): Promise<void> {
  process.once('SIGINT', () => process.exit(EXIT.interrupted));
  let last = '';
  for (;;) {
    const s = await api.get<StatusBody>('/status');
    const line = argv.json ? JSON.stringify(s) : describeStatus(s);
    if (line !== last) process.stdout.write(`${line}\n`);
    last = line;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function fractionDone(start: StatusBody, now: StatusBody, target: { theta: number; phi: number }): number {
  let left = 0;
  for (const [from, at, to] of [
    [start.theta_deg, now.theta_deg, target.theta],
    [start.phi_deg, now.phi_deg, target.phi],
  ]) {
    const total = Math.abs(to - from);
    if (total > 0) left = Math.max(left, Math.abs(to - at) / total);
  }
  return 1 - left;
}

async function moveCommand(argv: Common & { wait: boolean }, path: string, body: Record<string, number>): Promise<void> {
  const api = client(argv);
  const start = argv.wait ? await api.get<StatusBody>('/status') : null;
  const r = await api.post<{ status: string; target_theta: number; target_phi: number }>(path, body);
  if (!argv.wait || !start) return print(argv, r, `${r.status} to theta ${deg(r.target_theta)}  phi ${deg(r.target_phi)}`);
  if (!argv.json) process.stderr.write(`moving to theta ${deg(r.target_theta)}  phi ${deg(r.target_phi)}\n`);
  await waitForEnd(api, argv, 'move', start, { theta: r.target_theta, phi: r.target_phi });
}

function withWait<T>(y: Argv<T>) {
  return y.option('wait', { alias: 'w', type: 'boolean', default: false, describe: 'follow the motion to its end with a progress bar; exit 1 if it does not complete' });
}

/** `--rotctld` alone means Hamlib's usual port; `--rotctld PORT` picks one; absent: no rotctld server. */
function rotctldPortOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value === '') return ROTCTLD_DEFAULT_PORT;
  const port = Number(value);
  if (!/^[0-9]+$/.test(value) || port > 65535) fail(`--rotctld takes a port from 0 to 65535 (default ${ROTCTLD_DEFAULT_PORT}), got '${value}'`, EXIT.usage);
  return port;
}

/** `grbl-setup`: exit 0 set up as needed, 1 it is not (or a write failed), 2 usage/config error, 3 no grbl on the port. */
async function grblSetupCommand(argv: { serial: string; baud: number; config?: string; write: boolean; json: boolean }): Promise<void> {
  const setup = require('./grbl-setup') as typeof import('./grbl-setup');
  const { loadConfig } = require('./config-file') as typeof import('./config-file');
  const { WallClock } = require('../sim/wall-clock') as typeof import('../sim/wall-clock');
  let config;
  try {
    config = loadConfig(argv.config).config;
  } catch (e) {
    fail((e as Error).message, EXIT.usage);
  }
  try {
    const report = await setup.grblSetup({ path: argv.serial, baudRate: argv.baud, config, write: argv.write, clock: new WallClock(1) });
    process.stdout.write(argv.json ? `${JSON.stringify(report)}\n` : `${setup.formatReport(report)}\n`);
    process.exit(setup.exitCodeOf(report));
  } catch (e) {
    fail((e as Error).message, e instanceof setup.GrblSetupError ? e.exitCode : EXIT.failed);
  }
}

async function serve(argv: { host?: string; port?: number; config?: string; 'time-scale': number; home: boolean; quiet: boolean; rotctld?: string; driver?: 'sim' | 'grbl' | 'firmata'; serial?: string; baud?: number; 'trace-serial': boolean; 'scan-db'?: string }): Promise<void> {
  // Loaded only here: client commands start faster without express.
  const { startServer } = require('./serve') as typeof import('./serve');
  const host = argv.host ?? process.env.HOST ?? '127.0.0.1';
  const portText = argv.port ?? process.env.PORT ?? 8080;
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`port must be a whole number from 0 to 65535, got '${portText}'`, EXIT.usage);
  const rotctldPort = rotctldPortOf(argv.rotctld);
  try {
    const log = argv.quiet ? undefined : (line: string) => process.stdout.write(`positioner: ${line}\n`);
    const announce = (url: string, hardware: string) =>
      process.stdout.write(`positioner: ${hardware} serving ${url}${argv['time-scale'] !== 1 ? ` (time x${argv['time-scale']})` : ''}; Ctrl-C to stop\n`);
    const announceRotctld = (address: string) => process.stdout.write(`positioner: Hamlib rotctld protocol on ${address} (rotctl -m 2 -r ${address}; az = phi, el = 90 - theta)\n`);
    const { driver, serial, baud } = argv;
    const traceSerial = argv['trace-serial'] ? (line: string) => process.stderr.write(`${line}\n`) : undefined;
    const running = await startServer({ host, port, configPath: argv.config, timeScale: argv['time-scale'], home: argv.home, log, announce, rotctldPort, announceRotctld, driver, serial, baud, traceSerial, scanDb: argv['scan-db'] });
    const shutdown = (signal: string) => {
      process.stdout.write(`positioner: ${signal}, stopping motors and closing\n`);
      void running.close().then(() => process.exit(0));
    };
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'CLI_ERR_CONFIG_FILE') fail(err.message, EXIT.usage);
    if (err.code === 'EADDRINUSE' && rotctldPort !== undefined && (err as { port?: number }).port === rotctldPort && rotctldPort !== port) {
      fail(`${host}:${rotctldPort} is already in use (is a rotctld running?); choose another port with --rotctld PORT`, EXIT.failed);
    }
    if (err.code === 'EADDRINUSE') fail(`${host}:${port} is already in use; choose another port with --port or PORT`, EXIT.failed);
    if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') fail(`cannot listen on host '${host}'; use an address of this machine (--host or HOST)`, EXIT.usage);
    throw e;
  }
}

/** A bad argument found by our own checks: a usage error (exit 2), like yargs' own. */
class UsageError extends Error {}

/** Options and positionals typed `number`: yargs turns text that is not a number into NaN. */
const NUMERIC_ARGS = ['theta', 'phi', 'd_theta', 'd_phi', 'speed', 'accel', 'timeout', 'time-scale', 'baud'] as const;

/** Rejects NaN (`move abc 3`) before it reaches the positioner as `null`, and non-positive time values. */
function checkNumbers(argv: Record<string, unknown>): true {
  // `scan --theta 0:180:5` takes ranges, checked by cli/scan-command.ts.
  const scan = (argv._ as unknown[] | undefined)?.[0] === 'scan';
  for (const name of NUMERIC_ARGS) {
    if (scan && (name === 'theta' || name === 'phi')) continue;
    const v = argv[name];
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v))) throw new UsageError(`${name} must be a number`);
  }
  for (const name of ['timeout', 'time-scale', 'baud'] as const) {
    const v = argv[name];
    if (typeof v === 'number' && !(v > 0)) throw new UsageError(`--${name} must be a positive number, got ${v}`);
  }
  return true;
}

/**
 * `move-rel -- -5 3`: yargs does not fill a command's positionals from the
 * words after `--`. yargs-parser already reads `-5` as a number, not a flag,
 * so when only numbers follow `--` it means the same without it.
 */
function dropDashDashBeforeNumbers(args: string[]): string[] {
  const i = args.indexOf('--');
  const rest = args.slice(i + 1);
  const number = /^-?([0-9]+(\.[0-9]+)?|\.[0-9]+)$/;
  return i >= 0 && rest.length > 0 && rest.every((a) => number.test(a)) ? [...args.slice(0, i), ...rest] : args;
}

/** Edit distance with transpositions (optimal string alignment): `--sped` is 1 from `--speed`, `--wiat` 1 from `--wait`. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * yargs' strict mode says "Unknown argument: sped" and suggests only
 * commands; this adds the nearest option of the command ("Did you mean
 * --speed?"), when one is close (at most 2 edits, and fewer than half the word).
 */
function withSuggestions(msg: string, y: Argv | null): string {
  const unknown = /^Unknown arguments?: (.+)$/.exec(msg);
  if (!unknown || !y) return msg;
  const options = Object.keys((y as unknown as { getOptions(): { key: Record<string, unknown> } }).getOptions().key).filter((k) => k.length > 1 && k !== '$0');
  const hints: string[] = [];
  for (const word of unknown[1].split(', ')) {
    const bare = word.replace(/^-+/, '');
    let best: { name: string; distance: number } | null = null;
    for (const name of options) {
      const distance = editDistance(bare, name);
      if (!best || distance < best.distance) best = { name, distance };
    }
    if (best && best.distance <= 2 && best.distance < bare.length / 2) hints.push(`--${best.name}`);
  }
  return hints.length > 0 ? `${msg}. Did you mean ${hints.join(', ')}?` : msg;
}

export function main(args: string[]): Promise<unknown> | unknown {
  // The parser of the command being run (its options), for "did you mean": a middleware that runs before validation sees it.
  let current: Argv | null = null;
  return yargs(dropDashDashBeforeNumbers(args))
    .middleware(
      ((_argv: unknown, y: unknown) => {
        current = y as Argv;
      }) as never,
      true,
    )
    .scriptName('positioner')
    .usage('$0 <command> [options]\n\nTwo-axis (theta/phi) positioner: run the firmware in simulation, or drive a running positioner.')
    .option('host', { type: 'string', describe: 'positioner base URL for client commands (default: $POSITIONER_HOST or http://127.0.0.1:8080)' })
    .option('json', { type: 'boolean', default: false, describe: 'print the API response as JSON' })
    .option('timeout', { type: 'number', default: 5, describe: 'seconds to wait for each HTTP answer' })
    .command(
      'serve',
      'run the positioner firmware (simulated, or on a board over USB serial) and serve its REST API',
      (y) =>
        y
          .option('host', { type: 'string', describe: 'address to listen on (default: $HOST or 127.0.0.1)' })
          .option('port', { alias: 'p', type: 'number', describe: 'port to listen on (default: $PORT or 8080; 0 picks a free one)' })
          .option('config', { alias: 'c', type: 'string', describe: 'JSON config file (see README: Configuration)' })
          .option('time-scale', { type: 'number', default: 1, describe: 'run simulated time this many times faster than real time' })
          .option('home', { type: 'boolean', default: false, describe: 'home both axes as the server starts' })
          .option('driver', { choices: ['sim', 'grbl', 'firmata'] as const, describe: 'hardware: the simulation (default), or a grbl or Firmata board on --serial' })
          .option('serial', { type: 'string', describe: 'serial device of the board, e.g. /dev/ttyUSB0 (with --driver grbl|firmata)' })
          .option('baud', { type: 'number', describe: 'serial baud rate (default 115200: grbl 1.1 and ConfigurableFirmata 3.x; 57600 for a 2.x Firmata build)' })
          .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'do not log state changes' })
          .option('trace-serial', { type: 'boolean', default: false, describe: 'print every chunk written to and read from the board on stderr (text, or hex for Firmata)' })
          .option('scan-db', { type: 'string', describe: 'SQLite file keeping scans and their results (default: $POSITIONER_SCAN_DB or ./positioner-scans.db, created at the first scan)' })
          .option('rotctld', { type: 'string', describe: `also serve the Hamlib rotctld protocol (Gpredict, rotctl -m 2) on this TCP port; alone: ${ROTCTLD_DEFAULT_PORT}` }),
      (argv) => serve(argv),
    )
    .command(
      'grbl-setup',
      'read a grbl board\'s $$ settings against what the config needs; --write sends the differing ones (send-response) and verifies',
      (y) =>
        y
          .option('serial', { type: 'string', demandOption: true, describe: 'serial device of the grbl board, e.g. /dev/ttyUSB0' })
          .option('baud', { type: 'number', default: 115200, describe: 'serial baud rate' })
          .option('config', { alias: 'c', type: 'string', describe: 'JSON config file (default: the built-in config)' })
          .option('write', { type: 'boolean', default: false, describe: 'send the settings that differ, one at a time, then read them back' }),
      (argv) => grblSetupCommand(argv),
    )
    .command(
      'status',
      'show position, state and homing',
      (y) => y.option('watch', { type: 'boolean', default: false, describe: 'keep polling (4 times a second) and print each change until Ctrl-C; with --json, one JSON object per line' }),
      async (argv) => {
        const api = client(argv);
        if (!argv.watch) {
          const s = await api.get<StatusBody>('/status');
          return print(argv, s, describeStatus(s));
        }
        await watchStatus(api, argv);
      },
    )
    .command(
      'move <theta> <phi>',
      'move to an absolute position (degrees)',
      (y) => withWait(y.positional('theta', { type: 'number', demandOption: true, describe: 'polar angle 0..180' }).positional('phi', { type: 'number', demandOption: true, describe: 'azimuth 0..360' })),
      (argv) => moveCommand(argv, '/move', { theta_deg: argv.theta, phi_deg: argv.phi }),
    )
    .command(
      'move-rel <d_theta> <d_phi>',
      'move by signed offsets from the current position (degrees)',
      (y) => withWait(y.positional('d_theta', { type: 'number', demandOption: true }).positional('d_phi', { type: 'number', demandOption: true })),
      (argv) => moveCommand(argv, '/move/relative', { d_theta: argv.d_theta, d_phi: argv.d_phi }),
    )
    .command(
      'home [axis]',
      'home an axis (theta, phi or both) against its switch',
      (y) => withWait(y.positional('axis', { choices: ['theta', 'phi', 'both'] as const, default: 'both' as const })),
      async (argv) => {
        const api = client(argv);
        const r = await api.post<{ status: string; axis: string }>('/home', { axis: argv.axis });
        if (!argv.wait) return print(argv, r, `${r.status} ${r.axis}`);
        const start = await api.get<StatusBody>('/status');
        await waitForEnd(api, argv, `home ${r.axis}`, start);
      },
    )
    .command(scanCommand({ client, fail, exit: EXIT }) as unknown as CommandModule)
    .command('stop', 'stop all motors at once', (y) => y, async (argv) => {
      const r = await client(argv).post<{ status: string }>('/stop');
      print(argv, r, r.status);
    })
    .command(
      'config',
      'show the motion configuration, or change speed (deg/s) and accel (deg/s^2)',
      (y) => y.option('speed', { type: 'number', describe: 'new speed, deg/s' }).option('accel', { type: 'number', describe: 'new acceleration, deg/s^2' }),
      async (argv) => {
        const api = client(argv);
        const update: Record<string, number> = {};
        if (argv.speed !== undefined) update.speed = argv.speed;
        if (argv.accel !== undefined) update.accel = argv.accel;
        const r = Object.keys(update).length > 0 ? await api.post<Record<string, unknown>>('/config', update) : await api.get<Record<string, unknown>>('/config');
        print(argv, r, Object.entries(r).map(([k, v]) => `${k}: ${v}`).join('\n'));
      },
    )
    .demandCommand(1, 'name a command: serve, status, move, move-rel, home, stop, config or scan')
    .check(checkNumbers)
    .strict()
    .recommendCommands()
    .fail((msg, err, y) => {
      if (err && !(err instanceof UsageError)) {
        if (err instanceof ClientError) fail(describeClientError(err), err.status === 0 ? EXIT.unreachable : EXIT.failed);
        fail(err.message, EXIT.failed);
      }
      process.stderr.write(`${y.help()}\n`);
      fail(withSuggestions(msg, current), EXIT.usage);
    })
    .help()
    .alias('help', 'h')
    .version()
    .wrap(Math.min(100, process.stdout.columns || 100))
    .parseAsync();
}

if (require.main === module) {
  Promise.resolve(main(process.argv.slice(2))).catch((e: unknown) => {
    if (e instanceof ClientError) fail(describeClientError(e), e.status === 0 ? EXIT.unreachable : EXIT.failed);
    fail(e instanceof Error ? e.message : String(e), EXIT.failed);
  });
}
