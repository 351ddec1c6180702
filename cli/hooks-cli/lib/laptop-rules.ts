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
export const isBackupTool = (name: string): boolean => /^(borg|borgbackup|restic|kopia|timeshift)$/.test(name);

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
  if (name === 'timeshift' && args.includes('--delete-all')) return 'timeshift --delete-all deletes every system snapshot: the machine can no longer be rolled back';
  if (/^borg(backup)?$/.test(name) && ops[0] === 'delete') {
    const repo = ops[1];
    const picked = args.some((a) => /^(-a|--glob-archives|--match-archives|--first|--last|--prefix)(=|$)/.test(a));
    if (!picked && (repo === undefined || !repo.includes('::') || /::$/.test(repo))) return `borg delete ${repo ?? '$BORG_REPO'} deletes the whole backup repository: every archive in it`;
  }
  // borg prune --keep-last 1 is restic's forget of the same: every archive but the newest.
  if (/^borg(backup)?$/.test(name) && ops[0] === 'prune') {
    const keeps = args.flatMap((a, k) => (/^--keep-[a-z]+$/.test(a) ? [args[k + 1] ?? ''] : /^--keep-[a-z]+=/.test(a) ? [a.slice(a.indexOf('=') + 1)] : []));
    if (keeps.length > 0 && keeps.every((v) => /^[01]$/.test(v)) && !args.some((a) => /^(-a|--glob-archives|--match-archives|--prefix)(=|$)/.test(a))) return `borg prune keeping ${keeps.join('/')} archive deletes every older archive of the repository`;
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

/** System package managers whose removal everyPackageRemoved judges: a cheap gate before it. */
export const isPackageTool = (name: string): boolean => /^(apt|apt-get|aptitude|dpkg|dnf|yum|zypper|pacman|yay|paru|apk|rpm|port)$/.test(name);

/**
 * Every installed package removed: the manager's own full listing fed back to its remove
 * (pacman -Rns $(pacman -Qq), dnf remove $(rpm -qa), dpkg --get-selections | … | xargs apt-get purge):
 * the system's essential packages go with the rest. Returns the reason, or null.
 */
export function everyPackageRemoved(argv: string[], subs: string[], upstream: string[][]): string | null {
  const [name, ...args] = argv;
  const removes = args.some((a) => /^(remove|purge|erase|autoremove|del|uninstall|-R[a-z]*|-e|--erase|-P|-r)$/.test(a));
  if (!removes) return null;
  // The whole listing, options only (pacman -Qq, not the orphans of -Qdtq nor dpkg -l 'linux-image*'), narrowed by nothing after it.
  const full = /^\s*(sudo\s+)?(pacman\s+-Q[qen]*|rpm\s+-qa|dpkg\s+(--get-selections|-l|--list)|apt\s+list\s+--installed|(dnf|yum)\s+list\s+installed|apk\s+info|port\s+(-q\s+)?installed)\s*(\|\s*(awk\s+'\{\s*print\s+\$\d\s*\}'|cut\s+[^|]*|grep\s+-v\s+[^|]*|tr\s+[^|]*|sed\s+'s[^|]*')\s*)*$/;
  const narrows = (u: string[]) => (/^(grep|rg|egrep)$/.test(u[0]) && !u.some((x) => /^-[a-zA-Z]*v/.test(x))) || (/awk$/.test(u[0]) && u.some((x) => /\/[^/]+\//.test(x))) || (u[0] === 'sed' && u.includes('-n'));
  const listed = subs.some((s) => full.test(s)) || (upstream.length > 0 && full.test(upstream[0].join(' ')) && !upstream.slice(1).some(narrows));
  return listed ? `${name} ${args.slice(0, 2).join(' ')} removes every installed package, the system's essential ones among them: it no longer boots or installs anything` : null;
}
