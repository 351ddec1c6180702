/**
 * session-finalizer: Stop hook. Writes LAST_SESSION.md and ACTIVE_TODOS.md
 * (and RECOVERY_GUIDE.md when the session looks interrupted), folds the
 * learner's journal into the pattern database, appends the completion
 * record and prunes old logs. The host fires Stop after every answer, so
 * this is idempotent: each run rewrites the documents with the session so
 * far. Always exits 0.
 */
import { runHook, type HookContext } from '../lib/hook-runtime';
import { fold } from '../lib/learner';
import { seedAnswer, type HookAnswer } from '../lib/protocol';
import { pruneLogs } from '../lib/retention';
import { activeTodosMd, interruption, lastSessionMd, recoveryGuideMd } from '../lib/session-docs';
import { updateState, type SessionState } from '../lib/session';
import { appendJsonLine, writeFileAtomic } from '../lib/store';

function handle(ctx: HookContext): HookAnswer {
  const { input, settings, paths, now } = ctx;
  if (settings.shadow_learner.learning_enabled) fold(paths, settings, now);
  const s: SessionState = updateState(paths, now, input.sessionId, (st) => {
    st.ended_at = now.toISOString();
    return JSON.parse(JSON.stringify(st)) as SessionState;
  });
  const intr = interruption(s, settings.context_monitor.emergency_threshold);
  writeFileAtomic(paths.lastSession, lastSessionMd(s, now, intr));
  writeFileAtomic(paths.activeTodos, activeTodosMd(s, now));
  if (intr.interrupted) writeFileAtomic(paths.recoveryGuide, recoveryGuideMd(s, now, intr));
  const tools = Object.keys(s.tool_usage).length;
  appendJsonLine(paths.completions, {
    session_id: s.session_id,
    start_time: s.start_time,
    end_time: now.toISOString(),
    duration_seconds: Math.round((now.getTime() - Date.parse(s.start_time)) / 1000),
    tool_executions: Object.values(s.tool_usage).reduce((a, b) => a + b, 0),
    tools_used: tools,
    files_modified: s.modified_files.length,
    commands_executed: s.commands_executed.length,
    backups: s.backup_history.length,
    context_usage: Math.round(s.context.usage * 1000) / 1000,
    interrupted: intr.interrupted,
    interruption_reasons: intr.reasons,
  });
  pruneLogs(paths, settings.logging.log_retention_days, now);
  const message = `Session finalized. Modified ${s.modified_files.length} files, used ${tools} tools.`;
  ctx.log('INFO', message);
  return input.protocol === 'host' ? { exitCode: 0 } : seedAnswer(true, message);
}

runHook('session-finalizer', 'Stop', __filename, handle);
