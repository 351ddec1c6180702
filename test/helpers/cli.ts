/**
 * Test helpers for the `positioner` CLI run as real child processes.
 *
 * The CLI is built from the TypeScript sources into a directory of its own:
 * cli/positioner.ts and every module it imports, transpiled with the
 * repository's compiler options (no type check: `npm test` type-checks
 * first). The tests then never depend on whether dist/ exists or is stale,
 * and never race anyone else writing dist/. The build is cached in the
 * system's temporary folder under a hash of every source file and the
 * tsconfig, so the test files of one run (and later runs on unchanged
 * sources) share one build instead of each transpiling its own copy; a
 * build is written to a scratch folder and renamed into place, so parallel
 * test processes never see half of one.
 *
 * Every child is tracked: a test's teardown kills what it started, and a
 * process 'exit' hook kills anything left. Servers also get a small preload
 * that exits when their parent is gone, so a test process that dies hard (a
 * tap timeout, SIGKILL) leaves no server holding a port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import type { Test } from 'tap';

const REPO = path.resolve(__dirname, '..', '..');

export interface BuiltCli {
  /** The compiled entry point, run as `node <entry> ...`. */
  entry: string;
  /** Preload: end the process when its parent (the test process) is gone. */
  watchdog: string;
  /** Preload: make process.stderr claim to be a terminal, to see colours a TTY would get. */
  fakeTty: string;
  dir: string;
}

function resolveImport(fromFile: string, spec: string): string {
  const base = path.resolve(path.dirname(fromFile), spec);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts'), base.replace(/\.js$/, '.ts'), `${base}.d.ts`]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  throw new Error(`cannot resolve '${spec}' imported by ${fromFile}`);
}

/** Source folders whose files can be part of a CLI build. */
const SOURCE_DIRS = ['cli', 'api', 'firmware', 'hal', 'sim', 'registry-proto'];

/**
 * A hash of every TypeScript source a CLI can import, the tsconfig and the
 * package.json, and of this checkout's path: a build links to its checkout's
 * node_modules, so another clone of the same sources builds its own (a build
 * reused from a clone since deleted could not find yargs).
 */
function sourcesHash(): string {
  const hash = crypto.createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(full);
      } else if (entry.name.endsWith('.ts')) {
        hash.update(path.relative(REPO, full)).update('\0').update(fs.readFileSync(full)).update('\0');
      }
    }
  };
  for (const dir of SOURCE_DIRS) walk(path.join(REPO, dir));
  for (const file of ['tsconfig.json', 'package.json']) hash.update(fs.readFileSync(path.join(REPO, file)));
  hash.update(REPO);
  return hash.digest('hex').slice(0, 16);
}

/** cli/<name>.ts (default `positioner`) and its local imports, transpiled (or taken from the cache of an identical build). */
export function buildCli(t: Test, name = 'positioner'): BuiltCli {
  const cacheRoot = path.join(os.tmpdir(), 'positioner-cli-builds');
  const dir = path.join(cacheRoot, `${name}-${sourcesHash()}`);
  const built = (): BuiltCli => ({ entry: path.join(dir, 'cli', `${name}.js`), watchdog: path.join(dir, 'test-watchdog.cjs'), fakeTty: path.join(dir, 'test-fake-tty.cjs'), dir });
  if (fs.existsSync(path.join(dir, 'complete'))) return built();
  fs.mkdirSync(cacheRoot, { recursive: true });
  const scratch = fs.mkdtempSync(path.join(cacheRoot, `.${name}-`));
  try {
    transpileCli(name, scratch);
    fs.writeFileSync(path.join(scratch, 'complete'), '');
    fs.renameSync(scratch, dir);
  } catch (e) {
    fs.rmSync(scratch, { recursive: true, force: true });
    // Another test process finished the same build first: use it.
    if (!fs.existsSync(path.join(dir, 'complete'))) throw e;
  }
  void t;
  return built();
}

function transpileCli(name: string, dir: string): void {
  // Loaded only on a cache miss: it costs half a second.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ts = require('typescript') as typeof import('typescript');
  const config = ts.readConfigFile(path.join(REPO, 'tsconfig.json'), ts.sys.readFile);
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, REPO);
  const compilerOptions = { ...options, sourceMap: false, inlineSourceMap: false, declaration: false };

  // The layout of the package: bare imports (yargs, express, ajv) resolve through
  // its node_modules, and yargs finds --version in its package.json.
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'junction');
  fs.copyFileSync(path.join(REPO, 'package.json'), path.join(dir, 'package.json'));

  const queue = [path.join(REPO, 'cli', `${name}.ts`)];
  const done = new Set<string>();
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (done.has(file)) continue;
    done.add(file);
    if (file.endsWith('.d.ts')) continue; // types only: nothing to run
    const source = fs.readFileSync(file, 'utf8');
    const out = ts.transpileModule(source, { compilerOptions, fileName: file, reportDiagnostics: true });
    if (out.diagnostics?.length) throw new Error(`${file}: ${ts.flattenDiagnosticMessageText(out.diagnostics[0].messageText, '\n')}`);
    const target = path.join(dir, path.relative(REPO, file)).replace(/\.ts$/, '.js');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, out.outputText);
    // detectJavaScriptImports: also follow require() calls (serve is required lazily).
    for (const imported of ts.preProcessFile(source, true, true).importedFiles) {
      if (imported.fileName.startsWith('.')) queue.push(resolveImport(file, imported.fileName));
    }
  }

  const watchdog = path.join(dir, 'test-watchdog.cjs');
  // Polls the parent rather than reading stdin: under tap's process-info loader a
  // preload that reads stdin keeps the entry module from ever running.
  fs.writeFileSync(watchdog, 'const parent = process.ppid;\nsetInterval(() => { if (process.ppid !== parent) process.exit(70); }, 500).unref();\n');
  const fakeTty = path.join(dir, 'test-fake-tty.cjs');
  fs.writeFileSync(fakeTty, "Object.defineProperty(process.stderr, 'isTTY', { value: true });\n");
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Variables the CLI reads; each test sets its own so the caller's shell cannot leak in. */
const CLI_ENV_VARS = ['POSITIONER_HOST', 'PORT', 'HOST', 'NO_COLOR', 'FORCE_COLOR', 'TERM', 'DATABASE_PATH', 'VAPID_PUBLIC_KEY', 'VAPID_PRIVATE_KEY', 'VAPID_SUBJECT', 'REGISTRY_URL', 'REGISTRY_API_KEY', 'REGISTRY_DB'];

/** The test process's environment without the CLI's variables, plus `extra` (undefined deletes). */
export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CLI_ENV_VARS) delete env[name];
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export interface CliResult {
  /** Exit code, or null when ended by a signal (including the helper's own timeout kill). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
}

export interface CliRun {
  child: ChildProcess;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  done: Promise<CliResult>;
}

export interface SpawnOptions {
  env?: NodeJS.ProcessEnv;
  /** Killed with SIGKILL after this long (the result then has code null). */
  timeoutMs?: number;
  /** Node preload scripts (-r). */
  preload?: string[];
}

/** Starts `node <cli> ...args`; the child is killed at the end of `t` if still running. */
export function spawnCli(t: Test, cli: BuiltCli, args: string[], opts: SpawnOptions = {}): CliRun {
  const nodeArgs = [...(opts.preload ?? []).flatMap((p) => ['-r', p]), cli.entry, ...args];
  const startedMs = Date.now();
  const child = spawn(process.execPath, nodeArgs, {
    env: opts.env ?? cliEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
  const done = new Promise<CliResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - startedMs });
    });
  });
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 2000);
    await done.catch(() => undefined);
    clearTimeout(killer);
  });
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

/** Runs the CLI to its end. */
export function runCli(t: Test, cli: BuiltCli, args: string[], opts: SpawnOptions = {}): Promise<CliResult> {
  return spawnCli(t, cli, args, opts).done;
}

export interface ServeRun extends CliRun {
  /** The URL from the first stdout line, e.g. http://127.0.0.1:40123. */
  url: string;
  /** host:port of the URL. */
  hostPort: string;
  port: number;
}

/**
 * Starts `positioner serve ...args` and waits for the first stdout line,
 * which names the URL it serves. Rejects with the output when the server
 * exits first or prints nothing within `timeoutMs`.
 */
export async function startServe(t: Test, cli: BuiltCli, args: string[], env: NodeJS.ProcessEnv = cliEnv(), timeoutMs = 10_000): Promise<ServeRun> {
  const run = spawnCli(t, cli, ['serve', ...args], { env, preload: [cli.watchdog], timeoutMs: 120_000 });
  const firstLine = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no line within ${timeoutMs} ms; stderr: ${run.stderr()}`)), timeoutMs);
    const onData = () => {
      const nl = run.stdout().indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      run.child.stdout!.off('data', onData);
      resolve(run.stdout().slice(0, nl));
    };
    run.child.stdout!.on('data', onData);
    void run.done.then((r) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (code ${r.code}, signal ${r.signal}) before printing its URL; stderr: ${r.stderr}`));
    });
  });
  const m = /serving (http:\/\/(\S+?):(\d+))[\s;]/.exec(firstLine);
  if (!m) throw new Error(`no URL in serve's first line: ${firstLine}`);
  return { ...run, url: m[1], hostPort: `${m[2]}:${m[3]}`, port: Number(m[3]) };
}

/**
 * A port of 127.0.0.1 that was free a moment ago (nothing listens on it now),
 * for a child process told to listen on it. Drawn at random below the
 * kernel's ephemeral range (ip_local_port_range, 32768 and up here), where
 * every `listen(0)` of the parallel tests and every outgoing connection gets
 * its port: so none of those can take it between this check and the child's
 * listen. Two draws of this function collide once in thousands, and are
 * checked free.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20000 + crypto.randomInt(12000);
    const server = net.createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!free) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }
}

/** GET or POST JSON straight to the server, to check what the CLI did without trusting it. */
export async function http(url: string, method: 'GET' | 'POST' = 'GET', body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? undefined : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Polls `check` every `everyMs` until it returns true; fails after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
