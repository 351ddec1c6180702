/**
 * Installing the hooks into the host's settings. The template
 * (`config/hooks.json.template`, the spec's shape: one command string per
 * event, or per tool matcher) is rendered with `{{INSTALL_PATH}}` and turned
 * into the host's real shape:
 *
 *   {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "...", "timeout": 10}]}]}}
 *
 * Two events the template does not name are derived from it: PreCompact
 * runs the UserPromptSubmit command (context-monitor backs up before
 * compaction) and PostToolUseFailure runs the PostToolUse command (failures
 * are where the learner learns). Merging is idempotent: entries whose
 * command runs one of our hook files are replaced, everything else in the
 * file (the user's own hooks, other settings) is kept.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isObject } from './store';

export type HostHooks = Record<string, HostMatcherGroup[]>;
export interface HostMatcherGroup {
  matcher?: string;
  hooks: { type: string; command: string; timeout?: number }[];
  [k: string]: unknown;
}

export const HOOK_FILES = ['context-monitor.js', 'command-validator.js', 'session-logger.js', 'session-finalizer.js'];

/** Quotes a path for a POSIX shell command line only when it needs it. */
export function shellQuote(p: string): string {
  return /^[\w@%+=:,./-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`;
}

export class TemplateError extends Error {
  readonly code = 'HOOKS_ERR_TEMPLATE';
}

/** Renders the template text for `installPath` and parses it. */
export function renderTemplate(templateText: string, installPath: string): Record<string, unknown> {
  const rendered = templateText.replace(/\{\{INSTALL_PATH\}\}/g, () => shellQuote(installPath).replace(/\\/g, '\\\\').replace(/"/g, '\\"'));
  let parsed: unknown;
  try {
    parsed = JSON.parse(rendered);
  } catch (err) {
    throw new TemplateError(`hooks.json.template is not valid JSON once rendered (${(err as Error).message})`);
  }
  if (!isObject(parsed) || !isObject(parsed.hooks)) throw new TemplateError('hooks.json.template has no "hooks" object');
  return parsed.hooks;
}

/** The spec's template shape to the host's shape (plus the derived PreCompact and PostToolUseFailure). */
export function toHostHooks(template: Record<string, unknown>, timeoutSec: number): HostHooks {
  const out: HostHooks = {};
  const cmd = (command: string) => ({ type: 'command', command, timeout: timeoutSec });
  for (const [event, value] of Object.entries(template)) {
    if (typeof value === 'string') out[event] = [{ hooks: [cmd(value)] }];
    else if (isObject(value)) {
      out[event] = Object.entries(value).map(([matcher, command]) => {
        if (typeof command !== 'string') throw new TemplateError(`hooks.${event}.${matcher} must be a command string`);
        return { matcher, hooks: [cmd(command)] };
      });
    } else throw new TemplateError(`hooks.${event} must be a command string or an object of matcher to command`);
  }
  if (out.UserPromptSubmit && !out.PreCompact) out.PreCompact = out.UserPromptSubmit.map((g) => ({ ...g, hooks: g.hooks.map((h) => ({ ...h })) }));
  if (out.PostToolUse && !out.PostToolUseFailure) out.PostToolUseFailure = out.PostToolUse.map((g) => ({ ...g, hooks: g.hooks.map((h) => ({ ...h })) }));
  return out;
}

/** Whether a host hook command runs one of our hook files (from any install path). */
export function isOurCommand(command: string): boolean {
  return HOOK_FILES.some((f) => new RegExp(`[/\\\\]hooks[/\\\\]${f.replace('.', '\\.')}(['"\\s]|$)`).test(command));
}

/** Removes our hooks from a host settings object (in place); drops groups and events left empty. Returns how many were removed. */
export function removeOurHooks(settings: Record<string, unknown>): number {
  if (!isObject(settings.hooks)) return 0;
  let removed = 0;
  const hooks = settings.hooks as Record<string, unknown>;
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    const kept = [];
    for (const g of groups) {
      if (!isObject(g) || !Array.isArray(g.hooks)) {
        kept.push(g);
        continue;
      }
      const before = g.hooks.length;
      const left = g.hooks.filter((h) => !(isObject(h) && typeof h.command === 'string' && isOurCommand(h.command)));
      removed += before - left.length;
      if (left.length > 0) kept.push({ ...g, hooks: left });
    }
    if (kept.length > 0) hooks[event] = kept;
    else delete hooks[event];
  }
  if (Object.keys(hooks).length === 0) delete settings.hooks;
  return removed;
}

/** Adds our hooks (after removing any earlier install of them). */
export function mergeHooks(settings: Record<string, unknown>, ours: HostHooks): Record<string, unknown> {
  removeOurHooks(settings);
  const hooks = (isObject(settings.hooks) ? settings.hooks : (settings.hooks = {})) as Record<string, unknown>;
  for (const [event, groups] of Object.entries(ours)) {
    const existing = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    hooks[event] = [...existing, ...groups];
  }
  return settings;
}

export type Scope = 'project' | 'local' | 'user';

export function hostSettingsPath(scope: Scope, project: string, home: string): string {
  if (scope === 'user') return path.join(home, '.claude', 'settings.json');
  return path.join(project, '.claude', scope === 'local' ? 'settings.local.json' : 'settings.json');
}

export class HostSettingsError extends Error {
  readonly code = 'HOOKS_ERR_HOST_SETTINGS';
}

/** Reads a host settings file ({} when missing); refuses a file that is not a JSON object rather than overwrite it. */
export function readHostSettings(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new HostSettingsError(`${file} is not valid JSON (${(err as Error).message}); fix it by hand, nothing was changed`);
  }
  if (!isObject(parsed)) throw new HostSettingsError(`${file} does not hold a JSON object; nothing was changed`);
  if (parsed.hooks !== undefined && !isObject(parsed.hooks)) throw new HostSettingsError(`${file}: "hooks" is not an object; nothing was changed`);
  return parsed;
}
