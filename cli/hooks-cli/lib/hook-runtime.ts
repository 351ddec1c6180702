/**
 * What every hook does around its own work: a deadline
 * (`max_hook_execution_time`, after which the hook exits 0 so it never
 * holds the host up), reading and normalising stdin, finding the project
 * (`CLAUDE_PROJECT_DIR`, the input's `cwd`, or the working directory) and
 * the install root (the folder above `hooks/`), loading the settings, and
 * turning any failure into a logged message and exit 0: only a deliberate
 * block may stop a tool call.
 */
import fs from 'node:fs';
import path from 'node:path';
import { deliver, InputError, parseHookInput, readStdin, type HookAnswer, type HookInput } from './protocol';
import { loadSettingsOrDefaults } from './settings';
import type { Settings } from './settings-schema';
import { appendText, dataPaths, ensureTree, notices, setDefaultLockWaitMs, type DataPaths } from './store';

export interface HookContext {
  input: HookInput;
  settings: Settings;
  paths: DataPaths;
  installRoot: string;
  /** The hook file the host ran (`<root>/hooks/<name>.js`): its helpers sit beside it. */
  hookFile: string;
  now: Date;
  /** Milliseconds left before the deadline. */
  remainingMs(): number;
  log(level: LogLevel, message: string): void;
}

export type LogLevel = 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR';
const LEVELS: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40 };

export function projectDir(input: HookInput | null): string {
  const fromEnv = process.env.CLAUDE_PROJECT_DIR;
  if (fromEnv && path.isAbsolute(fromEnv)) return fromEnv;
  if (input?.cwd && path.isAbsolute(input.cwd)) return input.cwd;
  return process.cwd();
}

/** The install root of a bundled hook: `<root>/hooks/<name>.js`. HOOKS_CLI_ROOT overrides. */
export function installRootOf(hookFile: string): string {
  return process.env.HOOKS_CLI_ROOT || path.resolve(path.dirname(hookFile), '..');
}

/**
 * The inputs a code-cache warm-up runs (build-hooks.ts's loader sets this global just before it writes the
 * bundle's V8 code cache): host inputs without session, transcript and cwd, which the warm-up fills in.
 */
export type WarmUpInput = Record<string, unknown>;
export interface WarmUp {
  inputs: readonly WarmUpInput[];
  /** Read stdin first, as a run does (`--write-code-cache`; not when the loader warms up in a run's exit). */
  readStdin: boolean;
}
declare global {
  // eslint-disable-next-line no-var
  var __hooksCliWarmUp: WarmUp | undefined;
}

let warming = false;

/** True while a code-cache warm-up runs: nothing may leave its scratch project (no detached processes). */
export function warmingUp(): boolean {
  return warming;
}

export function runHook(name: string, defaultEvent: string, hookFile: string, handler: (ctx: HookContext) => HookAnswer): void {
  const warm = globalThis.__hooksCliWarmUp;
  if (warm !== undefined) {
    if (!warm.readStdin) return warmUp(name, defaultEvent, hookFile, handler, warm.inputs);
    const text = readStdin();
    if (typeof text === 'string') return warmUp(name, defaultEvent, hookFile, handler, warm.inputs);
    text.then(
      () => warmUp(name, defaultEvent, hookFile, handler, warm.inputs),
      () => warmUp(name, defaultEvent, hookFile, handler, warm.inputs),
    );
    return;
  }
  const started = Date.now();
  // The host always sets CLAUDE_PROJECT_DIR: then the project, so its settings and time budget, are known
  // before stdin arrives, and the user's budget covers the whole run (on a busy machine a hook can spend
  // seconds just starting); without it, 5 s until the input names the project.
  // projectDir() gives the variable precedence over the input, so these are the settings used below: loaded once.
  const installRoot = installRootOf(hookFile);
  const early = earlySettings(installRoot);
  const text = readStdin();
  // The whole input was there (the usual case): the run is synchronous from here to its exit, so no timer could
  // fire before it ends and none is armed.
  if (typeof text === 'string') return deliver(answerInput(name, defaultEvent, hookFile, handler, installRoot, early, started, text));
  const timer = setTimeout(() => timeout(name), early ? early.settings.performance.max_hook_execution_time : 5000);
  timer.unref();
  text.then(
    (input) => deliver(answerInput(name, defaultEvent, hookFile, handler, installRoot, early, started, input)),
    (err: Error) => deliver({ exitCode: 0, stderr: `hooks-cli ${name}: ${err.message}\n` }),
  );
}

type Early = { project: string; settings: Settings; problem: string | null } | null;

function earlySettings(installRoot: string): Early {
  const envProject = process.env.CLAUDE_PROJECT_DIR;
  return envProject && path.isAbsolute(envProject) ? { project: envProject, ...loadSettingsOrDefaults(installRoot, envProject) } : null;
}

/** One run's answer to the input `text`: everything a hook run does after reading stdin, but exiting. */
function answerInput(name: string, defaultEvent: string, hookFile: string, handler: (ctx: HookContext) => HookAnswer, installRoot: string, early: Early, started: number, text: string): HookAnswer {
  let input: HookInput;
  try {
    input = parseHookInput(text, defaultEvent);
  } catch (err) {
    return { exitCode: 0, stderr: `hooks-cli ${name}: ${(err as InputError).message}; nothing done\n` };
  }
  const project = projectDir(input);
  const { settings, problem } = early?.project === project ? early : loadSettingsOrDefaults(installRoot, project);
  const budgetMs = settings.performance.max_hook_execution_time;
  // Waiting for a lock may take most of the budget (a loaded machine); going ahead without it loses updates.
  setDefaultLockWaitMs(Math.max(200, budgetMs - (Date.now() - started) - 500));
  // From here on the run is synchronous and ends in deliver(), which exits: no timer could fire before that
  // (re-arming one for this budget cost a clear and a set every run), so the handler keeps to the budget
  // itself, through remainingMs() (backups) and the lock wait above.
  const paths = dataPaths(project);
  const minLevel = LEVELS[settings.logging.log_level];
  const log = (level: LogLevel, message: string) => {
    if (LEVELS[level] < minLevel) return;
    try {
      appendText(paths.hookLog, `${new Date().toISOString()} ${level} ${name}: ${message}\n`);
    } catch {
      /* logging must never break a hook */
    }
  };
  let answer: HookAnswer;
  try {
    ensureTree(paths);
    if (problem) log('ERROR', problem);
    answer = handler({
      input,
      settings,
      paths,
      installRoot,
      hookFile,
      now: new Date(),
      remainingMs: () => budgetMs - (Date.now() - started),
      log,
    });
  } catch (err) {
    const e = err as Error;
    log('ERROR', settings.logging.detailed_errors ? e.stack ?? e.message : e.message);
    answer = { exitCode: 0, stderr: `hooks-cli ${name}: ${e.message}\n` };
  }
  for (const n of notices) log('WARNING', n);
  if (problem) answer = { ...answer, stderr: `${answer.stderr ?? ''}hooks-cli ${name}: ${problem}\n` };
  log('DEBUG', `done in ${Date.now() - started} ms (exit ${answer.exitCode})`);
  return answer;
}

/**
 * Runs the hook on `inputs` in a scratch project (a temporary folder, deleted after; backups off; no
 * detached process started) and returns: the loader then writes the code cache, which so holds the
 * functions these typical runs compile whatever run happened to come first (build-hooks.ts, WARM_UP).
 * Answers are thrown away; nothing is read from stdin or written to stdout.
 */
function warmUp(name: string, defaultEvent: string, hookFile: string, handler: (ctx: HookContext) => HookAnswer, inputs: readonly WarmUpInput[]): void {
  const os = require('node:os') as typeof import('node:os');
  const savedProject = process.env.CLAUDE_PROJECT_DIR;
  let dir: string | null = null;
  warming = true;
  try {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hooks-cli-warm-up-')));
    fs.mkdirSync(path.join(dir, '.hooks_data'));
    fs.writeFileSync(path.join(dir, '.hooks_data', 'settings.json'), JSON.stringify({ backup_manager: { backup_on_critical_ops: false, git_enabled: false, filesystem_backup_enabled: false } }));
    process.env.CLAUDE_PROJECT_DIR = dir;
    const installRoot = installRootOf(hookFile);
    const early = earlySettings(installRoot);
    for (const fields of inputs) {
      const text = JSON.stringify({ session_id: 'warm-up', transcript_path: path.join(dir, 'transcript.jsonl'), cwd: dir, permission_mode: 'default', ...fields });
      try {
        answerInput(name, defaultEvent, hookFile, handler, installRoot, early, Date.now(), text);
      } catch {
        /* a warm-up only compiles */
      }
    }
  } catch {
    /* no scratch folder: the cache holds what ran */
  } finally {
    warming = false;
    if (savedProject === undefined) delete process.env.CLAUDE_PROJECT_DIR;
    else process.env.CLAUDE_PROJECT_DIR = savedProject;
    if (dir !== null) fs.rmSync(dir, { recursive: true, force: true });
  }
}

interface ProcessHandle {
  spawn(options: Record<string, unknown>): number;
  unref(): void;
  onexit: (() => void) | null;
}

/**
 * Through `/bin/sh` where there is one: wait a moment (the hook's exit), then run the command at the lowest
 * priority. The delay matters more than the priority: Node's own start-up (about 45 ms of CPU) run while the
 * hook was still exiting made the answer end 1.15x bare Node instead of 1.08x (measured with /bin/true in
 * its place), even at nice 19.
 */
const DELAYED_LOW_PRIORITY = 'sleep 0.2 2>/dev/null || sleep 1; if command -v nice >/dev/null 2>&1; then exec nice -n 19 "$@"; fi; exec "$@"';

/**
 * Starts `node <file> ...args` a moment after the hook exits and at the
 * lowest CPU priority (DELAYED_LOW_PRIORITY, where there is a /bin/sh), so it
 * takes no CPU the hook or the host want, in the hook's own session: Linux's autogroup scheduling gives a new
 * session (setsid, `detached`) a CPU share of its own whatever its nice
 * value, which measurably slowed the hook's last milliseconds on a loaded
 * two-core machine. With stdin, stdout and stderr on /dev/null,
 * and does not wait for it: the host waits for a hook's exit and for its
 * stdout and stderr to close, and this child holds neither (every other
 * descriptor Node opens is close-on-exec). Through libuv's process handle
 * directly (Node's `process_wrap` binding, what child_process.spawn calls
 * underneath in lib/internal/child_process.js `ChildProcess.prototype.spawn`),
 * which spares loading child_process with net and streams (about 1 ms of a
 * hook's start-up); child_process.spawn when the binding is not there.
 * Returns false when no process could be started; true, starting nothing, during a code-cache warm-up.
 */
export function spawnDetached(file: string, args: string[], cwd: string): boolean {
  if (warming) return true; // as if started: a warm-up neither starts one nor does the work in its place
  const node = [process.execPath, file, ...args];
  const argv = fs.existsSync('/bin/sh') ? ['/bin/sh', '-c', DELAYED_LOW_PRIORITY, path.basename(file, '.js'), ...node] : node;
  try {
    const binding = (process as unknown as { binding(name: string): { Process?: new () => ProcessHandle } }).binding('process_wrap');
    if (typeof binding.Process === 'function') {
      const handle = new binding.Process();
      handle.onexit = () => undefined;
      const envPairs = Object.entries(process.env).map(([k, v]) => `${k}=${v}`);
      const ignore = { type: 'ignore' };
      const err = handle.spawn({ file: argv[0], args: argv, cwd, envPairs, stdio: [ignore, ignore, ignore], detached: false, windowsHide: true, windowsVerbatimArguments: false });
      if (err === 0) {
        handle.unref();
        return true;
      }
    }
  } catch {
    /* the fallback below */
  }
  try {
    const cp = require('node:child_process') as typeof import('node:child_process');
    const child = cp.spawn(argv[0], argv.slice(1), { cwd, stdio: 'ignore', windowsHide: true });
    child.on('error', () => undefined);
    child.unref();
    return child.pid !== undefined;
  } catch {
    return false;
  }
}

function timeout(name: string): void {
  fs.writeSync(2, `hooks-cli ${name}: gave up after max_hook_execution_time; nothing blocked\n`);
  process.exit(0);
}
