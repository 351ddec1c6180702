/**
 * Session state: the spec's fields (session_id, start_time, last_activity,
 * modified_files, commands_executed, tool_usage, backup_history) plus what
 * the hooks need to carry between calls, under keys of their own (context,
 * todos, tasks, failures, recent_results, ended_at).
 *
 * Several sessions can run in one project at once (two terminals): the host
 * names each with its `session_id`, and each has its own file,
 * `.hooks_data/sessions/<id>.json`, so they never reset each other.
 * `session_state.json` (the spec's file) mirrors the session with the latest
 * activity: it is what `hooks-cli status` shows by default. The seed's input
 * names no session: then `session_state.json` is the one session, and a new
 * one starts after a Stop.
 *
 * Every change is a locked read-modify-write with an atomic replace.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isObject, readJson, replaceFile, unlinkQuiet, withLock, writeJsonAtomic, type DataPaths } from './store';
import { backupStamp } from './time';

export interface BackupRecord {
  backup_id: string;
  timestamp: string;
  reason: string;
  success: boolean;
}

export interface TodoItem {
  content: string;
  status: string;
  activeForm?: string;
}

/** A task of the host's TaskCreate/TaskUpdate tools (Claude Code 2.1), by its id. */
export interface TaskItem {
  id: string;
  subject: string;
  description: string;
  status: string;
  activeForm?: string;
}

export interface SessionState {
  session_id: string;
  start_time: string;
  last_activity: string;
  modified_files: string[];
  commands_executed: { command: string; timestamp: string }[];
  tool_usage: Record<string, number>;
  backup_history: BackupRecord[];
  context: {
    prompt_chars: number;
    tool_chars: number;
    tool_calls: number;
    estimated_tokens: number;
    transcript_tokens: number | null;
    usage: number;
    /** Thresholds already acted on this session ('backup', 'emergency'). */
    thresholds_hit: string[];
  };
  /** The TodoWrite list as last written (older hosts), or null. */
  todos: TodoItem[] | null;
  /** TaskCreate/TaskUpdate tasks, in creation order, or null when none was made. */
  tasks: TaskItem[] | null;
  /** When the task list (todos or tasks) last changed, or null. */
  tasks_updated_at: string | null;
  /** The transcript's last compaction already acted on (its uuid or timestamp). */
  last_compaction: string | null;
  failures: { tool: string; command: string | null; error: string; timestamp: string }[];
  /** The last few tool runs (true = succeeded), newest last. */
  recent_results: { tool: string; command: string | null; success: boolean }[];
  ended_at: string | null;
}

const MAX_COMMANDS = 1000;
const MAX_FAILURES = 50;
const MAX_RECENT = 20;

/** Six random hex digits. Not node:crypto: loading it (and the streams it pulls in) costs every hook start-up several ms, and uniqueness is all this needs. */
function randomHex6(): string {
  return Math.floor(Math.random() * 0x1000000).toString(16).padStart(6, '0');
}

export function freshState(now: Date, sessionId: string | null): SessionState {
  const iso = now.toISOString();
  return {
    // The second alone is not unique: two sessions (or a session ended and the next begun) can start within one.
    session_id: sessionId ?? `session_${backupStamp(now)}_${randomHex6()}`,
    start_time: iso,
    last_activity: iso,
    modified_files: [],
    commands_executed: [],
    tool_usage: {},
    backup_history: [],
    context: { prompt_chars: 0, tool_chars: 0, tool_calls: 0, estimated_tokens: 0, transcript_tokens: null, usage: 0, thresholds_hit: [] },
    todos: null,
    tasks: null,
    tasks_updated_at: null,
    last_compaction: null,
    failures: [],
    recent_results: [],
    ended_at: null,
  };
}

/** Fills what an older or hand-edited file lacks, so code can rely on every field. */
function normalise(raw: Record<string, unknown>, now: Date): SessionState {
  const base = freshState(now, typeof raw.session_id === 'string' ? raw.session_id : null);
  const s = { ...base, ...raw } as SessionState;
  s.context = { ...base.context, ...(isObject(raw.context) ? raw.context : {}) } as SessionState['context'];
  for (const k of ['modified_files', 'commands_executed', 'backup_history', 'failures', 'recent_results'] as const) {
    if (!Array.isArray(s[k])) (s as unknown as Record<string, unknown>)[k] = [];
  }
  if (!isObject(s.tool_usage)) s.tool_usage = {};
  if (!Array.isArray(s.context.thresholds_hit)) s.context.thresholds_hit = [];
  return s;
}

/** The file of a host session: `sessions/<id>.json`, the id made safe for a file name. */
export function sessionFile(paths: DataPaths, sessionId: string): string {
  const safe = sessionId.replace(/[^\w.-]/g, '_').replace(/^\.+/, '_').slice(0, 120) || '_';
  return paths.sessions + path.sep + safe + '.json'; // path.join's result: `safe` has no separator and no leading dot
}

function readStateFile(file: string, now: Date): SessionState | null {
  const raw = readJson<Record<string, unknown> | null>(file, () => null);
  return raw ? normalise(raw, now) : null;
}

/**
 * A session's state: the named one (`sessions/<id>.json`), or without an id
 * the one with the latest activity (`session_state.json`).
 */
export function readState(paths: DataPaths, now = new Date(), sessionId: string | null = null): SessionState | null {
  if (sessionId === null) return readStateFile(paths.sessionState, now);
  const own = readStateFile(sessionFile(paths, sessionId), now);
  if (own) return own;
  // Written by a version that kept one file for every session.
  const mirror = readStateFile(paths.sessionState, now);
  return mirror && mirror.session_id === sessionId ? mirror : null;
}

/** Every session recorded in the project, latest activity first. */
export function listSessions(paths: DataPaths, now = new Date()): SessionState[] {
  const byId = new Map<string, SessionState>();
  let names: string[] = [];
  try {
    names = fs.readdirSync(paths.sessions).filter((n) => n.endsWith('.json'));
  } catch {
    /* none yet */
  }
  for (const n of names) {
    const s = readStateFile(path.join(paths.sessions, n), now);
    if (s) byId.set(s.session_id, s);
  }
  const mirror = readStateFile(paths.sessionState, now);
  if (mirror && !byId.has(mirror.session_id)) byId.set(mirror.session_id, mirror);
  return [...byId.values()].sort((a, b) => b.last_activity.localeCompare(a.last_activity));
}

/**
 * Applies `mutate` to the current session, under the lock. With a host
 * session id, that session's own file (a new session when it has none);
 * without one (seed shape), `session_state.json`, a new session when there
 * is none or the last one was finalized.
 */
export function updateState<T>(paths: DataPaths, now: Date, hostSessionId: string | null, mutate: (s: SessionState) => T): T {
  const file = hostSessionId === null ? paths.sessionState : sessionFile(paths, hostSessionId);
  return withLock(file, () => {
    let s = hostSessionId === null ? readStateFile(file, now) : readState(paths, now, hostSessionId);
    const finished = hostSessionId === null && s !== null && s.ended_at !== null;
    if (!s || finished) s = freshState(now, hostSessionId);
    // The host's Stop fires after every answer, not once per session: activity after it resumes the session.
    if (hostSessionId !== null) s.ended_at = null;
    s.last_activity = now.toISOString();
    const result = mutate(s);
    if (s.commands_executed.length > MAX_COMMANDS) s.commands_executed.splice(0, s.commands_executed.length - MAX_COMMANDS);
    if (s.failures.length > MAX_FAILURES) s.failures.splice(0, s.failures.length - MAX_FAILURES);
    if (s.recent_results.length > MAX_RECENT) s.recent_results.splice(0, s.recent_results.length - MAX_RECENT);
    if (file !== paths.sessionState) {
      replaceFile(file, JSON.stringify(s, null, 2) + '\n'); // under its lock; readers read .prev meanwhile
      pointMirror(paths, file, s);
    } else writeJsonAtomic(file, s);
    return result;
  });
}

/**
 * The mirror, `session_state.json`: the session with the latest activity
 * (last writer wins). A symbolic link to that session's file, replaced only
 * when another session becomes the latest: so a hook run writes one state
 * file, not two (each whole-file replace costs a hook about 0.3 ms on ext4,
 * which pushes a replaced file's data to the disk). A copy where links
 * cannot be made.
 */
function pointMirror(paths: DataPaths, file: string, s: SessionState): void {
  // The link is relative to the data folder. Not path.relative: Node compiles it on first use (about 0.45M
  // instructions a run) for what is a prefix cut for every file under the data folder.
  const target = file.startsWith(paths.root + path.sep) ? file.slice(paths.root.length + 1) : path.relative(paths.root, file);
  let current: string | null = null;
  try {
    current = fs.readlinkSync(paths.sessionState);
  } catch {
    /* not a link (none yet, or a copy, or the seed's own file) */
  }
  if (current === target) return;
  const tmp = `${paths.sessionState}.${process.pid}.link`;
  try {
    unlinkQuiet(tmp);
    fs.symlinkSync(target, tmp);
    fs.renameSync(tmp, paths.sessionState);
  } catch {
    unlinkQuiet(tmp);
    writeJsonAtomic(paths.sessionState, s);
  }
}

/** The session file the mirror links to (pruning keeps it), or null. */
export function mirrorTarget(paths: DataPaths): string | null {
  try {
    return path.resolve(paths.root, fs.readlinkSync(paths.sessionState));
  } catch {
    return null;
  }
}

/** The seed's context estimate from what the session has seen. */
export function estimateTokens(
  ctx: SessionState['context'],
  cm: { tokens_per_char: number; tool_overhead: number; system_overhead: number },
): number {
  return Math.round(cm.system_overhead + (ctx.prompt_chars + ctx.tool_chars) * cm.tokens_per_char + ctx.tool_calls * cm.tool_overhead);
}
