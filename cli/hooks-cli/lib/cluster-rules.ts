/**
 * Cluster rules: what a researcher on a shared HPC cluster (or a lab's file server) loses that is
 * neither the project's nor a cache. A cluster's parallel filesystems are laid out in areas:
 *
 *   /scratch/USER, /work/USER, $SCRATCH, $WORK        the user's own area (purged, never backed up)
 *   /project/GROUP, /projects/GROUP, $GROUP_HOME      a group's area: every member's data and software
 *   /project/GROUP/raw_data, /project/GROUP/envs      a group's top folders: shared datasets, environments
 *
 * Deleting or emptying a whole area, or one of a group's top folders, loses data that nobody can make
 * again and no backup of the project covers; deeper paths (/scratch/$USER/run42/tmp,
 * /project/GROUP/shared/USER/results) are everyday clean-up. data-rules.ts judges the shared mounts
 * (sharedMountLoss) and asks this module about areas.
 *
 * Pure functions over paths and argv; command-rules.ts calls `clusterToolFindings` only for the
 * commands isClusterTool names.
 */
import type { PathEnv } from './paths-classify';

/**
 * Variables clusters set for every login: the user's areas, the group's, and the directory a batch
 * job was submitted from (which is where the line runs). Values keep `$USER`/`$GROUP` as segments:
 * the user's own name is never empty in a login shell, and the group's area is someone's data.
 */
const AREA_VARS: Record<string, string> = {
  SCRATCH: '/scratch/$USER',
  SCRATCHDIR: '/scratch/$USER',
  PSCRATCH: '/pscratch/$USER',
  GSCRATCH: '/gscratch/$USER',
  WORK: '/work/$USER',
  GROUP_HOME: '/groups/$GROUP',
  GROUP_SCRATCH: '/scratch/groups/$GROUP',
  GROUP_WORK: '/work/groups/$GROUP',
};

/** The value a cluster gives the variable when the line does not set it, or undefined. */
export function clusterVar(name: string, cwd: string): string | undefined {
  // A batch job starts where it was submitted: $SLURM_SUBMIT_DIR (Slurm), $PBS_O_WORKDIR (PBS), $LS_SUBCWD (LSF).
  if (name === 'SLURM_SUBMIT_DIR' || name === 'PBS_O_WORKDIR' || name === 'LS_SUBCWD') return cwd;
  return AREA_VARS[name];
}

/** Roots whose first segment is a group (or lab), not a user. Optionally below a parallel filesystem's mount (/gpfs/fs1/project/GROUP). */
// (OLCF's /lustre/orion/proj-shared/PROJ, NERSC's /global/cfs/cdirs/PROJ: the same layout under other names.)
const GROUP_AREA = /^(?:\/(?:gpfs|lustre|nfs|beegfs|fsx|storage|shared|data|global)(?:\/[^/]+){0,2})?\/(?:project|projects|proj|groups|labs|lab|group|scratch\/groups|work\/groups|proj-shared|world-shared|cdirs)\/([^/]+)(?:\/([^/]+))?$/;

/** Names of a group's top folders that hold nothing of anyone's: temporary and cache directories. */
const THROWAWAY = /^(tmp|temp|\.?cache|scratch|\.Trash.*|lost\+found)$/i;

/**
 * A recursive delete (or an emptying, `wholeDir`) of a group's area or one of its top folders
 * (/project/smithlab, /project/smithlab/raw_data, /project/$(id -gn)/*): the group's data, software and
 * environments, which every member's work depends on. Returns what is lost, or null.
 */
export function groupAreaLoss(abs: string): string | null {
  const m = GROUP_AREA.exec(abs);
  if (!m || m[1] === '…') return null;
  if (m[2] === undefined) return `${abs}, a group's whole shared area: every member's data and software`;
  if (m[2] === '…' || THROWAWAY.test(m[2])) return null;
  return `${abs}, a top folder of the group's shared area (data, software or environments every member uses)`;
}

/** The root of a cluster area (a group's area or its top folder, the user's own scratch or work area): only filters on names narrow a listing there. */
export function isAreaRoot(abs: string, ownArea: (abs: string) => boolean): boolean {
  return (GROUP_AREA.test(abs) && groupAreaLoss(abs) !== null) || ownArea(abs);
}

/** Areas of a cluster's shared filesystems that other users read: a group's, the shared scratch and work trees (the user's own area aside). */
const SHARED_AREA = /^\/(?:project|projects|proj|groups|labs|scratch|work|gpfs|lustre|beegfs|shared|nfs|pscratch|gscratch)\/(?!\$\{?(?:USER|LOGNAME)\}?(?:\/|$))[^/]+/;

/** A place on a cluster's shared filesystem that others can read: a key copied there is handed to them. */
export function sharedArea(abs: string): string | null {
  return SHARED_AREA.exec(abs)?.[0] ?? null;
}

/** Commands clusterToolFindings judges: a cheap gate before it (a literal word list, which the build makes a Set lookup). */
export const isClusterTool = (name: string): boolean => /^(globus|hsi|irm|ws_release|scrontab|scancel|qdel|bkill|sacctmgr|conda|mamba|micromamba|git|git-annex|datalad|sqlite3)$/.test(name);

/** The path part of a Globus or remote spec (ENDPOINT:/path), with /~/ read as the home. */
function remotePath(spec: string, env: PathEnv): string {
  const p = spec.replace(/^["']|["']$/g, '').replace(/^[^/:]*:/, '');
  return p.replace(/^\/?~(?=\/|$)/, env.home);
}

const depthOf = (p: string) => p.split('/').filter((s) => s !== '').length;

/**
 * Invocations of cluster and research-data tools that destroy what nothing brings back: a tree removed
 * from a Globus collection, the tape archive (HPSS hsi) or iRODS; a mirror transfer that deletes at the
 * destination; a workspace released with its data; Slurm's crontab removed or replaced; every job of an
 * account cancelled; a group's shared environment removed; the only copy of annexed data dropped by
 * telling git-annex or DataLad to skip its check for other copies; a shared database's tables dropped.
 * `isSecret` says whether a local path holds keys or tokens (a Globus transfer of it hands them over).
 * Returns the reasons to refuse (none when it is ordinary).
 */
export function clusterToolFindings(argv: string[], env: PathEnv, isSecret: (abs: string) => boolean): string[] {
  const [name, ...args] = argv;
  const out: string[] = [];
  const recursive = args.some((a) => /^(-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)$/.test(a));
  const positionals = args.filter((a) => !a.startsWith('-'));
  if (name === 'globus') {
    const [sub, ...rest] = positionals;
    const paths = rest.filter((a) => a.includes(':') || a.startsWith('/'));
    if ((sub === 'delete' || sub === 'rm') && recursive) {
      const p = paths.map((x) => remotePath(x, env)).find((x) => !THROWAWAY.test(x.split('/').filter((s) => s !== '').pop() ?? ''));
      if (p !== undefined) out.push(`globus ${sub} -r removes ${p} with everything under it from the collection: data on remote storage that no backup of the project covers`);
    }
    // globus endpoint|collection delete: the share itself goes, and everyone who used it loses access.
    if (/^(endpoint|collection|gcs)$/.test(sub ?? '') && rest.includes('delete')) out.push(`globus ${sub} delete removes a Globus ${sub}: everyone who transfers through it loses access`);
    if (sub === 'transfer' && paths.length >= 2) {
      const [src, dst] = paths.map((x) => remotePath(x, env));
      const mirror = args.some((a) => /^--delete(-destination-extra)?$/.test(a));
      if (mirror && (/empty/i.test(src) || depthOf(dst) <= 2)) out.push(`globus transfer --delete makes ${dst} match ${src}: everything at the destination the source lacks is deleted`);
      if (isSecret(src.replace(/\/$/, ''))) out.push(`globus transfer sends ${src}, keys or credentials, to another collection: they leave the user's home`);
    }
  }
  // HPSS's hsi and iRODS's irm: the tape archive and the data grid hold the long-term copies.
  if (name === 'hsi' && /\b(rm|rmdir|delete)\s+-[a-zA-Z]*[rR]/.test(args.join(' '))) out.push(`hsi ${args.join(' ')} removes a tree from the tape archive: the long-term copy, which nothing brings back`);
  if (name === 'irm' && recursive) out.push(`irm -r removes ${positionals.join(' ')} from iRODS with everything under it: the data grid's copy, which nothing brings back`);
  // sacctmgr delete account|user|qos: the scheduler's accounting for a group or user (their jobs, limits and history).
  if (name === 'sacctmgr' && positionals.some((a) => /^(delete|remove)$/i.test(a))) out.push(`sacctmgr ${args.join(' ')} deletes accounting entries of the scheduler: a group's or user's access, limits and job history`);
  if (name === 'ws_release' && args.some((a) => a === '--delete-data')) out.push(`ws_release --delete-data deletes the workspace's data at once, instead of keeping it for the grace period`);
  if (name === 'scrontab') {
    if (args.some((a) => /^-[a-zA-Z]*r/.test(a))) out.push('scrontab -r deletes every scheduled job of the user in Slurm without asking');
    else if (positionals.length > 0 && !args.some((a) => a === '-l' || a === '-e')) out.push(`scrontab ${positionals[0]} replaces the user's whole Slurm crontab: jobs installed this way run unattended`);
  }
  // scancel -A ACCOUNT: every job charged to the group's account, the other members' too when the user coordinates it.
  if (/^(scancel|qdel|bkill)$/.test(name) && args.some((a, k) => /^(-A|--account)(=|$)/.test(a) && (a.includes('=') || args[k + 1] !== undefined)) && !args.some((a) => /^(-n|--name|--jobname)(=|$)/.test(a)) && positionals.every((a) => !/^\d/.test(a))) out.push(`${name} ${args.join(' ')} cancels every job of the account: the group's running work`);
  // conda env remove -p /project/GROUP/envs/x: an environment the group's jobs run in.
  if (/^(conda|mamba|micromamba)$/.test(name) && (positionals[0] === 'env' ? /^(remove|rm)$/.test(positionals[1] ?? '') : positionals[0] === 'remove' && args.includes('--all'))) {
    const k = args.findIndex((a) => a === '-p' || a === '--prefix');
    const prefix = k >= 0 ? args[k + 1] : args.find((a) => a.startsWith('--prefix='))?.slice(9);
    if (prefix !== undefined && sharedArea(prefix) !== null) out.push(`${name} removes the environment ${prefix} on a shared area: the group's jobs run in it`);
  }
  // git annex drop --force, datalad drop --reckless kill: the check that another copy exists is turned off.
  const annex = name === 'git-annex' ? args : name === 'git' && positionals[0] === 'annex' ? args.slice(args.indexOf('annex') + 1) : null;
  if (annex && /^(drop|dropunused|move)$/.test(annex.find((a) => !a.startsWith('-')) ?? '') && annex.some((a) => a === '--force' || a === '--unsafe')) out.push(`git annex ${annex.join(' ')} drops content without checking that another copy exists: the only copy may go`);
  if (name === 'datalad' && /^(drop|remove|uninstall)$/.test(positionals[0] ?? '') && args.some((a, k) => (a === '--reckless' && /^(kill|availability)$/.test(args[k + 1] ?? '')) || /^--reckless=(kill|availability)$/.test(a) || a === '--nocheck')) out.push(`datalad ${positionals[0]} --reckless skips the check that another copy exists: the only copy of the data may go`);
  // sqlite3 /project/GROUP/db/x.sqlite 'DROP TABLE …': a database the group shares.
  if (name === 'sqlite3' && positionals[0] !== undefined && sharedArea(positionals[0]) !== null && positionals.slice(1).some((a) => /\b(drop\s+table|delete\s+from|truncate)\b/i.test(a))) out.push(`sqlite3 changes ${positionals[0]}, a database on a shared area: the group's data in it is lost`);
  return out;
}
