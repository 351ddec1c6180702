/**
 * The bundles' gate build step (cli/hooks-cli/regexp-gates.ts): which checks
 * it reads off a pattern, and that the gated code answers as the bare
 * expression did, for fixed cases and for random patterns and strings
 * (fast-check), alternatives and the `i` flag included.
 */
import fc from 'fast-check';
import t from 'tap';
import ts from 'typescript';
import { literalGate, literalGates, regexpGatesTransformer } from '../../cli/hooks-cli/regexp-gates';

function transformed(source: string): string {
  return ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 }, transformers: { before: [regexpGatesTransformer] } }).outputText;
}

/** `literal.test(x)` transpiled with the step, and run. */
function gated(literal: string): (x: unknown) => boolean {
  const module = { exports: {} as { f: (x: unknown) => boolean } };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  new Function('module', 'exports', 'require', transformed(`export const f = (x: any) => ${literal}.test(x);`))(module, module.exports, require);
  return module.exports.f;
}

t.test('reads prefix, suffix and infix off the top level of a pattern', async (t) => {
  t.same(literalGate('/^\\/etc\\/(shadow|gshadow|sudoers)(\\.d\\/.*)?$/'), { prefix: '/etc/', suffix: '', infix: '' });
  t.same(literalGate('/\\.pub$/'), { prefix: '', suffix: '.pub', infix: '' });
  t.same(literalGate('/^id_(rsa|dsa)[^.]*$/'), { prefix: 'id_', suffix: '', infix: '' });
  t.same(literalGate('/\\/\\.git\\/(objects|refs)\\//'), { prefix: '', suffix: '', infix: '/.git/' });
  t.same(literalGate('/^gpg2?$/'), { prefix: 'gpg', suffix: '', infix: '' }, 'a quantified character ends the prefix');
  t.same(literalGate('/^--(url|endpoint)(=|$)/'), { prefix: '--', suffix: '', infix: '' });
  t.same(literalGate('/^mkfs(\\.|$)/s'), { prefix: 'mkfs', suffix: '', infix: '' });
  t.same(literalGate('/^docker-credential-/'), { prefix: 'docker-credential-', suffix: '', infix: '' });
  t.same(literalGate('/a\\bcd$/'), { prefix: '', suffix: 'cd', infix: '' });
  for (const no of [
    '/^(a|b)$/', // nothing literal at the top level
    '/^abc|def$/', // a top-level alternation
    '/^abc$/i', // flags the checks would not respect
    '/^abc$/m',
    '/abc/g',
    '/abc/y',
    '/^a\\1b$/', // a back-reference
    '/^\\x41bc$/', // a multi-character escape
    '/^a{b$/', // a stray brace
    '/a^b/', // an anchor inside
    '/[abc]+/',
  ]) {
    t.equal(literalGate(no), null, no);
  }
});

t.test('reads the checks of each top-level alternative, and of the i flag in lower case', async (t) => {
  t.same(literalGates('/^-[a-zA-Z]*f$|^--file$/'), { gates: [{ prefix: '-', suffix: 'f', infix: '' }, { prefix: '--file', suffix: '--file', infix: '' }], ignoreCase: false });
  t.same(literalGates('/^Cmd(\\.exe)?$/i'), { gates: [{ prefix: 'cmd', suffix: '', infix: '' }], ignoreCase: true });
  t.same(literalGates('/:\\/\\//i'), { gates: [{ prefix: '', suffix: '', infix: '://' }], ignoreCase: true });
  for (const no of ['/^abc$/iu', '/^abc$/iv', '/^abc$/ig', '/abc|[xy]/', '/abc|/', '/(a|b)c|d/m']) t.equal(literalGates(no), null, no);
  t.match(transformed('export const f = (x: string) => /prod/i.test(x);'), /toLowerCase\(\)[^]*includes\("prod"\)/);
  t.notMatch(transformed('export const f = (x: string) => /:\\/\\//i.test(x);'), /toLowerCase/, 'no letter: no lower case');
});

t.test('gates only `literal.test(x)`', async (t) => {
  t.match(transformed('export const f = (x: string) => /\\.pub$/.test(x);'), /endsWith\("\.pub"\)/);
  t.notMatch(transformed('export const f = (x: string) => /\\.pub$/.exec(x);'), /endsWith/);
  t.notMatch(transformed('const R = /\\.pub$/; export const f = (x: string) => R.test(x);'), /endsWith/);
});

t.test('the gated test answers as the expression, for fixed cases', async (t) => {
  const cases: [string, unknown[]][] = [
    ['/^\\/etc\\/(shadow|sudoers)(\\.d\\/.*)?$/', ['/etc/shadow', '/etc/sudoers.d/x', '/etc/passwd', 'x/etc/shadow', '/etc/shadow\n', '', undefined]],
    ['/\\.pub$/', ['id.pub', 'id.pub\n', '.pu', 'x.pubx', ['a.pub'], { toString: () => 'k.pub' }, null]],
    ['/^gpg2?$/', ['gpg', 'gpg2', 'gp', 'gpg22', 'gpgx']],
    ['/\\/\\.git\\/(objects|refs)\\//', ['/r/.git/refs/h', '/r/.git/x', '.git/refs/']],
    ['/(^|\\/)\\.\\.(\\/|$)/', ['..', 'a/..', '../b', 'a..b', '...', '']],
  ];
  for (const [literal, probes] of cases) {
    const f = gated(literal);
    const re = new Function(`return ${literal}`)() as RegExp;
    for (const p of probes) t.equal(f(p), re.test(p as string), `${literal}.test(${JSON.stringify(p)})`);
  }
  // The temporary is a var of the function around the call; in a default parameter, TypeScript moves the default into the body.
  const module = { exports: {} as { h: (a: string) => boolean; k: (a: string) => boolean } };
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  new Function('module', 'exports', 'require', transformed('export function h(a: string, b = /^x/.test(a)) { return b; }\nexport const k = (a: string, b = /^x/.test(a)) => b;'))(module, module.exports, require);
  t.same([module.exports.h('xy'), module.exports.h('ay'), module.exports.k('xy'), module.exports.k('ay')], [true, false, true, false], 'in a default parameter');
  t.match(transformed('export function h(a: string) { return /^x/.test(a); }'), /function h\(a\) \{ var _a;/, 'the temporary is the function\'s own var');
  const seen: string[] = [];
  const once = gated('/\\.pub$/');
  t.equal(once({ toString: () => (seen.push('toString'), 'a.pub') }), true);
  t.same(seen, ['toString'], 'the argument is turned into a string once');
});

t.test('the gated test answers as the expression, for random patterns and strings', async () => {
  // Each atom with a string it matches, so that patterns come with strings they match (where a gate must pass).
  const atoms: [string, string][] = [
    ['a', 'a'], ['b', 'b'], ['-', '-'], ['_', '_'], [' ', ' '], [':', ':'], ['\\.', '.'], ['\\/', '/'], ['\\-', '-'], ['\\(', '('], ['\\$', '$'],
    ['.', 'x'], ['[ab]', 'b'], ['[^/]', 'q'], ['\\d', '7'], ['\\w', 'w'], ['(a|b)', 'a'], ['(?:\\.|$)', '.'], ['\\b', ''], ['(x|)', ''],
  ];
  const quants: [string, number][] = [['', 1], ['', 1], ['?', 0], ['?', 1], ['*', 0], ['*', 2], ['+', 1], ['+', 2], ['{2}', 2], ['{1,2}', 1], ['*?', 1]];
  const piece = fc.constantFrom('a', 'b', '-', '_', '/', '.', '(', '$', ' ', ':', '1', 'x', '\n', 'ab', '..', '/a');
  const noise = fc.array(piece, { maxLength: 6 }).map((p) => p.join(''));
  const sample = fc.record({
    start: fc.boolean(),
    end: fc.boolean(),
    flags: fc.constantFrom('', 's', 'u'),
    parts: fc.array(fc.tuple(fc.constantFrom(...atoms), fc.constantFrom(...quants)), { minLength: 1, maxLength: 7 }),
    before: noise,
    after: noise,
    others: fc.array(noise, { maxLength: 6 }),
  });
  fc.assert(
    fc.property(sample, ({ start, end, flags, parts, before, after, others }) => {
      const literal = `/${start ? '^' : ''}${parts.map(([[a], [q]]) => a + q).join('')}${end ? '$' : ''}/${flags}`;
      let re: RegExp;
      try {
        re = new Function(`return ${literal}`)() as RegExp;
      } catch {
        return true; // not a valid expression under these flags
      }
      if (literalGate(literal) === null) return true;
      const f = gated(literal);
      const matching = `${start ? '' : before}${parts.map(([[, m], [, n]]) => m.repeat(n)).join('')}${end ? '' : after}`;
      return [matching, before, after, ...others].every((s) => f(s) === re.test(s));
    }),
    { numRuns: 1000 },
  );
});

t.test('the gated test answers as the expression, for random alternatives, flags (i among them) and strings', async () => {
  const atoms: [string, string][] = [
    ['a', 'a'], ['B', 'B'], ['k', 'k'], ['s', 's'], ['-', '-'], [':', ':'], ['\\.', '.'], ['\\/', '/'], ['.', 'x'], ['[ab]', 'b'], ['\\d', '7'], ['(a|b)', 'a'], ['\\b', ''],
  ];
  const quants: [string, number][] = [['', 1], ['', 1], ['?', 0], ['*', 2], ['+', 1]];
  const alt = fc.record({
    start: fc.boolean(),
    end: fc.boolean(),
    parts: fc.array(fc.tuple(fc.constantFrom(...atoms), fc.constantFrom(...quants)), { minLength: 1, maxLength: 5 }),
  });
  const piece = fc.constantFrom('a', 'A', 'b', 'B', 'k', 'K', '\u212a', 's', 'S', '\u017f', '\u0130', '-', ':', '.', '/', '7', 'x', '\n');
  const noise = fc.array(piece, { maxLength: 5 }).map((p) => p.join(''));
  fc.assert(
    fc.property(fc.array(alt, { minLength: 1, maxLength: 3 }), fc.constantFrom('', 'i', 's', 'is', 'u', 'iu'), noise, noise, fc.array(noise, { maxLength: 5 }), (alts, flags, before, after, others) => {
      const literal = `/${alts.map(({ start, end, parts }) => `${start ? '^' : ''}${parts.map(([[a], [q]]) => a + q).join('')}${end ? '$' : ''}`).join('|')}/${flags}`;
      let re: RegExp;
      try {
        re = new Function(`return ${literal}`)() as RegExp;
      } catch {
        return true;
      }
      if (literalGates(literal) === null) return true;
      const f = gated(literal);
      const matching = alts.map(({ start, end, parts }) => `${start ? '' : before}${parts.map(([[, m], [, n]]) => m.repeat(n)).join('')}${end ? '' : after}`);
      const probes = [...matching, ...matching.map((m) => m.toUpperCase()), ...matching.map((m) => m.replace(/k/gi, '\u212a').replace(/s/gi, '\u017f')), before, after, ...others];
      return probes.every((p) => f(p) === re.test(p));
    }),
    { numRuns: 1500 },
  );
});
