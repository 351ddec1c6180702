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
const SECRETISH = ['rsa', 'dsa', 'ed25519', 'ovpn', 'p8', 'keytab', 'kdb', 'key', 'pem', 'p12', 'pfx', 'jks', 'ppk', 'tfstate', 'cred', 'secret', 'token', 'passw', 'auth', 'netrc', 'npmrc', 'pgpass', 'cnf', 'wallet', 'secring', 'kube', 'service', 'adminsdk', 'gcp', 'sa-', 'sa_', 'login', 'cookie', 'id_', 'wp-config', 'env', 'vault', 'private', 'cert', 'shadow', 'sudoers', 'history', '.db', '.dat', '.sqlite', '.gpg', '.asc', '.pth', 'customize', 'systemd', 'autostart', 'cron', 'profile', 'packages', 'ulf', 'ssfn'];
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


/**
 * The programs (and subcommands: 'git status') the fast path knows, one per line: what its operands may be (the
 * kinds in operandCheck; none when empty), traits (filter: may read a pipe; pass-on: takes `-- WORDS` for a test
 * runner; files-only: the analysis reads its other words as a command it may run, so only file names pass), its
 * options with a value (option:kind, kinds in valueCheck), its options without one.
 *
 * program          | operands    | traits     | options with a value                                                       | options
 *
 * One string, not a table of objects: V8's code cache holds a function's constants, and seventy spec objects
 * with their arrays cost about 1M instructions to read back at every start (callgrind).
 */
const TABLE = `
ls               | path        |            |                                                                            | -l -a -la -al -lah -lha -alh -lh -1 -A -F -t -lt -ltr -R -S -h -lA -d
cat              | path        | filter     |                                                                            | -n
head             | path        | filter     | -n:num -c:num                                                              | -5 -10 -20 -30 -40 -50 -100 -200
tail             | path        | filter     | -n:num -c:num                                                              | -5 -10 -20 -30 -40 -50 -100 -200
wc               | path        | filter     |                                                                            | -l -c -w -m
sort             | path        | filter     |                                                                            | -n -r -u -rn -nr -h -V
uniq             |             | filter     |                                                                            | -c -d -u
grep             | pattern     | filter     | -e:text -A:num -B:num -C:num -m:num                                        | -r -n -i -l -v -w -c -E -F -R -rn -rl -ri -rni -rin -in -il -ni -o -h -H -q -s -x -nr -Rn -nE -En -iE
rg               | pattern     | filter     | -t:name -A:num -B:num -C:num                                               | -n -i -l -w -c -F -S --hidden=false
tee              | out         | filter     |                                                                            | -a
echo             | text        |            |                                                                            |
pwd              |             |            |                                                                            |
mkdir            | path        |            |                                                                            | -p
git status       | path        |            |                                                                            | -s -sb -b --short --branch --porcelain -uno --untracked-files=no
git diff         | rev-or-path |            |                                                                            | --stat --cached --staged --name-only --name-status --no-color --color -w --word-diff --shortstat --check
git log          | rev-or-path |            | -n:num --max-count:num --author:text --grep:text --since:name --until:name | --oneline --graph --decorate --all --stat -p --patch --name-only --name-status --reverse --no-merges --first-parent -1 -3 -5 -10 -20 --follow
git show         | rev         |            |                                                                            | --stat --name-only --name-status --oneline --no-patch -s
git add          | path        |            |                                                                            | -A --all -u --update -v
git commit       |             |            | -m:text --message:text -am:text                                            | -a -v -q -s --signoff --quiet
git switch       | name        |            | -c:name --create:name                                                      |
git checkout     |             |            | -b:name                                                                    |
git branch       |             |            |                                                                            | -a -r -v -vv --list --show-current --all --merged --no-merged
git fetch        | origin      |            |                                                                            | --all --prune --tags -p -q
git pull         |             |            |                                                                            | --rebase --ff-only -q
git stash        | stash       |            |                                                                            |
git rev-parse    | rev         |            |                                                                            | --abbrev-ref --show-toplevel --short --verify --git-dir
git remote       |             |            |                                                                            | -v
git blame        | path        |            |                                                                            |
git ls-files     | path        |            |                                                                            | -m -o --others --modified --exclude-standard -c
git shortlog     |             |            |                                                                            | -s -n -sn -e
git describe     |             |            |                                                                            | --tags --always --dirty
npm test         |             | pass-on    |                                                                            | --silent -s
npm run          | script      | pass-on    |                                                                            | --silent -s
npm install      |             |            |                                                                            |
npm ci           |             |            |                                                                            |
npm ls           |             |            |                                                                            | --depth=0 --all
pnpm test        |             | pass-on    |                                                                            |
pnpm run         | script      | pass-on    |                                                                            |
pnpm install     |             |            |                                                                            | --frozen-lockfile
pnpm build       |             |            |                                                                            |
pnpm lint        |             |            |                                                                            |
yarn test        |             | pass-on    |                                                                            |
yarn run         | script      | pass-on    |                                                                            |
yarn install     |             |            |                                                                            | --frozen-lockfile
yarn build       |             |            |                                                                            |
yarn lint        |             |            |                                                                            |
npx tsc          |             | files-only | -p:path --project:path                                                     | --noEmit -b --build --pretty --listFiles
tsc              |             | files-only | -p:path --project:path                                                     | --noEmit -b --build --pretty
npx eslint       | path        | files-only |                                                                            | --fix --quiet
npx prettier     | path        | files-only |                                                                            | --check --write -w
npx jest         | path        | files-only |                                                                            | --watch=false --coverage --verbose --silent --bail --ci --passWithNoTests --reporter=dot --reporter=spec
npx vitest       | run-or-path | files-only |                                                                            | --watch=false --coverage --verbose --silent --bail --ci --passWithNoTests --reporter=dot --reporter=spec
npx mocha        | path        | files-only |                                                                            | --watch=false --coverage --verbose --silent --bail --ci --passWithNoTests --reporter=dot --reporter=spec
pytest           | path        | files-only | --maxfail:num                                                              | -q -v -vv -rA --tb=short --tb=line --tb=no -xq -qx -xv -vx
python -m pytest | path        |            | --maxfail:num                                                              | -x -q -v -vv -s -rA --tb=short --tb=line --tb=no -xq -qx
make             | name        |            | -j:num                                                                     | -k -s -j2 -j4 -j8 -B
cargo build      |             |            | -p:name                                                                    | --release --all --workspace -q --all-targets --tests
cargo test       | name        | pass-on    | -p:name                                                                    | --release --all --workspace -q --all-targets --lib
cargo check      |             |            | -p:name                                                                    | --all --workspace -q --all-targets --tests
cargo clippy     |             |            |                                                                            | --all --workspace -q --all-targets --tests
cargo fmt        |             |            |                                                                            | --all --check
go test          | go          |            | -run:name                                                                  | -v -race -short -count=1 -cover
go build         | go          |            |                                                                            | -v
go vet           | go          |            |                                                                            |
`;

/** The spec of `name` read from TABLE; null for a program the fast path does not know. */
function specOf(name: string): Spec | null {
  for (let at = TABLE.indexOf(`\n${name} `); at >= 0; at = TABLE.indexOf(`\n${name} `, at + 1)) {
    const row = TABLE.slice(at + 1, TABLE.indexOf('\n', at + 1)).split('|').map((c) => c.trim());
    if (row[0] !== name) continue;
    const words = (c: string) => (c === '' ? [] : c.split(' '));
    const values: Record<string, (w: Word) => boolean> = {};
    for (const v of words(row[3])) values[v.slice(0, v.indexOf(':'))] = valueCheck(v.slice(v.indexOf(':') + 1));
    const traits = words(row[2]);
    return { operand: row[1] === '' ? undefined : operandCheck(row[1]), filter: traits.includes('filter'), passOn: traits.includes('pass-on'), runsOperands: traits.includes('files-only'), values, flags: words(row[4]) };
  }
  return null;
}

function valueCheck(kind: string): (w: Word) => boolean {
  return kind === 'num' ? NUMBER : kind === 'text' ? TEXT : kind === 'name' ? NAME : PATH;
}

function operandCheck(kind: string): (w: Word, index: number) => boolean {
  switch (kind) {
    case 'path':
      return PATH;
    case 'rev':
      return REV;
    case 'rev-or-path':
      return REV_OR_PATH;
    case 'pattern':
      return PATTERN_THEN_PATHS;
    case 'name':
      return NAME;
    case 'text':
      return TEXT;
    case 'go':
      return GO_PACKAGES;
    case 'out':
      return (w) => plainOutFile(w.text);
    case 'script':
      return (w, i) => i === 0 && NAME(w);
    case 'origin':
      return (w, i) => i === 0 && w.text === 'origin';
    case 'stash':
      return (w, i) => i === 0 && (w.text === 'list' || w.text === 'show');
    case 'run-or-path':
      return (w) => w.text === 'run' || PATH(w);
    default:
      throw new Error(`fast-path TABLE: unknown operand kind ${kind}`);
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
