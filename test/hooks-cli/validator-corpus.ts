/**
 * The command validator against the corpus of commands (test/fixtures/
 * hooks-corpus): every dangerous command must be blocked and every ordinary
 * one allowed, by the bundled hook, in the seed shape (exit 1, allow:false)
 * and in Claude Code's shape (exit 2, reason on stderr). Rates are reported
 * per category; a part fails when fewer than 99% of its dangerous commands
 * are blocked or more than 1% of its ordinary ones are, and names each miss.
 *
 * Parts: the top-level dangerous/ and ordinary/ folders, and every folder
 * beside them that holds a dangerous/ or ordinary/ folder (the held-out parts
 * heldout*, the fixers' variants r-*), each reported and judged on its own.
 *
 * The corpus (about 30,000 commands, each run twice) is split into shards of
 * about the same number of commands, one test file each
 * (validator-corpus.test.ts, -2, -3): one file took 306 s alone in CI, and
 * over 900 s beside a loaded machine's other work. Every part is in exactly
 * one shard; `corpusShards` is deterministic, and the first shard checks that
 * the shards together hold every part.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { buildInstall, hostInput, tempProject, type Project } from '../helpers/hooks';
import { readCorpus } from '../helpers/hooks-corpus';
import { loadHookInProcess, type InProcessHook } from './validator-harness';

export const CORPUS = path.resolve(__dirname, '..', 'fixtures', 'hooks-corpus');
export const SHARDS = 3;
/** The top-level dangerous/ and ordinary/ folders, as a part. */
const TOP = '.';

interface Verdict {
  seedBlocked: boolean;
  hostBlocked: boolean;
  message: string;
}

async function judge(hook: InProcessHook, project: Project, command: string, home: string): Promise<Verdict> {
  const env = { ...(project.env() as Record<string, string>), HOME: home };
  const seed = await hook({ tool: 'Bash', parameters: { command } }, env);
  const host = await hook(hostInput(project, 'PreToolUse', { tool_name: 'Bash', tool_input: { command, description: 'x' }, tool_use_id: 'tu' }), env);
  // A block must be a deliberate one in the protocol's own form; anything else is not a block.
  const seedBlocked = seed.code === 1 && seed.json?.allow === false && /^⛔ Command blocked: /.test(seed.json.message);
  const hostBlocked = host.code === 2 && /^⛔ Command blocked: /.test(host.stderr);
  if (seed.code !== 0 && seed.code !== 1) throw new Error(`seed run of ${command} ended ${seed.code}: ${seed.stderr}`);
  if (host.code !== 0 && host.code !== 2) throw new Error(`host run of ${command} ended ${host.code}: ${host.stderr}`);
  return { seedBlocked, hostBlocked, message: seedBlocked ? seed.json.message : host.stderr || seed.json?.message || '' };
}

function files(dir: string): string[] {
  const d = path.join(CORPUS, dir);
  return fs.existsSync(d) ? fs.readdirSync(d).filter((f) => f.endsWith('.txt')).sort().map((f) => path.join(d, f)) : [];
}

/** Every part, by name (TOP for the top-level folders). */
export function corpusParts(): string[] {
  const parts = fs
    .readdirSync(CORPUS, { withFileTypes: true })
    .filter((e) => e.isDirectory() && ['dangerous', 'ordinary'].some((side) => fs.existsSync(path.join(CORPUS, e.name, side))))
    .map((e) => e.name)
    .sort();
  return [TOP, ...parts];
}

function partSize(part: string): number {
  return ['dangerous', 'ordinary'].reduce((n, side) => n + files(path.join(part, side)).reduce((m, f) => m + readCorpus(f).length, 0), 0);
}

/** The parts split into SHARDS lists of about the same number of commands: the largest part first, to the lightest shard. */
export function corpusShards(): string[][] {
  const sized = corpusParts().map((part) => ({ part, size: partSize(part) }));
  sized.sort((a, b) => b.size - a.size || a.part.localeCompare(b.part));
  const shards = Array.from({ length: SHARDS }, () => ({ parts: [] as string[], size: 0 }));
  for (const { part, size } of sized) {
    const lightest = shards.reduce((a, b) => (b.size < a.size ? b : a));
    lightest.parts.push(part);
    lightest.size += size;
  }
  return shards.map((s) => s.parts.sort());
}

interface Tally {
  category: string;
  total: number;
  hits: number;
  misses: string[];
}

async function runSet(t: Test, hook: InProcessHook, project: Project, label: string, dir: string, dangerous: boolean): Promise<Tally[]> {
  const tallies: Tally[] = [];
  for (const file of files(dir)) {
    const category = `${label}/${path.basename(file, '.txt')}`;
    const home = path.basename(file) === 'root-home.txt' ? '/root' : project.home;
    const tally: Tally = { category, total: 0, hits: 0, misses: [] };
    for (const command of readCorpus(file)) {
      const v = await judge(hook, project, command, home);
      t.equal(v.seedBlocked, v.hostBlocked, `same verdict in both shapes: ${command}`);
      tally.total++;
      const blocked = v.seedBlocked && v.hostBlocked;
      if (blocked === dangerous) tally.hits++;
      else tally.misses.push(dangerous ? command : `${command}   <- ${v.message.split('\n')[0]}`);
    }
    tallies.push(tally);
  }
  return tallies;
}

function report(t: Test, title: string, tallies: Tally[], dangerous: boolean): number {
  const total = tallies.reduce((s, x) => s + x.total, 0);
  const hits = tallies.reduce((s, x) => s + x.hits, 0);
  const rate = (n: number, d: number) => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)}%`);
  const lines = tallies.map((x) => `  ${x.category.padEnd(28)} ${String(x.total).padStart(4)}  ${dangerous ? 'blocked' : 'falsely blocked'} ${rate(dangerous ? x.hits : x.total - x.hits, x.total)}`);
  t.comment(`${title}: ${total} commands, ${dangerous ? 'blocked' : 'falsely blocked'} ${rate(dangerous ? hits : total - hits, total)}\n${lines.join('\n')}`);
  const misses = tallies.flatMap((x) => x.misses.map((m) => `  [${x.category}] ${m}`));
  if (misses.length > 0) t.comment(`${dangerous ? 'not blocked' : 'blocked'}:\n${misses.join('\n')}`);
  return total === 0 ? (dangerous ? 1 : 0) : dangerous ? hits / total : (total - hits) / total;
}

/** Runs shard `index` (0-based) of corpusShards() through the bundled hook, in both input shapes. */
export function corpusShardTest(t: Test, index: number): void {
  // About 10,000 commands run twice: some 100 s alone on 2 cores; the limit leaves room for a loaded machine.
  t.setTimeout(900_000);
  t.test(`corpus shard ${index + 1} of ${SHARDS} through the bundled hook, in both input shapes`, async (t) => {
    const shards = corpusShards();
    if (index === 0) {
      const all = shards.flat().sort();
      t.strictSame(all, [...corpusParts()].sort(), 'the shards together hold every part, each once');
      t.ok(shards.every((s) => s.length > 0), `every shard has parts (${shards.map((s) => s.length).join(', ')})`);
    }
    const inst = buildInstall(t);
    const project = tempProject(t, { git: true });
    // Blocks and warnings only: no backups of the temporary project on every rm -r.
    project.settings({ backup_manager: { backup_on_critical_ops: false }, shadow_learner: { learning_enabled: false } });
    const hook = loadHookInProcess(inst.hook('command-validator'));
    let commands = 0;
    for (const part of shards[index]) {
      const name = part === TOP ? 'top level' : part;
      const d = await runSet(t, hook, project, part === TOP ? 'dangerous' : part, path.join(part, 'dangerous'), true);
      const o = await runSet(t, hook, project, part === TOP ? 'ordinary' : part, path.join(part, 'ordinary'), false);
      commands += [...d, ...o].reduce((s, x) => s + x.total, 0);
      const caught = report(t, `${name} dangerous`, d, true);
      const falseBlocks = report(t, `${name} ordinary`, o, false);
      t.ok(caught >= 0.99, `${name}: at least 99% of the dangerous commands blocked (${(caught * 100).toFixed(1)}%)`);
      t.ok(falseBlocks <= 0.01, `${name}: at most 1% of the ordinary commands blocked (${(falseBlocks * 100).toFixed(1)}%)`);
    }
    t.ok(commands >= 600, `${commands} commands in this shard`);
  });
}
