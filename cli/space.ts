#!/usr/bin/env node
/**
 * `space`: the notifications and space-events service (seed 002).
 *
 *   space [serve]        serve the API (PORT, HOST, DATABASE_PATH, VAPID_*, ... from the environment; flags win)
 *   space vapid-keys     print a new VAPID key pair to put in VAPID_PUBLIC_KEY / VAPID_PRIVATE_KEY
 *
 * `serve` is the default command, so `npm run space` (no arguments) serves
 * and `npm run --silent space -- vapid-keys` reaches the other command.
 *
 * Exit codes: 0 done; 1 the service failed (port in use, database unusable);
 * 2 usage or configuration error.
 */
import yargs from 'yargs';
import { useColor } from './progress';

const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

function fail(message: string, code: number): never {
  const red = useColor(process.stderr) ? (s: string) => `\x1b[31m${s}\x1b[0m` : (s: string) => s;
  process.stderr.write(`${red('error:')} ${message}\n`);
  process.exit(code);
}

async function serve(argv: { host?: string; port?: number; database?: string; quiet: boolean }): Promise<void> {
  // Loaded here so `space vapid-keys` and `--help` do not open native modules.
  const { configFromEnv, ConfigError } = require('../api/space/config') as typeof import('../api/space/config');
  const { startSpaceService } = require('../api/space/serve') as typeof import('../api/space/serve');
  const { SchemaTooNewError } = require('../api/space/db') as typeof import('../api/space/db');
  let config;
  try {
    config = configFromEnv(process.env);
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message, EXIT.usage);
    throw e;
  }
  if (argv.host !== undefined) config.host = argv.host;
  if (argv.port !== undefined) {
    if (!Number.isInteger(argv.port) || argv.port < 0 || argv.port > 65535) fail(`--port must be a whole number from 0 to 65535, got '${argv.port}'`, EXIT.usage);
    config.port = argv.port;
  }
  if (argv.database !== undefined) config.databasePath = argv.database;
  const log = argv.quiet ? () => {} : (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  let service;
  try {
    service = await startSpaceService(config, { log });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EADDRINUSE') fail(`${config.host}:${config.port} is already in use; choose another port with --port or PORT`, EXIT.failed);
    if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') fail(`cannot listen on host '${config.host}'; use an address of this machine (--host or HOST)`, EXIT.usage);
    if (err instanceof SchemaTooNewError) fail(err.message, EXIT.failed);
    if (err.code === 'SQLITE_CANTOPEN' || err.code === 'EACCES' || err.code === 'SQLITE_NOTADB') {
      fail(`cannot use the database '${config.databasePath}' (${err.message}); set DATABASE_PATH or --database to a writable SQLite file`, EXIT.failed);
    }
    throw e;
  }
  process.stdout.write(`space service serving ${service.url} (database ${config.databasePath}, push ${config.vapid ? 'configured' : 'not configured: set VAPID_* keys'})\n`);
  log(`live feed: ws${service.url.slice(4)}/api/notifications/ws`);
  const stop = () => {
    log('shutting down');
    void service.close().then(() => process.exit(EXIT.ok));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function vapidKeys(argv: { json: boolean }): void {
  const { generateVapidKeys } = require('../api/space/push') as typeof import('../api/space/push');
  const k = generateVapidKeys();
  if (argv.json) {
    process.stdout.write(`${JSON.stringify({ public_key: k.publicKey, private_key: k.privateKey })}\n`);
    return;
  }
  process.stdout.write(`VAPID_PUBLIC_KEY=${k.publicKey}\nVAPID_PRIVATE_KEY=${k.privateKey}\nVAPID_SUBJECT=mailto:you@example.org\n`);
  if (process.stderr.isTTY) process.stderr.write('Put these in the service environment; keep the private key secret. Changing keys invalidates every subscription.\n');
}

async function main(): Promise<void> {
  await yargs(process.argv.slice(2))
    .scriptName('space')
    .usage('$0 <command> [options]')
    .command(
      ['serve', '$0'],
      'serve the notifications and space-events API (default http://127.0.0.1:8090)',
      (y) =>
        y
          .option('host', { type: 'string', describe: 'address to listen on (default HOST or 127.0.0.1)' })
          .option('port', { type: 'number', describe: 'port (default PORT or 8090; 0 picks a free one)' })
          .option('database', { type: 'string', describe: 'SQLite file (default DATABASE_PATH or ./space.db)' })
          .option('quiet', { type: 'boolean', default: false, describe: 'no log lines on stderr' }),
      (argv) => serve(argv),
    )
    .command('vapid-keys', 'generate a VAPID key pair for Web Push', (y) => y.option('json', { type: 'boolean', default: false, describe: 'print JSON' }), (argv) => vapidKeys(argv))
    .strict()
    .fail((msg, err, y) => {
      if (err) fail(err.message, EXIT.failed);
      process.stderr.write(`${y.help()}\n`);
      fail(msg, EXIT.usage);
    })
    .help()
    .version()
    .parseAsync();
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e), EXIT.failed));
