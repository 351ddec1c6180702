/**
 * Problems seen in real Claude Code 2.1 sessions (issue 13), each reproduced
 * with the hooks as real child processes: TaskCreate/TaskUpdate task lists,
 * the usage after a compaction, two sessions in one project, and the session
 * documents in the user's repository.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildInstall, hostInput, readJsonFile, runCli, runHook, tempProject, type Project } from '../helpers/hooks';

const inst = buildInstall(t);
const doc = (p: Project, name: string) => path.join(p.data, name);

function writeTranscript(p: Project, entries: unknown[]): string {
  const file = path.join(p.home, 'transcript.jsonl');
  fs.writeFileSync(file, entries.map((e) => JSON.stringify(e)).join('\n') + '\n');
  return file;
}
const assistant = (tokens: number) => ({ type: 'assistant', isSidechain: false, message: { usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: tokens - 10, output_tokens: 0 } } });

t.test('TaskCreate/TaskUpdate (Claude Code 2.1, no TodoWrite) make the task list of ACTIVE_TODOS.md', async (t) => {
  const p = tempProject(t);
  const log = (tool: string, input: unknown, response: unknown) => runHook(inst, 'session-logger', p, hostInput(p, 'PostToolUse', { tool_name: tool, tool_input: input, tool_response: response, tool_use_id: 'x' }));
  await log('TaskCreate', { subject: 'Parse the config', description: 'read config.json', activeForm: 'Parsing the config' }, { task: { id: '1', subject: 'Parse the config' } });
  await log('TaskCreate', { subject: 'Write the tests', description: 'cover the parser' }, { task: { id: '2', subject: 'Write the tests' } });
  await log('TaskCreate', { subject: 'Drop the old flag', description: '' }, { task: { id: '3', subject: 'Drop the old flag' } });
  await log('TaskUpdate', { taskId: '1', status: 'completed' }, { success: true, taskId: '1', updatedFields: ['status'] });
  await log('TaskUpdate', { taskId: '2', status: 'in_progress' }, { success: true, taskId: '2', updatedFields: ['status'] });
  await log('TaskUpdate', { taskId: '3', status: 'deleted' }, { success: true, taskId: '3', updatedFields: ['status'] });
  const r = await runHook(inst, 'session-finalizer', p, hostInput(p, 'Stop', { stop_hook_active: false }));
  t.equal(r.code, 0);
  const todos = fs.readFileSync(doc(p, 'ACTIVE_TODOS.md'), 'utf8');
  t.notMatch(todos, /kept no task list/, 'the task list is seen');
  t.match(todos, /## In progress\n\n- \[ \] #2 Write the tests/);
  t.match(todos, /## Completed\n\n- \[x\] #1 Parse the config/);
  t.notMatch(todos, /Drop the old flag/, 'a deleted task is gone');
  t.match(fs.readFileSync(doc(p, 'LAST_SESSION.md'), 'utf8'), /\[in_progress\] #2 Write the tests/);
});

t.test('after a compaction the usage is the compact_boundary postTokens, and the thresholds are armed again', async (t) => {
  const p = tempProject(t, { git: true });
  const before = writeTranscript(p, [assistant(180_000)]); // 90%: past the backup threshold
  const r1 = await runHook(inst, 'context-monitor', p, hostInput(p, 'UserPromptSubmit', { prompt: 'a', transcript_path: before }));
  t.match(r1.json.hookSpecificOutput.additionalContext, /^Context usage: 90\.0%\nBackup backup_\S+ taken \(backup threshold\)/);
  const after = writeTranscript(p, [
    assistant(180_000),
    { type: 'system', subtype: 'compact_boundary', uuid: 'b-1', content: 'Conversation compacted', compactMetadata: { trigger: 'manual', preTokens: 180_000, postTokens: 12_000 } },
    { type: 'user', isCompactSummary: true, message: { role: 'user', content: 'summary' } },
  ]);
  const r2 = await runHook(inst, 'context-monitor', p, hostInput(p, 'UserPromptSubmit', { prompt: 'b', transcript_path: after }));
  t.equal(r2.json.hookSpecificOutput.additionalContext, 'Context usage: 6.0%', 'the size the compaction left, not the 90% before it');
  // The next answer's usage counts again; crossing the threshold again takes a new backup.
  const later = writeTranscript(p, [assistant(180_000), { type: 'system', subtype: 'compact_boundary', uuid: 'b-1', compactMetadata: { trigger: 'manual', preTokens: 180_000, postTokens: 12_000 } }, assistant(175_000)]);
  const r3 = await runHook(inst, 'context-monitor', p, hostInput(p, 'UserPromptSubmit', { prompt: 'c', transcript_path: later }));
  t.match(r3.json.hookSpecificOutput.additionalContext, /^Context usage: 87\.5%\nBackup backup_\S+ taken \(backup threshold\)/);
  const r4 = await runHook(inst, 'context-monitor', p, hostInput(p, 'UserPromptSubmit', { prompt: 'd', transcript_path: later }));
  t.notMatch(r4.json.hookSpecificOutput.additionalContext, /taken/, 'once per threshold until the next compaction');
});

t.test('two sessions in one project keep their own state; threshold backups once per threshold per session; status shows both', async (t) => {
  const p = tempProject(t, { git: true });
  const high = writeTranscript(p, [assistant(172_000)]); // 86%
  const a = (event: string, fields: Record<string, unknown>) => ({ ...hostInput(p, event, fields), session_id: 'aaaa-1111' });
  const b = (event: string, fields: Record<string, unknown>) => ({ ...hostInput(p, event, fields), session_id: 'bbbb-2222' });
  const backups: string[] = [];
  for (let i = 0; i < 3; i++) {
    // Two terminals take turns, as they do.
    const ra = await runHook(inst, 'context-monitor', p, a('UserPromptSubmit', { prompt: `a${i}`, transcript_path: high }));
    await runHook(inst, 'session-logger', p, a('PostToolUse', { tool_name: 'Bash', tool_input: { command: 'ls' }, tool_response: { stdout: '', stderr: '', interrupted: false } }));
    const rb = await runHook(inst, 'context-monitor', p, b('UserPromptSubmit', { prompt: `b${i}`, transcript_path: high }));
    await runHook(inst, 'session-logger', p, b('PostToolUse', { tool_name: 'Read', tool_input: { file_path: '/x' }, tool_response: {} }));
    for (const r of [ra, rb]) if (/taken \(backup threshold\)/.test(r.json.hookSpecificOutput.additionalContext)) backups.push(r.json.hookSpecificOutput.additionalContext);
  }
  t.equal(backups.length, 2, 'one backup per session at the threshold, not one per prompt');
  const sa = readJsonFile(path.join(p.data, 'sessions', 'aaaa-1111.json'));
  const sb = readJsonFile(path.join(p.data, 'sessions', 'bbbb-2222.json'));
  t.same(sa.tool_usage, { Bash: 3 }, 'session A kept its three runs');
  t.same(sb.tool_usage, { Read: 3 }, 'session B kept its three runs');
  t.equal(sa.backup_history.length, 1);
  t.equal(sb.backup_history.length, 1);
  const cur = await runCli(inst, p, ['status', '--json']);
  t.equal(cur.code, 0, cur.stderr);
  t.equal(cur.json.session_id, 'bbbb-2222', 'status shows the session with the latest activity');
  t.equal(cur.json.other_sessions, 1);
  const text = await runCli(inst, p, ['status']);
  t.match(text.stdout, /Other sessions in this project: 1 \(hooks-cli status --all\)/);
  const all = await runCli(inst, p, ['status', '--all', '--json']);
  t.same(all.json.sessions.map((s: { session_id: string }) => s.session_id), ['bbbb-2222', 'aaaa-1111']);
  t.equal(all.json.sessions[1].tool_executions, 3);
  const one = await runCli(inst, p, ['status', '--session', 'aaaa-1111', '--json']);
  t.equal(one.json.tool_executions, 3);
  const none = await runCli(inst, p, ['status', '--session', 'nope']);
  t.equal(none.code, 1);
  t.match(none.stderr, /no session nope .*status --all/);
});

t.test('session documents: inside .hooks_data by default, so git status stays clean and git add -A commits none', async (t) => {
  const p = tempProject(t, { git: true });
  await runHook(inst, 'session-logger', p, hostInput(p, 'PostToolUseFailure', { tool_name: 'Bash', tool_input: { command: 'make' }, error: 'make: *** [all] Error 2' }));
  await runHook(inst, 'session-finalizer', p, hostInput(p, 'Stop', { stop_hook_active: false }));
  for (const name of ['LAST_SESSION.md', 'ACTIVE_TODOS.md', 'RECOVERY_GUIDE.md']) {
    t.ok(fs.existsSync(doc(p, name)), `${name} in .hooks_data`);
    t.notOk(fs.existsSync(path.join(p.dir, name)), `${name} not at the project root`);
  }
  t.equal(p.git('status', '--porcelain'), '', 'git status shows nothing');
});

t.test('session documents at the project root (session_docs.directory "."): listed in .git/info/exclude', async (t) => {
  const p = tempProject(t, { git: true });
  p.settings({ session_docs: { directory: '.' } });
  await runHook(inst, 'session-finalizer', p, hostInput(p, 'Stop', { stop_hook_active: false }));
  await runHook(inst, 'session-finalizer', p, hostInput(p, 'Stop', { stop_hook_active: false }));
  t.ok(fs.existsSync(path.join(p.dir, 'ACTIVE_TODOS.md')));
  t.equal(p.git('status', '--porcelain'), '', 'git status shows nothing');
  const exclude = fs.readFileSync(path.join(p.dir, '.git', 'info', 'exclude'), 'utf8');
  t.equal(exclude.split('\n').filter((l) => l === '/ACTIVE_TODOS.md').length, 1, 'listed once, however many Stops');
  p.git('add', '-A');
  t.notMatch(p.git('diff', '--cached', '--name-only'), /\.md/, 'git add -A stages none of them');
});

t.test('what the model writes in ACTIVE_TODOS.md survives every Stop; an edited generated block is kept too', async (t) => {
  const p = tempProject(t);
  const stop = () => runHook(inst, 'session-finalizer', p, hostInput(p, 'Stop', { stop_hook_active: false }));
  await stop();
  const file = doc(p, 'ACTIVE_TODOS.md');
  fs.appendFileSync(file, '\n## Notes from the assistant\n\nHalf-way through the parser rewrite: tokens done, AST next.\n');
  await stop();
  await stop();
  let text = fs.readFileSync(file, 'utf8');
  t.equal(text.split('Half-way through the parser rewrite').length, 2, 'the note is kept, once');
  t.match(text, /^<!-- hooks-cli:begin [0-9a-f]{8} /, 'the generated block is renewed at the top');
  // An edit inside the generated block is the user's text now: kept, below a fresh block.
  fs.writeFileSync(file, text.replace('## Pending', '## Pending (edited: do the lexer first)'));
  await stop();
  text = fs.readFileSync(file, 'utf8');
  t.match(text, /do the lexer first/);
  t.equal(text.split('<!-- hooks-cli:begin').length, 2, 'one generated block');
  // A file written by hand with no block at all is kept whole.
  const last = doc(p, 'LAST_SESSION.md');
  fs.writeFileSync(last, 'my own notes\n');
  await stop();
  t.match(fs.readFileSync(last, 'utf8'), /my own notes\n$/);
});

t.test('RECOVERY_GUIDE.md is removed once the session has recovered (a user note in it is kept)', async (t) => {
  const p = tempProject(t);
  const log = (ok: boolean) =>
    runHook(inst, 'session-logger', p, ok
      ? hostInput(p, 'PostToolUse', { tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_response: { stdout: 'ok', stderr: '', interrupted: false } })
      : hostInput(p, 'PostToolUseFailure', { tool_name: 'Bash', tool_input: { command: 'npm test' }, error: 'tests failed' }));
  const stop = () => runHook(inst, 'session-finalizer', p, hostInput(p, 'Stop', { stop_hook_active: false }));
  const guide = doc(p, 'RECOVERY_GUIDE.md');
  await log(false);
  await stop();
  t.ok(fs.existsSync(guide), 'written while the last run failed');
  await log(true);
  await stop();
  t.notOk(fs.existsSync(guide), 'removed once a run succeeded');
  await log(false);
  await stop();
  fs.appendFileSync(guide, '\nI checked the fixture: it is fine.\n');
  await log(true);
  await stop();
  t.equal(fs.readFileSync(guide, 'utf8'), 'I checked the fixture: it is fine.\n', 'only the generated part removed');
});
