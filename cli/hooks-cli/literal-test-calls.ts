/**
 * What the bundles' regular-expression build steps (name-tests.ts,
 * regexp-gates.ts) share: finding `/…/.test(x)` calls in a source file and
 * rewriting them with the help of variables declared at the top of the file.
 */
import ts from 'typescript';

/** Characters a backslash makes literal in a pattern (identity escapes of syntax characters). */
export const ESCAPED = /[.+/*?()|^$[\]{}\\-]/;

/** Index just past the class opening at `i` (`[`), or -1. */
export function skipClass(body: string, i: number): number {
  let j = i + 1;
  if (body[j] === '^') j++;
  for (; j < body.length; j++) {
    if (body[j] === '\\') j++;
    else if (body[j] === ']') return j + 1;
  }
  return -1;
}

/** Index just past the group opening at `i` (`(`), or -1. */
export function skipGroup(body: string, i: number): number {
  let depth = 0;
  for (let j = i; j < body.length; j++) {
    const c = body[j];
    if (c === '\\') j++;
    else if (c === '[') {
      const k = skipClass(body, j);
      if (k < 0) return -1;
      j = k - 1;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return j + 1;
  }
  return -1;
}

/** The top-level alternatives of `body`, split at its `|` outside groups and classes, or null when the scan cannot tell. */
export function alternatives(body: string): string[] | null {
  const out: string[] = [];
  let from = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\') i++;
    else if (c === '[' || c === '(') {
      const end = c === '[' ? skipClass(body, i) : skipGroup(body, i);
      if (end < 0) return null;
      i = end - 1;
    } else if (c === '|') {
      out.push(body.slice(from, i));
      from = i + 1;
    }
  }
  out.push(body.slice(from));
  return out;
}

export interface LiteralTestCall {
  /** The literal's text, as written (`/^(a|b)$/`), or null for a call on a name (`NAME.test(x)`). */
  literal: string | null;
  name: string | null;
  argument: ts.Expression;
}

/** `node` as a call of `test` with one plain argument on a regular expression literal (or, with `names`, on a name), else null. */
export function literalTestCall(node: ts.Node, names = false): LiteralTestCall | null {
  if (
    !ts.isCallExpression(node) ||
    node.arguments.length !== 1 ||
    ts.isSpreadElement(node.arguments[0]) ||
    node.questionDotToken ||
    !ts.isPropertyAccessExpression(node.expression) ||
    node.expression.questionDotToken ||
    node.expression.name.text !== 'test'
  )
    return null;
  const on = node.expression.expression;
  if (ts.isRegularExpressionLiteral(on)) return { literal: on.text, name: null, argument: node.arguments[0] };
  if (names && ts.isIdentifier(on)) return { literal: null, name: on.text, argument: node.arguments[0] };
  return null;
}

/** `${expr}`: the value as a string, converted as RegExp.prototype.test converts its argument (ToString). */
export function asString(f: ts.NodeFactory, expr: ts.Expression): ts.Expression {
  return f.createTemplateExpression(f.createTemplateHead(''), [f.createTemplateSpan(expr, f.createTemplateTail(''))]);
}

/** Variables a Rewrite may declare. */
export interface Variables {
  /**
   * A temporary, a `var` of the innermost function around the call (a register, where a variable of the file
   * would be a context slot): set and read within one expression, with no code of the program in between.
   */
  temp(): ts.Identifier;
  /** A `var` at the top of the file, kept from call to call (`var`, not `let`: no hole check on each read). */
  shared(name: string): ts.Identifier;
}

/** Builds the replacement of one call from its argument (already transformed), declaring variables with `vars`. */
export type Rewrite = (argument: ts.Expression, call: ts.CallExpression, f: ts.NodeFactory, vars: Variables) => ts.Expression;

/**
 * The file's constants `const NAME = /…/;` (not exported) that `plan` takes and that are used only as
 * `NAME.test(x)`: their calls can be rewritten like a literal's and the constant dropped.
 */
function testOnlyConstants(sf: ts.SourceFile, plan: (literal: string) => Rewrite | null): Map<string, string> {
  const found = new Map<string, string>();
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st) || st.modifiers?.length || !(st.declarationList.flags & ts.NodeFlags.Const) || st.declarationList.declarations.length !== 1) continue;
    const d = st.declarationList.declarations[0];
    if (ts.isIdentifier(d.name) && d.initializer && ts.isRegularExpressionLiteral(d.initializer) && !d.type && plan(d.initializer.text) !== null) found.set(d.name.text, d.initializer.text);
  }
  if (found.size === 0) return found;
  const check = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && found.has(node.text)) {
      const p = node.parent;
      const declared = ts.isVariableDeclaration(p) && p.name === node && ts.isVariableStatement(p.parent.parent) && p.parent.parent.parent === sf;
      const tested = ts.isPropertyAccessExpression(p) && p.expression === node && ts.isCallExpression(p.parent) && p.parent.expression === p && literalTestCall(p.parent, true) !== null;
      if (!declared && !tested) found.delete(node.text); // any other use (or a shadowing name): left as it is
    }
    ts.forEachChild(node, check);
  };
  check(sf);
  return found;
}

/**
 * A transformer that rewrites each `/…/.test(x)` call whose literal `plan` gives a Rewrite for (null: left as it
 * is), and with `constants`, each `NAME.test(x)` of a constant only ever tested (testOnlyConstants), dropping
 * the constant; the variables a Rewrite asks for are declared as Variables says.
 */
export function literalTestTransformer(
  plan: (literal: string) => Rewrite | null,
  opts: { skipFile?: (sf: ts.SourceFile) => boolean; constants?: boolean } = {},
): ts.TransformerFactory<ts.SourceFile> {
  return (context) => {
    const f = context.factory;
    return (sf) => {
      if (opts.skipFile?.(sf)) return sf;
      const constants = opts.constants ? testOnlyConstants(sf, plan) : new Map<string, string>();
      const declared: ts.Identifier[] = [];
      const vars: Variables = {
        // Hoisted by visitEachChild's lexical environments: into the function whose body is being visited, else the file.
        temp: () => f.createTempVariable(context.hoistVariableDeclaration),
        shared: (name) => {
          const id = f.createUniqueName(name);
          declared.push(id);
          return id;
        },
      };
      const visit = (node: ts.Node): ts.Node | undefined => {
        if (ts.isVariableStatement(node) && node.parent === sf && node.declarationList.declarations.length === 1) {
          const name = node.declarationList.declarations[0].name;
          if (ts.isIdentifier(name) && constants.has(name.text)) return undefined;
        }
        const call = literalTestCall(node, constants.size > 0);
        const literal = call === null ? undefined : call.literal ?? constants.get(call.name!);
        const rewrite = literal === undefined ? null : plan(literal);
        if (call !== null && rewrite !== null) return rewrite(ts.visitNode(call.argument, visit) as ts.Expression, node as ts.CallExpression, f, vars);
        return ts.visitEachChild(node, visit, context);
      };
      const out = ts.visitEachChild(sf, visit, context);
      if (declared.length === 0) return out;
      const decl = f.createVariableStatement(undefined, f.createVariableDeclarationList(declared.map((id) => f.createVariableDeclaration(id)), ts.NodeFlags.None));
      return f.updateSourceFile(out, [decl, ...out.statements]);
    };
  };
}
