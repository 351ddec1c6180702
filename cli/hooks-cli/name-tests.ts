/**
 * A build step for the hook bundles (build-hooks.ts): each
 * `/^(npm|pnpm|yarn)$/.test(x)` in the sources, a regular expression literal
 * that only says "x is one of these words", becomes a lookup in a Set made
 * the first time the expression runs: `(s || (s = new Set([...]))).has(`${x}`)`.
 *
 * Why: a hook lives a few milliseconds, and V8 compiles each regular
 * expression at its first use (parsing it, building its automaton, emitting
 * bytecode), which costs some 50,000-150,000 instructions apiece, where the
 * test itself costs a few hundred. The validator's first analysis of an
 * ordinary command ran some 110 distinct expressions, about half of them
 * lists of command names, and compiling expressions was two thirds of that
 * analysis (callgrind, Node 20.20).
 *
 * Same answers by construction: only an anchored list of literal words
 * qualifies (no flags, a whole-pattern group or a single word, each character
 * a literal one or an identity escape such as `\.`), and for such a pattern
 * `test` is true exactly when the string equals one of the words (`$` without
 * the `m` flag matches only at the end of the string). The argument is turned
 * into a string by a template literal, as `test` does (ToString). The one
 * thing lost is the legacy `RegExp.$1`-style state a match sets, which no
 * source reads (checked when transforming: a file that names it is left as it
 * is). Anything else (flags, classes, quantifiers, `^a|b$`) is left alone.
 */
import type ts from 'typescript';
import { alternatives, asString, ESCAPED, literalTestTransformer, skipGroup } from './literal-test-calls';

/** Characters that stand for themselves in a pattern, outside a class, with or without a backslash. */
const PLAIN = /[A-Za-z0-9_@:=,%~ #&;<>!'"-]/;
/** The one character past ASCII whose lower case is ASCII (KELVIN SIGN, "k"); checked in the tests for every code point. */
const KELVIN = '\u212a';

export interface WordList {
  /** The alternatives that are literal words. */
  words: string[];
  /** The others, as written in the pattern, tested by a smaller expression `^a$|^b$`. */
  others: string[];
  /** The `i` flag: words compared in lower case (they are ASCII). */
  ignoreCase: boolean;
}

/** `s` as a literal word (plain characters and identity escapes), else null. */
function word(s: string): string | null {
  let w = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') {
      const next = s[i + 1];
      if (next === undefined || !ESCAPED.test(next)) return null;
      w += next;
      i++;
    } else if (PLAIN.test(c)) w += c;
    else return null;
  }
  return w;
}

/** Whether the last character of `body` is escaped (an odd number of backslashes before it). */
function escapedEnd(body: string): boolean {
  let n = 0;
  for (let i = body.length - 2; i >= 0 && body[i] === '\\'; i--) n++;
  return n % 2 === 1;
}

/**
 * A regular expression literal's text (`/^(a|b|c\d)$/`) as a list of words (and other alternatives) when it is
 * `^(…|…)$` or `^word$`, with no flag but `i`, and some alternatives are literal words; else null.
 */
export function wordList(literal: string): WordList | null {
  const end = literal.lastIndexOf('/');
  if (!literal.startsWith('/') || end <= 0) return null;
  const flags = literal.slice(end + 1);
  if (flags !== '' && flags !== 'i') return null;
  const body = literal.slice(1, end);
  if (!body.startsWith('^') || !body.endsWith('$') || escapedEnd(body)) return null;
  let inner = body.slice(1, -1);
  if (inner.startsWith('(') && !inner.startsWith('(?') && skipGroup(inner, 0) === inner.length) inner = inner.slice(1, -1);
  else if (inner.startsWith('(?:') && skipGroup(inner, 0) === inner.length) inner = inner.slice(3, -1);
  else if (word(inner) === null) return null; // `^a|b$` is (^a)|(b$); only a whole group or one word is a list
  const alts = alternatives(inner);
  if (alts === null) return null;
  const words: string[] = [];
  const others: string[] = [];
  for (const a of alts) {
    const w = word(a);
    if (w !== null) words.push(flags === 'i' ? w.toLowerCase() : w);
    else others.push(a);
  }
  // Back-references would point elsewhere once the others stand alone; a lone word among others gains nothing.
  if (others.some((o) => /\\([1-9]|k<)/.test(o)) || words.length === 0 || (others.length > 0 && words.length < 2)) return null;
  return { words, others, ignoreCase: flags === 'i' };
}

/**
 * A TypeScript transformer (for transpileModule's `before`) making each qualifying `/…/.test(x)` (or `NAME.test(x)` of a
 * constant only ever tested) a Set lookup, followed by the smaller expression of the other alternatives if any.
 */
export const nameTestsTransformer = literalTestTransformer(
  (literal) => {
    const list = wordList(literal);
    if (list === null) return null;
    const { words, others, ignoreCase } = list;
    return (argument, _call, f, vars) => {
      if (words.length === 1 && others.length === 0 && !ignoreCase) return f.createParenthesizedExpression(f.createStrictEquality(asString(f, argument), f.createStringLiteral(words[0])));
      const text = vars.temp();
      const holder = vars.shared('__words');
      const set = f.createNewExpression(f.createIdentifier('Set'), undefined, [f.createArrayLiteralExpression(words.map((w) => f.createStringLiteral(w)))]);
      const made = f.createParenthesizedExpression(f.createLogicalOr(holder, f.createParenthesizedExpression(f.createAssignment(holder, set))));
      const key = ignoreCase ? f.createCallExpression(f.createPropertyAccessExpression(text, 'toLowerCase'), undefined, []) : text;
      let found: ts.Expression = f.createCallExpression(f.createPropertyAccessExpression(made, 'has'), undefined, [key]);
      if (ignoreCase) found = f.createLogicalAnd(found, f.createLogicalNot(f.createCallExpression(f.createPropertyAccessExpression(text, 'includes'), undefined, [f.createStringLiteral(KELVIN)])));
      if (others.length > 0) {
        // `^a$|^b$`, the same as `^(?:a|b)$`, so that regexp-gates.ts reads each alternative's literal text.
        const rest = f.createRegularExpressionLiteral(`/${others.map((o) => `^${o}$`).join('|')}/${ignoreCase ? 'i' : ''}`);
        found = f.createLogicalOr(found, f.createCallExpression(f.createPropertyAccessExpression(rest, 'test'), undefined, [text]));
      }
      return f.createParenthesizedExpression(f.createCommaListExpression([f.createAssignment(text, asString(f, argument)), found]));
    };
  },
  {
    // A Set lookup sets none of the legacy RegExp.$1-style state a successful match sets: a file reading it is left alone.
    skipFile: (sf) => /RegExp\s*(\.\s*(\$|input|last|left|right)|\[)/.test(sf.text),
    constants: true,
  },
);
