/**
 * The bundles' word-list build step (cli/hooks-cli/name-tests.ts): which
 * regular expression literals and constants it takes, and that the code it
 * writes answers as the expression did, for fixed cases and for random word
 * lists and random strings (fast-check).
 */
import fc from 'fast-check';
import t from 'tap';
import ts from 'typescript';
import { nameTestsTransformer, wordList } from '../../cli/hooks-cli/name-tests';

/** `source` transpiled as the bundles are, with the step, and run: its `f` export. */
function compiled(source: string): (x: unknown) => boolean {
  const out = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    transformers: { before: [nameTestsTransformer] },
  }).outputText;
  const module = { exports: {} as { f: (x: unknown) => boolean } };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  new Function('module', 'exports', 'require', out)(module, module.exports, require);
  return module.exports.f;
}

function transformedText(source: string): string {
  return ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 }, transformers: { before: [nameTestsTransformer] } }).outputText;
}

t.test('takes anchored lists of words, with other alternatives and the i flag', async (t) => {
  t.same(wordList('/^(npm|pnpm|yarn)$/'), { words: ['npm', 'pnpm', 'yarn'], others: [], ignoreCase: false });
  t.same(wordList('/^(?:go|g\\+\\+|bin\\/rails|a\\.b)$/')?.words, ['go', 'g++', 'bin/rails', 'a.b']);
  t.same(wordList('/^delete$/')?.words, ['delete']);
  t.same(wordList('/^(-o|--output|-O)$/')?.words, ['-o', '--output', '-O']);
  t.same(wordList('/^(Psql|wsl\\.exe|mc)$/i'), { words: ['psql', 'wsl.exe', 'mc'], others: [], ignoreCase: true });
  t.same(wordList('/^(ls|fsck(\\..*)?|du|mkfs(\\..*)?)$/'), { words: ['ls', 'du'], others: ['fsck(\\..*)?', 'mkfs(\\..*)?'], ignoreCase: false });
  t.same(wordList('/^(a|[x|y]|b)$/')?.others, ['[x|y]'], 'a | inside a class splits nothing');
  t.same(wordList('/^\\\\$/')?.words, ['\\'], 'an escaped backslash before the final $ leaves it an anchor');
  t.equal(wordList('/^a\\$/'), null, 'an escaped final $ is no anchor');
  for (const no of [
    '/^(npm|yarn)$/g', // flags
    '/^(npm|yarn)$/iu',
    '/^npm|yarn$/', // (^npm)|(yarn$)
    '/^(npm|yarn)x$/', // the group is not the whole pattern
    '/^(npm)(yarn)$/',
    '/^(n.m)$/', // no literal word
    '/^(gpg2?)$/',
    '/^(a|(b)\\1)$/', // a back-reference
    '/^(a|b\\c)$/', // one word and another alternative: nothing to gain
    '/^(?=a)$/',
    '/^(npm|yarn)/', // not anchored at the end
    '/(npm|yarn)$/',
    '/^(npm|yarn\\)$/', // the last ")" is escaped: no group closes
    '/^a{2}$/',
  ]) {
    t.equal(wordList(no), null, no);
  }
});

t.test('KELVIN SIGN is the one character past ASCII whose lower case is ASCII', async (t) => {
  const found: number[] = [];
  for (let c = 0x80; c <= 0x10ffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    if (/^[\x00-\x7f]+$/.test(String.fromCodePoint(c).toLowerCase())) found.push(c);
  }
  t.same(found, [0x212a]);
  t.equal(/^k$/i.test('\u212a'), false, 'and without the u flag it does not match k');
});

t.test('rewrites only `literal.test(x)` and constants only ever tested, and keeps everything else as written', async (t) => {
  t.match(transformedText('export const f = (x: string) => /^(npm|yarn)$/.test(x);'), /new Set\(\["npm", "yarn"\]\)/);
  t.notMatch(transformedText('export const f = (x: string) => /^(npm|yarn)$/.exec(x);'), /new Set/);
  const constant = transformedText('const R = /^(npm|yarn)$/; export const f = (x: string) => R.test(x) || R.test(x + "s");');
  t.match(constant, /new Set/);
  t.notMatch(constant, /const R/, 'the constant is dropped');
  for (const kept of [
    'export const R = /^(npm|yarn)$/; export const f = (x: string) => R.test(x);', // exported
    'const R = /^(npm|yarn)$/; export const f = (x: string) => R.exec(x);', // another use
    'const R = /^(npm|yarn)$/; export const f = (x: string) => [x].some(R.test, R);',
    'const R = /^(npm|yarn)$/; export const f = (x: any) => x.test(R.test);',
    'const R = /^(npm|yarn)$/; export const f = (x: string) => { const R = /x/; return R.test(x); };', // shadowed
  ]) {
    t.match(transformedText(kept), /\/\^\(npm\|yarn\)\$\//, kept);
  }
  // A file that reads the legacy RegExp.$1-style state keeps its expressions, since a Set lookup sets none.
  t.notMatch(transformedText('export const f = (x: string) => /^(npm|yarn)$/.test(x) && RegExp.$1 === "npm";'), /new Set/);
});

t.test('the rewritten test answers as the expression, for fixed cases', async (t) => {
  const cases: [string, unknown[]][] = [
    ['/^(npm|pnpm|yarn)$/', ['npm', 'pnpm', 'yarn', 'NPM', 'npmx', 'xnpm', 'npm\n', '\nnpm', '', 'np', undefined, null, 12, ['npm'], { toString: () => 'yarn' }]],
    ['/^(?:g\\+\\+|a\\.b|bin\\/rails|x)$/', ['g++', 'a.b', 'aXb', 'bin/rails', 'x', 'gg', '']],
    ['/^delete$/', ['delete', 'Delete', 'deletes', 'delete\n', '']],
    ['/^(a||b)$/', ['', 'a', 'b', 'ab']],
    ['/^(undefined|null)$/', [undefined, null, 'undefined', 'null', '']],
    ['/^(npm|Yarn|wsl\\.exe)$/i', ['npm', 'NPM', 'yarn', 'YARN', 'Wsl.Exe', 'wslXexe', '\u212a', 'npm\n', '']],
    ['/^(kubectl|ok)$/i', ['kubectl', 'KubeCtl', '\u212aubectl', 'o\u212a', 'ok', 'OK']],
    ['/^(ls|fsck(\\..*)?|du|mkfs(\\..*)?)$/', ['ls', 'du', 'fsck', 'fsck.ext4', 'fsckx', 'mkfs.', 'mkfs', 'm', '']],
    ['/^(ls|FSCK(\\..*)?|du)$/i', ['LS', 'fsck', 'Fsck.x', '\u212a']],
  ];
  for (const [literal, probes] of cases) {
    const f = compiled(`export const f = (x: any) => ${literal}.test(x);`);
    const re = new Function(`return ${literal}`)() as RegExp;
    for (const p of probes) t.equal(f(p), re.test(p as string), `${literal}.test(${JSON.stringify(p)})`);
  }
  // Evaluated once per call, in order, as the argument of test was.
  const seen: string[] = [];
  const g = compiled('export const f = (x: any) => /^(a|b)$/.test(x());');
  t.equal(g(() => (seen.push('call'), 'a')), true);
  t.same(seen, ['call']);
  const sym = compiled('export const f = (x: any) => /^(a|b)$/.test(x);');
  t.throws(() => sym(Symbol('a')), TypeError, 'a Symbol throws, as test(Symbol()) does');
});

t.test('the rewritten test answers as the expression, for random word lists and strings', async () => {
  const ESC = '.+/*?()|^$[]{}\\-';
  const char = fc.constantFrom(...'abckAB01_-@: '.split(''), ...ESC.split(''));
  const word = fc.string({ unit: char, maxLength: 6 });
  // Alternatives that are not words, with strings they match.
  const others: [string, string][] = [['x\\d', 'x1'], ['[ab]c', 'bc'], ['q(\\..*)?', 'q.z'], ['k+', 'kk'], ['(?:y|z)w', 'zw']];
  fc.assert(
    fc.property(
      fc.array(word, { minLength: 1, maxLength: 6 }),
      fc.subarray(others),
      fc.array(fc.oneof(word, fc.constantFrom('\n', 'a\n', 'A', '', '\u212a', 'K')), { maxLength: 8 }),
      fc.boolean(),
      fc.boolean(),
      (words, more, extra, nonCapturing, ignoreCase) => {
        const escaped = words.map((w) => w.replace(/[.+/*?()|^$[\]{}\\-]/g, (c) => `\\${c}`));
        const alts = [...escaped, ...more.map(([o]) => o)];
        const flags = ignoreCase ? 'i' : '';
        const literal = alts.length === 1 && !nonCapturing ? `/^${alts[0]}$/${flags}` : `/^(${nonCapturing ? '?:' : ''}${alts.join('|')})$/${flags}`;
        if (wordList(literal) === null && !(more.length > 0 && words.length < 2)) throw new Error(`not taken: ${literal}`);
        const f = compiled(`export const f = (x: any) => ${literal}.test(x);`);
        const re = new Function(`return ${literal}`)() as RegExp;
        const kelvin = (w: string) => w.replace(/k/gi, '\u212a');
        const probes = [
          ...words,
          ...extra,
          ...more.map(([, m]) => m),
          ...more.map(([, m]) => m.toUpperCase()),
          ...words.map((w) => `${w}\n`),
          ...words.map((w) => w.toUpperCase()),
          ...words.map(kelvin),
          ...words.flatMap((w) => extra.map((e) => w + e)),
        ];
        return probes.every((p) => f(p) === re.test(p));
      },
    ),
    { numRuns: 500 },
  );
});
