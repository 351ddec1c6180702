/**
 * Time the command validator's analysis takes per command (lib/command-rules.ts
 * analyzeCommand: parsing, unwrapping, nested scripts, every check), over the
 * whole command corpus (test/fixtures/hooks-corpus, dangerous and ordinary
 * parts alike), in process. Printed against a baseline measured in the same
 * run: parsing alone (lib/shell-parse.ts parseShell), so a figure from a
 * loaded machine can still be compared with one from an idle machine.
 *
 *   npm run bench:validator            (5 rounds; VALIDATOR_BENCH_ROUNDS to change)
 */
import fs from 'node:fs';
import path from 'node:path';
import { analyzeCommand } from '../cli/hooks-cli/lib/command-rules';
import { parseShell } from '../cli/hooks-cli/lib/shell-parse';
import { readCorpus } from '../test/helpers/hooks-corpus';
import { machineLine, percentile } from './bench-helpers';

const CORPUS = path.resolve(__dirname, '..', '..', 'test', 'fixtures', 'hooks-corpus');
const corpusDir = fs.existsSync(CORPUS) ? CORPUS : path.resolve(__dirname, '..', 'test', 'fixtures', 'hooks-corpus');

function commands(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...commands(p));
    else if (e.name.endsWith('.txt')) out.push(...readCorpus(p));
  }
  return out;
}

const cmds = commands(corpusDir);
const env = { cwd: '/home/dev/project', project: '/home/dev/project', home: '/home/dev', currentBranch: () => 'main' };
const parseEnv = { home: env.home, cwd: env.cwd, project: env.project };
const rounds = Number(process.env.VALIDATOR_BENCH_ROUNDS ?? 5);

/** Per command, the best of `rounds` timings in microseconds (the best filters out GC pauses and other load). */
function best(fn: (c: string) => unknown): number[] {
  for (const c of cmds) fn(c); // warm-up
  const t = cmds.map(() => Infinity);
  for (let r = 0; r < rounds; r++) {
    cmds.forEach((c, k) => {
      const a = process.hrtime.bigint();
      fn(c);
      t[k] = Math.min(t[k], Number(process.hrtime.bigint() - a) / 1000);
    });
  }
  return t;
}

const parsed = best((c) => parseShell(c, { ...parseEnv, vars: new Map() }));
const analysed = best((c) => analyzeCommand(c, env));
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const row = (name: string, xs: number[]) =>
  `${name.padEnd(22)} mean ${mean(xs).toFixed(1).padStart(6)} µs  median ${percentile(xs, 50).toFixed(1).padStart(6)} µs  p99 ${percentile(xs, 99).toFixed(1).padStart(7)} µs  max ${Math.max(...xs).toFixed(0).padStart(6)} µs`;
console.log(machineLine());
console.log(`${cmds.length} commands from ${path.relative(process.cwd(), corpusDir)}, best of ${rounds} rounds each`);
console.log(row('parse only (baseline)', parsed));
console.log(row('full analysis', analysed));
console.log(`full analysis / parse only: mean ${(mean(analysed) / mean(parsed)).toFixed(1)}x, median ${(percentile(analysed, 50) / percentile(parsed, 50)).toFixed(1)}x`);
const slow = cmds.map((c, k) => ({ c, t: analysed[k] })).sort((a, b) => b.t - a.t).slice(0, 3);
for (const s of slow) console.log(`  slowest: ${s.t.toFixed(0)} µs  ${s.c.slice(0, 90).replace(/\n/g, '\\n')}`);
