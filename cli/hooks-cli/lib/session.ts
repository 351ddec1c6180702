/**
 * `session_state.json`: the spec's fields (session_id, start_time,
 * last_activity, modified_files, commands_executed, tool_usage,
 * backup_history) plus what the hooks need to carry between calls, under
 * keys of their own (context, todos, failures, recent_results, ended_at).
 * Every change is a locked read-modify-write with an atomic replace.
 */
import { randomBytes } from 'node:crypto';
import { isObject, readJson, withLock, writeJsonAtomic, type DataPaths } from './store';
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
  todos: TodoItem[] | null;
  failures: { tool: string; command: string | null; error: string; timestamp: string }[];
  /** The last few tool runs (true = succeeded), newest last. */
  recent_results: { tool: string; command: string | null; success: boolean }[];
  ended_at: string | null;
}

const MAX_COMMANDS = 1000;
const MAX_FAILURES = 50;
const MAX_RECENT = 20;

export function freshState(now: Date, sessionId: string | null): SessionState {
  const iso = now.toISOString();
  return {
    // The second alone is not unique: two sessions (or a session ended and the next begun) can start within one.
    session_id: sessionId ?? `session_${backupStamp(now)}_${randomBytes(3).toString('hex')}`,
    start_time: iso,
    last_activity: iso,
    modified_files: [],
    commands_executed: [],
    tool_usage: {},
    backup_history: [],
    context: { prompt_chars: 0, tool_chars: 0, tool_calls: 0, estimated_tokens: 0, transcript_tokens: null, usage: 0, thresholds_hit: [] },
    todos: null,
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

export function readState(paths: DataPaths, now = new Date()): SessionState | null {
  const raw = readJson<Record<string, unknown> | null>(paths.sessionState, () => null);
  return raw ? normalise(raw, now) : null;
}

/**
 * Applies `mutate` to the current session, under the lock. A new session
 * starts when there is none, when the host names another session, or (seed
 * shape, which names none) when the last one was finalized.
 */
export function updateState<T>(paths: DataPaths, now: Date, hostSessionId: string | null, mutate: (s: SessionState) => T): T {
  return withLock(paths.sessionState, () => {
    let s = readState(paths, now);
    const other = hostSessionId !== null && s !== null && s.session_id !== hostSessionId;
    const finished = hostSessionId === null && s !== null && s.ended_at !== null;
    if (!s || other || finished) s = freshState(now, hostSessionId);
    // The host's Stop fires after every answer, not once per session: activity after it resumes the session.
    if (hostSessionId !== null) s.ended_at = null;
    s.last_activity = now.toISOString();
    const result = mutate(s);
    if (s.commands_executed.length > MAX_COMMANDS) s.commands_executed.splice(0, s.commands_executed.length - MAX_COMMANDS);
    if (s.failures.length > MAX_FAILURES) s.failures.splice(0, s.failures.length - MAX_FAILURES);
    if (s.recent_results.length > MAX_RECENT) s.recent_results.splice(0, s.recent_results.length - MAX_RECENT);
    writeJsonAtomic(paths.sessionState, s);
    return result;
  });
}

/** The seed's context estimate from what the session has seen. */
export function estimateTokens(
  ctx: SessionState['context'],
  cm: { tokens_per_char: number; tool_overhead: number; system_overhead: number },
): number {
  return Math.round(cm.system_overhead + (ctx.prompt_chars + ctx.tool_chars) * cm.tokens_per_char + ctx.tool_calls * cm.tool_overhead);
}
