import fs from 'node:fs';
import { analyzeCommand, applySwitches } from '../../cli/hooks-cli/lib/command-rules';
import { defaultSettings } from '../../cli/hooks-cli/lib/settings-schema';
const P = process.env.PPROJ ?? '/home/dev/project'; const env = { cwd: P, project: P, home: process.env.PHOME ?? '/home/dev', currentBranch: () => process.env.PBRANCH ?? 'main' };
const items: string[] = []; let blk: string[] | null = null;
for (const line of fs.readFileSync(process.argv[2], 'utf8').split('\n')) { if (blk) { if (line === '>>>') { items.push(blk.join('\n')); blk = null; } else blk.push(line); } else if (line === '<<<') blk = []; else items.push(line); }
for (const l of items) {
  if (!l.trim() || l.startsWith('#')) continue;
  const f = applySwitches(analyzeCommand(l, env).findings, defaultSettings().security);
  const b = f.filter((x) => x.level === 'block');
  console.log(`${b.length ? 'BLOCK' : 'allow'}  ${l}${b.length ? '   <- ' + b[0].reason : ''}`);
}
