/**
 * Checks that the build steps meant to change only speed leave every answer
 * of the command-validator as it was. Two builds: as shipped (the
 * regular-expression steps, cli/hooks-cli/name-tests.ts, regexp-gates.ts and
 * lazy-regexps.ts, and the rule families in stages of their own loaded behind
 * their gates, build-hooks.ts RULE_STAGES, lib/rule-gates.ts) and without
 * either (one deep stage holding every rule, the expressions as written).
 *
 * Two comparisons, so that every answer is covered at a fraction of the cost
 * of running the hook on every command (30,000 runs of two bundles took
 * 524-551 s of a 900 s limit on a quiet machine):
 *  - every corpus command (`root-home.txt` with HOME=/root) through the
 *    analysis itself as each build bundles it (lib/command-rules.ts
 *    analyzeCommand, bundled, minified and loaded in process the way the deep
 *    stage is, the rule stages required through the same generated loader
 *    behind the same gates): the same findings (level, category, reason,
 *    suggestion), the same backup trigger and the same argv of every
 *    invocation. The hook's answer is made from these alone (entries/
 *    command-validator-deep.ts: the findings, the learner's lines keyed by the
 *    argv, the backup), so equal analyses give equal answers wherever the
 *    code that makes the answer is the same;
 *  - that code, and the loading of the stages from disk (lib/load-stage.ts),
 *    by running both built hooks, whole, on a sample: the first command of
 *    every corpus file and every SAMPLE_EVERY-th after it, in both input
 *    shapes, comparing exit code, stdout and stderr byte for byte.
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
import { bundleHooks, bundleModule, RULE_STAGES, shrink, sourceRoot, type BundleOptions } from '../../cli/hooks-cli/build-hooks';
import type { analyzeCommand } from '../../cli/hooks-cli/lib/command-rules';
import { hostInput, tempDir, tempProject } from '../helpers/hooks';
import { readCorpus } from '../helpers/hooks-corpus';
import { loadHookInProcess } from './validator-harness';

export const CORPUS_DIRS = ['hooks-corpus', 'hooks-corpus-unfixed'].map((d) => path.resolve(__dirname, '..', 'fixtures', d));

/** Whole hook runs: the first command of each corpus file and every SAMPLE_EVERY-th after it. */
export const SAMPLE_EVERY = 8;

export interface Comparison {
  /** Commands analysed by both builds' analysis. */
  analysed: number;
  /** Whole hook runs of both builds (the sample, both input shapes). */
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

/** A bundle's text run in process: its module loader's exports of the entry; `host` lends it the modules it shares and its stages. */
function runBundle(text: string, host: Record<string, unknown>): void {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  new Function('require', '__host', shrink(text.replace(/^#!.*\n/, '')))(require, host);
}

/**
 * analyzeCommand as a build bundles it: lib/command-rules.ts and what it reaches in one bundle, minified as the
 * hooks are; with `split`, the rule families left out and loaded from their own stage bundles on first use
 * through the generated loader (`__stages`, `__host.stage`), as the deep stage does.
 */
export function bundledAnalysis(srcRoot: string, options: BundleOptions): typeof analyzeCommand {
  const split = options.split !== false;
  const lazy = split ? Object.fromEntries(Object.entries(RULE_STAGES).flatMap(([stage, st]) => st.modules.map((id) => [id, stage]))) : {};
  const core = bundleModule(srcRoot, 'lib/command-rules.ts', {}, { ...options, shared: new Set(), lazy });
  const coreIds = new Set([...core.matchAll(/^"([^"]+)": function \(module, exports, require\) \{$/gm)].map((m) => m[1]));
  const stageTexts = new Map<string, string>();
  const loaded = new Map<string, (id: string) => unknown>();
  const host = (load: (id: string) => unknown): Record<string, unknown> => ({
    load,
    exports: undefined,
    stage: (name: string, parentLoad: (id: string) => unknown) => {
      let own = loaded.get(name);
      if (!own) {
        const st = RULE_STAGES[name];
        if (!stageTexts.has(name)) stageTexts.set(name, bundleModule(srcRoot, `${st.modules[0]}.ts`, {}, { ...options, shared: coreIds, lazy, include: st.modules.slice(1) }));
        const h = host(parentLoad);
        runBundle(stageTexts.get(name)!, h);
        loaded.set(name, (own = h.own as (id: string) => unknown));
      }
      return own;
    },
  });
  const h = host((id) => {
    throw new Error(`bundledAnalysis: ${id} is in no bundle`);
  });
  runBundle(core, h);
  return (h.exports as { analyzeCommand: typeof analyzeCommand }).analyzeCommand;
}

/** What the hook's answer is made of: the findings, the backup trigger, the argv the learner's lines are keyed by. */
function analysisKey(analyze: typeof analyzeCommand, command: string, env: Parameters<typeof analyzeCommand>[1]): string {
  try {
    const a = analyze(command, env);
    return JSON.stringify({ findings: a.findings, critical: a.critical, argv: a.invocations.map((i) => i.argv) });
  } catch (err) {
    return `threw ${String(err)}`;
  }
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
  const analyzeWith = bundledAnalysis(srcRoot, {});
  const analyzeWithout = bundledAnalysis(srcRoot, { regexpSteps: false, split: false });
  let runs = 0;
  let analysed = 0;
  const differences: string[] = [];
  for (const file of files) {
    const home = path.basename(file) === 'root-home.txt' ? '/root' : project.home;
    const env = { ...(project.env() as Record<string, string>), HOME: home };
    const analyzeEnv = { cwd: project.dir, project: project.dir, home, currentBranch: () => 'feature' };
    const commands = readCorpus(file);
    for (const command of commands) {
      analysed++;
      const a = analysisKey(analyzeWith, command, analyzeEnv);
      const b = analysisKey(analyzeWithout, command, analyzeEnv);
      if (a !== b) differences.push(`[${path.relative(path.dirname(corpusDirs[0]), file)}] ${command}\n  analysis with:    ${a.slice(0, 300)}\n  analysis without: ${b.slice(0, 300)}`);
    }
    for (const command of commands.filter((_, k) => k % SAMPLE_EVERY === 0)) {
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
  return { analysed, runs, files: files.length, differences, bytesWith: bytes('with'), bytesWithout: bytes('without'), stagesWith: stages('with'), stagesWithout: stages('without') };
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
    process.stdout.write(`${c.analysed} commands analysed, ${c.runs} hook runs (${c.files} corpus files, both input shapes; bundles ${c.bytesWith} and ${c.bytesWithout} bytes): ${c.differences.length} with a different answer\n`);
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
