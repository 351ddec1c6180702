/**
 * The validator's verdict on a command as text, analysed in process with the default settings'
 * switches applied (as the hook does), for a project at /home/dev/project on branch `feature`.
 * Shared by the tests that pin rule behaviour one command at a time.
 */
import type { Test } from 'tap';
import { analyzeCommand, applySwitches } from '../../cli/hooks-cli/lib/command-rules';
import { defaultSettings } from '../../cli/hooks-cli/lib/settings-schema';

export const HOME = '/home/dev';
export const PROJECT = '/home/dev/project';

export function verdict(command: string): { blocked: boolean; reasons: string[] } {
  const a = analyzeCommand(command, { cwd: PROJECT, project: PROJECT, home: HOME, currentBranch: () => 'feature' });
  const f = applySwitches(a.findings, defaultSettings().security);
  return { blocked: f.some((x) => x.level === 'block'), reasons: f.map((x) => x.reason) };
}

/** Each command is blocked: one assertion per command, named by it. */
export function blocksAll(t: Test, commands: string[]): void {
  for (const c of commands) t.ok(verdict(c).blocked, c);
}

/** Each command is allowed (warnings are fine): one assertion per command, named by it. */
export function allowsAll(t: Test, commands: string[]): void {
  for (const c of commands) t.notOk(verdict(c).blocked, c);
}
