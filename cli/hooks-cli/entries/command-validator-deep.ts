/**
 * The command validator's second stage (not a hook): the deep analysis of a
 * command line, for every line the fast path (lib/fast-path.ts) does not
 * take. Bundled apart as `hooks/lib/command-validator-deep.js` with its own
 * code cache, and loaded by entries/command-validator.ts only then; the
 * modules both stages use (the runtime, the store, the learner) are the
 * first stage's own instances (build-hooks.ts, STAGES).
 */
import fs from 'node:fs';
import type { HookContext } from '../lib/hook-runtime';
import { analyzeCommand, applySwitches, readCurrentBranch } from '../lib/command-rules';
import { hostBlockAnswer, seedAnswer, type HookAnswer } from '../lib/protocol';
import { readState } from '../lib/session';
import { backupAndRecord, describeBackup } from '../lib/session-ops';
import { allowAnswer, learnedLines } from '../lib/validator-answer';

const CRITICAL_BACKUP_EVERY_MS = 60_000;

/** Blocks (⛔), warns (⚠️), repeats the learner's warnings (🚨), suggests (💡) and backs up, as the analysis says. */
export function validateDeep(ctx: HookContext, command: string, cwd: string, home: string): HookAnswer {
  const { input, settings } = ctx;
  const analysis = analyzeCommand(command, {
    cwd,
    project: ctx.paths.project,
    home,
    currentBranch: () => readCurrentBranch(cwd, (p) => fs.readFileSync(p, 'utf8')),
  });
  const findings = applySwitches(analysis.findings, settings.security);
  const blocks = findings.filter((f) => f.level === 'block');
  const warnings = findings.filter((f) => f.level === 'warn');

  const suggestions = [...new Set(findings.map((f) => f.suggestion).filter((s): s is string => !!s))];
  if (blocks.length > 0) {
    const lines = [...blocks.map((f) => `⛔ Command blocked: ${f.reason}`), ...suggestions.map((s) => `💡 Suggestion: ${s}`)];
    ctx.log('WARNING', `blocked: ${command.slice(0, 300)} (${blocks.map((b) => b.reason).join('; ')})`);
    const message = lines.join('\n');
    return input.protocol === 'host' ? hostBlockAnswer(message) : seedAnswer(false, message, 1);
  }

  const lines = warnings.map((f) => `⚠️ ${f.reason}`);
  lines.push(...learnedLines(ctx, analysis.invocations.map((i) => i.argv)));
  lines.push(...suggestions.map((s) => `💡 Suggestion: ${s}`));

  if (analysis.critical && settings.backup_manager.backup_on_critical_ops) {
    const state = readState(ctx.paths);
    const last = state?.backup_history[state.backup_history.length - 1];
    if (!last || ctx.now.getTime() - Date.parse(last.timestamp) > CRITICAL_BACKUP_EVERY_MS) {
      const meta = backupAndRecord(ctx, `before ${analysis.critical}`);
      // Said either way: a backup that left files out, or was not taken, is news the model needs (issue 13, problem 1).
      lines.push(describeBackup(meta, 'before this command'));
    }
  }
  return allowAnswer(ctx, lines.join('\n'));
}
