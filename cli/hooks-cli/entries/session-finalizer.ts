/**
 * session-finalizer: Stop hook. Writes LAST_SESSION.md and ACTIVE_TODOS.md
 * (and RECOVERY_GUIDE.md while the session looks interrupted, removing it
 * once it has recovered) where `session_docs` says, keeping what the user or
 * the model wrote in them; folds the learner's journal into the pattern
 * database (always at the seed's session end; on the logger's batch
 * schedule at the host's answer ends, in a detached learner-fold process
 * the host does not wait for), appends the completion
 * record and prunes old logs. The host fires Stop after every answer, so
 * this is idempotent: each run rewrites the documents with the session so
 * far. Always exits 0.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runHook, spawnDetached, type HookContext } from '../lib/hook-runtime';
import { fold, shouldFold, startFold } from '../lib/learner';
import { seedAnswer, type HookAnswer } from '../lib/protocol';
import { pruneLogs } from '../lib/retention';
import { activeTodosMd, docPaths, excludeFromGit, interruption, lastSessionMd, recoveryGuideMd, removeDoc, writeDoc } from '../lib/session-docs';
import { updateState, type SessionState } from '../lib/session';
import { appendJsonLine, ymd } from '../lib/store';

function handle(ctx: HookContext): HookAnswer {
  const { input, settings, paths, now } = ctx;
  // The seed's Stop ends the session: fold everything, now. The host's Stop ends an answer, after every one: fold on
  // the logger's schedule (about 25 runs or 30 s), in a detached process the host does not wait for, started last
  // (with async_logging off, or when no process can be started, here).
  let foldLater = false;
  if (settings.shadow_learner.learning_enabled) {
    if (input.protocol === 'seed' || !settings.performance.async_logging) fold(paths, settings, now);
    else foldLater = shouldFold(paths, settings, now.getTime());
  }
  const s: SessionState = updateState(paths, now, input.sessionId, (st) => {
    st.ended_at = now.toISOString();
    return JSON.parse(JSON.stringify(st)) as SessionState;
  });
  const intr = interruption(s, settings.context_monitor.emergency_threshold);
  const docs = docPaths(paths, settings);
  if (settings.session_docs.exclude_from_git) {
    for (const line of excludeFromGit(paths, docs)) ctx.log('INFO', `listed ${line} in .git/info/exclude`);
  }
  writeDoc(docs.lastSession, lastSessionMd(s, now, intr));
  writeDoc(docs.activeTodos, activeTodosMd(s)); // unchanged (no task changed this answer): not rewritten
  if (intr.interrupted) writeDoc(docs.recoveryGuide, recoveryGuideMd(s, now, intr));
  else removeDoc(docs.recoveryGuide);
  const tools = Object.keys(s.tool_usage).length;
  // Pruning reads the logs and sessions folders: once a day is enough (the first answer end of the day, known by
  // the completion log last written on an earlier day; the logger does the same with the day's execution log).
  const lastCompletion = fs.statSync(paths.completions, { throwIfNoEntry: false });
  const firstToday = !lastCompletion || ymd(lastCompletion.mtime) !== ymd(now);
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
  if (firstToday) pruneLogs(paths, settings.logging.log_retention_days, now);
  const message = `Session finalized. Modified ${s.modified_files.length} files, used ${tools} tools.`;
  ctx.log('INFO', message);
  if (foldLater && startFold(paths, path.join(path.dirname(ctx.hookFile), 'learner-fold.js'), now.getTime(), spawnDetached) === 'failed') fold(paths, settings, now);
  return input.protocol === 'host' ? { exitCode: 0 } : seedAnswer(true, message);
}

runHook('session-finalizer', 'Stop', __filename, handle);
