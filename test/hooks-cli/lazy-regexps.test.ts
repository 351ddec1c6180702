/**
 * The build step that creates module-level regular expression constants on
 * first read (cli/hooks-cli/lazy-regexps.ts): which constants it takes, which
 * it leaves, and that a module transformed by it behaves as written.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { lazyConstants, lazyRegexpsTransformer } from '../../cli/hooks-cli/lazy-regexps';

const compilerOptions: ts.CompilerOptions = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 };
const transpile = (source: string, lazy: boolean) =>
  ts.transpileModule(source, { compilerOptions, transformers: lazy ? { before: [lazyRegexpsTransformer] } : undefined }).outputText;

/** The module's exports, run as CommonJS. */
function load(code: string): Record<string, any> {
  const module = { exports: {} as Record<string, any> };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  new Function('module', 'exports', 'require', code)(module, module.exports, require);
  return module.exports;
}

const SAMPLE = `
const WORD = /^(a|b)$/;
const G = /x(\\d)/g;
const KEY = /^key-(\\w+)$/i;
const LIST = [/^never$/];
const USED_IN_ARRAY = /^in-array$/;
export const EXPORTED = /^exported$/;
const SHORT = /^short$/;
const SHADOWED = /^shadowed$/;
const TYPED: RegExp = /^typed$/;
const NOT_A_REGEXP = 'text';
export function words(s: string) { return WORD.test(s); }
export function all(s: string) { G.lastIndex = 0; const out: string[] = []; let m; while ((m = G.exec(s))) out.push(m[1]); return out.join(','); }
export function key(s: string) { return KEY.exec(s)?.[1] ?? null; }
export function split(s: string) { return s.split(KEY).length + s.replace(G, '#').length; }
export function inArray() { return [USED_IN_ARRAY, ...LIST].map((r) => r.source).join(' '); }
export function same() { return WORD === WORD && G === G; }
export function short() { return { SHORT }.SHORT.source; }
export function shadow(SHADOWED: string) { return SHADOWED; }
export function typed(s: string) { return TYPED.test(s) && NOT_A_REGEXP.length > 0; }
`;

t.test('module-level regular expression constants read plainly are made on first read; any other use leaves one alone', async (t) => {
  const sf = ts.createSourceFile('x.ts', SAMPLE, ts.ScriptTarget.ES2022, true);
  t.same([...lazyConstants(sf).keys()].sort(), ['G', 'KEY', 'USED_IN_ARRAY', 'WORD'], 'exported, shorthand, shadowed, typed and non-literal constants left alone');
  const lazy = transpile(SAMPLE, true);
  t.match(lazy, /var WORD;/);
  t.match(lazy, /\(WORD \|\| \(WORD = \/\^\(a\|b\)\$\/\)\)\.test\(s\)/);
  t.match(lazy, /const SHORT = \/\^short\$\//, 'left as written');
  t.notMatch(lazy, /const WORD =/);
});

t.test('a module made lazy behaves as written, global expressions and their lastIndex included', async (t) => {
  const a = load(transpile(SAMPLE, false));
  const b = load(transpile(SAMPLE, true));
  for (const [fn, args] of [
    ['words', ['a']], ['words', ['c']], ['all', ['x1 x2 x3']], ['all', ['x9']], ['key', ['KEY-abc']], ['key', ['nope']],
    ['split', ['key-a x1']], ['inArray', []], ['same', []], ['short', []], ['shadow', ['v']], ['typed', ['typed']],
  ] as [string, string[]][]) {
    // Twice: the second call reads the constant the first one made.
    t.same([b[fn](...args), b[fn](...args)], [a[fn](...args), a[fn](...args)], `${fn}(${args.join(', ')})`);
  }
});

t.test('the deep stage modules have their module-level constants made on first read', async (t) => {
  const lib = path.resolve(__dirname, '..', '..', 'cli', 'hooks-cli', 'lib');
  let taken = 0;
  for (const f of ['command-rules.ts', 'inline-code.ts', 'sql-rules.ts', 'destroy-rules.ts', 'data-rules.ts', 'git-rules.ts']) {
    const source = fs.readFileSync(path.join(lib, f), 'utf8');
    taken += lazyConstants(ts.createSourceFile(f, source, ts.ScriptTarget.ES2022, true)).size;
    t.doesNotThrow(() => new Function(transpile(source, true)), `${f} still parses`);
  }
  t.ok(taken > 30, `${taken} constants`);
});
