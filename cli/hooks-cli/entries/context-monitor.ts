/**
 * context-monitor: UserPromptSubmit (and PreCompact) hook. Tracks context
 * usage (the spec's estimate, or the real figure from the transcript), takes
 * a backup when usage first crosses the backup and the emergency thresholds
 * (once each per session, and again after a compaction), and before the host
 * compacts the context. Always exits 0.
 */
import { transcriptContext, formatPercent } from '../lib/context';
import path from 'node:path';
import { runHook, type HookContext } from '../lib/hook-runtime';
import { hostContextAnswer, seedAnswer, type HookAnswer } from '../lib/protocol';
import { estimateTokens, updateState } from '../lib/session';
import { docPaths } from '../lib/session-docs';
import { backupAndRecord, describeBackup } from '../lib/session-ops';

function handle(ctx: HookContext): HookAnswer {
  const { input, settings } = ctx;
  const cm = settings.context_monitor;
  if (input.event === 'PreCompact') {
    const meta = backupAndRecord(ctx, `before context compaction (${input.trigger ?? 'unknown'})`);
    const message = describeBackup(meta, 'before compaction');
    return input.protocol === 'host' ? { exitCode: 0, stderr: message + '\n' } : seedAnswer(true, message, 0);
  }
  const tc = input.transcriptPath ? transcriptContext(input.transcriptPath) : null;
  const real = tc?.tokens ?? null;
  const { usage, crossed } = updateState(ctx.paths, ctx.now, input.sessionId, (s) => {
    if (tc?.compaction && tc.compaction !== s.last_compaction) {
      // A compaction since the last look: the estimate starts again, and the thresholds may be crossed (and backed up) again.
      s.last_compaction = tc.compaction;
      s.context.prompt_chars = 0;
      s.context.tool_chars = 0;
      s.context.tool_calls = 0;
      s.context.thresholds_hit = [];
      s.context.transcript_tokens = null;
    }
    s.context.prompt_chars += input.prompt?.length ?? 0;
    s.context.estimated_tokens = estimateTokens(s.context, cm);
    if (real !== null) s.context.transcript_tokens = real;
    const tokens = real ?? s.context.estimated_tokens;
    s.context.usage = tokens / cm.max_context_tokens;
    let crossed: 'backup' | 'emergency' | null = null;
    if (s.context.usage >= cm.emergency_threshold && !s.context.thresholds_hit.includes('emergency')) crossed = 'emergency';
    else if (s.context.usage >= cm.backup_threshold && !s.context.thresholds_hit.includes('backup')) crossed = 'backup';
    if (crossed) {
      s.context.thresholds_hit.push(crossed);
      if (crossed === 'emergency' && !s.context.thresholds_hit.includes('backup')) s.context.thresholds_hit.push('backup');
    }
    return { usage: s.context.usage, crossed };
  });
  const lines = [`Context usage: ${formatPercent(usage)}`];
  if (crossed) {
    const limit = crossed === 'emergency' ? cm.emergency_threshold : cm.backup_threshold;
    const meta = backupAndRecord(ctx, `context usage ${formatPercent(usage)} reached the ${crossed} threshold (${formatPercent(limit)})`);
    lines.push(describeBackup(meta, `(${crossed} threshold)`));
  }
  if (usage >= cm.emergency_threshold) {
    const todos = path.relative(ctx.paths.project, docPaths(ctx.paths, settings).activeTodos);
    lines.push(`Context nearly full: finish the current step, and note the state in ${todos} (outside its generated block) before the context is compacted.`);
  }
  else if (usage >= cm.backup_threshold) lines.push('Backup recommended: context usage is above the backup threshold.');
  const message = lines.join('\n');
  return input.protocol === 'host' ? hostContextAnswer('UserPromptSubmit', message) : seedAnswer(true, message, 0);
}

runHook('context-monitor', 'UserPromptSubmit', __filename, handle);
