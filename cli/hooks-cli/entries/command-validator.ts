/**
 * command-validator: PreToolUse hook for Bash. Parses the command, blocks
 * dangerous ones (⛔), warns about suspicious ones (⚠️) and about commands
 * the shadow learner has seen fail again and again (🚨), offers
 * alternatives (💡), and takes a backup before allowed commands that
 * destroy data (`backup_on_critical_ops`).
 *
 * Two stages: this one answers the plain lines the fast path takes
 * (lib/fast-path.ts: known-harmless programs with literal arguments, which
 * the deep analysis would let through without a word) and loads the deep
 * analysis (entries/command-validator-deep.ts, its own bundle) for every
 * other line. HOOKS_CLI_NO_FAST_PATH=1 sends every line to the deep analysis.
 *
 * Seed input: exit 1 with `{allow:false}` to block. Host input: exit 2 with
 * the reason on stderr, which the host obeys (exit 1 would let it run).
 */
import { fastPath } from '../lib/fast-path';
import { runHook, type HookContext } from '../lib/hook-runtime';
import { loadStage, type Stage } from '../lib/load-stage';
import { hostBlockAnswer, seedAnswer, type HookAnswer } from '../lib/protocol';
import { allowAnswer, learnedLines } from '../lib/validator-answer';

/** The deep stage's exports. The type is spelled out: a type import of the stage would pull it into this bundle. */
interface DeepStage {
  validateDeep(ctx: HookContext, command: string, cwd: string, home: string): HookAnswer;
}

/** Loaded on the first line the fast path does not take, once per process. */
let deep: Stage<DeepStage> | null = null;

function handle(ctx: HookContext): HookAnswer {
  const { input } = ctx;
  if (input.tool !== null && input.tool !== 'Bash') return allowAnswer(ctx, '');
  const command = typeof input.toolInput.command === 'string' ? input.toolInput.command : '';
  if (command.trim() === '') return allowAnswer(ctx, '');

  const cwd = input.cwd ?? ctx.paths.project;
  const home = process.env.HOME || (require('node:os') as typeof import('node:os')).homedir();
  const fast = process.env.HOOKS_CLI_NO_FAST_PATH === '1' ? null : fastPath(command, { cwd, project: ctx.paths.project, home });
  if (fast) return allowAnswer(ctx, learnedLines(ctx, fast).join('\n'));

  let answer: HookAnswer;
  try {
    deep ??= loadStage<DeepStage>(ctx.hookFile, 'command-validator-deep');
    answer = deep.exports.validateDeep(ctx, command, cwd, home);
  } catch (err) {
    // A stage missing or damaged (lib/load-stage.ts): the rules could not judge the line, so it is blocked.
    if ((err as { code?: unknown }).code !== 'HOOKS_STAGE_LOAD') throw err;
    const message = `⛔ Command blocked: the command validator could not load its rules (${(err as Error).message}); reinstall or rebuild hooks-cli (npm run build)`;
    ctx.log('ERROR', message);
    return input.protocol === 'host' ? hostBlockAnswer(message) : seedAnswer(false, message, 1);
  }
  // After each analysis while the cache is new: the loader's warm-up answers many lines in one process.
  deep.saveCache();
  return answer;
}

runHook('command-validator', 'PreToolUse', __filename, handle);
