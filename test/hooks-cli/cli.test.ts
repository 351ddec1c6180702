/**
 * hooks-cli as a child process: every command, its output (text and
 * --json) and exit codes, help and usage errors, NO_COLOR, the y/N prompt on
 * a real terminal (util-linux `script` gives it a pty), export into a
 * directory it may not write (exit 2), data access errors (exit 1).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildInstall, hostInput, runCli, runHook, tempDir, tempProject, type Project } from '../helpers/hooks';

const inst = buildInstall(t);

async function session(p: Project): Promise<void> {
  p.settings({ performance: { async_logging: false }, backup_manager: { backup_on_critical_ops: false } });
  await runHook(inst, 'context-monitor', p, { prompt: 'x'.repeat(400) });
  await runHook(inst, 'session-logger', p, { tool: 'Write', parameters: { file_path: path.join(p.dir, 'a.ts') }, success: true });
  for (let i = 0; i < 6; i++) await runHook(inst, 'session-logger', p, { tool: 'Bash', parameters: { command: 'npm test' }, success: false, error: 'Error: 1 test failed' });
  await runHook(inst, 'session-logger', p, { tool: 'Bash', parameters: { command: 'git status' }, success: true });
}

t.test('--help lists every command and the exit codes; usage errors exit 2', async (t) => {
  const p = tempProject(t);
  const help = await runCli(inst, p, ['--help']);
  t.equal(help.code, 0);
  for (const cmd of ['status', 'list-backups', 'patterns', 'clear-patterns', 'export', 'install', 'uninstall', 'restore', 'config']) t.match(help.stdout, new RegExp(`hooks-cli ${cmd}`));
  t.match(help.stdout, /Exit codes: 0 success/);
  const sub = await runCli(inst, p, ['patterns', '--help']);
  t.match(sub.stdout, /--limit/);
  for (const args of [[], ['frobnicate'], ['patterns', '--limit', '0'], ['patterns', '--limit', 'x'], ['status', '--bogus'], ['install', '--scope', 'galaxy']]) {
    const r = await runCli(inst, p, args);
    t.equal(r.code, 2, `${args.join(' ') || '(nothing)'}: exit 2`);
    t.match(r.stderr, /Run hooks-cli --help for usage/);
  }
});

t.test('status: exit 1 without session data; the spec’s fields once the hooks ran; --json', async (t) => {
  const p = tempProject(t);
  const none = await runCli(inst, p, ['status']);
  t.equal(none.code, 1);
  t.match(none.stderr, /no session data in .*\.hooks_data: the hooks have not run in this project yet/);
  await session(p);
  const r = await runCli(inst, p, ['status']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^Session: session_\d{8}_\d{6}_[0-9a-f]{6} \(\d+s\)\nContext usage: 0\.\d%\nTool executions: 8\nFiles modified: 1\nCommands executed: 7\nBackup: not needed; 0 taken this session\n$/);
  const j = await runCli(inst, p, ['status', '--json']);
  t.match(j.json, { tool_executions: 8, files_modified: 1, commands_executed: 7, backup_recommendation: 'not needed', ended: false });
  fs.rmSync(path.join(p.data, 'session_state.json'));
  fs.mkdirSync(path.join(p.data, 'session_state.json'));
  const broken = await runCli(inst, p, ['status']);
  t.equal(broken.code, 1, 'unreadable session data: exit 1');
  t.match(broken.stderr, /cannot read .*session_state\.json/);
});

t.test('patterns: top 10 by default, --limit N, --json; exit 1 when the database cannot be read', async (t) => {
  const p = tempProject(t);
  await session(p);
  const r = await runCli(inst, p, ['patterns']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^Command patterns \(top 2 of 2\)\n  npm test: confidence 86%, evidence 6, success rate 0%\n  git status: confidence 50%, evidence 1, success rate 100%\n\nContext patterns \(top 1 of 1\)\n  test_failure \(Bash\): confidence 86%, evidence 6\n$/);
  const one = await runCli(inst, p, ['patterns', '--limit', '1', '--json']);
  t.equal(one.json.command_patterns.length, 1);
  t.equal(one.json.command_patterns[0].trigger.command, 'npm test');
  t.equal(one.json.totals.command_patterns, 2);
  fs.rmSync(path.join(p.data, 'patterns', 'db', 'index.json'));
  fs.mkdirSync(path.join(p.data, 'patterns', 'db', 'index.json'));
  const broken = await runCli(inst, p, ['patterns']);
  t.equal(broken.code, 1);
  t.match(broken.stderr, /cannot access the patterns database/);
  const clear = await runCli(inst, p, ['clear-patterns', '--yes']);
  t.equal(clear.code, 1, 'clear-patterns: exit 1 too');
});

t.test('clear-patterns: cancels with no terminal and no --yes; --yes clears', async (t) => {
  const p = tempProject(t);
  await session(p);
  const cancel = await runCli(inst, p, ['clear-patterns']);
  t.equal(cancel.code, 0);
  t.match(cancel.stdout, /Cancelled: no terminal to confirm on\. Run again with --yes/);
  t.equal((await runCli(inst, p, ['patterns', '--json'])).json.totals.command_patterns, 2, 'nothing removed');
  const yes = await runCli(inst, p, ['clear-patterns', '--yes']);
  t.equal(yes.code, 0);
  t.equal(yes.stdout, 'Removed 3 learned patterns.\n');
  t.same((await runCli(inst, p, ['patterns', '--json'])).json.totals, { command_patterns: 0, context_patterns: 0 });
});

t.test('clear-patterns asks y/N on a terminal: N keeps, y clears', async (t) => {
  const p = tempProject(t);
  await session(p);
  const onTty = (answer: string) =>
    spawnSync('script', ['-qec', `node ${JSON.stringify(inst.cli)} clear-patterns`, '/dev/null'], { input: `${answer}\n`, cwd: p.dir, env: p.env(), encoding: 'utf8', timeout: 30_000 });
  const no = onTty('n');
  t.equal(no.status, 0);
  t.match(no.stdout, /Remove all 3 learned patterns\? \[y\/N\]/);
  t.match(no.stdout, /Cancelled\./);
  t.equal((await runCli(inst, p, ['patterns', '--json'])).json.totals.command_patterns, 2);
  const enter = onTty('');
  t.match(enter.stdout, /Cancelled\./, 'Enter means N');
  const yes = onTty('y');
  t.equal(yes.status, 0);
  t.match(yes.stdout, /Removed 3 learned patterns\./);
});

t.test('list-backups: "No backups found." (exit 0), then three lines per backup; --json', async (t) => {
  const p = tempProject(t, { git: true });
  const none = await runCli(inst, p, ['list-backups']);
  t.equal(none.code, 0);
  t.equal(none.stdout, 'No backups found.\n');
  await runHook(inst, 'context-monitor', p, hostInput(p, 'PreCompact', { trigger: 'auto' }));
  await runHook(inst, 'context-monitor', p, hostInput(p, 'PreCompact', { trigger: 'manual' }));
  const r = await runCli(inst, p, ['list-backups']);
  t.equal(r.code, 0);
  t.match(r.stdout, /^backup_\d{8}_\d{6}(?:_\d+)?\n\d{4}-\d\d-\d\dT[\d:.]+Z\nbefore context compaction \(auto\)\n\nbackup_\d{8}_\d{6}(?:_\d+)?\n\d{4}-\d\d-\d\dT[\d:.]+Z\nbefore context compaction \(manual\)\n$/);
  const j = await runCli(inst, p, ['list-backups', '--json']);
  t.equal(j.json.length, 2);
  t.match(j.json[0], { method: 'git', success: true });
});

t.test('export: session_data.json, patterns.json and logs/ (default hooks_export); exit 2 when it may not write', async (t) => {
  const p = tempProject(t);
  await session(p);
  await runHook(inst, 'session-finalizer', p, {});
  const r = await runCli(inst, p, ['export']);
  t.equal(r.code, 0, r.stderr);
  const dir = path.join(p.dir, 'hooks_export');
  const data = JSON.parse(fs.readFileSync(path.join(dir, 'session_data.json'), 'utf8'));
  t.equal(data.session_state.tool_usage.Bash, 7);
  t.equal(data.session_history.length, 1, 'completion history included');
  t.ok(JSON.parse(fs.readFileSync(path.join(dir, 'patterns.json'), 'utf8')).command_patterns['npm test']);
  const logs = fs.readdirSync(path.join(dir, 'logs'));
  t.ok(logs.some((f) => /^executions_\d{8}\.jsonl$/.test(f)));
  t.ok(logs.includes('session_completions.jsonl'));
  const other = tempDir(t, 'hooks-export-');
  const j = await runCli(inst, p, ['export', path.join(other, 'out'), '--json']);
  t.equal(j.json.directory, path.join(other, 'out'));

  let target: string;
  if (process.getuid?.() === 0) {
    target = `/sys/hooks-cli-export-test-${process.pid}`; // root ignores file modes; sysfs refuses it anyway
  } else {
    const ro = tempDir(t, 'hooks-export-ro-');
    fs.chmodSync(ro, 0o555);
    target = path.join(ro, 'out');
  }
  const denied = await runCli(inst, p, ['export', target]);
  t.equal(denied.code, 2, 'permission denied: exit 2');
  t.match(denied.stderr, /permission denied writing to .*; choose a directory you can write to/);
  const file = path.join(p.dir, 'README.md');
  const failed = await runCli(inst, p, ['export', path.join(file, 'sub')]);
  t.equal(failed.code, 1, 'other failures: exit 1');
  t.match(failed.stderr, /export to .* failed/);
});

t.test('config: the settings in effect; a bad file exits 1 naming the key', async (t) => {
  const p = tempProject(t);
  const ok = await runCli(inst, p, ['config', '--json']);
  t.equal(ok.code, 0);
  t.equal(ok.json.context_monitor.backup_threshold, 0.85);
  t.equal(ok.json.logging.log_level, 'INFO');
  p.settings({ shadow_learner: { max_patterns: 50 } });
  t.equal((await runCli(inst, p, ['config', '--json'])).json.shadow_learner.max_patterns, 50, 'project settings merged');
  const bad: [Record<string, Record<string, unknown>>, RegExp][] = [
    [{ security: { block_everything: true } }, /security\.block_everything: unknown key/],
    [{ colours: {} }, /colours: unknown key/],
    [{ context_monitor: { backup_threshold: 1.2 } }, /context_monitor\.backup_threshold: must be <= 1/],
    [{ context_monitor: { emergency_threshold: -0.1 } }, /context_monitor\.emergency_threshold: must be >= 0/],
    [{ context_monitor: { backup_threshold: 0.9, emergency_threshold: 0.8 } }, /emergency_threshold \(0\.8\) is below backup_threshold \(0\.9\)/],
    [{ shadow_learner: { max_patterns: 0 } }, /shadow_learner\.max_patterns: must be >= 1/],
    [{ shadow_learner: { evidence_threshold: 2.5 } }, /evidence_threshold: must be integer/],
    [{ performance: { async_logging: 'yes' } }, /performance\.async_logging: must be boolean/],
    [{ logging: { log_level: 'VERBOSE' } }, /logging\.log_level: must be one of DEBUG, INFO, WARNING, ERROR/],
    [{ backup_manager: { max_backups: 10, maxBackups: 3 } }, /backup_manager\.maxBackups: unknown key/],
  ];
  for (const [settings, message] of bad) {
    p.settings(settings);
    const r = await runCli(inst, p, ['config']);
    t.equal(r.code, 1, JSON.stringify(settings));
    t.match(r.stderr, message);
  }
  fs.writeFileSync(path.join(p.data, 'settings.json'), '{ not json');
  const r = await runCli(inst, p, ['status']);
  t.equal(r.code, 1);
  t.match(r.stderr, /settings\.json: not valid JSON/);
});

t.test('colour only on a terminal and never with NO_COLOR', async (t) => {
  const p = tempProject(t);
  await session(p);
  const plain = await runCli(inst, p, ['status']);
  t.notMatch(plain.stdout, /\x1b\[/, 'not a terminal: no escapes');
  const tty = spawnSync('script', ['-qec', `node ${JSON.stringify(inst.cli)} status`, '/dev/null'], { cwd: p.dir, env: p.env(), encoding: 'utf8' });
  t.match(tty.stdout, /\x1b\[1mSession\x1b\[22m/, 'bold on a terminal');
  const noColor = spawnSync('script', ['-qec', `node ${JSON.stringify(inst.cli)} status`, '/dev/null'], { cwd: p.dir, env: p.env({ NO_COLOR: '1' }), encoding: 'utf8' });
  t.notMatch(noColor.stdout, /\x1b\[1m/, 'NO_COLOR wins');
});
