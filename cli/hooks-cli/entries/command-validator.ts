/**
 * command-validator: PreToolUse hook for Bash. Parses the command, blocks
 * dangerous ones (⛔), warns about suspicious ones (⚠️) and about commands
 * the shadow learner has seen fail again and again (🚨), offers
 * alternatives (💡), and takes a backup before allowed commands that
 * destroy data (`backup_on_critical_ops`).
 *
 * Seed input: exit 1 with `{allow:false}` to block. Host input: exit 2 with
 * the reason on stderr, which the host obeys (exit 1 would let it run).
 */
import fs from 'node:fs';
import { analyzeCommand, applySwitches, readCurrentBranch } from '../lib/command-rules';
import { runHook, type HookContext } from '../lib/hook-runtime';
import { commandKey, predictions } from '../lib/learner';
import { hostBlockAnswer, hostContextAnswer, seedAnswer, type HookAnswer } from '../lib/protocol';
import { readState } from '../lib/session';
import { backupAndRecord, describeBackup } from '../lib/session-ops';

const CRITICAL_BACKUP_EVERY_MS = 60_000;

function handle(ctx: HookContext): HookAnswer {
  const { input, settings } = ctx;
  const allow = (message: string) => (input.protocol === 'host' ? hostContextAnswer('PreToolUse', message, true) : seedAnswer(true, message || 'Command allowed'));
  if (input.tool !== null && input.tool !== 'Bash') return allow('');
  const command = typeof input.toolInput.command === 'string' ? input.toolInput.command : '';
  if (command.trim() === '') return allow('');

  const cwd = input.cwd ?? ctx.paths.project;
  const analysis = analyzeCommand(command, {
    cwd,
    project: ctx.paths.project,
    home: process.env.HOME || (require('node:os') as typeof import('node:os')).homedir(),
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
  if (settings.shadow_learner.learning_enabled) {
    const cache = predictions(ctx.paths, settings, ctx.now.getTime());
    const keys = new Set(analysis.invocations.map((i) => commandKey(i.argv)).filter((k): k is string => k !== null));
    for (const key of keys) {
      const p = cache.commands[key];
      if (!p) continue;
      const pct = Math.round(p.failure_rate * 100);
      lines.push(`🚨 ${key} failed in ${pct}% of ${p.evidence_count} runs (confidence ${Math.round(p.confidence * 100)}%)${p.common_error ? `; last error: ${p.common_error}` : ''}`);
    }
  }
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
  return allow(lines.join('\n'));
}

runHook('command-validator', 'PreToolUse', __filename, handle);
