/**
 * Windows seen from WSL and Git Bash. Three things:
 *
 * 1. The Windows builds of programs are the programs (`git.exe`, `C:\…\git.exe`, `curl.exe`,
 *    `npm.cmd`, `format.com`, the `py -3` launcher): windowsProgram.
 * 2. PowerShell and cmd.exe command strings (`pwsh -c`, `-EncodedCommand`, `-Command -` fed on stdin,
 *    a `.ps1` run with `-File`, `cmd /c`) are parsed and rewritten as the POSIX shell lines they
 *    amount to, so that every rule of the validator judges them: `Remove-Item -Recurse` is `rm -r`,
 *    `Get-ChildItem X | Remove-Item` a `find X | xargs rm`, `rd /s /q` `rm -rf`, `for /d %i in (X\*)
 *    do …` the command over `X/*`, `forfiles /p X /c "cmd /c del @path"` a `find X -exec`,
 *    `Invoke-RestMethod -Body (Get-Content F)` a `curl --data-binary @F`, `Add-Content $PROFILE` an
 *    append to a start-up file, `robocopy SRC DST /MIR` an `rsync --delete`. Variables
 *    (`$env:USERPROFILE`, `%LOCALAPPDATA%`, `$PROFILE`, `$PWD`, `(Get-Location)`, `$x = …`) are
 *    resolved as the shell's are: powershellAsSh, cmdAsSh, windowsAsSh.
 * 3. Windows tools whose harm has a POSIX kin the validator refuses: the registry's start-up keys
 *    (`reg add …\Run`, cmd's AutoRun) are start-up files, `schtasks /create` a crontab, hive-level
 *    registry deletes, shadow copies and backup catalogues deleted, `format`, `diskpart clean`,
 *    `Clear-Disk` the loss of a disk, `bcdedit /delete` a boot entry gone, `icacls /grant Everyone`
 *    or `takeown /r` over a drive, the system or a profile a `chmod -R`: windowsFindings.
 *
 * Windows paths themselves are read in paths-classify.ts (windowsDrivePath, windowsView).
 */
import { isWindowsTool } from './rule-gates';
import { windowsVar, type Word } from './shell-parse';

export interface WindowsFinding {
  level: 'block' | 'warn';
  reason: string;
}

/** `git.exe`, `C:\Program Files\Git\cmd\git.exe`, `npm.cmd`, `format.com`, `py -3`: the words with the program's own name, or null. */
export function windowsProgram(words: Word[]): Word[] | null {
  const t = words[0].text;
  if (!t.includes('.') && t !== 'py') return null;
  const file = words[0].text.split(/[\\/]/).pop() ?? '';
  // A program of its own (./t.exe, /tmp/x.exe) stays the file it is: only a bare name or an installed one is the program.
  const installed = !/[\\/]/.test(words[0].text) || /^(\/mnt\/[a-z]|\/[a-z]|[A-Za-z]:)[\\/]/i.test(words[0].text);
  const m = installed ? /^(.+)\.(exe|com|cmd|bat)$/i.exec(file) : null;
  const name = m ? m[1].toLowerCase() : file;
  // py, the Python launcher: `py -3.12 -c CODE` is `python3 -c CODE`.
  if (name === 'py') {
    let j = 1;
    while (j < words.length && /^-(\d[\d.]*(-(32|64))?|V:.+)$/.test(words[j].text)) j++;
    return [{ ...words[0], text: 'python3' }, ...words.slice(j)];
  }
  return m ? [{ ...words[0], text: name }, ...words.slice(1)] : null;
}

/** A word for the POSIX shell, quoted; an unknown value stays a variable the shell cannot know. */
const sq = (s: string): string => (s === UNKNOWN ? '"$WINDOWS_UNKNOWN"' : `'${s.replace(/'/g, `'\\''`)}'`);
/** A path for the POSIX shell: quoted, its wildcards left to match as PowerShell's and cmd's do. */
const sp = (s: string): string =>
  s === UNKNOWN
    ? sq(s)
    : s
        .split(/([*?])/)
        .map((x, k) => (k % 2 === 1 ? x : x === '' ? '' : sq(x)))
        .join('') || "''";
const UNKNOWN = '\u0000unknown';
/** The pipeline's current item ($_, $PSItem, %i, @path), written where the POSIX line puts each item. */
const ITEM = '{}';

/** Where the Windows environment's own names point, in WSL's spelling. */
function winEnv(name: string, home: string): string | undefined {
  const n = name.toUpperCase();
  if (n === 'HOME') return home;
  if (n === 'TEMP' || n === 'TMP') return '/tmp/tmpdir';
  if (n === 'USERNAME') return 'user';
  return windowsVar(n);
}

// ---------------------------------------------------------------------------------------------
// PowerShell

interface PsCtx {
  home: string;
  vars: Map<string, string>;
  /** $x = Get-Content FILE: the variables that hold a file's content, and the file. */
  reads: Map<string, string>;
}

/** PowerShell's automatic variables that name places. */
function psAuto(name: string, ctx: PsCtx): string | undefined {
  const n = name.toLowerCase();
  if (n === 'home') return ctx.home;
  if (n === 'pwd' || n === 'psscriptroot') return '.';
  if (n === 'profile') return '/mnt/c/Users/user/Documents/PowerShell/Microsoft.PowerShell_profile.ps1';
  if (n === '_' || n === 'psitem') return ITEM;
  if (n === 'true' || n === 'false' || n === 'null') return `$${n}`;
  return ctx.vars.get(n);
}

/**
 * Splits PowerShell text into statements (`;`, newlines, `&&`, `||`), each a pipeline of commands
 * (`|`), each a list of raw tokens; quotes, (…), $(…), @(…), {…} and […] stay whole.
 */
function psSplit(script: string): string[][][] {
  const statements: string[][][] = [];
  let pipeline: string[][] = [];
  let cmd: string[] = [];
  let tok = '';
  const endTok = () => {
    if (tok !== '') cmd.push(tok);
    tok = '';
  };
  const endCmd = () => {
    endTok();
    if (cmd.length > 0) pipeline.push(cmd);
    cmd = [];
  };
  const endStatement = () => {
    endCmd();
    if (pipeline.length > 0) statements.push(pipeline);
    pipeline = [];
  };
  const s = script;
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === '`' && s[i + 1] === '\n') i += 2;
    else if (c === '`') {
      tok += s[i + 1] ?? '';
      i += 2;
    } else if (c === '<' && s[i + 1] === '#') {
      const j = s.indexOf('#>', i + 2);
      i = j < 0 ? s.length : j + 2;
    } else if (c === '#' && tok === '') {
      const j = s.indexOf('\n', i);
      i = j < 0 ? s.length : j;
    } else if (c === ' ' || c === '\t' || c === '\r') {
      endTok();
      i++;
    } else if (c === '\n' || c === ';') {
      endStatement();
      i++;
    } else if ((c === '&' || c === '|') && s[i + 1] === c) {
      endStatement();
      i += 2;
    } else if (c === '|') {
      endCmd();
      i++;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < s.length && !(s[j] === c && s[j + 1] !== c)) j += s[j] === c || (c === '"' && s[j] === '`') ? 2 : 1;
      tok += s.slice(i, j + 1);
      i = j + 1;
    } else if (c === '(' || c === '{' || c === '[') {
      const close = c === '(' ? ')' : c === '{' ? '}' : ']';
      let depth = 0;
      let j = i;
      for (; j < s.length; j++) {
        const d = s[j];
        if (d === "'" || d === '"') {
          const k = s.indexOf(d, j + 1);
          j = k < 0 ? s.length : k;
        } else if (d === c) depth++;
        else if (d === close && --depth === 0) break;
      }
      tok += s.slice(i, j + 1);
      i = j + 1;
    } else {
      tok += c;
      i++;
    }
  }
  endStatement();
  return statements;
}

/** The value of a PowerShell token: a literal, an expanded string or word, a known subexpression; UNKNOWN otherwise. */
function psValue(tok: string, ctx: PsCtx): string {
  if (tok.startsWith("'")) return tok.slice(1, -1).replace(/''/g, "'").replace(/\\/g, '/');
  if (/^\$?\(/.test(tok)) return psSubexpression(tok.replace(/^\$?\(/, '').replace(/\)$/, ''), ctx);
  if (tok.startsWith('@(')) return psValue(tok.slice(1), ctx);
  const body = tok.startsWith('"') ? tok.slice(1, -1) : tok;
  let unknown = false;
  let out = body
    .replace(/\$\(([^()]*(?:\([^()]*\)[^()]*)*)\)/g, (_m, inner: string) => {
      const v = psSubexpression(inner, ctx);
      if (v === UNKNOWN) unknown = true;
      return v;
    })
    .replace(/\$\{?env:(\w+)\}?|\$\{(\w+)\}|\$(\w+)(?:\.(FullName|Name|FullPath|Path|CurrentUserAllHosts|CurrentUserCurrentHost|AllUsersAllHosts|AllUsersCurrentHost))?/gi, (m, env?: string, braced?: string, plain?: string) => {
      const v = env !== undefined ? winEnv(env, ctx.home) : psAuto(braced ?? plain!, ctx);
      if (v === undefined) unknown = true;
      return v ?? m;
    });
  if (unknown) return UNKNOWN;
  if (!tok.startsWith('"')) out = out.replace(/^~(?=[\\/]|$)/, ctx.home);
  // PowerShell takes / and \\ alike in paths (and has no backslash escapes): the POSIX spelling.
  return out.replace(/\\/g, '/');
}

/** What a (…) subexpression stands for: the working directory, a file's content, a concatenation of known parts. */
function psSubexpression(inner: string, ctx: PsCtx): string {
  const t = inner.trim();
  if (/^(Get-Location|gl|pwd|Convert-Path\s+\.|Resolve-Path\s+\.)$/i.test(t)) return '.';
  if (/^\[Environment\]::GetFolderPath\(\s*['"]?(UserProfile|Personal|MyDocuments|Desktop)['"]?\s*\)$/i.test(t)) return '/mnt/c/Users/user';
  // A + B + "C": the parts joined.
  const parts = t.split(/\s*\+\s*/);
  if (parts.length > 1 && parts.every((p) => /^(["'][^"']*["']|\$[\w:{}.]+)$/.test(p))) {
    const vals = parts.map((p) => psValue(p, ctx));
    return vals.includes(UNKNOWN) ? UNKNOWN : vals.join('');
  }
  if (/^(["'][^"']*["']|\$[\w:{}.]+)$/.test(t)) return psValue(t, ctx);
  return UNKNOWN;
}

/** A cmdlet's parameter: `-Recurse`, `-rec`, `-Path:X`; `full` names it, `min` is the shortest prefix PowerShell takes. */
function isParam(tok: string, full: string, min = 2): boolean {
  const m = /^-([A-Za-z]+):?/.exec(tok);
  if (!m) return false;
  const n = m[1].toLowerCase();
  return n.length >= Math.min(min, full.length) && full.toLowerCase().startsWith(n);
}

/** Switch parameters (no value) of the cmdlets read here; any other -Name takes the next token. */
const PS_SWITCHES = ['recurse', 'force', 'whatif', 'confirm', 'raw', 'directory', 'file', 'append', 'nonewline', 'hidden', 'passthru', 'usebasicparsing', 'noprofile', 'nologo', 'asbytestream', 'wait', 'nonewwindow', 'update', 'system', 'readonly', 'removedata', 'removeoem', 'full', 'quiet', 'asjob', 'allowclobber', 'skipcertificatecheck'];

interface PsArgs {
  named: Map<string, string>;
  switches: Set<string>;
  positional: string[];
}

/** A command's tokens bound to parameters, values evaluated (a comma list stays one value, split by the caller). */
function psBind(tokens: string[], ctx: PsCtx, valued: string[]): PsArgs {
  const out: PsArgs = { named: new Map(), switches: new Set(), positional: [] };
  for (let k = 1; k < tokens.length; k++) {
    const t = tokens[k];
    const m = /^-([A-Za-z][\w-]*)(?::(.*))?$/.exec(t);
    if (!m) {
      out.positional.push(t);
      continue;
    }
    const n = m[1].toLowerCase();
    const full = valued.find((v) => v.startsWith(n)) ?? PS_SWITCHES.find((v) => v.startsWith(n)) ?? n;
    if (m[2] !== undefined) out.named.set(full, m[2]);
    else if (PS_SWITCHES.includes(full) && !valued.includes(full)) out.switches.add(full);
    else out.named.set(full, tokens[++k] ?? '');
  }
  return out;
}

/** A list value (`a, b`, `@('a','b')`) as its evaluated items. */
function psList(raw: string | undefined, ctx: PsCtx): string[] {
  if (raw === undefined) return [];
  const inner = raw.startsWith('@(') ? raw.slice(2, -1) : raw;
  return inner
    .split(/\s*,\s*/)
    .filter((x) => x !== '')
    .map((x) => psValue(x, ctx));
}

/** Paths given by -Path/-LiteralPath or the first positionals, comma lists split. */
function psPaths(a: PsArgs, ctx: PsCtx, positionals = 1): string[] {
  const raw = a.named.get('path') ?? a.named.get('literalpath') ?? a.positional.slice(0, positionals).join(' ');
  return psList(raw.replace(/\s+,\s*/g, ', ').replace(/,\s*/g, ', ') || undefined, ctx);
}

/** Splits a path with a wildcard in its last part into its directory and the name pattern. */
function splitPattern(p: string): { dir: string; pattern: string | null } {
  const slash = Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\'));
  const last = p.slice(slash + 1);
  if (!/[*?[]/.test(last)) return { dir: p, pattern: null };
  return { dir: slash < 0 ? '.' : p.slice(0, slash) || '/', pattern: last };
}

/** One PowerShell command (a pipeline stage) as POSIX shell words; `piped` says something feeds it. */
function psCommand(tokens: string[], ctx: PsCtx, piped: boolean): string | null {
  let toks = tokens;
  if (toks[0] === '&' || toks[0] === '.') toks = toks.slice(1);
  if (toks.length === 0) return null;
  const head = toks[0];
  // [IO.Directory]::Delete(P, $true), [IO.File]::Delete(P), [IO.File]::WriteAllText(P, T), [Environment]::GetEnvironmentVariables().
  const dotnet = /^\[(?:System\.)?(IO\.Directory|IO\.File|Environment)\]::(\w+)\((.*)\)$/is.exec(toks.join(' '));
  if (dotnet) {
    const args = dotnet[3].split(/,(?=(?:[^"']*["'][^"']*["'])*[^"']*$)/).map((x) => x.trim());
    const p = args[0] !== undefined ? psSubexpression(args[0], ctx) : UNKNOWN;
    const what = `${dotnet[1]}::${dotnet[2]}`.toLowerCase();
    if (what === 'io.directory::delete') return `rm ${/\$true/i.test(args[1] ?? '') ? '-rf ' : '-d '}${sp(p)}`;
    if (what === 'io.file::delete') return `rm -f ${sp(p)}`;
    if (/^io\.file::(writealltext|writeallbytes|writealllines|appendalltext|appendalllines)$/.test(what)) return `printf %s x ${/append/.test(what) ? '>>' : '>'} ${sq(p)}`;
    if (what === 'environment::getenvironmentvariables') return 'env';
    return null;
  }
  if (head.startsWith('$') && toks[1] === '=') return null; // handled by the statement
  // & { … }, . { … }: the block runs here.
  if (head.startsWith('{')) return powershellAsSh(head.slice(1, -1), ctx.home, new Map(ctx.vars)) || null;
  // curl.exe and wget.exe are the real programs; curl and wget without .exe (Windows PowerShell's aliases) are Invoke-WebRequest
  // unless given their own options.
  const native = /\.exe$/i.test(head) || (/^(curl|wget)$/i.test(head) && toks.some((t) => /^-[A-Za-z]$|^--\w/.test(t)));
  const name = native ? '' : head.toLowerCase();
  const words = (a: string[]) => a.map((x) => sp(x)).join(' ');
  const valued = ['path', 'literalpath', 'value', 'destination', 'destinationpath', 'filter', 'include', 'exclude', 'itemtype', 'name', 'uri', 'method', 'body', 'infile', 'outfile', 'filepath', 'argumentlist', 'erroraction', 'ea', 'encoding', 'depth', 'propertytype', 'type', 'target', 'headers', 'contenttype', 'credential', 'driveletter', 'number', 'scriptblock', 'attachments', 'to', 'smtpserver'];
  const a = psBind(toks, ctx, valued);
  const unknownItem = (p: string) => (p === ITEM || p.startsWith(`${ITEM}`) ? ITEM : p);
  switch (name) {
    case 'remove-item':
    case 'ri':
    case 'rm':
    case 'rmdir':
    case 'rd':
    case 'del':
    case 'erase': {
      if (a.switches.has('whatif')) return null;
      const flags = `${a.switches.has('recurse') ? '-r' : ''}${a.switches.has('force') ? 'f' : ''}`.replace(/^f$/, '-f');
      const paths = psPaths(a, ctx, 9).map(unknownItem);
      // Registry keys (HKCU:\Software…) go to the registry rules as `reg delete`.
      const reg = paths.find((p) => /^(HK[A-Z_]+:|Registry::)/i.test(p));
      if (reg) return `reg delete ${sq(reg.replace(/:?[\\/]/, '\\').replace(/\//g, '\\'))} /f`;
      const filters = ['filter', 'include'].flatMap((k) => psList(a.named.get(k), ctx));
      if (paths.length === 0 && piped) return `xargs rm ${flags}`;
      if (filters.length > 0 && a.switches.has('recurse')) return `find ${words(paths)} ${filters.map((f) => `-name ${sq(f)}`).join(' -o ')} -delete`;
      return `rm ${flags} ${words(paths)}`;
    }
    case 'get-childitem':
    case 'gci':
    case 'ls':
    case 'dir':
    case 'get-item':
    case 'gi': {
      const paths = psPaths(a, ctx, 1);
      if (paths.some((p) => /^env:/i.test(p))) return 'env';
      const roots = paths.length > 0 ? paths : ['.'];
      const tests: string[] = [];
      const dirs: string[] = [];
      for (const r of roots) {
        const { dir, pattern } = splitPattern(r);
        dirs.push(dir);
        if (pattern) tests.push(pattern);
      }
      tests.push(...['filter', 'include'].flatMap((k) => psList(a.named.get(k), ctx)));
      const depth = a.switches.has('recurse') || /^get-item|gi$/.test(name) ? '' : ' -maxdepth 1 -mindepth 1';
      const type = a.switches.has('directory') ? ' -type d' : a.switches.has('file') ? ' -type f' : '';
      const names = tests.length > 0 ? ` ${tests.map((t) => `-name ${sq(t)}`).join(' -o ')}` : '';
      return `find ${words(dirs)}${depth}${type}${names}`;
    }
    case 'foreach-object':
    case '%':
    case 'foreach': {
      const block = a.positional.find((x) => x.startsWith('{')) ?? a.named.get('process');
      if (!block) return null;
      const body = powershellAsSh(block.slice(1, -1), ctx.home, new Map(ctx.vars));
      return `xargs -I${ITEM} sh -c ${sq(body)}`;
    }
    case 'where-object':
    case '?':
    case 'where':
      return 'grep -e filtered';
    case 'get-content':
    case 'gc':
    case 'cat':
    case 'type':
      return `cat ${words(psPaths(a, ctx, 9))}`;
    case 'set-content':
    case 'sc':
    case 'add-content':
    case 'ac':
    case 'out-file':
    case 'tee-object':
    case 'tee': {
      const file = psValue(a.named.get('path') ?? a.named.get('filepath') ?? a.named.get('literalpath') ?? a.positional[0] ?? '', ctx);
      const value = a.named.get('value') ?? (a.named.has('path') || a.named.has('filepath') ? a.positional[0] : a.positional[1]);
      const append = /^(add-content|ac)$/.test(name) || a.switches.has('append');
      const from = value !== undefined ? `printf '%s\\n' ${sq(psValue(value, ctx))}` : piped ? 'cat' : `printf ''`;
      return `${from} ${append ? '>>' : '>'} ${sq(file)}`;
    }
    case 'new-item':
    case 'ni':
    case 'mkdir':
    case 'md': {
      const file = psValue(a.named.get('path') ?? a.positional[0] ?? '', ctx);
      const type = (a.named.get('itemtype') ?? a.named.get('type') ?? (name === 'mkdir' || name === 'md' ? 'directory' : 'file')).replace(/['"]/g, '').toLowerCase();
      if (/^(HK[A-Z_]+:|Registry::)/i.test(file)) return `reg add ${sq(file.replace(/:?[\\/]/, '\\'))} /f`;
      if (type === 'directory') return `mkdir -p ${sq(file)}`;
      if (/symboliclink|junction|hardlink/.test(type)) return `ln -s ${sq(psValue(a.named.get('target') ?? a.named.get('value') ?? '', ctx))} ${sq(file)}`;
      return `printf '%s\\n' ${sq(psValue(a.named.get('value') ?? '', ctx))} > ${sq(file)}`;
    }
    case 'new-itemproperty':
    case 'set-itemproperty':
    case 'sp': {
      const key = psValue(a.named.get('path') ?? a.positional[0] ?? '', ctx);
      const prop = psValue(a.named.get('name') ?? a.positional[1] ?? '', ctx);
      const value = psValue(a.named.get('value') ?? a.positional[2] ?? '', ctx);
      return `reg add ${sq(key.replace(/:?[\\/]/, '\\'))} /v ${sq(prop)} /d ${sq(value)} /f`;
    }
    case 'copy-item':
    case 'cpi':
    case 'copy':
    case 'cp':
    case 'move-item':
    case 'mi':
    case 'move':
    case 'mv': {
      const src = psPaths(a, ctx, 1);
      const dst = psValue(a.named.get('destination') ?? a.positional[a.named.has('path') ? 0 : 1] ?? '.', ctx);
      const verb = /^(move|mi|mv)/.test(name) ? 'mv' : `cp${a.switches.has('recurse') ? ' -r' : ''}`;
      return `${verb} ${words(src)} ${sq(dst)}`;
    }
    case 'compress-archive': {
      const src = psPaths(a, ctx, 1);
      const dst = psValue(a.named.get('destinationpath') ?? a.positional[1] ?? 'archive.zip', ctx);
      return `zip -r ${sq(dst)} ${words(src)}`;
    }
    case 'invoke-webrequest':
    case 'iwr':
    case 'invoke-restmethod':
    case 'irm':
    case 'curl':
    case 'wget': {
      const uri = psValue(a.named.get('uri') ?? a.positional[0] ?? '', ctx);
      const out: string[] = ['curl'];
      const method = a.named.get('method');
      if (method) out.push('-X', sq(psValue(method, ctx)));
      const body = a.named.get('body');
      if (body !== undefined) {
        // -Body (Get-Content F), -Body @{k = (gc F -Raw)}, -Body $x after $x = Get-Content F: F is what goes.
        const read = /\((?:Get-Content|gc|cat|type)\s+([^()]*)\)|\[(?:System\.)?IO\.File\]::ReadAll(?:Text|Bytes|Lines)\(\s*([^()]*)\)/i.exec(body);
        const file = read ? (read[1] !== undefined ? psPaths(psBind(['gc', ...psSplit(read[1])[0]?.[0] ?? []], ctx, valued), ctx, 1)[0] : psSubexpression(read[2], ctx)) : ctx.reads.get(/^\$(\w+)$/.exec(body.trim())?.[1]?.toLowerCase() ?? '');
        out.push(...(file !== undefined ? ['--data-binary', sq(`@${file}`)] : ['-d', sq(psValue(body, ctx))]));
      } else if (piped) out.push('--data-binary', '@-');
      const infile = a.named.get('infile');
      if (infile !== undefined) out.push('-T', sq(psValue(infile, ctx)));
      const outfile = a.named.get('outfile');
      if (outfile !== undefined) out.push('-o', sq(psValue(outfile, ctx)));
      out.push(sq(uri));
      return out.join(' ');
    }
    case 'invoke-expression':
    case 'iex':
      return a.positional.length > 0 ? `sh -c ${sq(powershellAsSh(psValue(a.positional.join(' '), ctx), ctx.home))}` : 'sh';
    case 'start-process':
    case 'saps':
    case 'start': {
      const file = psValue(a.named.get('filepath') ?? a.positional[0] ?? '', ctx);
      const args = psList(a.named.get('argumentlist') ?? a.positional.slice(1).join(', '), ctx);
      // Start-Process cmd -ArgumentList '/c rd /s /q X': the argument string is the command line's tail.
      return `${sq(file)} ${args.map((x) => (x === UNKNOWN ? sq(x) : x)).join(' ')}`;
    }
    case 'invoke-command':
    case 'icm':
    case 'start-job': {
      const block = a.named.get('scriptblock') ?? a.positional.find((x) => x.startsWith('{'));
      return block?.startsWith('{') ? powershellAsSh(block.slice(1, -1), ctx.home, new Map(ctx.vars)) || null : null;
    }
    case 'stop-computer':
      return 'shutdown -h now';
    case 'restart-computer':
      return 'reboot';
    case 'set-acl':
      // Set-Acl PATH ACL: who may read or write PATH changes (a protected ACL without its inherited entries locks users out).
      return `chmod 000 ${sp(psValue(a.named.get('path') ?? a.positional[0] ?? '', ctx))}`;
    case 'send-mailmessage':
      // Send-MailMessage -Attachments F -To X: F goes out by mail.
      return `curl --mail-rcpt ${sq(psValue(a.named.get('to') ?? 'x', ctx))} -T ${sp(psValue(a.named.get('attachments') ?? '', ctx))} smtp://mail`;
    case 'set-clipboard':
    case 'scb':
      return 'clip';
    case 'get-clipboard':
    case 'gcb':
      return 'pbpaste';
    case 'out-string':
    case 'select-object':
    case 'select':
    case 'sort-object':
    case 'sort':
    case 'convertto-json':
    case 'format-list':
    case 'format-table':
    case 'fl':
    case 'ft':
      return 'cat';
    default: {
      // Anything else (git, cmd /c …, Format-Volume, wsl): its words, evaluated, for the other rules.
      const vals = toks.map((t, k) => (k === 0 ? (/[\\/]/.test(t) ? psValue(t, ctx) : t) : /^-[A-Za-z]/.test(t) ? t : psValue(t, ctx)));
      return vals.map((x) => sq(x)).join(' ');
    }
  }
}

/**
 * A PowerShell script as the POSIX shell lines it amounts to. `$x = value` becomes an assignment
 * the shell follows; each pipeline's stages are rewritten by psCommand.
 */
export function powershellAsSh(script: string, home: string, vars: Map<string, string> = new Map()): string {
  const ctx: PsCtx = { home, vars, reads: new Map() };
  const lines: string[] = [];
  for (const pipeline of psSplit(script.replace(/\r/g, ''))) {
    const first = pipeline[0];
    // $x = value (or = (Get-Location), = "$env:USERPROFILE\x"): known to later statements.
    const assign = first.length >= 3 && /^\$\w+$/.test(first[0]) && first[1] === '=' ? first[0].slice(1).toLowerCase() : null;
    if (assign) {
      // $k = Get-Content F (or gc, cat, [IO.File]::ReadAllText(F)): $k holds F's content; the read itself is judged too.
      const reader = /^(Get-Content|gc|cat|type)$/i.test(first[2]) ? first.slice(2) : null;
      if (reader) {
        const f = psPaths(psBind(reader, ctx, ['path', 'literalpath', 'encoding', 'totalcount', 'tail']), ctx, 1)[0];
        if (f !== undefined && f !== UNKNOWN) ctx.reads.set(assign, f);
        lines.push(`cat ${sp(f ?? UNKNOWN)} > /dev/null`);
      }
      const v = pipeline.length === 1 && !reader ? psValue(first.slice(2).join(' '), ctx) : UNKNOWN;
      if (v !== UNKNOWN) ctx.vars.set(assign, v);
      else ctx.vars.delete(assign);
      continue;
    }
    const stages = pipeline.map((c, k) => psCommand(c, ctx, k > 0));
    if (stages.every((x) => x !== null)) lines.push(stages.join(' | '));
    else lines.push(...stages.filter((x): x is string => x !== null));
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// cmd.exe

/** cmd's words: `"…"` quotes kept together, the quotes dropped; `%VAR%` expanded. */
function cmdWords(text: string, home: string): string[] {
  const out: string[] = [];
  const expanded = text.replace(/%(\w+)%/g, (m, n: string) => (n.toUpperCase() === 'CD' ? '.' : winEnv(n, home) ?? m));
  for (const m of expanded.matchAll(/"([^"]*)"|[^\s"]+(?:"[^"]*"[^\s"]*)*/g)) out.push((m[1] ?? m[0]).replace(/"/g, ''));
  return out;
}

/** One cmd command as POSIX shell words. */
function cmdCommand(text: string, home: string): string {
  const t = text.trim().replace(/^@/, '');
  // for [/d] [/r DIR] %i in (SET) do CMD: CMD once per item of SET, %i the item.
  const loop = /^for\s+((?:\/[a-z]\s+)*)(?:"?([^"\s]+)"?\s+)?%%?(\w)\s+in\s+\((.*?)\)\s+do\s+(.+)$/is.exec(t);
  if (loop) {
    const items = cmdWords(loop[4], home);
    const recurse = /\/r/i.test(loop[1]) ? loop[2] ?? '.' : null;
    const body = loop[5].replace(new RegExp(`%%?${loop[3]}\\b`, 'g'), ITEM);
    if (recurse !== null) return `find ${sp(recurse)}${items.every((x) => /^\*(\.\*)?$/.test(x)) ? '' : ` -name ${sq(items[0] ?? '*')}`} -exec ${cmdAsSh(body, home)} \\;`;
    return items.map((x) => cmdAsSh(body.replace(/"?\{\}"?/g, `"${x}"`), home)).join('; ');
  }
  const w = cmdWords(t, home);
  const name = (w[0] ?? '').toLowerCase().replace(/\.(exe|com)$/, '');
  const isOpt = (x: string) => /^\/[a-z?]+(:[^/\\]*)?$/i.test(x);
  const opts = w.slice(1).filter(isOpt).map((x) => x.toLowerCase());
  const args = w.slice(1).filter((x) => !isOpt(x) && !/^\d?>/.test(x)).map((x) => x.replace(/\\/g, '/'));
  switch (name) {
    case 'rd':
    case 'rmdir':
      return `rm ${opts.includes('/s') ? '-rf' : '-d'} ${args.map(sp).join(' ')}`;
    case 'del':
    case 'erase': {
      // del /s X\*.map: every match in X and below.
      if (opts.includes('/s')) return args.map((x) => { const { dir, pattern } = splitPattern(x); return `find ${sp(pattern ? dir : x)} -name ${sq(pattern ?? '*')} -delete`; }).join('; ');
      return `rm -f ${args.map(sp).join(' ')}`;
    }
    case 'forfiles': {
      // forfiles /p DIR [/s] [/m MASK] /c "cmd /c del @path": find DIR [-name MASK] -exec CMD {}.
      const val = (o: string) => w[w.findIndex((x) => x.toLowerCase() === o) + 1];
      const dir = w.some((x) => x.toLowerCase() === '/p') ? val('/p') : '.';
      const mask = w.some((x) => x.toLowerCase() === '/m') ? val('/m') : '*';
      const cmd = w.some((x) => x.toLowerCase() === '/c') ? val('/c') : 'cmd /c echo @file';
      const each = cmd.replace(/@(path|file|fname)/gi, ITEM);
      return `find ${sp(dir)}${opts.includes('/s') ? '' : ' -maxdepth 1'}${mask === '*' || mask === '*.*' ? '' : ` -name ${sq(mask)}`} -exec ${cmdAsSh(each, home)} \\;`;
    }
    case 'type':
      return `cat ${args.map(sp).join(' ')}`;
    case 'copy':
    case 'xcopy':
      return `cp -r ${args.map(sp).join(' ')}`;
    case 'move':
      return `mv ${args.map(sp).join(' ')}`;
    case 'mkdir':
    case 'md':
      return `mkdir -p ${args.map(sp).join(' ')}`;
    case 'format':
      return `format ${w.slice(1).map(sq).join(' ')}`;
    case 'if': {
      // if [not] exist X CMD, if errorlevel N CMD: CMD may run.
      const m = /^if\s+(?:\/i\s+)?(?:not\s+)?(?:exist\s+(?:"[^"]*"|\S+)|errorlevel\s+\d+|defined\s+\S+|\S+==\S+)\s+(.+)$/is.exec(t);
      return m ? cmdAsSh(m[1], home) : '';
    }
    case 'set':
      return '';
    case 'cmd': {
      // cmd /c TEXT inside cmd: TEXT read the same way.
      const m = /^\S+\s+(?:\/[a-z]\s+)*?\/\/?[ck]\s+(.*)$/is.exec(t);
      return m ? cmdAsSh(m[1].replace(/^"(.*)"$/s, '$1'), home) : cmdJoin(w);
    }
    case 'call':
    case 'start':
      return cmdCommand(t.replace(/^\S+\s+(?:"[^"]*"\s+)?/, ''), home);
    default:
      return cmdJoin(w);
  }
}

/** cmd words for the shell: redirections (`>`, `2>nul`, `>>file`) kept as such, `nul` as /dev/null, paths with /. */
function cmdJoin(w: string[]): string {
  return w
    .map((x, k) => {
      const r = /^(\d?>>?(?:&\d)?)(.*)$/.exec(x);
      if (k > 0 && r) return r[2] === '' ? r[1] : `${r[1]} ${sq(/^nul$/i.test(r[2]) ? '/dev/null' : r[2].replace(/\\/g, '/'))}`;
      return (k > 0 ? sp : sq)(/^nul$/i.test(x) ? '/dev/null' : k > 0 && !/^\/[a-z?]+(:[^/\\]*)?$/i.test(x) ? x.replace(/\\/g, '/') : x);
    })
    .join(' ');
}

/** A cmd.exe command line (`cmd /c …`) as the POSIX shell lines it amounts to: `&`, `&&`, `||` and `|` kept as the shell's. */
export function cmdAsSh(script: string, home: string): string {
  const parts = script.split(/(\s*(?:&&|\|\||&|\|)\s*)(?=(?:[^"]*"[^"]*")*[^"]*$)/);
  return parts.map((p, k) => (k % 2 === 1 ? (p.trim() === '&' ? ' ; ' : ` ${p.trim()} `) : cmdCommand(p, home))).join('');
}

// ---------------------------------------------------------------------------------------------
// Windows tools run directly (from bash or after the rewrites above)

/**
 * Windows programs whose effects are a POSIX command's: robocopy /MIR is rsync --delete; certutil
 * -urlcache and bitsadmin /transfer download like curl -o; certutil -decode is base64 -d.
 */
export function windowsAsSh(argv: string[]): string | null {
  const [name, ...args] = argv;
  const ops = args.filter((a) => !/^[-/][A-Za-z]/.test(a) || /^\/(mnt|tmp|home)\//.test(a));
  if (/^certutil$/i.test(name ?? '') && args.some((a) => /^[-/]urlcache$/i.test(a)) && ops.length >= 2) return `curl -o ${sp(ops[ops.length - 1])} ${sq(ops[ops.length - 2])}`;
  if (/^certutil$/i.test(name ?? '') && args.some((a) => /^[-/]decode(hex)?$/i.test(a)) && ops.length >= 2) return `base64 -d ${sp(ops[0])} > ${sp(ops[1])}`;
  if (/^bitsadmin$/i.test(name ?? '') && args.some((a) => /^\/transfer$/i.test(a))) {
    const url = args.find((a) => /^https?:\/\//i.test(a));
    const file = args[args.length - 1];
    if (url && file && file !== url) return `curl -o ${sp(file)} ${sq(url)}`;
  }
  if (/^robocopy$/i.test(name ?? '')) {
    // robocopy SRC DST [FILES…] [/OPTIONS]: the two places come first.
    const ops = args.slice(0, 2);
    if (ops.length < 2 || !args.slice(2).some((a) => /^\/(mir|purge)$/i.test(a))) return null;
    return `rsync -a --delete ${sq(`${ops[0].replace(/[\\/]$/, '')}/`)} ${sq(`${ops[1].replace(/[\\/]$/, '')}/`)}`;
  }
  return null;
}

/** Windows tools that destroy, persist or open up, as findings (argv already has the program's own name). */
export function windowsFindings(argv: string[]): WindowsFinding[] {
  const [name0, ...args] = argv;
  const name = (name0 ?? '').toLowerCase();
  const out: WindowsFinding[] = [];
  if (!isWindowsTool(name)) return out;
  /** Registry keys whose values run programs at log-on or with every cmd: Run, RunOnce, Winlogon, cmd's AutoRun, IFEO debuggers. */
  const AUTORUN_KEY = /\\(CurrentVersion\\(Run|RunOnce|RunServices|RunServicesOnce|Policies\\Explorer\\Run)|Windows NT\\CurrentVersion\\(Winlogon|Image File Execution Options|Windows)|Command Processor|Environment)(\\|$)/i;
  /** Registry keys whose loss breaks the user's or the machine's set-up: a hive's top, Software, SYSTEM, a service, WSL's own. */
  const VITAL_KEY = /^(HK(CU|LM|U|CR|EY_[A-Z_]+)|Registry::[^\\]+)(\\(Software|SYSTEM|SAM|SECURITY|Software\\Microsoft|Software\\Classes|Software\\Microsoft\\Windows(\\CurrentVersion)?|SYSTEM\\CurrentControlSet(\\Services(\\[^\\]+)?)?|Software\\Microsoft\\Windows\\CurrentVersion\\Lxss))?\\?$/i;
  const low = args.map((a) => a.toLowerCase());
  const all = low.join(' ');
  const say = (level: 'block' | 'warn', what: string) => out.push({ level, reason: `${name0} ${args.slice(0, 3).join(' ')}: ${what}` });
  const key = (args.find((a) => /^(HK|Registry::)/i.test(a)) ?? '').replace(/\//g, '\\').replace(/^(HK[A-Z_]+):/i, '$1');
  switch (name) {
    case 'reg':
      if (low[0] === 'add' && AUTORUN_KEY.test(key)) say('block', 'writes a registry key Windows runs at every log-on or with every command prompt: a way to stay on the machine');
      else if (low[0] === 'delete' && VITAL_KEY.test(key)) say('block', 'deletes a whole registry tree: the settings of every program in it, or a service the system needs');
      else if (low[0] === 'delete' && AUTORUN_KEY.test(key)) say('warn', 'deletes entries Windows starts by itself');
      else if (low[0] === 'import' || low[0] === 'restore') say('warn', 'loads registry settings from a file over the current ones');
      break;
    case 'schtasks':
      if (low.includes('/create')) say('block', 'creates a scheduled task: a program Windows starts by itself on a timer or at log-on (the crontab of Windows)');
      else if (low.includes('/delete') && /(^|\s)\/tn\s+("?)([^\s"]*\*|\\microsoft\\)/.test(all)) say('block', "deletes every scheduled task, or Windows' own (backups, updates, maintenance)");
      else if (low.includes('/delete')) say('warn', 'deletes a scheduled task');
      break;
    case 'register-scheduledtask':
      say('block', 'creates a scheduled task: a program Windows starts by itself on a timer or at log-on (the crontab of Windows)');
      break;
    case 'unregister-scheduledtask':
      if (/\*|\\microsoft\\/.test(all)) say('block', "deletes every scheduled task, or Windows' own");
      break;
    case 'vssadmin':
      if (/\bdelete\s+shadows\b|\bresize\s+shadowstorage\b/.test(all)) say('block', 'deletes the shadow copies: the earlier versions of files that would bring lost ones back');
      break;
    case 'wmic':
      if (/\bshadowcopy\b.*\bdelete\b/.test(all)) say('block', 'deletes the shadow copies: the earlier versions of files that would bring lost ones back');
      break;
    case 'wbadmin':
      if (/^delete\b/.test(all)) say('block', 'deletes the backup catalogue or system-state backups: the copies that would bring lost files back');
      break;
    case 'bcdedit':
      if (/^\/(delete|deletevalue|set)\b/.test(all) && !/\/set\s+\S+\s+(hypervisorlaunchtype|nx|testsigning)\b/.test(all) || /\/delete\b/.test(all)) say('block', 'changes or deletes boot entries: the machine may not start again');
      break;
    case 'format':
      if (args.some((a) => /^[a-z]:\\?$/i.test(a))) say('block', 'formats a drive: everything on it is erased');
      break;
    case 'diskpart':
      say('block', 'runs the disk partitioner, whose scripts erase (clean) and repartition disks');
      break;
    case 'format-volume':
    case 'clear-disk':
    case 'remove-partition':
    case 'initialize-disk':
    case 'set-disk':
    case 'remove-physicaldisk':
      if (!low.includes('-whatif')) say('block', 'erases or repartitions a disk: everything on it is lost');
      break;
    case 'sc':
      if (low[0] === 'create' || (low[0] === 'config' && /binpath=/.test(all))) say('block', 'installs a Windows service: a program the system starts by itself at every boot, with the highest rights');
      else if (low[0] === 'delete') say('warn', 'deletes a Windows service');
      break;
    case 'new-service':
      say('block', 'installs a Windows service: a program the system starts by itself at every boot, with the highest rights');
      break;
    case 'mshta':
    case 'regsvr32':
    case 'rundll32':
      if (/https?:|javascript:|vbscript:|\/i:/.test(all)) say('block', 'runs script code fetched from elsewhere or written inline: unreviewed code');
      break;
    case 'set-mppreference':
    case 'add-mppreference':
      if (/-disable\w*\s+(\$?true|1)\b|-exclusion(path|process|extension)\b/.test(all)) say('block', 'turns off the antivirus or excludes places from it');
      break;
    case 'netsh':
      if (/firewall\b.*\bstate\s+off\b|\bopmode\s+disable\b/.test(all)) say('block', 'turns the firewall off');
      break;
    case 'cipher':
      if (low.some((a) => /^\/w:/.test(a))) say('warn', 'overwrites the free space of a drive');
      break;
    case 'icacls':
    case 'takeown':
    case 'cacls': {
      const wide = args.find((a) => /^([a-z]:\\?|[a-z]:\\(windows|program files( \(x86\))?|programdata|users)(\\[^\\]+)?\\?)$/i.test(a.replace(/\//g, '\\')));
      const recursive = low.some((a) => /^\/(t|r)$/.test(a));
      const opens = /\/grant(:r)?\s+("?)(everyone|\*s-1-1-0|users|authenticated users|\*s-1-5-11|\*s-1-5-32-545)\b/.test(all) || /\/remove\b|\/inheritance:r|\/deny\b|\/setowner\b|\/reset\b/.test(all) || name === 'takeown';
      if (wide && recursive && opens) say('block', `changes who may read or write everything under ${wide}: the system's or a user's files opened to all, or taken from their owner`);
      break;
    }
  }
  return out;
}


/**
 * A command line that code hands to a Windows launcher (`os.system('cmd.exe /c rd /s /q C:\\Users\\x')`,
 * `execSync('powershell …')`): its backslashes are the Windows paths' separators, meant for cmd or
 * PowerShell, so they are kept from the POSIX shell's escapes when the line is read.
 */
export function windowsCommandLine(line: string): string {
  return /^\s*(?:\S*[\\/])?(cmd|powershell|pwsh)(\.exe)?\s/i.test(line) ? line.replace(/\\+/g, '\\\\') : line;
}
