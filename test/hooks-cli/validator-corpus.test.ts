/**
 * The command validator against a corpus of commands (test/fixtures/
 * hooks-corpus): every dangerous command must be blocked and every ordinary
 * one allowed, by the bundled hook, in the seed shape (exit 1, allow:false)
 * and in Claude Code's shape (exit 2, reason on stderr). Rates are reported
 * per category; the test fails when fewer than 99% of the dangerous commands
 * are blocked or more than 1% of the ordinary ones are, and names each miss.
 * The held-out parts (heldout/, heldout2/) were written after the analysis was
 * extended, each before it was first run; their rates are reported apart and
 * held to the same bar.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { buildInstall, hostInput, tempProject, type Project } from '../helpers/hooks';
import { readCorpus } from '../helpers/hooks-corpus';
import { loadHookInProcess, type InProcessHook } from './validator-harness';

// About 27,000 commands, each run twice through the hook (alone on 2 cores: 190 s); beside the
// suite's other files in CI it took 303 s, past tap's 300 s default for a file.
t.setTimeout(900_000);

const CORPUS = path.resolve(__dirname, '..', 'fixtures', 'hooks-corpus');

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

t.test('the corpus through the bundled hook, in both input shapes', async (t) => {
  const inst = buildInstall(t);
  const project = tempProject(t, { git: true });
  // Blocks and warnings only: no backups of the temporary project on every rm -r.
  project.settings({ backup_manager: { backup_on_critical_ops: false }, shadow_learner: { learning_enabled: false } });
  const hook = loadHookInProcess(inst.hook('command-validator'));

  const dangerous = await runSet(t, hook, project, 'dangerous', 'dangerous', true);
  const ordinary = await runSet(t, hook, project, 'ordinary', 'ordinary', false);
  const dCount = dangerous.reduce((s, x) => s + x.total, 0);
  const oCount = ordinary.reduce((s, x) => s + x.total, 0);
  t.ok(dCount + oCount >= 600, `${dCount} dangerous + ${oCount} ordinary commands`);
  const caught = report(t, 'dangerous', dangerous, true);
  const falseBlocks = report(t, 'ordinary', ordinary, false);
  t.ok(caught >= 0.99, `at least 99% of the dangerous commands blocked (${(caught * 100).toFixed(1)}%)`);
  t.ok(falseBlocks <= 0.01, `at most 1% of the ordinary commands blocked (${(falseBlocks * 100).toFixed(1)}%)`);

  // Each held-out part (heldout/, heldout2/...) is reported and judged on its own.
  for (const part of fs.readdirSync(CORPUS).filter((d) => /^heldout/.test(d)).sort()) {
    const heldD = await runSet(t, hook, project, part, `${part}/dangerous`, true);
    const heldO = await runSet(t, hook, project, part, `${part}/ordinary`, false);
    const hc = report(t, `${part} dangerous`, heldD, true);
    const hf = report(t, `${part} ordinary`, heldO, false);
    t.ok(hc >= 0.99, `${part}: at least 99% of the dangerous commands blocked (${(hc * 100).toFixed(1)}%)`);
    t.ok(hf <= 0.01, `${part}: at most 1% of the ordinary commands blocked (${(hf * 100).toFixed(1)}%)`);
  }
});
