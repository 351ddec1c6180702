/**
 * Backups of the guarded project.
 *
 * Git (when `git_enabled` and the project is in a work tree): a snapshot
 * commit built with a temporary index (a copy of the real one, so staged
 * changes are kept and unchanged files are not re-hashed), `git add -A` for
 * unstaged and untracked files, `write-tree`, `commit-tree` with HEAD as
 * parent, and a ref `refs/hooks-cli/backups/<id>`. The user's branch, index
 * and `git status` are untouched.
 *
 * Filesystem (when git is absent or off, and `filesystem_backup_enabled`):
 * a copy of the project without `.git`, `.hooks_data` and `node_modules`
 * in `.hooks_data/backups/<id>/files/`.
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

function git(cwd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): string {
  const r = spawnSync('git', args, { cwd, env, encoding: 'utf8', timeout: Math.max(100, timeoutMs), stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`git ${args[0]}: ${(r.stderr || r.stdout).trim() || `exit ${r.status}`}`);
  return r.stdout.trim();
}

/** The work tree's top directory, or null when the project is not in one (or git is missing). */
export function gitTop(project: string): string | null {
  try {
    const r = spawnSync('git', ['rev-parse', '--show-toplevel'], { cwd: project, encoding: 'utf8', timeout: 3000, stdio: ['ignore', 'pipe', 'ignore'] });
    return r.status === 0 ? r.stdout.trim() : null;
  } catch {
    return null;
  }
}

function metaPath(paths: DataPaths, id: string): string {
  return path.join(paths.backups, id, 'metadata.json');
}

const COPY_SKIP = new Set(['.git', '.hooks_data', 'node_modules']);

function gitSnapshot(paths: DataPaths, id: string, reason: string, deadline: number): Pick<BackupMeta, 'ref' | 'commit' | 'git_root'> {
  const top = gitTop(paths.project);
  if (!top) throw new Error('not a git work tree');
  const left = () => deadline - Date.now();
  const gitDir = path.resolve(top, git(top, ['rev-parse', '--git-dir'], process.env, left()));
  const tmpIndex = path.join(paths.backups, `.index-${process.pid}-${Date.now()}`);
  const env = { ...process.env, ...GIT_IDENTITY, GIT_INDEX_FILE: tmpIndex };
  try {
    const realIndex = process.env.GIT_INDEX_FILE ? path.resolve(top, process.env.GIT_INDEX_FILE) : path.join(gitDir, 'index');
    if (fs.existsSync(realIndex)) fs.copyFileSync(realIndex, tmpIndex);
    const dataRel = path.relative(top, paths.root) || '.hooks_data';
    git(top, ['add', '-A', '--', '.', `:(exclude)${dataRel}`], env, left());
    const tree = git(top, ['write-tree'], env, left());
    let head: string | null = null;
    try {
      head = git(top, ['rev-parse', '--verify', '-q', 'HEAD'], env, left());
    } catch {
      head = null; // no commit yet
    }
    const commit = git(top, ['commit-tree', tree, ...(head ? ['-p', head] : []), '-m', `hooks-cli ${id}: ${reason}`], env, left());
    const ref = BACKUP_REF_PREFIX + id;
    git(top, ['update-ref', ref, commit], env, left());
    return { ref, commit, git_root: top };
  } finally {
    fs.rmSync(tmpIndex, { force: true });
  }
}

function fsCopy(paths: DataPaths, id: string): void {
  const dest = path.join(paths.backups, id, 'files');
  fs.mkdirSync(dest, { recursive: true });
  for (const entry of fs.readdirSync(paths.project)) {
    if (COPY_SKIP.has(entry)) continue;
    fs.cpSync(path.join(paths.project, entry), path.join(dest, entry), {
      recursive: true,
      verbatimSymlinks: true,
      filter: (src) => !COPY_SKIP.has(path.basename(src)),
    });
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
  const deadline = Date.now() + budgetMs;
  const bm = settings.backup_manager;
  let id: string;
  try {
    id = claimBackupId(paths, now);
  } catch (err) {
    const failed: BackupMeta = { backup_id: `backup_${backupStamp(now)}`, timestamp: now.toISOString(), reason, success: false, method: 'none', session_id: sessionId, error: `cannot create the backup folder: ${(err as Error).message}` };
    return failed;
  }
  const meta: BackupMeta = { backup_id: id, timestamp: now.toISOString(), reason, success: false, method: 'none', session_id: sessionId };
  const errors: string[] = [];
  if (bm.git_enabled) {
    try {
      Object.assign(meta, gitSnapshot(paths, id, reason, deadline));
      meta.method = 'git';
      meta.success = true;
    } catch (err) {
      errors.push(`git: ${(err as Error).message}`);
    }
  }
  if (!meta.success && bm.filesystem_backup_enabled) {
    try {
      fsCopy(paths, id);
      meta.method = 'filesystem';
      meta.success = true;
    } catch (err) {
      errors.push(`filesystem: ${(err as Error).message}`);
    }
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
