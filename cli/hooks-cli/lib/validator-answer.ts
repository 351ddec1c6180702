/**
 * What the command validator says when it lets a command run, shared by its
 * two stages (entries/command-validator.ts, the fast path, and
 * entries/command-validator-deep.ts, the deep analysis) so both give the very
 * same answer: the learner's 🚨 lines for the commands the line runs, and the
 * allow answer in the input's shape.
 */
import type { HookContext } from './hook-runtime';
import { commandKey, predictions } from './learner';
import { hostContextAnswer, seedAnswer, type HookAnswer } from './protocol';

export function allowAnswer(ctx: HookContext, message: string): HookAnswer {
  return ctx.input.protocol === 'host' ? hostContextAnswer('PreToolUse', message, true) : seedAnswer(true, message || 'Command allowed');
}

/** 🚨 lines for the commands (argv of each invocation) the shadow learner has seen fail again and again. */
export function learnedLines(ctx: HookContext, argvs: readonly (readonly string[])[]): string[] {
  const { settings } = ctx;
  if (!settings.shadow_learner.learning_enabled) return [];
  const lines: string[] = [];
  const cache = predictions(ctx.paths, settings, ctx.now.getTime());
  const keys = new Set(argvs.map((argv) => commandKey(argv)).filter((k): k is string => k !== null));
  for (const key of keys) {
    const p = cache.commands[key];
    if (!p) continue;
    const pct = Math.round(p.failure_rate * 100);
    lines.push(`🚨 ${key} failed in ${pct}% of ${p.evidence_count} runs (confidence ${Math.round(p.confidence * 100)}%)${p.common_error ? `; last error: ${p.common_error}` : ''}`);
  }
  return lines;
}
