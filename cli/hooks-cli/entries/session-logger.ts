/**
 * session-logger: PostToolUse (and PostToolUseFailure) hook for every tool.
 * Appends the run to the daily execution log, folds it into the session
 * state (tool counts, commands, modified files, failures, the assistant's
 * task list: TodoWrite, or TaskCreate/TaskUpdate) and hands it to the shadow
 * learner's journal; when the batch schedule says fold, it starts the fold in
 * a detached learner-fold process and does not wait for it. Always exits 0.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runHook, spawnDetached, type HookContext } from '../lib/hook-runtime';
import { learnKeys } from '../lib/learn-keys';
import { fold, journalRun, shouldFold, startFold } from '../lib/learner';
import { pruneLogs } from '../lib/retention';
import { seedAnswer, type HookAnswer } from '../lib/protocol';
import { estimateTokens, updateState } from '../lib/session';
import { appendJsonLine, executionLogPath } from '../lib/store';
import { applyTaskTool, todosOf } from '../lib/tasks';

const FILE_TOOLS = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit']);

function responseText(resp: unknown): string {
  if (resp === undefined || resp === null) return '';
  return typeof resp === 'string' ? resp : JSON.stringify(resp);
}

function handle(ctx: HookContext): HookAnswer {
  const { input, settings, paths } = ctx;
  const tool = input.tool ?? 'unknown';
  const ti = input.toolInput;
  const command = tool === 'Bash' && typeof ti.command === 'string' ? ti.command : null;
  const fileArg = typeof ti.file_path === 'string' ? ti.file_path : typeof ti.notebook_path === 'string' ? ti.notebook_path : null;
  const file = fileArg && FILE_TOOLS.has(tool) ? (path.isAbsolute(fileArg) && fileArg.startsWith(paths.project + path.sep) ? path.relative(paths.project, fileArg) : fileArg) : null;
  const success = input.success ?? true;
  const error = success ? null : input.error ?? 'failed (no error text)';
  const iso = ctx.now.toISOString();
  const todos = tool === 'TodoWrite' ? todosOf(ti) : null;
  const chars = JSON.stringify(ti).length + responseText(input.toolResponse).length + (error?.length ?? 0);

  const sessionId = updateState(paths, ctx.now, input.sessionId, (s) => {
    s.tool_usage[tool] = (s.tool_usage[tool] ?? 0) + 1;
    if (command !== null) s.commands_executed.push({ command, timestamp: iso });
    if (file && !s.modified_files.includes(file)) s.modified_files.push(file);
    const listBefore = todos || tool.startsWith('Task') ? JSON.stringify([s.todos, s.tasks]) : null;
    if (todos) s.todos = todos;
    if (success && (tool === 'TaskCreate' || tool === 'TaskUpdate')) s.tasks = applyTaskTool(s.tasks, tool, ti, input.toolResponse);
    if (listBefore !== null && listBefore !== JSON.stringify([s.todos, s.tasks])) s.tasks_updated_at = iso; // ACTIVE_TODOS.md's date
    if (!success) s.failures.push({ tool, command, error: error!.slice(0, 500), timestamp: iso });
    s.recent_results.push({ tool, command, success });
    s.context.tool_calls++;
    s.context.tool_chars += chars;
    s.context.estimated_tokens = estimateTokens(s.context, settings.context_monitor);
    return s.session_id;
  });

  if (settings.logging.log_executions) {
    const logFile = executionLogPath(paths, ctx.now);
    if (!fs.existsSync(logFile)) pruneLogs(paths, settings.logging.log_retention_days, ctx.now); // once a day
    appendJsonLine(logFile, {
      timestamp: iso,
      session_id: sessionId,
      event: input.event,
      tool,
      ...(command !== null ? { command } : {}),
      ...(file ? { file } : {}),
      success,
      ...(error ? { error: error.slice(0, 2000) } : {}),
      ...(input.executionTimeMs !== null ? { execution_time_ms: input.executionTimeMs } : {}),
    });
  }

  if (settings.shadow_learner.learning_enabled) {
    if (command !== null) {
      // A failing chain is blamed on its last command; a success counts for all of them.
      const keys = learnKeys(command, input.cwd ?? paths.project, process.env.HOME ?? '/');
      const blamed = success ? keys : keys.slice(-1);
      for (const key of blamed) journalRun(paths, { tool, command: key, success, error, timestamp: iso });
      if (blamed.length === 0) journalRun(paths, { tool, command: null, success, error, timestamp: iso });
    } else journalRun(paths, { tool, command: null, success, error, timestamp: iso });
    // With async_logging off every run is folded at once, here (what the setting asks for). On the batch schedule
    // the fold runs in a detached process the host does not wait for (a fold of 10,000 patterns made the logger
    // 2.1x bare Node); when none can be started, the journal waits for the next run or the answer's end.
    if (!settings.performance.async_logging) fold(paths, settings, ctx.now);
    else if (shouldFold(paths, settings, ctx.now.getTime())) startFold(paths, path.join(path.dirname(ctx.hookFile), 'learner-fold.js'), ctx.now.getTime(), spawnDetached);
  }
  return input.protocol === 'host' ? { exitCode: 0 } : seedAnswer(true, `Logged ${tool} execution`);
}

runHook('session-logger', 'PostToolUse', __filename, handle);
