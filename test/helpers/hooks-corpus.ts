/**
 * The command corpus format (test/fixtures/hooks-corpus/README.md): one
 * command per line, `#` comment lines, a multi-line command between a `<<<`
 * line and a `>>>` line. Read by the corpus test, the first-look script
 * (test/hooks-cli/corpus-part-rates.ts) and bench/validator-analysis.ts.
 */
import fs from 'node:fs';

export function readCorpus(file: string): string[] {
  const out: string[] = [];
  let block: string[] | null = null;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (block) {
      if (line === '>>>') {
        out.push(block.join('\n'));
        block = null;
      } else block.push(line);
    } else if (line === '<<<') block = [];
    else if (line.trim() !== '' && !line.startsWith('#')) out.push(line);
  }
  return out;
}
