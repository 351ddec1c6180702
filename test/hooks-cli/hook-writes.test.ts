/**
 * The files a hook run no longer rewrites (for speed: each whole-file replace
 * costs a hook about 0.3 ms on ext4), and that nothing is lost by it:
 * session_state.json is a link to the latest session's file, so it always
 * shows that session's newest state; ACTIVE_TODOS.md is rewritten only when
 * the task list changed, and what the model wrote in it is kept either way;
 * pruning old sessions keeps the one the link names.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { pruneLogs } from '../../cli/hooks-cli/lib/retention';
import { readState } from '../../cli/hooks-cli/lib/session';
import { dataPaths } from '../../cli/hooks-cli/lib/store';
import { buildInstall, hostInput, readJsonFile, runCli, runHook, tempProject, type Project } from '../helpers/hooks';

const inst = buildInstall(t);

const bash = (p: Project, session: string, command: string) =>
  runHook(inst, 'session-logger', p, { ...hostInput(p, 'PostToolUse', { tool_name: 'Bash', tool_input: { command }, tool_response: { stdout: 'ok' } }), session_id: session });

t.test('session_state.json always holds the newest state of the session with the latest activity', async (t) => {
  const p = tempProject(t);
  const mirror = path.join(p.data, 'session_state.json');
  await bash(p, 'sess-a', 'echo a1');
  t.equal(readJsonFile(mirror).session_id, 'sess-a');
  t.same(readJsonFile(mirror).commands_executed.map((c: { command: string }) => c.command), ['echo a1']);
  await bash(p, 'sess-b', 'echo b1');
  t.equal(readJsonFile(mirror).session_id, 'sess-b', 'another session became the latest');
  for (const c of ['echo a2', 'echo a3']) await bash(p, 'sess-a', c);
  const state = readJsonFile(mirror);
  t.equal(state.session_id, 'sess-a');
  t.same(state.commands_executed.map((c: { command: string }) => c.command), ['echo a1', 'echo a2', 'echo a3'], 'every update of the session shows, none lost');
  t.same(state, readJsonFile(path.join(p.data, 'sessions', 'sess-a.json')), 'the same state as the session’s own file');
  await runHook(inst, 'session-finalizer', p, { ...hostInput(p, 'Stop', { stop_hook_active: false }), session_id: 'sess-a' });
  t.match(readJsonFile(mirror).ended_at, /^\d{4}-/, 'the answer end shows too');
  const status = await runCli(inst, p, ['status', '--json']);
  t.equal(status.code, 0);
  t.equal(status.json.session_id, 'sess-a');
  t.equal(status.json.commands_executed, 3);
  t.equal(status.json.other_sessions, 1);
  t.equal((await runCli(inst, p, ['status', '--all', '--json'])).json.sessions.length, 2);
});

t.test('the seed shape (no session id) still keeps its own session in session_state.json, the host sessions untouched', async (t) => {
  const p = tempProject(t);
  await bash(p, 'sess-a', 'echo host');
  const seed = await runHook(inst, 'session-logger', p, { tool: 'Bash', parameters: { command: 'echo seed' }, success: true });
  t.equal(seed.code, 0);
  const mirror = path.join(p.data, 'session_state.json');
  t.notOk(fs.lstatSync(mirror).isSymbolicLink(), 'the seed’s session is a file of its own');
  t.same(readJsonFile(mirror).commands_executed.map((c: { command: string }) => c.command), ['echo host', 'echo seed'], 'as before: the seed continues the latest session');
  t.same(readJsonFile(path.join(p.data, 'sessions', 'sess-a.json')).commands_executed.map((c: { command: string }) => c.command), ['echo host'], 'the host session’s own file is not changed by the seed');
  await bash(p, 'sess-a', 'echo host again');
  t.same(readJsonFile(mirror).commands_executed.map((c: { command: string }) => c.command), ['echo host', 'echo host again'], 'the host session is the latest again');
});

t.test('pruning old sessions keeps the one session_state.json names', async (t) => {
  const p = tempProject(t);
  await bash(p, 'sess-old', 'echo x');
  await bash(p, 'sess-older', 'echo y');
  await bash(p, 'sess-old', 'echo z'); // the latest
  const paths = dataPaths(p.dir);
  const longAgo = new Date(Date.now() - 30 * 86_400_000);
  for (const f of fs.readdirSync(paths.sessions)) fs.utimesSync(path.join(paths.sessions, f), longAgo, longAgo);
  const removed = pruneLogs(paths, 7, new Date());
  t.same(removed, ['sessions/sess-older.json'], 'the other inactive session is pruned');
  const s = readState(paths);
  t.equal(s?.session_id, 'sess-old', 'the latest session is still readable through session_state.json');
  t.equal(s?.commands_executed.length, 2);
});

t.test('ACTIVE_TODOS.md is rewritten only when the task list changed; the model’s notes are kept either way', async (t) => {
  const p = tempProject(t);
  const file = path.join(p.data, 'ACTIVE_TODOS.md');
  const stop = () => runHook(inst, 'session-finalizer', p, hostInput(p, 'Stop', { stop_hook_active: false }));
  const task = (tool: string, input: unknown, response: unknown) => runHook(inst, 'session-logger', p, hostInput(p, 'PostToolUse', { tool_name: tool, tool_input: input, tool_response: response }));
  await task('TaskCreate', { subject: 'Parse the config', description: '' }, { task: { id: '1', subject: 'Parse the config' } });
  await stop();
  fs.appendFileSync(file, '\nNotes: the lexer is done.\n');
  const before = fs.statSync(file);
  const text = fs.readFileSync(file, 'utf8');
  const past = new Date(Date.now() - 60_000);
  fs.utimesSync(file, past, past);
  await runHook(inst, 'session-logger', p, hostInput(p, 'PostToolUse', { tool_name: 'Read', tool_input: { file_path: path.join(p.dir, 'README.md') }, tool_response: 'x' }));
  await stop();
  const after = fs.statSync(file);
  t.equal(after.ino, before.ino, 'not replaced: no task changed in this answer');
  t.ok(Math.abs(after.mtimeMs - past.getTime()) < 2, 'not written at all (its time is the one set before the answer)');
  t.equal(fs.readFileSync(file, 'utf8'), text);
  t.match(fs.readFileSync(path.join(p.data, 'LAST_SESSION.md'), 'utf8'), /Tool executions: 2/, 'LAST_SESSION.md is still renewed at every answer end');
  await task('TaskUpdate', { taskId: '1', status: 'in_progress' }, { success: true, taskId: '1', updatedFields: ['status'] });
  await stop();
  const changed = fs.readFileSync(file, 'utf8');
  t.match(changed, /## In progress\n\n- \[ \] #1 Parse the config/, 'a task change is written');
  t.equal(changed.split('Notes: the lexer is done.').length, 2, 'the model’s note is kept, once');
  const state = readJsonFile(path.join(p.data, 'session_state.json'));
  t.match(changed, new RegExp(`as of ${state.tasks_updated_at.replace(/[.]/g, '\\.')}\\.`), 'dated by the task list’s last change');
  // A TaskUpdate that changes nothing does not move the date either.
  await task('TaskUpdate', { taskId: '1', status: 'in_progress' }, { success: true, taskId: '1', updatedFields: ['status'] });
  t.equal(readJsonFile(path.join(p.data, 'session_state.json')).tasks_updated_at, state.tasks_updated_at);
});

t.test('a replace killed between its two renames loses nothing: readers and the next writer take the old text from .prev', async (t) => {
  const p = tempProject(t);
  const paths = dataPaths(p.dir);
  // Session state: the session file moved to .prev, the new one never put in place (the writer was killed).
  await bash(p, 'sess-a', 'echo one');
  const file = path.join(paths.sessions, 'sess-a.json');
  fs.renameSync(file, `${file}.prev`);
  t.equal(readState(paths, new Date(), 'sess-a')?.commands_executed.length, 1, 'the session is read from .prev');
  t.equal(readState(paths)?.session_id, 'sess-a', 'and through session_state.json, whose link dangles meanwhile');
  t.equal((await runCli(inst, p, ['status', '--json'])).json.commands_executed, 1, 'the CLI too');
  await bash(p, 'sess-a', 'echo two');
  t.same(readJsonFile(file).commands_executed.map((c: { command: string }) => c.command), ['echo one', 'echo two'], 'the next update started from the old state');
  t.notOk(fs.existsSync(`${file}.prev`), '.prev is gone once the file is back');
  // A session document with the model's note, caught the same way.
  const stop = () => runHook(inst, 'session-finalizer', p, { ...hostInput(p, 'Stop', { stop_hook_active: false }), session_id: 'sess-a' });
  await stop();
  const todos = path.join(p.data, 'ACTIVE_TODOS.md');
  fs.appendFileSync(todos, '\nNote: keep this.\n');
  fs.renameSync(todos, `${todos}.prev`);
  await runHook(inst, 'session-logger', p, { ...hostInput(p, 'PostToolUse', { tool_name: 'TaskCreate', tool_input: { subject: 'Next step', description: '' }, tool_response: { task: { id: '1', subject: 'Next step' } } }), session_id: 'sess-a' });
  await stop();
  const text = fs.readFileSync(todos, 'utf8');
  t.match(text, /#1 Next step/, 'rewritten with the new task');
  t.equal(text.split('Note: keep this.').length, 2, 'the note from .prev is kept');
  t.notOk(fs.existsSync(`${todos}.prev`));
});

t.test('the finalizer prunes old logs at the first answer end of a day, not at every one', async (t) => {
  const p = tempProject(t);
  const logs = path.join(p.data, 'logs');
  fs.mkdirSync(logs, { recursive: true });
  const completions = path.join(logs, 'session_completions.jsonl');
  fs.writeFileSync(completions, '{}\n');
  const yesterday = new Date(Date.now() - 86_400_000);
  fs.utimesSync(completions, yesterday, yesterday);
  fs.writeFileSync(path.join(logs, 'executions_20200101.jsonl'), '{}\n');
  const stop = () => runHook(inst, 'session-finalizer', p, hostInput(p, 'Stop', { stop_hook_active: false }));
  await stop();
  t.notOk(fs.existsSync(path.join(logs, 'executions_20200101.jsonl')), 'pruned at the day’s first answer end');
  fs.writeFileSync(path.join(logs, 'executions_20200102.jsonl'), '{}\n');
  await stop();
  t.ok(fs.existsSync(path.join(logs, 'executions_20200102.jsonl')), 'the day’s later answer ends leave the folder alone');
  t.equal(fs.readFileSync(completions, 'utf8').trim().split('\n').length, 3, 'every answer end still logs its completion');
});
