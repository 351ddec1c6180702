/**
 * The shadow learner and the session logger's data: confidence and evidence
 * thresholds, max_patterns eviction, learning_enabled, the prediction cache
 * and its TTL, 🚨 predictions reaching the validator; 50 hooks at once on one
 * data directory losing nothing; corrupt data files set aside and rebuilt;
 * old logs pruned.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { applyRuns, buildPredictions, classifyError, commandKey, confidenceOf, emptyDb, fold, predictions, readDb, readPredictionCache, releaseFold, shardOf, startFold, writeAllShards, writePredictionCache, type LearnedRun } from '../../cli/hooks-cli/lib/learner';
import { defaultSettings } from '../../cli/hooks-cli/lib/settings-schema';
import { dataPaths, withLock, type DataPaths } from '../../cli/hooks-cli/lib/store';
import { buildInstall, hostInput, readJsonFile, runHook, tempProject, type Project } from '../helpers/hooks';

const inst = buildInstall(t);
const ts = '2026-01-01T00:00:00.000Z';
const run = (command: string | null, success: boolean, error: string | null = null, tool = 'Bash', timestamp = ts): LearnedRun => ({ tool, command, success, error, timestamp });

t.test('command keys: the command, plus the subcommand for tools that have them', async (t) => {
  t.equal(commandKey(['ls', '-la']), 'ls');
  t.equal(commandKey(['/usr/bin/git', '-c', 'x', 'push', 'origin']), 'git push');
  t.equal(commandKey(['npm', 'test']), 'npm test');
  t.equal(commandKey(['npm', '--silent', 'run', 'build']), 'npm run');
  t.equal(commandKey([]), null);
});

t.test('confidence rises with evidence toward the dominant rate', async (t) => {
  t.equal(confidenceOf(1, 1), 0.5);
  t.equal(confidenceOf(5, 5), 5 / 6);
  t.equal(confidenceOf(3, 6), 0.5 * (6 / 7));
  const db = emptyDb();
  applyRuns(db, [run('npm test', false, 'Error: 2 tests failed\nmore'), run('npm test', false, 'Error: 2 tests failed'), run('npm test', true)], 100);
  const p = db.command_patterns['npm test'];
  t.match(p, { pattern_type: 'command_execution', trigger: { command: 'npm test' }, prediction: { success_count: 1, failure_count: 2, common_errors: ['Error: 2 tests failed'] }, evidence_count: 3 });
  t.equal(p.success_rate, 0.333);
  t.equal(p.confidence, 0.5);
  const c = db.context_patterns['Bash:test_failure'];
  t.match(c, { pattern_type: 'context_error', trigger: { tool: 'Bash', error_type: 'test_failure' }, prediction: { likely_error: 'Error: 2 tests failed' }, evidence_count: 2 });
  t.ok(c.prediction.suggestions.length > 0);
});

t.test('errors are classified by type', async (t) => {
  t.equal(classifyError('bash: foo: command not found').type, 'command_not_found');
  t.equal(classifyError("Error: Cannot find module 'x'").type, 'module_not_found');
  t.equal(classifyError('EACCES: permission denied, open x').type, 'permission_denied');
  t.equal(classifyError('src/a.ts(1,1): error TS2322: Type').type, 'type_error');
  t.equal(classifyError('something odd').type, 'other');
});

t.test('predictions need both the confidence and the evidence threshold', async (t) => {
  const sl = defaultSettings().shadow_learner; // 0.8, 5
  const db = emptyDb();
  applyRuns(db, [1, 2, 3, 4].map(() => run('make', false, 'make: *** [all] Error 1')), 100);
  t.same(buildPredictions(db, sl, 0).commands, {}, '4 failures: below the evidence threshold (confidence 0.8 is enough)');
  applyRuns(db, [run('make', false, 'make: *** [all] Error 1')], 100);
  t.match(buildPredictions(db, sl, 0).commands.make, { failure_rate: 1, evidence_count: 5, common_error: 'make: *** [all] Error 1' });
  applyRuns(db, [run('make', true), run('make', true)], 100); // 5 of 7 failed: confidence 5/7*7/8 = 0.625
  t.same(buildPredictions(db, sl, 0).commands, {}, 'below the confidence threshold');
  t.ok(buildPredictions(db, { ...sl, confidence_threshold: 0.6 }, 0).commands.make, 'a lower threshold lets it through');
  const ok = emptyDb();
  applyRuns(ok, Array.from({ length: 10 }, () => run('ls', true)), 100);
  t.same(buildPredictions(ok, sl, 0).commands, {}, 'confident success predicts nothing to warn about');
});

t.test('at most max_patterns: the least useful are dropped first', async (t) => {
  const db = emptyDb();
  const runs: LearnedRun[] = [];
  for (let i = 0; i < 20; i++) runs.push(run(`rare${i}`, true, null, 'Bash', `2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z`));
  for (let k = 0; k < 8; k++) runs.push(run('useful', false, 'boom'));
  applyRuns(db, runs, 10);
  const names = Object.keys(db.command_patterns);
  t.equal(names.length + Object.keys(db.context_patterns).length, 10);
  t.ok(names.includes('useful'), 'the well-evidenced pattern stays');
  t.ok(db.context_patterns['Bash:other'], 'so does the context pattern with 8 observations');
  t.notOk(names.includes('rare0'), 'the oldest single observations went first');
  t.ok(names.includes('rare19'));
});

async function logMany(p: Project, command: string, n: number, success: boolean, error = 'Error: connect ECONNREFUSED 127.0.0.1:5432') {
  for (let i = 0; i < n; i++) {
    await runHook(inst, 'session-logger', p, success ? hostInput(p, 'PostToolUse', { tool_name: 'Bash', tool_input: { command }, tool_response: { stdout: '' } }) : hostInput(p, 'PostToolUseFailure', { tool_name: 'Bash', tool_input: { command }, error }));
  }
}

/** Polls `done` (no timing asserted: a loaded machine may take seconds to start a process). */
async function waitFor(done: () => boolean, timeoutMs = 20_000): Promise<boolean> {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > timeoutMs) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

const foldRequest = (paths: DataPaths) => path.join(paths.patterns, 'fold.requested');

/** Waits until no detached fold is asked for or running: its request is gone and the database's lock free. */
async function foldSettled(t: Test, p: Project): Promise<void> {
  const paths = dataPaths(p.dir);
  t.ok(await waitFor(() => !fs.existsSync(foldRequest(paths)) && !fs.existsSync(`${paths.patternDb}.lock`)), 'the detached fold ended');
}

t.test('learned failures reach the validator as 🚨 predictions; learning_enabled off learns and predicts nothing', async (t) => {
  const p = tempProject(t);
  p.settings({ performance: { async_logging: false } });
  await logMany(p, 'npm run migrate', 5, false);
  const db = readDb(dataPaths(p.dir));
  t.equal(db.command_patterns['npm run'].prediction.failure_count, 5);
  const r = await runHook(inst, 'command-validator', p, hostInput(p, 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'npm run migrate' } }));
  t.equal(r.code, 0, 'a prediction warns, never blocks');
  t.match(r.json.hookSpecificOutput.additionalContext, /^🚨 npm run failed in 100% of 5 runs \(confidence 83%\); last error: Error: connect ECONNREFUSED/);
  const seed = await runHook(inst, 'command-validator', p, { tool: 'Bash', parameters: { command: 'cd api && npm run migrate' } });
  t.match(seed.json.message, /🚨 npm run failed/);

  const q = tempProject(t);
  q.settings({ performance: { async_logging: false }, shadow_learner: { learning_enabled: false } });
  await logMany(q, 'npm run migrate', 5, false);
  t.notOk(fs.existsSync(path.join(q.data, 'patterns', 'db')), 'nothing learned');
  t.notOk(fs.existsSync(path.join(q.data, 'patterns', 'pending.jsonl')));
  t.ok(fs.readdirSync(path.join(q.data, 'logs')).some((f) => f.startsWith('executions_')), 'still logged');
});

t.test('async_logging folds in batches; the prediction cache lives for cache_ttl_seconds', async (t) => {
  const p = tempProject(t);
  await logMany(p, 'cargo build', 1, false, 'error[E0308]: mismatched types');
  await foldSettled(t, p); // the first run folds (nothing folded yet), in a detached process
  await logMany(p, 'cargo build', 2, false, 'error[E0308]: mismatched types');
  const pending = path.join(p.data, 'patterns', 'pending.jsonl');
  t.notOk(fs.existsSync(foldRequest(dataPaths(p.dir))), 'no fold asked for: a fold a moment ago, two runs waiting');
  t.equal(fs.readFileSync(pending, 'utf8').trim().split('\n').length, 2, 'two runs waiting for the next fold');
  const paths = dataPaths(p.dir);
  const stale = { built_at: Date.now(), thresholds: '0.8/5', commands: { 'cargo build': { failure_rate: 1, confidence: 0.9, evidence_count: 9, common_error: 'from the cache' } } };
  writePredictionCache(paths, stale);
  const fresh = await runHook(inst, 'command-validator', p, { tool: 'Bash', parameters: { command: 'cargo build' } });
  t.match(fresh.json.message, /last error: from the cache/, 'a fresh cache is used as it is');
  p.settings({ shadow_learner: { cache_ttl_seconds: 1 } });
  writePredictionCache(paths, { ...stale, built_at: Date.now() - 5000 });
  fs.utimesSync(path.join(p.data, 'patterns', 'db', 'index.json'), new Date(), new Date()); // the database changed since
  const expired = await runHook(inst, 'command-validator', p, { tool: 'Bash', parameters: { command: 'cargo build' } });
  t.notMatch(expired.json.message, /from the cache/, 'an expired cache is rebuilt from the database');
  p.settings({ performance: { cache_predictions: false } });
  writePredictionCache(paths, stale);
  const off = await runHook(inst, 'command-validator', p, { tool: 'Bash', parameters: { command: 'cargo build' } });
  t.notMatch(off.json.message, /from the cache/, 'cache_predictions off: the database is read');
});

t.test('50 hooks at once on one data directory: no lost log line, no lost count, valid JSON', async (t) => {
  const p = tempProject(t);
  // What is checked is the locking, not the time budget: 50 processes started at once on a loaded
  // two-core machine can take longer than the default 5 s, after which a hook gives up by design.
  p.settings({ performance: { max_hook_execution_time: 60_000 } });
  const runs = Array.from({ length: 50 }, (_, i) =>
    runHook(inst, 'session-logger', p, hostInput(p, i % 5 === 0 ? 'PostToolUseFailure' : 'PostToolUse', { tool_name: i % 2 ? 'Bash' : 'Read', tool_input: i % 2 ? { command: `echo ${i}` } : { file_path: `f${i}` }, tool_response: {}, error: 'x' })),
  );
  const results = await Promise.all(runs);
  t.same(results.map((r) => r.code), Array(50).fill(0), 'all exit 0');
  await foldSettled(t, p); // the loggers' detached fold (one: the others found it asked for)
  const logs = fs.readdirSync(path.join(p.data, 'logs')).filter((f) => f.startsWith('executions_'));
  const lines = logs.flatMap((f) => fs.readFileSync(path.join(p.data, 'logs', f), 'utf8').trim().split('\n'));
  t.equal(lines.length, 50, '50 log lines');
  t.equal(new Set(lines.map((l) => JSON.parse(l).command ?? l)).size >= 25, true, 'every line whole JSON');
  const s = readJsonFile(path.join(p.data, 'session_state.json'));
  t.equal(s.tool_usage.Bash + s.tool_usage.Read, 50, 'every run counted (locked read-modify-write)');
  t.equal(s.commands_executed.length, 25);
  // Fold what the journal still holds, then every run must be in the database.
  await runHook(inst, 'session-finalizer', p, {});
  const db = readDb(dataPaths(p.dir));
  t.equal(db.command_patterns.echo.evidence_count, 25, 'every Bash run learned once');
  const failures = Object.values(db.context_patterns as Record<string, { evidence_count: number }>).reduce((n, c) => n + c.evidence_count, 0);
  t.equal(failures, 10, 'every failure learned once');
  t.same(fs.readdirSync(p.data).filter((f) => f.includes('.tmp') || f.endsWith('.lock')), [], 'no temporary or lock files left');
});

t.test('corrupt data files are set aside and rebuilt, never a crash', async (t) => {
  const p = tempProject(t);
  fs.mkdirSync(path.join(p.data, 'patterns'), { recursive: true });
  fs.mkdirSync(path.join(p.data, 'logs'), { recursive: true });
  fs.writeFileSync(path.join(p.data, 'session_state.json'), '{"session_id": "x", "tool_usa');
  fs.writeFileSync(path.join(p.data, 'patterns', 'patterns.json'), '[1,2,3]');
  fs.mkdirSync(path.join(p.data, 'patterns', 'predictions'), { recursive: true });
  fs.writeFileSync(path.join(p.data, 'patterns', 'predictions', 'meta.json'), 'garbage');
  p.settings({ performance: { async_logging: false } });
  const r = await runHook(inst, 'session-logger', p, { tool: 'Bash', parameters: { command: 'ls' }, success: true });
  t.equal(r.code, 0);
  t.same(r.json, { allow: true, message: 'Logged Bash execution' });
  const s = readJsonFile(path.join(p.data, 'session_state.json'));
  t.same(s.tool_usage, { Bash: 1 }, 'state rebuilt');
  t.ok(fs.readdirSync(p.data).some((f) => /^session_state\.json\.corrupt-\d+$/.test(f)), 'the corrupt state kept aside');
  t.ok(fs.readdirSync(path.join(p.data, 'patterns')).some((f) => /^patterns\.json\.corrupt-\d+$/.test(f)), 'the corrupt database kept aside');
  t.equal(readDb(dataPaths(p.dir)).command_patterns.ls.evidence_count, 1);
  t.match(fs.readFileSync(path.join(p.data, 'logs', 'hooks.log'), 'utf8'), /session_state\.json was not valid; moved to/);
  const v = await runHook(inst, 'command-validator', p, { tool: 'Bash', parameters: { command: 'rm -rf /' } });
  t.equal(v.code, 1, 'the validator still works');
  const f = await runHook(inst, 'session-finalizer', p, {});
  t.equal(f.code, 0);
});

t.test('execution logs older than log_retention_days are pruned', async (t) => {
  const p = tempProject(t);
  const logs = path.join(p.data, 'logs');
  fs.mkdirSync(logs, { recursive: true });
  const day = (offset: number) => {
    const d = new Date();
    d.setDate(d.getDate() - offset);
    return `executions_${d.getFullYear()}${String(d.getMonth() + 1).padStart(2, '0')}${String(d.getDate()).padStart(2, '0')}.jsonl`;
  };
  for (const off of [1, 3, 9, 30]) fs.writeFileSync(path.join(logs, day(off)), '{}\n');
  p.settings({ logging: { log_retention_days: 7 } });
  await runHook(inst, 'session-finalizer', p, {});
  const left = fs.readdirSync(logs).filter((f) => f.startsWith('executions_')).sort();
  t.same(left, [day(3), day(1)].sort(), '9- and 30-day-old logs gone');
});

t.test('a lock left by a dead process is taken over at once; a live holder is waited for however old its lock', async (t) => {
  const dir = t.testdir();
  const file = path.join(dir, 'state.json');
  // A pid that names no process: the largest pid the kernel hands out is below 2^22.
  fs.writeFileSync(`${file}.lock`, '4194303');
  const t0 = Date.now();
  t.equal(withLock(file, () => 'ran', 10_000), 'ran');
  t.ok(Date.now() - t0 < 1000, 'a dead holder is not waited for');
  t.notOk(fs.existsSync(`${file}.lock`), 'released after');
  // A live holder (this process) with a lock file ten seconds old: not stale, so withLock waits its full wait, then goes ahead.
  fs.writeFileSync(`${file}.lock`, String(process.pid));
  const old = new Date(Date.now() - 10_000);
  fs.utimesSync(`${file}.lock`, old, old);
  const t1 = Date.now();
  withLock(file, () => undefined, 300);
  t.ok(Date.now() - t1 >= 300, 'a live holder is waited for, even with a lock file older than the old 3 s rule');
  t.ok(fs.existsSync(`${file}.lock`), "the live holder's lock is left alone");
});

t.test('a journal a killed fold had moved aside is folded by the next fold; a busy database lock leaves the journal for later', async (t) => {
  const p = tempProject(t);
  const paths = dataPaths(p.dir);
  const settings = defaultSettings();
  const run = (command: string): LearnedRun => ({ tool: 'Bash', command, success: true, error: null, timestamp: new Date().toISOString() });
  fs.mkdirSync(path.dirname(paths.learnJournal), { recursive: true });
  // A fold killed (its time budget ran out) after moving the journal aside, before writing the database.
  fs.writeFileSync(`${paths.learnJournal}.4194303.folding`, `${JSON.stringify(run('make'))}\n${JSON.stringify(run('make'))}\n`);
  fs.writeFileSync(paths.learnJournal, `${JSON.stringify(run('make'))}\n`);
  t.equal(fold(paths, settings, new Date()), 3, 'the orphan and the journal, both');
  t.equal(readDb(paths).command_patterns.make.evidence_count, 3);
  t.same(fs.readdirSync(path.dirname(paths.learnJournal)).filter((f) => f.endsWith('.folding')), [], 'no orphan left');

  // The database's lock held by a live process: no fold without it (it could overwrite the holder's), the journal stays.
  fs.writeFileSync(paths.learnJournal, `${JSON.stringify(run('make'))}\n`);
  fs.writeFileSync(`${paths.patternDb}.lock`, String(process.pid));
  settings.performance.max_hook_execution_time = 400;
  t.equal(fold(paths, settings, new Date()), 0, 'nothing folded while the lock is held');
  t.ok(fs.existsSync(paths.learnJournal), 'the journal is kept for the next fold');
  fs.rmSync(`${paths.patternDb}.lock`);
  t.equal(fold(paths, settings, new Date()), 1);
  t.equal(readDb(paths).command_patterns.make.evidence_count, 4);
});

t.test('the fold is incremental: with 10,000 patterns it rewrites only the shards its runs touch, and keeps the rest and their predictions', async (t) => {
  const p = tempProject(t);
  const paths = dataPaths(p.dir);
  const settings = defaultSettings();
  const ts = new Date().toISOString();
  const db = emptyDb();
  const runs: LearnedRun[] = [];
  for (let i = 0; i < 9_990; i++) for (let k = 0; k < 6; k++) runs.push({ tool: 'Bash', command: `tool${i}`, success: i % 2 === 0, error: i % 2 ? `error ${i}` : null, timestamp: ts });
  for (let i = 0; i < 10; i++) runs.push({ tool: `T${i}`, command: null, success: false, error: 'EACCES', timestamp: ts });
  applyRuns(db, runs, settings.shadow_learner.max_patterns);
  writeAllShards(paths, db);
  writePredictionCache(paths, buildPredictions(db, settings.shadow_learner, Date.now()));
  const predicted = Object.keys(readPredictionCache(paths)!.commands).length;
  t.ok(predicted > 4000, `${predicted} predictions before`);
  const old = new Date(2000, 0, 1);
  const shardFiles = fs.readdirSync(paths.patternShards).filter((f) => f.startsWith('c-'));
  for (const f of shardFiles) fs.utimesSync(path.join(paths.patternShards, f), old, old);
  fs.writeFileSync(paths.learnJournal, [{ command: 'tool1' }, { command: 'tool1' }, { command: 'tool7' }].map((r) => JSON.stringify({ tool: 'Bash', success: false, error: 'again', timestamp: ts, ...r })).join('\n') + '\n');
  t.equal(fold(paths, settings, new Date()), 3);
  const rewritten = shardFiles.filter((f) => fs.statSync(path.join(paths.patternShards, f)).mtimeMs > old.getTime());
  t.ok(rewritten.length >= 1 && rewritten.length <= 2, `rewrote ${rewritten.length} of ${shardFiles.length} shards`);
  const after = readDb(paths);
  t.equal(Object.keys(after.command_patterns).length + Object.keys(after.context_patterns).length, 10_000, 'nothing lost');
  t.equal(after.command_patterns.tool1.evidence_count, 8);
  t.equal(after.command_patterns.tool2.evidence_count, 6, 'an untouched pattern as it was');
  const cache = readPredictionCache(paths)!.commands;
  t.equal(Object.keys(cache).length, predicted, 'the other predictions kept');
  t.same(cache.tool1, { failure_rate: 1, confidence: 0.889, evidence_count: 8, common_error: 'again' }, 'the touched prediction updated');
  // Past max_patterns, one fold reads it all and trims to 95%, so the next new patterns do not each read it all.
  fs.writeFileSync(paths.learnJournal, JSON.stringify({ tool: 'Bash', command: 'brand-new', success: false, error: 'x', timestamp: ts }) + '\n');
  fold(paths, settings, new Date());
  const trimmed = readDb(paths);
  t.equal(Object.keys(trimmed.command_patterns).length + Object.keys(trimmed.context_patterns).length, 9_500);
});

t.test('a one-file patterns.json of an earlier version is split into shards by the first fold', async (t) => {
  const p = tempProject(t);
  const paths = dataPaths(p.dir);
  const db = emptyDb();
  const ts = new Date().toISOString();
  applyRuns(db, [{ tool: 'Bash', command: 'make', success: false, error: 'boom', timestamp: ts }], 100);
  fs.mkdirSync(path.dirname(paths.patternDb), { recursive: true });
  fs.writeFileSync(paths.patternDb, JSON.stringify(db));
  t.equal(readDb(paths).command_patterns.make.evidence_count, 1, 'read as it is before any fold');
  fs.writeFileSync(paths.learnJournal, JSON.stringify({ tool: 'Bash', command: 'make', success: true, error: null, timestamp: ts }) + '\n');
  fold(paths, defaultSettings(), new Date());
  t.notOk(fs.existsSync(paths.patternDb), 'the old file is gone');
  t.same(readDb(paths).command_patterns.make.prediction, { success_count: 1, failure_count: 1, common_errors: ['boom'] });
  t.equal(readDb(paths).tool_failures.Bash, 1);
});

t.test('a fold that changes no prediction leaves the prediction cache alone, and an expired cache the folds kept true is renewed without reading the database', async (t) => {
  const p = tempProject(t);
  const paths = dataPaths(p.dir);
  const settings = defaultSettings();
  const ts = new Date().toISOString();
  const journal = (command: string, success: boolean) => fs.appendFileSync(paths.learnJournal, JSON.stringify({ tool: 'Bash', command, success, error: success ? null : 'boom', timestamp: ts }) + '\n');
  fs.mkdirSync(path.dirname(paths.learnJournal), { recursive: true });
  for (let i = 0; i < 6; i++) journal('bad', false);
  fold(paths, settings, new Date());
  const cacheFiles = () => fs.readdirSync(paths.predictionCache).map((f) => path.join(paths.predictionCache, f));
  const cache1 = JSON.stringify(readPredictionCache(paths));
  t.match(readPredictionCache(paths)!.commands.bad, { failure_rate: 1, evidence_count: 6 });
  const old = new Date(2000, 0, 1);
  for (const f of cacheFiles()) fs.utimesSync(f, old, old);
  journal('good', true);
  journal('good', true);
  fold(paths, settings, new Date());
  t.same(cacheFiles().map((f) => fs.statSync(f).mtimeMs), cacheFiles().map(() => old.getTime()), 'not rewritten: no prediction changed');
  t.equal(JSON.stringify(readPredictionCache(paths)), cache1);
  // Expired (ttl 1 s, an hour later) with the database changed since: the index says the folds kept the cache true.
  settings.shadow_learner.cache_ttl_seconds = 1;
  const unused = Array.from({ length: 256 }, (_, i) => `c-${i.toString(16).padStart(2, '0')}.json`).find((n) => n !== shardOf('bad') && n !== shardOf('good'))!;
  const shard = path.join(paths.patternShards, unused);
  fs.writeFileSync(shard, 'not json'); // a full read would set it aside
  const later = Date.now() + 3_600_000;
  const got = predictions(paths, settings, later);
  t.match(got.commands.bad, { evidence_count: 6 });
  t.equal(got.checked_at, later, 'renewed');
  t.same(fs.readdirSync(paths.patternShards).filter((f) => f.includes('.corrupt-')), [], 'the database was not read');
  // A prediction that changes is written through.
  journal('bad', false);
  fs.rmSync(shard);
  fold(paths, settings, new Date());
  t.equal(readPredictionCache(paths)!.commands.bad.evidence_count, 7);
});

t.test('an answer end (host Stop) folds on the logger’s batch schedule; the seed’s session end always folds', async (t) => {
  const p = tempProject(t);
  const pending = path.join(p.data, 'patterns', 'pending.jsonl');
  await logMany(p, 'make', 1, true);
  await foldSettled(t, p); // the first run folds (nothing folded yet), in a detached process
  await logMany(p, 'make', 3, false, 'make: *** [all] Error 2');
  t.equal(fs.readFileSync(pending, 'utf8').trim().split('\n').length, 3, 'three runs wait');
  // The prediction cache last changed long ago; the last fold (the index) is recent: that is what counts.
  const old = new Date(Date.now() - 3_600_000);
  for (const f of fs.readdirSync(path.join(p.data, 'patterns', 'predictions'))) fs.utimesSync(path.join(p.data, 'patterns', 'predictions', f), old, old);
  await runHook(inst, 'session-finalizer', p, hostInput(p, 'Stop', { stop_hook_active: false }));
  t.equal(fs.readFileSync(pending, 'utf8').trim().split('\n').length, 3, 'an answer end with a fresh fold behind it does not fold');
  t.equal(readDb(dataPaths(p.dir)).command_patterns.make.evidence_count, 1);
  await runHook(inst, 'session-finalizer', p, {});
  t.notOk(fs.existsSync(pending), 'the seed’s session end folded');
  t.equal(readDb(dataPaths(p.dir)).command_patterns.make.evidence_count, 4);
});

t.test('an answer end folds in a detached process the host does not wait for, and that fold loses nothing', async (t) => {
  const p = tempProject(t);
  p.settings({ performance: { max_hook_execution_time: 30_000 } }); // the detached fold waits up to half of it for the lock
  const paths = dataPaths(p.dir);
  await logMany(p, 'make', 1, true);
  await foldSettled(t, p); // the first run folds (nothing folded yet), in a detached process
  await logMany(p, 'make', 3, false, 'make: *** [all] Error 2');
  t.equal(fs.readFileSync(paths.learnJournal, 'utf8').trim().split('\n').length, 3, 'three runs wait');
  const old = new Date(Date.now() - 60_000);
  fs.utimesSync(path.join(paths.patternShards, 'index.json'), old, old); // the last fold a minute ago: this answer end folds
  // The database's lock held by this (live) test process: the fold cannot happen until it is released.
  fs.writeFileSync(`${paths.patternDb}.lock`, String(process.pid));
  const r = await runHook(inst, 'session-finalizer', p, hostInput(p, 'Stop', { stop_hook_active: false }));
  t.equal(r.code, 0);
  t.equal(r.stderr, '');
  // The host saw the hook exit and its stdout and stderr close (runHook waits for both) while the fold was still
  // waiting for the lock: it did not wait for the fold.
  t.equal(fs.readFileSync(paths.learnJournal, 'utf8').trim().split('\n').length, 3, 'not folded yet: the lock is held');
  t.ok(fs.existsSync(path.join(p.data, 'LAST_SESSION.md')), 'the answer end did its own work');
  fs.rmSync(`${paths.patternDb}.lock`);
  t.ok(await waitFor(() => !fs.existsSync(paths.learnJournal) && !fs.existsSync(`${paths.patternDb}.lock`)), 'the detached fold took the journal once the lock was free');
  await foldSettled(t, p);
  t.equal(readDb(paths).command_patterns.make.evidence_count, 4, 'every run counted once');
  t.equal(readPredictionCache(paths) !== null, true);
});

t.test('a logger run whose batch schedule says fold starts the fold detached and returns before it ends; a second such run starts none', async (t) => {
  const p = tempProject(t);
  p.settings({ performance: { max_hook_execution_time: 30_000 } }); // the detached fold waits up to half of it for the lock
  const paths = dataPaths(p.dir);
  await logMany(p, 'make', 1, true);
  await foldSettled(t, p);
  t.equal(readDb(paths).command_patterns.make.evidence_count, 1, 'the first run was folded by the detached fold');
  await logMany(p, 'make', 2, false, 'make: *** [all] Error 2');
  t.notOk(fs.existsSync(foldRequest(paths)), 'a fold a moment ago: none due');
  const old = new Date(Date.now() - 60_000);
  fs.utimesSync(path.join(paths.patternShards, 'index.json'), old, old); // the last fold a minute ago: the next run folds
  // The database's lock held by this (live) test process: the fold cannot end until it is released.
  fs.writeFileSync(`${paths.patternDb}.lock`, String(process.pid));
  const r = await runHook(inst, 'session-logger', p, hostInput(p, 'PostToolUse', { tool_name: 'Bash', tool_input: { command: 'make' }, tool_response: { stdout: '' } }));
  t.equal(r.code, 0);
  t.equal(r.stderr, '');
  // runHook waited for the hook's exit and for its stdout and stderr to close, as the host does.
  t.equal(fs.readFileSync(paths.learnJournal, 'utf8').trim().split('\n').length, 3, 'returned with the fold not done: three runs wait');
  const token = fs.readFileSync(foldRequest(paths), 'utf8');
  await logMany(p, 'make', 1, true); // due too, but a fold is asked for already
  t.equal(fs.readFileSync(foldRequest(paths), 'utf8'), token, 'the second run made no request of its own, so started no fold');
  fs.rmSync(`${paths.patternDb}.lock`);
  await foldSettled(t, p);
  t.notOk(fs.existsSync(paths.learnJournal), 'the fold took the journal once the lock was free');
  t.equal(readDb(paths).command_patterns.make.evidence_count, 5, 'every run counted once');
});

t.test('startFold: one request at a time, a stale one replaced, a failed start withdrawn', async (t) => {
  const p = tempProject(t);
  const paths = dataPaths(p.dir);
  fs.mkdirSync(paths.patterns, { recursive: true });
  const worker = path.join(p.dir, 'worker.js');
  const calls: string[][] = [];
  const spawn = (ok: boolean) => (file: string, args: string[]) => (calls.push([file, ...args]), ok);
  const now = Date.now();
  t.equal(startFold(paths, worker, now, spawn(true)), 'failed', 'no worker file: nothing to start');
  fs.writeFileSync(worker, '');
  t.equal(startFold(paths, worker, now, spawn(true)), 'started');
  const token = fs.readFileSync(foldRequest(paths), 'utf8');
  t.same(calls, [[worker, p.dir, token]], 'the worker is given the project and the request token');
  t.equal(startFold(paths, worker, now + 1000, spawn(true)), 'pending', 'asked for already');
  t.equal(calls.length, 1);
  releaseFold(paths, 'another token');
  t.ok(fs.existsSync(foldRequest(paths)), 'a fold ends only its own request');
  const old = new Date(now - 60_000);
  fs.utimesSync(foldRequest(paths), old, old);
  t.equal(startFold(paths, worker, now + 2000, spawn(true)), 'started', 'a request a minute old (its fold died) is replaced');
  const newer = fs.readFileSync(foldRequest(paths), 'utf8');
  t.not(newer, token);
  releaseFold(paths, token);
  t.equal(fs.readFileSync(foldRequest(paths), 'utf8'), newer, 'the stale fold ending late leaves the newer request');
  releaseFold(paths, newer);
  t.notOk(fs.existsSync(foldRequest(paths)));
  t.equal(startFold(paths, worker, now + 3000, spawn(false)), 'failed', 'no process could be started');
  t.notOk(fs.existsSync(foldRequest(paths)), 'the request is withdrawn, so the next due run tries again');
});

t.test('a fold killed at any step loses no run and counts none twice: the next fold finishes or redoes it', async (t) => {
  const p = tempProject(t);
  p.settings({ backup_manager: { backup_on_critical_ops: false } });
  const paths = dataPaths(p.dir);
  const settings = defaultSettings();
  const mk = (command: string, success: boolean, i: number): LearnedRun => ({ tool: 'Bash', command, success, error: success ? null : `boom ${i}`, timestamp: ts });
  // A database with predictions, then a journal that changes several shards, a prediction and the context patterns.
  fs.mkdirSync(path.dirname(paths.learnJournal), { recursive: true });
  const before: LearnedRun[] = [];
  for (let i = 0; i < 40; i++) before.push(mk(`tool${i}`, i % 2 === 0, i));
  for (let i = 0; i < 6; i++) before.push(mk('make', false, i));
  fs.writeFileSync(paths.learnJournal, before.map((r) => JSON.stringify(r)).join('\n') + '\n');
  fold(paths, settings, new Date());
  const journal: LearnedRun[] = [];
  for (let i = 0; i < 12; i++) journal.push(mk(`tool${i * 3}`, false, i), mk(`new${i}`, true, i));
  for (let i = 0; i < 8; i++) journal.push(mk('make', true, i)); // the make prediction goes away
  journal.push({ tool: 'Edit', command: null, success: false, error: 'String to replace not found', timestamp: ts });
  fs.writeFileSync(paths.learnJournal, journal.map((r) => JSON.stringify(r)).join('\n') + '\n');
  // A journal a fold had moved aside and never committed, waiting too.
  fs.writeFileSync(`${paths.learnJournal}.4194303.folding`, JSON.stringify(mk('orphan', false, 0)) + '\n');
  // The orphan's runs are older than the journal's (its fold died before this journal was written): folds read the
  // journals oldest first, by the time of their last write, whatever the pids in their names.
  const older = new Date(Date.now() - 60_000);
  fs.utimesSync(`${paths.learnJournal}.4194303.folding`, older, older);
  const pristine = path.join(p.home, 'pristine');
  // preserveTimestamps: each attempt starts from the same files with the same times (a copy would date them now).
  fs.cpSync(p.data, pristine, { recursive: true, preserveTimestamps: true });

  const state = () => {
    const db = readDb(paths);
    const cache = readPredictionCache(paths);
    return { command_patterns: db.command_patterns, context_patterns: db.context_patterns, tool_failures: db.tool_failures, predictions: cache?.commands ?? null };
  };
  const leftovers = () =>
    [paths.patterns, paths.patternShards, paths.predictionCache].flatMap((d) => fs.readdirSync(d).filter((f) => /\.fold\.tmp$|\.folding$|^fold\.commit|\.lock$/.test(f)));
  t.equal(fold(paths, settings, new Date()), journal.length + 1);
  const expected = state();
  t.equal(expected.command_patterns.make.prediction.success_count, 8, 'the reference fold counted the journal');
  t.notOk(expected.predictions!.make, 'and dropped the make prediction');
  t.same(leftovers(), []);

  const worker = path.join(inst.root, 'hooks', 'learner-fold.js');
  let crashes = 0;
  for (let at = 1; at < 500; at++) {
    fs.rmSync(p.data, { recursive: true, force: true });
    fs.cpSync(pristine, p.data, { recursive: true, preserveTimestamps: true });
    const r = spawnSync(process.execPath, [worker, p.dir], { env: p.env({ HOOKS_CLI_TEST_FOLD_CRASH_AT: String(at) }), cwd: p.dir, encoding: 'utf8' });
    if (r.signal !== 'SIGKILL') {
      t.equal(r.status, 0, `the fold ran to its end with no crash at step ${at}`);
      t.same(state(), expected, 'and gave the reference result');
      break;
    }
    crashes++;
    // The dead fold's lock is taken over (its pid is gone); the next fold finishes or redoes its work.
    fold(paths, settings, new Date());
    const got = state();
    if (JSON.stringify(got) !== JSON.stringify(expected)) {
      t.same(got, expected, `killed at step ${at}: the next fold gives the result of one whole fold`);
      break;
    }
    const left = leftovers();
    if (left.length > 0) {
      t.same(left, [], `killed at step ${at}: nothing left behind after the next fold`);
      break;
    }
  }
  t.ok(crashes > 30, `the fold was killed at each of its ${crashes} steps (writes, commit, moves, removals), and the next fold always gave the same database`);
});

t.test('a line a logger writes into the journal after the fold moved it aside and read it is folded by the next fold, once', async (t) => {
  const p = tempProject(t);
  const paths = dataPaths(p.dir);
  const settings = defaultSettings();
  const line = (command: string) => JSON.stringify({ tool: 'Bash', command, success: true, error: null, timestamp: ts }) + '\n';
  fs.mkdirSync(path.dirname(paths.learnJournal), { recursive: true });
  fs.writeFileSync(paths.learnJournal, line('make') + line('make'));
  t.equal(fold(paths, settings, new Date()), 2);
  const dir = path.dirname(paths.learnJournal);
  const kept = () => fs.readdirSync(dir).filter((f) => /\.folded-\d+$/.test(f));
  t.equal(kept().length, 1, 'the folded journal is kept for one more fold');
  // The late write: a logger that had opened pending.jsonl before the fold renamed it writes now.
  fs.appendFileSync(path.join(dir, kept()[0]), line('make'));
  t.equal(fold(paths, settings, new Date()), 1, 'the next fold takes the late line');
  t.equal(readDb(paths).command_patterns.make.evidence_count, 3, 'counted once');
  t.equal(fold(paths, settings, new Date()), 0, 'nothing new: nothing folded');
  t.equal(readDb(paths).command_patterns.make.evidence_count, 3);
  fs.writeFileSync(paths.learnJournal, line('ls'));
  t.equal(fold(paths, settings, new Date()), 1);
  t.equal(readDb(paths).command_patterns.make.evidence_count, 3, 'the late line is not counted again');
  t.equal(kept().length, 1, 'a kept journal that gained nothing is removed; the new one is kept');
});
