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
 * Same answers: the checks are necessary conditions of a match, read off
 * each top-level alternative of the pattern (a match matches one of them,
 * so the checks of the alternatives are joined by `||`; an alternative
 * without checks leaves the expression alone): the literal characters right
 * after a leading `^` (a prefix, since without the `m` flag `^` only matches
 * at 0), those right before a trailing `$` (a suffix), and the longest run
 * of literal characters (which any match contains). A literal character is
 * a plain one or an identity escape such as `\.`, and one followed by a
 * quantifier does not count. With the `i` flag (not with `u` or `v`) the
 * checks are made in lower case (literalGates says why they still hold). When
 * the checks fail, `test` would have returned false, and a failed match
 * changes no state (the expression is not global or sticky: those flags,
 * and `m`, are left alone). The argument is turned into a string once, by a
 * template literal, as `test` does. Anything the scan does not understand
 * (back-references, `\x41`-style escapes, braces) leaves the expression as
 * it is.
 */
import type ts from 'typescript';
import { alternatives, asString, ESCAPED, literalTestTransformer, skipClass, skipGroup } from './literal-test-calls';

/** Characters that stand for themselves in a pattern, outside a class. */
const PLAIN = /[A-Za-z0-9_@:=,%~ #&;<>!'"/-]/;
/** Escapes that are one class or assertion, two characters long. */
const CLASS_ESCAPES = /[dDwWsSbB]/;

export interface Gate {
  prefix: string;
  suffix: string;
  /** The longest literal run, unless the prefix or the suffix holds it. */
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

/** The checks a pattern without a top-level `|` allows, or null (none, or a pattern the scan leaves alone). */
function bodyGate(body: string): Gate | null {
  const toks = tokens(body);
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
  let run = '';
  for (const tk of toks) {
    run = isLit(tk) ? run + tk.c : '';
    if (run.length > infix.length) infix = run;
  }
  if (prefix.includes(infix) || suffix.includes(infix)) infix = ''; // says nothing more (`^\/(var\/)?run\/secrets\/`: it does)
  return prefix === '' && suffix === '' && infix === '' ? null : { prefix, suffix, infix };
}

/** The checks a regular expression literal's text allows, when it has no top-level `|` and no `i` flag, or null. */
export function literalGate(literal: string): Gate | null {
  const end = literal.lastIndexOf('/');
  if (!literal.startsWith('/') || end <= 0) return null;
  if (!/^[sud]*$/.test(literal.slice(end + 1))) return null;
  return bodyGate(literal.slice(1, end));
}

export interface Gates {
  /** One per top-level alternative: a match passes the checks of the alternative it matched. */
  gates: Gate[];
  /** The `i` flag: the checks are made on the string in lower case, with the texts in lower case. */
  ignoreCase: boolean;
}

/**
 * The checks of literalGate, also for a pattern with top-level alternatives (each must have checks) and for the
 * `i` flag without `u` or `v`. Without them, `i` matches an ASCII character only to itself and its other case
 * (a character past ASCII never canonicalizes to one, ECMA-262 Canonicalize), and the texts are ASCII, so a
 * matched text, in lower case, is the checks' text in lower case; toLowerCase maps a string character by
 * character, so prefixes stay prefixes, suffixes suffixes. With `u`, K (KELVIN SIGN) would match k.
 */
export function literalGates(literal: string): Gates | null {
  const end = literal.lastIndexOf('/');
  if (!literal.startsWith('/') || end <= 0) return null;
  const flags = literal.slice(end + 1);
  const ignoreCase = flags.includes('i');
  if (!/^[sdi]*$/.test(flags) && !(!ignoreCase && /^[sud]*$/.test(flags))) return null;
  const alts = alternatives(literal.slice(1, end));
  if (alts === null) return null;
  const gates: Gate[] = [];
  for (const a of alts) {
    const g = bodyGate(a);
    if (g === null) return null;
    gates.push(ignoreCase ? { prefix: g.prefix.toLowerCase(), suffix: g.suffix.toLowerCase(), infix: g.infix.toLowerCase() } : g);
  }
  return { gates, ignoreCase };
}

/** A TypeScript transformer (for transpileModule's `before`) gating each qualifying `/…/.test(x)` by string checks. */
export const regexpGatesTransformer = literalTestTransformer((literal) => {
  const found = literalGates(literal);
  if (found === null) return null;
  const { gates, ignoreCase } = found;
  return (argument, call, f, vars) => {
    const text = vars.temp();
    const lettered = gates.some((g) => /[a-z]/.test(g.prefix + g.suffix + g.infix));
    // In lower case only when a check has a letter: `://` is the same in either case.
    const lower = ignoreCase && lettered ? vars.temp() : text;
    const check = (method: string, s: string) => f.createCallExpression(f.createPropertyAccessExpression(lower, method), undefined, [f.createStringLiteral(s)]);
    // Each gate has at least one check (bodyGate), so neither list is empty.
    const checks = (g: Gate) => {
      const list = [...(g.prefix ? [check('startsWith', g.prefix)] : []), ...(g.suffix ? [check('endsWith', g.suffix)] : []), ...(g.infix ? [check('includes', g.infix)] : [])];
      return list.slice(1).reduce<ts.Expression>((a, b) => f.createLogicalAnd(a, b), list[0]);
    };
    const any = gates.map(checks).reduce((a, b) => f.createLogicalOr(a, b));
    const test = f.updateCallExpression(call, call.expression, call.typeArguments, [text]);
    const gated = f.createLogicalAnd(gates.length > 1 ? f.createParenthesizedExpression(any) : any, test);
    const steps: ts.Expression[] = [f.createAssignment(text, asString(f, argument))];
    if (lower !== text) steps.push(f.createAssignment(lower, f.createCallExpression(f.createPropertyAccessExpression(text, 'toLowerCase'), undefined, [])));
    return f.createParenthesizedExpression(f.createCommaListExpression([...steps, gated]));
  };
});
