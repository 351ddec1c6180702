/**
 * Backups are bounded (issue 13, problem 1: a `rm -rf build` beside a 100 MB
 * untracked file made PreToolUse take 5 s and grew .git by 91 MB; without git
 * 600 MB were copied): big files are left out and named, a backup over the
 * total is not taken and says so, ignored build output is never copied, and
 * a backup never outlives its time.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { createBackup, gitignoreMatcher } from '../../cli/hooks-cli/lib/backup';
import { defaultSettings } from '../../cli/hooks-cli/lib/settings-schema';
import { dataPaths } from '../../cli/hooks-cli/lib/store';
import { buildInstall, hostInput, readJsonFile, runHook, tempProject, type Project } from '../helpers/hooks';

const inst = buildInstall(t);
const MB = 1024 * 1024;

/** Bytes under .git/objects. */
function objectBytes(p: Project): number {
  let n = 0;
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const f = path.join(d, e.name);
      if (e.isDirectory()) walk(f);
      else n += fs.statSync(f).size;
    }
  };
  walk(path.join(p.dir, '.git', 'objects'));
  return n;
}

/** A file of `bytes` random bytes (incompressible, as build output often is). */
function writeRandom(p: Project, rel: string, bytes: number): void {
  fs.mkdirSync(path.dirname(path.join(p.dir, rel)), { recursive: true });
  const buf = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i += 4) buf.writeUInt32LE((Math.imul(i + 1, 2654435761) ^ (i >>> 7)) >>> 0, i);
  fs.writeFileSync(path.join(p.dir, rel), buf);
}

const preCompact = (p: Project) => runHook(inst, 'context-monitor', p, hostInput(p, 'PreCompact', { trigger: 'auto' }));

t.test('git: an untracked file over max_file_size_mb is left out and named; .git does not grow by it', async (t) => {
  const p = tempProject(t, { git: true });
  p.settings({ backup_manager: { max_file_size_mb: 1 } });
  writeRandom(p, 'build/big.bin', 3 * MB);
  p.write('build/small.txt', 'keep me\n');
  p.write('src/app.js', 'changed\n');
  const before = objectBytes(p);
  const r = await preCompact(p);
  t.equal(r.code, 0);
  t.match(r.stderr, /^Backup backup_\S+ taken before compaction\. Left out, over backup_manager\.max_file_size_mb: build\/big\.bin \(3\.0 MB\)\./);
  const meta = readJsonFile(path.join(p.data, 'session_state.json')).backup_history[0];
  const ref = `refs/hooks-cli/backups/${meta.backup_id}`;
  t.equal(p.git('show', `${ref}:build/small.txt`), 'keep me\n');
  t.equal(p.git('show', `${ref}:src/app.js`), 'changed\n');
  t.throws(() => p.git('show', `${ref}:build/big.bin`), 'the big file is not in the snapshot');
  t.ok(objectBytes(p) - before < 256 * 1024, `.git/objects grew by ${objectBytes(p) - before} bytes, not by the 3 MB file`);
  t.equal(p.git('status', '--porcelain', '--untracked-files=no'), ' M src/app.js\n', 'the real index untouched');
});

t.test('git: files adding up to more than max_total_size_mb: no backup, and the message says so and how to change it', async (t) => {
  const p = tempProject(t, { git: true });
  p.settings({ backup_manager: { max_file_size_mb: 2, max_total_size_mb: 2 } });
  for (let i = 0; i < 3; i++) writeRandom(p, `data/part${i}.bin`, MB);
  const before = objectBytes(p);
  const r = await preCompact(p);
  t.equal(r.code, 0);
  t.match(r.stderr, /^Backup before compaction not taken: the files to back up add up to more than backup_manager\.max_total_size_mb \(2\.0 MB\); no backup taken\. Change it in \.hooks_data\/settings\.json/);
  t.equal(p.git('for-each-ref', 'refs/hooks-cli/'), '', 'no snapshot ref');
  t.ok(objectBytes(p) - before < MB, 'nothing of the 3 MB hashed into .git');
  const meta = readJsonFile(path.join(p.data, 'session_state.json')).backup_history[0];
  t.equal(meta.success, false);
  t.notOk(fs.existsSync(path.join(p.data, 'backups', meta.backup_id, 'files')), 'no filesystem copy tried instead');
});

t.test('git: ignored build output is not backed up', async (t) => {
  const p = tempProject(t, { git: true, files: { '.gitignore': 'dist/\n*.log\n', 'src/a.js': 'a\n' } });
  p.write('dist/bundle.js', 'built\n');
  p.write('debug.log', 'noise\n');
  p.write('src/b.js', 'new\n');
  const r = await preCompact(p);
  t.equal(r.code, 0, r.stderr);
  const id = readJsonFile(path.join(p.data, 'session_state.json')).backup_history[0].backup_id;
  const files = p.git('ls-tree', '-r', '--name-only', `refs/hooks-cli/backups/${id}`).trim().split('\n');
  t.same(files.sort(), ['.gitignore', 'src/a.js', 'src/b.js']);
});

t.test('filesystem (no git): .gitignore rules, node_modules and big files are left out; the copy is the rest', async (t) => {
  const p = tempProject(t, {
    files: {
      '.gitignore': '# build output\n/build/\n*.log\n!keep.log\ncoverage\n',
      'src/app.js': 'app\n',
      'src/.gitignore': 'generated/\n',
      'src/generated/x.js': 'gen\n',
      'src/build/inner.js': 'not the top build\n',
      'build/out.js': 'built\n',
      'node_modules/dep/index.js': 'dep\n',
      'a.log': 'noise\n',
      'keep.log': 'kept\n',
      'coverage/lcov.info': 'cov\n',
    },
  });
  p.settings({ backup_manager: { git_enabled: false, max_file_size_mb: 1 } });
  writeRandom(p, 'assets/video.bin', 2 * MB);
  const r = await preCompact(p);
  t.equal(r.code, 0);
  t.match(r.stderr, /taken before compaction\. Left out, over backup_manager\.max_file_size_mb: assets\/video\.bin \(2\.0 MB\)\./);
  const id = readJsonFile(path.join(p.data, 'session_state.json')).backup_history[0].backup_id;
  const root = path.join(p.data, 'backups', id, 'files');
  const copied: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(d, e.name), rel + e.name + '/');
      else copied.push(rel + e.name);
    }
  };
  walk(root, '');
  t.same(copied.sort(), ['.gitignore', 'keep.log', 'src/.gitignore', 'src/app.js', 'src/build/inner.js']);
});

t.test('a backup with no time left is abandoned at once, and says which setting bounds it', async (t) => {
  const p = tempProject(t, { git: true });
  p.write('x.txt', 'x\n');
  const settings = defaultSettings();
  const meta = createBackup(dataPaths(p.dir), settings, 'test', new Date(), 1);
  t.equal(meta.success, false);
  t.match(meta.error, /backup_manager\.max_backup_time_ms/);
  t.equal(p.git('for-each-ref', 'refs/hooks-cli/'), '');
  t.same(fs.readdirSync(path.join(p.data, 'backups')).filter((f) => f.startsWith('.index-')), [], 'no temporary index left');
});

t.test('gitignore rules as git reads them', async (t) => {
  const m = gitignoreMatcher('*.o\n/top\ndocs/*.md\n!docs/keep.md\nout/\n**/tmp/**\nfoo\\ bar\n[ab].c\n');
  t.equal(m('x/y.o', false), true);
  t.equal(m('top', true), true);
  t.equal(m('x/top', true), null, 'anchored');
  t.equal(m('docs/a.md', false), true);
  t.equal(m('docs/keep.md', false), false, 'negated');
  t.equal(m('docs/sub/a.md', false), null, '* does not cross /');
  t.equal(m('out', true), true);
  t.equal(m('out', false), null, 'out/ matches folders only');
  t.equal(m('a/tmp/b/c', false), true);
  t.equal(m('foo bar', false), true);
  t.equal(m('b.c', false), true);
  t.equal(m('c.c', false), null);
});
