/**
 * The gates of the rule families the deep analysis loads on first use (lib/rule-gates.ts): a gate that says
 * "no" must be exact, since the family's function is then not called at all. Each gated function is run on
 * every argv the analysis makes of every corpus command (both sides, every part, the unfixed ones too), on
 * every tail of it (the command after a wrapper) and on every word of it as a program name, and on argv made
 * by fast-check from the families' own tool names in many spellings; wherever its gate says no, the function
 * must answer its "nothing". That the split bundle answers every corpus command as the unsplit one is
 * bundle-equivalence.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { analyzeCommand, type Invocation } from '../../cli/hooks-cli/lib/command-rules';
import { devContainerCommand, frameworkCode, frameworkFindings, frameworkSecretPrinter, remoteWipeFindings } from '../../cli/hooks-cli/lib/framework-rules';
import { mayBeDevContainer, mayBeFramework, mayBeWindowsAsSh, mayBeWindowsProgram, mayHaveWindowsFindings, mayLaunchWindowsShell, mayWipeRemote } from '../../cli/hooks-cli/lib/rule-gates';
import { windowsAsSh, windowsCommandLine, windowsFindings, windowsProgram } from '../../cli/hooks-cli/lib/windows-rules';
import { readCorpus } from '../helpers/hooks-corpus';

t.setTimeout(600_000);

const word = (text: string) => ({ text, dynamic: false, glob: false, subs: [], quoted: false });

/** Each gated function with its gate: `nothing` says whether an answer is the function's "nothing". */
interface Gated {
  name: string;
  gate: (argv: string[]) => boolean;
  run: (argv: string[], assigned: string[]) => unknown;
  nothing: (answer: unknown) => boolean;
}

const isNull = (a: unknown) => a === null;
const isEmpty = (a: unknown) => Array.isArray(a) && a.length === 0;
const GATED: Gated[] = [
  { name: 'windowsProgram', gate: (argv) => mayBeWindowsProgram(argv[0]), run: (argv) => windowsProgram(argv.map(word)), nothing: isNull },
  { name: 'windowsAsSh', gate: mayBeWindowsAsSh, run: (argv) => windowsAsSh(argv), nothing: isNull },
  { name: 'windowsFindings', gate: mayHaveWindowsFindings, run: (argv) => windowsFindings(argv), nothing: isEmpty },
  { name: 'frameworkCode', gate: mayBeFramework, run: (argv, assigned) => frameworkCode(argv, assigned, () => 'puts 1'), nothing: isNull },
  { name: 'frameworkFindings', gate: mayBeFramework, run: (argv, assigned) => frameworkFindings(argv, assigned), nothing: isEmpty },
  { name: 'frameworkSecretPrinter', gate: mayBeFramework, run: (argv) => frameworkSecretPrinter(argv), nothing: isNull },
  { name: 'devContainerCommand', gate: mayBeDevContainer, run: (argv) => devContainerCommand(argv), nothing: isNull },
  { name: 'remoteWipeFindings', gate: mayWipeRemote, run: (argv) => remoteWipeFindings(argv), nothing: isEmpty },
  // Text functions, given the argv as one line.
  { name: 'windowsCommandLine', gate: (argv) => mayLaunchWindowsShell(argv.join(' ')), run: (argv) => windowsCommandLine(argv.join(' ')) === argv.join(' '), nothing: (same) => same === true },
];

interface Tally {
  refused: number;
  passed: number;
  wrong: string[];
}

function check(tally: Map<string, Tally>, argv: string[], assigned: string[]): void {
  if (argv.length === 0) return;
  for (const g of GATED) {
    const n = tally.get(g.name)!;
    if (g.gate(argv)) {
      n.passed++;
      continue;
    }
    n.refused++;
    const answer = g.run(argv, assigned);
    if (!g.nothing(answer) && n.wrong.length < 5) n.wrong.push(`${JSON.stringify(argv)} -> ${JSON.stringify(answer).slice(0, 200)}`);
  }
}

function corpusFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? corpusFiles(path.join(dir, e.name)) : e.name.endsWith('.txt') ? [path.join(dir, e.name)] : []));
}

function allInvocations(invs: Invocation[], seen = new Set<Invocation>()): Invocation[] {
  const out: Invocation[] = [];
  for (const inv of invs) {
    if (seen.has(inv)) continue;
    seen.add(inv);
    out.push(inv, ...allInvocations([...inv.upstream, ...(inv.inner ?? [])], seen));
  }
  return out;
}

t.test('no gated rule function answers anything on a corpus argv its gate refuses', async (t) => {
  const tally = new Map(GATED.map((g) => [g.name, { refused: 0, passed: 0, wrong: [] } as Tally]));
  let commands = 0;
  for (const dir of ['hooks-corpus', 'hooks-corpus-unfixed'].map((d) => path.resolve(__dirname, '..', 'fixtures', d))) {
    for (const file of corpusFiles(dir)) {
      const home = path.basename(file) === 'root-home.txt' ? '/root' : '/home/dev';
      for (const command of readCorpus(file)) {
        commands++;
        const a = analyzeCommand(command, { cwd: '/home/dev/project', project: '/home/dev/project', home, currentBranch: () => 'feature' });
        for (const inv of allInvocations(a.invocations)) {
          const assigned = inv.assigned ?? [];
          // The argv, each tail of it (what follows a wrapper), and each of its words as a program of its own.
          for (let k = 0; k < inv.argv.length; k++) check(tally, inv.argv.slice(k), assigned);
          for (const w of inv.argv) check(tally, [w], assigned);
        }
        // The raw words of the line too: what a program name looked like before any rewriting.
        for (const w of command.split(/\s+/)) check(tally, [w], []);
        check(tally, [command], []);
      }
    }
  }
  t.ok(commands > 20_000, `${commands} corpus commands`);
  for (const [name, n] of tally) {
    t.same(n.wrong, [], `${name}: refused ${n.refused}, let through ${n.passed}`);
    t.ok(n.refused > 10_000 && n.passed > 0, `${name}: its gate both refuses and lets through (${n.refused} / ${n.passed})`);
  }
});

t.test('no gated rule function answers anything on a generated argv its gate refuses', async (t) => {
  // The families' own programs and words, spelled as a shell line might give them.
  const tools = ['reg', 'schtasks', 'format', 'diskpart', 'icacls', 'takeown', 'sc', 'netsh', 'vssadmin', 'wmic', 'bcdedit', 'cipher', 'certutil', 'bitsadmin', 'robocopy', 'Clear-Disk', 'Format-Volume', 'Register-ScheduledTask',
    'py', 'git', 'npm', 'php', 'artisan', 'sail', 'wp', 'rails', 'rake', 'bundle', 'drush', 'cap', 'heroku', 'ddev', 'lando', 'docker', 'podman', 'docker-compose', 'podman-compose', 'rsync', 'lftp', 'cmd', 'powershell', 'pwsh', 'rm'];
  const spelled = fc.tuple(fc.constantFrom(...tools), fc.constantFrom('', '.exe', '.EXE', '.cmd', '.bat', '.com', '.sh'), fc.constantFrom('', './', '/usr/bin/', 'C:\\Windows\\System32\\', '/mnt/c/Windows/', 'vendor/bin/', 'bin/'), fc.boolean())
    .map(([tool, ext, dir, upper]) => `${dir}${upper ? tool.toUpperCase() : tool}${ext}`);
  const args = fc.array(fc.oneof(spelled, fc.constantFrom('compose', 'exec', 'run', '-c', '--delete', '--delete-after', 'delete', 'add', '/create', '/delete', '-e', 'production', 'tinker', '--execute=x', 'eval', 'runner', 'db', 'reset', '/s', '/q', 'C:\\', '/MIR', '-urlcache', 'HKCU\\Software', '--ssh=prod', 'config', 'get', 'DB_PASSWORD', 'credentials:show', 'mirror', '-R', 'ssh')), { maxLength: 6 });
  fc.assert(
    fc.property(spelled, args, fc.constantFrom<string[]>([], ['RAILS_ENV=production']), (program, rest, assigned) => {
      const argv = [program, ...rest];
      for (const g of GATED) if (!g.gate(argv) && !g.nothing(g.run(argv, assigned))) return false;
      return true;
    }),
    { numRuns: 20_000 },
  );
  t.pass('20,000 generated argv');
});
