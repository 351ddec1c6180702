/** Deletes daily execution logs, and the state of sessions inactive, for longer than `log_retention_days`. */
import fs from 'node:fs';
import path from 'node:path';
import { mirrorTarget } from './session';
import { unlinkQuiet, type DataPaths } from './store';

export function pruneLogs(paths: DataPaths, retentionDays: number, now: Date): string[] {
  const cutoff = new Date(now.getFullYear(), now.getMonth(), now.getDate() - retentionDays);
  const removed: string[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(paths.logs);
  } catch {
    return removed;
  }
  for (const name of names) {
    const m = /^executions_(\d{4})(\d{2})(\d{2})\.jsonl$/.exec(name);
    if (!m) continue;
    const day = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    if (day < cutoff) {
      unlinkQuiet(path.join(paths.logs, name));
      removed.push(name);
    }
  }
  pruneSessions(paths, now.getTime() - retentionDays * 86_400_000, removed);
  return removed;
}

function pruneSessions(paths: DataPaths, cutoffMs: number, removed: string[]): void {
  let names: string[];
  try {
    names = fs.readdirSync(paths.sessions);
  } catch {
    return;
  }
  const mirrored = mirrorTarget(paths); // session_state.json links to it: kept while it is the latest
  for (const name of names) {
    const file = path.join(paths.sessions, name);
    try {
      if (name.endsWith('.json') && file !== mirrored && fs.statSync(file).mtimeMs < cutoffMs) {
        unlinkQuiet(file);
        removed.push(`sessions/${name}`);
      }
    } catch {
      /* gone meanwhile */
    }
  }
}
