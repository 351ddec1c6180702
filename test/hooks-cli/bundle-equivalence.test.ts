/**
 * The validator built as shipped (the regular-expression speed steps,
 * cli/hooks-cli/name-tests.ts, regexp-gates.ts, lazy-regexps.ts, and its rule
 * families split into stages loaded behind their gates, build-hooks.ts
 * RULE_STAGES, lib/rule-gates.ts) answers every corpus command, the unfixed
 * parts included, exactly as the build without either: every command's
 * analysis as each build bundles it gives the same findings, and the whole
 * hooks, run on a sample of every corpus file in both input shapes, give the
 * same exit code, stdout and stderr (bundle-equivalence.ts says why that
 * covers every answer, and does the work).
 */
import t from 'tap';
import { compareBundles, CORPUS_DIRS } from './bundle-equivalence';

t.setTimeout(900_000); // on a shared machine

t.test('the speed steps and the rule stages change no answer of the validator on any corpus command', async (t) => {
  const c = await compareBundles(t, CORPUS_DIRS);
  t.ok(c.bytesWith !== c.bytesWithout, `the steps rewrote the bundle (${c.bytesWith} against ${c.bytesWithout} bytes)`);
  t.same(c.stagesWithout, ['command-validator-deep.js', 'command-validator.js'], 'without: every rule in the deep stage');
  t.ok(c.stagesWith.includes('command-validator-windows.js') && c.stagesWith.includes('command-validator-framework.js'), `with: the rule stages apart (${c.stagesWith.join(', ')})`);
  t.ok(c.files > 100 && c.analysed > 20_000 && c.runs > 2 * c.files, `${c.analysed} commands analysed, ${c.runs} hook runs over ${c.files} corpus files`);
  t.same(c.differences, [], 'no command answered differently');
});
