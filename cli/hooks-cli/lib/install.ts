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
 *
 * Two things make an install hold up outside this machine:
 *  - `--scope project` writes a file meant to be committed, so its commands
 *    name the install relative to `"$CLAUDE_PROJECT_DIR"` (which the host
 *    sets for every hook), never this machine's absolute path; an install
 *    outside the project cannot be named that way and is refused.
 *  - The host blocks a tool call only on exit 2; a hook that cannot start
 *    (node missing: 127; script missing or broken: 1) would let every
 *    command through. The PreToolUse command therefore passes on 0 and 2
 *    and turns any other exit into 2 with a message: the guard fails closed.
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

export class InstallScopeError extends Error {
  readonly code = 'HOOKS_ERR_INSTALL_SCOPE';
}

/**
 * The install path as the command line names it: the absolute path (quoted
 * when needed), or for a project-scope install `"$CLAUDE_PROJECT_DIR"/<path
 * inside the project>`, which works in every clone.
 */
export function installPathExpr(installPath: string, project: string | null): string {
  if (project === null) return shellQuote(installPath);
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const rel = path.relative(real(project), real(installPath));
  if (rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new InstallScopeError(
      `the install (${installPath}) is outside the project (${project}), so a command in the shared .claude/settings.json would not exist on a teammate's clone; add hooks-cli to the project (npm install --save-dev, then its own hooks-cli install --scope project), or install with --scope local`,
    );
  }
  return rel === '' ? '"$CLAUDE_PROJECT_DIR"' : `"$CLAUDE_PROJECT_DIR"/${shellQuote(rel.split(path.sep).join('/'))}`;
}

/** Renders the template text for `installPath` (a shell expression for project installs, see installPathExpr) and parses it. */
export function renderTemplate(templateText: string, installPath: string, project: string | null = null): Record<string, unknown> {
  const expr = installPathExpr(installPath, project);
  const rendered = templateText.replace(/\{\{INSTALL_PATH\}\}/g, () => expr.replace(/\\/g, '\\\\').replace(/"/g, '\\"'));
  let parsed: unknown;
  try {
    parsed = JSON.parse(rendered);
  } catch (err) {
    throw new TemplateError(`hooks.json.template is not valid JSON once rendered (${(err as Error).message})`);
  }
  if (!isObject(parsed) || !isObject(parsed.hooks)) throw new TemplateError('hooks.json.template has no "hooks" object');
  return parsed.hooks;
}

/**
 * A PreToolUse command that fails closed: the hook's own answers (0 allow,
 * 2 block) pass; any other exit (127 no node, 1 a missing or broken script)
 * becomes 2, so the host refuses the call and shows the reason.
 */
export function failClosed(command: string): string {
  return `${command}; s=$?; case $s in 0|2) exit $s;; esac; echo "hooks-cli: the PreToolUse guard could not run (exit $s; is node on PATH, and hooks-cli installed and built? npm install, or hooks-cli install again); the call is blocked until it runs" >&2; exit 2`;
}

/** The spec's template shape to the host's shape (plus the derived PreCompact and PostToolUseFailure); PreToolUse commands fail closed. */
export function toHostHooks(template: Record<string, unknown>, timeoutSec: number): HostHooks {
  const out: HostHooks = {};
  const cmd = (command: string, event: string) => ({ type: 'command', command: event === 'PreToolUse' ? failClosed(command) : command, timeout: timeoutSec });
  for (const [event, value] of Object.entries(template)) {
    if (typeof value === 'string') out[event] = [{ hooks: [cmd(value, event)] }];
    else if (isObject(value)) {
      out[event] = Object.entries(value).map(([matcher, command]) => {
        if (typeof command !== 'string') throw new TemplateError(`hooks.${event}.${matcher} must be a command string`);
        return { matcher, hooks: [cmd(command, event)] };
      });
    } else throw new TemplateError(`hooks.${event} must be a command string or an object of matcher to command`);
  }
  if (out.UserPromptSubmit && !out.PreCompact) out.PreCompact = out.UserPromptSubmit.map((g) => ({ ...g, hooks: g.hooks.map((h) => ({ ...h })) }));
  if (out.PostToolUse && !out.PostToolUseFailure) out.PostToolUseFailure = out.PostToolUse.map((g) => ({ ...g, hooks: g.hooks.map((h) => ({ ...h })) }));
  return out;
}

/** Whether a host hook command runs one of our hook files (from any install path). */
export function isOurCommand(command: string): boolean {
  return HOOK_FILES.some((f) => new RegExp(`[/\\\\]hooks[/\\\\]${f.replace('.', '\\.')}(['";\\s]|$)`).test(command));
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
