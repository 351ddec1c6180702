/** Local-time stamps used in file names and identifiers. */
import { pad2, ymd } from './store';

/** `YYYYMMDD_HHMMSS` (local time), as in `backup_YYYYMMDD_HHMMSS`. */
export function backupStamp(d: Date): string {
  return `${ymd(d)}_${pad2(d.getHours())}${pad2(d.getMinutes())}${pad2(d.getSeconds())}`;
}

/** "1h 05m", "4m 12s", "37s". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${pad2(s % 60)}s`;
  return `${Math.floor(m / 60)}h ${pad2(m % 60)}m`;
}
