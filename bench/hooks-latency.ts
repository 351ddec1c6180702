/**
 * hooks-cli: how long each hook takes, start to exit, against bare Node
 * start-up measured in the same run. The host starts a hook for every tool
 * call, so this is the cost every call pays.
 *
 * Each run spawns a process the way a Node-based host does (stdio pipes,
 * which are sockets, the JSON input written to stdin and closed) and times
 * spawn to exit. Variants are interleaved round by round, so load changes hit
 * all of them alike; the figure is each variant's median, and the ratio is
 * to `node -e 0` given the same stdin. Two projects: an empty data directory,
 * and a full one (a pattern database of 10,000 patterns, a prediction cache,
 * a long session state). Backups are off (they are measured by their own
 * cost: git, not the hook).
 *
 * Run: npm run bench:hooks   (node dist/bench/hooks-latency.js after npm run build)
 * Env: ROUNDS (40)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyRuns, buildPredictions, emptyDb, writeAllShards } from '../cli/hooks-cli/lib/learner';
import { dataPaths } from '../cli/hooks-cli/lib/store';
import { defaultSettings } from '../cli/hooks-cli/lib/settings-schema';
import { fmtMs, machineLine, percentile } from './bench-helpers';

const ROUNDS = Number(process.env.ROUNDS ?? 40);
const HOOKS = path.resolve(__dirname, '..', '..', 'cli', 'hooks-cli', 'hooks');

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
    fs.writeFileSync(paths.predictionCache, JSON.stringify(buildPredictions(db, s.shadow_learner, Date.now())));
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
  type Variant = { name: string; args: string[]; input: string; project: string; file?: string };
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
    variants.push({
      name: `session-logger (${label})`,
      args: [path.join(HOOKS, 'session-logger.js')],
      input: host(project, 'PostToolUse', { tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_response: { stdout: 'ok 1 - parser\n'.repeat(20), stderr: '', interrupted: false }, tool_use_id: 't' }),
      project,
    });
    variants.push({ name: `session-finalizer (${label})`, args: [path.join(HOOKS, 'session-finalizer.js')], input: host(project, 'Stop', { stop_hook_active: false }), project });
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
  const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  // Warm the file cache once.
  for (const v of variants) await runOnce(v.args, v.input, env, v.project, v.file ?? null);
  for (let r = 0; r < ROUNDS; r++) {
    const order = variants.map((_, i) => variants[(i + r) % variants.length]);
    for (const v of order) times.get(v.name)!.push(await runOnce(v.args, v.input, env, v.project, v.file ?? null));
    if ((r + 1) % 10 === 0) process.stderr.write(`round ${r + 1}/${ROUNDS}\n`);
  }
  console.log(`\n${ROUNDS} rounds, ${machineLine()}\n`);
  console.log('| hook | data | median | p90 | ratio to node -e 0 |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const label of [...Object.keys(projects), 'empty, stdin file']) {
    const base = percentile(times.get(`node -e 0 (${label})`)!, 50);
    for (const v of variants.filter((x) => x.name.endsWith(`(${label})`))) {
      const ts = times.get(v.name)!;
      const med = percentile(ts, 50);
      console.log(`| ${v.name.replace(` (${label})`, '')} | ${label} | ${fmtMs(med, 1)} | ${fmtMs(percentile(ts, 90), 1)} | ${(med / base).toFixed(2)}x |`);
    }
  }
  for (const p of Object.values(projects)) fs.rmSync(p, { recursive: true, force: true });
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exitCode = 1;
});
