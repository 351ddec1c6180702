/**
 * Bundles each hook (entries/*.ts) into one file, `hooks/lib/<name>.js`
 * under the install root, so a hook run loads one small file and nothing
 * heavy: local modules are transpiled (TypeScript's transpileModule, with
 * word-list regular expressions made Set lookups, name-tests.ts, and others
 * gated by plain string checks, regexp-gates.ts, and module-level ones
 * created on first read, lazy-regexps.ts) and wrapped in a module table, which is minified into pure ASCII (esbuild,
 * `shrink`); Node built-ins are required as usual; the
 * settings validator is ajv standalone code generated here, so ajv itself is
 * never loaded on the hook path.
 *
 * `hooks/<name>.js`, the file the host runs, is a loader: it compiles the
 * bundle with V8's code cache (`hooks/lib/<name>.cache`, written after the
 * first run, once more whenever V8 rejects it, e.g. after a Node upgrade),
 * which spares every later run the parsing and compiling of the bundle and
 * of the functions the first run used (about 4 of the 9 ms a hook added to
 * bare Node start-up when measured). Without a writable install folder it
 * simply compiles every time.
 *
 *   node dist/cli/hooks-cli/build-hooks.js [outDir]     (npm run build does it)
 */
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';
import { settingsSchema } from './lib/settings-schema';
import { lazyRegexpsTransformer } from './lazy-regexps';
import { nameTestsTransformer } from './name-tests';
import { regexpGatesTransformer } from './regexp-gates';

export const HOOK_NAMES = ['context-monitor', 'command-validator', 'session-logger', 'session-finalizer'] as const;
/** Not hooks: processes a hook starts (bundled and loaded the same way). */
export const HELPER_NAMES = ['learner-fold'] as const;
/**
 * Second stages: bundles a hook loads only when it needs them (lib/load-stage.ts), with their own code cache,
 * sharing the hook's modules. The validator answers plain lines without its deep analysis (lib/fast-path.ts).
 */
export const STAGES: Record<string, (typeof HOOK_NAMES)[number]> = { 'command-validator-deep': 'command-validator' };
/**
 * Stages of a second stage: rule families the deep analysis requires on first use (command-rules.ts, `lazyRules`),
 * each bundled apart with its own code cache, so that a line that needs none of them (`rm -rf build`, `git push`)
 * neither reads nor runs them. Stage name -> its parent stage and the modules it holds (their imports that the
 * parent lacks come along). A module here is never in its parent's bundle.
 */
export const RULE_STAGES: Record<string, { parent: keyof typeof STAGES; modules: string[] }> = {
  'command-validator-windows': { parent: 'command-validator-deep', modules: ['lib/windows-rules'] },
  'command-validator-framework': { parent: 'command-validator-deep', modules: ['lib/framework-rules'] },
};
const VALIDATOR_ID = 'lib/settings-validator.generated';
/** The module of the rule families' gates (opened by `split: false`). */
const RULE_GATES = 'lib/rule-gates';

/** The folder holding entries/ and lib/ as TypeScript (this file's folder when run from source, the repo's when run from dist/). */
export function sourceRoot(): string {
  for (const dir of [__dirname, path.resolve(__dirname, '..', '..', '..', 'cli', 'hooks-cli')]) {
    if (fs.existsSync(path.join(dir, 'entries', 'context-monitor.ts'))) return dir;
  }
  throw new Error(`cannot find the hooks-cli sources (entries/*.ts) from ${__dirname}`);
}

function settingsValidatorCode(): string {
  const Ajv = require('ajv') as typeof import('ajv').default;
  const standalone = require('ajv/dist/standalone').default as (ajv: unknown, fn: unknown) => string;
  const ajv = new Ajv({ code: { source: true }, allErrors: true, strict: true });
  const code = standalone(ajv, ajv.compile(settingsSchema));
  if (/require\(/.test(code)) throw new Error('ajv standalone code for the settings schema needs ajv at run time; simplify the schema');
  return code;
}

const compilerOptions: ts.CompilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  sourceMap: false,
  removeComments: true,
};

export interface BundleOptions {
  /**
   * The regular-expression steps: word lists become Set lookups (name-tests.ts), other expressions are gated by
   * plain string checks (regexp-gates.ts), module-level constants are created on first read (lazy-regexps.ts).
   * Off only to compare bundles (test/hooks-cli/bundle-equivalence.ts).
   */
  regexpSteps?: boolean;
  /**
   * A second stage's bundle: the modules of its first stage, which it does not hold and takes from the first
   * stage at run time (`__host.load(id)`, lib/load-stage.ts); its entry's exports go to `__host.exports`.
   */
  shared?: ReadonlySet<string>;
  /**
   * Modules kept out of this bundle and loaded from a stage of their own on first use (RULE_STAGES): module id ->
   * stage name. `__host.stage(name, __load)` loads the stage (lib/load-stage.ts) and gives its module loader.
   */
  lazy?: Readonly<Record<string, string>>;
  /** More modules to start from besides the entry (a stage holding several rule families). */
  include?: readonly string[];
  /**
   * The rule stages folded back into the deep stage, as one bundle, and every gate of lib/rule-gates.ts open:
   * the analysis before the split, kept to prove the split changes no answer (test/hooks-cli/bundle-equivalence.ts).
   */
  split?: boolean;
}

/** Transpiles `entry` and the local modules it reaches into one file's text. */
export function bundleModule(srcRoot: string, entryRel: string, extra: Record<string, string> = {}, options: BundleOptions = {}): string {
  const transformers = options.regexpSteps === false ? undefined : { before: [nameTestsTransformer, regexpGatesTransformer, lazyRegexpsTransformer] };
  const modules = new Map<string, string>(Object.entries(extra));
  // Each module's relative imports, resolved here: `require('./store')` in lib/x is a lookup at run time, not path work.
  const deps = new Map<string, Record<string, string>>();
  const queue = [...(options.include ?? []), entryRel.replace(/\.ts$/, '')];
  const lazy = options.lazy ?? {};
  while (queue.length > 0) {
    const id = queue.pop()!;
    if (modules.has(id)) continue;
    const file = path.join(srcRoot, `${id}.ts`);
    const source = fs.readFileSync(file, 'utf8');
    const out = ts.transpileModule(source, { compilerOptions, fileName: file, transformers });
    // Without the split, the gates are open: every rule family's function is called on every line, as before it.
    const open = options.split === false && id === RULE_GATES ? '\nfor (const k of Object.keys(exports)) if (k.startsWith("may")) exports[k] = () => true;' : '';
    modules.set(id, out.outputText.replace(/^#!.*\n/, '') + open);
    const resolved: Record<string, string> = {};
    deps.set(id, resolved);
    for (const imp of ts.preProcessFile(source, true, true).importedFiles) {
      const spec = imp.fileName;
      if (!spec.startsWith('.')) {
        const bare = spec.replace(/^node:/, '');
        if (!builtinModules.includes(bare) && !extra[spec]) continue; // left to the real require (CLI only)
        continue;
      }
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(id), spec)).replace(/\.js$/, '');
      if (fs.existsSync(path.join(srcRoot, `${target}.ts`))) {
        if (!options.shared?.has(target) && lazy[target] === undefined) queue.push(target);
        resolved[spec] = target;
      }
    }
  }
  const table = [...modules]
    .map(([id, code]) => `${JSON.stringify(id)}: function (module, exports, require) {\n${code}\n}`)
    .join(',\n');
  // No prototype: a specifier is looked up as a key, and none may find Object.prototype's members.
  const depTable = [...modules.keys()]
    .map((id) => `${JSON.stringify(id)}: { __proto__: null${Object.entries(deps.get(id) ?? {}).map(([spec, target]) => `, ${JSON.stringify(spec)}: ${JSON.stringify(target)}`).join('')} }`)
    .join(',\n');
  return `#!/usr/bin/env node
'use strict';
// Generated by cli/hooks-cli/build-hooks.ts from ${entryRel}; do not edit.
const __modules = {
${table}
};
const __deps = {
${depTable}
};
const __cache = {};
const __entry = ${JSON.stringify(entryRel.replace(/\.ts$/, ''))};${Object.keys(lazy).length > 0 ? `
const __stages = { __proto__: null${Object.entries(lazy).filter(([id]) => !modules.has(id)).map(([id, stage]) => `, ${JSON.stringify(id)}: ${JSON.stringify(stage)}`).join('')} };` : ''}
function __load(id) {
  const hit = __cache[id];
  if (hit) return hit.exports;${Object.keys(lazy).length > 0 ? `
  if (id in __stages) return (__cache[id] = { exports: __host.stage(__stages[id], __load)(id) }).exports;` : ''}${options.shared ? `
  if (!(id in __modules)) return __host.load(id);` : ''}
  const module = (__cache[id] = { exports: {} });
  const deps = __deps[id];
  const req = (spec) => {
    const dep = deps[spec];
    return dep === undefined ? __require(id, spec) : __load(dep);
  };
  req.main = id === __entry ? module : undefined; // require.main === module holds for the entry, as in Node
  __modules[id].call(module.exports, module, module.exports, req);
  return module.exports;
}
function __require(from, spec) {
  if (!spec.startsWith('.')) return require(spec);
  const parts = from.split('/').slice(0, -1);
  for (const p of spec.replace(/\\.js$/, '').split('/')) {
    if (p === '..') parts.pop();
    else if (p !== '.') parts.push(p);
  }
  const id = parts.join('/');
  if (!(id in __modules)) {
    const err = new Error('Cannot find module ' + spec);
    err.code = 'MODULE_NOT_FOUND';
    throw err;
  }
  return __load(id);
}
${options.shared ? '__host.own = __load;\n__host.exports = ' : ''}__load(__entry);
`;
}

/** The ids of the modules a bundle's text holds. */
function moduleIds(text: string): string[] {
  return [...text.matchAll(/^"([^"]+)": function \(module, exports, require\) \{$/gm)].map((m) => m[1]);
}

/** The generated modules every bundle gets. */
export function generatedModules(): Record<string, string> {
  return { [VALIDATOR_ID]: settingsValidatorCode() };
}

/**
 * V8's defaults suit a long-lived process; a hook lives some milliseconds,
 * and compiling for speed later costs it now. Measured (Node 20; in process,
 * docs/hooks-cli.md "Speed"):
 *  - `--regexp-tier-up-ticks=10`: V8 compiles a regular expression to
 *    bytecode at its first use and again to machine code at its second; the
 *    validator runs each of some hundreds a few times, once. From the tenth
 *    use on, an expression run over a long command thousands of times still
 *    gets machine code.
 *  - `--no-regexp-peephole-optimization`: the bytecode is not optimised
 *    either (1.4 ms less in the validator's first analysis, median of 16).
 *  - `--interrupt-budget=1048576` (8x): a function is optimised by TurboFan
 *    once it has run that much bytecode; the first optimisation in a process
 *    cost 1.5 ms of the main thread (the finalizer hashing its documents hit
 *    it), more than a run of a few milliseconds can win back.
 * A 47 KiB command chain, the heaviest analysis tried, takes no longer with
 * them (110-130 ms against 126-240 ms).
 */
const V8_FLAGS = '--regexp-tier-up-ticks=10 --no-regexp-peephole-optimization --interrupt-budget=1048576';

/**
 * The loader's first statement: sets V8_FLAGS through the `v8` binding
 * (`require('v8')` loads streams and costs 1.7 ms, more than the flags
 * save), holding back the binding's one-time deprecation warning (DEP0111)
 * by standing in for process.emitWarning during the call (process.binding
 * calls it for 'v8'; setting process.noDeprecation instead still made Node
 * compile emitWarning, 0.3M instructions a run, only for it to return);
 * on a Node without the binding nothing is set. V8's code cache records the
 * flags it was made under, so they are set before the cache is read, in
 * every run alike. `setFlags` stays for the warm-up (loaderCode).
 */
const SET_V8_FLAGS = `const setFlags = (() => {
  const warn = process.emitWarning;
  process.emitWarning = () => {};
  let v8 = null;
  try {
    v8 = process.binding('v8');
    v8.setFlagsFromString(${JSON.stringify(V8_FLAGS)});
  } catch {}
  process.emitWarning = warn;
  return (flags) => {
    try {
      v8.setFlagsFromString(flags);
    } catch {}
  };
})();`;

/**
 * What a hook runs before its code cache is written (hook-runtime.ts, warmUp), so that the cache holds the
 * functions typical runs use whichever run came first: made from the first run alone, a cache left every
 * later run to compile what that run had not used (the validator's first run an empty command or a Read
 * call: +38% of instructions on every later Bash command, docs/benchmarks.md). Host inputs without session,
 * transcript and cwd; run in a scratch project. The commands are text the validator analyses, never run.
 * The other hooks have none: their inputs vary little (a cache made by a plain Stop cost the answer end
 * 0.3M instructions more than one made by an answer end), and a warm-up cache cost them 0.5-1.4M more.
 */
export const WARM_UP: Partial<Record<(typeof HOOK_NAMES)[number], Record<string, unknown>[]>> = {
  'command-validator': [
    { hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: 'README.md' } },
    ...[
      'git diff --stat',
      'npm run build 2>&1 | tail -30',
      'ls src/',
      'cat package.json',
      'grep -rn "parse" lib --include=*.ts',
      'git add -A && git commit -m "wip: parser"',
      'node scripts/check.js',
      'python3 -m pip install -r requirements.txt',
      'rm -rf dist && mkdir -p dist',
      'find . -name "*.test.ts" | head',
      'cd app && cargo build --release',
      'curl -fsSL https://api.example.com/v1/items?limit=5 | jq ".items[0]"',
      'git push -u origin HEAD',
      'docker compose up -d db && docker exec -it db psql -U app',
      'python3 -c "import json,sys; print(json.load(sys.stdin)[\'name\'])" < package.json',
      'export NODE_ENV=test; ssh ci@build.example.com "tail -n 50 /var/log/app.log"',
    ].map((command) => ({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command, description: 'warm-up' } })),
  ],
};

/** The argument that makes a loader write its code cache and do nothing else (bundleHooks runs it at build time). */
export const WRITE_CODE_CACHE = '--write-code-cache';

/**
 * The loader `hooks/<name>.js`: runs `lib/<name>.js` through vm.Script with the code cache `lib/<name>.cache`.
 * With no cache, or one V8 rejects (a Node upgrade), and a writable folder, it writes one as the process
 * exits: for a hook, after a warm-up on WARM_UP's inputs (`lib/<name>.warm-up.json`; the bundle run once more
 * with them), so the
 * cache does not depend on what this run did; for a helper, from this run.
 * The warm-up runs without Sparkplug (V8's baseline compiler), which is set again before the cache is
 * made, so the cache records the same flags as every run: a function the warm-up had run often enough to
 * get baseline code cost later runs more than one it had not (the same 12 inputs run three times: 125.2M
 * -> 134.5M instructions on the bench's command; without Sparkplug 122.3M either way), and Sparkplug itself
 * stays for the runs (without it a 47 KiB command took 253 ms of CPU instead of 185).
 */
function loaderCode(name: string, warmUp: boolean): string {
  // The inputs sit in a file of their own (lib/<name>.warm-up.json): the loader is compiled on every run.
  const inputs = `JSON.parse(fs.readFileSync(__dirname + '/lib/${name}.warm-up.json', 'utf8'))`;
  const warm = warmUp
    ? `
      if (!make) {
        setFlags('--no-sparkplug');
        try {
          globalThis.__hooksCliWarmUp = { inputs: ${inputs}, readStdin: false };
          run(require, __filename, process, setTimeout, clearTimeout);
        } catch {}
        globalThis.__hooksCliWarmUp = undefined;
      }
      setFlags('--sparkplug');`
    : '';
  return `#!/usr/bin/env node
'use strict';
// Generated by cli/hooks-cli/build-hooks.ts; do not edit. Runs lib/${name}.js with V8's code cache (lib/${name}.cache).
${SET_V8_FLAGS}
const fs = require('fs');
const vm = require('vm');
const file = __dirname + '/lib/${name}.js';
const cacheFile = __dirname + '/lib/${name}.cache';
const make = ${warmUp ? `process.argv[2] === '${WRITE_CODE_CACHE}'` : 'false'};
let cachedData;
if (!make) {
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {}
}
const script = new vm.Script(fs.readFileSync(file, 'utf8'), { filename: file, cachedData });
const run = script.runInThisContext();
if (make || cachedData === undefined || script.cachedDataRejected) {
  let writable = false;
  try {
    fs.accessSync(__dirname + '/lib', fs.constants.W_OK);
    writable = true;
  } catch {}
  if (writable) {
    process.once('exit', () => {${warm}
      try {
        const tmp = cacheFile + '.' + process.pid + '.tmp';
        fs.writeFileSync(tmp, script.createCachedData());
        fs.renameSync(tmp, cacheFile);
      } catch {}
    });
  }
}
${warmUp ? `if (make) {\n  setFlags('--no-sparkplug');\n  globalThis.__hooksCliWarmUp = { inputs: ${inputs}, readStdin: true };\n}\n` : ''}run(require, __filename, process, setTimeout, clearTimeout);
`;
}

/**
 * The bundle as the loader runs it: one function of the loader's require,
 * __filename (the install root is found from it), process and timers. They
 * are passed, not taken from the global scope, so whoever runs the loader
 * with its own (a test running the hook in-process) runs the bundle with them.
 * The file starts with that function (no comment before it): the in-process
 * harness runs `return <file>`.
 */
function wrapForLoader(bundle: string, host = ''): string {
  return `(function (require, __filename, process, setTimeout, clearTimeout${host}) {\n${shrink(bundle.replace(/^#!.*\n/, ''))}\n})`;
}

/**
 * A bundle's text as small and as cheap to read as it can be, for the same
 * program: minified by esbuild (names, white space, syntax), and pure ASCII.
 * Every hook run reads and hands V8 the whole bundle; a bundle with one
 * character past ASCII (an emoji in a message, a `…`) is decoded from UTF-8
 * into a two-byte string, which made reading the validator's 409 KiB take
 * 1.2-2.2 ms instead of 0.4 ms once minified to 253 KiB and ASCII (measured
 * in the loader, Node 20, docs/hooks-cli.md "Speed"). esbuild escapes
 * non-ASCII in strings, templates and names (`charset: 'ascii'`) but not in
 * regular expression literals; asciiOnly escapes what is left.
 * Only the body is minified: as a whole, `(function …)` is an unused
 * expression, which esbuild drops; the body ends in `__load(__entry)`.
 */
export function shrink(body: string): string {
  const esbuild = require('esbuild') as typeof import('esbuild');
  return asciiOnly(esbuild.transformSync(body, { loader: 'js', minify: true, charset: 'ascii', target: 'node20' }).code);
}

/**
 * Escapes each UTF-16 unit past ASCII as `\uXXXX`, which means the same
 * character in a string, a template and a regular expression literal (with
 * the `u` flag a pair of escaped surrogates is the one code point, as the pair
 * itself was). A character escaped by a backslash (`\…`, an identity escape)
 * loses that backslash: `\\u2026` would be a backslash and `u2026`.
 */
export function asciiOnly(code: string): string {
  return code.replace(/(\\*)([^\x00-\x7f])/g, (_, slashes: string, ch: string) => (slashes.length % 2 === 1 ? slashes.slice(1) : slashes) + `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Writes hooks/<name>.js (the loaders) and hooks/lib/<name>.js (the bundles) for the four hooks and their helpers into `outDir`. */
export function bundleHooks(outDir: string, srcRoot = sourceRoot(), options: BundleOptions = {}): string[] {
  const validator = settingsValidatorCode();
  fs.mkdirSync(path.join(outDir, 'lib'), { recursive: true });
  const modules = new Map<string, Set<string>>();
  const written = [...HOOK_NAMES, ...HELPER_NAMES].map((name) => {
    const file = path.join(outDir, `${name}.js`);
    const bundle = path.join(outDir, 'lib', `${name}.js`);
    const text = bundleModule(srcRoot, `entries/${name}.ts`, { [VALIDATOR_ID]: validator }, options);
    modules.set(name, new Set(moduleIds(text)));
    fs.writeFileSync(bundle, wrapForLoader(text));
    fs.rmSync(path.join(outDir, 'lib', `${name}.cache`), { force: true }); // made for the old bundle
    const warmUp = (WARM_UP as Record<string, Record<string, unknown>[] | undefined>)[name];
    const warmUpFile = path.join(outDir, 'lib', `${name}.warm-up.json`);
    if (warmUp) fs.writeFileSync(warmUpFile, `${JSON.stringify(warmUp, null, 1)}\n`);
    else fs.rmSync(warmUpFile, { force: true });
    fs.writeFileSync(file, loaderCode(name, warmUp !== undefined), { mode: 0o755 });
    return bundle;
  });
  const split = options.split !== false;
  const lazy = split ? Object.fromEntries(Object.entries(RULE_STAGES).flatMap(([stage, s]) => s.modules.map((id) => [id, stage]))) : {};
  const writeStage = (name: string, text: string) => {
    const bundle = path.join(outDir, 'lib', `${name}.js`);
    fs.writeFileSync(bundle, wrapForLoader(text, ', __host'));
    fs.rmSync(path.join(outDir, 'lib', `${name}.cache`), { force: true });
    written.push(bundle);
  };
  for (const [name, hook] of Object.entries(STAGES)) {
    const text = bundleModule(srcRoot, `entries/${name}.ts`, {}, { ...options, shared: modules.get(hook), lazy });
    modules.set(name, new Set([...modules.get(hook)!, ...moduleIds(text)]));
    writeStage(name, text);
  }
  for (const [name, stage] of Object.entries(RULE_STAGES)) {
    const bundle = path.join(outDir, 'lib', `${name}.js`);
    if (!split) {
      fs.rmSync(bundle, { force: true });
      fs.rmSync(path.join(outDir, 'lib', `${name}.cache`), { force: true });
      continue;
    }
    const [entry, ...rest] = stage.modules;
    writeStage(name, bundleModule(srcRoot, `${entry}.ts`, {}, { ...options, shared: modules.get(stage.parent), lazy, include: rest }));
  }
  return written;
}

/**
 * Writes the code cache of each hook with a warm-up (WARM_UP) in a process of its own (the loader with WRITE_CODE_CACHE: the warm-up and
 * nothing else), with this Node, so the first run after a build already has one. Returns the caches written.
 */
export function writeCodeCaches(outDir: string): string[] {
  const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
  return HOOK_NAMES.filter((name) => WARM_UP[name] !== undefined).map((name) => {
    // stdin a socket, as a host gives: the warm-up reads it first (empty), so the reading is in the cache too.
    spawnSync(process.execPath, [path.join(outDir, `${name}.js`), WRITE_CODE_CACHE], { input: '', stdio: ['pipe', 'ignore', 'ignore'] });
    return path.join(outDir, 'lib', `${name}.cache`);
  }).filter((f) => fs.existsSync(f));
}

if (require.main === module) {
  const out = process.argv[2] ? path.resolve(process.argv[2]) : path.join(sourceRoot(), 'hooks');
  for (const f of bundleHooks(out)) console.log(`hooks-cli: bundled ${path.relative(process.cwd(), f)} (${(fs.statSync(f).size / 1024).toFixed(1)} KiB)`);
  for (const f of writeCodeCaches(out)) console.log(`hooks-cli: wrote ${path.relative(process.cwd(), f)} (${(fs.statSync(f).size / 1024).toFixed(1)} KiB)`);
}
