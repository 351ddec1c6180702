/**
 * Version-control servers other than git: what a command destroys for good on a Perforce (Helix Core)
 * server or workspace, or on a Plastic SCM (Unity Version Control) server, and what it prints that is a
 * login. Git's own history rules live in git-rules.ts and command-rules.ts.
 *
 * - History removed from the server: `p4 obliterate -y` (without -y it only previews), `p4 depot -d`,
 *   `p4 stream --obliterate -y`, `cm repository delete`. No later revision brings it back.
 * - Work that exists nowhere else: shelved changelists deleted (`p4 shelve -d`) when they are someone
 *   else's (-f) or many at once (fed by xargs), and the whole workspace reverted or cleaned
 *   (`p4 revert //...`, `p4 clean //...`): a Perforce workspace usually spans far more than the project,
 *   so the project's backup does not cover it. The same on a few named files or the current directory
 *   (`p4 clean`, `p4 revert file`) is a work-tree discard, judged as git's are: a warning.
 * - Logins printed: `p4 tickets`, `p4 login -p` (the ticket itself), `p4 set -q P4PASSWD`.
 *
 * Pure functions over argv; command-rules.ts calls vcsServerFindings() for each invocation whose
 * program mayMatch() names.
 */

/** Cheap gate: the programs this module judges. */
export function mayMatch(line: string): boolean {
  return line.includes('p4') || line.startsWith('cm') || line.includes(' cm ');
}

export interface VcsFinding {
  level: 'block' | 'warn';
  reason: string;
}

/** p4's global options that take a value (p4 -c CLIENT -u USER -p PORT -F FMT … COMMAND). */
const P4_GLOBAL_ARG = /^(-b|-c|-C|-d|-H|-L|-p|-P|-Q|-r|-u|-v|-x|-z|-F|--field)$/;

/** The p4 subcommand and its arguments, past the global options; null when argv is not p4. */
export function p4Command(argv: string[]): { sub: string; args: string[]; globals: string[] } | null {
  if (!/^p4(\.exe)?$/i.test(argv[0] ?? '')) return null;
  let k = 1;
  while (k < argv.length && argv[k].startsWith('-')) k += P4_GLOBAL_ARG.test(argv[k]) ? 2 : 1;
  return k < argv.length ? { sub: argv[k], args: argv.slice(k + 1), globals: argv.slice(1, k) } : null;
}

/** A file argument that names the whole workspace or a whole depot: //..., //depot/..., //CLIENT/... at its top. */
const WHOLE = /^(\/\/\.\.\.|\/\/[^/]+\/\.\.\.|\/\/[^/]+\/[^/]+\/\.\.\.)(#.*|@.*)?$/;

const flag = (args: string[], letters: string) => args.some((a) => /^-[a-zA-Z]+$/.test(a) && [...letters].some((c) => a.slice(1).includes(c)));

/**
 * What a Perforce or Plastic command destroys, or null. `viaXargs`: the file or change arguments come
 * from a pipe (every depot file, every shelved change); `fromFile`: -x FILE supplies them.
 */
export function vcsServerFindings(argv: string[], viaXargs: boolean): VcsFinding[] {
  const p4 = p4Command(argv);
  if (p4 === null) return plasticFindings(argv);
  const { sub, args, globals } = p4;
  const files = args.filter((a) => !a.startsWith('-'));
  const fed = viaXargs || globals.includes('-x');
  const out: VcsFinding[] = [];
  if (sub === 'obliterate' && flag(args, 'y') && !flag(args, 'n')) {
    out.push({ level: 'block', reason: `p4 obliterate -y ${files.slice(0, 2).join(' ') || '(files fed to it)'} removes files and their whole history from the Perforce server for good: no revision brings them back` });
  }
  if (sub === 'depot' && flag(args, 'd')) out.push({ level: 'block', reason: `p4 depot -d ${files[0] ?? ''} deletes a whole depot from the Perforce server` });
  if (sub === 'stream' && args.includes('--obliterate') && flag(args, 'y')) out.push({ level: 'block', reason: `p4 stream --obliterate -y removes a stream and its history from the Perforce server` });
  if (sub === 'shelve' && flag(args, 'd') && (flag(args, 'f') || fed)) {
    out.push({ level: 'block', reason: `p4 shelve -d ${flag(args, 'f') ? '-f deletes another user\'s shelved changelist' : 'deletes every shelved changelist fed to it'}: shelved work that was never submitted exists nowhere else` });
  }
  const preview = flag(args, 'n');
  // p4 revert -a (only unchanged files) and -k (keeps the local files) lose nothing.
  if (sub === 'revert' && !preview && !flag(args, 'ak') && (files.some((f) => WHOLE.test(f)) || fed)) {
    out.push({ level: 'block', reason: `p4 revert ${files[0] ?? ''} throws away the edits of every file opened in the Perforce workspace, which spans more than this project: no backup covers them` });
  }
  // p4 clean (p4 reconcile -w): deletes files the depot does not have and restores edited ones.
  const cleans = sub === 'clean' || (sub === 'reconcile' && flag(args, 'w'));
  if (cleans && !preview) {
    if (files.some((f) => WHOLE.test(f)) || fed) out.push({ level: 'block', reason: `p4 ${sub} ${files[0] ?? ''} deletes every file of the Perforce workspace the depot does not have and restores every edited one: the workspace spans more than this project, and no backup covers it` });
    else out.push({ level: 'warn', reason: `p4 ${sub} deletes the local files the depot does not have and restores edited ones here: check with p4 clean -n first` });
  } else if (sub === 'revert' && !preview && !flag(args, 'ak') && out.length === 0) {
    out.push({ level: 'warn', reason: `p4 revert ${files.join(' ')} throws away the edits of those opened files` });
  }
  return out;
}

/** Plastic SCM / Unity Version Control: a repository deleted from its server. */
function plasticFindings(argv: string[]): VcsFinding[] {
  if (!/^cm(\.exe)?$/i.test(argv[0] ?? '')) return [];
  const [, a1, a2] = argv;
  if ((/^(repository|repo)$/.test(a1 ?? '') && /^(delete|rm|remove)$/.test(a2 ?? '')) || a1 === 'rmrep') {
    return [{ level: 'block', reason: `cm ${a1} ${a2 ?? ''} deletes a repository from the Plastic SCM (Unity Version Control) server, with its whole history` }];
  }
  return [];
}

/**
 * Where version-control and artifact servers keep their data: Perforce's P4ROOT (the Helix installer's
 * /opt/perforce/servers/NAME/root, the SDP's /p4/N/root and offline_db, its depots), Subversion's
 * repositories, the forges' repository stores, Plastic SCM's server database. Deleting any file there
 * (db.*, a depot's archive files) corrupts or loses the team's whole history.
 */
const SERVER_STORE = /^\/(opt\/perforce\/servers\/[^/]+|p4\/\d+|hxdepots\/p4\/\d+|hxmetadata\/p4\/\d+|hxlogs\/p4\/\d+\/checkpoints|var\/lib\/perforce|perforce|p4root)\/(root|offline_db|depots|checkpoints)(\/|$)|^\/(var|srv)\/(svn|subversion|repos\/svn)\/[^/]+|^\/var\/opt\/gitlab\/git-data|^\/var\/lib\/(gitea|forgejo|gogs)\/(data|repositories|gitea-repositories)|^\/opt\/plasticscm\d*\/server\/(jet|db)/;

/** Why deleting abs loses a version-control server's data, or null. */
export function serverStoreLoss(abs: string): string | null {
  return SERVER_STORE.test(abs) ? `${abs} is a version-control server's own store (its database or archive files): the team's whole history goes with it` : null;
}

/** A container volume of a version-control or artifact server (p4-depot-data, gitlab_data, nexus-data): the team's history, not a dev database. */
export function serverVolume(name: string): boolean {
  return /(^|[-_.])(p4|p4d|perforce|helix|depots?|gitlab|gitea|forgejo|gogs|svn|subversion|plastic|plasticscm|artifactory|nexus)([-_.]|$)/i.test(name);
}

/** What a Perforce command prints that is a login: the ticket file's contents, a ticket, the stored password. */
export function p4CredentialPrinter(argv: string[]): string | null {
  const p4 = p4Command(argv);
  if (p4 === null) return null;
  if (p4.sub === 'tickets') return 'the Perforce tickets (p4 tickets)';
  if (p4.sub === 'login' && flag(p4.args, 'p')) return 'a Perforce ticket (p4 login -p)';
  if (p4.sub === 'set' && p4.args.some((a) => /^P4PASSWD$/i.test(a))) return 'the Perforce password (p4 set P4PASSWD)';
  return null;
}
