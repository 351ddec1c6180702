/**
 * Backups of the guarded project.
 *
 * Git (when `git_enabled` and the project is in a work tree): a snapshot
 * commit built with a temporary index (a copy of the real one, so staged
 * changes are kept and unchanged files are not re-hashed), the changed and
 * untracked files that git does not ignore (`git status`: what `git add -A`
 * would add) added to it, `write-tree`, `commit-tree` with HEAD as parent,
 * and a ref `refs/hooks-cli/backups/<id>`. The user's branch, index and `git
 * status` are untouched.
 *
 * Filesystem (when git is absent or off, and `filesystem_backup_enabled`):
 * a copy of the project without `.git`, `.hooks_data`, `node_modules` and
 * what the `.gitignore` files ignore, in `.hooks_data/backups/<id>/files/`.
 *
 * Bounds (a hook waits for its backup, and `.git` keeps what is added):
 * files bigger than `max_file_size_mb` are left out and named; when the rest
 * adds up to more than `max_total_size_mb` no backup is taken; a backup
 * taking longer than `max_backup_time_ms` (or than the hook has left) is
 * abandoned. Each case is recorded and said in the hook's message.
 *
 * Each backup has `.hooks_data/backups/<id>/metadata.json` and a line in
 * `backups/backup.log` (tab-separated: time, id, method, ok|failed, reason,
 * error). At most `max_backups` are kept, oldest dropped first.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Settings } from './settings-schema';
import { appendText, isObject, readJson, writeJsonAtomic, type DataPaths } from './store';
import { backupStamp } from './time';

export const BACKUP_REF_PREFIX = 'refs/hooks-cli/backups/';
/** `backup_YYYYMMDD_HHMMSS`, with `_N` (N >= 2) for a later backup of the same second. */
const ID_RE = /^backup_\d{8}_\d{6}(?:_[1-9]\d*)?$/;

/** Time order: by the second, then by the same-second number (so `_10` comes after `_9`). */
function byIdTime(a: string, b: string): number {
  const key = (id: string) => [id.slice(7, 22), Number(id.slice(23) || 1)] as const;
  const [sa, na] = key(a);
  const [sb, nb] = key(b);
  return sa < sb ? -1 : sa > sb ? 1 : na - nb;
}

export interface BackupMeta {
  backup_id: string;
  timestamp: string;
  reason: string;
  success: boolean;
  method: 'git' | 'filesystem' | 'none';
  ref?: string;
  commit?: string;
  git_root?: string;
  error?: string;
  session_id?: string | null;
  /** Files left out for being over `max_file_size_mb` (the first few), and how many in all. */
  skipped_files?: { path: string; size_bytes: number }[];
  skipped_count?: number;
}

export interface BackupLimits {
  maxFileBytes: number;
  maxTotalBytes: number;
}

/** Raised when a bound is reached: the backup is not taken, and the message says why and which setting to change. */
class LimitError extends Error {}

const MB = 1024 * 1024;
const fmtMb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
const SKIPPED_NAMED = 5;
const RAISE = 'Change it in .hooks_data/settings.json (backup_manager), or list big build output in .gitignore';

/** Sorts a candidate file into the backup or the skipped list; throws LimitError when the total goes over. */
class Budget {
  total = 0;
  skipped: { path: string; size_bytes: number }[] = [];
  constructor(
    private readonly limits: BackupLimits,
    private readonly deadline: number,
    private readonly maxTimeMs: number,
  ) {}
  take(rel: string, size: number): boolean {
    if (size > this.limits.maxFileBytes) {
      this.skipped.push({ path: rel, size_bytes: size });
      return false;
    }
    this.total += size;
    if (this.total > this.limits.maxTotalBytes) {
      throw new LimitError(`the files to back up add up to more than backup_manager.max_total_size_mb (${fmtMb(this.limits.maxTotalBytes)}); no backup taken. ${RAISE}`);
    }
    return true;
  }
  checkTime(): void {
    if (Date.now() > this.deadline) throw new LimitError(`the backup took longer than its ${this.maxTimeMs} ms (backup_manager.max_backup_time_ms or the hook's time left); abandoned. ${RAISE}`);
  }
}

export class BackupError extends Error {
  constructor(
    readonly code: 'HOOKS_ERR_NO_BACKUP' | 'HOOKS_ERR_BACKUP_FAILED' | 'HOOKS_ERR_BAD_BACKUP_ID',
    message: string,
  ) {
    super(message);
    this.name = 'BackupError';
  }
}

/** child_process is loaded only when a backup is taken: it costs a hook start-up about 15 ms. */
function spawnSync(cmd: string, args: string[], opts: import('node:child_process').SpawnSyncOptionsWithStringEncoding) {
  const cp = require('node:child_process') as typeof import('node:child_process');
  return cp.spawnSync(cmd, args, opts);
}

const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'hooks-cli',
  GIT_AUTHOR_EMAIL: 'hooks-cli@localhost',
  GIT_COMMITTER_NAME: 'hooks-cli',
  GIT_COMMITTER_EMAIL: 'hooks-cli@localhost',
};

function git(cwd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number, input?: string, raw = false): string {
  if (timeoutMs <= 0) throw new LimitError(`no time left for git ${args[0]} within backup_manager.max_backup_time_ms (or the hook's time left); backup abandoned. ${RAISE}`);
  const r = spawnSync('git', args, { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 256 * MB, input, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') throw new LimitError(`git ${args[0]} took longer than the ${timeoutMs} ms left (backup_manager.max_backup_time_ms); backup abandoned. ${RAISE}`);
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`git ${args[0]}: ${(r.stderr || r.stdout).trim() || `exit ${r.status}`}`);
  return raw ? r.stdout : r.stdout.trim();
}

/** The work tree's top directory, or null when the project is not in one (or git is missing). */
export function gitTop(project: string, timeoutMs = 3000): string | null {
  try {
    const r = spawnSync('git', ['rev-parse', '--show-toplevel'], { cwd: project, encoding: 'utf8', timeout: Math.max(1, timeoutMs), stdio: ['ignore', 'pipe', 'ignore'] });
    return r.status === 0 ? r.stdout.trim() : null;
  } catch {
    return null;
  }
}

function metaPath(paths: DataPaths, id: string): string {
  return path.join(paths.backups, id, 'metadata.json');
}

const COPY_SKIP = new Set(['.git', '.hooks_data', 'node_modules']);

/** One line for the hook's message: the backup taken (and what it left out), or why none was. */
export function describeBackup(meta: BackupMeta, when = ''): string {
  const at = when ? ` ${when}` : '';
  if (!meta.success) return `Backup${at} not taken: ${meta.error ?? 'unknown error'}`;
  let line = `Backup ${meta.backup_id} taken${at}.`;
  if (meta.skipped_files?.length) {
    const named = meta.skipped_files.map((f) => `${f.path} (${fmtMb(f.size_bytes)})`).join(', ');
    const more = (meta.skipped_count ?? 0) > meta.skipped_files.length ? ` and ${meta.skipped_count! - meta.skipped_files.length} more` : '';
    line += ` Left out, over backup_manager.max_file_size_mb: ${named}${more}.`;
  }
  return line;
}

function gitSnapshot(paths: DataPaths, id: string, reason: string, budget: Budget, deadline: number): Pick<BackupMeta, 'ref' | 'commit' | 'git_root'> {
  const left = () => deadline - Date.now();
  const top = gitTop(paths.project, Math.min(3000, left()));
  budget.checkTime();
  if (!top) throw new Error('not a git work tree');
  const gitDir = path.resolve(top, git(top, ['rev-parse', '--git-dir'], process.env, left()));
  const tmpIndex = path.join(paths.backups, `.index-${process.pid}-${Date.now()}`);
  const env = { ...process.env, ...GIT_IDENTITY, GIT_INDEX_FILE: tmpIndex };
  try {
    const realIndex = process.env.GIT_INDEX_FILE ? path.resolve(top, process.env.GIT_INDEX_FILE) : path.join(gitDir, 'index');
    if (fs.existsSync(realIndex)) fs.copyFileSync(realIndex, tmpIndex);
    const dataRel = path.relative(top, paths.root) || '.hooks_data';
    // What `git add -A` would add (changed tracked files, untracked files git does not ignore), sized first.
    const listing = git(top, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames', '--ignore-submodules=all', '--', '.', `:(exclude)${dataRel}`], env, left(), undefined, true);
    const toAdd: string[] = [];
    for (const entry of listing.split('\0')) {
      if (entry.length < 4) continue;
      const xy = entry.slice(0, 2);
      const rel = entry.slice(3);
      if (xy !== '??' && xy[1] === ' ') continue; // staged only: already in the index copy
      let size = 0;
      try {
        const st = fs.lstatSync(path.join(top, rel));
        size = st.isFile() ? st.size : 0;
      } catch {
        size = 0; // deleted: staging the deletion costs nothing
      }
      budget.checkTime();
      if (budget.take(rel, size)) toAdd.push(rel);
    }
    if (toAdd.length > 0) git(top, ['--literal-pathspecs', 'add', '-A', '--pathspec-from-file=-', '--pathspec-file-nul'], env, left(), toAdd.join('\0'));
    const tree = git(top, ['write-tree'], env, left());
    let head: string | null = null;
    try {
      head = git(top, ['rev-parse', '--verify', '-q', 'HEAD'], env, left());
    } catch (err) {
      if (err instanceof LimitError) throw err;
      head = null; // no commit yet
    }
    const commit = git(top, ['commit-tree', tree, ...(head ? ['-p', head] : []), '-m', `hooks-cli ${id}: ${reason}`], env, left());
    const ref = BACKUP_REF_PREFIX + id;
    git(top, ['update-ref', ref, commit], env, left());
    return { ref, commit, git_root: top };
  } finally {
    fs.rmSync(tmpIndex, { force: true });
    fs.rmSync(`${tmpIndex}.lock`, { force: true }); // left by a git killed at the deadline
  }
}

/**
 * The `.gitignore` rules of one folder as a matcher of paths relative to it
 * (git's syntax, as `gitignore(5)` gives it: `#` comments, `!` negation, a
 * trailing `/` for folders only, a leading or inner `/` anchoring to the
 * folder, `*`, `?`, `[...]` and `**`). Used where git is not: a project that
 * is not a repository still has its build output named in `.gitignore`.
 */
export function gitignoreMatcher(text: string): (rel: string, isDir: boolean) => boolean | null {
  const rules: { re: RegExp; negate: boolean; dirOnly: boolean }[] = [];
  for (let line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    line = line.replace(/(?<!\\)\s+$/, '');
    let negate = false;
    if (line.startsWith('!')) {
      negate = true;
      line = line.slice(1);
    }
    const dirOnly = line.endsWith('/');
    if (dirOnly) line = line.slice(0, -1);
    if (line === '') continue;
    const anchored = line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    let re = '';
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (c === '*' && line[i + 1] === '*') {
        const slash = line[i + 2] === '/';
        re += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else if (c === '*') re += '[^/]*';
      else if (c === '?') re += '[^/]';
      else if (c === '[') {
        const end = line.indexOf(']', i + 1);
        if (end < 0) re += '\\[';
        else {
          re += '[' + line.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\') + ']';
          i = end;
        }
      } else if (c === '\\' && i + 1 < line.length) re += line[++i].replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    }
    rules.push({ re: new RegExp(anchored ? `^${re}$` : `(?:^|/)${re}$`), negate, dirOnly });
  }
  return (rel, isDir) => {
    let verdict: boolean | null = null;
    for (const r of rules) if ((!r.dirOnly || isDir) && r.re.test(rel)) verdict = !r.negate;
    return verdict;
  };
}

type Matcher = { base: string; match: (rel: string, isDir: boolean) => boolean | null };

/** The files a filesystem backup copies (relative paths), walking the project with the `.gitignore` files met on the way. */
function filesToCopy(paths: DataPaths, budget: Budget): { files: string[]; links: string[] } {
  const files: string[] = [];
  const links: string[] = [];
  const walk = (rel: string, matchers: Matcher[]) => {
    budget.checkTime();
    const abs = path.join(paths.project, rel);
    let here = matchers;
    try {
      here = [...matchers, { base: rel, match: gitignoreMatcher(fs.readFileSync(path.join(abs, '.gitignore'), 'utf8')) }];
    } catch {
      /* no .gitignore here */
    }
    for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (COPY_SKIP.has(e.name)) continue;
      const isDir = e.isDirectory();
      let ignored = false;
      for (const m of here) {
        const v = m.match(m.base ? childRel.slice(m.base.length + 1) : childRel, isDir);
        if (v !== null) ignored = v;
      }
      if (ignored) continue;
      if (isDir) walk(childRel, here);
      else if (e.isSymbolicLink()) links.push(childRel);
      else if (e.isFile() && budget.take(childRel, fs.statSync(path.join(abs, e.name)).size)) files.push(childRel);
    }
  };
  walk('', []);
  return { files, links };
}

function fsCopy(paths: DataPaths, id: string, budget: Budget): void {
  const { files, links } = filesToCopy(paths, budget);
  const dest = path.join(paths.backups, id, 'files');
  try {
    for (const rel of files) {
      budget.checkTime();
      fs.mkdirSync(path.dirname(path.join(dest, rel)), { recursive: true });
      fs.copyFileSync(path.join(paths.project, rel), path.join(dest, rel));
    }
    for (const rel of links) {
      fs.mkdirSync(path.dirname(path.join(dest, rel)), { recursive: true });
      fs.symlinkSync(fs.readlinkSync(path.join(paths.project, rel)), path.join(dest, rel));
    }
  } catch (err) {
    fs.rmSync(dest, { recursive: true, force: true }); // never a half copy that looks whole
    throw err;
  }
}

/**
 * Claims the backup id of `now`: `backup_YYYYMMDD_HHMMSS`, or with `_2`,
 * `_3`, ... when a backup of the same second exists (a restore's safety
 * backup taken in the second of the backup it restores must not be that
 * backup, or the state before the restore is lost). The folder is made
 * without `recursive`, so two processes never claim the same id.
 */
function claimBackupId(paths: DataPaths, now: Date): string {
  fs.mkdirSync(paths.backups, { recursive: true });
  const base = `backup_${backupStamp(now)}`;
  for (let n = 1; ; n++) {
    const id = n === 1 ? base : `${base}_${n}`;
    try {
      fs.mkdirSync(path.join(paths.backups, id));
      return id;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/**
 * Takes a backup. Never throws: a failure is recorded (metadata, log) and
 * returned with `success: false`. Every call takes a backup of its own (see
 * claimBackupId).
 */
export function createBackup(paths: DataPaths, settings: Settings, reason: string, now: Date, budgetMs: number, sessionId: string | null = null): BackupMeta {
  const bm = settings.backup_manager;
  const maxTimeMs = Math.max(1, Math.min(bm.max_backup_time_ms, budgetMs));
  const deadline = Date.now() + maxTimeMs;
  const limits = { maxFileBytes: bm.max_file_size_mb * MB, maxTotalBytes: bm.max_total_size_mb * MB };
  let budget = new Budget(limits, deadline, maxTimeMs);
  let id: string;
  try {
    id = claimBackupId(paths, now);
  } catch (err) {
    const failed: BackupMeta = { backup_id: `backup_${backupStamp(now)}`, timestamp: now.toISOString(), reason, success: false, method: 'none', session_id: sessionId, error: `cannot create the backup folder: ${(err as Error).message}` };
    return failed;
  }
  const meta: BackupMeta = { backup_id: id, timestamp: now.toISOString(), reason, success: false, method: 'none', session_id: sessionId };
  const errors: string[] = [];
  let bounded = false;
  if (bm.git_enabled) {
    try {
      Object.assign(meta, gitSnapshot(paths, id, reason, budget, deadline));
      meta.method = 'git';
      meta.success = true;
    } catch (err) {
      bounded = err instanceof LimitError;
      errors.push(bounded ? (err as Error).message : `git: ${(err as Error).message}`);
    }
  }
  // A bound reached by git would be reached by a copy too (and a copy costs more): no second try.
  if (!meta.success && !bounded && bm.filesystem_backup_enabled) {
    budget = new Budget(limits, deadline, maxTimeMs);
    try {
      fsCopy(paths, id, budget);
      meta.method = 'filesystem';
      meta.success = true;
    } catch (err) {
      errors.push(`filesystem: ${(err as Error).message}`);
    }
  }
  if (budget.skipped.length > 0) {
    meta.skipped_count = budget.skipped.length;
    meta.skipped_files = [...budget.skipped].sort((a, b) => b.size_bytes - a.size_bytes).slice(0, SKIPPED_NAMED);
  }
  if (!meta.success) meta.error = errors.length ? errors.join('; ') : 'git and filesystem backups are both disabled';
  writeJsonAtomic(metaPath(paths, id), meta);
  appendText(paths.backupLog, [meta.timestamp, id, meta.method, meta.success ? 'ok' : 'failed', oneLine(reason), oneLine(meta.error ?? '')].join('\t') + '\n');
  prune(paths, bm.max_backups, budgetMs);
  return meta;
}

const oneLine = (s: string) => s.replace(/[\t\r\n]+/g, ' ');

export function readMeta(paths: DataPaths, id: string): BackupMeta | null {
  if (!ID_RE.test(id)) return null;
  return readJson<BackupMeta | null>(metaPath(paths, id), () => null, (v) => isObject(v) && typeof v.backup_id === 'string');
}

/** Every backup, oldest first. */
export function listBackups(paths: DataPaths): BackupMeta[] {
  let names: string[];
  try {
    names = fs.readdirSync(paths.backups).filter((n) => ID_RE.test(n)).sort(byIdTime);
  } catch {
    return [];
  }
  return names.map((n) => readMeta(paths, n)).filter((m): m is BackupMeta => m !== null);
}

function prune(paths: DataPaths, max: number, budgetMs: number): void {
  const all = listBackups(paths);
  for (const old of all.slice(0, Math.max(0, all.length - max))) {
    if (old.ref && old.git_root) {
      try {
        git(old.git_root, ['update-ref', '-d', old.ref], process.env, budgetMs);
      } catch {
        /* ref already gone */
      }
    }
    fs.rmSync(path.join(paths.backups, old.backup_id), { recursive: true, force: true });
  }
}

/**
 * Brings a backup's files back into the project. Files created since the
 * backup are left alone; git's index and HEAD are not touched (the files are
 * written from a temporary index).
 */
export function restoreBackup(paths: DataPaths, id: string): { meta: BackupMeta; files: number } {
  if (!ID_RE.test(id)) throw new BackupError('HOOKS_ERR_BAD_BACKUP_ID', `'${id}' is not a backup id (backup_YYYYMMDD_HHMMSS or backup_YYYYMMDD_HHMMSS_N); see hooks-cli list-backups`);
  const meta = readMeta(paths, id);
  if (!meta) throw new BackupError('HOOKS_ERR_NO_BACKUP', `no backup ${id}; see hooks-cli list-backups`);
  if (!meta.success) throw new BackupError('HOOKS_ERR_BACKUP_FAILED', `backup ${id} failed when it was taken (${meta.error ?? 'no files'}); nothing to restore`);
  if (meta.method === 'git' && meta.commit && meta.git_root) {
    const tmpIndex = path.join(paths.backups, `.restore-index-${process.pid}`);
    const env = { ...process.env, GIT_INDEX_FILE: tmpIndex };
    try {
      git(meta.git_root, ['read-tree', meta.commit], env, 60_000);
      git(meta.git_root, ['checkout-index', '-a', '-f'], env, 60_000);
      const files = git(meta.git_root, ['ls-files'], env, 60_000).split('\n').filter(Boolean).length;
      return { meta, files };
    } finally {
      fs.rmSync(tmpIndex, { force: true });
    }
  }
  const src = path.join(paths.backups, id, 'files');
  let files = 0;
  fs.cpSync(src, paths.project, {
    recursive: true,
    force: true,
    filter: (p) => {
      if (fs.statSync(p).isFile()) files++;
      return true;
    },
  });
  return { meta, files };
}
