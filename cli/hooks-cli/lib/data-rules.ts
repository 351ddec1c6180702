/**
 * Data rules: what a data scientist or ML engineer on a shared machine loses that is neither the
 * project's nor a cache. Shared data mounts (/scratch, /data, /mnt/NAME...) beyond the user's own
 * area in them, the data directories of the home (~/data, ~/checkpoints: see isPreciousHomeDir),
 * system-wide installs every user's jobs run on (/usr/local/cuda*, the GPU driver packages), other
 * users' processes and jobs killed as root, remote buckets, registries and data stores emptied from
 * their CLIs and SDKs, and the history of LFS and DVC rewritten.
 *
 * Pure functions over paths and argv; command-rules.ts calls them where it judges deletes, writes and
 * invocations, and turns what they return (a reason, or null) into a finding.
 */
import { isUnder, type PathEnv } from './paths-classify';

/**
 * Roots of shared data mounts on clusters and GPU boxes: scratch and parallel filesystems, NFS
 * exports, a disk mounted at /mnt/NAME (single letters are Windows drives under WSL, judged apart).
 */
const SHARED_MOUNT = /^\/(?:scratch|data|datasets|gpfs|lustre|nfs|shared|storage|fsx|beegfs|mnt\/(?![a-z](?:\/|$))[^/]+)(?=\/|$)/;

/** A path segment that is the user's own name: $USER, ${LOGNAME}, or the home directory's name. */
function isOwnName(seg: string, env: PathEnv): boolean {
  if (/^\$\{?(USER|LOGNAME|USERNAME)\}?$/.test(seg)) return true;
  const m = /^\/(?:home|Users)\/([^/]+)$/.exec(env.home);
  return m !== null && m[1] === seg;
}

/**
 * A recursive delete (or an emptying of everything in it, `wholeDir`) of a shared data mount, or of a
 * whole area right in it that is not the user's own (/scratch/bob, /mnt/datasets/imagenet): every
 * user's data, another user's, or a dataset the whole group reads. Deeper paths, and anything under
 * the user's own area (/scratch/$USER/runs/x), are ordinary clean-up. Returns what is lost, or null.
 */
export function sharedMountLoss(abs: string, env: PathEnv): string | null {
  const m = SHARED_MOUNT.exec(abs);
  if (!m || isUnder(env.project, abs)) return null;
  const rest = abs.slice(m[0].length).split('/').filter((s) => s !== '');
  if (rest.length === 0) return `the shared data mount ${m[0]}: every user's data on it`;
  // `…` stands for what a filter selected there (find /scratch -name '*.tmp'): not a whole area.
  if (rest.length === 1 && rest[0] !== '…' && !isOwnName(rest[0], env)) return `${abs}, a whole area of the shared data mount ${m[0]} (another user's, or a dataset the group reads)`;
  return null;
}

/** A file under a shared data mount outside the user's own area there. */
function inSharedData(abs: string, env: PathEnv): boolean {
  const m = SHARED_MOUNT.exec(abs);
  if (!m || isUnder(abs, env.project)) return false;
  const first = abs.slice(m[0].length).split('/').filter((s) => s !== '')[0];
  return first === undefined || !isOwnName(first, env);
}

/** Data directories of the home (kept in step with isPreciousHomeDir's list). */
const HOME_DATA = /^(data|datasets|checkpoints|experiments|models|notebooks)(\/|$)/;

/**
 * A data file destroyed in place (truncate -s 0, shred, `: >`, open(…, 'w')): a file of a shared
 * data mount outside the user's own area, or of a data directory of the home. Logs are not data.
 */
export function dataFileEmptied(abs: string, env: PathEnv): string | null {
  if (/\.(log|out|err)$/.test(abs)) return null;
  if (inSharedData(abs, env)) return `${abs}, data on a shared mount`;
  const rel = isUnder(abs, env.home) && !isUnder(abs, env.project) ? abs.slice(env.home.length + 1) : '';
  return HOME_DATA.test(rel) ? `${abs}, the user's data kept in the home directory` : null;
}

/** The root of a shared data mount, where only names (or the user's own files, -user $USER) narrow a listing. */
export function isSharedMountRoot(abs: string | null, argv: string[] = []): boolean {
  if (abs === null || SHARED_MOUNT.exec(abs)?.[0] !== abs) return false;
  return !argv.some((a, k) => /^-(user|uid)$/.test(argv[k - 1] ?? '') && /^\$\{?(USER|LOGNAME)\}?$|^\$\(…\)$/.test(a) && !/^(!|-not)$/.test(argv[k - 2] ?? ''));
}
