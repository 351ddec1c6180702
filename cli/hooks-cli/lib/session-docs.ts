/**
 * The Markdown the finalizer leaves for the next session: LAST_SESSION.md
 * (what happened), ACTIVE_TODOS.md (the assistant's task list as it was last
 * written), RECOVERY_GUIDE.md (while the session looks interrupted: what to
 * check and how to get files back; removed once it has recovered).
 *
 * Where: `session_docs.directory` (default `.hooks_data`, which git ignores),
 * so they never show in `git status` or get committed by `git add -A`. In a
 * folder git sees (`"."`, the project root), they are listed in
 * `.git/info/exclude` (`session_docs.exclude_from_git`).
 *
 * What is ours: the generated text sits between two marker comments, the
 * first carrying a hash of the text. Anything outside the markers (the model
 * is told to note its state in ACTIVE_TODOS.md) is kept on every rewrite; a
 * block whose text no longer matches its hash was edited, and is kept as the
 * user's text too, below a fresh block.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Settings } from './settings-schema';
import type { BackupRecord, SessionState } from './session';
import { fnv1a, readReplaced, replaceFile, unlinkQuiet, type DataPaths } from './store';
import { taskList } from './tasks';
import { formatDuration } from './time';

export interface DocPaths {
  lastSession: string;
  activeTodos: string;
  recoveryGuide: string;
}

export function docPaths(paths: DataPaths, settings: Settings): DocPaths {
  const dir = path.resolve(paths.project, settings.session_docs.directory);
  return {
    lastSession: path.join(dir, 'LAST_SESSION.md'),
    activeTodos: path.join(dir, 'ACTIVE_TODOS.md'),
    recoveryGuide: path.join(dir, 'RECOVERY_GUIDE.md'),
  };
}

/** FNV-1a of the text, hex: enough to tell our text from an edited one. */
const textHash = (text: string) => fnv1a(text).toString(16).padStart(8, '0');

const BEGIN_RE = /<!-- hooks-cli:begin ([0-9a-f]{8}) \(generated; write outside this block\) -->\n/;
const END = '<!-- hooks-cli:end -->\n';

/** The user's text in a document (everything but an unedited generated block), or '' when there is none. */
function userText(existing: string): string {
  const m = BEGIN_RE.exec(existing);
  if (!m) return existing; // written by hand (or by a version without markers): all of it is kept
  const bodyStart = m.index + m[0].length;
  const endAt = existing.indexOf(END, bodyStart);
  if (endAt < 0) return existing.slice(0, m.index) + existing.slice(bodyStart); // end marker deleted: keep the text
  const body = existing.slice(bodyStart, endAt);
  const before = existing.slice(0, m.index);
  const after = existing.slice(endAt + END.length);
  return textHash(body) === m[1] ? before + after : before + body + after;
}

function readText(file: string): string | null {
  try {
    return readReplaced(file);
  } catch {
    return null;
  }
}

/** Writes `generated` as the document's generated block, keeping whatever else is in the file. */
export function writeDoc(file: string, generated: string): void {
  const existing = readText(file);
  const user = existing === null ? '' : userText(existing).replace(/^\n+/, '');
  const body = generated.endsWith('\n') ? generated : generated + '\n';
  const text = `<!-- hooks-cli:begin ${textHash(body)} (generated; write outside this block) -->\n${body}${END}${user.trim() ? `\n${user}` : ''}`;
  if (text !== existing) replaceFile(file, text);
}

/** Removes the generated block; the file goes too unless the user wrote something in it. */
export function removeDoc(file: string): void {
  const existing = readText(file);
  if (existing === null) return;
  const user = userText(existing);
  if (user === existing) return; // no block of ours
  if (user.trim() === '') {
    unlinkQuiet(file);
    unlinkQuiet(`${file}.prev`); // a killed replace's old text must not come back
  } else replaceFile(file, user.replace(/^\n+/, ''));
}

/** The git directory holding `info/exclude` for a project (worktrees share the main one), found without running git. */
function gitCommonDir(project: string): { top: string; dir: string } | null {
  for (let dir = project; ; ) {
    const dotGit = path.join(dir, '.git');
    let st: fs.Stats | null = null;
    try {
      st = fs.statSync(dotGit);
    } catch {
      st = null;
    }
    if (st?.isDirectory()) return { top: dir, dir: dotGit };
    if (st?.isFile()) {
      const m = /^gitdir:\s*(.+)$/m.exec(readText(dotGit) ?? '');
      if (!m) return null;
      const gitDir = path.resolve(dir, m[1].trim());
      const common = readText(path.join(gitDir, 'commondir'));
      return { top: dir, dir: common ? path.resolve(gitDir, common.trim()) : gitDir };
    }
    const up = path.dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/**
 * Lists the documents in `.git/info/exclude` when they are where git would
 * see them (not under `.hooks_data/`, which ignores itself). Returns the
 * lines added.
 */
export function excludeFromGit(paths: DataPaths, docs: DocPaths): string[] {
  const files = [docs.lastSession, docs.activeTodos, docs.recoveryGuide].filter((f) => !f.startsWith(paths.root + path.sep));
  if (files.length === 0) return [];
  const git = gitCommonDir(paths.project);
  if (!git) return [];
  const exclude = path.join(git.dir, 'info', 'exclude');
  const have = new Set((readText(exclude) ?? '').split('\n').map((l) => l.trim()));
  const lines = files.map((f) => '/' + path.relative(git.top, f).split(path.sep).join('/')).filter((l) => !l.startsWith('/..') && !have.has(l));
  if (lines.length === 0) return [];
  fs.mkdirSync(path.dirname(exclude), { recursive: true });
  const old = readText(exclude) ?? '';
  fs.appendFileSync(exclude, `${old && !old.endsWith('\n') ? '\n' : ''}# hooks-cli session documents\n${lines.join('\n')}\n`);
  return lines;
}

export interface Interruption {
  interrupted: boolean;
  reasons: string[];
}

/**
 * An interrupted session: the context is at the emergency threshold, or the
 * last tool runs failed. Both can pass (a compaction, a run that works), and
 * then the session has recovered: the guide is removed. (Backups alone are
 * not a reason: taken once, they would keep the guide for ever.)
 */
export function interruption(s: SessionState, emergencyThreshold: number): Interruption {
  const reasons: string[] = [];
  if (s.context.usage >= emergencyThreshold) {
    reasons.push(`context usage is at the emergency threshold (${(s.context.usage * 100).toFixed(1)}%)`);
  }
  const last = s.recent_results.slice(-3);
  const failing = [];
  for (let i = last.length - 1; i >= 0 && !last[i].success; i--) failing.push(last[i]);
  if (failing.length > 0) reasons.push(`the last ${failing.length === 1 ? 'tool run' : `${failing.length} tool runs`} failed`);
  return { interrupted: reasons.length > 0, reasons };
}

const bullet = (items: string[], empty: string) => (items.length ? items.map((i) => `- ${i}`).join('\n') : `- ${empty}`);
const code = (s: string) => '`' + s.replace(/`/g, "'").replace(/\n/g, ' ').slice(0, 200) + '`';

export function lastSessionMd(s: SessionState, end: Date, intr: Interruption): string {
  const duration = formatDuration(end.getTime() - Date.parse(s.start_time));
  const tools = Object.entries(s.tool_usage).sort((a, b) => b[1] - a[1]);
  const recentCommands = s.commands_executed.slice(-10).map((c) => code(c.command));
  const failures = s.failures.slice(-5).map((f) => `${f.tool}${f.command ? ` ${code(f.command)}` : ''}: ${f.error.split('\n')[0]}`);
  const open = (taskList(s) ?? []).filter((t) => t.status !== 'completed');
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

/**
 * ACTIVE_TODOS.md's text. It depends on the task list alone (dated by its last change, not by the answer's end),
 * so the answer ends that changed no task leave the file as it is (writeDoc skips equal text).
 */
export function activeTodosMd(s: SessionState): string {
  const list = taskList(s);
  const todos = list ?? [];
  const section = (status: string, title: string) => {
    const items = todos.filter((t) => t.status === status);
    return `## ${title}\n\n${bullet(items.map((t) => `[${status === 'completed' ? 'x' : ' '}] ${t.content}`), 'none')}\n`;
  };
  const known = new Set(['in_progress', 'pending', 'completed']);
  const other = todos.filter((t) => !known.has(t.status));
  return `# Active todos

Task list of session ${s.session_id}${list === null ? '. The assistant kept no task list this session.' : `, as of ${s.tasks_updated_at ?? s.last_activity}.`}

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
