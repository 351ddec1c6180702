/**
 * A build step for the hook bundles (build-hooks.ts), after name-tests.ts:
 * each `/…/.test(x)` whose pattern can only match a string holding some
 * literal text is preceded by a plain string check of that text, so that the
 * expression is created and compiled only for the strings that could match.
 * `/^\/etc\/(shadow|sudoers)$/.test(p)` becomes
 * `(t = `${p}`, t.startsWith("/etc/") && /^\/etc\/(shadow|sudoers)$/.test(t))`.
 *
 * Why: V8 compiles a regular expression at its first use, tens to hundreds
 * of thousands of instructions apiece, and a hook process runs most of its
 * expressions once, mostly on strings that do not match (a file name tested
 * against secret-file patterns, a word tested against flag patterns).
 *
 * Same answers: the checks are necessary conditions of a match, read off the
 * pattern's top level (no `|` there): the literal characters right after a
 * leading `^` (a prefix, since without the `m` flag `^` only matches at 0),
 * those right before a trailing `$` (a suffix), else the longest run of
 * literal characters (which any match contains). A literal character is a
 * plain one or an identity escape such as `\.`, and one followed by a
 * quantifier does not count. When a check fails, `test` would have returned
 * false, and a failed match changes no state (the expression is not global
 * or sticky: those flags, and `i`, `m`, `v`, are left alone). The argument
 * is turned into a string once, by a template literal, as `test` does.
 * Anything the scan does not understand (back-references, `\x41`-style
 * escapes, braces) leaves the expression as it is.
 */
import type ts from 'typescript';
import { asString, ESCAPED, literalTestTransformer, skipClass, skipGroup } from './literal-test-calls';

/** Characters that stand for themselves in a pattern, outside a class. */
const PLAIN = /[A-Za-z0-9_@:=,%~ #&;<>!'"/-]/;
/** Escapes that are one class or assertion, two characters long. */
const CLASS_ESCAPES = /[dDwWsSbB]/;

export interface Gate {
  prefix: string;
  suffix: string;
  /** Used only when there is neither prefix nor suffix. */
  infix: string;
}

type Token = { kind: 'anchor'; c: '^' | '$' } | { kind: 'literal'; c: string; quantified: boolean } | { kind: 'other' };

/** Index just past a quantifier starting at `i`, or `i` when there is none; -1 when the scan cannot tell. */
function skipQuantifier(body: string, i: number): number {
  let j = i;
  const c = body[j];
  if (c === '*' || c === '+' || c === '?') j++;
  else if (c === '{') {
    const m = /^\{\d+(,\d*)?\}/.exec(body.slice(j));
    if (!m) return -1;
    j += m[0].length;
  } else return i;
  if (body[j] === '?') j++; // lazy
  return j;
}

function tokens(body: string): Token[] | null {
  const out: Token[] = [];
  for (let i = 0; i < body.length; ) {
    const c = body[i];
    if (c === '^' || c === '$') {
      out.push({ kind: 'anchor', c });
      i++;
      continue;
    }
    if (c === '|') return null; // a top-level alternation: nothing is common to every match
    let literal: string | null = null;
    let end: number;
    if (c === '\\') {
      const next = body[i + 1];
      if (next === undefined) return null;
      if (ESCAPED.test(next)) literal = next;
      else if (!CLASS_ESCAPES.test(next)) return null; // \1, \x41, \u0041, \cJ, \k<n>, \n...: left alone
      end = i + 2;
    } else if (c === '[') {
      end = skipClass(body, i);
    } else if (c === '(') {
      end = skipGroup(body, i);
    } else if (c === '.') {
      end = i + 1;
    } else if (PLAIN.test(c)) {
      literal = c;
      end = i + 1;
    } else {
      return null; // a stray quantifier or bracket, a character past ASCII...
    }
    if (end < 0) return null;
    const after = skipQuantifier(body, end);
    if (after < 0) return null;
    out.push(literal === null ? { kind: 'other' } : { kind: 'literal', c: literal, quantified: after !== end });
    i = after;
  }
  return out;
}

/** The checks a regular expression literal's text allows, or null (none, or a pattern the scan leaves alone). */
export function literalGate(literal: string): Gate | null {
  const end = literal.lastIndexOf('/');
  if (!literal.startsWith('/') || end <= 0) return null;
  const flags = literal.slice(end + 1);
  if (!/^[sud]*$/.test(flags)) return null;
  const toks = tokens(literal.slice(1, end));
  if (toks === null) return null;
  // Anchors only at the very start and the very end.
  for (let k = 0; k < toks.length; k++) {
    const tk = toks[k];
    if (tk.kind === 'anchor' && !(tk.c === '^' && k === 0) && !(tk.c === '$' && k === toks.length - 1)) return null;
  }
  const isLit = (tk: Token | undefined): tk is Token & { kind: 'literal' } => tk !== undefined && tk.kind === 'literal' && !tk.quantified;
  let prefix = '';
  if (toks[0]?.kind === 'anchor' && toks[0].c === '^') for (let k = 1; isLit(toks[k]); k++) prefix += (toks[k] as { c: string }).c;
  let suffix = '';
  const last = toks.length - 1;
  if (last > 0 && toks[last].kind === 'anchor' && (toks[last] as { c: string }).c === '$') for (let k = last - 1; k >= 0 && isLit(toks[k]); k--) suffix = (toks[k] as { c: string }).c + suffix;
  let infix = '';
  if (prefix === '' && suffix === '') {
    let run = '';
    for (const tk of toks) {
      run = isLit(tk) ? run + tk.c : '';
      if (run.length > infix.length) infix = run;
    }
  }
  return prefix === '' && suffix === '' && infix === '' ? null : { prefix, suffix, infix };
}

/** A TypeScript transformer (for transpileModule's `before`) gating each qualifying `/…/.test(x)` by string checks. */
export const regexpGatesTransformer = literalTestTransformer((literal) => {
  const gate = literalGate(literal);
  if (gate === null) return null;
  return (argument, call, f, newVariable) => {
    const text = newVariable('__text');
    const check = (method: string, s: string) => f.createCallExpression(f.createPropertyAccessExpression(text, method), undefined, [f.createStringLiteral(s)]);
    const checks = [
      ...(gate.prefix ? [check('startsWith', gate.prefix)] : []),
      ...(gate.suffix ? [check('endsWith', gate.suffix)] : []),
      ...(gate.infix ? [check('includes', gate.infix)] : []),
    ];
    const test = f.updateCallExpression(call, call.expression, call.typeArguments, [text]);
    const all = checks.reduceRight<ts.Expression>((rest, c) => f.createLogicalAnd(c, rest), test);
    return f.createParenthesizedExpression(f.createCommaListExpression([f.createAssignment(text, asString(f, argument)), all]));
  };
});
