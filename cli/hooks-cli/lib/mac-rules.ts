/**
 * Mac rules: what a macOS developer loses that Linux has no word for. Spotlight (`mdfind`) is a
 * `find` over the whole disk: its list of files feeds deleters and senders as find's does. The
 * keychain's identities, Finder's and the system's own stores (Time Machine snapshots, every
 * global preference) are gone for good when their tools delete them.
 *
 * Pure functions over argv; command-rules.ts calls them and turns what they return into findings.
 */

/** Spotlight's content types, read as a file name pattern of that kind (for the rules on files of one kind). */
const KIND_NAMES: [RegExp, string][] = [
  [/image|photo|jpeg|png|heic/i, '*.jpg'],
  [/movie|video|audio|mp3|music/i, '*.mov'],
  [/pdf/i, '*.pdf'],
  [/text|source|document|presentation|spreadsheet/i, '*.docx'],
];

/**
 * `mdfind [-onlyin DIR]… QUERY` (or `-name NAME`) as the `find` argv it stands for:
 * `find DIR… -name PATTERN` (without -onlyin, `/` and the home directory). A query on the file name (kMDItemFSName == "*.p12", kMDItemDisplayName)
 * is that name pattern; one on the kind of file (kMDItemContentTypeTree == "public.image") a pattern
 * of that kind; `*` matches everything. Null when argv is not mdfind or lists nothing.
 */
export function spotlightAsFind(argv: string[], home: string): string[] | null {
  if (argv[0] !== 'mdfind') return null;
  const roots: string[] = [];
  let pattern: string | null = null;
  let query = '';
  for (let k = 1; k < argv.length; k++) {
    const a = argv[k];
    if (a === '-onlyin') roots.push(argv[++k] ?? '/');
    else if (a === '-name') pattern = argv[++k] ?? null;
    else if (a === '-s' || a === '-attr') k++;
    else if (!a.startsWith('-')) query += ` ${a}`;
  }
  if (pattern === null && query.trim() !== '') {
    const name = /kMDItem(?:FSName|DisplayName)\s*={1,2}\s*["']([^"']*)["']/.exec(query)?.[1];
    const kind = /kMDItem(?:ContentTypeTree|ContentType|Kind)\s*={1,2}\s*["']([^"']*)["']/.exec(query)?.[1];
    pattern = name ?? (kind !== undefined ? KIND_NAMES.find(([re]) => re.test(kind))?.[1] ?? '*.file' : query.trim().replace(/^["']|["']$/g, ''));
  }
  if (pattern === null) return null;
  // Without -onlyin: the whole disk, the home directory in it.
  return ['find', ...(roots.length > 0 ? roots : ['/', home]), ...(pattern === '*' ? [] : ['-name', pattern])];
}

/** Commands macFindings judges: a cheap gate before it. */
export const isMacTool = (name: string): boolean => /^(security|fastlane|tmutil|defaults|brew|snap|flatpak|rm|firebase)$/.test(name);

/**
 * What a Mac developer cannot get back: a signing identity or certificate deleted from the keychain,
 * every certificate and profile of the team revoked (fastlane match nuke), every local Time Machine
 * snapshot, every global preference (defaults delete -g), every installed application removed with
 * its data (brew --zap, snap --purge, flatpak --delete-data, fed by their own list), the release
 * keystore an app store knows the app by. Returns the reasons found.
 */
export function macFindings(argv: string[], subs: string[], upstream: string[][]): string[] {
  const [name, ...args] = argv;
  const out: string[] = [];
  if (name === 'security' && /^delete-(identity|certificate)$/.test(args[0] ?? '')) out.push(`security ${args[0]} removes a signing identity or certificate with its private key from the keychain: builds can no longer be signed with it`);
  if (name === 'fastlane' && args[0] === 'match' && args[1] === 'nuke') out.push('fastlane match nuke revokes every certificate and profile of the team on the Apple portal and deletes them from the match repository');
  if (name === 'tmutil' && ((args[0] === 'deletelocalsnapshots' && /^\/(Volumes\/[^/]+)?$/.test(args[1] ?? '')) || args[0] === 'deleteinprogress')) out.push(`tmutil ${args.join(' ')} deletes every local Time Machine snapshot of the volume`);
  if (name === 'defaults' && args[0] === 'delete' && /^(-g|-globalDomain|NSGlobalDomain|\.GlobalPreferences)$/.test(args[1] ?? '') && args.length === 2) out.push('defaults delete -g drops every global preference of the user');
  // Every installed application with its data: the package list fed back to the uninstaller.
  const listed = (re: RegExp) => subs.some((s) => re.test(s)) || upstream.some((u) => re.test(u.join(' ')));
  const everyApp =
    (name === 'brew' && /^(uninstall|remove|rm)$/.test(args[0] ?? '') && args.includes('--zap') && listed(/^\s*brew\s+list\b(?![^|]*\|\s*(grep|head|tail))/)) ||
    (name === 'snap' && args[0] === 'remove' && args.includes('--purge') && listed(/^\s*snap\s+list\b/)) ||
    (name === 'flatpak' && /^(uninstall|remove)$/.test(args[0] ?? '') && args.includes('--all') && args.includes('--delete-data'));
  if (everyApp) out.push(`${name} ${args[0]} removes every installed application together with its data and settings`);
  // rm android/app/release.jks, rm ios/AuthKey_ABC.p8: the key an app store knows the app by; without it no update can be published.
  if (name === 'rm' && args.some((x) => /(^|\/)(release|upload)[\w.-]*\.(jks|keystore)$|(^|\/)AuthKey_\w+\.p8$/.test(x))) out.push(`rm deletes the release signing key ${args.find((x) => /\.(jks|keystore|p8)$/.test(x))}: without it no update of the app can be published`);
  return out;
}

/** Files that hold every user's account data of a backend once the line exported them (firebase auth:export FILE). */
export function accountExports(argv: string[]): string[] {
  return argv[0] === 'firebase' && argv[1] === 'auth:export' && argv[2] && !argv[2].startsWith('-') ? [argv[2]] : [];
}

/** A file that holds every password of the user: a keychain, a KeePass database, a wallet, the pass store. */
export function isPasswordVault(abs: string): boolean {
  return /\.keychain(-db)?$|\/Library\/Keychains(\/|$)|\.kdbx$|(^|\/)wallet\.dat$|\/\.password-store$|\/\.local\/share\/keyrings(\/|$)/.test(abs);
}
