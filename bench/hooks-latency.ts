/**
 * hooks-cli: how long each hook takes, start to exit, against bare Node
 * start-up measured in the same run. The host starts a hook for every tool
 * call, so this is the cost every call pays.
 *
 * Each run spawns a process the way a Node-based host does (stdio pipes,
 * which are sockets, the JSON input written to stdin and closed) and times
 * spawn to exit. Variants are interleaved round by round, so load changes hit
 * all of them alike; the figure is each variant's median, and the ratio is
 * to `node -e 0` given the same stdin. Each variant is also run under
 * `bash -c '…; times'`, whose children's user+sys CPU time (1 ms steps) is
 * far less moved by other processes than wall time on a shared machine, and
 * once more with a preload that reports the process's own time to its exit
 * and its own CPU time (STAMP_PRELOAD; neither counts the spawn or the wait
 * for a core before the process started).
 * Two projects: an empty data directory, and a full one (a pattern database
 * of 10,000 patterns, a prediction cache, a long session state). "answer
 * end" is the finalizer run when an answer ends: the logger's runs of that
 * answer (ten) wait in the journal, the last fold was a minute ago, so the
 * finalizer starts the fold in a detached process (timed apart: how long
 * after the hook's exit the journal was folded); the bench waits for it
 * before the next run, as for the fold a logger run starts when its batch
 * schedule says fold (about every 25th run). Backups are off there.
 *
 * Then the budget check: a git project and a plain folder, each with a 1 GB
 * untracked tree (eight 120 MB files, sparse so the disk is spared, and
 * 2,000 small ones), default settings (backups on): the validator on `rm -rf
 * build` and the monitor before compaction both take a backup; each run's
 * time is printed against `max_hook_execution_time`, with what the backup
 * left out.
 *
 * Run: npm run bench:hooks   (node dist/bench/hooks-latency.js after npm run build)
 * Env: ROUNDS (30), BIG_ROUNDS (3; 0 skips the 1 GB tree), BENCH_EXTRA_CA (1: keep
 * NODE_EXTRA_CA_CERTS in the runs' environment; by default it is left out, see main)
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyRuns, buildPredictions, emptyDb, writeAllShards, writePredictionCache } from '../cli/hooks-cli/lib/learner';
import { dataPaths } from '../cli/hooks-cli/lib/store';
import { defaultSettings } from '../cli/hooks-cli/lib/settings-schema';
import { fmtMs, machineLine, percentile } from './bench-helpers';

const ROUNDS = Number(process.env.ROUNDS ?? 30);
const BIG_ROUNDS = Number(process.env.BIG_ROUNDS ?? 3);
const HOOKS = path.resolve(__dirname, '..', '..', 'cli', 'hooks-cli', 'hooks');

/** One run under bash, returning the children's user+sys CPU ms (bash's `times`, second line). */
function cpuOnce(args: string[], input: string, env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/bash', ['-c', '"$0" "$@"; times', process.execPath, ...args], { cwd, env, stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.on('error', reject);
    child.on('close', () => {
      const m = [...out.trim().split('\n').pop()!.matchAll(/(\d+)m([\d.]+)s/g)].map((x) => Number(x[1]) * 60 + Number(x[2]));
      resolve((m[0] + m[1]) * 1000);
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/**
 * Preloaded (`node -r`) in the in-process pass: at exit, the process's own time since it started
 * (performance.now()) and its own CPU time, on stderr. Neither counts the spawn, nor time the process spent
 * waiting for a core before it started, so both move far less with other work on the machine than the wall
 * time measured from outside; the preload's own cost is in every variant alike, `node -e 0` included.
 */
const STAMP_PRELOAD = `'use strict';
const { performance } = require('perf_hooks');
process.on('exit', () => {
  const u = process.cpuUsage();
  require('fs').writeSync(2, '\\nSTAMP ' + performance.now() + ' ' + (u.user + u.system) / 1000 + '\\n');
});
`;

interface Stamp {
  toExitMs: number;
  cpuMs: number;
}

/** One run with STAMP_PRELOAD; what it reported (NaN when the run printed no stamp). */
function stampOnce(stamp: string, args: string[], input: string, env: NodeJS.ProcessEnv, cwd: string): Promise<Stamp> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', stamp, ...args], { cwd, env, stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.on('error', reject);
    child.on('close', () => {
      const m = /STAMP ([\d.]+) ([\d.]+)/.exec(err);
      resolve({ toExitMs: m ? Number(m[1]) : NaN, cpuMs: m ? Number(m[2]) : NaN });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/** Spawns and times one run; stdin is a pipe (a socket, as a Node host gives) or, with `fromFile`, a file holding the input. */
function runOnce(args: string[], input: string, env: NodeJS.ProcessEnv, cwd: string, fromFile: string | null = null): Promise<number> {
  return new Promise((resolve, reject) => {
    const fd = fromFile === null ? null : fs.openSync(fromFile, 'r');
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { cwd, env, stdio: [fd ?? 'pipe', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('close', () => {
      resolve(Number(process.hrtime.bigint() - t0) / 1e6);
      if (fd !== null) fs.closeSync(fd);
    });
    if (fd === null) child.stdin!.end(input);
  });
}

function makeProject(full: boolean): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hooks-bench-')));
  const data = path.join(dir, '.hooks_data');
  for (const d of ['logs', 'patterns', 'backups']) fs.mkdirSync(path.join(data, d), { recursive: true });
  fs.writeFileSync(path.join(data, 'settings.json'), JSON.stringify({ backup_manager: { backup_on_critical_ops: false, git_enabled: false, filesystem_backup_enabled: false } }));
  if (full) {
    const db = emptyDb();
    const runs = [];
    const t = new Date().toISOString();
    for (let i = 0; i < 9_900; i++) {
      for (let k = 0; k < 3; k++) runs.push({ tool: 'Bash', command: `tool${i} sub${i % 7}`, success: (i + k) % 3 !== 0, error: (i + k) % 3 === 0 ? `error ${i}: something failed` : null, timestamp: t });
    }
    for (let i = 0; i < 100; i++) runs.push({ tool: `Tool${i}`, command: null, success: false, error: `EACCES: permission denied ${i}`, timestamp: t });
    const s = defaultSettings();
    applyRuns(db, runs, s.shadow_learner.max_patterns);
    const paths = dataPaths(dir);
    writeAllShards(paths, db);
    writePredictionCache(paths, buildPredictions(db, s.shadow_learner, Date.now()));
    const n = Object.keys(db.command_patterns).length + Object.keys(db.context_patterns).length;
    const bytes = fs.readdirSync(paths.patternShards).reduce((sum, f) => sum + fs.statSync(path.join(paths.patternShards, f)).size, 0);
    console.log(`full project: ${n} patterns, ${(bytes / 1e6).toFixed(1)} MB database in ${fs.readdirSync(paths.patternShards).length} files`);
  }
  return dir;
}

async function main(): Promise<void> {
  for (const name of ['context-monitor', 'command-validator', 'session-logger', 'session-finalizer']) {
    if (!fs.existsSync(path.join(HOOKS, `${name}.js`))) throw new Error(`${HOOKS}/${name}.js is missing: run npm run build first`);
  }
  console.log(machineLine());
  const projects = { empty: makeProject(false), full: makeProject(true) };
  const host = (project: string, event: string, fields: Record<string, unknown>) =>
    JSON.stringify({ session_id: 'bench', transcript_path: path.join(project, 'none.jsonl'), cwd: project, permission_mode: 'default', hook_event_name: event, ...fields });
  // settle: waits for what a run left running (a detached fold) before the next run; reportFold: its time is reported.
  type Variant = { name: string; args: string[]; input: string; project: string; file?: string; prepare?: () => void; settle?: () => Promise<number>; reportFold?: boolean };
  const variants: Variant[] = [];
  for (const [label, project] of Object.entries(projects)) {
    variants.push({ name: `node -e 0 (${label})`, args: ['-e', '0'], input: host(project, 'PreToolUse', {}), project });
    variants.push({ name: `context-monitor (${label})`, args: [path.join(HOOKS, 'context-monitor.js')], input: host(project, 'UserPromptSubmit', { prompt: 'Please refactor the parser and add tests.' }), project });
    variants.push({
      name: `command-validator (${label})`,
      args: [path.join(HOOKS, 'command-validator.js')],
      input: host(project, 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'cd src && npm test -- --grep parser 2>&1 | tee test.log', description: 'run tests' }, tool_use_id: 't' }),
      project,
    });
    // A line the fast path leaves to the analysis (curl and jq are not on its list): the validator's deep stage, measured too.
    variants.push({
      name: `command-validator, deep line (${label})`,
      args: [path.join(HOOKS, 'command-validator.js')],
      input: host(project, 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'curl -s http://localhost:3000/health | jq .status', description: 'check the server' }, tool_use_id: 't' }),
      project,
    });
    variants.push({
      name: `session-logger (${label})`,
      args: [path.join(HOOKS, 'session-logger.js')],
      input: host(project, 'PostToolUse', { tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_response: { stdout: 'ok 1 - parser\n'.repeat(20), stderr: '', interrupted: false }, tool_use_id: 't' }),
      project,
      // About every 25th run the batch schedule says fold, and the logger starts it detached: waited for, as at answer end.
      settle: () => foldDone(project),
    });
    variants.push({ name: `session-finalizer (${label})`, args: [path.join(HOOKS, 'session-finalizer.js')], input: host(project, 'Stop', { stop_hook_active: false }), project });
    // Answer end: the answer's tool runs (ten) wait in the journal, the last fold was a minute ago (an answer
    // takes longer than the batch schedule's 30 s), so the finalizer starts a fold, detached. Before the next run
    // the bench waits for that fold to end (it is timed apart), as the next hook of a real session comes later.
    const journal = dataPaths(project).learnJournal;
    const index = path.join(dataPaths(project).patternShards, 'index.json');
    let n = 0;
    variants.push({
      name: `finalizer, answer end (${label})`,
      args: [path.join(HOOKS, 'session-finalizer.js')],
      input: host(project, 'Stop', { stop_hook_active: false }),
      project,
      prepare: () => {
        const t = new Date().toISOString();
        const lines = Array.from({ length: 10 }, (_, i) => JSON.stringify({ tool: 'Bash', command: `answer${n++ % 500} step${i}`, success: i % 3 !== 0, error: i % 3 === 0 ? 'failed' : null, timestamp: t }));
        fs.appendFileSync(journal, lines.join('\n') + '\n');
        const minuteAgo = new Date(Date.now() - 60_000);
        if (fs.existsSync(index)) fs.utimesSync(index, minuteAgo, minuteAgo);
      },
      settle: () => foldDone(project, true),
      reportFold: true,
    });
  }
  // The same runs with stdin from a file: what the stdin-reading path costs (a socket needs process.stdin).
  for (const label of ['empty'] as const) {
    for (const v of variants.filter((x) => x.name.endsWith(`(${label})`) && /node -e 0|validator|logger/.test(x.name))) {
      const file = path.join(v.project, `${v.name.split(' ')[0]}.json`);
      fs.writeFileSync(file, v.input);
      variants.push({ ...v, name: v.name.replace(`(${label})`, '(empty, stdin file)'), file });
    }
  }
  const env = { ...process.env };
  delete env.CLAUDE_PROJECT_DIR;
  // NODE_EXTRA_CA_CERTS makes every Node start parse that certificate file: with a system bundle (as some
  // sandboxes set it) about 50 ms, 4 times bare start-up, added to the hooks and to node -e 0 alike, which
  // made every ratio look far closer to 1 than on a machine without it. BENCH_EXTRA_CA=1 keeps it.
  if (env.NODE_EXTRA_CA_CERTS !== undefined && process.env.BENCH_EXTRA_CA !== '1') {
    console.log(`NODE_EXTRA_CA_CERTS (${env.NODE_EXTRA_CA_CERTS}) is left out of the runs' environment (BENCH_EXTRA_CA=1 keeps it)`);
    delete env.NODE_EXTRA_CA_CERTS;
  }
  const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  const cpu = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  const inProcess = new Map<string, Stamp[]>(variants.map((v) => [v.name, []]));
  const stamp = path.join(projects.empty, 'stamp.js');
  fs.writeFileSync(stamp, STAMP_PRELOAD);
  // Each hook's code cache as a build makes it (the warm-up, build-hooks.ts WARM_UP), not as whatever ran the
  // hook since: a cache made by another first run measured up to 38% more instructions (docs/benchmarks.md).
  // The other hooks' caches are made by their first run below, as in use.
  for (const name of ['command-validator']) {
    fs.rmSync(path.join(HOOKS, 'lib', `${name}.cache`), { force: true });
    spawnSync(process.execPath, [path.join(HOOKS, `${name}.js`), '--write-code-cache'], { input: '', env, stdio: ['pipe', 'ignore', 'ignore'] });
    if (!fs.existsSync(path.join(HOOKS, 'lib', `${name}.cache`))) throw new Error(`${name}: --write-code-cache wrote no code cache`);
  }
  // Warm the file cache.
  const foldMs = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  for (const v of variants) {
    v.prepare?.();
    await runOnce(v.args, v.input, env, v.project, v.file ?? null);
    await v.settle?.();
  }
  const loadBefore = os.loadavg()[0];
  for (let r = 0; r < ROUNDS; r++) {
    const order = variants.map((_, i) => variants[(i + r) % variants.length]);
    for (const v of order) {
      v.prepare?.();
      times.get(v.name)!.push(await runOnce(v.args, v.input, env, v.project, v.file ?? null));
      if (v.settle) {
        const waited = await v.settle();
        if (v.reportFold) foldMs.get(v.name)!.push(waited);
      }
      if (v.file === undefined) {
        v.prepare?.();
        cpu.get(v.name)!.push(await cpuOnce(v.args, v.input, env, v.project));
        await v.settle?.();
        v.prepare?.();
        inProcess.get(v.name)!.push(await stampOnce(stamp, v.args, v.input, env, v.project));
        await v.settle?.();
      }
    }
    if ((r + 1) % 10 === 0) process.stderr.write(`round ${r + 1}/${ROUNDS}\n`);
  }
  console.log(`\n${ROUNDS} rounds, ${machineLine()} (at the start: ${loadBefore.toFixed(2)})\n`);
  console.log('| hook | data | wall median | wall p90 | wall ratio to node -e 0 | CPU median | CPU ratio | in process: to exit, ratio | in process: CPU, ratio |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const label of [...Object.keys(projects), 'empty, stdin file']) {
    const base = percentile(times.get(`node -e 0 (${label})`)!, 50);
    const baseCpu = percentile(cpu.get(`node -e 0 (${label})`)!, 50);
    const baseIn = inProcess.get(`node -e 0 (${label})`)!;
    const baseToExit = percentile(baseIn.map((s) => s.toExitMs), 50);
    const baseInCpu = percentile(baseIn.map((s) => s.cpuMs), 50);
    for (const v of variants.filter((x) => x.name.endsWith(`(${label})`))) {
      const ts = times.get(v.name)!;
      const cs = cpu.get(v.name)!;
      const ins = inProcess.get(v.name)!;
      const med = percentile(ts, 50);
      const cpuCols = cs.length ? `${fmtMs(percentile(cs, 50), 0)} | ${(percentile(cs, 50) / baseCpu).toFixed(2)}x` : '- | -';
      const toExit = percentile(ins.map((s) => s.toExitMs), 50);
      const inCpu = percentile(ins.map((s) => s.cpuMs), 50);
      const inCols = ins.length ? `${fmtMs(toExit, 1)}, ${(toExit / baseToExit).toFixed(2)}x | ${fmtMs(inCpu, 1)}, ${(inCpu / baseInCpu).toFixed(2)}x` : '- | -';
      console.log(`| ${v.name.replace(` (${label})`, '')} | ${label} | ${fmtMs(med, 1)} | ${fmtMs(percentile(ts, 90), 1)} | ${(med / base).toFixed(2)}x | ${cpuCols} | ${inCols} |`);
    }
  }
  for (const [name, ms] of foldMs) {
    if (ms.length > 0) console.log(`\n${name}: the detached fold ended a median ${fmtMs(percentile(ms, 50), 0)} (p90 ${fmtMs(percentile(ms, 90), 0)}) after the hook's exit, on the other core; its CPU is not in the CPU column.`);
  }
  for (const p of Object.values(projects)) fs.rmSync(p, { recursive: true, force: true });
  if (process.env.BIG_ROUNDS !== '0') await bigTree(env);
}

/**
 * Waits until no detached fold of `project` is asked for or running (`journal`: and the journal is folded, as
 * the answer end's fold leaves it); returns how long that took (at most 10 s).
 */
async function foldDone(project: string, journal = false): Promise<number> {
  const paths = dataPaths(project);
  const t0 = process.hrtime.bigint();
  const busy = () =>
    (journal && fs.existsSync(paths.learnJournal)) ||
    fs.existsSync(`${paths.patternDb}.lock`) ||
    fs.readdirSync(paths.patterns).some((f) => f.endsWith('.folding') || f === 'fold.commit' || f === 'fold.requested');
  while (busy() && Number(process.hrtime.bigint() - t0) < 10e9) await new Promise((r) => setTimeout(r, 2));
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** A project with a 1 GB untracked tree; `git` makes it a repository with one commit. */
function makeBigProject(git: boolean): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hooks-bench-big-')));
  fs.writeFileSync(path.join(dir, 'README.md'), '# big\n');
  fs.mkdirSync(path.join(dir, 'src'));
  fs.writeFileSync(path.join(dir, 'src', 'app.js'), 'console.log(1)\n');
  if (git) {
    const g = (...args: string[]) => spawnSync('git', args, { cwd: dir, env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' }, stdio: 'ignore' });
    g('init', '-q', '-b', 'main');
    g('add', '-A');
    g('commit', '-qm', 'initial');
  }
  const build = path.join(dir, 'build');
  fs.mkdirSync(path.join(build, 'assets'), { recursive: true });
  for (let i = 0; i < 8; i++) {
    const fd = fs.openSync(path.join(build, `blob${i}.bin`), 'w');
    fs.ftruncateSync(fd, 120 * 1024 * 1024); // sparse: 120 MB to every reader, no disk used
    fs.closeSync(fd);
  }
  const small = Buffer.alloc(4096, 'x');
  for (let i = 0; i < 2000; i++) fs.writeFileSync(path.join(build, 'assets', `chunk${i}.js`), small);
  fs.writeFileSync(path.join(dir, 'src', 'app.js'), 'console.log(2)\n'); // one real change to back up
  return dir;
}

async function bigTree(env: NodeJS.ProcessEnv): Promise<void> {
  const budgetMs = defaultSettings().performance.max_hook_execution_time;
  console.log(`\n1 GB untracked tree (8 x 120 MB + 2,000 x 4 KB under build/), default settings, budget ${budgetMs} ms, ${machineLine()}\n`);
  console.log('| project | hook | run | time | within budget | backup |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const git of [true, false]) {
    const dir = makeBigProject(git);
    const input = (event: string, fields: Record<string, unknown>) =>
      JSON.stringify({ session_id: `big-${Math.random()}`, transcript_path: path.join(dir, 'none.jsonl'), cwd: dir, permission_mode: 'default', hook_event_name: event, ...fields });
    const cases: [string, string, string][] = [
      ['command-validator', 'rm -rf build', input('PreToolUse', { tool_name: 'Bash', tool_input: { command: 'rm -rf build' }, tool_use_id: 't' })],
      ['context-monitor', 'PreCompact', input('PreCompact', { trigger: 'auto' })],
      ['session-logger', 'PostToolUse', input('PostToolUse', { tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_response: { stdout: 'ok', stderr: '', interrupted: false } })],
      ['session-finalizer', 'Stop', input('Stop', { stop_hook_active: false })],
    ];
    for (const [hook, what, text] of cases) {
      for (let r = 0; r < BIG_ROUNDS; r++) {
        // A fresh session each run: the validator backs up at most once a minute per session history.
        fs.rmSync(path.join(dir, '.hooks_data', 'sessions'), { recursive: true, force: true });
        fs.rmSync(path.join(dir, '.hooks_data', 'session_state.json'), { force: true });
        const t0 = process.hrtime.bigint();
        const r1 = spawnSync(process.execPath, [path.join(HOOKS, `${hook}.js`)], { cwd: dir, env: { ...env, CLAUDE_PROJECT_DIR: dir }, input: text, encoding: 'utf8' });
        const took = Number(process.hrtime.bigint() - t0) / 1e6;
        const said = `${r1.stdout}${r1.stderr}`.match(/Backup[^\n"]*/)?.[0] ?? '-';
        console.log(`| ${git ? 'git' : 'no git'} | ${hook} (${what}) | ${r + 1} | ${fmtMs(took, 0)} | ${took < budgetMs ? 'yes' : 'NO'} | ${said.replace(/\|/g, '/').slice(0, 160)} |`);
      }
    }
    const objects = git ? spawnSync('du', ['-sk', path.join(dir, '.git')], { encoding: 'utf8' }).stdout.split('\t')[0] : null;
    if (objects) console.log(`| git | .git after the runs | | ${objects} KB | | |`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exitCode = 1;
});
