/**
 * Checks that the build steps meant to change only speed leave every answer
 * of the command-validator as it was: builds the hook twice, as shipped (the
 * regular-expression steps, cli/hooks-cli/name-tests.ts and regexp-gates.ts,
 * and the rule families in stages of their own loaded behind their gates,
 * build-hooks.ts RULE_STAGES, lib/rule-gates.ts) and without either (one deep
 * stage holding every rule, the expressions as written), runs every command of the given corpus directories
 * (`root-home.txt` with HOME=/root) through both bundles in process, in both
 * input shapes, and compares exit code, stdout and stderr byte for byte.
 * Used by bundle-equivalence.test.ts (this tree's corpus and its unfixed
 * parts) and, from the command line, on any source tree, e.g. another
 * branch's rules checked out into a scratch directory:
 *
 *   npx ts-node-transpile-only test/hooks-cli/bundle-equivalence.ts [--src DIR/cli/hooks-cli] [CORPUS_DIR ...]
 *
 * Prints each difference; exit 0 when there is none, 1 when there is one, 2 on errors.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { bundleHooks, sourceRoot } from '../../cli/hooks-cli/build-hooks';
import { hostInput, tempDir, tempProject } from '../helpers/hooks';
import { readCorpus } from '../helpers/hooks-corpus';
import { loadHookInProcess } from './validator-harness';

export const CORPUS_DIRS = ['hooks-corpus', 'hooks-corpus-unfixed'].map((d) => path.resolve(__dirname, '..', 'fixtures', d));

export interface Comparison {
  runs: number;
  files: number;
  /** One line per command whose answer differs, with both answers. */
  differences: string[];
  /** Bytes of the two bundles: equal sizes would mean the steps did nothing. */
  bytesWith: number;
  bytesWithout: number;
  /** The validator's bundle files in each build (the rule stages only in the one as shipped). */
  stagesWith: string[];
  stagesWithout: string[];
}

function corpusFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...corpusFiles(p));
    else if (e.name.endsWith('.txt')) out.push(p);
  }
  return out;
}

/** Builds the validator with and without the steps from `srcRoot` and compares their answers on every command under `corpusDirs`. */
export async function compareBundles(t: Pick<Test, 'teardown'>, corpusDirs: string[], srcRoot = sourceRoot()): Promise<Comparison> {
  const root = tempDir(t as Test, 'hooks-equivalence-');
  bundleHooks(path.join(root, 'with', 'hooks'), srcRoot);
  bundleHooks(path.join(root, 'without', 'hooks'), srcRoot, { regexpSteps: false, split: false });
  // Every stage of the validator: the steps rewrite mostly the deep one (command-rules.ts).
  const stages = (v: string) => fs.readdirSync(path.join(root, v, 'hooks', 'lib')).filter((f) => /^command-validator.*\.js$/.test(f)).sort();
  const bytes = (v: string) => stages(v).reduce((n, f) => n + fs.statSync(path.join(root, v, 'hooks', 'lib', f)).size, 0);
  const withStep = loadHookInProcess(path.join(root, 'with', 'hooks', 'command-validator.js'));
  const without = loadHookInProcess(path.join(root, 'without', 'hooks', 'command-validator.js'));
  const project = tempProject(t as Test, { git: true });
  project.settings({ backup_manager: { backup_on_critical_ops: false }, shadow_learner: { learning_enabled: false } });
  const files = corpusDirs.flatMap(corpusFiles);
  let runs = 0;
  const differences: string[] = [];
  for (const file of files) {
    const home = path.basename(file) === 'root-home.txt' ? '/root' : project.home;
    const env = { ...(project.env() as Record<string, string>), HOME: home };
    for (const command of readCorpus(file)) {
      const inputs = [{ tool: 'Bash', parameters: { command } }, hostInput(project, 'PreToolUse', { tool_name: 'Bash', tool_input: { command, description: 'x' }, tool_use_id: 'tu' })];
      for (const input of inputs) {
        const a = await withStep(input, env);
        const b = await without(input, env);
        runs++;
        if (a.code !== b.code || a.stdout !== b.stdout || a.stderr !== b.stderr) {
          differences.push(`[${path.relative(path.dirname(corpusDirs[0]), file)}] ${command}\n  with:    ${a.code} ${JSON.stringify(a.stdout + a.stderr).slice(0, 300)}\n  without: ${b.code} ${JSON.stringify(b.stdout + b.stderr).slice(0, 300)}`);
        }
      }
    }
  }
  return { runs, files: files.length, differences, bytesWith: bytes('with'), bytesWithout: bytes('without'), stagesWith: stages('with'), stagesWithout: stages('without') };
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const at = args.indexOf('--src');
  const srcRoot = at >= 0 ? path.resolve(args.splice(at, 2)[1]) : undefined;
  const dirs = args.length > 0 ? args.map((d) => path.resolve(d)) : CORPUS_DIRS;
  const teardowns: (() => void)[] = [];
  try {
    const c = await compareBundles({ teardown: (fn: () => void) => teardowns.push(fn) } as Pick<Test, 'teardown'>, dirs, srcRoot);
    for (const d of c.differences) process.stdout.write(`DIFFERENT ${d}\n`);
    process.stdout.write(`${c.runs} runs (${c.files} corpus files, both input shapes; bundles ${c.bytesWith} and ${c.bytesWithout} bytes): ${c.differences.length} with a different answer\n`);
    return c.differences.length === 0 ? 0 : 1;
  } finally {
    for (const fn of teardowns.reverse()) fn();
  }
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`bundle-equivalence: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(2);
    },
  );
}
