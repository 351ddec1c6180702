/**
 * Laptop rules: what a user tidying their own machine loses for good. The backups that were the
 * other copy (a whole Borg repository deleted, a restic or Kopia history pruned down to one
 * snapshot), and secrets put into a folder that a sync service uploads or shares (Dropbox's Public
 * folder, iCloud Drive, Google Drive, OneDrive, Nextcloud, Syncthing's Sync).
 *
 * Pure functions over argv and paths; command-rules.ts calls them and turns what they return into
 * findings.
 */
import { isUnder, type PathEnv } from './paths-classify';

/** Commands backupLoss judges: a cheap gate before it. */
export const BACKUP_TOOLS = /^(borg|borgbackup|restic|kopia)$/;

/**
 * A backup repository destroyed, or its history cut down to one snapshot: borg delete REPO (not
 * REPO::ARCHIVE, not --dry-run), restic/kopia forget or prune keeping at most one snapshot,
 * kopia repository/snapshot deletes of everything. Returns the reason, or null.
 */
export function backupLoss(argv: string[]): string | null {
  const [name, ...args] = argv;
  const ops = args.filter((a) => !a.startsWith('-'));
  const dry = args.some((a) => /^(-n|--dry-run|--list)$/.test(a));
  if (dry) return null;
  if (/^borg(backup)?$/.test(name) && ops[0] === 'delete') {
    const repo = ops[1];
    const picked = args.some((a) => /^(-a|--glob-archives|--match-archives|--first|--last|--prefix)(=|$)/.test(a));
    if (!picked && (repo === undefined || !repo.includes('::') || /::$/.test(repo))) return `borg delete ${repo ?? '$BORG_REPO'} deletes the whole backup repository: every archive in it`;
  }
  if (/^(restic|kopia)$/.test(name) && args.some((a) => /^(forget|prune|policy)$/.test(a))) {
    const keeps = args.flatMap((a, k) => (/^--keep-[a-z]+$/.test(a) ? [args[k + 1] ?? ''] : /^--keep-[a-z]+=/.test(a) ? [a.slice(a.indexOf('=') + 1)] : []));
    if (args.includes('forget') && keeps.length > 0 && keeps.every((v) => /^[01]$/.test(v)) && !args.some((a) => /^--(tag|host|path)(=|$)/.test(a))) return `${name} forget keeping ${keeps.join('/')} snapshot drops every older snapshot of the backups`;
  }
  if (name === 'kopia' && ((ops[0] === 'snapshot' && /^(delete|rm)$/.test(ops[1] ?? '') && args.some((a) => /^--all-snapshots-for-source$|^--delete$/.test(a))) || (ops[0] === 'repository' && ops[1] === 'delete'))) return 'kopia deletes the backups of a source or the whole repository';
  return null;
}

/** Folders that a sync service uploads (or, for Dropbox's Public and the Mac's ~/Public, shares). */
const SYNCED = ['Dropbox', 'Google Drive', 'GoogleDrive', 'OneDrive', 'Nextcloud', 'ownCloud', 'Sync', 'pCloudDrive', 'MEGA', 'Box', 'Public', 'Library/Mobile Documents', 'Library/CloudStorage'];

/** A path in a folder a sync service uploads or shares; the name of that folder, or null. */
export function syncedFolder(abs: string, env: PathEnv): string | null {
  if (isUnder(abs, env.project)) return null;
  // (Dropbox (Personal), OneDrive - Acme: the names the clients give a second account's folder.)
  return SYNCED.find((d) => isUnder(abs, `${env.home}/${d}`) || abs.startsWith(`${env.home}/${d} (`) || abs.startsWith(`${env.home}/${d} - `)) ?? null;
}
