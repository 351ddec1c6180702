/**
 * The Markdown the finalizer leaves in the project for the next session:
 * LAST_SESSION.md (what happened), ACTIVE_TODOS.md (the assistant's task
 * list as it was last written), RECOVERY_GUIDE.md (when the session ended
 * badly: what to check and how to get files back).
 */
import type { BackupRecord, SessionState } from './session';
import { formatDuration } from './time';

export interface Interruption {
  interrupted: boolean;
  reasons: string[];
}

/** An interrupted session: the emergency threshold was reached, the last commands failed, or backups had to be taken. */
export function interruption(s: SessionState, emergencyThreshold: number): Interruption {
  const reasons: string[] = [];
  if (s.context.thresholds_hit.includes('emergency') || s.context.usage >= emergencyThreshold) {
    reasons.push(`context usage reached the emergency threshold (${(s.context.usage * 100).toFixed(1)}%)`);
  }
  const last = s.recent_results.slice(-3);
  const failing = [];
  for (let i = last.length - 1; i >= 0 && !last[i].success; i--) failing.push(last[i]);
  if (failing.length > 0) reasons.push(`the last ${failing.length === 1 ? 'tool run' : `${failing.length} tool runs`} failed`);
  const backups = s.backup_history.filter((b) => b.success);
  if (backups.length > 0) reasons.push(`${backups.length} backup${backups.length === 1 ? ' was' : 's were'} taken during the session`);
  return { interrupted: reasons.length > 0, reasons };
}

const bullet = (items: string[], empty: string) => (items.length ? items.map((i) => `- ${i}`).join('\n') : `- ${empty}`);
const code = (s: string) => '`' + s.replace(/`/g, "'").replace(/\n/g, ' ').slice(0, 200) + '`';

export function lastSessionMd(s: SessionState, end: Date, intr: Interruption): string {
  const duration = formatDuration(end.getTime() - Date.parse(s.start_time));
  const tools = Object.entries(s.tool_usage).sort((a, b) => b[1] - a[1]);
  const recentCommands = s.commands_executed.slice(-10).map((c) => code(c.command));
  const failures = s.failures.slice(-5).map((f) => `${f.tool}${f.command ? ` ${code(f.command)}` : ''}: ${f.error.split('\n')[0]}`);
  const open = (s.todos ?? []).filter((t) => t.status !== 'completed');
  return `# Last session

- Session: ${s.session_id}
- Started: ${s.start_time}
- Ended: ${end.toISOString()} (${duration})
- Context usage: ${(s.context.usage * 100).toFixed(1)}%
- Tool executions: ${tools.reduce((n, [, c]) => n + c, 0)}; commands run: ${s.commands_executed.length}; files modified: ${s.modified_files.length}
- Status: ${intr.interrupted ? `interrupted (${intr.reasons.join('; ')}); see RECOVERY_GUIDE.md` : 'ended normally'}

## Files modified

${bullet(s.modified_files.map(code), 'none')}

## Tools used

${bullet(tools.map(([t, n]) => `${t}: ${n}`), 'none')}

## Last commands

${bullet(recentCommands, 'none')}

## Recent failures

${bullet(failures, 'none')}

## Open tasks

${bullet(open.map((t) => `[${t.status}] ${t.content}`), 'none (see ACTIVE_TODOS.md)')}

## Backups

${bullet(s.backup_history.map(backupLine), 'none')}
`;
}

const backupLine = (b: BackupRecord) => `${b.backup_id} (${b.timestamp}): ${b.reason}${b.success ? '' : ' [FAILED]'}`;

export function activeTodosMd(s: SessionState, end: Date): string {
  const todos = s.todos ?? [];
  const section = (status: string, title: string) => {
    const items = todos.filter((t) => t.status === status);
    return `## ${title}\n\n${bullet(items.map((t) => `[${status === 'completed' ? 'x' : ' '}] ${t.content}`), 'none')}\n`;
  };
  const known = new Set(['in_progress', 'pending', 'completed']);
  const other = todos.filter((t) => !known.has(t.status));
  return `# Active todos

Task list of session ${s.session_id}, as of ${end.toISOString()}.${s.todos === null ? ' The assistant kept no task list this session.' : ''}

${section('in_progress', 'In progress')}
${section('pending', 'Pending')}
${other.length ? `## Other\n\n${bullet(other.map((t) => `[${t.status}] ${t.content}`), 'none')}\n\n` : ''}${section('completed', 'Completed')}`;
}

export function recoveryGuideMd(s: SessionState, end: Date, intr: Interruption): string {
  const good = s.backup_history.filter((b) => b.success);
  const latest = good[good.length - 1];
  const failures = s.failures.slice(-5).map((f) => `${f.tool}${f.command ? ` ${code(f.command)}` : ''}: ${f.error.split('\n')[0]}`);
  return `# Recovery guide

Session ${s.session_id} ended at ${end.toISOString()} and looks interrupted:

${bullet(intr.reasons, 'no reason recorded')}

## What to check

1. \`git status\` and \`git diff\`: the files modified this session were:
${s.modified_files.length ? s.modified_files.map((f) => `   - ${code(f)}`).join('\n') : '   - none recorded'}
2. The last failures:
${failures.length ? failures.map((f) => `   - ${f}`).join('\n') : '   - none'}
3. The task list in ACTIVE_TODOS.md: the item in progress is where to resume.

## Getting files back

${
  latest
    ? `The latest backup is ${latest.backup_id} (${latest.reason}). List them all with \`hooks-cli list-backups\`; bring one back with \`hooks-cli restore ${latest.backup_id}\` (files created since then are kept; a backup of the current state is taken first).`
    : 'No backup was taken this session; use git (\`git stash\`, \`git reflog\`) to recover.'
}
`;
}
