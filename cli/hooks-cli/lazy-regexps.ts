/**
 * A build step for the hook bundles (build-hooks.ts), after name-tests.ts and
 * regexp-gates.ts: each module-level `const NAME = /…/;` of a file (not
 * exported) is created the first time the file's code reads it, not when the
 * module loads: the declaration becomes `var NAME;` and each read of NAME
 * `(NAME || (NAME = /…/))`.
 *
 * Why: V8 parses a regular expression literal's pattern when it creates the
 * object, and a module's top level creates all of its own. The deep stage's
 * modules hold some hundred such constants (about 16 KB of patterns), and a
 * line that needs the analysis read a few dozen of them: their creation was
 * most of the 2-3M instructions the deep stage's top level cost each run
 * (callgrind, docs/benchmarks.md).
 *
 * Same answers: the constant is the same one object from its first read on,
 * created by the same literal (a literal made once, as at the top level), so
 * its `lastIndex` and every other state behave as before; only the moment it
 * is made moves, and making a valid literal has no other effect. A constant
 * is left as it is when its name appears anywhere but in a plain read (an
 * export, a shorthand property, a name declared again in an inner scope, a
 * `typeof`, ...), since this step sees one file's syntax and no scopes.
 */
import ts from 'typescript';

/** Parent kinds where an identifier is a plain read of a value. */
function isPlainRead(node: ts.Identifier): boolean {
  const p = node.parent as ts.Node | undefined;
  if (!p) return false; // made by an earlier step: not judged, so not taken
  if (ts.isPropertyAccessExpression(p)) return p.expression === node;
  if (ts.isElementAccessExpression(p)) return p.expression === node;
  if (ts.isCallExpression(p) || ts.isNewExpression(p)) return p.expression !== node && ((p.arguments ?? []) as readonly ts.Node[]).includes(node);
  if (ts.isArrayLiteralExpression(p) || ts.isParenthesizedExpression(p) || ts.isSpreadElement(p) || ts.isReturnStatement(p)) return true;
  if (ts.isConditionalExpression(p)) return p.whenTrue === node || p.whenFalse === node;
  if (ts.isBinaryExpression(p)) return p.operatorToken.kind !== ts.SyntaxKind.EqualsToken || p.right === node;
  if (ts.isPropertyAssignment(p)) return p.initializer === node;
  if (ts.isVariableDeclaration(p)) return p.initializer === node;
  return false;
}

/** The file's module-level `const NAME = /…/;` (one declaration, not exported, no type) read only plainly: name -> literal. */
export function lazyConstants(sf: ts.SourceFile): Map<string, string> {
  const found = new Map<string, string>();
  const decls = new Set<ts.Node>();
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st) || st.modifiers?.length || !(st.declarationList.flags & ts.NodeFlags.Const) || st.declarationList.declarations.length !== 1) continue;
    const d = st.declarationList.declarations[0];
    if (ts.isIdentifier(d.name) && d.initializer && ts.isRegularExpressionLiteral(d.initializer) && !d.type) {
      found.set(d.name.text, d.initializer.text);
      decls.add(d.name);
    }
  }
  if (found.size === 0) return found;
  const check = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && found.has(node.text) && !decls.has(node) && !isPlainRead(node)) found.delete(node.text);
    ts.forEachChild(node, check);
  };
  check(sf);
  return found;
}

/** A TypeScript transformer (for transpileModule's `before`) creating each module-level regular expression constant on first read. */
export const lazyRegexpsTransformer: ts.TransformerFactory<ts.SourceFile> = (context) => {
  const f = context.factory;
  return (sf) => {
    const lazy = lazyConstants(sf);
    if (lazy.size === 0) return sf;
    const visit = (node: ts.Node): ts.Node => {
      if (ts.isVariableStatement(node) && node.parent === sf && node.declarationList.declarations.length === 1) {
        const d = node.declarationList.declarations[0];
        if (ts.isIdentifier(d.name) && lazy.has(d.name.text) && d.initializer && ts.isRegularExpressionLiteral(d.initializer)) {
          return f.createVariableStatement(undefined, f.createVariableDeclarationList([f.createVariableDeclaration(d.name.text)], ts.NodeFlags.None));
        }
      }
      if (ts.isIdentifier(node) && lazy.has(node.text) && isPlainRead(node)) {
        const id = f.createIdentifier(node.text);
        return f.createParenthesizedExpression(f.createLogicalOr(id, f.createParenthesizedExpression(f.createAssignment(f.createIdentifier(node.text), f.createRegularExpressionLiteral(lazy.get(node.text)!)))));
      }
      return ts.visitEachChild(node, visit, context);
    };
    return ts.visitEachChild(sf, visit, context);
  };
};
