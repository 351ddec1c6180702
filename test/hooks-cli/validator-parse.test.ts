/**
 * The shell parser's new knowledge, one behaviour per test, each of which
 * the validator's old parser got wrong: here-document bodies (they were
 * lexed as commands), variables assigned earlier on the line, `for` lists,
 * command substitutions it can resolve, brace expansion, word splitting of
 * unquoted expansions, functions called with arguments, and nested
 * substitutions staying cheap.
 */
import t from 'tap';
import { analyzeCommand, applySwitches, braceExpand } from '../../cli/hooks-cli/lib/command-rules';
import { defaultSettings } from '../../cli/hooks-cli/lib/settings-schema';
import { parseShell, resolveSubstitution } from '../../cli/hooks-cli/lib/shell-parse';

const HOME = '/home/dev';
const PROJECT = '/home/dev/project';
const env = { home: HOME, cwd: PROJECT, project: PROJECT };

function verdict(command: string) {
  const a = analyzeCommand(command, { cwd: PROJECT, project: PROJECT, home: HOME, currentBranch: () => 'feature' });
  const f = applySwitches(a.findings, defaultSettings().security);
  return { blocked: f.some((x) => x.level === 'block'), reasons: f.map((x) => x.reason) };
}

t.test('a here-document body is the redirection body, not commands', async (t) => {
  const p = parseShell('cat > notes.md <<EOF\nrm -rf /\nEOF\necho done', env);
  t.same(p.commands.map((c) => c.words.map((w) => w.text)), [['cat'], ['echo', 'done']]);
  t.equal(p.commands[0].redirects.find((r) => r.op === '<<')?.body, 'rm -rf /');
  t.notOk(verdict('cat > notes.md <<EOF\nrm -rf /\nEOF').blocked, 'text written to a file is data');
  t.ok(verdict("bash <<'EOF'\nrm -rf ~\nEOF").blocked, 'a body fed to a shell is a script');
  t.ok(verdict("python3 - <<'EOF'\nimport shutil\nshutil.rmtree('/')\nEOF").blocked, 'a body fed to python is code');
  t.ok(verdict('xargs rm -rf <<EOF\n/\nEOF').blocked, 'a body fed to xargs gives its arguments');
  t.equal(parseShell('cat <<-X\n\tline\n\tX\nls', env).commands[0].redirects[0].body, '\tline', '<<- strips the tabs of the delimiter line');
});

t.test('variables assigned earlier on the line are known where they are used', async (t) => {
  t.ok(verdict('X=/; rm -rf $X').blocked);
  t.ok(verdict('D=~ && rm -rf "$D"/*').blocked, 'tilde after = expands');
  t.ok(verdict('export T=$HOME; rm -rf "$T"').blocked);
  t.ok(verdict('a=r; b=m; $a$b -rf /').blocked, 'the command name built from variables');
  t.ok(verdict('CMD="rm -rf /"; $CMD').blocked, 'an unquoted expansion is split into words');
  t.ok(verdict('rm -rf ${TARGET:-/}').blocked, 'the default of an unset variable');
  t.notOk(verdict('DIR=build; rm -rf "$DIR"').blocked);
  t.notOk(verdict('OUT=./out; rm -rf "$OUT" && mkdir -p "$OUT"').blocked);
});

t.test('a for list is every value the loop variable takes', async (t) => {
  t.ok(verdict('for d in build ~; do rm -rf "$d"; done').blocked);
  t.notOk(verdict('for d in build dist; do rm -rf "$d"; done').blocked);
});

t.test('command substitutions whose output is known are resolved', async (t) => {
  t.equal(resolveSubstitution('pwd', env), PROJECT);
  t.equal(resolveSubstitution('git rev-parse --show-toplevel', env), PROJECT);
  t.equal(resolveSubstitution('dirname /a/b/c', env), '/a/b');
  t.equal(resolveSubstitution("echo '/'", env), '/');
  t.equal(resolveSubstitution('cd ..; pwd', env), HOME);
  t.equal(resolveSubstitution('cat list.txt', env), null);
  t.ok(verdict('rm -rf "$(pwd)"').blocked);
  t.ok(verdict('rm -rf "$(dirname $(pwd))"').blocked);
  t.ok(verdict('rm -rf "$(cat dirs.txt)"/').blocked, 'an unknown substitution as the whole target');
  t.notOk(verdict('rm -rf "$(mktemp -d)"').blocked);
  t.notOk(verdict('rm -rf "$(npm config get cache)/_cacache"').blocked);
  t.notOk(verdict('rm -rf build/$(date +%s)').blocked, 'an unknown part below a named directory');
});

t.test('brace expansion', async (t) => {
  t.same(braceExpand('a{b,c}d'), ['abd', 'acd']);
  t.same(braceExpand('{/,~}'), ['/', '~']);
  t.same(braceExpand('x{a,{b,c}}'), ['xa', 'xb', 'xc']);
  t.same(braceExpand('{}'), ['{}']);
  t.ok(verdict('rm -rf /{etc,usr}').blocked);
  t.notOk(verdict('rm -rf {build,dist}').blocked);
});

t.test('a function called with arguments runs its body with them', async (t) => {
  t.ok(verdict('wipe() { rm -rf "$1"; }; wipe ~').blocked);
  t.notOk(verdict('clean() { rm -rf "$1"; }; clean build').blocked);
});

t.test('deeply nested substitutions are analysed (resolution is bounded, so this returns at once)', async (t) => {
  // Each level used to parse its body again (2.5x per level): 14 levels took minutes.
  t.notOk(verdict(`echo ${'$(echo '.repeat(14)}x${')'.repeat(14)}`).blocked);
  t.ok(verdict(`echo ${'$(echo '.repeat(5)}$(rm -rf /)${')'.repeat(5)}`).blocked);
});
