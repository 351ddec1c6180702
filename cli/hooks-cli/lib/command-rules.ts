/**
 * What the command validator knows about commands. The command line is
 * parsed (shell-parse.ts), every simple command is unwrapped to what really
 * runs (sudo and its options, env and VAR= prefixes, command/exec/nice/
 * nohup/timeout/xargs..., a leading backslash or a path), nested scripts
 * (`sh -c`, `bash -c`, `eval`, a here-document or an echoed script fed to a
 * shell, `find -exec`) are analysed the same way, and then each invocation
 * is checked. Findings carry the security setting that switches them:
 *
 *   dangerous  -> dangerous_commands_blocked   (⛔ block)
 *   suspicious -> suspicious_commands_warned   (⚠️ warning)
 *   traversal  -> path_traversal_protection    (block or warning)
 *   system     -> system_files_protection      (block or warning)
 */
import path from 'node:path';
import { parseShell, type Redirect, type SimpleCommand, type Word } from './shell-parse';
import type { Settings } from './settings-schema';
import { classifyDelete, describeDelete, isDiskDevice, isSecretPath, isSystemPath, isUnder, resolveFrom, type PathEnv } from './paths-classify';

export type Check = 'dangerous' | 'suspicious' | 'traversal' | 'system';

export interface Finding {
  check: Check;
  level: 'block' | 'warn';
  reason: string;
  suggestion?: string;
}

export interface Invocation {
  argv: string[];
  words: Word[];
  redirects: Redirect[];
  /** Working directory it runs in, null when unknown (cd $X). */
  cwd: string | null;
  elevated: boolean;
  viaXargs: boolean;
  /** Invocations earlier in the same pipeline (their output is this one's input). */
  upstream: Invocation[];
  /** The text of an inline script when this is `sh -c`, `eval` and the like. */
  nested: boolean;
}

export interface Analysis {
  findings: Finding[];
  invocations: Invocation[];
  /** Set when the command destroys data that a backup could bring back. */
  critical: string | null;
}

export interface AnalyzeEnv extends PathEnv {
  cwd: string;
  /** Current git branch of the project, if known (force-push without a refspec). */
  currentBranch?: () => string | null;
}

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'mksh', 'busybox-sh']);
const INTERPRETERS = new Set(['python', 'python2', 'python3', 'perl', 'ruby', 'node', 'php', 'lua']);
const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'http', 'https', 'aria2c', 'lwp-download', 'lynx']);
const DECODERS = new Set(['base64', 'base32', 'xxd', 'openssl', 'gunzip', 'zcat', 'rev', 'tr']);
const PROTECTED_BRANCHES = new Set(['main', 'master']);

const MAX_DEPTH = 6;

const base = (p: string) => p.split('/').pop() || p;
const isAssignment = (w: Word) => /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(w.text) && !w.text.startsWith('=');

/** Options that take a value, per wrapper, so the wrapped command is found. */
const SUDO_ARG_OPTS = new Set(['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-T', '-U', '-R', '--user', '--group', '--host', '--prompt', '--close-from', '--chdir', '--role', '--type', '--other-user', '--command-timeout', '--chroot']);
const XARGS_ARG_OPTS = new Set(['-I', '-n', '-P', '-L', '-d', '-E', '-s', '-a', '-e', '--max-args', '--max-procs', '--max-lines', '--delimiter', '--arg-file', '--eof', '--max-chars', '--replace']);
const TIMEOUT_ARG_OPTS = new Set(['-s', '-k', '--signal', '--kill-after']);

interface Unwrapped {
  words: Word[];
  elevated: boolean;
  viaXargs: boolean;
  /** A script to analyse in place of (or besides) the command: sh -c, eval, env -S, watch. */
  script: string | null;
  /** The wrapper only asks about the command (command -v, type): nothing runs. */
  query: boolean;
  /** A new working directory set by the wrapper (env -C, sudo -D). */
  chdir: string | null;
}

function skipOptions(words: Word[], i: number, argOpts: Set<string>): number {
  while (i < words.length) {
    const t = words[i].text;
    if (t === '--') return i + 1;
    if (!t.startsWith('-') || t === '-') return i;
    i += argOpts.has(t) ? 2 : 1;
  }
  return i;
}

/** Peels wrappers off a simple command until the real command is first. */
export function unwrap(input: Word[], env: { home: string; cwd: string }): Unwrapped {
  let words = input;
  const u: Unwrapped = { words, elevated: false, viaXargs: false, script: null, query: false, chdir: null };
  for (let guard = 0; guard < 20; guard++) {
    let i = 0;
    while (i < words.length && isAssignment(words[i])) i++;
    words = words.slice(i);
    if (words.length === 0) break;
    const name = base(words[0].text);
    let next: Word[] | null = null;
    switch (name) {
      case 'sudo':
      case 'doas':
      case 'run0':
      case 'pkexec': {
        u.elevated = true;
        let shellMode = false;
        let j = 1;
        while (j < words.length) {
          const t = words[j].text;
          if (t === '--') {
            j++;
            break;
          }
          if (!t.startsWith('-') || t === '-') break;
          if (t === '-D' || t === '--chdir') u.chdir = words[j + 1]?.text ?? null;
          if (t.startsWith('--chdir=')) u.chdir = t.slice(8);
          if (/^-[a-zA-Z]*[si]/.test(t) && !t.startsWith('--')) shellMode = true;
          if (t === '--shell' || t === '--login') shellMode = true;
          if (SUDO_ARG_OPTS.has(t)) j += 2;
          else if (!t.startsWith('--') && t.length > 2 && SUDO_ARG_OPTS.has('-' + t[t.length - 1])) j += 2; // -Eu root
          else j++;
        }
        next = words.slice(j);
        if (shellMode && next.length > 0) {
          // sudo -s CMD / sudo -i CMD run CMD through a shell.
          u.script = next.map((w) => w.text).join(' ');
          next = [];
        }
        break;
      }
      case 'env': {
        let j = 1;
        while (j < words.length) {
          const t = words[j].text;
          if (t === '--') {
            j++;
            break;
          }
          if (t === '-S' || t === '--split-string' || t.startsWith('--split-string=') || (t.startsWith('-S') && t.length > 2)) {
            const str = t === '-S' || t === '--split-string' ? words[j + 1]?.text ?? '' : t.startsWith('-S') ? t.slice(2) : t.slice(15);
            const split = parseShell(str, { home: env.home, cwd: env.cwd }).commands[0]?.words ?? [];
            const rest = words.slice(j + (t === '-S' || t === '--split-string' ? 2 : 1));
            next = [...split, ...rest];
            break;
          }
          if (t === '-u' || t === '--unset' || t === '-C' || t === '--chdir') {
            if (t === '-C' || t === '--chdir') u.chdir = words[j + 1]?.text ?? null;
            j += 2;
          } else if (t.startsWith('-') || isAssignment(words[j])) {
            if (t.startsWith('--chdir=')) u.chdir = t.slice(8);
            j++;
          } else break;
        }
        if (!next) next = words.slice(j);
        break;
      }
      case 'command':
      case 'builtin': {
        const j = skipOptions(words, 1, new Set());
        if (words.slice(1, j).some((w) => /^-[a-zA-Z]*[vV]/.test(w.text))) u.query = true;
        next = words.slice(j);
        break;
      }
      case 'exec':
        next = words.slice(skipOptions(words, 1, new Set(['-a'])));
        break;
      case 'nohup':
      case 'setsid':
      case 'unbuffer':
      case 'chronic':
      case 'caffeinate':
      case 'time':
      case 'busybox':
      case 'catchsegv':
        next = words.slice(skipOptions(words, 1, new Set()));
        break;
      case 'nice':
        next = words.slice(skipOptions(words, 1, new Set(['-n', '--adjustment'])));
        if (next[0] && /^-\d+$/.test(next[0].text)) next = next.slice(1);
        break;
      case 'ionice':
        next = words.slice(skipOptions(words, 1, new Set(['-c', '-n', '-p', '-P', '-u', '--class', '--classdata'])));
        break;
      case 'stdbuf':
        next = words.slice(skipOptions(words, 1, new Set(['-i', '-o', '-e'])));
        break;
      case 'timeout': {
        const j = skipOptions(words, 1, TIMEOUT_ARG_OPTS);
        next = words.slice(j + 1); // the duration
        break;
      }
      case 'chroot':
      case 'taskset': {
        const j = skipOptions(words, 1, new Set(['--userspec', '--groups']));
        next = words.slice(j + 1);
        break;
      }
      case 'flock': {
        const j = skipOptions(words, 1, new Set(['-w', '--timeout', '-E', '--conflict-exit-code']));
        const cIdx = words.findIndex((w, k) => k > 0 && (w.text === '-c' || w.text === '--command'));
        if (cIdx > 0) u.script = words[cIdx + 1]?.text ?? '';
        next = words.slice(j + 1);
        break;
      }
      case 'watch': {
        const j = skipOptions(words, 1, new Set(['-n', '--interval', '-d', '-q']));
        u.script = words.slice(j).map((w) => w.text).join(' ');
        next = [];
        break;
      }
      case 'xargs': {
        u.viaXargs = true;
        next = words.slice(skipOptions(words, 1, XARGS_ARG_OPTS));
        break;
      }
      default:
        break;
    }
    if (next === null) break;
    words = next;
  }
  u.words = words;
  return u;
}

/** For a shell invocation: its -c script, or whether it reads the script from stdin. */
function shellScript(argv: string[]): { script: string | null; readsStdin: boolean } {
  let cFlag = false;
  for (let i = 1; i < argv.length; i++) {
    const t = argv[i];
    if (t === '--') {
      i++;
      if (cFlag) return { script: argv[i] ?? '', readsStdin: false };
      return { script: null, readsStdin: i >= argv.length };
    }
    if (t === '-o' || t === '+o' || t === '-O' || t === '+O' || t === '--rcfile' || t === '--init-file') {
      i++;
      continue;
    }
    if (/^[-+][a-zA-Z]+$/.test(t)) {
      if (t.startsWith('-') && t.includes('c')) cFlag = true;
      if (t.startsWith('-') && t.includes('s') && !cFlag) return { script: null, readsStdin: true };
      continue;
    }
    if (t.startsWith('--')) continue;
    return cFlag ? { script: t, readsStdin: false } : { script: null, readsStdin: false };
  }
  return { script: null, readsStdin: !cFlag };
}

function interpreterReadsStdin(argv: string[]): boolean {
  const args = argv.slice(1);
  const inline = args.some((a) => a === '-c' || a === '-e' || a === '-E' || a === '-r');
  if (inline) return false;
  const operands = args.filter((a) => !a.startsWith('-') || a === '-');
  return operands.length === 0 || operands[0] === '-';
}

/** Runs a shell or an interpreter on its standard input. */
export function readsScriptFromStdin(argv: string[]): boolean {
  const name = base(argv[0] ?? '');
  if (SHELLS.has(name)) return shellScript(argv).readsStdin;
  if (INTERPRETERS.has(name.replace(/[\d.]+$/, '')) || INTERPRETERS.has(name)) return interpreterReadsStdin(argv);
  return false;
}

const text = (ws: Word[]) => ws.map((w) => w.text);

interface Walk {
  env: AnalyzeEnv;
  out: Invocation[];
  findings: Finding[];
  critical: string | null;
}

/** Analyses a command line. */
export function analyzeCommand(command: string, env: AnalyzeEnv): Analysis {
  const walk: Walk = { env, out: [], findings: [], critical: null };
  collect(walk, command, env.cwd, 0, false);
  for (const inv of walk.out) checkInvocation(walk, inv);
  return { findings: dedupe(walk.findings), invocations: walk.out, critical: walk.critical };
}

function dedupe(fs: Finding[]): Finding[] {
  const seen = new Set<string>();
  return fs.filter((f) => {
    const k = `${f.level}|${f.reason}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function collect(walk: Walk, script: string, startCwd: string | null, depth: number, nested: boolean): void {
  if (depth > MAX_DEPTH) {
    walk.findings.push({ check: 'suspicious', level: 'warn', reason: `commands nested more than ${MAX_DEPTH} levels deep were not all checked` });
    return;
  }
  const parsed = parseShell(script, { home: walk.env.home, cwd: startCwd ?? walk.env.cwd });
  for (const name of parsed.forkBombs) {
    walk.findings.push({ check: 'dangerous', level: 'block', reason: `fork bomb: function ${name} starts copies of itself without end` });
  }
  let cwd = startCwd;
  const byPipeline = new Map<number, Invocation[]>();
  for (const cmd of parsed.commands) {
    const inv = toInvocation(walk, cmd, cwd, depth, nested);
    if (!inv) continue;
    // Track cd for the commands that follow (subshell scoping is ignored: the cautious reading).
    if (inv.argv[0] === 'cd' || inv.argv[0] === 'pushd') {
      const target = inv.words[1];
      if (!target || target.text === '~') cwd = walk.env.home;
      else if (target.dynamic || target.text === '-' || cwd === null) cwd = null;
      else cwd = resolveFrom(cwd, target.text);
      continue;
    }
    const upstream = byPipeline.get(cmd.pipeline) ?? [];
    inv.upstream = [...upstream];
    upstream.push(inv);
    byPipeline.set(cmd.pipeline, upstream);
    walk.out.push(inv);
    expandNested(walk, inv, cmd, depth);
  }
}

function toInvocation(walk: Walk, cmd: SimpleCommand, cwd: string | null, depth: number, nested: boolean): Invocation | null {
  const u = unwrap(cmd.words, { home: walk.env.home, cwd: cwd ?? walk.env.cwd });
  const runCwd = u.chdir !== null && cwd !== null ? resolveFrom(cwd, u.chdir) : cwd;
  if (u.script !== null) collect(walk, u.script, runCwd, depth + 1, true);
  if (u.query || (u.words.length === 0 && cmd.redirects.length === 0)) return null;
  const words = u.words.map((w, k) => (k === 0 && w.text.startsWith('\\') ? { ...w, text: w.text.slice(1) } : w));
  const argv = text(words);
  if (argv[0]?.includes('/') && !argv[0].startsWith('./')) argv[0] = base(argv[0]);
  return { argv, words, redirects: cmd.redirects, cwd: runCwd, elevated: u.elevated, viaXargs: u.viaXargs, upstream: [], nested };
}

/** Scripts inside an invocation: sh -c, eval, source of a substitution, heredocs into a shell, echo | sh, find -exec. */
function expandNested(walk: Walk, inv: Invocation, cmd: SimpleCommand, depth: number): void {
  const name = inv.argv[0];
  if (SHELLS.has(name)) {
    const { script, readsStdin } = shellScript(inv.argv);
    if (script !== null) collect(walk, script, inv.cwd, depth + 1, true);
    if (readsStdin) {
      for (const r of cmd.redirects) if (r.body !== undefined) collect(walk, r.body, inv.cwd, depth + 1, true);
      // echo 'script' | sh: the echoed text is the script.
      const feeder = inv.upstream[inv.upstream.length - 1];
      if (feeder && (feeder.argv[0] === 'echo' || feeder.argv[0] === 'printf') && !feeder.words.some((w) => w.dynamic)) {
        const body = feeder.argv.slice(1).filter((a, k) => !(k === 0 && /^-[neE]+$/.test(a))).join(' ');
        collect(walk, body.replace(/\\n/g, '\n'), inv.cwd, depth + 1, true);
      }
    }
  } else if (name === 'eval') {
    collect(walk, inv.argv.slice(1).join(' '), inv.cwd, depth + 1, true);
  } else if (name === 'find') {
    findExec(walk, inv, depth);
  }
}

/** find ROOTS... tests... -exec CMD {} ; : each -exec command runs with {} as a found path. */
function findRoots(inv: Invocation): { roots: Word[]; filtered: boolean; exprStart: number } {
  let i = 1;
  while (i < inv.words.length && /^-[HLP]$|^-O\d$|^-D$/.test(inv.words[i].text)) i += inv.words[i].text === '-D' ? 2 : 1;
  const roots: Word[] = [];
  while (i < inv.words.length && !/^[-(!]/.test(inv.words[i].text)) roots.push(inv.words[i++]);
  const tests = inv.argv.slice(i);
  const filtered = tests.some((a) => /^-(i?name|i?path|i?regex|i?wholename|newer\w*|[amc](time|min)|size|empty|user|group|perm|links|inum|samefile|mindepth|lname)$/.test(a));
  return { roots: roots.length > 0 ? roots : [{ text: '.', dynamic: false, glob: false, subs: [], quoted: false }], filtered, exprStart: i };
}

function findExec(walk: Walk, inv: Invocation, depth: number): void {
  const { roots, filtered } = findRoots(inv);
  for (let i = 1; i < inv.words.length; i++) {
    if (!/^-(exec|execdir|ok|okdir)$/.test(inv.argv[i])) continue;
    let j = i + 1;
    const words: Word[] = [];
    while (j < inv.words.length && inv.argv[j] !== ';' && inv.argv[j] !== '+') words.push(inv.words[j++]);
    for (const root of roots) {
      const replaced = words.map((w) =>
        w.text.includes('{}')
          ? { ...w, text: w.text.replace(/\{\}/g, filtered ? `${root.text}/…` : root.text), dynamic: w.dynamic || root.dynamic || filtered }
          : w,
      );
      const sub = unwrap(replaced, { home: walk.env.home, cwd: inv.cwd ?? walk.env.cwd });
      if (sub.script !== null) collect(walk, sub.script, inv.cwd, depth + 1, true);
      if (sub.words.length === 0) continue;
      const child: Invocation = { ...inv, argv: text(sub.words), words: sub.words, redirects: [], elevated: inv.elevated || sub.elevated, viaXargs: false, upstream: [], nested: true };
      child.argv[0] = base(child.argv[0]);
      walk.out.push(child);
      if (SHELLS.has(child.argv[0])) {
        const { script } = shellScript(child.argv);
        if (script !== null) collect(walk, script, inv.cwd, depth + 1, true);
      }
    }
    i = j;
  }
}

// ---------------------------------------------------------------------------
// Checks

function block(walk: Walk, check: Check, reason: string, suggestion?: string): void {
  walk.findings.push({ check, level: 'block', reason, suggestion });
}
function warn(walk: Walk, check: Check, reason: string, suggestion?: string): void {
  walk.findings.push({ check, level: 'warn', reason, suggestion });
}
function critical(walk: Walk, what: string): void {
  walk.critical ??= what;
}

/** Operands of a command: words that are not options (all words after `--`). */
function operands(words: Word[], argOpts: Set<string> = new Set()): Word[] {
  const out: Word[] = [];
  let ended = false;
  for (let i = 1; i < words.length; i++) {
    const t = words[i].text;
    if (!ended && t === '--') {
      ended = true;
      continue;
    }
    if (!ended && t.startsWith('-') && t !== '-') {
      if (argOpts.has(t)) i++;
      continue;
    }
    out.push(words[i]);
  }
  return out;
}

interface Target {
  word: Word;
  /** Absolute path; null when it cannot be known (dynamic, unknown cwd). */
  abs: string | null;
  /** The glob covers everything in `abs` (`dir/*`, `*`). */
  wholeDir: boolean;
}

function target(inv: Invocation, w: Word): Target {
  if (w.text.startsWith('$(…)') || (w.dynamic && /^\$\{?[A-Za-z_]/.test(w.text))) return { word: w, abs: null, wholeDir: false };
  let p = w.text;
  let wholeDir = false;
  if (w.glob) {
    const segs = p.split('/');
    const g = segs.findIndex((s) => /[*?[]/.test(s));
    if (g >= 0) {
      const globSeg = segs[g];
      wholeDir = g === segs.length - 1 && /^(\*|\.\*|\.\[!.\]\*|\*\.\*|\.?\*\/?)$/.test(globSeg);
      p = segs.slice(0, g).join('/') || (p.startsWith('/') ? '/' : '.');
      if (!wholeDir) p = `${p}/${globSeg}`;
    }
  }
  if (!p.startsWith('/') && inv.cwd === null) return { word: w, abs: null, wholeDir };
  return { word: w, abs: resolveFrom(inv.cwd ?? '/', p), wholeDir };
}

const SHORT = (t: string, letters: string) => /^-[a-zA-Z]+$/.test(t) && [...letters].some((c) => t.includes(c));

function checkInvocation(walk: Walk, inv: Invocation): void {
  const env = walk.env;
  const name = inv.argv[0] ?? '';
  const args = inv.argv.slice(1);

  checkRedirects(walk, inv);
  checkPipelineIntoShell(walk, inv);
  checkSubstitutionsRun(walk, inv);

  if (inv.elevated) warn(walk, 'suspicious', `runs with root privileges (sudo ${name})`);

  switch (name) {
    case 'rm':
    case 'srm': {
      const recursive = args.some((a) => SHORT(a, 'rR') || a === '--recursive');
      if (args.includes('--no-preserve-root')) block(walk, 'dangerous', 'rm --no-preserve-root removes the safeguard against deleting /');
      const targets = xargsTargets(inv) ?? operands(inv.words).map((w) => target(inv, w));
      for (const t of targets) checkDelete(walk, inv, t, recursive, 'rm');
      if (recursive) critical(walk, `rm ${args.join(' ')}`);
      break;
    }
    case 'rmdir':
    case 'unlink':
    case 'truncate':
    case 'shred': {
      for (const w of operands(inv.words, new Set(['-s', '-n', '--size', '--iterations']))) {
        const t = target(inv, w);
        if (t.abs && isDiskDevice(t.abs)) block(walk, 'dangerous', `${name} on the disk device ${t.abs} destroys its data`, 'check the device with lsblk first; nothing on a disk device can be undone');
        else checkWrite(walk, inv, t, name);
      }
      break;
    }
    case 'mv': {
      const ops = operands(inv.words, new Set(['-t', '-S', '--target-directory', '--suffix']));
      const tIdx = inv.argv.findIndex((a) => a === '-t' || a === '--target-directory');
      const dest = tIdx > 0 ? inv.words[tIdx + 1] : ops[ops.length - 1];
      const sources = tIdx > 0 ? ops.filter((w) => w !== dest) : ops.slice(0, -1);
      for (const s of sources) checkDelete(walk, inv, target(inv, s), true, 'mv');
      if (dest) {
        const d = target(inv, dest);
        if (d.abs === '/dev/null' && sources.length > 0) block(walk, 'dangerous', `mv onto /dev/null destroys ${sources.map((s) => s.text).join(' ')}`);
        else checkWrite(walk, inv, d, 'mv');
      }
      break;
    }
    case 'cp':
    case 'install':
    case 'ln':
    case 'rsync':
    case 'scp': {
      const argOpts = new Set(['-t', '-S', '-m', '-o', '-g', '--target-directory', '--suffix', '--mode', '--owner', '--group', '-e', '--exclude', '--include', '-P', '-i']);
      const ops = operands(inv.words, argOpts);
      const tIdx = inv.argv.findIndex((a) => a === '-t' || a === '--target-directory');
      const dest = tIdx > 0 ? inv.words[tIdx + 1] : ops.length >= 2 || name === 'install' ? ops[ops.length - 1] : undefined;
      if (dest) checkWrite(walk, inv, target(inv, dest), name);
      for (const src of ops.filter((w) => w !== dest)) checkRead(walk, inv, target(inv, src), name);
      if (name === 'rsync' && args.some((a) => a.startsWith('--delete'))) critical(walk, `rsync --delete`);
      break;
    }
    case 'tee':
    case 'touch':
    case 'mkdir':
      for (const w of operands(inv.words, new Set(['-m', '--mode', '-d', '-t', '-r']))) checkWrite(walk, inv, target(inv, w), name);
      break;
    case 'sed':
    case 'perl': {
      if (!args.some((a) => /^-[a-zA-Z]*i/.test(a) || a.startsWith('--in-place'))) {
        for (const w of operands(inv.words, new Set(['-e', '-f']))) checkRead(walk, inv, target(inv, w), name);
        break;
      }
      const hasScriptOpt = args.some((a) => a === '-e' || a === '-f' || a === '--expression');
      const ops = operands(inv.words, new Set(['-e', '-f', '--expression', '--file']));
      for (const w of hasScriptOpt ? ops : ops.slice(1)) checkWrite(walk, inv, target(inv, w), `${name} -i`);
      break;
    }
    case 'dd':
      for (const a of inv.words.slice(1)) {
        if (a.text.startsWith('of=')) {
          const t = target(inv, { ...a, text: a.text.slice(3) });
          if (t.abs && isDiskDevice(t.abs)) block(walk, 'dangerous', `dd writes straight onto the disk device ${t.abs}`, 'check the device with lsblk first and write to an image file instead');
          else checkWrite(walk, inv, t, 'dd');
        }
        if (a.text.startsWith('if=')) checkRead(walk, inv, target(inv, { ...a, text: a.text.slice(3) }), 'dd');
      }
      break;
    case 'chmod':
    case 'chown':
    case 'chgrp':
      checkPermissions(walk, inv);
      break;
    case 'find':
      checkFind(walk, inv);
      break;
    case 'git':
      checkGit(walk, inv);
      break;
    case 'curl':
    case 'wget': {
      const outOpts = name === 'curl' ? ['-o', '--output'] : ['-O', '--output-document'];
      inv.words.forEach((w, k) => {
        if (outOpts.includes(w.text) && inv.words[k + 1] && inv.words[k + 1].text !== '-') checkWrite(walk, inv, target(inv, inv.words[k + 1]), name);
      });
      break;
    }
    case 'shutdown':
    case 'reboot':
    case 'halt':
    case 'poweroff':
      block(walk, 'dangerous', `${name} stops or restarts the machine`);
      break;
    case 'init':
    case 'telinit':
      if (args.some((a) => a === '0' || a === '6')) block(walk, 'dangerous', `${name} ${args.join(' ')} stops or restarts the machine`);
      break;
    case 'systemctl':
      if (args.some((a) => ['poweroff', 'reboot', 'halt', 'kexec', 'emergency', 'rescue'].includes(a))) block(walk, 'dangerous', `systemctl ${args.join(' ')} stops or restarts the machine`);
      break;
    case 'kill':
    case 'pkill':
    case 'killall': {
      // kill [-SIG | -s SIG | -n N] [--] PID...: the first option is the signal, the rest are targets.
      let k = 0;
      let signal: string | null = null;
      if (args[0] === '-s' || args[0] === '-n') {
        signal = args[1] ?? null;
        k = 2;
      } else if (args[0]?.startsWith('-') && args[0] !== '--') {
        signal = args[0].slice(1);
        k = 1;
      }
      if (args[k] === '--') k++;
      const pids = args.slice(k);
      if (name === 'kill' && pids.some((p) => p === '-1' || p === '1')) block(walk, 'dangerous', 'kill -1 / kill 1 signals every process (or init)');
      else if (signal !== null && /^(9|KILL|SIGKILL)$/.test(signal)) warn(walk, 'suspicious', `${name} -9 gives the process no chance to clean up`, `try ${name} (SIGTERM) first`);
      break;
    }
    case 'killall5':
      block(walk, 'dangerous', 'killall5 signals every process on the machine');
      break;
    case 'crontab':
      if (args.includes('-r')) warn(walk, 'suspicious', 'crontab -r deletes every cron job without asking', 'crontab -l > crontab.bak first, or use crontab -e');
      break;
    case 'history':
      if (args.includes('-c')) warn(walk, 'suspicious', 'history -c erases the shell history');
      break;
    case 'iptables':
    case 'ip6tables':
    case 'nft':
      if (args.some((a) => a === '-F' || a === '--flush' || a === 'flush')) warn(walk, 'suspicious', `${name} flush removes every firewall rule`);
      break;
    case 'setenforce':
      if (args.includes('0')) warn(walk, 'suspicious', 'setenforce 0 turns SELinux off');
      break;
    case 'docker':
    case 'podman':
      if ((args.includes('system') && args.includes('prune')) || (args.includes('volume') && (args.includes('prune') || args.includes('rm')))) {
        warn(walk, 'suspicious', `${name} ${args.slice(0, 2).join(' ')} deletes containers, images or volumes for good`);
      }
      break;
    case 'eval':
      if (inv.words.slice(1).some((w) => w.dynamic)) warn(walk, 'suspicious', 'eval of text that is only known at run time');
      break;
    case 'nc':
    case 'ncat':
    case 'netcat':
      if (args.some((a) => a === '-e' || a === '-c' || a === '--exec' || a === '--sh-exec')) block(walk, 'dangerous', `${name} -e hands a shell to a network connection`);
      break;
    default:
      if (/^mkfs(\.|$)/.test(name) || ['mke2fs', 'mkswap', 'wipefs', 'mkdosfs', 'mkntfs', 'mkexfatfs'].includes(name)) {
        block(walk, 'dangerous', `${name} formats a filesystem, erasing what was on it`);
      } else if (['fdisk', 'sfdisk', 'cfdisk', 'parted', 'sgdisk', 'gdisk'].includes(name)) {
        const listing = args.some((a) => a === '-l' || a === '--list' || a === 'print' || a === '-p');
        if (!listing && args.some((a) => a.startsWith('/dev/'))) block(walk, 'dangerous', `${name} rewrites the partition table of ${args.find((a) => a.startsWith('/dev/'))}`);
      }
  }
  if (!HANDLES_PATHS.has(name)) {
    for (const w of operands(inv.words)) checkRead(walk, inv, target(inv, w), name);
  }
  checkTraversal(walk, inv);
}

/** Commands whose path operands the switch above checks itself. */
const HANDLES_PATHS = new Set(['rm', 'srm', 'rmdir', 'unlink', 'truncate', 'shred', 'mv', 'cp', 'install', 'ln', 'rsync', 'scp', 'tee', 'touch', 'mkdir', 'sed', 'perl', 'dd', 'chmod', 'chown', 'chgrp', 'find', 'git', 'cd', 'echo', 'printf']);

/** xargs rm ...: the paths come from the previous stage of the pipeline (find ROOT, echo PATHS). */
function xargsTargets(inv: Invocation): Target[] | null {
  if (!inv.viaXargs) return null;
  const feeder = inv.upstream[inv.upstream.length - 1];
  if (!feeder) return [{ word: { text: '<stdin>', dynamic: true, glob: false, subs: [], quoted: false }, abs: null, wholeDir: false }];
  if (feeder.argv[0] === 'find') {
    const { roots, filtered } = findRoots(feeder);
    return roots.map((r) => {
      const t = target(feeder, r);
      return filtered ? { ...t, abs: t.abs === null ? null : `${t.abs === '/' ? '' : t.abs}/…` } : t;
    });
  }
  if (feeder.argv[0] === 'echo' || feeder.argv[0] === 'printf' || feeder.argv[0] === 'ls') {
    return operands(feeder.words).map((w) => target(feeder, w));
  }
  return [{ word: { text: '<stdin>', dynamic: true, glob: false, subs: [], quoted: false }, abs: null, wholeDir: false }];
}

function checkDelete(walk: Walk, inv: Invocation, t: Target, recursive: boolean, verb: string): void {
  const env = walk.env;
  if (t.abs === null) {
    if (recursive && t.word.dynamic) {
      warn(walk, 'suspicious', `${verb} -r on "${t.word.text}", a path only known at run time: if it is empty or unset this deletes far more than intended`, 'check the variable first: [ -n "$DIR" ] && rm -rf -- "$DIR"');
    }
    return;
  }
  if (recursive || t.wholeDir) {
    const c = classifyDelete(t.abs, env);
    if (c && c !== 'system') {
      block(walk, 'dangerous', describeDelete(c, t.abs), 'name the exact directory to remove, e.g. rm -rf ./build');
      return;
    }
    if (c === 'system' && recursive) {
      block(walk, 'system', describeDelete(c, t.abs), 'system directories are managed by the package manager');
      return;
    }
  }
  if (isSystemPath(t.abs) || isSecretPath(t.abs, env)) {
    block(walk, 'system', `${verb} would delete the system or secret file ${t.abs}`);
    return;
  }
  if (recursive && !isUnder(t.abs, env.project) && !isUnder(t.abs, '/tmp') && !isUnder(t.abs, '/var/tmp') && !t.word.text.startsWith('..')) {
    warn(walk, 'suspicious', `${verb} -r of ${t.abs}, outside the project`);
  }
}

function checkWrite(walk: Walk, inv: Invocation, t: Target, verb: string): void {
  if (t.abs === null) return;
  if (isDiskDevice(t.abs)) {
    block(walk, 'dangerous', `${verb} writes onto the disk device ${t.abs}`);
    return;
  }
  if (isSystemPath(t.abs)) block(walk, 'system', `${verb} writes to the system path ${t.abs}`, 'system files are changed through the package manager or a reviewed config change, not by the assistant');
  else if (isSecretPath(t.abs, walk.env)) block(walk, 'system', `${verb} writes to the credentials file ${t.abs}`);
}

function checkRead(walk: Walk, inv: Invocation, t: Target, verb: string): void {
  if (t.abs && isSecretPath(t.abs, walk.env)) warn(walk, 'system', `${verb} reads the secret file ${t.abs}`);
}

function checkRedirects(walk: Walk, inv: Invocation): void {
  for (const r of inv.redirects) {
    const out = ['>', '>>', '>|', '&>', '&>>', '<>'].includes(r.op) || (r.op === '>&' && !/^(\d+|-)$/.test(r.target.text));
    const p = r.target.text;
    if (/^\/dev\/(tcp|udp)\//.test(p)) {
      const shell = SHELLS.has(inv.argv[0] ?? '');
      if (shell) block(walk, 'dangerous', `${inv.argv[0]} connected to ${p}: a reverse shell`);
      else warn(walk, 'suspicious', `redirection to the network socket ${p}`);
      continue;
    }
    const t = target(inv, r.target);
    if (out) checkWrite(walk, inv, t, `redirection (${r.op})`);
    else if (r.op === '<') checkRead(walk, inv, t, 'input redirection');
  }
}

/** A downloader (or a decoder) feeding a shell or interpreter through a pipe. */
function checkPipelineIntoShell(walk: Walk, inv: Invocation): void {
  if (inv.upstream.length === 0 || !readsScriptFromStdin(inv.argv)) return;
  const dl = inv.upstream.find((u) => DOWNLOADERS.has(u.argv[0]));
  if (dl) {
    block(
      walk,
      'dangerous',
      `piping a download (${dl.argv[0]}) straight into ${inv.argv[0]} runs unreviewed code`,
      `download to a file, read it, then run it: ${dl.argv[0] === 'wget' ? 'wget -O install.sh URL' : 'curl -fsSLo install.sh URL'} && less install.sh && sh install.sh`,
    );
    return;
  }
  const dec = inv.upstream.find((u) => DECODERS.has(u.argv[0]) && (u.argv[0] !== 'openssl' || u.argv.includes('-d') || u.argv.includes('enc')));
  if (dec && (dec.argv.includes('-d') || dec.argv.includes('--decode') || dec.argv.includes('-r') || ['gunzip', 'zcat', 'rev', 'tr'].includes(dec.argv[0]))) {
    block(walk, 'dangerous', `decoding text (${dec.argv[0]}) into ${inv.argv[0]} runs commands hidden from review`, 'decode to a file and read it first');
  }
}

/** sh -c "$(curl ...)", bash <(curl ...), eval "$(wget -O- ...)", source <(curl ...). */
function checkSubstitutionsRun(walk: Walk, inv: Invocation): void {
  const name = inv.argv[0] ?? '';
  const runs = SHELLS.has(name) || name === 'eval' || name === 'source' || name === '.' || INTERPRETERS.has(name.replace(/[\d.]+$/, ''));
  if (!runs) return;
  for (const w of inv.words.slice(1)) {
    for (const sub of w.subs) {
      const inner = parseShell(sub, { home: walk.env.home, cwd: inv.cwd ?? walk.env.cwd }).commands;
      const dl = inner.map((c) => unwrap(c.words, { home: walk.env.home, cwd: walk.env.cwd }).words[0]?.text).find((n) => n && DOWNLOADERS.has(base(n)));
      if (dl) {
        block(walk, 'dangerous', `${name} runs code downloaded by ${dl} without review`, `download to a file, read it, then run it: curl -fsSLo install.sh URL && less install.sh && sh install.sh`);
        return;
      }
    }
  }
}

function checkPermissions(walk: Walk, inv: Invocation): void {
  const name = inv.argv[0];
  const recursive = inv.argv.slice(1).some((a) => SHORT(a, 'R') || a === '--recursive');
  const ops = operands(inv.words, new Set(['--reference']));
  if (ops.length === 0) return;
  const [spec, ...files] = ops;
  const mode = spec.text;
  const worldWritable = name === 'chmod' && (/^0?[0-7]?[0-7][0-7]7$/.test(mode) || /(^|,)(a|o|ugo)?[+=][rwxXst]*w/.test(mode) && /(^|,)(a|o)/.test(mode));
  const setuid = name === 'chmod' && (/^[2-7][0-7]{3}$/.test(mode) || /[+=][rwx]*s/.test(mode));
  for (const f of files) {
    const t = target(inv, f);
    if (t.abs === null) continue;
    const c = classifyDelete(t.abs, walk.env);
    if (c === 'root' || c === 'home' || c === 'ancestor' || c === 'top-level' || (c === 'system' && recursive)) {
      if (recursive || c === 'root') {
        block(walk, 'dangerous', `${name}${recursive ? ' -R' : ''} ${mode} on ${t.abs} changes ${c === 'root' ? 'the whole filesystem' : 'a tree the system or the user depends on'}`, name === 'chmod' ? 'change only the files that need it, e.g. chmod 644 FILE or chmod u+x script.sh' : undefined);
        continue;
      }
    }
    if (isSystemPath(t.abs)) {
      block(walk, 'system', `${name} on the system path ${t.abs}`);
      continue;
    }
    if (worldWritable) warn(walk, 'suspicious', `${name} ${mode} makes ${f.text} writable by every user`, 'chmod 755 for directories and programs, chmod 644 for files (u+x to make a script executable)');
    else if (setuid) warn(walk, 'suspicious', `${name} ${mode} sets the setuid/setgid bit on ${f.text}`);
    else if (recursive && (c === 'project' || t.wholeDir)) warn(walk, 'suspicious', `${name} -R ${mode} on the whole project`);
  }
}

function checkFind(walk: Walk, inv: Invocation): void {
  if (!inv.argv.includes('-delete')) return;
  const { roots, filtered } = findRoots(inv);
  critical(walk, `find -delete`);
  for (const r of roots) {
    const t = target(inv, r);
    if (t.abs === null) continue;
    const c = classifyDelete(t.abs, walk.env);
    if (c && !filtered) block(walk, c === 'system' ? 'system' : 'dangerous', `find -delete with no filter: ${describeDelete(c, t.abs)}`, 'add a filter (-name, -type, -mtime) and run it first without -delete to see the list');
    else if (c && c !== 'project') warn(walk, 'suspicious', `find ${t.abs} ... -delete deletes matching files across ${t.abs}`, 'run it first without -delete to see the list');
  }
}

function gitCurrentBranch(walk: Walk): string | null {
  return walk.env.currentBranch?.() ?? null;
}

function checkGit(walk: Walk, inv: Invocation): void {
  let i = 1;
  const argv = inv.argv;
  while (i < argv.length && argv[i].startsWith('-')) i += ['-C', '-c', '--git-dir', '--work-tree', '--namespace'].includes(argv[i]) ? 2 : 1;
  const sub = argv[i];
  const rest = argv.slice(i + 1);
  const has = (...flags: string[]) => rest.some((a) => flags.includes(a));
  switch (sub) {
    case 'push': {
      const forceShort = rest.some((a) => /^-[a-zA-Z]*f[a-zA-Z]*$/.test(a));
      const lease = rest.some((a) => a.startsWith('--force-with-lease'));
      const force = forceShort || has('--force') || lease;
      const ops: string[] = [];
      for (let k = 0; k < rest.length; k++) {
        const a = rest[k];
        if (a.startsWith('-')) {
          if (['--repo', '--receive-pack', '--exec', '-o', '--push-option'].includes(a)) k++;
          continue;
        }
        ops.push(a);
      }
      const refspecs = ops.slice(1);
      const deleting = has('--delete', '-d');
      let plusForce = false;
      const dests = refspecs.map((r) => {
        if (r.startsWith('+')) plusForce = true;
        const spec = r.replace(/^\+/, '');
        const dst = spec.includes(':') ? spec.slice(spec.indexOf(':') + 1) : spec;
        if (spec.startsWith(':')) return { branch: dst.replace(/^refs\/heads\//, ''), del: true };
        return { branch: (dst === 'HEAD' ? gitCurrentBranch(walk) ?? 'HEAD' : dst).replace(/^refs\/heads\//, ''), del: deleting };
      });
      const protectedDest = dests.find((d) => PROTECTED_BRANCHES.has(d.branch));
      if (protectedDest?.del) {
        block(walk, 'dangerous', `git push deletes the protected branch ${protectedDest.branch} on the remote`);
        break;
      }
      if (force || plusForce) {
        const current = refspecs.length === 0 ? gitCurrentBranch(walk) : null;
        const target = protectedDest?.branch ?? (current && PROTECTED_BRANCHES.has(current) ? current : null);
        if (target) {
          block(walk, 'dangerous', `force-push over ${target} rewrites history others have pulled`, 'push to a feature branch and open a pull request; if main must change, use git revert');
        } else if (!lease) {
          warn(walk, 'suspicious', `force-push${dests[0] ? ` of ${dests[0].branch}` : ' of the current branch'} overwrites the remote branch`, `git push --force-with-lease ${ops.join(' ')}`.trim());
        }
      }
      if (has('--mirror')) warn(walk, 'suspicious', 'git push --mirror overwrites and deletes remote refs to match this repository');
      break;
    }
    case 'reset':
      if (has('--hard')) {
        warn(walk, 'suspicious', 'git reset --hard discards uncommitted changes', 'git stash first, or git reset --keep');
        critical(walk, 'git reset --hard');
      }
      break;
    case 'clean':
      if (rest.some((a) => /^-[a-zA-Z]*f/.test(a) || a === '--force') && !rest.some((a) => /^-[a-zA-Z]*n/.test(a) || a === '--dry-run')) {
        warn(walk, 'suspicious', 'git clean -f deletes untracked files for good', 'run git clean -n first to see what would go');
        critical(walk, 'git clean');
      }
      break;
    case 'checkout':
    case 'restore':
      if ((sub === 'checkout' && (rest.includes('--') && rest.includes('.') || has('-f', '--force'))) || (sub === 'restore' && rest.some((a) => a === '.' || a === ':/'))) {
        warn(walk, 'suspicious', `git ${sub} ${rest.join(' ')} discards uncommitted changes`, 'git stash first');
        critical(walk, `git ${sub}`);
      }
      break;
    case 'stash':
      if (rest[0] === 'clear' || rest[0] === 'drop') {
        warn(walk, 'suspicious', `git stash ${rest[0]} deletes stashed work`);
        critical(walk, `git stash ${rest[0]}`);
      }
      break;
    case 'branch':
      if (rest.some((a) => a === '-D' || (a === '--delete' && has('--force'))) && rest.some((a) => PROTECTED_BRANCHES.has(a))) {
        warn(walk, 'suspicious', 'deleting the main branch locally');
      }
      break;
    case 'filter-branch':
      warn(walk, 'suspicious', 'git filter-branch rewrites the whole history', 'git filter-repo is safer and faster');
      break;
  }
}

/** Paths that climb out of the project with `..`. */
function checkTraversal(walk: Walk, inv: Invocation): void {
  if (inv.cwd === null) return;
  const env = walk.env;
  const name = inv.argv[0] ?? '';
  const allWrite = new Set(['rm', 'mv', 'tee', 'touch', 'mkdir', 'truncate', 'shred', 'chmod', 'chown', 'unlink', 'rmdir']);
  const lastWrite = new Set(['cp', 'ln', 'install', 'rsync', 'scp']);
  const ops = operands(inv.words);
  const isWrite = (w: Word) =>
    allWrite.has(name) || (lastWrite.has(name) && w === ops[ops.length - 1] && ops.length > 1) || (name === 'dd' && w.text.startsWith('of=')) || (name === 'sed' && inv.argv.some((a) => /^-[a-zA-Z]*i/.test(a)));
  const words = [
    ...inv.words.slice(1).map((w) => ({ w, write: isWrite(w) })),
    ...inv.redirects.map((r) => ({ w: r.target, write: r.op !== '<' && r.op !== '<<<' && r.op !== '<<' && r.op !== '<<-' })),
  ];
  for (const { w, write } of words) {
    const raw = w.text.replace(/^(of|if)=/, '');
    if (!/(^|\/)\.\.(\/|$)/.test(raw) || w.dynamic) continue;
    const abs = resolveFrom(inv.cwd, raw);
    if (isUnder(abs, env.project)) continue;
    if (isSecretPath(abs, env)) block(walk, 'traversal', `path traversal: ${raw} climbs out of the project to the secret file ${abs}`);
    else if (isSystemPath(abs)) {
      if (write) block(walk, 'traversal', `path traversal: ${raw} climbs out of the project to write ${abs}`);
      else warn(walk, 'traversal', `path traversal: ${raw} climbs out of the project to ${abs}`);
    } else if (write) warn(walk, 'traversal', `${inv.argv[0]} writes outside the project through ${raw} (${abs})`);
  }
}

/** The project's current branch read from .git/HEAD (no git process on the hot path). */
export function readCurrentBranch(project: string, fsRead: (p: string) => string): string | null {
  let dir = project;
  for (let k = 0; k < 30; k++) {
    try {
      let head = fsRead(path.join(dir, '.git', 'HEAD'));
      const m = /^ref: refs\/heads\/(.+)$/m.exec(head);
      return m ? m[1].trim() : null;
    } catch {
      try {
        // A worktree or submodule: .git is a file naming the git dir.
        const gitFile = fsRead(path.join(dir, '.git'));
        const m = /^gitdir: (.+)$/m.exec(gitFile);
        if (m) {
          const head = fsRead(path.join(path.resolve(dir, m[1].trim()), 'HEAD'));
          const b = /^ref: refs\/heads\/(.+)$/m.exec(head);
          return b ? b[1].trim() : null;
        }
      } catch {
        /* keep climbing */
      }
    }
    const up = path.dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
  return null;
}

/** Applies the security switches: a check that is off reports nothing; a dangerous command with blocking off is still warned about. */
export function applySwitches(findings: Finding[], sec: Settings['security']): Finding[] {
  const out: Finding[] = [];
  for (const f of findings) {
    if (f.check === 'dangerous' && !sec.dangerous_commands_blocked) {
      if (sec.suspicious_commands_warned) out.push({ ...f, level: 'warn' });
    } else if (f.check === 'suspicious' && !sec.suspicious_commands_warned) continue;
    else if (f.check === 'traversal' && !sec.path_traversal_protection) continue;
    else if (f.check === 'system' && !sec.system_files_protection) continue;
    else out.push(f);
  }
  return out;
}

