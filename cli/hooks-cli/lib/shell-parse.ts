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
}

export interface ParsedScript {
  commands: SimpleCommand[];
  /** Names of functions defined that call themselves through a pipe or in the background (fork bombs). */
  forkBombs: string[];
  /** Problems met (an unclosed quote): the line would not run as written. */
  errors: string[];
}

export interface ParseEnv {
  home: string;
  cwd: string;
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
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') i += 2;
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

function expandVar(name: string, env: ParseEnv): string | null {
  if (name === 'HOME') return env.home;
  if (name === 'PWD') return env.cwd;
  return null;
}

class Lexer {
  private i = 0;
  readonly tokens: Token[] = [];
  readonly errors: string[] = [];
  private pendingHeredocs: Redirect[] = [];

  constructor(
    private readonly s: string,
    private readonly env: ParseEnv,
  ) {}

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
          this.tokens.push({ t: 'word', w: this.word() });
          continue;
        }
        this.i = opStart + op.length;
        if (REDIR_OPS.has(op)) this.tokens.push({ t: 'redir', op, fd: fdMatch ? Number(fdMatch[1]) : null });
        else {
          this.tokens.push({ t: 'op', op });
          if (op === '\n') this.readHeredocBodies();
        }
        continue;
      }
      this.tokens.push({ t: 'word', w: this.word() });
    }
    return this.tokens;
  }

  /** Registers a here-document whose body follows the next newline. */
  heredoc(r: Redirect): void {
    this.pendingHeredocs.push(r);
  }

  private readHeredocBodies(): void {
    for (const r of this.pendingHeredocs) {
      const delim = r.target.text;
      const lines: string[] = [];
      while (this.i < this.s.length) {
        let end = this.s.indexOf('\n', this.i);
        if (end < 0) end = this.s.length;
        const line = this.s.slice(this.i, end);
        this.i = end + 1;
        if ((r.op === '<<-' ? line.replace(/^\t+/, '') : line) === delim) break;
        lines.push(line);
      }
      r.body = lines.join('\n');
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
      if (c === '\\') {
        w.text += s[this.i + 1] ?? '';
        w.quoted = true;
        this.i += 2;
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
      } else if (c === '~' && this.i === start && (this.i + 1 >= s.length || s[this.i + 1] === '/' || META.has(s[this.i + 1]))) {
        w.text += this.env.home;
        this.i++;
      } else {
        if (c === '*' || c === '?' || c === '[') w.glob = true;
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
    w.dynamic = true;
    w.text += '$(…)';
    this.i = j + 1;
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
        w.subs.push(s.slice(this.i + 2, end));
        this.i = end + 1;
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
      const end = s.indexOf('}', this.i + 2);
      const inner = s.slice(this.i + 2, end < 0 ? s.length : end);
      this.i = end < 0 ? s.length : end + 1;
      const known = /^[A-Za-z_]\w*$/.test(inner) ? expandVar(inner, this.env) : null;
      if (known !== null) w.text += known;
      else {
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
    if (known !== null) w.text += known;
    else {
      w.text += '$' + m[1];
      w.dynamic = true;
    }
  }
}

/** Parses a command line. Never throws; `errors` says what was malformed. */
export function parseShell(script: string, env: ParseEnv, depth = 0): ParsedScript {
  const lexer = new Lexer(script, env);
  const out: ParsedScript = { commands: [], forkBombs: [], errors: lexer.errors };
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

  for (let k = 0; k < tokens.length; k++) {
    const tok = tokens[k];
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
          }
        }
        continue;
      }
      if (!cur && !tok.w.quoted && SKIP_KEYWORDS.has(tok.w.text)) continue;
      if (!cur && !tok.w.quoted && (tok.w.text === 'for' || tok.w.text === 'select' || tok.w.text === 'case')) {
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
      if (!cur) cur = startCommand();
      const targetTok = tokens[k + 1];
      const target: Word = targetTok?.t === 'word' ? targetTok.w : { text: '', dynamic: false, glob: false, subs: [], quoted: false };
      if (targetTok?.t === 'word') k++;
      const r: Redirect = { op: tok.op, fd: tok.fd, target };
      if (tok.op === '<<' || tok.op === '<<-') lexer.heredoc(r);
      if (tok.op === '<<<') r.body = target.text;
      cur.redirects.push(r);
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
