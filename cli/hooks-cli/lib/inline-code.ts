/**
 * Code passed inline to an interpreter (`python -c`, `python3 - <<EOF`, `perl -e`, `ruby -e`,
 * `node -e`, `php -r`, `lua -e`, `awk '…'`): what it would do that the validator cares about,
 * read from the text without running it. Not a parser for six languages: it finds the calls that
 * matter by name (shutil.rmtree, os.system, subprocess.*, fs.rmSync, child_process exec,
 * system(...), FileUtils.rm_rf, File::Path rmtree, backticks...), reads the string literals in
 * their arguments (lists become argv, `+`/`.` concatenations are joined), and reports:
 *
 *   shell     command lines the code runs (checked by the caller like any command line)
 *   deletes   paths it deletes, `~` for the home directory and `.` for the working directory
 *   devices   disk devices it opens for writing
 *   reverse   a socket wired to a shell
 *   exfil     a secret file it reads while it also talks to the network
 *   decoded   base64 literals, decoded (hidden code: the caller checks them as code and shell)
 *   tooLong   longer than MAX_CODE_CHARS: not read (the caller refuses it)
 *
 * Well-known spellings of the home and working directories (os.path.expanduser('~'),
 * Path.home(), os.homedir(), process.env.HOME, $ENV{HOME}, Dir.home, os.getcwd(),
 * process.cwd()...) are turned into the literals `"~"` and `"."` first, so they read as paths.
 */

import { isSecretSource } from './paths-classify';
import { placesIn } from './code-places';
import { framework } from './rule-gates';
import { gitLibraryLines } from './git-rules';
import { shellWord, windowsVar } from './shell-parse';

export type Lang = 'python' | 'perl' | 'ruby' | 'js' | 'php' | 'lua' | 'awk' | 'r';

export interface CodeFindings {
  /** The code starts copies of itself without end (fork while fork). */
  forkBomb: boolean;
  /** The code runs code it fetches (exec(urlopen(…).read()), eval(file_get_contents('https://…'))). */
  runsFetched: boolean;
  shell: string[];
  deletes: { path: string; recursive: boolean }[];
  devices: string[];
  /** Files it opens for writing or appending (start-up files, system files, keys). */
  writes: string[];
  reverse: boolean;
  exfil: string | null;
  decoded: string[];
  /** Longer than the analysis reads (MAX_CODE_CHARS): nothing in it was checked. */
  tooLong: boolean;
}

export function langOf(name: string): Lang | null {
  const n = name.replace(/[\d.]+$/, '');
  // (Python interpreters of DCC applications: Houdini's hython, Maya's mayapy, Cinema 4D's c4dpy, ParaView's pvpython and pvbatch.)
  if (n === 'python' || n === 'pypy' || n === 'ipython' || n === 'pyspark' || n === 'hython' || n === 'mayapy' || n === 'c4dpy' || n === 'pvpython' || n === 'pvbatch') return 'python';
  if (n === 'perl') return 'perl';
  if (n === 'ruby' || n === 'jruby') return 'ruby';
  if (n === 'node' || n === 'nodejs' || n === 'bun' || n === 'deno' || n === 'tsx' || n === 'ts-node' || n === 'zx') return 'js';
  if (n === 'php') return 'php';
  if (n === 'lua' || n === 'luajit') return 'lua';
  if (n === 'Rscript' || n === 'R') return 'r';
  if (n === 'awk' || n === 'gawk' || n === 'mawk' || n === 'nawk' || n === 'busybox-awk') return 'awk';
  return null;
}

/** The inline code of an interpreter invocation, or whether it reads its program from stdin. */
export function inlineCode(lang: Lang, argv: string[]): { code: string | null; readsStdin: boolean } {
  const args = argv.slice(1);
  const flags: Record<Lang, string[]> = {
    python: ['-c'],
    perl: ['-e', '-E'],
    ruby: ['-e'],
    js: ['-e', '--eval', '-p', '--print', 'eval'],
    php: ['-r'],
    lua: ['-e'],
    awk: [],
    r: ['-e', '--expr'],
  };
  if (lang === 'awk') {
    // -v cmd='rm -rf ~': variables of the program, set before it starts.
    let pre = '';
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      if (a === '-f' || a === '--file') return { code: null, readsStdin: false };
      if (a === '-v' || a === '--assign') {
        const eq = (args[i + 1] ?? '').indexOf('=');
        if (eq > 0) pre += `${args[i + 1].slice(0, eq)} = "${args[i + 1].slice(eq + 1).replace(/"/g, '\\"')}"; `;
      }
      if (a === '-F' || a === '-v' || a === '--assign' || a === '--field-separator') {
        i++;
        continue;
      }
      if (a.startsWith('-') && a !== '-') continue;
      return { code: pre + a, readsStdin: false };
    }
    return { code: null, readsStdin: false };
  }
  const codes: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (flags[lang].includes(a)) {
      codes.push(args[i + 1] ?? '');
      i++;
    } else if (lang === 'python' && /^-[A-Za-z]*c$/.test(a) && a.length > 2) {
      codes.push(args[i + 1] ?? '');
      i++;
    } else if (lang === 'js' && /^-[a-z]*[ep]$/.test(a) && a.length > 2) {
      // node -pe CODE
      codes.push(args[i + 1] ?? '');
      i++;
    } else if (/^--(eval|print)=/.test(a)) codes.push(a.slice(a.indexOf('=') + 1));
    else if (lang === 'perl' && /^-[A-Za-z]*[eE]$/.test(a) && !a.startsWith('--')) {
      codes.push(args[i + 1] ?? '');
      i++;
    }
  }
  if (codes.length > 0) return { code: codes.join('\n'), readsStdin: false };
  const operands = args.filter((a, k) => (!a.startsWith('-') || a === '-') && !/^-[mWXOQ]$/.test(args[k - 1] ?? ''));
  // deno run -A -, bun run -: the subcommand, then the script operand.
  if (lang === 'js' && /^(run|eval)$/.test(operands[0] ?? '') && /^(deno|bun)/.test(argv[0].split('/').pop() ?? '')) operands.shift();
  return { code: null, readsStdin: operands.length === 0 || operands[0] === '-' || /^\/dev\/(stdin|fd\/0)$/.test(operands[0] ?? '') };
}

/** An environment variable read by name, in the languages read here (the name is one of the groups). */
const WINDOWS_ENV_READ = /process\.env\.(\w+)|process\.env\[\s*['"](\w+)['"]\s*\]|os\.environ\s*\[\s*['"](\w+)['"]\s*\]|os\.(?:environ\.get|getenv)\(\s*['"](\w+)['"]\s*\)|\$ENV\{\s*['"]?(\w+)['"]?\s*\}|\bENV\s*\[\s*['"](\w+)['"]\s*\]|\bgetenv\(\s*['"](\w+)['"]\s*\)/g;

interface Lit {
  start: number;
  end: number;
  value: string;
}

/** String literals in order: '…', "…", python triple quotes; escapes kept simple. */
function literals(code: string, from = 0, to = code.length): Lit[] {
  const out: Lit[] = [];
  let i = from;
  while (i < to) {
    const c = code[i];
    if (c === '#' && false) break;
    if (c === "'" || c === '"' || c === '`') {
      const triple = code.startsWith(c.repeat(3), i);
      const q = triple ? c.repeat(3) : c;
      // Python's raw strings (r'C:\\Users\\x', rb'…', fr'…') keep their backslashes.
      const raw = c !== '`' && /(?:^|[^\w])(?:[rR][bBfF]?|[bBfF][rR])$/.test(code.slice(Math.max(0, i - 3), i));
      let j = i + q.length;
      let v = '';
      while (j < code.length && !code.startsWith(q, j)) {
        if (raw && code[j] === '\\' && j + 1 < code.length) {
          v += code.slice(j, j + 2);
          j += 2;
        } else if (code[j] === '\\' && j + 1 < code.length) {
          const e = code[j + 1];
          const hex = e === 'x' ? /^[0-9a-fA-F]{2}/.exec(code.slice(j + 2, j + 4)) : null;
          // "\x72\x6d" is "rm": hex escapes are the characters they stand for.
          v += hex ? String.fromCharCode(parseInt(hex[0], 16)) : (({ n: '\n', t: '\t', '0': '\0' } as Record<string, string>)[e] ?? e);
          j += hex ? 4 : 2;
        } else v += code[j++];
      }
      out.push({ start: i, end: j + q.length, value: v });
      i = j + q.length;
    } else i++;
  }
  return out;
}

/**
 * The code with its command-line arguments put in (python -c CODE A B: sys.argv[1] is A; node -e: process.argv[1];
 * ruby ARGV[0], perl $ARGV[0]/@ARGV, php $argv[1]), so the paths it is given read as literals.
 */
export function withArgs(lang: Lang, code: string, args: string[]): string {
  if (args.length === 0) return code;
  const q = (v: string) => `"${v.replace(/["\\]/g, '\\$&')}"`;
  const list = (from: number) => `[${args.slice(Math.max(0, from)).map(q).join(', ')}]`;
  const one = (n: number) => (args[n] !== undefined ? q(args[n]) : '""');
  if (lang === 'python') return code.replace(/\bsys\.argv\[\s*(\d+)\s*:\s*\]/g, (_m, n: string) => list(Number(n) - 1)).replace(/\bsys\.argv\[\s*(\d+)\s*\]/g, (_m, n: string) => one(Number(n) - 1));
  if (lang === 'js') return code.replace(/\bprocess\.argv\.slice\(\s*(\d+)\s*\)/g, (_m, n: string) => list(Number(n) - 1)).replace(/\bprocess\.argv\[\s*(\d+)\s*\]/g, (_m, n: string) => one(Number(n) - 1));
  // perl's shift and pop outside a sub take from @ARGV: rmtree shift is rmtree $ARGV[0]; ruby's ARGV.shift/.first too.
  let n = 0;
  if (lang === 'perl' && !/\bsub\b/.test(code)) code = code.replace(/(?<![$@%.\w>])(shift|pop)\b(\s*\(\s*@ARGV\s*\)|\s+@ARGV\b|\s*\(\s*\))?(?!\s*\(?\s*[@$])/g, (_m, f: string) => (f === 'pop' ? one(args.length - 1) : one(n++)));
  if (lang === 'ruby') code = code.replace(/\bARGV\.(shift|first|pop|last)\b(\(\))?/g, (_m, f: string) => (/pop|last/.test(f) ? one(args.length - 1) : one(n++)));
  if (lang === 'ruby' || lang === 'perl') return code.replace(/\$?ARGV\[\s*(\d+)\s*\]/g, (_m, n: string) => one(Number(n))).replace(/@ARGV\b|\bARGV\b(?!\s*\[)/g, list(0));
  if (lang === 'php') return code.replace(/\$argv\[\s*(\d+)\s*\]/g, (_m, n: string) => one(Number(n) - 1));
  return code;
}

/** The text interpreter code prints (print, puts, say, console.log, echo…), as lines: what a shell piped its output runs. */
export function printedText(lang: Lang, source: string): string[] {
  if (source.length > MAX_CODE_CHARS) return [];
  const code = preprocess(source, lang);
  const out: string[] = [];
  for (const m of code.matchAll(/\b(?:print|println|puts|say|echo|console\.log|process\.stdout\.write|sys\.stdout\.write|io\.write|printf|cat)(?=\s*[("'`$])/g)) {
    const region = argRegion(code, m.index + m[0].length);
    // print('rm -rf', home): the arguments printed side by side.
    const parts = splitArgs(code.slice(region[0], region[1]).replace(/^\s*\(([\s\S]*)\)\s*$/, '$1')).filter((a) => !/^\s*(sep|end|file|flush)\s*=/.test(a)).map((a) => exprValues(code, a)[0]);
    const t = parts.length > 0 && parts.every((x) => x !== undefined) ? parts.join(' ') : regionText(code, region);
    if (t) out.push(...t.split('\n'));
  }
  return out;
}

/** The value of an expression of literals and variables, when known (node -p 'EXPR'). */
export function exprText(lang: Lang, source: string): string | null {
  const code = preprocess(source, lang);
  return exprValues(code, code)[0] ?? null;
}

/** Paths interpreter code prints (`print for glob("~/*")`, `puts Dir["~/*"]`): a lister whose output may feed xargs. */
export function printedPaths(lang: Lang, source: string): string[] {
  if (source.length > MAX_CODE_CHARS) return [];
  const code = preprocess(source, lang);
  if (!/\b(print|say|puts|console\.log|echo|println|printf|writeln)\b/.test(code)) return [];
  return listingRoots(code).map((r) => (r.glob === null ? r.path : `${r.path.replace(/\/$/, '')}/${r.glob}`));
}

/** The code talks to the network (HTTP clients, sockets, mail, FTP, SSH libraries). */
export function talksToNetwork(code: string): boolean {
  return NETWORK.test(code);
}

/** The string literals of any code ('…', "…", `…`), for languages the analysis does not know. */
export function stringLiterals(code: string): string[] {
  return literals(code.length > MAX_CODE_CHARS ? code.slice(0, MAX_CODE_CHARS) : code).map((l) => l.value);
}

/** The end of a call's argument list: the `)` matching the `(` at `open`, quote-aware. */
function closeParen(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    const c = code[i];
    if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < code.length && code[j] !== c) j += code[j] === '\\' ? 2 : 1;
      i = j;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (--depth === 0) return i;
    }
  }
  return code.length;
}

/** Arguments region of the call whose name ends at `at`: `( … )`, or to the end of the statement (perl/ruby without parentheses). */
function argRegion(code: string, at: number): [number, number] {
  let i = at;
  while (i < code.length && (code[i] === ' ' || code[i] === '\t')) i++;
  if (code[i] === '(') return [i + 1, closeParen(code, i)];
  let j = i;
  while (j < code.length && code[j] !== ';' && code[j] !== '\n' && code[j] !== '}') {
    if (code[j] === "'" || code[j] === '"') {
      const q = code[j];
      j++;
      while (j < code.length && code[j] !== q) j += code[j] === '\\' ? 2 : 1;
    }
    j++;
  }
  return [i, j];
}

/** A value as one shell word: a leading ~ stays the home directory, $name in it (perl's "$ENV{HOME}/$_") stays unknown. */
function codeWord(v: string): string {
  if (/^[\w@%+=:,./~-]+$/.test(v)) return v;
  const m = /^(~\/?)?([\s\S]*)$/.exec(v)!;
  return `${m[1] ?? ''}${/\$\w/.test(m[2]) && !/["\\`]/.test(m[2]) ? `"${m[2]}"` : `'${m[2].replace(/'/g, `'\\''`)}'`}`;
}

/** The text an argument region stands for: list elements joined by spaces, concatenations joined. */
function regionText(code: string, [a, b]: [number, number], firstOnly = false): string | null {
  const lits = literals(code, a, b);
  if (lits.length === 0) return null;
  const region = code.slice(a, b);
  const firstNonSpace = region.trimStart()[0];
  const list = !firstOnly && (firstNonSpace === '[' || /^\s*(['"])[^'"]*\1\s*,\s*\[?\s*['"]/.test(region));
  if (list) {
    // Up to the end of the list: `['rm', '-rf', '/'], shell=False`.
    const end = firstNonSpace === '[' ? a + region.indexOf('[') + closeParen(region, region.indexOf('[')) - region.indexOf('[') : b;
    // exec "rm", "-rf", glob("~/*"): a pattern given to glob stands for the paths it matches, as in the shell.
    const globbed = (l: { start: number; value: string }) => /(?:\bglob|\bDir)(?:\.glob|\.sync)?\s*[([]\s*$/.test(code.slice(Math.max(a, l.start - 16), l.start)) && /^[^\s'"`$;&|<>]+$/.test(l.value);
    return lits.filter((l) => l.end <= end + 1).map((l) => (globbed(l) ? l.value : codeWord(l.value))).join(' ');
  }
  // Concatenation: keep the literals that belong to the first argument (before a top-level comma).
  let depth = 0;
  let stop = b;
  for (let i = a; i < b; i++) {
    const c = code[i];
    const inLit = lits.find((l) => i >= l.start && i < l.end);
    if (inLit) {
      i = inLit.end - 1;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      stop = i;
      break;
    }
  }
  const first = lits.filter((l) => l.end <= stop);
  return first.length === 0 ? null : first.map((l) => l.value).join('');
}

const SHELL_CALLS: Record<Lang, RegExp> = {
  python: /(?:\bcreate_subprocess_(?:shell|exec)|\bos\.(?:system|popen|exec\w*|spawn\w*)|(?:\b\w+|\))\.(?:system|popen)|\b\w+\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)|pty\.spawn|commands\.getoutput|(?<![.\w])(?:run|call|check_call|check_output|Popen|system|popen|getoutput|execvp?e?|execlp?e?))(?=\s*\()/g,
  perl: /(?<![\w$@%>.])(?:system|exec|qx)(?=\s*[("'{@$])/g,
  ruby: /(?<![\w.])(?:system|exec|spawn|IO\.popen|Open3\.\w+|Kernel\.system|Kernel\.exec|Kernel\.spawn|Process\.spawn|Process\.exec|PTY\.spawn)(?=\s*[("'])/g,
  js: /\b(?:execSync|exec|execFileSync|execFile|spawnSync|spawn|fork|Bun\.spawn\w*|execa(?:Sync|Command|CommandSync|Node)?|Deno\.Command|Deno\.run|\$)(?=\s*\()/g,
  // Laravel's Process::run / Symfony's Process::fromShellCommandline run their text through the shell.
  php: /\b(?:system|shell_exec|exec|passthru|popen|proc_open|pcntl_exec|Process::(?:run|start|pipe)|Process::fromShellCommandline)(?=\s*\()/g,
  lua: /\b(?:os\.execute|io\.popen)(?=\s*[("'])/g,
  awk: /\bsystem(?=\s*\()/g,
  // R: system("…"), system2("cmd", …), shell("…") (base R, ?system).
  r: /\b(?:system2?|shell)(?=\s*\()/g,
};

const DELETE_CALLS: Record<Lang, RegExp | null> = {
  python: /(?:\bshutil\.rmtree|(?<![.\w])rmtree|\.rmtree|os\.removedirs|send2trash)(?=\s*\()/g,
  perl: /\b(?:rmtree|remove_tree|File::Path::rmtree)(?=\s*[("'$])/g,
  ruby: /\b(?:FileUtils\.)?(?:rm_rf|rm_r|remove_dir|remove_entry|remove_entry_secure|rmtree)(?=\s*[("'])/g,
  // (fs-extra's fs.remove and fs.emptyDir, as zx exposes them, delete trees.)
  js: /(?:\brmSync|\brmdirSync|\bfs\.remove|\bfs\.emptyDir|\.rm|\.rmdir|(?<![\w.$])rm|(?<![\w.$])rmdir|\brimraf(?:\.sync|Sync|\.rimrafSync|\.native(?:Sync)?)?|\bdeleteSync|\bdeleteAsync|\bremoveSync|\bemptyDirSync|Deno\.removeSync|Deno\.remove)(?=\s*\()/g,
  // Laravel's File facade and Filesystem (framework-rules.ts reads Symfony's and WordPress's as it): a tree deleted or emptied.
  php: /\bFile::(?:deleteDirectory|cleanDirectory|deleteDirectories)(?=\s*\()/g,
  lua: null,
  awk: null,
  // R: unlink(x, recursive = TRUE) deletes a tree (base R, ?unlink); file.remove deletes files.
  r: /\b(?:unlink|file\.remove)(?=\s*\()/g,
};

const UNLINK_CALLS = /(?:\bos\.(?:remove|unlink)|\bunlinkSync|\bfs\.unlink|\bFile\.(?:delete|unlink)|\bFileUtils\.rm(?!_)|(?<![\w$>.])unlink)(?=\s*[("'])/g;
const DISK = /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|mapper\/)/;
const SECRET_FRAGMENT = /(\.ssh\/|\.aws\/|(^|\/)\.env(\.|$)|\.netrc|\.npmrc|\.git-credentials|\.kube\/config|\.docker\/config|\bid_(rsa|ed25519|ecdsa|dsa)\b|\/etc\/shadow|\.gnupg|\.pgpass|[\w-]*(key|secret)[\w-]*\.(pem|p12|p8|jks)$)/i;
const NETWORK = /(?:file_get_contents|fopen|readfile|get_headers)\s*\(\s*["']https?:|require\(\s*['"](?:node:)?(?:net|tls|dgram|http2?|dns)['"]\s*\)|\bURI\.open|\bResolv\b|\bWebSocket\b|\b(?:Deno|Bun)\.connect|\b(urllib|requests\.|http\.client|httpx|socket|https?\.(request|get)|require\(\s*['"](node:)?https?['"]\s*\)|\.request\(|fetch\s*\(|axios|Net::HTTP|LWP|HTTP::Tiny|IO::Socket|TCPSocket|open-uri|smtplib|ftplib|paramiko|aiohttp|net\.connect|fsockopen|curl_exec|dgram|serial\.Serial|SerialPort|\bhttr2?::|\bRCurl\b|\bcurl::|\bdownload\.file\s*\(\s*(?:paste0?\s*\()?\s*["']https?:|java\.net\.|HttpClient|\bHTTP\.(get|post|request)\b)/;

/**
 * Joins of string literals into one: Path("~") / ".ssh" / "id_rsa" and "~".joinpath(".ssh", "x") in
 * python, File.join("~", "**", "*") in ruby, path.join("~", ".ssh") in JS, juxtaposition ("rm -rf "
 * "~") in awk. Only literals next to each other with nothing but the joining syntax between them.
 */
function joinLiterals(code: string, lang: Lang): string {
  const lits = literals(code);
  if (lits.length < 2) return code;
  const q = (v: string) => `"${v.replace(/"/g, '\\"')}"`;
  let out = '';
  let at = 0;
  for (let i = 0; i < lits.length; i++) {
    let value = lits[i].value;
    let end = lits[i].end;
    const start = lits[i].start;
    // A call that joins its literal arguments with "/": File.join(, os.path.join(, path.join(, path.resolve(, .joinpath(.
    const before = code.slice(Math.max(at, start - 24), start);
    const joinCall = /(?:\bFile\.join|\bos\.path\.join|\bpath\.(?:join|resolve))\(\s*$/.test(before);
    let j = i + 1;
    for (; j < lits.length; j++) {
      const between = code.slice(end, lits[j].start);
      if (lang === 'python' && /^\s*\/\s*$/.test(between)) value += `/${lits[j].value}`;
      // "~" + '/.aws/credentials' (JS, python, ruby), "~" . "/.netrc" (php, perl): concatenation of two literals.
      else if ((/^(js|python|ruby|lua)$/.test(lang) && /^\s*\+\s*$/.test(between)) || (/^(php|perl)$/.test(lang) && /^\s*\.\s*$/.test(between)) || (lang === 'lua' && /^\s*\.\.\s*$/.test(between))) value += lits[j].value;
      else if (lang === 'python' && /^\s*\.\s*joinpath\(\s*$/.test(between)) value += `/${lits[j].value}`;
      else if ((joinCall || /\.joinpath\(\s*("[^"]*"\s*,\s*)*$/.test(code.slice(start - 40, start))) && /^\s*,\s*$/.test(between)) value += `/${lits[j].value}`;
      else if (lang === 'awk' && /^[ \t]+$/.test(between)) value += lits[j].value;
      else break;
      end = lits[j].end;
    }
    if (j === i + 1) continue;
    // "~".joinpath(".ssh", "x") closes with its parenthesis.
    const close = /^\s*\)/.exec(code.slice(end));
    const closesJoin = close && /joinpath\(/.test(code.slice(start, end));
    out += code.slice(at, start) + q(value);
    at = closesJoin ? end + close![0].length : end;
    i = j - 1;
  }
  return out + code.slice(at);
}

/** import shutil as s, os.path as p / from shutil import rmtree as r: the names stand for what they import. */
function resolveAliases(code: string): string {
  const subs: [RegExp, string][] = [];
  for (const m of code.matchAll(/\bimport\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)/g)) {
    for (const part of m[1].split(',')) {
      const a = /^\s*([\w.]+)\s+as\s+(\w+)\s*$/.exec(part);
      if (a) subs.push([new RegExp(`(?<![\\w.])${a[2]}\\.`, 'g'), `${a[1]}.`]);
    }
  }
  for (const m of code.matchAll(/\bfrom\s+([\w.]+)\s+import\s+([^\n;]+)/g)) {
    for (const part of m[2].replace(/[()]/g, '').split(',')) {
      const a = /^\s*(\w+)(?:\s+as\s+(\w+))?\s*$/.exec(part);
      if (a) subs.push([new RegExp(`(?<![\\w.])${a[2] ?? a[1]}(?=\\s*\\()`, 'g'), `${m[1]}.${a[1]}`]);
    }
  }
  for (const [re, to] of subs) code = code.replace(re, to);
  return code;
}

/** 'rm -rf %s' % x, 'rm -rf {}'.format(x), f-strings, ' '.join([...]): the string the code builds from literals. */
function formatStrings(code: string): string {
  const lit = `(['"])((?:(?!\\1)[^\\\\\n])*)\\1`;
  const one = `(['"])([^'"\\n]*)\\3`;
  return code
    // ("rm -rf %s"):format("~") (lua), string.format / sprintf / format("rm -rf %s", "~").
    .replace(new RegExp(`\\(?\\s*${lit}\\s*\\)?\\s*:\\s*format\\(\\s*${one}\\s*\\)`, 'g'), (_m, q: string, f: string, _q2, v: string) => `${q}${f.replace(/%[sdq]/, v)}${q}`)
    .replace(new RegExp(`\\b(?:string\\.format|sprintf|format)\\(\\s*${lit}\\s*,\\s*${one}\\s*\\)`, 'g'), (_m, q: string, f: string, _q2, v: string) => `${q}${f.replace(/%[sdq]/, v)}${q}`)
    .replace(new RegExp(`${lit}\\s*%\\s*\\(?\\s*(['"])([^'"\\n]*)\\3\\s*\\)?`, 'g'), (_m, q: string, f: string, _q2, v: string) => `${q}${f.replace(/%[sdr]/, v)}${q}`)
    .replace(new RegExp(`${lit}\\s*\\.\\s*format\\(\\s*(['"])([^'"\\n]*)\\3\\s*\\)`, 'g'), (_m, q: string, f: string, _q2, v: string) => `${q}${f.replace(/\{[^}]*\}/, v)}${q}`)
    .replace(new RegExp(`${lit}\\s*\\.\\s*join\\(\\s*\\[([^\\]]*)\\]\\s*\\)`, 'g'), (m, q: string, sep: string, items: string) => {
      const vals = [...items.matchAll(/(['"])([^'"]*)\1/g)].map((x) => x[2]);
      return vals.length > 0 ? `${q}${vals.join(sep)}${q}` : m;
    });
}

/** The language's own recursive tree delete, which a hand-written one stands for. */
const TREE_DELETE: Partial<Record<Lang, string>> = { php: 'File::deleteDirectory', python: 'shutil.rmtree', ruby: 'FileUtils.rm_rf', perl: 'rmtree', js: 'rimraf.sync' };

/**
 * A hand-written recursive delete (function rrmdir($d) { … rrmdir("$d/$f") … unlink … rmdir($d); } rrmdir(X)):
 * a function that deletes files and calls itself, called on X, deletes the tree X; the call is read as the
 * language's own tree delete.
 */
function recursiveDeleter(code: string, lang: Lang): string {
  const tree = TREE_DELETE[lang];
  if (!tree || !/unlink|rmdir|remove|delete/i.test(code)) return code;
  for (const m of code.matchAll(/\b(?:function|def|sub)\s+&?(\w+)\s*[({]/g)) {
    const name = m[1];
    const calls = [...code.matchAll(new RegExp(`(?<![\\w$>.])${name}\\s*\\(`, 'g'))];
    // The definition, a call inside it, and a call after it.
    if (calls.length < 3) continue;
    const last = calls[calls.length - 1];
    return code.slice(0, last.index) + tree + code.slice(last.index + name.length);
  }
  return code;
}

function preprocess(code: string, lang: Lang): string {
  if (lang === 'python') code = resolveAliases(code);
  // Laravel's, Symfony's and WordPress's filesystems, Pathname#rmtree, the frameworks' names for the app's directories.
  if (lang === 'php' || lang === 'ruby') code = framework().frameworkPaths(lang, code);
  code = recursiveDeleter(code, lang);
  // __import__('os').system(...) is os.system(...).
  code = code.replace(/__import__\(\s*(['"])([\w.]+)\1\s*\)/g, '$2');
  // importlib.import_module('shutil').rmtree(...) too.
  code = code.replace(/\b(?:importlib\.)?import_module\(\s*(['"])([\w.]+)\1\s*\)(?=\.)/g, '$2');
  // chr(114)+chr(109): the characters; ''.join(reversed('~ fr- mr')) and 'x'[::-1]: the text reversed; os.sep: "/".
  code = code
    .replace(/\b(?:chr|String\.fromCharCode)\(\s*(\d{2,3})\s*\)/g, (_m, n: string) => JSON.stringify(String.fromCharCode(Number(n))))
    .replace(/(['"])\1\s*\.\s*join\(\s*reversed\(\s*(['"])([^'"]*)\2\s*\)\s*\)|(['"])([^'"]*)\4\s*\[\s*::\s*-1\s*\]|(['"])([^'"]*)\6\s*\.\s*reverse\b(?:\(\))?/g, (_m, _a, _b, v1?: string, _c?: string, v2?: string, _d?: string, v3?: string) => JSON.stringify([...(v1 ?? v2 ?? v3 ?? '')].reverse().join('')))
    .replace(/\bos\.sep\b/g, '"/"')
    // system(*%w[rm -rf], x), run(*['rm', '-rf'], x): the splatted list's items are arguments.
    .replace(/\*\s*(%[wW][[(]|\[)/g, '$1');
  // ruby's %w[a b c] and %i[a b] are the list "a", "b", "c".
  if (lang === 'ruby') code = code.replace(/%[wWiI]([[({])([^\])}]*)[\])}]/g, (_m, _o, body: string) => `[${body.trim().split(/\s+/).filter((x) => x).map((x) => `"${x}"`).join(', ')}]`).replace(/(?<![\w\])}])\[((?:\s*"[^"]*"\s*,?)+)\]\s*,/g, '$1,');
  if (lang === 'r') {
    code = code
      // path.expand("~"), Sys.getenv("HOME"), getwd(): the home and working directories, before list.files reads them.
      .replace(/\b(?:path\.expand|normalizePath)\(\s*(['"])~\1\s*\)|\bSys\.getenv\(\s*(['"])HOME\2\s*\)/g, '"~"')
      .replace(/\bgetwd\(\s*\)/g, '"."')
      // do.call("unlink", list(".git", recursive=TRUE)) is unlink(".git", recursive=TRUE).
      .replace(/\bdo\.call\(\s*(['"])([\w.]+)\1\s*,\s*list\(([^()]*)\)\s*\)/g, '$2($3)')
      // system2("rm", c("-rf", x)), args=c(…): the vector's items are the arguments.
      .replace(/\b(system2\(\s*(['"])[^'"]*\2\s*,\s*(?:args\s*=\s*)?)c\(((?:[^()]|\([^()]*\))*)\)/g, '$1$3')
      // list.files("~", …), dir("~"): every entry of that directory, as the glob ~/* names them.
      .replace(/\b(?:list\.files|dir)\(\s*(['"])([^'"]*)\1[^()]*\)/g, (_m, _q, d: string) => JSON.stringify(`${d.replace(/\/$/, '')}/*`));
  }
  // Ruby's 114.chr is "r".
  code = code.replace(/\b(\d{2,3})\.chr\b/g, (_m, n: string) => JSON.stringify(String.fromCharCode(Number(n))));
  // perl's qw(a b c) is the list "a", "b", "c".
  code = code.replace(/\bqw\s*([({\[\/])([^)}\]\/]*)[)}\]\/]/g, (_m, _o, body: string) => body.trim().split(/\s+/).filter((x) => x).map((x) => `"${x}"`).join(', '));
  // perl's q{...}, qq{...}, q(...), qq(...) are string literals.
  code = code.replace(/\bqq?\s*([{(\[])([^'"{}()[\]]*)[})\]]/g, (_m, _o, body: string) => `"${body}"`);
  // qq{rm -rf $ENV{HOME}}, qq(… $ENV{HOME}): a hash lookup's braces inside.
  code = code.replace(/\bqq?\s*\{((?:[^{}'"]|\{[^{}'"]*\})*)\}|\bqq?\s*\(((?:[^()'"]|\{[^{}'"]*\})*)\)/g, (_m, a?: string, b?: string) => `"${a ?? b}"`);
  // Path helpers around one literal are that literal: path.resolve('/'), os.path.abspath('/'), Path('/'), File.expand_path('~/x').
  code = code
    .replace(/(?:require\(\s*['"](?:node:)?path['"]\s*\)|\bpath|\bos\.path)\.(?:resolve|join|normalize|abspath|realpath)\(\s*(['"])([^'"]*)\1\s*\)/g, '"$2"')
    .replace(/\b(?:pathlib\.)?(?:Pure)?Path\(\s*(['"])([^'"]*)\1\s*\)/g, '"$2"')
    // R's path.expand('~'), normalizePath('~'), file.path('~') of one literal.
    .replace(/\b(?:path\.expand|normalizePath|file\.path)\(\s*(['"])([^'"]*)\1\s*\)/g, '"$2"')
    .replace(/os\.path\.expanduser\(\s*(['"])~(\/[^'"]*)\1\s*\)/g, '"~$2"')
    .replace(/File\.expand_path\(\s*(['"])~(\/[^'"]*)?\1\s*\)/g, '"~$2"');
  // Anywhere inside a double-quoted string ("rm -rf $ENV{HOME}"), perl's $ENV{HOME} is the text ~.
  code = code.replace(/"(?:[^"\\\n]|\\.)*"/g, (str) => str.replace(/\$ENV\{\s*'?HOME'?\s*\}/g, '~'));
  // Inside a string ("$ENV{HOME}/.bashrc", "$HOME/x"), the home directory is the text ~.
  // (Not after an escaped quote: execSync("rm -rf \"$HOME/x\"") hands the shell "$HOME/x", which it expands.)
  let c = code.replace(/(?<!\\)(["`])\$(?:ENV\{\s*'?HOME'?\s*\}|\{?HOME\}?(?=\/|\1))/g, '$1~');
  // The home and working directory by expression (os.path.expanduser('~'), os.getcwd()...): code-places.ts's table.
  c = placesIn('script', c);
  // process.env.USERPROFILE, os.environ['LOCALAPPDATA'], $ENV{APPDATA}: Windows' own variables read as their usual places.
  if (/PROFILE|APPDATA|ONEDRIVE|SYSTEMROOT|WINDIR|HOMEPATH|PROGRAM/i.test(c)) c = c.replace(WINDOWS_ENV_READ, (m, ...names: (string | undefined)[]) => {
    const v = windowsVar(names.find((n) => typeof n === 'string' && /^\w+$/.test(n)) ?? '');
    return v === undefined ? m : `"${v}"`;
  });
  // sprintf("%c%c -rf ~", 114, 109) (awk, perl, php, ruby, C-like): %c of a number is that character.
  c = c.replace(/\b(?:s?printf|format)\(\s*"([^"\n]*%c[^"\n]*)"((?:\s*,\s*(?:\d{1,3}|"[^"\n]*"))+)\s*\)/g, (m, fmt: string, list: string) => {
    const vals = [...list.matchAll(/(\d{1,3})|"([^"\n]*)"/g)].map((x) => (x[1] !== undefined ? Number(x[1]) : x[2]));
    let k = 0;
    const out = fmt.replace(/%([csd])/g, (_x, c: string) => {
      const v = vals[k++];
      return c === 'c' && typeof v === 'number' ? String.fromCharCode(v) : String(v ?? '');
    });
    return k === vals.length ? JSON.stringify(out) : m;
  });
  // File.join("~", ".profile"), os.path.join("~", ".ssh"): literals joined are one path.
  c = c.replace(/\b(?:File|path|os\.path|posixpath)\.join\(\s*((?:"[^"\n]*"|'[^'\n]*')(?:\s*,\s*(?:"[^"\n]*"|'[^'\n]*'))+)\s*\)/g, (_m, list: string) => JSON.stringify(literals(list).map((l) => l.value).join('/').replace(/\/{2,}/g, '/')));
  // The user's login name ("/home/" + getpass.getuser()): some user, "/home/user" their home.
  c = c.replace(/\bgetpass\.getuser\(\)|\bos\.getlogin\(\)|\bos\.getenv\(\s*['"](?:USER|LOGNAME)['"]\s*\)|\bos\.environ(?:\.get\(\s*|\s*\[\s*)(['"])(?:USER|LOGNAME)\1\s*[)\]]|\bprocess\.env\.(?:USER|LOGNAME)\b|(?:\bos|require\(\s*['"](?:node:)?os['"]\s*\))\.userInfo\(\)\.username|\bEtc\.getlogin\b|\bENV\[\s*(['"])USER\2\s*\]|\$ENV\{\s*['"]?USER['"]?\s*\}|\bgetlogin\(\)/g, '"user"');
  // "/home/" .. os.getenv("USER"): the user's own home, the same as ~.
  c = c.replace(/(["'])\/(?:home|Users)\/\1\s*(?:\.\.|\+|\.)\s*"user"/g, '"~"');
  const kept: string[] = [];
  // An environment variable read with a default (os.environ.get("OUT", "~"), process.env.OUT || "~"): unset, it is the default.
  c = c
    .replace(/(?:os\.environ\.get|os\.getenv|ENV\.fetch|Sys\.getenv)\(\s*(['"])\w+\1\s*,\s*(?:unset\s*=\s*)?("[^"]*"|'[^']*')\s*\)/g, '$2')
    .replace(/(?:process\.env\.\w+|process\.env\[\s*['"]\w+['"]\s*\]|ENV\[\s*['"]\w+['"]\s*\]|\$ENV\{\s*['"]?\w+['"]?\s*\})\s*(?:\|\||\?\?|\/\/|\bor\b)\s*("[^"]*"|'[^']*')/g, '$1')
    // A command's output used as a value (rmtree(subprocess.check_output([...]).strip()), rmSync(execSync('…').toString())):
    // "$(CMD)", the call itself kept at the end (it still runs).
    .replace(/(?<=[(=,]\s*)(?:\bsubprocess\.(?:check_output|getoutput|run)|(?:require\(\s*['"](?:node:)?child_process['"]\s*\)\.)?\bexecSync)\(\s*(\[[^\]]*\]|"[^"]*"|'[^']*'|`[^`]*`)[^)]*\)(?:\.(?:decode|strip|rstrip|stdout|toString|trim)\(?\)?|\.split\([^)]*\)\[\s*-?\d+\s*\])*(?=\s*[,)]|[ \t]*(?:;|$))/gm, (m, a: string) => {
      kept.push(m);
      return `"$(${literals(a).map((l) => l.value).join(' ')})"`;
    });
  // zx: (await $`git rev-parse --show-toplevel`).stdout.trim() is the command's output too.
  if (lang === 'js' && c.includes('$`')) c = c.replace(/(?<=[(=,]\s*)\(?\s*await\s+\$`([^`$]*)`\s*\)?(?:\.(?:stdout|toString|trim)\(?\)?)*(?=\s*[,);]|[ \t]*$)/gm, (m, cmd: string) => {
    kept.push(m);
    return `"$(${cmd})"`;
  });
  if (kept.length > 0) c += `\n${kept.join('\n')}`;
  c = callsByValue(c, lang);
  c = joinLiterals(c, lang);
  // The joins may leave path helpers around one literal again: path.resolve("./.."), os.path.abspath(os.path.join("./..")).
  for (let k = 0; k < 3; k++) {
    c = c.replace(/(?:require\(\s*['"](?:node:)?path['"]\s*\)|\bpath|\bos\.path)\.(?:resolve|join|normalize|abspath|realpath)\(\s*"([^"]*)"\s*\)/g, '"$1"');
  }
  // x = '~' then 'rm -rf %s' % x, ' '.join(cmd) with cmd a list literal: variables holding one literal are put in first.
  c = c.replace(/(['"][^'"\n]*['"]\s*%\s*\(?\s*|\.format\(\s*|['"]\s*\.\s*join\(\s*)([A-Za-z_]\w*)(?=\s*\)?)/g, (m, pre: string, id: string) => {
    const list = new RegExp(`(?:^|[^\\w.])${id}\\s*=\\s*(\\[[^\\]]*\\])`).exec(c)?.[1];
    if (list && /join/.test(pre)) return pre + list;
    const v = identValues(c, id);
    return v.length === 1 ? `${pre}"${v[0]}"` : m;
  });
  c = formatStrings(c);
  // os.path.dirname(os.getcwd()), path.dirname(process.cwd()), File.dirname(Dir.pwd), Path.cwd().parent: the parent.
  c = c.replace(/\b(?:os\.path|path|File)\.dirname\(\s*"([^"]*)"\s*\)|"([^"]*)"\s*\.parent\b/g, (_m, a?: string, b?: string) => `"${a ?? b}/.."`);
  // path.join(os.homedir()) and the like, now that the home directory is the literal "~".
  c = c.replace(/(?:require\(\s*['"](?:node:)?path['"]\s*\)|\bpath|\bos\.path)\.(?:resolve|join|normalize|abspath|realpath)\(\s*"(~|\.)"\s*\)/g, '"$1"');
  // Interpolations of those (f"{Path.home()}/x", `${os.homedir()}/x`, "#{Dir.home}/x") are the text itself.
  c = c.replace(/\$?[#]?\{\s*"(~|\.)"\s*\}/g, '$1');
  // An interpolated variable holding one known path (p = "~" then f"rm -rf {p}/.ssh", `${h}/x`, "#{h}/x") is that path,
  // inside f-strings, template literals and "#{}" strings only.
  return c.replace(/\bf(["'])(?:(?!\1)[^\\\n])*\1|`[^`]*`|"[^"\n]*#\{[^"\n]*"/g, (str) =>
    str.replace(/\$?#?\{\s*([A-Za-z_]\w*)\s*\}/g, (m, id: string) => {
      // A loop over several literals (for p in ('~', '/data')): the home, /, or . among them, else the first path, stands for them.
      const v = identValues(c, id);
      const pick = v.length === 1 ? v[0] : v.find((x) => /^(~|\.|\/)$/.test(x)) ?? v.find((x) => /^(~|\/)/.test(x));
      return pick !== undefined && /^(?:~|\.|\/|\$\()/.test(pick) ? pick : m;
    }),
  );
}

/**
 * Functions handled as values are calls: `f = shutil.rmtree; f(p)`, `r = require('rimraf'); r.sync(p)`,
 * `$f = "sys"."tem"; $f(…)`, `Thread(target=shutil.rmtree, args=(p,))`, `submit(os.system, 'cmd')`,
 * `setTimeout(fs.rmSync, 0, p)`: each is rewritten or appended as the call it amounts to.
 */
function callsByValue(code: string, lang: Lang): string {
  // const {execSync: run} = require('child_process'): run is execSync.
  for (const m of code.matchAll(/\{([^{}]*:[^{}]*)\}\s*=\s*(?:require\(|\w+\b)/g)) {
    for (const pair of m[1].split(',')) {
      const a = /^\s*(\w+)\s*:\s*(\w+)\s*$/.exec(pair);
      if (a) code = code.replace(new RegExp(`(?<![\\w.$])${a[2]}(?=\\s*\\()`, 'g'), a[1]);
    }
  }
  let c = code.replace(/\brequire\(\s*(['"])(?:node:)?(rimraf|del|shelljs|fs-extra|execa|trash|path|fs|os|child_process|fs\/promises)\1\s*\)/g, (_m, _q, mod: string) => mod.replace('/', '.'));
  // new Deno.Command(cmd, { args: [...] }): the program and its list of arguments.
  if (lang === 'js') c = c.replace(/\bDeno\.Command\(\s*((['"])[^'"]*\2)\s*,\s*\{\s*args\s*:\s*(\[[^\]]*\])[^}]*\}/g, 'Deno.Command($1, $3');
  // perl's system { PROG } LIST runs LIST.
  if (lang === 'perl') c = c.replace(/\b(system|exec)\s*\{[^}]*\}\s*/g, '$1 ');
  // f.call(this, a), f.apply(this, [a]), Reflect.apply(f, this, [a]); ruby method(:system).call(a), x.send(:system, a): f(a).
  c = c
    .replace(/\bReflect\.apply\(\s*([\w.$]+)\s*,\s*[^,()]*,\s*\[([^\]]*)\]\s*\)/g, '$1($2)')
    .replace(/\b([\w.$]+)\.apply\(\s*[^,()]*,\s*\[([^\]]*)\]\s*\)/g, '$1($2)')
    .replace(/\b([\w.$]+)\.call\(\s*(?:null|undefined|this|\w+)\s*,\s*/g, '$1(')
    .replace(/\bmethod\(\s*:(\w+)\s*\)\s*\.\s*(?:call|\[\]|\()\s*\(?/g, '$1(')
    .replace(/(\.|\b)(?:send|public_send|__send__)\(\s*:(\w+)\s*,\s*/g, '$1$2(');
  for (const m of c.matchAll(/(?:^|[;\n{(,]|\b(?:const|let|var|my|local))\s*\$?([A-Za-z_]\w*)\s*=\s*(require\(\s*['"](?:node:)?[\w@/.-]+['"]\s*\)|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|rimraf|del|shelljs|fs|path|os|child_process|execa|trash|shutil|subprocess|\\&[\w:]+)\s*(?=[;\n,)]|$)/g)) {
    const to = m[2].replace(/^require\(\s*['"](?:node:)?([\w@/.-]+)['"]\s*\)$/, '$1').replace(/^\\&/, '');
    c = c.replace(new RegExp(`(?<![\\w.$])\\$?${m[1]}(?=\\s*(?:\\.|\\(|->\\())`, 'g'), to).replace(new RegExp(`${to.replace(/[.$]/g, '\\$&')}->\\(`, 'g'), `${to}(`);
  }
  c = c.replace(/\$(\w+)(?=\s*\()/g, (x, id: string) => {
    const v = identValues(joinLiterals(c, lang), id);
    return v.length === 1 && /^[A-Za-z_][\w:]*$/.test(v[0]) ? v[0] : x;
  });
  const dangerous = (n: string) => [SHELL_CALLS[lang], DELETE_CALLS[lang], UNLINK_CALLS].some((re) => re !== null && new RegExp(re.source).test(`${n}(`));
  const calls: string[] = [];
  for (const m of c.matchAll(/([(,]\s*(?:\w+\s*=\s*)?)([A-Za-z_][\w.]*)(?=\s*[,)])/g)) {
    if (!dangerous(m[2])) continue;
    let open = m.index;
    for (let d = 0; open >= 0; open--) {
      if (/[)\]]/.test(c[open])) d++;
      else if (/[([]/.test(c[open]) && d-- === 0) break;
    }
    if (open < 0) continue;
    let rest = c.slice(m.index + m[0].length, closeParen(c, open)).replace(/^\s*,?\s*(?:\d+(?:\.\d+)?\s*,\s*)*(?:args\s*=\s*)?/, '');
    if (/^[([]/.test(rest)) rest = rest.slice(1, closeParen(rest, 0));
    calls.push(`${m[2]}(${rest})`);
  }
  return calls.length > 0 ? `${c}\n${calls.join('\n')}` : c;
}

/** Perl/PHP variables inside backticks or qx{} (`rm -rf $h` with $h = $ENV{HOME}): put in when they hold one known value. */
function perlInterpolate(code: string, text: string): string {
  return text.replace(/(["'])~\1/g, '~').replace(/\$ENV\{\s*['"]?HOME['"]?\s*\}/g, '~').replace(/\$(\w+)/g, (x, id: string) => {
    const v = identValues(code, id);
    return v.length === 1 ? v[0] : x;
  });
}

/** The literal values an identifier takes: `for x in [...]`, `for (const x of [...])`, `[...].each { |x|`, `x = '...'`. */
function identValues(code: string, id: string, depth = 0): string[] {
  const out: string[] = [];
  const e = id.replace(/\$/g, '\\$');
  const lists = [
    new RegExp(`for\\s*\\(?\\s*(?:const|let|var|my)?\\s*\\$?${e}\\s+(?:in|of)\\s*[[(]([^\\])]*)[\\])]`, 'g'),
    new RegExp(`[[(]([^\\])]*)[\\])]\\s*\\.(?:each|forEach|map)\\s*(?:\\{\\s*\\|\\s*${e}\\s*\\||\\(\\s*\\(?\\s*${e}\\b)`, 'g'),
    new RegExp(`(?:^|[^\\w.$])\\$?${e}\\s*=\\s*((?:['"][^'"]*['"]\\s*[+.]\\s*)*['"][^'"]*['"])`, 'g'),
  ];
  lists.forEach((re, k) => {
    for (const m of code.matchAll(re)) {
      const lits = literals(m[1]);
      // x = "~" + '/.bashrc': an assignment of joined literals is their join; a list gives each value.
      if (k === 2) out.push(lits.map((l) => l.value).join(''));
      else for (const l of lits) out.push(l.value);
    }
  });
  // for c in cmds: … with cmds = ["…", "…"] assigned as a list of literals: each value.
  if (/\bfor\b/.test(code)) for (const m of code.matchAll(new RegExp(`for\\s*\\(?\\s*(?:const|let|var|my)?\\s*\\$?${e}\\s+(?:in|of)\\s+[@$]?([A-Za-z_]\\w*)\\b`, 'g'))) {
    const list = new RegExp(`(?:^|[^\\w.$@])[$@]?${m[1]}\\s*=\\s*[[(]([^\\])]*)[\\])]`).exec(code);
    if (list) for (const l of literals(list[1])) if (!out.includes(l.value)) out.push(l.value);
  }
  // x = "rm -rf " h, x = path.join(home, d): an expression of literals and variables known here.
  if (depth < 3) {
    for (const m of code.matchAll(new RegExp(`(?:^|[^\\w.$])[$]?${e}\\s*=(?!=)\\s*([^;\\n}]+)`, 'g'))) {
      const vals = exprValues(code, m[1], depth + 1);
      for (const v of vals) if (!out.includes(v)) out.push(v);
    }
  }
  return out;
}

/** Top-level comma-separated parts of an argument list. */
function splitArgs(text: string): string[] {
  const out: string[] = [];
  let last = 0;
  for (let i = 0, d = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      i = j;
    } else if ('([{'.includes(c)) d++;
    else if (')]}'.includes(c)) d--;
    else if (c === ',' && d === 0) {
      out.push(text.slice(last, i));
      last = i + 1;
    }
  }
  return [...out, text.slice(last)];
}

/**
 * The values an expression of literals and variables takes (at most 16): `"rm -rf " h` (awk), `a + '/x'`,
 * `$a . "/x"`, `path.join(home, d)`, `File.join(Dir.home, d)` with d looping over literals. Empty when
 * any part is not known.
 */
export function exprValues(code: string, expr: string, depth = 0): string[] {
  let e = expr.trim().replace(/(?:\.(?:strip|trim|chomp|rstrip)\(\)|!)+$/, '');
  // A if C else B (Python's conditional expression): either value.
  const cond = e.includes(' else ') && e.includes(' if ') ? /^([^'"]+?|.*?['"].*?)\s+if\s+[\s\S]+?\s+else\s+([\s\S]+)$/.exec(e) : null;
  if (cond && depth < 3) return [...exprValues(code, cond[1], depth + 1), ...exprValues(code, cond[2], depth + 1)].slice(0, 16);
  // Dir.glob(X), glob.glob(X): the paths X names, {a,b} alternatives expanded.
  const globbed = /^(?:Dir\.glob|glob\.glob|glob\.sync|glob)\(([\s\S]*)\)$/.exec(e);
  if (globbed) return exprValues(code, splitArgs(globbed[1])[0], depth).flatMap((v) => {
    const b = /^(.*)\{([^{}]*)\}(.*)$/.exec(v);
    return b ? b[2].split(',').map((x) => b[1] + x + b[3]) : [v];
  });
  // os.path.expanduser(d), Path(d).expanduser(), File.expand_path(d): the path d names.
  const wrap = /^(?:os\.path\.(?:expanduser|abspath|realpath|normpath)|(?:pathlib\.)?Path|str|File\.expand_path|path\.normalize)\(([\s\S]*)\)$/.exec(e.replace(/(?:\.(?:expanduser|resolve|absolute)\(\))+$/, ''));
  if (wrap) return exprValues(code, splitArgs(wrap[1])[0], depth);
  const join = /^(?:path|os\.path|File|posixpath)\.(?:join|resolve)\(([\s\S]*)\)$/.exec(e);
  if (join) return splitArgs(join[1]).reduce<string[]>((acc, part) => {
    const vs = exprValues(code, part, depth);
    return acc.length === 0 || vs.length === 0 ? [] : acc.flatMap((a) => vs.map((v) => (a === '' ? v : `${a.replace(/\/$/, '')}/${v.replace(/^\//, '')}`))).slice(0, 16);
  }, ['']);
  let combos = [''];
  let i = 0;
  while (i < e.length) {
    const rest = e.slice(i);
    const op = /^(?:\s+|\+|\.\.|\.(?=\s*['"$]))/.exec(rest);
    if (op) {
      i += op[0].length;
      continue;
    }
    let vals: string[] = [];
    if (rest[0] === '"' || rest[0] === "'") {
      const lit = literals(e, i)[0];
      if (!lit || lit.start !== i) return [];
      vals = [lit.value];
      i = lit.end;
    } else {
      const id = /^[$@]?([A-Za-z_]\w*)(?![\w(.[])/.exec(rest);
      if (!id || depth >= 3) return [];
      vals = identValues(code, id[1], depth + 1);
      i += id[0].length;
    }
    if (vals.length === 0) return [];
    combos = combos.flatMap((c) => vals.map((v) => c + v)).slice(0, 16);
  }
  return e === '' ? [] : combos;
}

const DELETES_ANY = /os\.(remove|unlink|rmdir)|file\.remove|rmtree|File\.(delete|unlink)|FileUtils\.(rm|remove)|unlinkSync|rmSync|\bunlink\b|Deno\.remove|\.delete\(|deleteDir|\bremove_tree\b|\bfs\.(promises\.)?(rm|unlink)\b|\.rm\(|os\.remove/;
const SELECTIVE = /endswith|startswith|end_with\?|start_with\?|fnmatch|\.match\(|\.test\(|suffix|extname|=~|include\?|includes\(|\.name\b|basename|\bstem\b|==|!=|(?<![=<-])<(?![<=])|(?<![=>-])>(?![>=])|\bin\s*[([{]|\bnot\s+in\b|mtime|ctime|atime|st_size|getsize|\.size\b|\bstat\b|regex|\bre\.|RegExp|\bgrep\b|\bselect\b|\breject\b|\.filter\(|\bsearch\(|\bpattern\s*=(?!=)/;
const TYPE_TESTS = /\b(?:is_file|is_dir|isfile|isdir|is_symlink|islink|isFile|isDirectory|isSymbolicLink|exists|existsSync|exist\?|file\?|directory\?|symlink\?|is_link)\b\s*(?:\([^()]*\))?|-[fdel]\s+\$?_?\w*/g;

/**
 * Roots of the listings in the code, with the glob pattern when the listing is a glob:
 * os.walk/scandir/listdir, glob.glob, Dir.glob/Dir[]/Dir.children/Dir.each_child, fs.readdirSync,
 * glob.sync, File::Find find/finddepth (the roots are the arguments after the callback), PHP
 * glob/scandir/opendir/RecursiveDirectoryIterator, and methods on a path (`"~".rglob('*')`,
 * `p.iterdir()` with p assigned a path) once Path.home()/Path('/') read as literals.
 */
function listingRoots(code0: string): { path: string; glob: string | null }[] {
  const out: { path: string; glob: string | null }[] = [];
  // const g = require('glob'); g.sync(…): the module's calls under another name.
  const globMod = /\b(\w+)\s*=\s*require\(\s*['"](?:glob|fast-glob|globby|tiny-glob)['"]\s*\)/.exec(code0)?.[1];
  const code = globMod ? code0.replace(new RegExp(`\\b${globMod}\\.(sync|glob|globSync)\\(`, 'g'), 'glob.sync(') : code0;
  const split = (pattern: string): { path: string; glob: string | null } => {
    const segs = pattern.split('/');
    const g = segs.findIndex((x) => /[*?[]/.test(x));
    if (g < 0) return { path: pattern || '.', glob: null };
    // {,.}* (GLOB_BRACE, bash's brace): one alternative is *, so every entry, dot files too.
    const glob = segs.slice(g).join('/').replace(/^\{([^{}]*)\}\*$/, (m, alts: string) => (alts.split(',').includes('') ? '*' : m));
    return { path: segs.slice(0, g).join('/') || (pattern.startsWith('/') ? '/' : '.'), glob };
  };
  const fn = /(?:\bos\.walk|\bos\.scandir|\bos\.listdir|\bglob\.i?glob|\bDir\.(?:glob|children|each_child|entries|foreach|new)|\bDir(?=\[)|\breaddirSync|\breaddir|\bglob(?:\.sync|Sync)?|\bglobby(?:\.sync)?|\bfg(?:\.sync)?|\bscandir|\bopendir|\bRecursiveDirectoryIterator|\bDirectoryIterator|\bDeno\.readDir(?:Sync)?|\bwalkSync|\bFind::find|\bfinddepth|\bfind|\blist\.(?:files|dirs))(?=\s*[([\"'])/g;
  for (const m of code.matchAll(fn)) {
    const at = m.index + m[0].length;
    const region = argRegion(code, code[at] === '[' ? at : at);
    // "dist".glob("*"), p.glob(…): a method of a path, read below with its receiver.
    if (m[0] === 'glob' && /\.\s*$/.test(code.slice(Math.max(0, m.index - 3), m.index))) continue;
    const isFind = /find/.test(m[0]);
    if (isFind) {
      // find(\&wanted, ROOTS) / find(sub {...}, ROOTS) / find({ wanted => ... }, ROOTS): the roots follow the first argument.
      const body = code.slice(region[0], region[1]);
      if (!/^\s*(sub\b|\\&|\{)/.test(body)) continue;
      const close = body.trimStart().startsWith('sub') || body.trimStart().startsWith('{') ? closeParen(body, body.indexOf('{')) : body.indexOf(',');
      for (const l of literals(code, region[0] + Math.max(0, close), region[1])) out.push({ path: l.value, glob: null });
      continue;
    }
    const text = code[at] === '[' ? regionText(code, [at + 1, closeParen(code, at)], true) : regionText(code, region, true);
    if (text === null) {
      const ident = /^\s*\$?([A-Za-z_]\w*)\s*(?:[,)]|$)/.exec(code.slice(region[0], region[1]))?.[1];
      if (ident) for (const v of identValues(code, ident)) out.push(split(v));
      continue;
    }
    const r = split(text);
    out.push(/glob|^Dir$|fg|globby/.test(m[0]) ? r : { path: text, glob: null });
  }
  // Methods of a path: "~".rglob('*'), "/".glob('**/*'), p.iterdir(), Path(x).walk().
  for (const m of code.matchAll(/(?:(["'])([^"']*)\1|\b([A-Za-z_]\w*))\s*\.\s*(rglob|glob|iterdir|walk|each_child|children|descendants)\s*\(/g)) {
    const roots = m[2] !== undefined ? [m[2]] : identValues(code, m[3]);
    const argStart = m.index + m[0].length - 1;
    const arg = literals(code, argStart, closeParen(code, argStart))[0]?.value ?? null;
    const glob = m[4] === 'rglob' ? `**/${arg ?? '*'}` : m[4] === 'glob' ? arg ?? '*' : null;
    for (const root of roots) out.push({ path: root, glob: glob === null ? null : glob.replace(/^(\*\*\/)+(?=\*\*)/, '') });
  }
  return out;
}

/** zlib or gzip data inflated, or null (bounded: real one-liners are small). */
function inflated(raw: Buffer): string | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const zlib = require('node:zlib') as typeof import('node:zlib');
    const out = (raw[0] === 0x1f ? zlib.gunzipSync(raw, { maxOutputLength: 65536 }) : zlib.inflateSync(raw, { maxOutputLength: 65536 })).toString('utf8');
    return /^[\x09\x0a\x0d\x20-\x7e]+$/.test(out) ? out : null;
  } catch {
    return null;
  }
}

/** Inline code longer than this is not analysed (and the caller refuses it): real one-liners are far shorter. */
export const MAX_CODE_CHARS = 20_000;

export function analyzeCode(lang: Lang, source: string): CodeFindings {
  const f: CodeFindings = { forkBomb: false, runsFetched: false, shell: [], deletes: [], devices: [], writes: [], reverse: false, exfil: null, decoded: [], tooLong: false };
  // Some passes scan ahead from each call they find: bounded input keeps the hook inside its budget.
  if (source.length > MAX_CODE_CHARS) {
    f.tooLong = true;
    return f;
  }
  const code = preprocess(source, lang);
  f.shell.push(...gitLibraryLines(code, (text) => literals(text).map((l) => l.value)));

  for (const m of code.matchAll(SHELL_CALLS[lang])) {
    const end = m.index + m[0].length;
    if (lang === 'perl' && m[0] === 'qx') {
      const open = code[end];
      const close = ({ '(': ')', '{': '}', '[': ']' } as Record<string, string>)[open] ?? open;
      const stop = code.indexOf(close, end + 1);
      f.shell.push(perlInterpolate(code, code.slice(end + 1, stop < 0 ? code.length : stop)));
      continue;
    }
    if (lang === 'js' && m[0] === '$' && !/\bzx\b|\$`/.test(code)) continue;
    const region = argRegion(code, end);
    const text = regionText(code, region);
    // 'rm -rf ' + d with d looping over literals (or assigned one): each value joined in.
    const concat = /^\s*(?:(['"])([^'"]*)\1\s*[+.]\s*)?\$?([A-Za-z_]\w*)(?:\s*[+.]\s*(['"])([^'"]*)\4)?\s*(?:,|$)/.exec(code.slice(region[0], region[1]));
    if (concat && (concat[1] || concat[4])) for (const v of identValues(code, concat[3])) f.shell.push(`${concat[2] ?? ''}${v}${concat[5] ?? ''}`);
    if (text !== null) f.shell.push(text);
    else {
      // system($cmd) with $cmd assigned a literal earlier in the code.
      const ident = /^\s*[$@]?([A-Za-z_]\w*)\s*(?:[,)]|$)/.exec(code.slice(region[0], region[1]))?.[1];
      if (ident) f.shell.push(...identValues(code, ident));
      else f.shell.push(...exprValues(code, splitArgs(code.slice(region[0], region[1]))[0]));
      // cmd = ['rm', '-rf', '~']; run(cmd) / @a = (…); system @a: the list is the command line.
      const list = ident ? new RegExp(`(?:^|[^\\w.$@])[$@]?${ident}\\s*=\\s*[[(]([^\\])]*)[\\])]`).exec(code) : null;
      if (list) f.shell.push(literals(list[1]).map((l) => l.value).join(' '));
    }
    // system(c "~") with c = "rm -rf ": variables holding one literal put in, then the literals joined.
    const withVars = code.slice(region[0], region[1]).replace(/(?<![\w$."'])\$?([A-Za-z_]\w*)(?![\w(."'])/g, (x, id: string) => {
      const v = identValues(code, id);
      return v.length === 1 ? `"${v[0].replace(/"/g, '')}"` : x;
    });
    if (withVars !== code.slice(region[0], region[1])) {
      const j = joinLiterals(withVars, lang);
      const t = regionText(j, [0, j.length]);
      if (t !== null && t !== text) f.shell.push(t);
    }
  }
  // os.spawnl*/execl*(MODE?, FILE, ARG0, ARG1...): the arguments after the file name are the command line.
  if (lang === 'python') {
    for (const m of code.matchAll(/\bos\.(?:(spawn|exec)(l|v)p?e?|posix_spawnp?)\s*\(/g)) {
      const open = m.index + m[0].length - 1;
      const lits = literals(code, open + 1, closeParen(code, open));
      if (lits.length >= 2) f.shell.push(lits.slice(1).map((l) => shellWord(l.value)).join(' '));
    }
  }
  // exec/eval/Function/instance_eval/load of what the network gives: code nobody reviewed.
  if (/\b(exec|eval|compile|Function|instance_eval|class_eval|load|loadstring|runpy\.run_path|include|require)\s*\(/.test(code) && (NETWORK.test(code) || /file_get_contents\s*\(\s*['"]https?:|URI\.open|open-uri|\bget\s*\(\s*['"]https?:|\(\s*['"]https?:\/\//.test(code)) && /\b(exec|eval|Function|instance_eval|class_eval|loadstring)\s*\([^)]*(urlopen|requests\.|fetch|get\(|file_get_contents|URI|Net::HTTP|read|text\(|http)/.test(code)) {
    f.runsFetched = true;
  }
  // fetch(url).then(r => r.text()).then(eval): eval handed the downloaded text as a callback.
  if (NETWORK.test(code) && /\.then\s*\(\s*(eval|Function|new\s+Function|vm\.runInThisContext)\s*\)/.test(code)) f.runsFetched = true;
  // fork in a loop that never ends: fork while fork, while True: os.fork(), loop { fork }, for(;;) fork().
  if (/\bfork\b[^;\n]{0,20}\bwhile\s+(fork|1|true)\b|while\s*\(?\s*(1|true|True|:)\s*\)?\s*[:{]?[^}]{0,40}\bfork\s*\(|\bloop\s*(\{|do)\s*fork\b|for\s*\(\s*;\s*;\s*\)\s*\{?\s*(os\.|process\.)?fork\s*\(|while\s*\(?\s*(1|true)\s*\)?\s*\{\s*(pcntl_)?fork\s*\(|fork\s*\(\s*\)[^\n]{0,40}\bfor\b[^\n]{0,30}\b(iter\s*\(\s*int\s*,|itertools\.(count|repeat|cycle)\s*\(|count\s*\(\s*\))/.test(code)) f.forkBomb = true;
  // Calls reached by another name or by a computed name (from os import system as s, getattr(os, 'sys'+'tem'),
  // import_module('shutil'), const {execSync: x} = require(...), obj['exec'+'Sync']): every string that is a
  // command line is taken as one the code may run, and deletes of trees by any name are looked for in them.
  if (/\bimport\s+[\w.]+\s+as\s+\w+|\bfrom\s+[\w.]+\s+import\s+[^\n;]*\bas\b|\bgetattr\s*\(|import_module\s*\(|__builtins__|\bglobals\(\)\s*\[|\{\s*\w+\s*:\s*\w+\s*\}\s*=\s*require|\]\s*\(|\bsend\s*\(\s*:|\b(public_send|__send__)\s*\(|\bmethod\s*\(|->can\(|call_user_func/.test(code)) {
    for (const l of literals(code)) if (/^\s*\S+\s+\S/.test(l.value)) f.shell.push(l.value);
    const names = code.match(/['"](rmtree|remove_tree|rm_rf|rmSync|removeSync)['"]/);
    if (names) for (const l of literals(code)) if (/^[~/.]/.test(l.value)) f.deletes.push({ path: l.value, recursive: true });
    if (/import_module\s*\(\s*['"]shutil['"]\s*\)\s*\.\s*rmtree\s*\(/.test(code)) {
      const m = /import_module\s*\(\s*['"]shutil['"]\s*\)\s*\.\s*rmtree\s*\(\s*(['"])([^'"]*)\1/.exec(code);
      if (m) f.deletes.push({ path: m[2], recursive: true });
    }
  }
  // Code inside a string run by exec/eval/Function/compile/instance_eval is code too (one level).
  if (!/\u0000nested/.test(source)) {
    for (const m of code.matchAll(/\b(?:exec|eval|Function|compile|instance_eval|class_eval)\s*\(\s*(['"`])/g)) {
      const open = m.index + m[0].length - 1;
      const lit = literals(code, open, code.length)[0];
      if (lit && lit.value.length > 0) {
        const inner = analyzeCode(lang, `${lit.value}\n\u0000nested`);
        f.shell.push(...inner.shell);
        f.deletes.push(...inner.deletes);
        f.writes.push(...inner.writes);
        f.devices.push(...inner.devices);
        f.reverse ||= inner.reverse;
        f.exfil ??= inner.exfil;
      }
    }
  }
  // Backticks and %x() run shell commands in perl, ruby and php (in JS they are template strings).
  if (lang === 'perl' || lang === 'ruby' || lang === 'php') {
    for (const m of code.matchAll(/`([^`]*)`/g)) f.shell.push(lang === 'ruby' ? m[1] : perlInterpolate(code, m[1]));
    // ("…?k=".`cat ~/.ssh/id_rsa`): the preprocessing may join the command into a neighbouring string; the source still has it.
    for (const m of source.matchAll(/`([^`]*)`/g)) if (!f.shell.includes(m[1])) f.shell.push(m[1]);
    if (lang === 'ruby') for (const m of code.matchAll(/%x([({[])([^)}\]]*)[)}\]]/g)) f.shell.push(m[2]);
  }
  if (lang === 'js') for (const m of code.matchAll(/\$`([^`]*)`/g)) f.shell.push(m[1]);
  // scalar reverse "~ fr- mr", ("~ fr- mr"):reverse(), strrev(…): a literal that reads as a command backwards is one.
  if (/\breverse\b|\bstrrev\b|\brev\b/.test(code)) for (const l of literals(code)) {
    const r = [...l.value].reverse().join('');
    if (/^\s*(rm|dd|mkfs\S*|shred|chmod|chown|curl|wget|sh|bash|git|nc)\s/.test(r)) f.shell.push(r);
  }
  // IPython's !cmd line runs cmd through the shell.
  if (lang === 'python') for (const m of code.matchAll(/(?:^|[\n;])\s*!([^\n;]+)/g)) f.shell.push(m[1]);
  if (lang === 'awk') {
    for (const m of code.matchAll(/(['"])([^'"]*)\1\s*\|\s*getline/g)) f.shell.push(m[2]);
    for (const m of code.matchAll(/print\s*\(?\s*((?:"[^"]*"|'[^']*'|[^|;}"'])*?)\)?\s*\|\s*(['"])([^'"]*)\2/g)) {
      f.shell.push(m[3]);
      // print "rm -rf ~" | "sh": the printed text is what the shell runs.
      if (/^\s*(ba|z|da)?sh\b/.test(m[3])) for (const l of literals(m[1])) f.shell.push(l.value);
    }
    // ("find / -type f" | getline f) … system("rm -f " f): each listed path given to the command.
    // The listing command may sit in a variable: cmd = "ls -d " ENVIRON["HOME"]; (cmd | getline d).
    const viaVar = /\(?\s*([A-Za-z_]\w*)\s*\|\s*getline\s+(\w+)/.exec(code);
    const viaVal = viaVar ? new RegExp(`\\b${viaVar[1]}\\s*=\\s*(["'])([^"']*)\\1`).exec(code) : null;
    const gl = /(['"])((?:find|ls)\s+[^'"]*)\1\s*\|\s*getline\s+(\w+)/.exec(code) ?? (viaVal && /^(find|ls)\s/.test(viaVal[2]) ? ['', '', viaVal[2], viaVar![2]] : null);
    const sys = gl ? new RegExp(`system\\(\\s*(['"])((?:rm|shred|unlink)[^'"]*)\\1\\s*${gl[3]}\\b`).exec(code) : null;
    if (gl && sys) {
      const root = /^(?:find|ls)\s+(?:-\S+\s+)*([^\s-]\S*)/.exec(gl[2])?.[1];
      if (root) f.deletes.push({ path: root, recursive: !/-name|-path|-regex/.test(gl[2]) });
    }
  }

  const del = DELETE_CALLS[lang];
  if (del) {
    for (const m of code.matchAll(del)) {
      const region = argRegion(code, m.index + m[0].length);
      // A keyword argument (rmtree(path='/')) is the argument.
      const kw = /^\s*\w+\s*=(?!=)\s*/.exec(code.slice(region[0], region[1]));
      if (kw) region[0] += kw[0].length;
      const lits = literals(code, region[0], region[1]);
      const argText = code.slice(region[0], region[1]);
      const recursive = lang === 'r' ? /recursive\s*=\s*T/.test(argText) : lang !== 'js' || /rimraf|removeSync|emptyDir|fs\.remove|Deno\.remove|delete(Sync|Async)/.test(m[0]) || /recursive\s*:\s*true/.test(argText);
      const startsWithLit = lits.length > 0 && /^[rRbBfFuU]{0,2}$/.test(code.slice(region[0], lits[0].start).trim());
      if (!startsWithLit) {
        // rmtree(p) with p a loop variable over literals, or assigned a literal.
        const ident = /^\s*\$?([A-Za-z_]\w*)\s*(?:[,)]|$)/.exec(argText)?.[1];
        if (ident) for (const v of identValues(code, ident)) f.deletes.push({ path: v, recursive });
        else for (const v of exprValues(code, splitArgs(argText)[0])) f.deletes.push({ path: v, recursive });
        continue;
      }
      // shell.rm('-rf', p): the flags come first, the path after.
      if (/^-[a-zA-Z]+$/.test(lits[0].value) && lits[1]) {
        f.deletes.push({ path: lits[1].value, recursive: recursive || /[rR]/.test(lits[0].value) });
        continue;
      }
      f.deletes.push({ path: regionText(code, region, true) ?? lits[0].value, recursive });
    }
  }
  // list(map(shutil.rmtree, ['~', '/x'])), [*map(os.remove, […])]: the function applied to each literal.
  for (const m of code.matchAll(/\bmap\(\s*((?:shutil\.)?rmtree|os\.remove|os\.unlink|os\.rmdir|fs\.rmSync|File\.delete)\s*,\s*\[([^\]]*)\]/g)) {
    for (const l of literals(m[2])) f.deletes.push({ path: l.value, recursive: /rmtree|rmSync/.test(m[1]) });
  }
  // Single-file deletes: os.remove, fs.unlinkSync, File.delete, unlink.
  for (const m of code.matchAll(UNLINK_CALLS)) {
    const region = argRegion(code, m.index + m[0].length);
    const text = regionText(code, region, true);
    if (text !== null) f.deletes.push({ path: text, recursive: false });
  }
  // Files opened for writing: open(P, 'w'), writeFileSync(P), File.write(P), open(FH, '>', P).
  for (const m of code.matchAll(/(?<![\w.])open\s*\(|\b(?:writeFileSync|appendFileSync|writeFile|appendFile|write_text|write_bytes)\s*\(|\bFile\.(?:write|open)\s*\(|\bfile_put_contents\s*\(/g)) {
    const open = m.index + m[0].length - 1;
    const end = closeParen(code, open);
    const lits = literals(code, open + 1, end);
    const args = code.slice(open + 1, end);
    // p.write_text(…) / open(p, 'a') with p assigned a path literal: the receiver or the variable is the file.
    if (/write_text|write_bytes/.test(m[0])) {
      const recv = /(?:(["'])([^"']+)\1\s*\)?|\b([A-Za-z_]\w*))\s*\.\s*$/.exec(code.slice(Math.max(0, m.index - 200), m.index));
      if (recv) f.writes.push(...(recv[2] !== undefined ? [recv[2]] : identValues(code, recv[3])));
      continue;
    }
    if (/^\s*open/.test(m[0]) || m[0].startsWith('open')) {
      const ident = /^\s*([A-Za-z_]\w*)\s*,\s*(['"])(\+?[wa]b?\+?|r\+b?)\2/.exec(args);
      if (ident) f.writes.push(...identValues(code, ident[1]));
    }
    if (lits.length === 0) continue;
    if (/^\s*open/.test(m[0]) || m[0].startsWith('open')) {
      const mode = lits.find((l) => /^(\+?[wa]b?\+?|r\+b?|>>?|\+<)$/.test(l.value));
      const perlTarget = lits.find((l) => /^>>?\s*[^>\s]/.test(l.value));
      if (perlTarget) f.writes.push(perlTarget.value.replace(/^>>?\s*/, ''));
      else if (mode && lits[0] !== mode) f.writes.push(regionText(code, [open + 1, end], true) ?? lits[0].value);
      else if (mode && lang === 'perl' && lits.length > 1) f.writes.push(lits[lits.length - 1].value);
    } else if (code.slice(open + 1, lits[0].start).trim() === '') f.writes.push(regionText(code, [open + 1, end], true) ?? lits[0].value);
    void args;
  }
  // Walking or globbing a tree and deleting what is found: a delete of the tree's root.
  if (DELETES_ANY.test(code)) {
    // A listing walked with a condition on the names, age or size (endswith('.tmp'), =~, select, mtime) deletes only
    // what matches; a test of the kind of entry (is_file(), File.file?, isFile()) is no filter.
    // (if p.name not in {'.cache'}: / if p.name != 'keep': the whole clause, the .name test with it.)
    // (R's assignment arrow `x <- list.dirs(…)` is no comparison.)
    const kinds = code.replace(/\s<-\s/g, ' = ').replace(TYPE_TESTS, '').replace(/\bif\s+[\w.]+\.name\s+not\s+in\s*[[({][^\])}]*[\])}]\s*:|\bif\s+[\w.]+\.name\s*!=\s*(['"])[^'"]*\1\s*:/g, '');
    // if (entry !== 'src'), if f not in ('keep',): everything but the names given goes, which is no filter.
    const excepts = kinds.replace(/!==?\s*(['"])[^'"]*\1|(['"])[^'"]*\2\s*!==?|\bnot\s+in\s*[([{][^)\]}]*[)\]}]/g, '');
    // name.startswith('.'), startsWith('.'): only the dot entries, in a home its keys and settings.
    const dotOnly = /\b(startswith|startsWith|start_with\?)\(\s*(['"])\.\2\s*\)/.test(excepts) && !SELECTIVE.test(excepts.replace(/\b(startswith|startsWith|start_with\?)\(\s*(['"])\.\2\s*\)/g, ''));
    const selective = SELECTIVE.test(excepts);
    for (const root of listingRoots(code)) {
      if (root.glob === null && dotOnly) {
        f.deletes.push({ path: `${root.path.replace(/\/$/, '')}/.*`, recursive: true });
        continue;
      }
      if (root.glob !== null) {
        // A glob's pattern is its own filter: '*.tmp' deletes those, '/**/*' or '*' deletes everything there.
        // {*,.*}: alternatives that each match everything match everything.
        const all = (g: string) => /^(\*\*?|\*\.\*|\.\*|\.\?\*)(\/(\*\*?|\*\.\*|\.\*))*$/.test(g);
        if (!all(root.glob) && !(/^\{[^{}]+\}$/.test(root.glob) && root.glob.slice(1, -1).split(',').every(all))) {
          // Another pattern deletes what it matches, judged as the shell's `rm PATTERN` would be (/home/*/.ssh/*).
          f.deletes.push({ path: `${root.path.replace(/\/$/, '')}/${root.glob}`, recursive: false });
          continue;
        }
      } else if (selective) continue;
      f.deletes.push({ path: root.path, recursive: true });
    }
  }

  const lits = literals(code);
  for (const l of lits) {
    if (DISK.test(l.value) && /(['"])(w|wb|r\+b?|a|ab|w\+b?)\1|O_WRONLY|O_RDWR|\bwrite|writeFileSync|File\.write|open\([^)]*>|\bopen\s*\(?\s*(my\s+)?[$\w]+\s*,\s*['"]\+?>/.test(code)) f.devices.push(l.value);
    if (/^[A-Za-z0-9+/]{8,}={0,2}$/.test(l.value) && l.value.length % 4 === 0 && /b64|base64|decode|atob|unpack1?\(\s*['"]m/i.test(code)) {
      const raw = Buffer.from(l.value, 'base64');
      const text = raw.toString('utf8');
      if (/^[\x09\x0a\x0d\x20-\x7e]+$/.test(text)) f.decoded.push(text);
      else if (/zlib|decompress|inflate|gzip/.test(code)) {
        // zlib.decompress(base64.b64decode(…)): the compressed text, inflated.
        const z = inflated(raw);
        if (z !== null) f.decoded.push(z);
      }
    }
    // codecs.decode(…, 'rot13'): the letters turned back.
    if (/rot[_-]?13/i.test(code) && /[a-z]/i.test(l.value) && l.value.length > 3) {
      f.decoded.push(l.value.replace(/[a-z]/gi, (ch) => String.fromCharCode(((ch.toLowerCase().charCodeAt(0) - 97 + 13) % 26) + (ch === ch.toLowerCase() ? 97 : 65))));
    }
    // Hex literals the code decodes (bytes.fromhex, binascii.unhexlify, Buffer.from(x, 'hex'), pack('H*')).
    if (/^(?:[0-9a-fA-F]{2}){4,}$/.test(l.value) && /fromhex|unhexlify|['"]hex['"]|pack\s*\(?\s*['"]H|\[\s*l.value\s*\]\.pack|decode\(\s*['"]hex/i.test(code)) {
      const text = Buffer.from(l.value, 'hex').toString('utf8');
      if (/^[\x09\x0a\x0d\x20-\x7e]+$/.test(text)) f.decoded.push(text);
    }
  }
  // ''.join(map(chr, [105, 109, …])), String.fromCharCode(114, 109, …), pack('C*', …): text spelled as numbers.
  for (const m of code.matchAll(/(?:chr|fromCharCode|pack\(\s*['"]C\*['"]|\bbytes|\bbytearray|Buffer\.from|Uint8Array)[^[(]*[[(]\s*\[?\s*((?:\d{1,3}\s*,\s*){3,}\d{1,3})\s*\]?\s*[\])]/g)) {
    const text = m[1].split(/\s*,\s*/).map((n) => String.fromCharCode(Number(n))).join('');
    if (/^[\x09\x0a\x0d\x20-\x7e]+$/.test(text)) f.decoded.push(text);
  }
  if (/socket|fsockopen|net\.connect|net\.Socket/i.test(code) && /dup2|pty\.spawn|\/bin\/(ba|z|da)?sh\b|cmd\.exe|exec\s+\{?["']?\/bin/.test(code)) f.reverse = true;
  // gawk's /inet/tcp special files: commands read from the connection and run with |& getline.
  if (/\/inet\d?\/(tcp|udp)\//.test(code) && /\|&|system\s*\(/.test(code)) f.reverse = true;
  // A secret whose content the code reads (open, readFileSync, read_text, File.read...) while it talks to the network.
  if (NETWORK.test(code)) {
    // A command the code runs that reads a secret (`cat ~/.ssh/id_rsa` posted by LWP): the output goes with the request.
    const shellSecret = f.shell.find((sh) => SECRET_FRAGMENT.test(sh) && /^\s*(cat|tac|head|tail|base64|xxd|gzip|tar|zip|openssl|gpg)\b/.test(sh));
    if (shellSecret) f.exfil = shellSecret;
    // The whole environment (tokens and keys) serialised while talking to the network.
    if (/dict\(\s*os\.environ\s*\)|json\.dumps\(\s*(dict\()?os\.environ|os\.environ\.(items|copy)\(\)|JSON\.stringify\(\s*process\.env\s*\)|Object\.(entries|keys)\(\s*process\.env\s*\)|\bENV\.to_h\b|\bENV\.to_a\b|%ENV\b|getenv\(\s*\)|\$_ENV\b|Deno\.env\.toObject\(\)/.test(code)) f.exfil = 'the environment (tokens and keys)';
    // A secret path among the literals while the code reads files (open F, <F>, read_bytes, slurp...) and talks to the network.
    if (/\bopen\b|readLines|readChar|read_bytes|read_text|readFile|readTextFile|Bun\.file|File\.read|IO\.read|slurp|<[A-Z]+>|file_get_contents|fread|\.read\(/.test(code)) {
      const lit = lits.find((l) => SECRET_FRAGMENT.test(l.value));
      if (lit) f.exfil = lit.value;
    }
    for (const m of code.matchAll(/(?<![\w])(?:open|fopen|readLines|readChar|readFileSync|readFile|readTextFile|Bun\.file|file_get_contents|File\.read|IO\.read|File\.open|File\.binread|read_text|read_bytes)\s*\(/g)) {
      const open = m.index + m[0].length - 1;
      const arg = regionText(code, [open + 1, closeParen(code, open)], true);
      if (arg !== null && (SECRET_FRAGMENT.test(arg) || (/^~\//.test(arg) && isSecretSource(arg.replace(/^~/, '/home/u'), { home: '/home/u', project: '/nonexistent' })))) {
        f.exfil = arg;
        break;
      }
    }
  }
  // os.chmod(os.path.expanduser('~'), 0o777), fs.chmodSync('/x', 0o777), File.chmod(0777, '/x'): the mode change as chmod would make it.
  if (/chmod/.test(code)) {
    for (const m of code.matchAll(/\b(?:os\.chmod|fs\.chmodSync|fs\.chmod|File\.chmod|FileUtils\.chmod(?:_R)?|Sys\.chmod|chmod)\s*\(/g)) {
      const open = m.index + m[0].length - 1;
      const args = code.slice(open + 1, closeParen(code, open));
      const mode = /(?<![\w.])0[oO]?([0-7]{3,4})\b|\bmode\s*=\s*["']?([0-7]{3,4})|(?<![\w.'"])([0-7]{3})(?![\w.])/.exec(args);
      const p = literals(args)[0]?.value;
      if (mode && p && /^[~/]/.test(p)) f.shell.push(`chmod ${m[0].includes('_R') ? '-R ' : ''}${mode[1] ?? mode[2] ?? mode[3]} ${p.replace(/[^\w~/.@%+=:,-]/g, '')}`);
    }
  }
  // os.kill(pid, SIGKILL) for every pid in /proc (psutil.process_iter, process.kill over readdirSync('/proc')): kill -9 -1.
  if (/\b(os|process)\.kill\s*\(|\.kill\(\)/.test(code) && /(listdir|readdirSync|scandir|glob)\s*\(\s*['"]\/proc\/?['"]|psutil\.(process_iter|pids)\b/.test(code)) f.shell.push('kill -9 -1');
  // for t in ['dist', '~']: run(f'rm -rf {t}'): a hole filled from a loop over literals is each value in turn.
  for (const line of [...f.shell]) {
    const hole = /(?:\$|#)?\{\s*([A-Za-z_]\w*)\s*\}/.exec(line);
    const vals = hole ? identValues(code, hole[1]) : [];
    if (hole && vals.length > 1) for (const v of vals.slice(0, 16)) f.shell.push(line.split(hole[0]).join(v));
  }
  // os.walk(HOME) removing the files whose names end so (.endswith(('.lock', '.bak'))), or equal a name: the find of each kind.
  const walkRoot = /\bos\.walk\(\s*(['"])(~|\/)\1/.exec(code)?.[2];
  if (walkRoot && /\b(?:os\.remove|os\.unlink|unlink|remove)\s*\(/.test(code)) {
    const kinds = [...code.matchAll(/\.endswith\(\s*(\([^)]*\)|['"][^'"]*['"])/g)].flatMap((m) => literals(m[1]).map((l) => `*${l.value}`));
    kinds.push(...[...code.matchAll(/\b\w+\s*==\s*(['"])([\w.-]+)\1/g)].map((m) => m[2]));
    for (const k of kinds.slice(0, 16)) f.shell.push(`find ${walkRoot} -name ${shellWord(k)} -delete`);
  }
  // os.walk('/') (or the home) with os.chmod(…, 0o777): every file's mode opened to everyone, as chmod -R 777 would.
  const walked = /\b(?:os\.walk|glob\.glob|readdirSync|Find\.find|Dir\.glob)\s*\(\s*(['"])(\/|~)(?:\/\*\*[^'"]*)?\1/.exec(code)?.[2];
  if (walked && /\b(?:os\.chmod|chmodSync|chmod|File\.chmod|FileUtils\.chmod(?:_R)?)\s*\([^\n]*?\b(0o?777|0o?666|511|438|stat\.S_IRWXO)\b/.test(code)) f.shell.push(`chmod -R 777 ${walked}`);
  // os.chdir(HOME) / process.chdir(os.homedir()) first: the relative paths the code then deletes or runs are there.
  const chdir = /\b(?:process\.chdir|os\.chdir|Dir\.chdir|chdir)\s*\(?\s*"([^"\n]+)"/.exec(code)?.[1];
  if (chdir && chdir !== '.') {
    const dir = /^~(\/|$)/.test(chdir) ? `~${chdir.length > 1 ? shellWord(chdir.slice(1)) : ''}` : shellWord(chdir);
    f.shell = f.shell.map((l) => `cd ${dir} && ${l}`);
    f.deletes = f.deletes.map((d) => (/^[~/]/.test(d.path) ? d : { ...d, path: `${chdir.replace(/\/$/, '')}/${d.path}` }));
  }
  return f;
}
