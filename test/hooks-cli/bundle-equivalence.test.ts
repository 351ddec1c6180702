/**
 * The validator bundle built with the regular-expression speed steps
 * (cli/hooks-cli/name-tests.ts, regexp-gates.ts) and its rule families split
 * into stages loaded behind their gates (build-hooks.ts RULE_STAGES,
 * lib/rule-gates.ts) answers every corpus command, the unfixed parts included,
 * exactly as the bundle built without either: same exit code, same stdout,
 * same stderr, in both input shapes (bundle-equivalence.ts does the work).
 */
import t from 'tap';
import { compareBundles, CORPUS_DIRS } from './bundle-equivalence';

t.setTimeout(900_000); // 30,000 runs of two bundles, on a shared machine

t.test('the speed steps and the rule stages change no answer of the validator on any corpus command', async (t) => {
  const c = await compareBundles(t, CORPUS_DIRS);
  t.ok(c.bytesWith !== c.bytesWithout, `the steps rewrote the bundle (${c.bytesWith} against ${c.bytesWithout} bytes)`);
  t.same(c.stagesWithout, ['command-validator-deep.js', 'command-validator.js'], 'without: every rule in the deep stage');
  t.ok(c.stagesWith.includes('command-validator-windows.js') && c.stagesWith.includes('command-validator-framework.js'), `with: the rule stages apart (${c.stagesWith.join(', ')})`);
  t.ok(c.files > 100 && c.runs > 10_000, `${c.runs} runs over ${c.files} corpus files`);
  t.same(c.differences, [], 'no command answered differently');
});
