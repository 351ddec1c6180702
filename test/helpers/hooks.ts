/**
 * Test helpers for hooks-cli: a fresh install root per test file (config/
 * copied, the four hooks and the CLI bundled from the TypeScript sources as
 * `npm run build` does, so tests never depend on dist/), temporary projects
 * (optionally git repositories) and a temporary HOME, and runners that start
 * a hook or the CLI as a real child process with real stdin.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { bundleHooks, bundleModule, generatedModules, sourceRoot } from '../../cli/hooks-cli/build-hooks';

const REPO = path.resolve(__dirname, '..', '..');

export interface Install {
  root: string;
  cli: string;
  hook(name: HookName): string;
}

export type HookName = 'context-monitor' | 'command-validator' | 'session-logger' | 'session-finalizer';

export function tempDir(t: Test, prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  t.teardown(() => {
    makeWritable(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

function makeWritable(dir: string): void {
  try {
    fs.chmodSync(dir, 0o755);
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) makeWritable(path.join(dir, e.name));
  } catch {
    /* best effort */
  }
}

/** Builds an install root: <tmp>/config, <tmp>/hooks/*.js, <tmp>/hooks-cli.js (with node_modules linked for yargs). */
export function buildInstall(t: Test): Install {
  const root = tempDir(t, 'hooks-cli-install-');
  fs.cpSync(path.join(REPO, 'cli', 'hooks-cli', 'config'), path.join(root, 'config'), { recursive: true });
  bundleHooks(path.join(root, 'hooks'));
  fs.writeFileSync(path.join(root, 'hooks-cli.js'), bundleModule(sourceRoot(), 'hooks-cli.ts', generatedModules()));
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(root, 'node_modules'), 'junction');
  return { root, cli: path.join(root, 'hooks-cli.js'), hook: (name) => path.join(root, 'hooks', `${name}.js`) };
}

export interface Project {
  dir: string;
  home: string;
  data: string;
  env(extra?: Record<string, string | undefined>): NodeJS.ProcessEnv;
  git(...args: string[]): string;
  write(rel: string, text: string): void;
  read(rel: string): string;
  /** Writes `.hooks_data/settings.json` with these groups (merged over the install's). */
  settings(groups: Record<string, Record<string, unknown>>): void;
}

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.invalid', GIT_CONFIG_NOSYSTEM: '1' };

/** A temporary project (and HOME); with `git`, a repository with one commit on `main`. */
export function tempProject(t: Test, opts: { git?: boolean; files?: Record<string, string> } = {}): Project {
  const base = tempDir(t, 'hooks-cli-project-');
  const dir = path.join(base, 'home', 'project');
  const home = path.join(base, 'home');
  fs.mkdirSync(dir, { recursive: true });
  const env = (extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv => {
    const e: NodeJS.ProcessEnv = { ...process.env, ...GIT_ENV, HOME: home, CLAUDE_PROJECT_DIR: dir };
    for (const k of ['NO_COLOR', 'FORCE_COLOR', 'HOOKS_CLI_ROOT', 'GIT_INDEX_FILE', 'GIT_DIR']) delete e[k];
    for (const [k, v] of Object.entries(extra)) {
      if (v === undefined) delete e[k];
      else e[k] = v;
    }
    return e;
  };
  const git = (...args: string[]) => {
    const r = spawnSync('git', args, { cwd: dir, env: env(), encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  };
  for (const [rel, text] of Object.entries(opts.files ?? { 'README.md': '# demo\n', 'src/app.js': 'console.log(1)\n' })) write(rel, text);
  if (opts.git) {
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'initial');
  }
  return {
    dir,
    home,
    data: path.join(dir, '.hooks_data'),
    env,
    git,
    write,
    read: (rel) => fs.readFileSync(path.join(dir, rel), 'utf8'),
    settings: (groups) => {
      fs.mkdirSync(path.join(dir, '.hooks_data'), { recursive: true });
      fs.writeFileSync(path.join(dir, '.hooks_data', 'settings.json'), JSON.stringify(groups));
    },
  };
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, or undefined. */
  json: any;
}

const parse = (s: string) => {
  try {
    return s.trim() ? JSON.parse(s) : undefined;
  } catch {
    return undefined;
  }
};

/** Runs `node <file> ...args` with `stdin` written and closed; killed after `timeoutMs`. */
export function runNode(file: string, args: string[], opts: { stdin?: string; env: NodeJS.ProcessEnv; cwd: string; timeoutMs?: number; closeStdin?: boolean }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, ...args], { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, json: parse(stdout) });
    });
    child.stdin.on('error', () => undefined);
    if (opts.stdin !== undefined) child.stdin.write(opts.stdin);
    if (opts.closeStdin !== false) child.stdin.end();
  });
}

export function runHook(inst: Install, name: HookName, project: Project, input: unknown, extraEnv: Record<string, string | undefined> = {}): Promise<RunResult> {
  return runNode(inst.hook(name), [], {
    stdin: typeof input === 'string' ? input : JSON.stringify(input),
    env: project.env(extraEnv),
    cwd: project.dir,
  });
}

export function runCli(inst: Install, project: Project, args: string[], extraEnv: Record<string, string | undefined> = {}, stdin?: string): Promise<RunResult> {
  return runNode(inst.cli, args, { env: project.env(extraEnv), cwd: project.dir, stdin });
}

/** Host-shaped (Claude Code) input for an event. */
export function hostInput(project: Project, event: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { session_id: 'sess-1', transcript_path: path.join(project.home, 'transcript.jsonl'), cwd: project.dir, permission_mode: 'default', hook_event_name: event, ...fields };
}

export function readJsonFile(file: string): any {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}
