/**
 * A small POSIX/bash command-line parser, enough to see what a command line
 * will run: words with quoting, escapes and expansions resolved as far as
 * can be known statically; operators (`|`, `|&`, `||`, `&&`, `;`, `&`,
 * newlines); subshells and brace groups; redirections with their targets;
 * here-documents and here-strings; command substitutions (`$(...)`,
 * backticks) and process substitutions (`<(...)`), whose bodies are parsed
 * too; function definitions. It never executes anything.
 *
 * The result is flat: every simple command anywhere in the line, in order,
 * each with the pipeline it belongs to (commands connected by pipes, across
 * group boundaries: in `(curl x; echo) | sh` both `curl` and `echo` feed
 * `sh`) and its nesting depth. Unknown expansions (`$VAR` other than HOME
 * and PWD) stay in the text and are flagged, so callers can be cautious.
 */
import { windowsDrivePath } from './paths-classify';
import { clusterVar } from './cluster-rules';

export interface Word {
  /** The word after quote removal and the expansions known statically. */
  text: string;
  /** Contains an expansion whose value is unknown ($VAR, ${X}, $(...)). */
  dynamic: boolean;
  /** Contains an unquoted glob character. */
  glob: boolean;
  /** Bodies of command/process substitutions inside this word. */
  subs: string[];
  /** Any part was quoted. */
  quoted: boolean;
  /** An unquoted expansion put whitespace into the word: the shell splits it into several words. */
  split?: boolean;
  /** Contains an unquoted `{`: brace expansion may turn it into several words (`{/,~}`). */
  brace?: boolean;
}

export interface Redirect {
  op: string;
  fd: number | null;
  target: Word;
  /** Body of a here-document or here-string. */
  body?: string;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
  /** Commands with the same pipeline id are connected by pipes. */
  pipeline: number;
  /** Position inside its pipeline (0 = first stage). */
  stage: number;
  depth: number;
  /** The operator that ends it (`;`, `&&`, `||`, `&`, a newline), when not a pipe. */
  after?: string;
  /** Inside a `while`, `until`, `for` or `select` loop: it may run many times. */
  repeats?: boolean;
}

export interface ParsedScript {
  commands: SimpleCommand[];
  /** Names of functions defined that call themselves through a pipe or in the background (fork bombs). */
  forkBombs: string[];
  /** Functions defined on the line: their body is `commands[start..end)`. */
  functions: { name: string; start: number; end: number }[];
  /** Problems met (an unclosed quote): the line would not run as written. */
  errors: string[];
}

export interface ParseEnv {
  home: string;
  cwd: string;
  /** The project directory, the value of $CLAUDE_PROJECT_DIR and of `git rev-parse --show-toplevel`. */
  project?: string;
  /**
   * Variables known so far on this command line: assignments (`X=/; rm -rf $X`), `for` lists, and
   * HOME/PWD/CLAUDE_PROJECT_DIR. Shared with nested parses so `bash -c "rm -rf $X"` sees them too.
   */
  vars?: Map<string, VarValue>;
}

export interface VarValue {
  text: string;
  dynamic: boolean;
  subs: string[];
  /** Several values (a `for` list): expanded as a brace alternative so every value is checked. */
  list?: boolean;
  /** The value came from an unquoted glob (for f in /*): it names the paths the glob matches. */
  glob?: boolean;
}

type Token =
  | { t: 'word'; w: Word }
  | { t: 'op'; op: string }
  | { t: 'redir'; op: string; fd: number | null };

const OPS = ['&&', '||', '|&', ';;', '&>>', '&>', '>>', '>|', '>&', '<&', '<<<', '<<-', '<<', '<>', '|', '&', ';', '(', ')', '<', '>', '\n'];
const REDIR_OPS = new Set(['&>>', '&>', '>>', '>|', '>&', '<&', '<<<', '<<-', '<<', '<>', '<', '>']);
const META = new Set([' ', '\t', '\n', '|', '&', ';', '(', ')', '<', '>']);

/** Finds the `)` closing a `$(` or `<(` whose body starts at `i`; quote- and nesting-aware. */
function matchParen(s: string, i: number): number {
  let depth = 1;
  // Inside `case … esac` a pattern ends with an unmatched `)`: it does not close the substitution.
  let cases = 0;
  let patterns = 0;
  while (i < s.length) {
    const c = s[i];
    const boundary = i === 0 || /[\s;&|(]/.test(s[i - 1]);
    if (boundary && /^case\s/.test(s.slice(i, i + 5))) {
      cases++;
      patterns++;
      i += 4;
    } else if (boundary && cases > 0 && /^esac\b/.test(s.slice(i, i + 5))) {
      cases--;
      // esac cancels the pattern a last `;;` announced.
      if (cases === 0) patterns = 0;
      i += 4;
    } else if (cases > 0 && c === ';' && s[i + 1] === ';') {
      patterns++;
      i += 2;
    } else if (c === ')' && patterns > 0 && depth === 1) {
      patterns--;
      i++;
    } else if (c === '\\') i += 2;
    else if (c === "'") {
      const j = s.indexOf("'", i + 1);
      i = j < 0 ? s.length : j + 1;
    } else if (c === '"') {
      i++;
      while (i < s.length && s[i] !== '"') i += s[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '`') {
      const j = s.indexOf('`', i + 1);
      i = j < 0 ? s.length : j + 1;
    } else if (c === '(') {
      depth++;
      i++;
    } else if (c === ')') {
      if (--depth === 0) return i;
      i++;
    } else i++;
  }
  return -1;
}

const CREDENTIAL_FILE_VARS: Record<string, string> = {
  KUBECONFIG: '.kube/config',
  GOOGLE_APPLICATION_CREDENTIALS: '.config/gcloud/application_default_credentials.json',
  CLOUDSDK_CONFIG: '.config/gcloud',
  AWS_SHARED_CREDENTIALS_FILE: '.aws/credentials',
  AWS_CONFIG_FILE: '.aws/config',
  DOCKER_CONFIG: '.docker',
  NETRC: '.netrc',
  NPM_CONFIG_USERCONFIG: '.npmrc',
  GNUPGHOME: '.gnupg',
  PGPASSFILE: '.pgpass',
  P4TICKETS: '.p4tickets',
  P4ENVIRO: '.p4enviro',
  ANSIBLE_VAULT_PASSWORD_FILE: '.vault_pass',
};

/**
 * Windows' own variables (Git Bash has them all, WSL those WSLENV passes), read as their usual
 * places in WSL's spelling; their names are case-insensitive, as on Windows.
 */
const WINDOWS_VARS: Record<string, string> = {
  USERPROFILE: '/mnt/c/Users/user',
  HOMEDRIVE: 'C:',
  HOMEPATH: '\\Users\\user',
  APPDATA: '/mnt/c/Users/user/AppData/Roaming',
  LOCALAPPDATA: '/mnt/c/Users/user/AppData/Local',
  ONEDRIVE: '/mnt/c/Users/user/OneDrive',
  ONEDRIVECOMMERCIAL: '/mnt/c/Users/user/OneDrive',
  ONEDRIVECONSUMER: '/mnt/c/Users/user/OneDrive',
  SYSTEMROOT: '/mnt/c/Windows',
  WINDIR: '/mnt/c/Windows',
  SYSTEMDRIVE: 'C:',
  PROGRAMFILES: '/mnt/c/Program Files',
  PROGRAMDATA: '/mnt/c/ProgramData',
  PUBLIC: '/mnt/c/Users/Public',
};

/** The usual value of a Windows variable (`USERPROFILE`, `LocalAppData`...), or undefined. */
export function windowsVar(name: string): string | undefined {
  return WINDOWS_VARS[name.toUpperCase()];
}

function expandVar(name: string, env: ParseEnv): VarValue | null {
  const known = env.vars?.get(name);
  if (known) return known;
  // $IFS unquoted splits words: rm${IFS}-rf${IFS}/ is rm -rf /.
  if (name === 'IFS') return { text: ' ', dynamic: false, subs: [] };
  // The temporary directory: wherever it is, it is not /, home or the project.
  if (name === 'TMPDIR' || name === 'TMP' || name === 'TEMP' || name === 'RUNNER_TEMP') return { text: '/tmp/tmpdir', dynamic: false, subs: [] };
  if (name === 'HOME') return { text: env.home, dynamic: false, subs: [] };
  // Variables that name a credentials file, read as the file's usual place when the line does not set them.
  const cred = CREDENTIAL_FILE_VARS[name];
  if (cred) return { text: `${env.home}/${cred}`, dynamic: false, subs: [] };
  // $0 of the command line is the shell's name (the Bash tool runs `bash -c`): dirname "$0" is `.`.
  if (name === '0') return { text: 'bash', dynamic: false, subs: [] };
  if (name === 'PWD') return { text: env.cwd, dynamic: false, subs: [] };
  if (name === 'CLAUDE_PROJECT_DIR' && env.project) return { text: env.project, dynamic: false, subs: [] };
  const win = windowsVar(name);
  if (win !== undefined) return { text: win, dynamic: false, subs: [] };
  const area = clusterVar(name, env.cwd);
  if (area !== undefined) return { text: area, dynamic: false, subs: [] };
  return null;
}

/** Bash's ${X%pat}, ${X%%pat}, ${X#pat}, ${X##pat}, ${X:off[:len]}, ${X:?msg} on a known value. */
function paramOp(value: string, op: string, arg: string): string {
  if (op === ':?') return value;
  if (op === '/' || op === '//') {
    // ${X/pat/rep}, ${X//pat/rep}: the first or every match of pat replaced.
    const [pat, rep = ''] = arg.split(/(?<!\\)\//);
    if (!pat) return value;
    const re = new RegExp([...pat].map((c) => (c === '*' ? '.*?' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\/]/g, '\\$&'))).join(''), op === '//' ? 'g' : '');
    return value.replace(re, rep);
  }
  if (op === ':') {
    const [off, len] = arg.split(':').map((x) => Number(x));
    return Number.isFinite(len) ? value.substr(off, len) : value.slice(off);
  }
  const whole = new RegExp(`^${[...arg].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\/]/g, '\\$&'))).join('')}$`);
  const n = value.length;
  if (op === '%' || op === '%%') {
    // Shortest (%) or longest (%%) matching suffix.
    for (let k = 0; k <= n; k++) {
      const i = op === '%' ? n - k : k;
      if (whole.test(value.slice(i))) return value.slice(0, i);
    }
    return value;
  }
  for (let k = 0; k <= n; k++) {
    const i = op === '#' ? k : n - k;
    if (whole.test(value.slice(0, i))) return value.slice(i);
  }
  return value;
}

/** Appends a variable's value to a word: its text, its unknown parts and the substitutions it came from. */
function appendValue(w: Word, v: VarValue, inQuotes: boolean): void {
  w.text += v.text;
  if (v.dynamic) w.dynamic = true;
  if (v.subs.length > 0) w.subs.push(...v.subs);
  if (!inQuotes && /\s/.test(v.text)) w.split = true;
  if (v.list) w.brace = true;
  if (v.glob) w.glob = true;
}

const DECLARE = new Set(['export', 'local', 'declare', 'typeset', 'readonly']);
const KEEP_START = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '{', '!', 'time']);
const SEPARATORS = new Set([';', '&&', '||', '|', '|&', '&', '\n', '(', ')', ';;']);

class Lexer {
  private i = 0;
  readonly tokens: Token[] = [];
  readonly errors: string[] = [];
  /** Here-documents whose delimiter was read and whose body follows the next newline. */
  private pendingHeredocs: { delim: string; strip: boolean; index: number; quoted: boolean }[] = [];
  /** Whether each here-document's delimiter was quoted (its body then is not expanded). */
  heredocQuoted: boolean[] = [];
  /** Bodies of the here-documents, in the order of their `<<` operators. */
  readonly heredocBodies: (string | undefined)[] = [];
  private heredocNext = false;
  private heredocStrip = false;

  constructor(
    private readonly s: string,
    private readonly env: ParseEnv,
  ) {}

  /** The next word starts a command (assignments are recorded there). */
  private cmdStart = true;
  /** After `export`/`local`...: the words are assignments. */
  private declaring = false;
  /** declare -n / local -n: the assignments make name references. */
  private nameref = false;
  /** A redirection's target comes next: it is not a command word. */
  private redirTarget = false;
  /** `for NAME in WORDS`: 1 = name expected, 2 = `in` expected, 3 = collecting the list. */
  private forState = 0;
  private forName = '';
  private forItems: Word[] = [];

  private pushWord(w: Word): void {
    this.tokens.push({ t: 'word', w });
    if (this.heredocNext) {
      this.heredocNext = false;
      this.pendingHeredocs.push({ delim: w.text, strip: this.heredocStrip, index: this.heredocBodies.length, quoted: w.quoted });
      this.heredocBodies.push(undefined);
    }
    if (this.redirTarget) {
      this.redirTarget = false;
      return;
    }
    if (this.forState === 1) {
      this.forName = w.text;
      this.forState = 2;
      return;
    }
    if (this.forState === 2) {
      this.forState = w.text === 'in' ? 3 : 0;
      return;
    }
    if (this.forState === 3) {
      this.forItems.push(w);
      return;
    }
    if (this.declaring && /^-[a-zA-Z]+$/.test(w.text)) {
      if (w.text.includes('n')) this.nameref = true;
      return;
    }
    const assign = /^([A-Za-z_]\w*)\+?=/.exec(w.text);
    if (this.declaring && this.nameref && assign) {
      // declare -n REF=NAME: REF stands for the variable NAME.
      const target = expandVar(w.text.slice(assign[0].length), this.env);
      if (target) this.vars().set(assign[1], target);
      return;
    }
    if ((this.cmdStart || this.declaring) && assign) {
      const value = w.text.slice(assign[0].length);
      if (value === '' && this.s[this.i] === '(') {
        // ARR=(a b c): an array, read as the list of its values.
        const end = this.s.indexOf(')', this.i);
        const inner = this.s.slice(this.i + 1, end < 0 ? this.s.length : end);
        this.i = end < 0 ? this.s.length : end + 1;
        // declare -A M=([k]=v …): the values, without their keys.
        this.setList(assign[1], parseShell(inner, { ...this.env, vars: this.vars() }, 40).commands.flatMap((c) => c.words).map((x) => ({ ...x, text: x.text.replace(/^\[[^\]]*\]=/, '') })));
        return;
      }
      // X+=v appends to a known X.
      const prev = w.text[assign[1].length] === '+' ? this.vars().get(assign[1]) ?? expandVar(assign[1], this.env) : null;
      if (w.text[assign[1].length] === '+' && prev === null) this.vars().set(assign[1], { text: `\${${assign[1]}}${value}`, dynamic: true, subs: [...w.subs] });
      else this.vars().set(assign[1], { text: (prev?.text ?? '') + value, dynamic: w.dynamic || !!prev?.dynamic, subs: [...(prev?.subs ?? []), ...w.subs] });
      return; // still at the start of the command
    }
    if (this.cmdStart && !w.quoted && DECLARE.has(w.text)) {
      this.declaring = true;
      this.cmdStart = false;
      return;
    }
    if (this.cmdStart && !w.quoted && (w.text === 'for' || w.text === 'select')) {
      this.forState = 1;
      this.forItems = [];
      return;
    }
    if (this.cmdStart && !w.quoted && KEEP_START.has(w.text)) return;
    this.cmdStart = false;
  }

  private endForList(): void {
    // for NAME; do …: NAME walks "$@".
    if (this.forState === 2) {
      const all = this.vars().get('@');
      if (all) this.vars().set(this.forName, all);
    }
    // for p in "${ARR[@]}": an array's values come as one {a,b,c} word; each is an item.
    // for f in ~/.{bashrc,zshrc}: a brace in an item makes one item per alternative.
    const forItems = this.forItems.flatMap((w) => {
      const m = w.brace ? /^([^{}]*)\{([^{}]*,[^{}]*)\}([^{}]*)$/.exec(w.text) : null;
      return m ? m[2].split(',').map((t) => ({ ...w, text: m[1] + t + m[3], brace: false })) : [w];
    });
    if (this.forState === 3 && forItems.length > 0 && forItems.every((w) => !w.text.includes(',') && !w.text.includes('{'))) {
      const items = forItems;
      this.vars().set(this.forName, {
        text: items.length === 1 ? items[0].text : `{${items.map((w) => w.text).join(',')}}`,
        dynamic: items.some((w) => w.dynamic),
        subs: items.flatMap((w) => w.subs),
        list: items.length > 1,
        glob: items.some((w) => w.glob),
      });
    }
    this.forState = 0;
  }

  private setList(name: string, items: Word[]): void {
    if (items.length === 0 || items.some((w) => w.text.includes(',') || w.text.includes('{'))) return;
    this.vars().set(name, {
      text: items.length === 1 ? items[0].text : `{${items.map((w) => w.text).join(',')}}`,
      dynamic: items.some((w) => w.dynamic),
      subs: items.flatMap((w) => w.subs),
      list: items.length > 1,
      glob: items.some((w) => w.glob),
    });
  }

  /**
   * At the end of a simple command: `set -- A B` sets $1, $2...; `read [-r] X [Y] <<< TEXT` and
   * `read -a ARR <<< TEXT` set their variables from the here-string.
   */
  private endSimpleCommand(): void {
    let k = this.tokens.length;
    while (k > 0 && !(this.tokens[k - 1].t === 'op' && SEPARATORS.has((this.tokens[k - 1] as { op: string }).op))) k--;
    const toks = this.tokens.slice(k);
    const words: Word[] = [];
    let here: Word | null = null;
    for (let j = 0; j < toks.length; j++) {
      const tk = toks[j];
      if (tk.t === 'redir') {
        const next = toks[j + 1];
        if (tk.op === '<<<' && next?.t === 'word') here = next.w;
        j++;
      } else if (tk.t === 'word') words.push(tk.w);
    }
    // IFS=: read … splits its input at those characters (the passwd line's fields).
    const ifs = words.find((w, j) => j < words.findIndex((x) => !/^[A-Za-z_]\w*\+?=/.test(x.text)) && /^IFS=/.test(w.text))?.text.slice(4);
    while (words.length > 0 && /^[A-Za-z_]\w*\+?=/.test(words[0].text)) words.shift(); // IFS= read ...
    const first = words[0];
    if (!first || first.quoted) return;
    if (first.text === 'cd' || first.text === 'pushd') {
      // cd DIR: $OLDPWD is the directory left, $PWD the new one (unknown when DIR is).
      const dir = words.slice(1).find((w) => w.text !== '--' && !/^-[LPe@]+$/.test(w.text));
      const pwd = this.vars().get('PWD') ?? { text: this.env.cwd, dynamic: false, subs: [] };
      this.vars().set('OLDPWD', pwd);
      if (!dir || dir.text === '~') this.vars().set('PWD', { text: this.env.home, dynamic: false, subs: [] });
      else if (dir.dynamic || dir.text === '-' || pwd.dynamic) this.vars().set('PWD', { text: '$PWD', dynamic: true, subs: [] });
      else this.vars().set('PWD', { text: posixResolve(pwd.text, dir.text), dynamic: false, subs: [] });
    } else if (first.text === 'set' && (words[1]?.text === '--' || (words.length > 1 && !words[1].text.startsWith('-')))) {
      const vals = words.slice(words[1].text === '--' ? 2 : 1);
      vals.forEach((v, n) => this.vars().set(String(n + 1), { text: v.text, dynamic: v.dynamic, subs: [...v.subs], glob: v.glob }));
      this.setList('@', vals);
      this.setList('*', vals);
    } else if (first.text === 'printf' && words[1]?.text === '-v' && words[2] && /^[A-Za-z_]\w*$/.test(words[2].text) && words[3]) {
      // printf -v NAME FORMAT ARGS: NAME is what printf would print.
      const args = words.slice(4);
      this.vars().set(words[2].text, { text: printfFormat(words[3].text, args.map((a) => a.text)), dynamic: words[3].dynamic || args.some((a) => a.dynamic), subs: args.flatMap((a) => a.subs) });
    } else if ((first.text === 'mapfile' || first.text === 'readarray') && words.length > 1) {
      // mapfile [-t] ARR < <(CMD) / <<< TEXT: ARR holds the lines CMD prints when they are known.
      const name = words.slice(1).filter((x, j) => !x.text.startsWith('-') && !/^-[a-zA-Z]*[dnOsuCc]$/.test(words[j]?.text ?? '')).pop()?.text ?? 'MAPFILE';
      const procSub = toks.find((tk, j) => tk.t === 'redir' && tk.op === '<' && toks[j + 1]?.t === 'word' && (toks[j + 1] as { w: Word }).w.subs.length > 0);
      const src = procSub ? (toks[toks.indexOf(procSub) + 1] as { w: Word }).w.subs[0] : null;
      const textOut = here !== null ? here.text : src !== null ? resolveSubstitution(src, this.env) : null;
      if (textOut !== null && /^[A-Za-z_]\w*$/.test(name)) {
        this.setList(name, textOut.split('\n').filter((l) => l !== '').map((l) => ({ text: l, dynamic: false, glob: false, subs: [], quoted: true })));
      }
    } else if (first.text === 'read' && here === null && toks.some((tk, j) => tk.t === 'redir' && tk.op === '<' && toks[j + 1]?.t === 'word' && (toks[j + 1] as { w: Word }).w.subs.length > 0)) {
      // read X < <(CMD): X is the first line CMD prints, when it is known.
      const procSub = toks.find((tk, j) => tk.t === 'redir' && tk.op === '<' && toks[j + 1]?.t === 'word' && (toks[j + 1] as { w: Word }).w.subs.length > 0)!;
      const out = resolveSubstitution((toks[toks.indexOf(procSub) + 1] as { w: Word }).w.subs[0], this.env);
      const name = words.slice(1).filter((x, j) => /^[A-Za-z_]\w*$/.test(x.text) && !/^-[a-zA-Z]*[dpntuNi]$/.test(words[j]?.text ?? ''))[0]?.text;
      if (out !== null && name) this.vars().set(name, { text: out.split('\n')[0], dynamic: false, subs: [] });
    } else if (first.text === 'read' && here !== null) {
      const names: string[] = [];
      let asArray = false;
      for (let j = 1; j < words.length; j++) {
        const a = words[j].text;
        if (/^-[a-zA-Z]*[dpntuNi]$/.test(a)) j++;
        else if (/^-[a-zA-Z]*a$/.test(a)) asArray = true;
        else if (!a.startsWith('-') && /^[A-Za-z_]\w*$/.test(a)) names.push(a);
      }
      const hereText = here.text.replace(/\n$/, '');
      const sep = ifs && /\S/.test(ifs) ? new RegExp(`[${ifs.replace(/[\]\\^-]/g, '\\$&')}]`) : /\s+/;
      const parts = hereText.trim().split(sep);
      const mk = (t: string): Word => ({ text: t, dynamic: here!.dynamic, glob: false, subs: [...here!.subs], quoted: true });
      if (asArray && names.length > 0) this.setList(names[names.length - 1], parts.map(mk));
      else if (names.length === 1) this.vars().set(names[0], { text: hereText.trim(), dynamic: here.dynamic, subs: [...here.subs] });
      else names.forEach((n, j) => this.vars().set(n, { text: j === names.length - 1 ? parts.slice(j).join(' ') : (parts[j] ?? ''), dynamic: here!.dynamic, subs: [...here!.subs] }));
    }
  }

  private vars(): Map<string, VarValue> {
    return (this.env.vars ??= new Map());
  }

  run(): Token[] {
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i];
      if (c === ' ' || c === '\t' || (c === '\\' && s[this.i + 1] === '\n')) {
        this.i += c === '\\' ? 2 : 1;
        continue;
      }
      if (c === '#' ) {
        while (this.i < s.length && s[this.i] !== '\n') this.i++;
        continue;
      }
      // A redirection may start with a file-descriptor number: 2>, 2>>, 1>&2.
      const fdMatch = /^(\d+)(?=[<>])/.exec(s.slice(this.i, this.i + 12));
      const opStart = this.i + (fdMatch ? fdMatch[1].length : 0);
      const op = OPS.find((o) => s.startsWith(o, opStart));
      if (op && (fdMatch === null || REDIR_OPS.has(op))) {
        // <( and >( are process substitutions, read as words.
        if ((op === '<' || op === '>') && s[opStart + 1] === '(' && !fdMatch) {
          this.pushWord(this.word());
          continue;
        }
        this.i = opStart + op.length;
        if (REDIR_OPS.has(op)) {
          this.tokens.push({ t: 'redir', op, fd: fdMatch ? Number(fdMatch[1]) : null });
          this.redirTarget = true;
          if (op === '<<' || op === '<<-') {
            this.heredocNext = true;
            this.heredocStrip = op === '<<-';
          }
        } else {
          this.tokens.push({ t: 'op', op });
          if (SEPARATORS.has(op)) {
            this.tokens.pop();
            this.endSimpleCommand();
            this.tokens.push({ t: 'op', op });
            this.endForList();
            this.cmdStart = true;
            this.declaring = false;
            this.nameref = false;
          }
          if (op === '\n') this.readHeredocBodies();
        }
        continue;
      }
      this.pushWord(this.word());
    }
    this.endForList();
    return this.tokens;
  }

  private readHeredocBodies(): void {
    for (const h of this.pendingHeredocs) {
      const lines: string[] = [];
      while (this.i < this.s.length) {
        let end = this.s.indexOf('\n', this.i);
        if (end < 0) end = this.s.length;
        const line = this.s.slice(this.i, end);
        this.i = end + 1;
        if ((h.strip ? line.replace(/^\t+/, '') : line) === h.delim) break;
        lines.push(line);
      }
      const body = lines.join('\n');
      // An unquoted delimiter: the shell expands the body first (\$ is $, $HOME is the home directory).
      this.heredocQuoted[h.index] = h.quoted;
      this.heredocBodies[h.index] = h.quoted ? body : body.replace(/\\([$`\\])|\$\{HOME\}|\$HOME\b/g, (m, esc: string | undefined) => esc ?? this.env.home);
    }
    this.pendingHeredocs = [];
  }

  private word(): Word {
    const s = this.s;
    const w: Word = { text: '', dynamic: false, glob: false, subs: [], quoted: false };
    const start = this.i;
    while (this.i < s.length) {
      const c = s[this.i];
      if (META.has(c)) {
        if ((c === '<' || c === '>') && s[this.i + 1] === '(' && this.i === start) {
          const end = matchParen(s, this.i + 2);
          if (end < 0) {
            this.errors.push('unclosed process substitution');
            this.i = s.length;
            break;
          }
          w.subs.push(s.slice(this.i + 2, end));
          w.text += '/dev/fd/63';
          w.dynamic = true;
          this.i = end + 1;
          continue;
        }
        break;
      }
      if (c === '\\' && s[this.i + 1] === '\n') {
        // A line continuation inside a word joins its two halves (r\<newline>m is rm).
        this.i += 2;
      } else if (c === '\\') {
        w.text += s[this.i + 1] ?? '';
        w.quoted = true;
        this.i += 2;
      } else if ('!@*+?'.includes(c) && s[this.i + 1] === '(') {
        // extglob patterns !(x), @(x), *(x), +(x), ?(x): part of the word, a glob.
        const end = matchParen(s, this.i + 2);
        const stop = end < 0 ? s.length : end + 1;
        w.text += s.slice(this.i, stop);
        w.glob = true;
        this.i = stop;
      } else if (c === "'") {
        const j = s.indexOf("'", this.i + 1);
        if (j < 0) {
          this.errors.push('unclosed single quote');
          w.text += s.slice(this.i + 1);
          this.i = s.length;
        } else {
          w.text += s.slice(this.i + 1, j);
          this.i = j + 1;
        }
        w.quoted = true;
      } else if (c === '"') {
        this.i++;
        w.quoted = true;
        this.doubleQuoted(w);
      } else if (c === '$') {
        this.dollar(w, false);
      } else if (c === '`') {
        this.backtick(w);
      } else if (c === '~' && (this.i === start || (/^[A-Za-z_]\w*=$/.test(w.text) && !w.quoted)) && (this.i + 1 >= s.length || s[this.i + 1] === '/' || META.has(s[this.i + 1]))) {
        w.text += this.env.home;
        this.i++;
      } else if (c === '~' && this.i === start && (s[this.i + 1] === '+' || s[this.i + 1] === '-') && (this.i + 2 >= s.length || s[this.i + 2] === '/' || META.has(s[this.i + 2]))) {
        // ~+ is $PWD, ~- is $OLDPWD (bash Tilde Expansion).
        const known = this.env.vars?.get(s[this.i + 1] === '+' ? 'PWD' : 'OLDPWD');
        if (known) appendValue(w, known, true);
        else if (s[this.i + 1] === '+') w.text += this.env.cwd;
        else {
          w.text += '$OLDPWD';
          w.dynamic = true;
        }
        this.i += 2;
      } else if (c === '~' && this.i === start && s[this.i + 1] === '$' && w.text === '') {
        // ~$(whoami), ~$USER (re-read by eval): some user's home directory.
        w.text += '/home/';
        this.i++;
      } else if (c === '~' && this.i === start && /^~[a-z_][a-z0-9_-]*(?=\/|$|[\s;|&<>()])/.test(s.slice(this.i, this.i + 40))) {
        // ~user: that user's home directory.
        const user = /^~([a-z_][a-z0-9_-]*)/.exec(s.slice(this.i, this.i + 40))![1];
        w.text += user === 'root' ? '/root' : `/home/${user}`;
        this.i += 1 + user.length;
      } else {
        if (c === '*' || c === '?' || c === '[') w.glob = true;
        if (c === '{') w.brace = true;
        w.text += c;
        this.i++;
      }
    }
    return w;
  }

  private doubleQuoted(w: Word): void {
    const s = this.s;
    while (this.i < s.length && s[this.i] !== '"') {
      const c = s[this.i];
      if (c === '\\' && '$`"\\\n'.includes(s[this.i + 1] ?? '')) {
        if (s[this.i + 1] !== '\n') w.text += s[this.i + 1];
        this.i += 2;
      } else if (c === '$') this.dollar(w, true);
      else if (c === '`') this.backtick(w);
      else {
        w.text += c;
        this.i++;
      }
    }
    if (this.i >= s.length) this.errors.push('unclosed double quote');
    this.i++;
  }

  private backtick(w: Word): void {
    const s = this.s;
    let j = this.i + 1;
    let body = '';
    while (j < s.length && s[j] !== '`') {
      if (s[j] === '\\' && '$`\\'.includes(s[j + 1] ?? '')) {
        body += s[j + 1];
        j += 2;
      } else body += s[j++];
    }
    if (j >= s.length) this.errors.push('unclosed backtick');
    w.subs.push(body);
    this.i = j + 1;
    const value = resolveSubstitution(body, this.env);
    if (value !== null) {
      w.text += value;
      return;
    }
    w.dynamic = true;
    w.text += '$(…)';
  }

  private dollar(w: Word, inQuotes: boolean): void {
    const s = this.s;
    const next = s[this.i + 1];
    if (next === '(' && s[this.i + 2] === '(') {
      // Arithmetic: $(( ... )); its value is a number we do not compute.
      const end = s.indexOf('))', this.i + 3);
      this.i = end < 0 ? s.length : end + 2;
      w.text += '0';
      w.dynamic = true;
      return;
    }
    if (next === '(') {
      const end = matchParen(s, this.i + 2);
      if (end < 0) {
        this.errors.push('unclosed $(');
        w.subs.push(s.slice(this.i + 2));
        this.i = s.length;
      } else {
        const body = s.slice(this.i + 2, end);
        w.subs.push(body);
        this.i = end + 1;
        const value = resolveSubstitution(body, this.env);
        if (value !== null) {
          w.text += value;
          if (!inQuotes && /[*?[]/.test(value)) w.glob = true;
          if (!inQuotes && /\s/.test(value)) w.split = true;
          return;
        }
      }
      w.text += '$(…)';
      w.dynamic = true;
      return;
    }
    if (next === "'" && !inQuotes) {
      // ANSI-C quoting.
      let j = this.i + 2;
      while (j < s.length && s[j] !== "'") {
        if (s[j] === '\\') {
          const e = s[j + 1];
          const hex = /^x([0-9a-fA-F]{1,2})/.exec(s.slice(j + 1, j + 4));
          const oct = /^([0-7]{1,3})/.exec(s.slice(j + 1, j + 4));
          if (hex) {
            w.text += String.fromCharCode(parseInt(hex[1], 16));
            j += 1 + hex[0].length;
          } else if (oct) {
            w.text += String.fromCharCode(parseInt(oct[1], 8));
            j += 1 + oct[0].length;
          } else {
            w.text += ({ n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b' } as Record<string, string>)[e] ?? e;
            j += 2;
          }
        } else w.text += s[j++];
      }
      w.quoted = true;
      this.i = j + 1;
      return;
    }
    if (next === '"' && !inQuotes) {
      this.i++; // $"..." (locale quoting) reads as "..."
      return;
    }
    if (next === '{') {
      // The closing brace, past any $( … ) or ${ … } inside (${X:-$(cmd)}).
      let end = -1;
      for (let j = this.i + 2, d = 0; j < s.length; j++) {
        if (s[j] === '$' && s[j + 1] === '(') {
          const close = matchParen(s, j + 2);
          if (close < 0) break;
          j = close;
        } else if (s[j] === '{') d++;
        else if (s[j] === '}') {
          if (d === 0) {
            end = j;
            break;
          }
          d--;
        }
      }
      const inner = s.slice(this.i + 2, end < 0 ? s.length : end);
      this.i = end < 0 ? s.length : end + 1;
      // Substitutions inside ${…} (a default, an alternative) run when it is expanded: their commands count.
      for (let j = inner.indexOf('$('); j >= 0; j = inner.indexOf('$(', j + 2)) {
        const close = matchParen(inner, j + 2);
        if (close < 0) break;
        w.subs.push(inner.slice(j + 2, close));
        j = close;
      }
      // ${ARR[@]}, ${ARR[*]}, ${ARR[n]}: every value of the array is checked.
      const arr = /^([A-Za-z_]\w*)\[[^\]]*\]$/.exec(inner);
      // ${!X}: the variable whose name X holds.
      const indirect = /^!([A-Za-z_]\w*)$/.exec(inner);
      const via = indirect ? expandVar(indirect[1], this.env) : null;
      const known = via && !via.dynamic && /^[A-Za-z_]\w*$/.test(via.text) ? expandVar(via.text, this.env) : /^[A-Za-z_]\w*$/.test(inner) ? expandVar(inner, this.env) : arr ? expandVar(arr[1], this.env) : null;
      // ${TMPDIR:-$HOME}: TMPDIR is only assumed to be a temporary directory (often unset): its default is what may run.
      const assumed = /^(TMPDIR|TMP|TEMP|RUNNER_TEMP):?[-=]/.test(inner) && !this.env.vars?.has(inner.replace(/:?[-=].*$/, ''));
      // ${X:-default}, ${X-default}, ${X:=default}: the value, or the default when X is not known here.
      // (${1:-x} too: on a command line the positional parameters are empty unless set -- set them.)
      const withDefault = known === null || assumed ? /^([A-Za-z_]\w*|\d+):?[-=](.*)$/.exec(inner) : null;
      // ${X%pat}, ${X%%pat}, ${X#pat}, ${X##pat}, ${X:off:len}, ${X:?msg}: computed from a known X.
      const op = known === null && !withDefault ? /^([A-Za-z_]\w*)(%%|%|##|#|:\?|:(?=\d)|\/\/|\/)(.*)$/.exec(inner) : null;
      const opBase = op ? expandVar(op[1], this.env) : null;
      // ${HOME%"${HOME##*/}"}: a pattern made of known expansions is known too.
      const opArg = op && /[$`]/.test(op[3]) ? (/`|\$\(/.test(op[3]) ? null : parseShell(`: ${op[3]}`, this.env, 50).commands[0]?.words[1]) : null;
      const pat = op ? (opArg === null ? op[3] : opArg && !opArg.dynamic ? opArg.text : null) : null;
      if (known !== null && !assumed) appendValue(w, known, inQuotes);
      else if (op && opBase && !opBase.dynamic && pat !== null) {
        appendValue(w, { text: paramOp(opBase.text, op[2], pat), dynamic: false, subs: [] }, inQuotes);
      } else if (withDefault && /`|\$\(/.test(withDefault[2])) {
        w.text += '${' + inner + '}';
        w.dynamic = true;
      } else if (withDefault) {
        // ${XDG_CONFIG_HOME:-$HOME/.config}: a default built from known variables is known too.
        const v = assumed ? null : expandVar(withDefault[1], this.env);
        let unknown = false;
        const dflt = withDefault[2]
          .replace(/^~(?=\/|$)/, this.env.home)
          .replace(/\$\{?([A-Za-z_]\w*)\}?/g, (m, n: string) => {
            const x = expandVar(n, this.env);
            if (x === null || x.dynamic) unknown = true;
            return x?.text ?? m;
          });
        appendValue(w, v ?? { text: dflt, dynamic: unknown, subs: [] }, inQuotes);
        // ${X:=default} also assigns it.
        if (!v && /^[A-Za-z_]\w*:?=/.test(inner)) this.vars().set(withDefault[1], { text: dflt, dynamic: unknown, subs: [] });
      } else {
        w.text += '${' + inner + '}';
        w.dynamic = true;
      }
      return;
    }
    const m = /^([A-Za-z_]\w*|[0-9#?@*$!-])/.exec(s.slice(this.i + 1));
    if (!m) {
      w.text += '$';
      this.i++;
      return;
    }
    this.i += 1 + m[1].length;
    const known = expandVar(m[1], this.env);
    // IFS=, set on the line: an unquoted expansion splits on its characters (s="rm,-rf,~"; IFS=,; $s).
    const ifs = inQuotes ? null : this.env.vars?.get('IFS')?.text ?? null;
    if (known !== null && ifs && /\S/.test(ifs) && [...ifs].some((ch) => known.text.includes(ch))) {
      appendValue(w, { ...known, text: known.text.split(new RegExp(`[${ifs.replace(/[\]\\^-]/g, '\\$&')}]`)).join(' ') }, false);
    } else if (known !== null) appendValue(w, known, inQuotes);
    else {
      w.text += '$' + m[1];
      w.dynamic = true;
    }
  }
}

/**
 * A word written back as shell text for the analysis to read again: as it is when the shell would take it
 * unchanged (`~` left bare, so it still expands), else single-quoted.
 */
export function shellWord(v: string): string {
  return /^[\w@%+=:,./~-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

/** Parses a command line. Never throws; `errors` says what was malformed. */
export function parseShell(script: string, env: ParseEnv, depth = 0): ParsedScript {
  const lexer = new Lexer(script, env);
  const out: ParsedScript = { commands: [], forkBombs: [], functions: [], errors: lexer.errors };
  lexer.run();
  const tokens = lexer.tokens;

  // Union-find over pipelines.
  let nextPipeline = 0;
  const parent: number[] = [];
  const find = (x: number): number => (parent[x] === x ? x : (parent[x] = find(parent[x])));
  const union = (a: number, b: number) => {
    parent[find(a)] = find(b);
  };

  let cur: SimpleCommand | null = null;
  /** Open groups: the commands each holds, and what pipes into it. */
  const groupStack: { members: number[]; pipeFrom: number[] | null }[] = [];
  let lastUnit: number[] = []; // commands of the last complete command or group
  let pipeFrom: number[] | null = null;
  const fnStack: { name: string; start: number; depth: number }[] = [];
  let braceDepth = 0;
  let heredocIndex = 0;

  const startCommand = (): SimpleCommand => {
    const id = nextPipeline++;
    parent[id] = id;
    const cmd: SimpleCommand = { words: [], redirects: [], pipeline: id, stage: 0, depth };
    out.commands.push(cmd);
    const idx = out.commands.length - 1;
    const sources = [...(pipeFrom ?? [])];
    for (const g of groupStack) {
      g.members.push(idx);
      if (g.pipeFrom) sources.push(...g.pipeFrom);
    }
    for (const from of sources) union(out.commands[from].pipeline, id);
    pipeFrom = null;
    return cmd;
  };

  const endCommand = () => {
    if (cur) lastUnit = [out.commands.indexOf(cur)];
    cur = null;
  };

  /** Inside `case … in`: a pattern (`a|b)`, `(x)`) comes before each branch's commands. */
  let casePatternNext = 0;
  /** Where each open while/until/for/if began (its commands feed a pipe after done/fi). */
  const compoundStarts: { from: number; loop: boolean }[] = [];
  let caseBodies = 0;
  for (let k = 0; k < tokens.length; k++) {
    const tok = tokens[k];
    if (casePatternNext > 0 && !cur) {
      // Skip a pattern up to its `)`; `esac` ends the case.
      if (tok.t === 'word' && !tok.w.quoted && tok.w.text === 'esac') {
        casePatternNext--;
        continue;
      }
      if (tok.t === 'op' && (tok.op === '\n' || tok.op === ';' || tok.op === ';;')) continue;
      let j = k;
      while (j < tokens.length && !(tokens[j].t === 'op' && (tokens[j] as { op: string }).op === ')')) j++;
      if (j < tokens.length) {
        k = j;
        casePatternNext--;
        caseBodies++;
        continue;
      }
    }
    if (caseBodies > 0 && tok.t === 'op' && tok.op === ';;') {
      endCommand();
      caseBodies--;
      casePatternNext++;
      continue;
    }
    if (caseBodies > 0 && tok.t === 'word' && !tok.w.quoted && tok.w.text === 'esac' && !cur) {
      caseBodies--;
      continue;
    }
    if (tok.t === 'word') {
      // Function definition: name ( ) { ... }
      const n1 = tokens[k + 1];
      const n2 = tokens[k + 2];
      if (!cur && n1?.t === 'op' && n1.op === '(' && n2?.t === 'op' && n2.op === ')') {
        fnStack.push({ name: tok.w.text, start: out.commands.length, depth: braceDepth });
        k += 2;
        continue;
      }
      if (!cur && (tok.w.text === 'function') && !tok.w.quoted && tokens[k + 1]?.t === 'word') {
        const name = (tokens[k + 1] as { w: Word }).w.text;
        fnStack.push({ name, start: out.commands.length, depth: braceDepth });
        k += 1;
        if (tokens[k + 1]?.t === 'op' && (tokens[k + 1] as { op: string }).op === '(') k += 2;
        continue;
      }
      if (!cur && !tok.w.quoted && (tok.w.text === '{' || tok.w.text === '}')) {
        // A brace group pipes like a subshell: { curl x; } | sh.
        if (tok.w.text === '{') {
          braceDepth++;
          groupStack.push({ members: [], pipeFrom });
          pipeFrom = null;
        } else {
          lastUnit = groupStack.pop()?.members ?? [];
          braceDepth--;
          const fn = fnStack[fnStack.length - 1];
          if (fn && fn.depth === braceDepth) {
            fnStack.pop();
            checkForkBomb(out, fn.name, fn.start);
            out.functions.push({ name: fn.name, start: fn.start, end: out.commands.length });
          }
        }
        continue;
      }
      // A compound command piped on (while …; done | curl, if …; fi | sh): every command inside it feeds the pipe.
      if (!cur && !tok.w.quoted && /^(while|until|if)$/.test(tok.w.text)) compoundStarts.push({ from: out.commands.length, loop: tok.w.text !== 'if' });
      if (!cur && !tok.w.quoted && /^(done|fi)$/.test(tok.w.text) && compoundStarts.length > 0) {
        const { from, loop } = compoundStarts.pop()!;
        if (loop) for (const c of out.commands.slice(from)) c.repeats = true;
        lastUnit = out.commands.slice(from).filter((c) => c.depth === depth).map((c) => out.commands.indexOf(c));
        continue;
      }
      if (!cur && !tok.w.quoted && SKIP_KEYWORDS.has(tok.w.text)) continue;
      if (!cur && !tok.w.quoted && tok.w.text === 'case') {
        // case WORD in: the patterns and branches follow.
        k += tokens[k + 2]?.t === 'word' ? 2 : 1;
        casePatternNext++;
        continue;
      }
      if (!cur && !tok.w.quoted && (tok.w.text === 'for' || tok.w.text === 'select')) {
        compoundStarts.push({ from: out.commands.length, loop: true });
        // Skip the header up to the list (for x in a b c; do ...): its words are not a command.
        while (k + 1 < tokens.length && !(tokens[k + 1].t === 'op' && [';', '\n'].includes((tokens[k + 1] as { op: string }).op))) k++;
        continue;
      }
      if (!cur) cur = startCommand();
      cur.words.push(tok.w);
      for (const body of tok.w.subs) addNested(out, body, env, depth + 1);
      continue;
    }
    if (tok.t === 'redir') {
      // { a; b; } > f, (a; b) > f: the redirection applies to every command of the group.
      const prev = tokens[k - 1];
      const members = !cur && lastUnit.length > 0 && prev !== undefined && ((prev.t === 'op' && (prev as { op: string }).op === ')') || (prev.t === 'word' && !prev.w.quoted && prev.w.text === '}')) ? lastUnit : null;
      if (!cur && !members) cur = startCommand();
      const targetTok = tokens[k + 1];
      const target: Word = targetTok?.t === 'word' ? targetTok.w : { text: '', dynamic: false, glob: false, subs: [], quoted: false };
      if (targetTok?.t === 'word') k++;
      const r: Redirect = { op: tok.op, fd: tok.fd, target };
      if (tok.op === '<<' || tok.op === '<<-') {
        const quoted = lexer.heredocQuoted[heredocIndex];
        r.body = lexer.heredocBodies[heredocIndex++];
        // An unquoted here-document runs the $( … ) and ` … ` in its body while it is expanded.
        if (!quoted && r.body) {
          for (let j = r.body.indexOf('$('); j >= 0; j = r.body.indexOf('$(', j + 2)) {
            const close = matchParen(r.body, j + 2);
            if (close < 0) break;
            addNested(out, r.body.slice(j + 2, close), env, depth + 1);
            j = close;
          }
          for (const m of r.body.matchAll(/`([^`]*)`/g)) addNested(out, m[1], env, depth + 1);
        }
      }
      if (tok.op === '<<<') r.body = target.text;
      if (members) for (const i of members) out.commands[i].redirects.push(r);
      else cur!.redirects.push(r);
      for (const body of target.subs) addNested(out, body, env, depth + 1);
      continue;
    }
    // Operators.
    switch (tok.op) {
      case '(':
        endCommand();
        groupStack.push({ members: [], pipeFrom });
        pipeFrom = null;
        break;
      case ')': {
        endCommand();
        lastUnit = groupStack.pop()?.members ?? [];
        break;
      }
      case '|':
      case '|&': {
        const from = cur ? [out.commands.indexOf(cur)] : lastUnit;
        endCommand();
        pipeFrom = from;
        break;
      }
      default:
        if (cur) cur.after = tok.op;
        endCommand();
        pipeFrom = null;
        lastUnit = [];
    }
  }
  // Normalise pipeline ids to the union-find roots and number the stages.
  const stageCount = new Map<number, number>();
  for (const c of out.commands) {
    if (c.depth !== depth) continue;
    c.pipeline = find(c.pipeline);
    const n = stageCount.get(c.pipeline) ?? 0;
    c.stage = n;
    stageCount.set(c.pipeline, n + 1);
  }
  return out;
}

/** Keywords that may precede a command without being one. */
const SKIP_KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', 'esac', '!', 'time', 'coproc', '[[', ']]']);

function addNested(out: ParsedScript, body: string, env: ParseEnv, depth: number): void {
  const nested = parseShell(body, env, depth);
  // Give nested pipelines ids that cannot collide with the outer ones.
  const offset = 1_000_000 * depth + out.commands.length * 1000;
  for (const c of nested.commands) {
    c.pipeline += offset;
    out.commands.push(c);
  }
  out.forkBombs.push(...nested.forkBombs);
  out.errors.push(...nested.errors);
}

function checkForkBomb(out: ParsedScript, name: string, start: number): void {
  const body = out.commands.slice(start);
  const calls = body.filter((c) => c.words[0]?.text === name);
  if (calls.length === 0) return;
  // Recursion through a pipe (two copies at once) or into the background multiplies processes.
  const piped = calls.some((c) => calls.some((d) => d !== c && d.pipeline === c.pipeline));
  if (piped || calls.length >= 2) out.forkBombs.push(name);
}

/**
 * The output of a command substitution, when it can be known without running anything: `pwd`,
 * `echo`/`printf` of static text, `git rev-parse --show-toplevel` (the project), `dirname`,
 * `realpath`/`readlink -f`, `cd X && pwd`, `mktemp` (a fresh path under /tmp), `ls -d`, an
 * unfiltered `find ROOT` (ROOT itself is listed), and the cache directories that package tools
 * print. Null when unknown: callers then treat the word as dynamic.
 */
export function resolveSubstitution(body: string, env: ParseEnv): string | null {
  // $(cat <<'EOF' … EOF): the here-document's text.
  const doc = /^\s*cat\s*<<(-?)\s*(['"]?)(\w+)\2\s*\n([\s\S]*?)\n\t*\3\s*$/.exec(body);
  if (doc && doc[4].length <= 4000) return doc[2] ? doc[4] : doc[4].replace(/\$\{?HOME\}?/g, env.home);
  // getent passwd "$USER" | cut -d: -f6 (or awk -F: '{print $6}'): the user's home directory.
  if (/^\s*getent\s+passwd\s+("?\$(\{?USER\}?|\{?LOGNAME\}?|\(id -un\)|\(whoami\))"?)\s*\|\s*(cut\s+-d\s*:?\s*-f\s*6|cut\s+-d:\s+-f6|awk\s+-F:?\s*'\{\s*print\s+\$6\s*\}')\s*$/.test(body)) return env.home;
  // security login-keychain | tr -d '" ' (or | xargs): the keychain file, its quotes taken off.
  if (/^\s*security\s+(default|login)-keychain\s*(\|\s*(tr\s+-d\s+('[^']*'|"[^"]*"|\S+)|xargs)\s*)?$/.test(body)) return `${env.home}/Library/Keychains/login.keychain-db`;
  // getent passwd "$USER" alone: the user's passwd line, the home directory its sixth field (IFS=: read … h … <<< "$(…)").
  if (/^\s*getent\s+passwd\s+("?\$(\{?USER\}?|\{?LOGNAME\}?|\(id -un\)|\(whoami\))"?)\s*$/.test(body)) {
    const user = env.home.split('/').pop() || 'user';
    return `${user}:x:1000:1000:${user}:${env.home}:/bin/bash`;
  }
  if (body.length > 400 || resolving >= 2 || /[|<>`]/.test(body.replace(/2>\s*\/dev\/null/g, ''))) return null;
  // Nested substitutions resolve inside out; bounding the depth keeps a deeply nested line linear.
  resolving++;
  try {
    return resolveParsed(body, env);
  } finally {
    resolving--;
  }
}

let resolving = 0;

function resolveParsed(body: string, env: ParseEnv): string | null {
  const parsed = parseShell(body, { ...env, vars: env.vars }, 50);
  const cmds = parsed.commands.filter((c) => c.depth === 50);
  if (parsed.errors.length > 0 || cmds.length === 0 || cmds.length > 2) return null;
  let cwd = env.cwd;
  if (cmds.length === 2) {
    const [cd] = cmds;
    const to = cd.words.slice(1).find((x) => !/^-[LPe@]*-?$/.test(x.text));
    if (cd.words[0]?.text !== 'cd' || !to || to.dynamic) return null;
    cwd = posixResolve(cwd, to.text.replace(/^~(?=\/|$)/, env.home));
  }
  const words = cmds[cmds.length - 1].words;
  // $(cat <<'EOF' … EOF), $(cat <<< TEXT): the text itself.
  const fed = cmds[cmds.length - 1].redirects.find((r) => r.body !== undefined);
  if (words.length === 1 && words[0].text === 'cat' && fed) return fed.body!.replace(/\n$/, '');
  if (words.length === 0 || words.some((w) => w.dynamic)) return null;
  const argv = words.map((w) => w.text);
  const args = argv.slice(1);
  const operands = args.filter((a) => !a.startsWith('-'));
  switch (argv[0]) {
    case 'pwd':
      return cwd;
    case 'which':
    case 'type':
      return operands.length === 1 ? `/usr/bin/${operands[0]}` : null;
    case 'command':
      return args[0] === '-v' && operands.length === 1 ? `/usr/bin/${operands[0]}` : null;
    case 'echo':
      return args.filter((a, k) => !(k === 0 && /^-[neE]+$/.test(a))).join(' ');
    case 'printf': {
      if (args.length === 0) return null;
      return printfFormat(args[0], args.slice(1)).replace(/\n+$/, '');
    }
    case 'git': {
      // git submodule foreach 'echo $toplevel': what the command prints, $toplevel being the superproject.
      const fe = args[0] === 'submodule' ? args.indexOf('foreach') : -1;
      if (fe > 0 && env.project) return resolveSubstitution(args.slice(fe + 1).filter((a) => !/^--(quiet|recursive)$/.test(a)).join(' ').replace(/\$\{?toplevel\}?/g, env.project), env);
      if (args.includes('rev-parse') && args.includes('--show-toplevel')) return env.project ?? cwd;
      // --show-cdup: the way up to the top ('' there); --git-dir: .git of the top.
      if (args.includes('rev-parse') && args.includes('--show-cdup') && env.project) {
        // git prints the way up with a trailing slash (../), nothing at the top.
        const up = posixRelative(cwd, env.project);
        return up === '.' ? '' : `${up}/`;
      }
      if (args.includes('rev-parse') && /^--((absolute-)?git-dir|git-common-dir)$/.test(args[args.length - 1] ?? '') && env.project) return `${env.project}/.git`;
      // --git-path rebase-merge: that file or directory inside .git.
      if (args.includes('rev-parse') && args[args.length - 2] === '--git-path' && env.project) return `${env.project}/.git/${args[args.length - 1].replace(/^\/+/, '')}`;
      return null;
    }
    // The workspace root of other version-control systems: it holds the project (hg root, jj root, sl root,
    // svn info --show-item wc-root, p4 -F %clientRoot% -ztag info).
    case 'hg':
    case 'jj':
    case 'sl':
      return args[0] === 'root' && args.length === 1 ? env.project ?? cwd : null;
    case 'svn':
      return args[0] === 'info' && args.includes('wc-root') ? env.project ?? cwd : null;
    case 'p4':
      return args.some((a) => /%(clientRoot|Root)%/.test(a)) && operands.some((o) => /^(info|client|workspace)$/.test(o)) ? env.project ?? cwd : null;
    case 'dirname':
      return operands.length === 1 ? posixDirname(operands[0]) : null;
    case 'basename':
      return operands.length === 1 ? operands[0].replace(/(.)\/+$/, '$1').split('/').pop() || '/' : null;
    case 'realpath':
    case 'readlink':
      if (argv[0] === 'readlink' && !args.some((a) => /^-[a-zA-Z]*[fem]/.test(a))) return null;
      return operands.length === 1 ? posixResolve(cwd, operands[0]) : operands.length === 0 && argv[0] === 'realpath' ? null : null;
    case 'wslpath':
    case 'cygpath':
      // The same place in the other spelling (C:\\Users\\x, /mnt/c/Users/x): the validator reads both as /mnt/c/Users/x.
      return operands.length === 1 ? posixResolve(cwd, windowsDrivePath(operands[0]) ?? operands[0]) : null;
    case 'mktemp':
      return '/tmp/tmp.XXXXXXXXXX';
    // brew --cache (no formula): Homebrew's download cache.
    case 'brew':
      return args.length === 1 && args[0] === '--cache' ? `${env.home}/Library/Caches/Homebrew` : null;
    // The package managers' answers about the project and the home: npm prefix and pnpm root -w (the workspace),
    // npm config get userconfig (~/.npmrc, its tokens), pnpm store path (a cache).
    case 'npm':
    case 'pnpm':
    case 'yarn': {
      const global = args.some((a) => a === '-g' || a === '--global');
      if (operands[0] === 'prefix' && !global) return env.project ?? cwd;
      if (operands[0] === 'root' && !global) return `${env.project ?? cwd}/node_modules`;
      // pnpm ls -r --depth -1 --parseable, npm ls --parseable: the workspace's (or project's) directory first, then the packages'.
      if (/^(ls|list)$/.test(operands[0] ?? '') && args.includes('--parseable') && !global) return env.project ?? cwd;
      if (operands[0] === 'store' && operands[1] === 'path') return `${env.home}/.local/share/pnpm/store`;
      if (operands[0] === 'config' && operands[1] === 'get' && operands[2] === 'userconfig') return `${env.home}/.npmrc`;
      if (operands[0] === 'config' && operands[1] === 'get' && operands[2] === 'cache') return `${env.home}/.npm`;
      // (yarn cache dir: the grouped case above shadows the lone yarn case below.)
      if (argv[0] === 'yarn' && operands[0] === 'cache' && operands[1] === 'dir') return `${env.home}/.cache/yarn`;
      return null;
    }
    // xdg-user-dir PICTURES: the user's folder of that kind (the English defaults of user-dirs.dirs).
    case 'xdg-user-dir': {
      const dirs: Record<string, string> = { DESKTOP: 'Desktop', DOCUMENTS: 'Documents', DOWNLOAD: 'Downloads', MUSIC: 'Music', PICTURES: 'Pictures', VIDEOS: 'Videos', PUBLICSHARE: 'Public', TEMPLATES: 'Templates' };
      return args.length === 1 && dirs[args[0]] ? `${env.home}/${dirs[args[0]]}` : args.length === 0 ? env.home : null;
    }
    // cypress cache path: the downloaded Cypress binaries.
    case 'cypress':
      return operands[0] === 'cache' && operands[1] === 'path' && operands.length === 2 ? `${env.home}/.cache/Cypress` : null;
    // node -p "require('os').homedir()", python3 -c "import os; print(os.path.expanduser('~'))": the home directory printed.
    case 'node':
    case 'python':
    case 'python3':
      return args.length === 2 && /^-[pe]$|^-c$/.test(args[0]) && /^(console\.log\(|print\()?\s*(require\(\s*['"](node:)?os['"]\s*\)\.homedir\(\)|os\.homedir\(\)|(?:import os;\s*print\()?os\.path\.expanduser\(\s*['"]~['"]\s*\)|process\.env\.HOME)\s*\)?\)?$/.test(args[1].replace(/^import os;\s*/, '')) ? env.home : null;
    case 'ls':
      return args.includes('-d') && operands.length > 0 ? operands.join(' ') : null;
    case 'find': {
      const roots: string[] = [];
      for (const a of args) {
        if (/^[-(!]/.test(a)) break;
        roots.push(a);
      }
      const filtered = args.some((a) => /^-(i?name|i?path|i?regex|i?wholename|newer\w*|[amc](time|min)|size|empty|user|group|perm|prune)$/.test(a));
      const list = roots.length > 0 ? roots : ['.'];
      return filtered ? list.map((r) => `${r.replace(/\/$/, '')}/found`).join(' ') : list.join(' ');
    }
    case 'go':
      if (args[0] === 'env' && args[1] === 'GOCACHE') return `${env.home}/.cache/go-build`;
      if (args[0] === 'env' && args[1] === 'GOMODCACHE') return `${env.home}/go/pkg/mod`;
      return null;
    case 'npm':
      if (args[0] === 'root' && !args.some((a) => a === '-g' || a === '--global')) return `${env.project ?? cwd}/node_modules`;
      return args[0] === 'config' && args[1] === 'get' && args[2] === 'cache' ? `${env.home}/.npm` : null;
    // The project's virtual environment, wherever the tool keeps it.
    case 'poetry':
      return args[0] === 'env' && args[1] === 'info' && args.some((a) => a === '-p' || a === '--path') ? `${env.home}/.cache/pypoetry/virtualenvs/project-py3` : null;
    case 'pipenv':
      return args[0] === '--venv' ? `${env.home}/.local/share/virtualenvs/project` : null;
    case 'yarn':
      return args[0] === 'cache' && args[1] === 'dir' ? `${env.home}/.cache/yarn` : null;
    case 'pip':
    case 'pip3':
      return args[0] === 'cache' && args[1] === 'dir' ? `${env.home}/.cache/pip` : null;
    // brew --cache: Homebrew's download cache; security login-keychain: the user's keychain file (printed quoted).
    case 'brew':
      return args.length === 1 && args[0] === '--cache' ? `${env.home}/Library/Caches/Homebrew` : null;
    case 'security':
      return /^(default|login)-keychain$/.test(args[0] ?? '') && args.length === 1 ? `${env.home}/Library/Keychains/login.keychain-db` : null;
    default:
      return null;
  }
}

/** printf FORMAT ARGS... for %s, %d, %b and %%, the format reused while arguments remain (as printf does). */
export function printfFormat(format: string, args: string[]): string {
  let out = '';
  let k = 0;
  do {
    // %q prints the argument shell-quoted: for the plain paths that matter here, the argument itself.
    out += unescapePrintf(format).replace(/%(-?\d*)([sdbq%])/g, (_m, _w, c: string) => (c === '%' ? '%' : c === 'b' ? unescapePrintf(args[k++] ?? '') : args[k++] ?? ''));
  } while (k < args.length && /%-?\d*[sdbq]/.test(format));
  return out;
}

/** printf's format escapes (\n, \t, \\, octal \0NNN) for a format with no conversions. */
export function unescapePrintf(f: string): string {
  return f.replace(/\\(x[0-9a-fA-F]{1,2}|0[0-7]{0,3}|[0-7]{1,3}|.)/g, (_, e: string) => {
    if (/^x[0-9a-fA-F]/.test(e)) return String.fromCharCode(parseInt(e.slice(1), 16)); // \xHH
    if (/^[0-7]+$/.test(e)) return String.fromCharCode(parseInt(e, 8));
    return ({ n: '\n', t: '\t', r: '\r', '\\': '\\' } as Record<string, string>)[e] ?? e;
  });
}

function posixRelative(from: string, to: string): string {
  const a = from.split('/').filter(Boolean);
  const b = to.split('/').filter(Boolean);
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return [...a.slice(i).map(() => '..'), ...b.slice(i)].join('/') || '.';
}

function posixDirname(p: string): string {
  const t = p.replace(/\/+$/, '');
  if (t === '') return '/';
  const k = t.lastIndexOf('/');
  return k < 0 ? '.' : k === 0 ? '/' : t.slice(0, k);
}

function posixResolve(cwd: string, p: string): string {
  const parts = (p.startsWith('/') ? p : `${cwd}/${p}`).split('/');
  const out: string[] = [];
  for (const x of parts) {
    if (x === '' || x === '.') continue;
    if (x === '..') out.pop();
    else out.push(x);
  }
  return '/' + out.join('/');
}
