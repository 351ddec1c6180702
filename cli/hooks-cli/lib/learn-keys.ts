/**
 * The keys a Bash command line is learned under (see learner.ts), apart from
 * the learner so only the logger bundles the shell parser for it.
 */
import { commandKey } from './learner';
import { parseShell } from './shell-parse';

/** Wrappers that run the rest of the line, with their options that take a value. */
const WRAPPERS: Record<string, Set<string>> = {
  sudo: new Set(['-u', '-g', '-C', '-p', '-h', '-U', '--user', '--group']),
  doas: new Set(['-u', '-C']),
  env: new Set(['-u', '-C', '-S', '--unset', '--chdir']),
  command: new Set(),
  builtin: new Set(),
  exec: new Set(['-a']),
  nohup: new Set(),
  time: new Set(['-f', '-o']),
  nice: new Set(['-n']),
  ionice: new Set(['-c', '-n']),
  stdbuf: new Set(),
  setsid: new Set(),
  timeout: new Set(['-s', '-k', '--signal', '--kill-after']),
};

/**
 * The keys a Bash command line is learned under, one per command it runs at
 * the top level (`cd api && npm test` gives `cd`, `npm test`), with
 * `VAR=value` prefixes and wrappers (`sudo -u x`, `env`, `timeout 10`,
 * `nice -n 5`...) taken off. Only the shell parser: the logger runs on every
 * tool call and does not need (or load) the validator's rules for this.
 */
export function learnKeys(command: string, cwd: string, home: string): string[] {
  const keys: string[] = [];
  for (const c of parseShell(command, { cwd, home }).commands) {
    if (c.depth !== 0) continue;
    const words = c.words.map((w) => w.text);
    let i = 0;
    while (i < words.length) {
      const w = words[i];
      if (/^[A-Za-z_]\w*=/.test(w)) i++;
      else if (Object.hasOwn(WRAPPERS, w.split('/').pop()!)) {
        const wrapper = w.split('/').pop()!;
        i++;
        while (i < words.length && (words[i].startsWith('-') || /^[A-Za-z_]\w*=/.test(words[i]))) {
          if (WRAPPERS[wrapper].has(words[i])) i++; // an option with a value
          i++;
        }
        if (wrapper === 'timeout' && i < words.length && /^\d/.test(words[i])) i++;
      } else break;
    }
    const key = commandKey(words.slice(i));
    if (key !== null && !keys.includes(key)) keys.push(key);
  }
  return keys;
}
