/**
 * Build tools as interpreters: a CMake script (`cmake -P`), a Ninja file or an SCons file given on
 * the line (`-f /dev/stdin` with a here-document) runs what it says. Their languages are read for
 * the shell command lines they amount to: CMake's file(REMOVE_RECURSE …), file(REMOVE …),
 * file(COPY …)/execute_process(COMMAND …), Ninja's `command =` lines (`$$` is `$`), and SCons's
 * Delete/Execute, which is Python (returned for the Python reading).
 *
 * Pure functions over text; command-rules.ts collects what they return as it collects `sh -c`.
 */

/** The script a build tool reads from the line: `cmake -P FILE`, `ninja -f FILE`, `scons -f FILE`, FILE being stdin. */
export function buildScriptSource(argv: string[]): 'stdin' | null {
  const name = argv[0];
  const opt = name === 'cmake' ? '-P' : /^(ninja|samu|scons)$/.test(name ?? '') ? '-f' : null;
  if (opt === null) return null;
  const k = argv.indexOf(opt);
  return k > 0 && /^(-|\/dev\/stdin|\/dev\/fd\/0)$/.test(argv[k + 1] ?? '') ? 'stdin' : null;
}

/** CMake's $ENV{HOME} and ${VAR} set by file(GLOB VAR "pattern") or set(VAR "…"), then the command lines its calls run. */
function cmakeCommands(text: string): string[] {
  const vars = new Map<string, string>();
  const expand = (s: string) => s.replace(/\$ENV\{(\w+)\}/g, '$$$1').replace(/\$\{(\w+)\}/g, (all, v: string) => vars.get(v) ?? all);
  const args = (s: string) => [...s.matchAll(/"([^"]*)"|([^\s"]+)/g)].map((m) => expand(m[1] ?? m[2]));
  const quote = (a: string) => `"${a.replace(/(["\\`])/g, '\\$1')}"`;
  const out: string[] = [];
  for (const m of text.matchAll(/\b(file|set|execute_process)\s*\(([^)]*)\)/gi)) {
    const a = args(m[2]);
    const fn = m[1].toLowerCase();
    if (fn === 'set' && a.length >= 2) vars.set(a[0], a.slice(1).join(' '));
    else if (fn === 'file' && /^GLOB(_RECURSE)?$/i.test(a[0] ?? '') && a.length >= 3) vars.set(a[1], a.slice(2).filter((x) => !/^(LIST_DIRECTORIES|RELATIVE|CONFIGURE_DEPENDS|true|false)$/i.test(x)).join(' '));
    else if (fn === 'file' && /^REMOVE(_RECURSE)?$/i.test(a[0] ?? '')) {
      // A glob's result is the files it matched: left unquoted so that the reading expands it.
      const paths = a.slice(1).flatMap((x) => x.split(' '));
      out.push(`rm ${/RECURSE/i.test(a[0]) ? '-rf' : '-f'} ${paths.map((p) => (/[*?]/.test(p) ? p.replace(/ /g, '\\ ') : quote(p))).join(' ')}`);
    } else if (fn === 'file' && /^(COPY_FILE|RENAME)$/i.test(a[0] ?? '') && a.length >= 3) out.push(`${/RENAME/i.test(a[0]) ? 'mv' : 'cp'} ${quote(a[1])} ${quote(a[2])}`);
    else if (fn === 'execute_process') {
      for (const c of m[2].split(/\bCOMMAND\b/).slice(1)) out.push(args(c.replace(/\b(WORKING_DIRECTORY|OUTPUT_VARIABLE|RESULT_VARIABLE|ERROR_VARIABLE|TIMEOUT|OUTPUT_QUIET|ERROR_QUIET)\b[\s\S]*$/, '')).map(quote).join(' '));
    }
  }
  return out;
}

/**
 * What a build script read from the line runs: shell command lines, and Python code (SCons) in
 * which Delete(…) deletes a tree as shutil.rmtree does.
 */
export function buildScriptCommands(tool: string, text: string): { shell: string[]; python: string | null } {
  if (tool === 'cmake') return { shell: cmakeCommands(text), python: null };
  if (tool === 'scons') return { shell: [], python: `import shutil\n${text.replace(/\bDelete\s*\(/g, 'shutil.rmtree(')}` };
  // Ninja: `command = …` of each rule, `$$` standing for `$`, `$in`/`$out` for paths the build names.
  const shell = [...text.matchAll(/^\s*command\s*=\s*(.+)$/gm)].map((m) => m[1].replace(/\$\$/g, '$'));
  return { shell, python: null };
}
