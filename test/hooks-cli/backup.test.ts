/**
 * Backups: a git snapshot captures tracked, staged and untracked files and
 * leaves the branch, the index and `git status` as they were; `hooks-cli
 * restore` brings the files back; the filesystem copy where git is absent or
 * off; max_backups; a failed backup is recorded as such.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createBackup, listBackups } from '../../cli/hooks-cli/lib/backup';
import { defaultSettings } from '../../cli/hooks-cli/lib/settings-schema';
import { dataPaths } from '../../cli/hooks-cli/lib/store';
import { buildInstall, hostInput, readJsonFile, runCli, runHook, tempProject, type Project } from '../helpers/hooks';

const inst = buildInstall(t);

async function backup(p: Project, trigger = 'manual') {
  const r = await runHook(inst, 'context-monitor', p, hostInput(p, 'PreCompact', { trigger }));
  t.equal(r.code, 0);
  const s = readJsonFile(path.join(p.data, 'session_state.json'));
  return s.backup_history[s.backup_history.length - 1] as { backup_id: string; success: boolean; reason: string };
}

t.test('a git snapshot leaves the branch, index and status untouched, and restore brings the files back', async (t) => {
  const p = tempProject(t, { git: true, files: { 'README.md': '# v1\n', 'src/app.js': 'v1\n', 'src/keep.js': 'keep\n' } });
  p.write('README.md', '# v2 unstaged\n'); // tracked, modified, not staged
  p.write('src/app.js', 'v2 staged\n');
  p.git('add', 'src/app.js'); // staged
  p.write('notes/new.txt', 'untracked\n'); // untracked
  p.git('rm', '-q', '--cached', 'src/keep.js'); // a staged deletion that keeps the file
  const before = { status: p.git('status', '--porcelain'), head: p.git('rev-parse', 'HEAD'), branch: p.git('symbolic-ref', 'HEAD'), cached: p.git('diff', '--cached'), stash: p.git('stash', 'list') };

  const b = await backup(p);
  t.ok(b.success, 'backup taken');
  t.match(b.backup_id, /^backup_\d{8}_\d{6}(?:_\d+)?$/);
  const after = { status: p.git('status', '--porcelain'), head: p.git('rev-parse', 'HEAD'), branch: p.git('symbolic-ref', 'HEAD'), cached: p.git('diff', '--cached'), stash: p.git('stash', 'list') };
  t.same(after, before, 'status, HEAD, branch, index and stash unchanged');
  const ref = `refs/hooks-cli/backups/${b.backup_id}`;
  t.equal(p.git('show', `${ref}:README.md`), '# v2 unstaged\n', 'unstaged change captured');
  t.equal(p.git('show', `${ref}:src/app.js`), 'v2 staged\n', 'staged change captured');
  t.equal(p.git('show', `${ref}:notes/new.txt`), 'untracked\n', 'untracked file captured');
  t.equal(p.git('show', `${ref}:src/keep.js`), 'keep\n', 'a file only removed from the index is still in the work tree, so captured');
  t.throws(() => p.git('show', `${ref}:.hooks_data/session_state.json`), 'runtime data not in the snapshot');
  t.equal(p.git('rev-parse', `${ref}^`).trim(), before.head.trim(), 'parent is HEAD');
  const meta = readJsonFile(path.join(p.data, 'backups', b.backup_id, 'metadata.json'));
  t.match(meta, { backup_id: b.backup_id, method: 'git', ref, success: true, reason: 'before context compaction (manual)' });
  t.match(fs.readFileSync(path.join(p.data, 'backups', 'backup.log'), 'utf8'), new RegExp(`\\t${b.backup_id}\\tgit\\tok\\tbefore context compaction \\(manual\\)`));

  // Damage the work tree, then restore.
  p.write('README.md', 'broken\n');
  fs.rmSync(path.join(p.dir, 'notes'), { recursive: true });
  fs.rmSync(path.join(p.dir, 'src', 'app.js'));
  p.write('later.txt', 'created after the backup\n');
  const cachedBefore = p.git('diff', '--cached');
  const r = await runCli(inst, p, ['restore', b.backup_id]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, new RegExp(`^Restored \\d+ files from ${b.backup_id} \\(git, `));
  t.match(r.stdout, /The state before the restore is in backup_\d{8}_\d{6}(?:_\d+)?\./);
  const safetyId = /The state before the restore is in (backup_\S+?)\./.exec(r.stdout)?.[1];
  t.not(safetyId, b.backup_id, 'the safety backup is a backup of its own, even in the same second');
  t.equal(p.git('show', `refs/hooks-cli/backups/${safetyId}:README.md`), 'broken\n', 'it holds the state before the restore');
  t.equal(p.read('README.md'), '# v2 unstaged\n');
  t.equal(p.read('src/app.js'), 'v2 staged\n');
  t.equal(p.read('notes/new.txt'), 'untracked\n');
  t.equal(p.read('later.txt'), 'created after the backup\n', 'files created since are kept');
  t.equal(p.git('diff', '--cached'), cachedBefore, 'the index is not touched by a restore');
  t.equal(p.git('symbolic-ref', 'HEAD'), before.branch);
});

t.test('restore: unknown and malformed ids exit 1 and say what to do', async (t) => {
  const p = tempProject(t, { git: true });
  const r = await runCli(inst, p, ['restore', 'backup_20000101_000000']);
  t.equal(r.code, 1);
  t.match(r.stderr, /no backup backup_20000101_000000; see hooks-cli list-backups/);
  const bad = await runCli(inst, p, ['restore', '../../etc']);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /is not a backup id \(backup_YYYYMMDD_HHMMSS or backup_YYYYMMDD_HHMMSS_N\)/);
  const none = await runCli(inst, p, ['restore']);
  t.equal(none.code, 2, 'missing argument: usage error');
});

t.test('without git (or with git_enabled off) the backup is a filesystem copy, and restore copies it back', async (t) => {
  const p = tempProject(t, { files: { 'a.txt': 'one\n', 'node_modules/big/index.js': 'x\n', 'src/b.txt': 'two\n' } });
  const b = await backup(p, 'auto');
  t.ok(b.success);
  const copy = path.join(p.data, 'backups', b.backup_id, 'files');
  t.equal(fs.readFileSync(path.join(copy, 'a.txt'), 'utf8'), 'one\n');
  t.equal(fs.readFileSync(path.join(copy, 'src', 'b.txt'), 'utf8'), 'two\n');
  t.notOk(fs.existsSync(path.join(copy, 'node_modules')), 'node_modules skipped');
  t.notOk(fs.existsSync(path.join(copy, '.hooks_data')), 'no backup of the backups');
  t.equal(readJsonFile(path.join(p.data, 'backups', b.backup_id, 'metadata.json')).method, 'filesystem');
  p.write('a.txt', 'changed\n');
  const r = await runCli(inst, p, ['restore', b.backup_id, '--json']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.json, { restored: b.backup_id, method: 'filesystem' });
  t.equal(p.read('a.txt'), 'one\n');

  const g = tempProject(t, { git: true });
  g.settings({ backup_manager: { git_enabled: false } });
  const gb = await backup(g);
  t.equal(readJsonFile(path.join(g.data, 'backups', gb.backup_id, 'metadata.json')).method, 'filesystem', 'git_enabled off');
  t.equal(g.git('for-each-ref', 'refs/hooks-cli/'), '', 'no ref made');
});

t.test('with both methods off the backup fails, and says so everywhere', async (t) => {
  const p = tempProject(t);
  p.settings({ backup_manager: { git_enabled: false, filesystem_backup_enabled: false } });
  const b = await backup(p);
  t.equal(b.success, false);
  const list = await runCli(inst, p, ['list-backups']);
  t.match(list.stdout, /before context compaction \(manual\) \[FAILED\]/);
  const r = await runCli(inst, p, ['restore', b.backup_id]);
  t.equal(r.code, 1);
  t.match(r.stderr, /failed when it was taken \(git and filesystem backups are both disabled\)/);
});

t.test('at most max_backups are kept: the oldest go, with their refs', async (t) => {
  const p = tempProject(t, { git: true });
  p.settings({ backup_manager: { max_backups: 2 } });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push((await backup(p)).backup_id);
  }
  t.equal(new Set(ids).size, 3);
  const dirs = fs.readdirSync(path.join(p.data, 'backups')).filter((d) => d.startsWith('backup_')).sort();
  t.same(dirs, ids.slice(1));
  const refs = p.git('for-each-ref', '--format=%(refname:strip=3)', 'refs/hooks-cli/backups/').trim().split('\n').sort();
  t.same(refs, ids.slice(1));
});

t.test('backups of the same second get ids of their own (_2, _3, ...), listed and pruned in time order', async (t) => {
  const p = tempProject(t);
  const paths = dataPaths(p.dir);
  const settings = defaultSettings();
  settings.backup_manager.git_enabled = false;
  settings.backup_manager.max_backups = 11;
  const now = new Date(2026, 10, 24, 2, 0, 0);
  const ids: string[] = [];
  for (let i = 0; i < 11; i++) {
    p.write('a.txt', `version ${i}\n`);
    ids.push(createBackup(paths, settings, `backup ${i}`, now, 5000).backup_id);
  }
  t.equal(ids[0], 'backup_20261124_020000');
  t.same(ids.slice(1, 3), ['backup_20261124_020000_2', 'backup_20261124_020000_3']);
  t.equal(new Set(ids).size, 11, 'no backup returned another one');
  t.equal(fs.readFileSync(path.join(paths.backups, ids[9], 'files', 'a.txt'), 'utf8'), 'version 9\n', 'each holds its own files');
  t.same(listBackups(paths).map((b) => b.backup_id), ids, '_10 and _11 come after _9');
  settings.backup_manager.max_backups = 3;
  createBackup(paths, settings, 'one more', new Date(2026, 10, 24, 2, 0, 1), 5000);
  t.same(listBackups(paths).map((b) => b.reason), ['backup 9', 'backup 10', 'one more'], 'the oldest are pruned');
});
