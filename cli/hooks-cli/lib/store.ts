/**
 * The `.hooks_data/` tree of a guarded project and the few file operations
 * every hook and the CLI share. Hooks run in parallel (the host starts every
 * matching hook at once), so:
 *  - JSON files are replaced atomically (write a temporary file, rename);
 *  - read-modify-write cycles run under a lock file (`<file>.lock`, created
 *    with O_EXCL; a lock older than STALE_LOCK_MS is taken as abandoned);
 *  - log lines are appended with one write() on an O_APPEND descriptor, which
 *    Linux keeps whole and in order for regular files;
 *  - a JSON file that does not parse is renamed aside (`.corrupt-<time>`) and
 *    rebuilt, never a crash.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface DataPaths {
  project: string;
  root: string;
  backups: string;
  logs: string;
  patterns: string;
  sessionState: string;
  /** One state file per host session (`sessions/<id>.json`). */
  sessions: string;
  /** The single-file database of earlier versions (migrated into patternShards on the first fold); its `.lock` guards the database. */
  patternDb: string;
  /** The pattern database: `index.json` plus 256 shard files of command patterns (see learner.ts). */
  patternShards: string;
  /** Tool runs not yet folded into the pattern database (see learner.ts). */
  learnJournal: string;
  /** The prediction cache: `meta.json` and shards of predictions (see learner.ts). */
  predictionCache: string;
  completions: string;
  backupLog: string;
  hookLog: string;
}

export function dataPaths(project: string): DataPaths {
  // One path.join (it normalises the project's path); the rest are plain concatenation, which gives the same
  // strings (`root` never ends in a separator) without normalising each again: fifteen path.join calls cost a
  // hook about 0.6M instructions of character-by-character work.
  const root = path.join(project, '.hooks_data');
  const sep = path.sep;
  const logs = root + sep + 'logs';
  const patterns = root + sep + 'patterns';
  const backups = root + sep + 'backups';
  return {
    project,
    root,
    backups,
    logs,
    patterns,
    sessionState: root + sep + 'session_state.json',
    sessions: root + sep + 'sessions',
    patternDb: patterns + sep + 'patterns.json',
    patternShards: patterns + sep + 'db',
    learnJournal: patterns + sep + 'pending.jsonl',
    predictionCache: patterns + sep + 'predictions',
    completions: logs + sep + 'session_completions.jsonl',
    backupLog: backups + sep + 'backup.log',
    hookLog: logs + sep + 'hooks.log',
  };
}

/** `executions_YYYYMMDD.jsonl` for the local date of `d`. */
export function executionLogPath(paths: DataPaths, d: Date): string {
  return path.join(paths.logs, `executions_${ymd(d)}.jsonl`);
}

export function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

export function ymd(d: Date): string {
  return `${d.getFullYear()}${pad2(d.getMonth() + 1)}${pad2(d.getDate())}`;
}

/** Creates the tree (idempotent). */
export function ensureTree(paths: DataPaths): void {
  if (fs.existsSync(paths.patterns) && fs.existsSync(paths.logs) && fs.existsSync(paths.backups)) return;
  for (const dir of [paths.backups, paths.logs, paths.patterns]) fs.mkdirSync(dir, { recursive: true });
  // Runtime data is never committed: the folder ignores itself.
  const ignore = path.join(paths.root, '.gitignore');
  if (!fs.existsSync(ignore)) fs.writeFileSync(ignore, '# hooks-cli runtime data: never committed\n*\n');
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
export function sleepSync(ms: number): void {
  Atomics.wait(sleepCell, 0, 0, ms);
}

/** Problems met on the way (a corrupt file set aside); the hooks log them. */
export const notices: string[] = [];

/**
 * Reads a JSON file. Missing: `fallback()`. Unparseable or rejected by
 * `accept`: the file is renamed aside and `fallback()` is returned.
 */
export function readJson<T>(file: string, fallback: () => T, accept: (v: unknown) => boolean = isObject): T {
  const text = readReplaced(file);
  if (text === null) return fallback();
  try {
    const value: unknown = JSON.parse(text);
    if (accept(value)) return value as T;
  } catch {
    /* set aside below */
  }
  const aside = `${file}.corrupt-${Date.now()}`;
  try {
    fs.renameSync(file, aside);
    notices.push(`${path.basename(file)} was not valid; moved to ${path.basename(aside)} and rebuilt`);
  } catch {
    /* another hook moved it first */
  }
  return fallback();
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** 32-bit FNV-1a of a string's UTF-16 code units: a cheap, stable hash (shard names, edit detection). */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Removes a file if it is there. Not fs.rmSync: in Node 20 that loads its
 * recursive-removal module on every call, a cost on the hook path.
 */
export function unlinkQuiet(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Replaces `file` with `text` without renaming over it: the new text goes
 * to a temporary file, the old file is renamed to `<file>.prev`, the new one
 * into place, and `.prev` removed. ext4 (the usual Linux file system)
 * pushes a file's data to the disk when it is renamed over another (its
 * `auto_da_alloc`), which made each whole-file replace cost a hook 0.2-0.5
 * ms; renames onto free names do not. Between the two renames `file` is
 * missing: readers go through readReplaced, which then reads `.prev` (the
 * whole old text), so no reader ever sees a missing or half-written file, and
 * a process killed between them leaves the old text there for the next
 * writer. For files written under a lock or by one writer at a time (session
 * state, the session documents); the host's own settings files keep
 * writeFileAtomic, as other programs read them.
 */
export function replaceFile(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.${++tmpCounter}.tmp`;
  const prev = `${file}.prev`;
  try {
    fs.writeFileSync(tmp, text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(tmp, text);
  }
  try {
    if (fs.existsSync(prev) && fs.existsSync(file)) unlinkQuiet(prev); // left by a writer killed after its second rename
    try {
      fs.renameSync(file, prev);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // a new file, or a killed writer left only .prev
    }
    fs.renameSync(tmp, file);
  } catch (err) {
    unlinkQuiet(tmp);
    throw err;
  }
  unlinkQuiet(prev);
}

/**
 * A file's text, or null when there is none; a file being replaced by
 * replaceFile (missing between its two renames) is read from `.prev`. A
 * symbolic link is followed to its target's `.prev`.
 */
export function readReplaced(file: string): string | null {
  for (let attempt = 0; attempt < 3; attempt++) {
    // existsSync first: a missing file is common on the hook path, and a thrown ENOENT costs a stack trace.
    const text = fs.existsSync(file) ? readIfThere(file) : null;
    if (text !== null) return text;
    const st = fs.lstatSync(file, { throwIfNoEntry: false }); // a dangling link: its target is being replaced
    const prev = `${(st?.isSymbolicLink() ? linkTarget(file) : null) ?? file}.prev`;
    const old = fs.existsSync(prev) ? readIfThere(prev) : null;
    if (old !== null) return old;
    if (!fs.existsSync(file)) return null; // not there, and not being replaced (or done meanwhile: look again)
  }
  return null;
}

function readIfThere(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function linkTarget(file: string): string | null {
  try {
    return path.resolve(path.dirname(file), fs.readlinkSync(file));
  } catch {
    return null;
  }
}

let tmpCounter = 0;
/** Writes `data` as JSON through a temporary file and a rename, so readers see the old or the new file, never half of one. */
export function writeJsonAtomic(file: string, data: unknown, pretty = true): void {
  writeFileAtomic(file, JSON.stringify(data, null, pretty ? 2 : undefined) + '\n');
}

export function writeFileAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.${++tmpCounter}.tmp`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  } catch (err) {
    unlinkQuiet(tmp);
    throw err;
  }
}

/** Appends one line (JSON of `record`) with a single write. */
export function appendJsonLine(file: string, record: unknown): void {
  appendText(file, JSON.stringify(record) + '\n');
}

export function appendText(file: string, text: string): void {
  const fd = fs.openSync(file, 'a');
  try {
    fs.writeSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
}

let defaultLockWaitMs = 2000;

/** How long `withLock` waits by default: a hook sets it from its own time budget, so a busy machine makes it wait, not skip the lock. */
export function setDefaultLockWaitMs(ms: number): void {
  defaultLockWaitMs = ms;
}

/** A lock whose holder cannot be checked (another machine on a shared folder) is taken over after this long. */
const STALE_LOCK_MS = 30_000;

/** The lock file's inode when its holder is gone (its pid, the file's content, names no live process, or the file is very old); else null. */
function staleLockInode(lock: string): number | null {
  const st = fs.statSync(lock);
  const ageMs = Date.now() - st.mtimeMs;
  if (ageMs > STALE_LOCK_MS) return st.ino;
  const pid = Number(fs.readFileSync(lock, 'utf8'));
  if (!Number.isInteger(pid) || pid <= 0) return ageMs > 1000 ? st.ino : null; // being written, or from an older version
  try {
    process.kill(pid, 0);
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH' ? st.ino : null;
  }
}

/**
 * Runs `fn` holding `<file>.lock` (made with O_EXCL, holding the holder's
 * pid). A lock left by a process that died is taken over at once; a live
 * holder is waited for, however loaded the machine (a holder descheduled for
 * seconds is not "stale"). Waits at most `waitMs`, then runs anyway (a hook
 * must not hang) and says so in `notices`.
 */
export function withLock<T>(file: string, fn: () => T, waitMs = defaultLockWaitMs): T {
  return lockAnd(file, fn, waitMs, true) as T;
}

/** As withLock, but when the lock cannot be had within `waitMs`, returns null without running `fn` (work that can wait for the next hook). */
export function tryWithLock<T>(file: string, fn: () => T, waitMs = defaultLockWaitMs): T | null {
  return lockAnd(file, fn, waitMs, false);
}

function lockAnd<T>(file: string, fn: () => T, waitMs: number, runAnyway: boolean): T | null {
  const lock = `${file}.lock`;
  const start = Date.now();
  let fd: number | null = null;
  let delay = 1;
  for (;;) {
    try {
      fd = fs.openSync(lock, 'wx');
      fs.writeSync(fd, String(process.pid));
      break;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        fs.mkdirSync(path.dirname(lock), { recursive: true });
        continue;
      }
      if (code !== 'EEXIST') throw err;
      try {
        const staleIno = staleLockInode(lock);
        if (staleIno !== null) {
          // Move it aside under a unique name, then check it is the file judged stale: another waiter may
          // have taken the stale one over and made a fresh lock meanwhile, which is put back, not removed.
          const aside = `${lock}.stale-${process.pid}-${Date.now()}`;
          fs.renameSync(lock, aside);
          if (fs.statSync(aside).ino !== staleIno) {
            try {
              fs.linkSync(aside, lock);
            } catch {
              /* a third process made a lock meanwhile: it holds it */
            }
          }
          unlinkQuiet(aside);
          continue;
        }
      } catch {
        continue; // released or taken over meanwhile
      }
      if (Date.now() - start > waitMs) {
        if (!runAnyway) {
          notices.push(`lock ${path.basename(lock)} still held after ${waitMs} ms; left the work for the next hook`);
          return null;
        }
        notices.push(`lock ${path.basename(lock)} still held after ${waitMs} ms; went ahead without it`);
        break;
      }
      sleepSync(delay);
      delay = Math.min(delay * 2, 16);
    }
  }
  try {
    return fn();
  } finally {
    if (fd !== null) {
      fs.closeSync(fd);
      unlinkQuiet(lock);
    }
  }
}

/** Reads a JSON-lines file; lines that do not parse are skipped (a line cut by a crash). */
export function readJsonLines(file: string): unknown[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: unknown[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      /* skip */
    }
  }
  return out;
}
