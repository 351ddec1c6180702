/**
 * What a path means to the validator: the filesystem root, the user's home,
 * the project or one of their ancestors, a system tree, a disk device, a
 * secret file. Pure functions over POSIX paths.
 */
import path from 'node:path';

export interface PathEnv {
  home: string;
  project: string;
}

const TOP_DIRS = new Set([
  '/bin', '/boot', '/dev', '/etc', '/home', '/lib', '/lib32', '/lib64', '/libx32', '/media', '/mnt', '/opt', '/proc', '/root', '/run',
  '/sbin', '/srv', '/sys', '/usr', '/var', '/snap', '/tmp', '/var/tmp', '/usr/local', '/System', '/Library', '/Applications', '/Users', '/private',
]);

/** Trees whose contents belong to the system: writing or deleting inside them is refused when system_files_protection is on. */
const SYSTEM_TREES = ['/etc', '/boot', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/usr', '/sys', '/proc', '/root', '/var/lib', '/var/spool', '/System', '/private/etc', '/dev'];
/** Exceptions inside system trees that users and tools write every day. */
const SYSTEM_EXCEPTIONS = ['/usr/local', '/dev/null', '/dev/zero', '/dev/stdout', '/dev/stderr', '/dev/stdin', '/dev/tty', '/dev/fd', '/dev/shm', '/dev/random', '/dev/urandom', '/proc/self/fd'];

const DISK_DEVICE = /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|loop\d|dm-\d|md\d|disk\d|rdisk\d|mapper\/|mem$|kmem$|port$)/;

export function isUnder(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir === '/' ? '/' : dir + '/');
}

export function resolveFrom(cwd: string, p: string): string {
  const r = path.posix.resolve(cwd, p);
  return r.length > 1 ? r.replace(/\/+$/, '') : r;
}

export function isDiskDevice(p: string): boolean {
  return DISK_DEVICE.test(p);
}

export function isSystemPath(p: string): boolean {
  if (SYSTEM_EXCEPTIONS.some((e) => isUnder(p, e))) return false;
  return SYSTEM_TREES.some((t) => isUnder(p, t));
}

/** Files whose contents are secrets: reading them is worth a warning, writing them is refused. */
export function isSecretPath(p: string, env: PathEnv): boolean {
  if (/^\/etc\/(shadow|gshadow|sudoers)(\.d\/.*)?$/.test(p) || p === '/etc/master.passwd') return true;
  const h = env.home;
  return (
    isUnder(p, `${h}/.ssh`) ||
    isUnder(p, `${h}/.gnupg`) ||
    isUnder(p, `${h}/.aws`) ||
    p === `${h}/.netrc` ||
    p === `${h}/.npmrc` ||
    p === `${h}/.pgpass` ||
    isUnder(p, `${h}/.config/gcloud`) ||
    isUnder(p, `${h}/.kube`)
  );
}

export type DeleteClass = 'root' | 'home' | 'project' | 'ancestor' | 'top-level' | 'system' | null;

/** How bad deleting (recursively) `p` would be. */
export function classifyDelete(p: string, env: PathEnv): DeleteClass {
  if (p === '/') return 'root';
  if (p === env.home) return 'home';
  if (p === env.project) return 'project';
  if (isUnder(env.home, p) || isUnder(env.project, p)) return 'ancestor';
  if (TOP_DIRS.has(p)) return 'top-level';
  if (isSystemPath(p)) return 'system';
  return null;
}

export function describeDelete(c: Exclude<DeleteClass, null>, p: string): string {
  switch (c) {
    case 'root':
      return 'recursive delete of the filesystem root /';
    case 'home':
      return `recursive delete of the home directory ${p}`;
    case 'project':
      return `recursive delete of the whole project ${p}`;
    case 'ancestor':
      return `recursive delete of ${p}, which contains the project or the home directory`;
    case 'top-level':
      return `recursive delete of the top-level directory ${p}`;
    case 'system':
      return `recursive delete of the system path ${p}`;
  }
}
