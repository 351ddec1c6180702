/**
 * The validator's fast path: most command lines a developer runs are plain
 * (`git status`, `cd src && npm test -- --grep parser 2>&1 | tee test.log`,
 * `grep -rn TODO src | head -20`), and for those the answer is "allowed,
 * nothing to say" without loading the deep analysis (command-rules.ts, some
 * 300 KB of rules whose regular expressions V8 compiles on first use).
 *
 * Accepted is a strict subset of what the deep analysis allows without a
 * word (no block, no warning, no suggestion, no backup), kept that way by
 * allow-lists, never deny-lists:
 *
 *   line      := pipeline (('&&' | '||' | ';') pipeline)*
 *   pipeline  := command ('|' filter)*          a filter reads stdin and is harmless on any input
 *   command   := PROGRAM word* redirect*        PROGRAM and its options from specOf below
 *   redirect  := 2>&1 | >&2 | 1>&2 | (> | >> | 2> | 2>>) (/dev/null | OUT_FILE)
 *   word      := unquoted [A-Za-z0-9_@%+=:,./-] or '...' / "..." of those and space ( )
 *
 * No `$`, backquote, backslash, glob, `~`, `!`, `#`, brace, here-document,
 * `&`, assignment, wrapper (sudo, env, xargs...), absolute path (but
 * /dev/null as a redirect target), `..` segment or dot-file anywhere; paths
 * are relative to a working directory inside an ordinary project (plainProject),
 * and a path operand whose name could be a secret's (SECRETISH) falls through.
 * Anything else returns null: the deep analysis decides. test/hooks-cli/
 * fast-path.test.ts checks the subset over the whole corpus and over
 * generated lines.
 */

/** What the deep analysis would report as invocations: each command's argv, in order (cd is not one). */
export type FastArgvs = string[][];

export interface FastEnv {
  /** Where the line runs. */
  cwd: string;
  project: string;
  home: string;
}

interface Word {
  text: string;
  quoted: boolean;
}

type Token = { op: string } | { word: Word };

// Character classes as tables, not regular expressions: V8 compiles a regular expression on its first use, and
// a dozen of them cost more than the whole scan (callgrind, docs/hooks-cli.md "Speed").
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_';
function charTable(chars: string): Uint8Array {
  const t = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) t[chars.charCodeAt(i)] = 1;
  return t;
}
const UNQUOTED = charTable(`${ALNUM}@%+=:,./-`);
const IN_QUOTES = charTable(`${ALNUM}@%+=:,./-() `);
const SEGMENT_CHARS = charTable(`${ALNUM}+@,=:%-.`);
const NAME_CHARS = charTable(`${ALNUM}.:-`);
const REV_CHARS = charTable(`${ALNUM}./-`);
const LEAD = charTable(ALNUM);
const DIGITS = charTable('0123456789');

/** Every character of s (from `from`) is in the table. */
function allIn(s: string, table: Uint8Array, from = 0): boolean {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || table[c] === 0) return false;
  }
  return true;
}

const OPERATORS = ['2>&1', '1>&2', '>&2', '&&', '||', '2>>', '2>', '>>', '>', '|', ';'];

/** Splits a line into words and operators; null at any character outside the subset. */
function tokenize(line: string): Token[] | null {
  const out: Token[] = [];
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    const op = OPERATORS.find((o) => line.startsWith(o, i));
    if (op) {
      out.push({ op });
      i += op.length;
      continue;
    }
    let text = '';
    let quoted = false;
    while (i < line.length && line[i] !== ' ' && line[i] !== '\t') {
      const ch = line[i];
      const code = line.charCodeAt(i);
      if (ch === '"' || ch === "'") {
        const end = line.indexOf(ch, i + 1);
        if (end < 0) return null;
        const inside = line.slice(i + 1, end);
        if (!allIn(inside, IN_QUOTES)) return null;
        text += inside;
        quoted = true;
        i = end + 1;
      } else if (code < 128 && UNQUOTED[code] === 1) {
        text += ch;
        i++;
      } else if (ch === '>' || ch === '|' || ch === ';' || ch === '&') {
        break;
      } else return null;
    }
    if (text === '' && !quoted) return null;
    out.push({ word: { text, quoted } });
  }
  return out;
}

/**
 * Parts of names whose file could hold a secret, or that the analysis reads as special (start-up files,
 * autostart, PATH directories, Python's .pth): a path with one falls through. Compared in lower case.
 */
const SECRETISH = ['rsa', 'dsa', 'ed25519', 'ovpn', 'p8', 'keytab', 'kdb', 'key', 'pem', 'p12', 'pfx', 'jks', 'ppk', 'tfstate', 'cred', 'secret', 'token', 'passw', 'auth', 'netrc', 'npmrc', 'pgpass', 'cnf', 'wallet', 'secring', 'kube', 'service', 'adminsdk', 'gcp', 'sa-', 'sa_', 'login', 'cookie', 'id_', 'wp-config', 'env', 'vault', 'private', 'cert', 'shadow', 'sudoers', 'history', '.db', '.dat', '.sqlite', '.gpg', '.asc', '.pth', 'customize', 'systemd', 'autostart', 'cron', 'profile', 'packages'];
const SECRETISH_NAMES = new Set(['bin', 'sbin']);

function secretish(name: string): boolean {
  const lower = name.toLowerCase();
  return SECRETISH_NAMES.has(lower) || SECRETISH.some((w) => lower.includes(w));
}

/** A file or directory name: no dot-file, no `..`, no trailing dot, plain characters. */
function plainSegment(s: string): boolean {
  return s.length > 0 && LEAD[s.charCodeAt(0)] === 1 && allIn(s, SEGMENT_CHARS, 1) && !s.includes('..') && !s.endsWith('.');
}

/** A relative path that stays inside the working directory, with no dot-file, no glob, no secret-looking name. */
function plainPath(p: string): boolean {
  if (p === '.' || p === './') return true;
  let rel = p.startsWith('./') ? p.slice(2) : p;
  if (rel.endsWith('/')) rel = rel.slice(0, -1);
  return rel.split('/').every((s) => plainSegment(s) && !secretish(s));
}

const OUT_EXTENSIONS = ['.log', '.txt', '.out', '.json', '.md', '.csv', '.xml', '.html', '.diff', '.patch'];

/** A file a command may write: a plain path whose name ends in an extension of output and logs. */
function plainOutFile(p: string): boolean {
  return p !== '.' && plainPath(p) && OUT_EXTENSIONS.some((e) => p.endsWith(e));
}

/** Free text (a commit message, a search pattern): no word of it starts like a path or an option. */
function plainText(w: Word): boolean {
  const c = w.text[0];
  return c !== '/' && c !== '.' && c !== '-' && !w.text.includes(' /') && !w.text.includes(' .') && !w.text.includes(' -');
}

/** Folders a program or a start-up file may be put in: a project there falls through. */
const PROJECT_DENY = new Set(['bin', 'sbin', 'Library', 'LaunchAgents', 'LaunchDaemons', 'systemd', 'autostart', 'site-packages', 'dist-packages']);
/** Top folders holding working trees; a project elsewhere (and not below the home directory) falls through. */
const WORK_TOPS = new Set(['tmp', 'work', 'workspace', 'workspaces', 'srv', 'builds', 'src', 'code', 'projects']);

/** An ordinary project: absolute, plain segments, below the home directory or a top folder of working trees, never a system tree. */
export function plainProject(env: FastEnv): boolean {
  const { project, home, cwd } = env;
  if (cwd !== project || home.length < 2 || home[0] !== '/') return false;
  const parts = project.split('/');
  if (parts[0] !== '' || parts.length < 3 || !parts.slice(1).every((s) => plainSegment(s) && !PROJECT_DENY.has(s))) return false;
  if (home === project || home.startsWith(project + '/')) return false;
  if (project.startsWith(home + '/')) return true;
  // Some user's folder below /home or /Users (not the folder itself), or a top folder of working trees.
  return (parts[1] === 'home' || parts[1] === 'Users' ? parts.length >= 4 : WORK_TOPS.has(parts[1]));
}

interface Spec {
  /** Options without a value. */
  flags?: readonly string[];
  /** Options taking a value (the next word, or after `=`), and what the value may be. */
  values?: Readonly<Record<string, (w: Word) => boolean>>;
  /** What an operand may be. */
  operand?: (w: Word, index: number) => boolean;
  /** After `--`: words passed on to a test runner. */
  passOn?: boolean;
  /** Reads standard input harmlessly (it may sit after a `|`). */
  filter?: boolean;
  /**
   * Not a program the analysis knows as plain (its NOT_WRAPPERS): it reads such a program's operands and option
   * values as a command it may run (`pytest git` would analyse `git`; `-c`, `-x`, `-s`, `--run`... as a script),
   * so only file paths pass, and none of its options here is one of those.
   */
  runsOperands?: boolean;
}

const NUMBER = (w: Word) => w.text.length > 0 && w.text.length <= 6 && allIn(w.text, DIGITS);
const NAME = (w: Word) => w.text.length > 0 && LEAD[w.text.charCodeAt(0)] === 1 && allIn(w.text, NAME_CHARS, 1) && !secretish(w.text);
const PATH = (w: Word) => plainPath(w.text);
const TEXT = (w: Word) => plainText(w) && !secretish(w.text);
/** A git revision: a branch or tag name, a hash (no range, no HEAD~2: those fall through). */
const REV = (w: Word) => w.text.length > 0 && LEAD[w.text.charCodeAt(0)] === 1 && allIn(w.text, REV_CHARS, 1) && !w.text.includes('..') && !secretish(w.text);
const REV_OR_PATH = (w: Word) => REV(w) || PATH(w);
/** ./... or ./pkg or ./pkg/...: Go packages below the working directory. */
const GO_PACKAGES = (w: Word) => w.text === './...' || (w.text.startsWith('./') && plainPath(w.text.endsWith('/...') ? w.text.slice(2, -4) : w.text.slice(2)));
const PATTERN_THEN_PATHS = (w: Word, i: number) => (i === 0 ? TEXT(w) : PATH(w));

const TEST_RUNNER_FLAGS = ['--watch=false', '--coverage', '--verbose', '--silent', '--bail', '--ci', '--passWithNoTests', '--reporter=dot', '--reporter=spec'];

/**
 * The programs (and subcommands: 'git status') the fast path knows, with the options and operands it accepts.
 * A switch, not a table: only the spec asked for is made (a table of some seventy specs cost 1-2M instructions
 * to build at every start, callgrind).
 */
function specOf(name: string): Spec | null {
  switch (name) {
    case 'ls':
      return { flags: ['-l', '-a', '-la', '-al', '-lah', '-lha', '-alh', '-lh', '-1', '-A', '-F', '-t', '-lt', '-ltr', '-R', '-S', '-h', '-la', '-lA', '-d'], operand: PATH };
    case 'cat':
      return { flags: ['-n'], operand: PATH, filter: true };
    case 'head':
      return { flags: ['-5', '-10', '-20', '-30', '-40', '-50', '-100', '-200'], values: { '-n': NUMBER, '-c': NUMBER }, operand: PATH, filter: true };
    case 'tail':
      return { flags: ['-5', '-10', '-20', '-30', '-40', '-50', '-100', '-200'], values: { '-n': NUMBER, '-c': NUMBER }, operand: PATH, filter: true };
    case 'wc':
      return { flags: ['-l', '-c', '-w', '-m'], operand: PATH, filter: true };
    case 'sort':
      return { flags: ['-n', '-r', '-u', '-rn', '-nr', '-h', '-V'], operand: PATH, filter: true };
    case 'uniq':
      return { flags: ['-c', '-d', '-u'], filter: true };
    case 'grep':
      return {
        flags: ['-r', '-n', '-i', '-l', '-v', '-w', '-c', '-E', '-F', '-R', '-rn', '-rl', '-ri', '-rni', '-rin', '-in', '-il', '-ni', '-o', '-h', '-H', '-q', '-s', '-x', '-nr', '-Rn', '-nE', '-En', '-iE'],
        values: { '-e': TEXT, '-A': NUMBER, '-B': NUMBER, '-C': NUMBER, '-m': NUMBER },
        operand: PATTERN_THEN_PATHS,
        filter: true,
      };
    case 'rg':
      return { flags: ['-n', '-i', '-l', '-w', '-c', '-F', '-S', '--hidden=false'], values: { '-t': NAME, '-A': NUMBER, '-B': NUMBER, '-C': NUMBER }, operand: PATTERN_THEN_PATHS, filter: true };
    case 'tee':
      return { flags: ['-a'], operand: (w) => plainOutFile(w.text), filter: true };
    case 'echo':
      return { operand: TEXT };
    case 'pwd':
      return {};
    case 'mkdir':
      return { flags: ['-p'], operand: PATH };
    case 'git status':
      return { flags: ['-s', '-sb', '-b', '--short', '--branch', '--porcelain', '-uno', '--untracked-files=no'], operand: PATH };
    case 'git diff':
      return { flags: ['--stat', '--cached', '--staged', '--name-only', '--name-status', '--no-color', '--color', '-w', '--word-diff', '--shortstat', '--check'], operand: REV_OR_PATH };
    case 'git log':
      return {
        flags: ['--oneline', '--graph', '--decorate', '--all', '--stat', '-p', '--patch', '--name-only', '--name-status', '--reverse', '--no-merges', '--first-parent', '-1', '-3', '-5', '-10', '-20', '--follow'],
        values: { '-n': NUMBER, '--max-count': NUMBER, '--author': TEXT, '--grep': TEXT, '--since': NAME, '--until': NAME },
        operand: REV_OR_PATH,
      };
    case 'git show':
      return { flags: ['--stat', '--name-only', '--name-status', '--oneline', '--no-patch', '-s'], operand: REV };
    case 'git add':
      return { flags: ['-A', '--all', '-u', '--update', '-v'], operand: PATH };
    case 'git commit':
      return { flags: ['-a', '-v', '-q', '-s', '--signoff', '--quiet'], values: { '-m': TEXT, '--message': TEXT, '-am': TEXT }, operand: () => false };
    case 'git switch':
      return { values: { '-c': NAME, '--create': NAME }, operand: NAME };
    case 'git checkout':
      return { values: { '-b': NAME }, operand: () => false };
    case 'git branch':
      return { flags: ['-a', '-r', '-v', '-vv', '--list', '--show-current', '--all', '--merged', '--no-merged'] };
    case 'git fetch':
      return { flags: ['--all', '--prune', '--tags', '-p', '-q'], operand: (w, i) => i === 0 && w.text === 'origin' };
    case 'git pull':
      return { flags: ['--rebase', '--ff-only', '-q'] };
    case 'git stash':
      return { operand: (w, i) => i === 0 && (w.text === 'list' || w.text === 'show') };
    case 'git rev-parse':
      return { flags: ['--abbrev-ref', '--show-toplevel', '--short', '--verify', '--git-dir'], operand: REV };
    case 'git remote':
      return { flags: ['-v'] };
    case 'git blame':
      return { operand: PATH };
    case 'git ls-files':
      return { flags: ['-m', '-o', '--others', '--modified', '--exclude-standard', '-c'], operand: PATH };
    case 'git shortlog':
      return { flags: ['-s', '-n', '-sn', '-e'] };
    case 'git describe':
      return { flags: ['--tags', '--always', '--dirty'] };
    case 'npm test':
      return { flags: ['--silent', '-s'], passOn: true };
    case 'npm run':
      return { flags: ['--silent', '-s'], operand: (w, i) => i === 0 && NAME(w), passOn: true };
    case 'npm install':
      return { flags: [] };
    case 'npm ci':
      return { flags: [] };
    case 'npm ls':
      return { flags: ['--depth=0', '--all'] };
    case 'pnpm test':
      return { passOn: true };
    case 'pnpm run':
      return { operand: (w, i) => i === 0 && NAME(w), passOn: true };
    case 'pnpm install':
      return { flags: ['--frozen-lockfile'] };
    case 'pnpm build':
      return {};
    case 'pnpm lint':
      return {};
    case 'yarn test':
      return { passOn: true };
    case 'yarn run':
      return { operand: (w, i) => i === 0 && NAME(w), passOn: true };
    case 'yarn install':
      return { flags: ['--frozen-lockfile'] };
    case 'yarn build':
      return {};
    case 'yarn lint':
      return {};
    case 'npx tsc':
      return { runsOperands: true, flags: ['--noEmit', '-b', '--build', '--pretty', '--listFiles'], values: { '-p': PATH, '--project': PATH } };
    case 'tsc':
      return { runsOperands: true, flags: ['--noEmit', '-b', '--build', '--pretty'], values: { '-p': PATH, '--project': PATH } };
    case 'npx eslint':
      return { runsOperands: true, flags: ['--fix', '--quiet'], operand: PATH };
    case 'npx prettier':
      return { runsOperands: true, flags: ['--check', '--write', '-w'], operand: PATH };
    case 'npx jest':
      return { runsOperands: true, flags: TEST_RUNNER_FLAGS, operand: PATH };
    case 'npx vitest':
      return { runsOperands: true, flags: TEST_RUNNER_FLAGS, operand: (w) => w.text === 'run' || PATH(w) };
    case 'npx mocha':
      return { runsOperands: true, flags: TEST_RUNNER_FLAGS, operand: PATH };
    case 'pytest':
      return { runsOperands: true, flags: ['-q', '-v', '-vv', '-rA', '--tb=short', '--tb=line', '--tb=no', '-xq', '-qx', '-xv', '-vx'], values: { '--maxfail': NUMBER }, operand: PATH };
    case 'python -m pytest':
      // An interpreter's run, which the analysis reads as such (not as a wrapper of its operands).
      return { flags: ['-x', '-q', '-v', '-vv', '-s', '-rA', '--tb=short', '--tb=line', '--tb=no', '-xq', '-qx'], values: { '--maxfail': NUMBER }, operand: PATH };
    case 'make':
      return { flags: ['-k', '-s', '-j2', '-j4', '-j8', '-B'], values: { '-j': NUMBER }, operand: NAME };
    case 'cargo build':
      return { flags: ['--release', '--all', '--workspace', '-q', '--all-targets', '--tests'], values: { '-p': NAME } };
    case 'cargo test':
      return { flags: ['--release', '--all', '--workspace', '-q', '--all-targets', '--lib'], values: { '-p': NAME }, operand: NAME, passOn: true };
    case 'cargo check':
      return { flags: ['--all', '--workspace', '-q', '--all-targets', '--tests'], values: { '-p': NAME } };
    case 'cargo clippy':
      return { flags: ['--all', '--workspace', '-q', '--all-targets', '--tests'] };
    case 'cargo fmt':
      return { flags: ['--all', '--check'] };
    case 'go test':
      return { flags: ['-v', '-race', '-short', '-count=1', '-cover'], values: { '-run': NAME }, operand: GO_PACKAGES };
    case 'go build':
      return { flags: ['-v'], operand: GO_PACKAGES };
    case 'go vet':
      return { operand: GO_PACKAGES };
    default:
      return null;
  }
}

/** `python3 -m pytest ...`: pytest run by the interpreter. */
const PYTHON_MODULES = new Set(['python', 'python3']);
/** Programs whose first operand is a subcommand (the learner's commandKey reads them the same way). */
const WITH_SUBCOMMAND = new Set(['git', 'npm', 'pnpm', 'yarn', 'npx', 'cargo', 'go']);

const SOURCE_EXTENSIONS = ['.py', '.ts', '.tsx', '.js', '.jsx', '.mjs', '.cjs', '.json'];

/** Names a file, never a program: `.`, a path with a `/`, a source file. */
function fileLike(t: string): boolean {
  return t === '.' || t.includes('/') || SOURCE_EXTENSIONS.some((e) => t.endsWith(e)) || allIn(t, DIGITS);
}

/** A word after `--` for a test runner: a name, or an option with a plain value (--grep=parser). */
function passedOn(t: string): boolean {
  const bare = t.startsWith('--') ? t.slice(2) : t.startsWith('-') ? t.slice(1) : t;
  const eq = bare.indexOf('=');
  const name = eq < 0 ? bare : bare.slice(0, eq);
  const value = eq < 0 ? '' : bare.slice(eq + 1);
  return name.length > 0 && LEAD[name.charCodeAt(0)] === 1 && allIn(name, NAME_CHARS, 1) && allIn(value, NAME_CHARS) && !secretish(t);
}

/** Checks one simple command's words against specOf; true when every word is one the spec accepts. */
function plainCommand(words: Word[], piped: boolean): boolean {
  if (words.some((w, k) => w.quoted && k < 2)) return false;
  let name = words[0].text;
  let rest = words.slice(1);
  if (PYTHON_MODULES.has(name) && rest[0]?.text === '-m' && rest[1]?.text === 'pytest') {
    name = 'python -m pytest';
    rest = rest.slice(2);
  } else if (WITH_SUBCOMMAND.has(name)) {
    if (rest.length === 0) return false;
    name = `${name} ${rest[0].text}`;
    rest = rest.slice(1);
  }
  const spec = specOf(name);
  if (spec === null) return false;
  if (piped && !spec.filter) return false;
  let operands = 0;
  for (let k = 0; k < rest.length; k++) {
    const w = rest[k];
    if (spec.runsOperands && !w.text.startsWith('-') && !fileLike(w.text) && w.text !== 'run') return false;
    if (w.text === '--' && !w.quoted) {
      if (!spec.passOn) return false;
      return rest.slice(k + 1).every((x) => !x.quoted && passedOn(x.text));
    }
    if (w.text.startsWith('-') && !w.quoted) {
      if (spec.flags?.includes(w.text)) continue;
      const eq = w.text.indexOf('=');
      const opt = eq > 0 ? w.text.slice(0, eq) : w.text;
      const check = spec.values && Object.hasOwn(spec.values, opt) ? spec.values[opt] : undefined;
      if (!check) return false;
      if (eq > 0) {
        if (!check({ text: w.text.slice(eq + 1), quoted: false }) || (spec.runsOperands && !fileLike(w.text.slice(eq + 1)))) return false;
      } else {
        const v = rest[++k];
        if (!v || !check(v) || (spec.runsOperands && !fileLike(v.text))) return false;
      }
      continue;
    }
    if (!spec.operand || !spec.operand(w, operands++)) return false;
  }
  return true;
}

/** Writes a redirect makes: /dev/null or a plain output file. */
function plainRedirect(op: string, target: Word | undefined): boolean {
  if (op === '2>&1' || op === '1>&2' || op === '>&2') return target === undefined;
  return target !== undefined && !target.quoted && (target.text === '/dev/null' || plainOutFile(target.text));
}

/**
 * The invocations of `line` when it takes the fast path (each one's argv, as
 * the deep analysis would list them), or null when the deep analysis must decide.
 */
export function fastPath(line: string, env: FastEnv): FastArgvs | null {
  if (line.length > 500 || !plainProject(env)) return null;
  const tokens = tokenize(line);
  if (!tokens || tokens.length === 0) return null;
  const argvs: FastArgvs = [];
  let words: Word[] = [];
  let piped = false;
  let cdAllowed = true;
  let afterSeparator = true;
  // Ends one simple command at an operator; false when it is not one the fast path accepts.
  const end = (op: string | null): boolean => {
    if (words.length === 0) return false;
    if (words[0].text === 'cd' && !words[0].quoted) {
      // cd DIR, alone between separators, to a plain path below the project: the rest stays inside it.
      if (!cdAllowed || piped || words.length !== 2 || op === '|' || op === '||' || !plainPath(words[1].text) || words[1].quoted) return false;
    } else {
      if (!plainCommand(words, piped)) return false;
      argvs.push(words.map((w) => w.text));
      cdAllowed = false;
    }
    piped = op === '|';
    words = [];
    return true;
  };
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if ('word' in t) {
      words.push(t.word);
      afterSeparator = false;
      continue;
    }
    if (t.op === '&&' || t.op === '||' || t.op === ';' || t.op === '|') {
      if (afterSeparator || !end(t.op)) return null;
      afterSeparator = true;
      continue;
    }
    // A redirect: its target is the next word (none for the descriptor copies).
    if (words.length === 0) return null;
    const dup = t.op === '2>&1' || t.op === '1>&2' || t.op === '>&2';
    const next = tokens[k + 1];
    const target = dup ? undefined : next && 'word' in next ? next.word : undefined;
    if (!plainRedirect(t.op, target)) return null;
    if (!dup) k++;
  }
  if (afterSeparator || !end(null)) return null;
  return argvs.length > 0 ? argvs : null;
}
