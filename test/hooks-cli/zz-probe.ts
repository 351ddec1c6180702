import fs from 'node:fs';
import { analyzeCommand, applySwitches } from '../../cli/hooks-cli/lib/command-rules';
import { defaultSettings } from '../../cli/hooks-cli/lib/settings-schema';
const env = { cwd: '/home/dev/project', project: '/home/dev/project', home: process.env.PHOME ?? '/home/dev', currentBranch: () => 'main' };
for (const l of fs.readFileSync(process.argv[2], 'utf8').split('\n')) {
  if (!l.trim() || l.startsWith('#')) continue;
  const f = applySwitches(analyzeCommand(l, env).findings, defaultSettings().security);
  const b = f.filter((x) => x.level === 'block');
  console.log(`${b.length ? 'BLOCK' : 'allow'}  ${l}${b.length ? '   <- ' + b[0].reason : ''}`);
}
