/**
 * First look at one held-out part of the command corpus, without tap: runs
 * test/fixtures/hooks-corpus/<part>/{dangerous,ordinary} through the bundled
 * command-validator hook (in process, both input shapes, as
 * the validator-corpus tests do) and prints the rates and every miss. Used by
 * the red team to record a part's first look before anything is fixed.
 *
 *   npx ts-node-transpile-only test/hooks-cli/corpus-part-rates.ts heldout9 [--json]
 *
 * Exit 0 when the part meets the bar (>= 99% blocked, <= 1% falsely blocked), 1 when not, 2 on usage errors.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { buildInstall, hostInput, tempProject } from '../helpers/hooks';
import { readCorpus } from '../helpers/hooks-corpus';
import { loadHookInProcess } from './validator-harness';

const CORPUS = path.resolve(__dirname, '..', 'fixtures', 'hooks-corpus');

interface Miss {
  file: string;
  command: string;
  message: string;
}

async function main(): Promise<number> {
  const part = process.argv[2];
  if (!part || !fs.existsSync(path.join(CORPUS, part))) {
    process.stderr.write(`usage: corpus-part-rates.ts <part under ${CORPUS}> [--json]\n`);
    return 2;
  }
  const teardowns: (() => void)[] = [];
  const fakeTest = { teardown: (fn: () => void) => teardowns.push(fn) } as unknown as Test;
  try {
    const inst = buildInstall(fakeTest);
    const project = tempProject(fakeTest, { git: true });
    project.settings({ backup_manager: { backup_on_critical_ops: false }, shadow_learner: { learning_enabled: false } });
    const hook = loadHookInProcess(inst.hook('command-validator'));
    const result: Record<string, { total: number; blocked: number; misses: Miss[] }> = {};
    for (const kind of ['dangerous', 'ordinary'] as const) {
      const dir = path.join(CORPUS, part, kind);
      const r = (result[kind] = { total: 0, blocked: 0, misses: [] as Miss[] });
      if (!fs.existsSync(dir)) continue;
      for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.txt')).sort()) {
        const home = f === 'root-home.txt' ? '/root' : project.home;
        for (const command of readCorpus(path.join(dir, f))) {
          const env = { ...(project.env() as Record<string, string>), HOME: home };
          const seed = await hook({ tool: 'Bash', parameters: { command } }, env);
          const host = await hook(hostInput(project, 'PreToolUse', { tool_name: 'Bash', tool_input: { command, description: 'x' }, tool_use_id: 'tu' }), env);
          const seedBlocked = seed.code === 1 && seed.json?.allow === false && /^⛔ Command blocked: /.test(seed.json.message);
          const hostBlocked = host.code === 2 && /^⛔ Command blocked: /.test(host.stderr);
          const blocked = seedBlocked && hostBlocked;
          r.total++;
          if (blocked) r.blocked++;
          if (blocked !== (kind === 'dangerous'))
            r.misses.push({ file: f, command, message: (host.stderr || seed.json?.message || '').split('\n')[0] });
        }
      }
    }
    const pct = (n: number, d: number) => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)}%`);
    const d = result.dangerous;
    const o = result.ordinary;
    if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify({ part, ...result }, null, 2)}\n`);
    else {
      process.stdout.write(`${part}: dangerous ${d.total}, blocked ${pct(d.blocked, d.total)}; ordinary ${o.total}, falsely blocked ${pct(o.blocked, o.total)}\n`);
      for (const m of d.misses) process.stdout.write(`  not blocked [${m.file}] ${m.command}${m.message ? `   <- ${m.message}` : ''}\n`);
      for (const m of o.misses) process.stdout.write(`  blocked [${m.file}] ${m.command}   <- ${m.message}\n`);
    }
    const ok = (d.total === 0 || d.blocked / d.total >= 0.99) && (o.total === 0 || o.blocked / o.total <= 0.01);
    return ok ? 0 : 1;
  } finally {
    for (const fn of teardowns.reverse()) fn();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`corpus-part-rates: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(2);
  },
);
