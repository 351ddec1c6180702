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
  '/sbin', '/srv', '/sys', '/usr', '/var', '/snap', '/tmp', '/var/tmp', '/usr/local', '/System', '/Library', '/Applications', '/Users', '/private', '/Volumes',
]);

/** Trees whose contents belong to the system: writing or deleting inside them is refused when system_files_protection is on. */
const SYSTEM_TREES = ['/etc', '/boot', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/usr', '/sys', '/proc', '/root', '/var/lib', '/var/spool', '/var/log', '/var/mail', '/var/backups', '/var/db', '/var/opt', '/System', '/private/etc', '/dev'];
/** Exceptions inside system trees that users and tools write every day. */
const SYSTEM_EXCEPTIONS = ['/usr/local', '/var/lib/apt/lists', '/var/cache/apt/archives', '/dev/null', '/dev/zero', '/dev/stdout', '/dev/stderr', '/dev/stdin', '/dev/tty', '/dev/fd', '/dev/shm', '/dev/random', '/dev/urandom', '/proc/self/fd',
  // Kernel settings tuned in everyday work: dropping the page cache, swappiness, inotify and map limits.
  '/proc/sys/vm/drop_caches', '/proc/sys/vm/swappiness', '/proc/sys/vm/max_map_count', '/proc/sys/fs/inotify'];

const DISK_DEVICE = /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|loop\d|dm-\d|md\d|disk\d|rdisk\d|mapper\/|mem$|kmem$|port$)/;

export function isUnder(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir === '/' ? '/' : dir + '/');
}

export function resolveFrom(cwd: string, p: string): string {
  const r = path.posix.resolve(cwd, windowsDrivePath(p) ?? p);
  return r.length > 1 ? r.replace(/\/+$/, '') : r;
}

export function isDiskDevice(p: string): boolean {
  return DISK_DEVICE.test(p);
}

/** A path the system owns. The user's home is never one, even when it is /root (the user is root). */
export function isSystemPath(p: string, home?: string): boolean {
  if (SYSTEM_EXCEPTIONS.some((e) => isUnder(p, e))) return false;
  if (home && home !== '/' && isUnder(p, home)) return false;
  return SYSTEM_TREES.some((t) => isUnder(p, t));
}

/** Files whose contents are secrets: reading them is worth a warning, writing them is refused. */
export function isSecretPath(p: string, env: PathEnv): boolean {
  if (/^\/etc\/(shadow|gshadow|sudoers)(\.d\/.*)?$/.test(p) || p === '/etc/master.passwd') return true;
  // Machine secrets: SSH host keys, cluster admin config, VPN and Wi-Fi keys, TLS private keys, mounted service secrets.
  if (/^\/etc\/(ssh\/ssh_host_[^/]*_key|kubernetes\/(admin|super-admin|kubelet|controller-manager|scheduler)\.conf|kubernetes\/pki\/.*\.key|wireguard\/.+|NetworkManager\/system-connections\/.+|ssl\/private\/.*|letsencrypt\/(live|archive)\/.+\/privkey.*|openvpn\/.*\.key|ipsec\.secrets|krb5\.keytab|rancher\/k3s\/k3s\.yaml|gitlab-runner\/config\.toml|mysql\/debian\.cnf|docker\/daemon-certs\/.*key.*)$|^\/var\/lib\/rancher\/(k3s|rke2)\/server\/(token|node-token|agent-token|cred\/.*|tls\/.*\.key)$|^\/(var\/)?run\/secrets\/|^\/var\/lib\/kubelet\/pki\/|^\/etc\/(ssh|ssl\/private|wireguard|letsencrypt(\/(live|archive))?|kubernetes\/pki|NetworkManager\/system-connections)\/?$/.test(p)) return true;
  const rel = homeRel(p, env);
  return rel !== null && !/^\.ssh\/known_hosts(\.old)?$/.test(rel) && /^(\.ssh|\.gnupg|\.aws|\.config\/gcloud|\.kube)(\/|$)|^\.(netrc|npmrc|pgpass)$/.test(rel);
}

/** The path relative to the home directory it lies in (homeOf), or null when it is not below one. */
function homeRel(p0: string, env: PathEnv): string | null {
  const { p } = windowsView(p0, env);
  const h = homeOf(p, env);
  return p.length > h.length + 1 && p.startsWith(h) && p[h.length] === '/' ? p.slice(h.length + 1) : null;
}

/** The path relative to the home it lies in (the user's, another's, a Windows profile read as its POSIX kin), or null. */
export function homeRelPath(p: string, env: PathEnv): string | null {
  return homeRel(p, env);
}

/** The home directory a path lies in: the user's, or another user's (/home/NAME, /Users/NAME, /root, also as a glob /home/*), whose keys are as secret. */
export function homeOf(p: string, env: PathEnv): string {
  if (isUnder(p, env.home)) return env.home;
  return /^\/(?:home\/[^/]+|Users\/[^/]+|root|var\/root)(?=\/)/.exec(p)?.[0] ?? (p.startsWith('/mnt/') ? WIN_PROFILE.exec(p)?.[0] : undefined) ?? env.home;
}

export type DeleteClass = 'root' | 'home' | 'project' | 'ancestor' | 'top-level' | 'system' | null;

/** How bad deleting (recursively) `p` would be. */
export function classifyDelete(p0: string, env: PathEnv): DeleteClass {
  // macOS keeps /etc, /var and /tmp under /private; WSL mounts Windows drives at /mnt/<letter>.
  const p = p0.replace(/^\/private(?=\/(etc|var|tmp)(\/|$))/, '');
  if (/^\/mnt\/[a-z](\/(Users|Windows|Program Files( \(x86\))?|ProgramData))?$/i.test(p)) return 'top-level';
  if (/^\/mnt\/[a-z]\/(Windows|Program Files( \(x86\))?|ProgramData)\//i.test(p)) return 'system';
  // A Windows user's home, or their Documents/Desktop..., as WSL sees them.
  if (/^\/mnt\/[a-z]\/Users\/[^/]+(\/(Documents|Desktop|Downloads|Pictures|Music|Videos|OneDrive|AppData))?$/i.test(p)) return 'home';
  if (p === '/') return 'root';
  if (p === env.home) return 'home';
  // Another user's home directory (/home/alice, /Users/alice).
  if (/^\/(home|Users)\/[^/]+$/.test(p)) return 'home';
  if (p === env.project) return 'project';
  if (isUnder(env.home, p) || isUnder(env.project, p)) return 'ancestor';
  // Beside the home directory (~/../alice): another user's home.
  if (p.slice(0, p.lastIndexOf('/')) === env.home.slice(0, env.home.lastIndexOf('/')) && env.home.lastIndexOf('/') > 0) return 'home';
  if (p === '/var/www') return 'top-level';
  if (TOP_DIRS.has(p)) return 'top-level';
  if (isSystemPath(p, env.home)) return 'system';
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

/** Credential stores under the home directory beyond isSecretPath's (read: secret; tools write them themselves). */
const HOME_SECRETS = [
  '.docker/config.json', '.git-credentials', '.config/gh', '.config/hub', '.pypirc', '.gem/credentials', '.cargo/credentials',
  '.cargo/credentials.toml', '.terraform.d/credentials.tfrc.json', '.azure', '.password-store', '.local/share/keyrings',
  'Library/Keychains', '.config/op', '.vault-token', '.config/rclone', '.boto', '.s3cfg', '.mozilla', '.config/google-chrome',
  '.bash_history', '.zsh_history', '.psql_history', '.mysql_history', 'Library/Application Support/Google/Chrome', '.config/chromium',
  'Library/Application Support/Firefox', '.thunderbird',
  // Deploy and cloud tools' logins, wallets, messengers' stores.
  '.vercel', '.config/vercel', '.netlify', '.config/netlify', '.fly', '.config/doctl', '.config/heroku', '.wrangler', '.config/.wrangler', '.railway', '.supabase',
  '.config/configstore', '.config/sops', '.config/age', '.age', '.ethereum', '.bitcoin', '.electrum', '.config/Slack', '.config/discord', '.config/Signal', '.config/BraveSoftware',
  '.pki', '.keychain', '.claude/.credentials.json', '.config/anthropic', '.config/openai', '.databrickscfg', '.snowflake', '.my.cnf', '.mylogin.cnf', '.dbt/profiles.yml', '.kaggle', '.huggingface', '.cache/huggingface/token',
  // Data tools' logins: warehouse and query clients, object-store and broker clients.
  // Mobile signing and store logins: adb's key, App Store Connect API keys, fastlane's session cookies.
  '.android/adbkey', '.appstoreconnect', '.private_keys', '.fastlane/spaceship', '.config/fastlane',
  '.snowsql', '.config/snowflake', '.trino', '.clickhouse-client', '.cassandra', '.mc', '.mcli', '.confluent', '.odbc.ini', '.config/databricks', '.pgservice.conf', '.redshift', '.bigqueryrc',
  '.config/hcloud', '.oci', '.bluemix', '.config/linode-cli', '.ngrok2', '.config/ngrok', '.tailscale', '.sentryclirc', '.terraformrc', '.circleci/cli.yml',
  // FileZilla's saved sites, WinSCP's sessions, the Windows credential store and DPAPI keys, Chromium and Firefox profiles as
  // a Windows profile holds them (AppData/Roaming is .config, AppData/Local .local/share: windowsView).
  '.config/filezilla', '.config/FileZilla', '.filezilla', '.config/WinSCP.ini', '.config/Microsoft/Credentials', '.config/Microsoft/Protect', '.local/share/Microsoft/Credentials',
  '.local/share/Google/Chrome/User Data', '.local/share/Microsoft/Edge/User Data', '.config/Mozilla/Firefox', '.config/Opera Software', '.local/share/BraveSoftware',
  // Bundler's and Composer's registry logins (BUNDLE_GEMS__HOST, http-basic).
  '.bundle/config', '.config/composer/auth.json',
  '.config/glab-cli', '.config/stripe', '.pulumi/credentials.json', '.cloudflared', '.wakatime.cfg', '.config/jira', '.jira.d', '.arduino15/arduino-cli.yaml', '.config/cachix',
  // Package registries' logins.
  '.m2/settings.xml', '.m2/settings-security.xml', '.gradle/gradle.properties', '.sbt/credentials', '.ivy2/.credentials', '.pip/pip.conf', '.config/pip/pip.conf',
  '.config/github-copilot', '.config/gh-copilot', '.codeium', '.config/Cursor/User/globalStorage', '.continue/config.json', '.config/sourcegraph',
  // Boards' and apps' cloud logins, a Mac's private stores (App Store Connect keys, Messages, Mail, cookies), adb's key.
  '.platformio/appstate.json', '.particle', '.config/particle', '.balena', '.appstoreconnect', 'Library/Messages', 'Library/Mail', 'Library/Cookies', '.android/adbkey', '.expo/state.json', '.fastlane',
  '.yarnrc', '.yarnrc.yml', '.nuget/NuGet/NuGet.Config', '.subversion/auth', '.config/git/credentials', '.composer/auth.json', '.config/composer/auth.json',
  // Game developers' logins: Perforce's tickets and enviro file (P4PASSWD), itch.io's butler key, the Epic and GOG launchers'
  // sessions (Heroic, Legendary, the Epic launcher's remembered login), Plastic SCM's and Unity's stored logins.
  '.p4tickets', '.p4enviro', 'p4tickets.txt', '.config/itch', 'Library/Application Support/itch', '.config/legendary', '.config/heroic',
  '.local/share/EpicGamesLauncher/Saved/Config', '.plastic4', '.config/unityhub', '.config/UnityHub',
];

/** Built on first use: most commands never ask, and a hook process answers one command. */
let homeSecretsRe: RegExp | null = null;
const homeSecretsTest = (rel: string): boolean =>
  (homeSecretsRe ??= new RegExp(`^(${HOME_SECRETS.map((x) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(/|$)`)).test(rel);

/** A file name that holds a secret wherever it is: private keys, .env files, credential files. */
export function isSecretName(name: string): boolean {
  // A find/ls pattern such as '.env*' or 'id_*' names secrets when its fixed part does.
  if (name.endsWith('*') && name.length > 1 && isSecretName(name.replace(/\*+$/, ''))) return true;
  if (/^\.env(\..*)?$/.test(name)) return !/\.(example|sample|template|dist|defaults?)$/.test(name);
  if (/^id_(rsa|dsa|ecdsa|ed25519)[^.]*$/.test(name) || /^id_\*$/.test(name) || /^[\w.-]+_(rsa|dsa|ecdsa|ed25519)(_key)?$/.test(name)) return true;
  if (/\.(ovpn|p8|keytab|kdb|age-key|asc\.key)$|^wp-config\.php$|^\.my\.cnf$/.test(name)) return true;
  // Android's signing passwords (key.properties, keystore.properties) beside the keystore they open; Ansible's vault password file.
  if (/^(key|keystore|signing|release-signing)\.properties$|^\.?vault[-_.]?pass(word)?(\.txt)?$/.test(name)) return true;
  if (/^\.(ssh|aws|gnupg|kube|password-store|netrc|git-credentials|pgpass)$/.test(name)) return true;
  // (cookies.txt: a browser's cookies exported for yt-dlp, gallery-dl, wget --load-cookies: the logged-in sessions.)
  if (/^(Login Data|Cookies|key[34]\.db|logins\.json|cookies\.sqlite|cookies\.txt)$/.test(name)) return true;
  // A Jupyter server's runtime file holds its token, which opens a shell as the user (old ones are deleted as litter: not a secret store).
  if (/^(jpserver|nbserver)-[^/]*\.json$/.test(name)) return true;
  // wrangler's local secrets (.dev.vars, .dev.vars.production), as .env files are.
  if (/^\.dev\.vars(\..*)?$/.test(name)) return !/\.(example|sample|template)$/.test(name);
  if (/^(credentials(\.(json|ya?ml|toml|ini|csv|txt|xml|enc|yml\.enc|db))?|secrets?\.(json|ya?ml|toml)|.*\.(pem|key|p12|pfx|keystore|jks|kdbx|ppk|tfstate|tfstate\.backup)|\.netrc|\.npmrc|\.pgpass|\.htpasswd|htpasswd|\.my\.cnf|wallet\.dat|secring\..*|.*\.kubeconfig|kubeconfig(\..*)?|service-account.*\.json)$/.test(name)) return true;
  if (/^(service[-_]?account|serviceAccountKey|firebase-adminsdk|.*-adminsdk-|gcp[-_]?(sa[-_]?)?key|sa[-_]key|client[-_]secret)[^/]*\.json$/i.test(name)) return true;
  // A service account's key by the usual naming (etl-prod-sa.json, loader_sa_key.json), a scheduler's settings with its keys and connections.
  if (/[-_.]sa([-_.]key)?\.json$|^airflow\.cfg$/i.test(name)) return true;
  // Android signing settings (key.properties holds the keystore's passwords), a service account's key by any prefix (google-play-service-account.json).
  if (/^(key|keystore|signing|release-signing)\.properties$|service[-_]?account[^/]*\.json$/i.test(name)) return true;
  // A data file whose name says what it holds (github_token.txt, api-key.json, db_password.env, auth.json, .vault-token):
  // not source code or documentation about such things, and not a template.
  return (
    /(^|[._-])(tokens?|secrets?|credentials?|creds|passwords?|passwd|api[_-]?keys?|auth)([._-]|$)/i.test(name) &&
    // (secrets.h, arduino_secrets.h: the header firmware keeps its Wi-Fi password and keys in.)
    /^\.|\.(txt|json|ya?ml|toml|env|ini|cfg|conf|key|pem|enc|dat|db|gpg|asc|h|xml|plist)$/i.test(name) &&
    !/\.(example|sample|template|dist|defaults?|schema\.json|d\.ts)$|(^|[._-])(example|sample|template|test|spec|mock|fixture)s?([._-]|$)/i.test(name)
  );
}

/** What is worth protecting from being read and sent away: isSecretPath, the stores above, secret file names. */
export function isSecretSource(p: string, env: PathEnv): boolean {
  if (isSecretPath(p, env) && !p.endsWith('.pub')) return true;
  const rel = homeRel(p, env);
  if (rel !== null && homeSecretsTest(rel)) return true;
  const name = p.slice(p.lastIndexOf('/') + 1);
  // Steam's login tokens (config/config.vdf, loginusers.vdf) and sentry files (ssfn…) wherever Steam is installed
  // (~/.steam/steam, ~/.local/share/Steam, Program Files (x86)/Steam, Application Support/Steam); a Unity licence file (.ulf).
  if (/\/(?:\.steam\/(?:steam|root|steamcmd)|Steam|steamcmd)\/(?:config(?:\/|$)|ssfn[^/]*$)|\.ulf$/.test(p)) return true;
  // A key file kept in a keys/ or secrets/ directory (keys/etl-sa.json, secrets/prod.pem): what the directory says it holds.
  if (/\/(keys|secrets|\.secrets|credentials)\/[^/]+\.(json|pem|p12|key|der|txt|ya?ml|env|cfg)$/i.test(p) && !/\.pub$/.test(p)) return true;
  // A browser test's saved login (Playwright's .auth/*.json and storageState files, Cypress's cypress.env.json) and a recorded
  // trace of a test run (its network log carries the test account's cookies and tokens): a live session of the account.
  if (/(^|\/)\.auth\/[^/]+\.json$|(^|\/)storage[-_]?state[^/]*\.json$|(^|\/)cypress\.env\.json$|(^|\/)test-results\/.*\/trace\.zip$/i.test(p)) return true;
  return isSecretName(name);
}

/** A directory of the home that holds one of the credential stores above (~/.android holds adbkey): a copy of it carries the secret. */
export function holdsHomeSecret(p: string, env: PathEnv): boolean {
  const rel = homeRel(p, env);
  return rel !== null && rel !== '.cache' && HOME_SECRETS.some((x) => x.startsWith(`${rel}/`));
}

/** Shell start-up files: a line written there runs in every future shell of the user. */
export function isStartupFile(p0: string, env0: PathEnv): boolean {
  const { p, env } = windowsView(p0, env0);
  const h = env.home;
  const names = ['.bashrc', '.bash_aliases', '.bash_profile', '.bash_login', '.bash_logout', '.profile', '.zshrc', '.zprofile', '.zshenv', '.zlogin', '.zlogout', '.kshrc', '.mkshrc', '.cshrc', '.tcshrc', '.inputrc', '.xprofile', '.xinitrc'];
  if (names.some((n) => p === `${h}/${n}`)) return true;
  if (isUnder(p, `${h}/.config/fish`) || isUnder(p, `${h}/.oh-my-zsh/custom`) || isUnder(p, `${h}/.config/autostart`)) return true;
  // Interpreters' start-up files: R, Julia, IPython, irb/pry, Python's PYTHONSTARTUP habit, ssh's rc.
  if (/^\.(Rprofile|irbrc|pryrc|pythonrc(\.py)?|ssh\/rc|julia\/config\/startup\.jl|ipython\/profile_[^/]+\/startup\/.+|config\/ipython\/profile_[^/]+\/startup\/.+)$/.test(isUnder(p, h) && p !== h ? p.slice(h.length + 1) : '')) return true;
  // Directories the start-up files source every file of (~/.bashrc.d/*.sh and the like).
  if (['.bashrc.d', '.zshrc.d', '.profile.d', '.zshenv.d', '.bash_profile.d', '.config/bash', '.config/zsh', '.zsh/conf.d', '.zsh/rc.d'].some((d) => isUnder(p, `${h}/${d}`))) return true;
  return /^\/etc\/(profile|bash\.bashrc|bashrc|zshrc|zsh\/.*|profile\.d\/.*|environment)$/.test(p);
}

/** Well-known caches under the home directory: deleting them only costs a download. */
export function isHomeCache(p0: string, env0: PathEnv): boolean {
  const { p, env } = windowsView(p0, env0);
  const h = env.home;
  // Inside a repository's .git (logs are its reflogs) nothing is a cache.
  if (/\/\.git(\/|$)/.test(p)) return false;
  const caches = ['.cache', '.npm', '.yarn/cache', '.pnpm-store', '.local/share/pnpm/store', '.gradle/caches', '.m2/repository', '.cargo/registry', '.cargo/git', '.rustup/toolchains', 'go/pkg/mod', 'Library/Caches', '.bun/install/cache', '.deno', '.nuget/packages', '.ivy2/cache', '.sbt', '.cocoapods', '.pub-cache', '.composer/cache', '.node-gyp', '.electron', '.expo', '.nvm/.cache', '.pyenv/cache', '.conda/pkgs', '.local/share/virtualenvs', '.vscode-server/data/CachedExtensionVSIXs'];
  if (caches.some((c) => isUnder(p, `${h}/${c}`))) return true;
  // A cache or log directory kept inside a tool's settings (~/.kube/cache, ~/.config/gcloud/logs,
  // ~/.config/Code/Cache): regenerated by the tool, nothing of the user's is in it.
  const rel = isUnder(p, h) && p !== h ? p.slice(h.length + 1).split('/') : [];
  // (~/.wrangler/tmp: a tool's scratch directory, the same.)
  // (Crashpad, Crash Reports, minidumps: a browser's or app's crash reports, written again at the next crash.)
  const k = rel.findIndex((seg) => /^(cache|caches|Cache|CacheStorage|Code Cache|GPUCache|ShaderCache|logs|http-cache|discovery|tmp|Crashpad|Crash Reports|crashes|minidumps)$/.test(seg));
  return k >= 1;
}

/** Data and models kept in the home directory (data-rules.ts also protects the files in them). */
/**
 * Storage roots right under / that hold shared or bulk data: cluster scratch and parallel filesystems
 * (Lustre, GPFS, BeeGFS, FSx), NFS exports, data, dataset, model, backup and archive volumes, shared
 * work areas. The one list behind STORAGE_ROOT (a whole root deleted) and SHARED_MOUNT (a root, or a
 * disk mounted at /mnt/NAME, and the areas in it: data-rules.ts).
 */
export const STORAGE_ROOTS = ['scratch', 'data', 'datasets', 'shared', 'nfs', 'storage', 'models', 'backup', 'backups', 'archive', 'export', 'exports', 'lustre', 'gpfs', 'beegfs', 'fsx', 'work', 'space',
  // Clusters' group and per-user parallel areas (/project/GROUP, /pscratch/USER): cluster-rules.ts reads their layout.
  'project', 'projects', 'proj', 'groups', 'labs', 'pscratch', 'gscratch'];

/** A storage root itself: /scratch, /data, /lustre... (a bare /app inside a container is not one). */
export const STORAGE_ROOT = new RegExp(`^/(${STORAGE_ROOTS.join('|')})$`);

/** The shared mount a path is on: a storage root, or a disk mounted at /mnt/NAME (single letters are Windows drives under WSL, judged apart). */
export const SHARED_MOUNT = new RegExp(`^/(?:${STORAGE_ROOTS.join('|')}|mnt/(?![a-z](?:/|$))[^/]+)(?=/|$)`);

/**
 * Removable media: /media/USER (every drive plugged in), /run/media/USER, and one drive there or at
 * /Volumes/NAME (macOS). Their contents are often the only copy (camera cards, backup disks).
 */
export const REMOVABLE_ROOT = /^\/(media\/[^/]+|run\/media\/[^/]+)(\/[^/]+)?$|^\/Volumes\/[^/]+$/;

export const HOME_DATA_DIRS = ['data', 'datasets', 'checkpoints', 'experiments', 'models', 'notebooks'];

/** Directories of the home whose loss is not a cache's: keys, configuration. */
export function isPreciousHomeDir(p0: string, env0: PathEnv): boolean {
  const { p, env } = windowsView(p0, env0);
  const h = env.home;
  return [
    '.ssh', '.gnupg', '.aws', '.config', '.kube', '.docker', '.password-store', '.local', '.local/share', '.mozilla', 'Library', 'Library/Application Support', 'Library/Keychains',
    // The user's own files and other work, beside this project.
    'Documents', 'Desktop', 'Downloads', 'Pictures', 'Music', 'Videos', 'Movies', 'Public', 'Dropbox', 'OneDrive', 'src', 'code',
    // Every local site at once: Laravel Valet's and macOS's ~/Sites, a shared host's ~/public_html.
    'Sites', 'public_html', 'projects', 'Projects', 'workspace', 'repos', 'git', 'dev', 'work',
    // Mobile and Apple developers' project folders, macOS preferences and iCloud Drive.
    'AndroidStudioProjects', 'StudioProjects', 'Developer', 'XcodeProjects', 'Library/Preferences', 'Library/Mobile Documents',
    // Data and models kept in the home, conda's environments (data-rules.ts), the agent's own settings and memory.
    ...HOME_DATA_DIRS, 'miniconda3', 'anaconda3', 'miniforge3', 'mambaforge', 'miniconda', 'anaconda', 'micromamba', '.conda', '.claude',
    // Board and SDK work trees that take hours to set up and hold local layers and patches (Yocto, Buildroot, crosstool-NG,
    // ESP-IDF, Zephyr, nRF Connect, the Pico SDK, vendor FPGA and MCU suites, the Android SDK).
    'yocto', 'poky', 'buildroot', 'x-tools', 'esp', 'zephyrproject', 'ncs', 'pico', 'Android', 'Android/Sdk', 'Xilinx', 'intelFPGA', 'intelFPGA_lite', 'ti', 'STM32Cube', 'STM32CubeIDE',
    // What a Mac or a desktop keeps only there: iCloud Drive, the Photos library, Messages and Mail, signed app archives,
    // the editor's own settings, App Store Connect keys, snap and flatpak applications' data.
    'Library/Mobile Documents', 'Library/Mobile Documents/com~apple~CloudDocs', 'Pictures/Photos Library.photoslibrary', 'Library/Photos', 'Library/Messages', 'Library/Mail',
    'Library/Developer/Xcode/Archives', 'Library/Application Support/Code/User', '.config/Code/User', 'Library/Group Containers', 'Library/Containers', '.appstoreconnect', '.appstoreconnect/private_keys',
    'snap', '.var', '.var/app',
    // Version-control workspaces and game-engine project folders kept in the home: Perforce's and Plastic SCM's default
    // workspace roots, Unreal's and Unity's and Godot's project folders, Maya's projects.
    'Perforce', 'P4', 'p4', 'p4ws', 'wkspaces', 'UnrealProjects', 'Unreal Projects', 'Documents/Unreal Projects', 'UnityProjects', 'Unity Projects', 'GodotProjects', 'maya/projects', 'svn',
    // Notes, papers and backups kept in the home (Org, Obsidian, Zotero), and synced folders.
    'org', 'notes', 'Notes', 'Obsidian', 'Zotero', 'backups', 'Backups', 'Sync', 'Nextcloud', 'Google Drive',
  ].some((d) => p === `${h}/${d}`);
}

/**
 * Places from which the system or the desktop starts programs by itself: systemd user units,
 * launchd agents and daemons, XDG autostart entries, environment.d. A file put there runs at
 * the next login or boot without anyone typing it (persistence).
 */
export function isAutostartPath(p0: string, env0: PathEnv): boolean {
  const { p, env } = windowsView(p0, env0);
  const h = env.home;
  const homeDirs = ['.config/systemd/user', '.local/share/systemd/user', 'Library/LaunchAgents', '.config/autostart', '.config/autostart-scripts', '.kde/Autostart', '.kde4/Autostart', '.config/plasma-workspace/env', '.config/plasma-workspace/shutdown', '.config/environment.d', '.config/upstart', '.config/openbox/autostart', '.config/lxsession'];
  if (homeDirs.some((d) => isUnder(p, `${h}/${d}`))) return true;
  if (p === `${h}/.pam_environment` || p === `${h}/.xsessionrc` || p === `${h}/.xsession`) return true;
  // Python's start-up hooks: usercustomize/sitecustomize modules and .pth files in a site directory run in every interpreter.
  if (/\/(usercustomize|sitecustomize)\.py$|\/(site|dist)-packages\/[^/]+\.pth$/.test(p)) return true;
  // Windows' Startup folder for all users (a profile's own is .config/autostart through windowsView).
  if (/^\/mnt\/[a-z]\/ProgramData\/Microsoft\/Windows\/Start Menu\/Programs\/Startup(\/|$)/i.test(p)) return true;
  return /^\/(Library\/(LaunchAgents|LaunchDaemons|StartupItems)|etc\/(systemd|xdg\/autostart|init\.d|rc\.local|cron\.|anacrontab|crontab|environment\.d|ld\.so\.preload)|usr\/lib\/systemd|lib\/systemd)(\/|$)/.test(p);
}

/** Directories on the usual search path of commands: a program put there is found by its bare name. */
export function isPathDir(p: string, env: PathEnv): boolean {
  const h = env.home;
  return (
    ['/usr/local/bin', '/usr/local/sbin', '/usr/bin', '/bin', '/usr/sbin', '/sbin', '/opt/homebrew/bin', '/opt/local/bin', '/snap/bin'].includes(p) ||
    ['.local/bin', 'bin', '.bin', '.cargo/bin', 'go/bin', '.npm-global/bin', '.yarn/bin', '.deno/bin', '.bun/bin', '.pyenv/shims', '.rbenv/shims', '.volta/bin', '.nix-profile/bin'].some((d) => p === `${h}/${d}`)
  );
}

/**
 * Commands every session relies on, whose name a file in a PATH directory would take over (a
 * `sudo`, `ssh` or `git` in ~/.local/bin runs instead of the real one, with what is typed into it).
 * Tools that are themselves installed into /usr/local/bin by their own instructions (kubectl,
 * helm, docker-compose, terraform...) are not in it.
 */
const CORE_COMMANDS = new Set([
  'sudo', 'su', 'doas', 'pkexec', 'login', 'passwd', 'ssh', 'scp', 'sftp', 'ssh-add', 'ssh-agent', 'ssh-keygen', 'gpg', 'gpg2', 'git', 'sh', 'bash', 'zsh', 'dash', 'fish', 'ksh',
  'ls', 'cat', 'cp', 'mv', 'rm', 'ln', 'mkdir', 'chmod', 'chown', 'cd', 'pwd', 'echo', 'printf', 'env', 'id', 'whoami', 'which', 'ps', 'top', 'kill', 'grep', 'sed', 'awk', 'find', 'xargs',
  'tar', 'gzip', 'curl', 'wget', 'openssl', 'python', 'python3', 'python2', 'pip', 'pip3', 'perl', 'ruby', 'node', 'npm', 'npx', 'yarn', 'pnpm', 'make', 'gcc', 'cc', 'clang', 'ld', 'java',
  'go', 'cargo', 'rustc', 'docker', 'systemctl', 'crontab', 'vi', 'vim', 'nano', 'less', 'more', 'man', 'head', 'tail', 'sort', 'date', 'uname', 'hostname', 'mount', 'umount', 'apt', 'apt-get', 'dpkg', 'brew', 'code',
]);

/** The name (`git`, `python3.12`) is one of those core commands. */
export function isCoreCommand(name: string): boolean {
  return CORE_COMMANDS.has(name) || CORE_COMMANDS.has(name.replace(/[\d.]+$/, ''));
}

/*
 * Windows paths, as WSL and Git Bash spell them, read as their POSIX kin. A drive (`C:\x`, `C:/x`,
 * Git Bash's `/c/x` and `//c/x`) is where WSL mounts it (`/mnt/c/x`); `\\wsl$\Distro\x` is the
 * distro's `/x`. A Windows user profile (`/mnt/c/Users/NAME`) is a home directory whose own names
 * stand for the POSIX home's: AppData/Roaming is ~/.config, AppData/Local ~/.local/share (its
 * caches ~/.cache), source/repos ~/repos, `OneDrive - Org` ~/OneDrive, PowerShell's profile
 * scripts ~/.bashrc, the Start Menu's Startup folder ~/.config/autostart.
 */

/** The Windows profile a path lies in (WSL's spelling): its secrets, start-up files and own files are judged as a home's. */
export const WIN_PROFILE = /^\/mnt\/[a-z]\/Users\/[^/]+/i;

/** The WSL spelling of a Windows path (`C:\Users\x`, `C:/x`, `/c/x`, `//c/x`, `\\wsl$\Ubuntu\x`), or null when it is not one. */
export function windowsDrivePath(p: string): string | null {
  // Cheap first: a drive letter's colon, a one-letter top directory, or a UNC start.
  if (p[1] !== ':' && !(p[0] === '/' && (p[2] === '/' || p.length === 2 || (p[1] === '/' && (p[3] === '/' || p.length === 3 || p[2] === 'w')))) && !p.startsWith('\\\\')) return null;
  const unc = /^(?:\\\\|\/\/)wsl(?:\$|\.localhost)[\\/][^\\/]+([\\/].*)?$/i.exec(p);
  if (unc) return (unc[1] ?? '/').replace(/\\/g, '/');
  const m = /^([A-Za-z]):([\\/].*)?$/.exec(p) ?? /^\/\/?([a-z])(\/.*)?$/.exec(p);
  return m ? `/mnt/${m[1].toLowerCase()}${(m[2] ?? '').replace(/\\/g, '/')}` : null;
}

/** A Windows profile's own names and the POSIX home's names they stand for (relative to the profile). */
let winKin: [RegExp, string][] | null = null;
/** Built on first use: only paths under /mnt/<d>/Users need them. */
const WIN_KIN = (): [RegExp, string][] => (winKin ??= [
  [/^AppData\/Roaming\/Microsoft\/Windows\/Start Menu\/Programs\/Startup(?=\/|$)/i, '.config/autostart'],
  [/^(?:OneDrive[^/]*\/)?Documents\/(?:Windows)?PowerShell\/[^/]*profile\.ps1$/i, '.bashrc'],
  [/^AppData\/Roaming\/GitHub CLI(?=\/|$)/i, '.config/gh'],
  [/^AppData\/Roaming(?=\/|$)/i, '.config'],
  // Docker Desktop's disks and the WSL distros' own (their ext4.vhdx): the containers' and the distros' data.
  [/^AppData\/Local\/Docker(\/wsl)?(?=\/|$)/i, '.local/share/containers'],
  [/^AppData\/Local\/Packages\/[^/]*(Canonical|Ubuntu|Debian|SUSE|Kali|Fedora|Alpine|Arch|Oracle|Linux|WSL)[^/]*(\/LocalState)?(?=\/|$)/i, '.local/share/containers'],
  [/^AppData\/Local\/(Temp|[^/]*cache[^/]*)(?=\/|$)/i, '.cache/$1'],
  [/^AppData\/Local(?:Low)?(?=\/|$)/i, '.local/share'],
  [/^AppData$/i, '.local'],
  [/^source\/repos(?=\/|$)/i, 'repos'],
  [/^source$/i, 'src'],
  [/^OneDrive[^/]*(?=\/|$)/i, 'OneDrive'],
]);

/** A path in a Windows profile seen as its POSIX kin, with that profile as the home; any other path as it is. */
export function windowsView(p: string, env: PathEnv): { p: string; env: PathEnv } {
  const m = p.startsWith('/mnt/') ? WIN_PROFILE.exec(p) : null;
  if (!m) return { p: sandboxView(p, env.home), env };
  const rel = p.slice(m[0].length + 1);
  const kin = WIN_KIN().find(([re]) => re.test(rel));
  return { p: kin ? `${m[0]}/${rel.replace(kin[0], kin[1])}` : p, env: { ...env, home: m[0] } };
}

/**
 * A snap or flatpak application keeps its own copy of the home's layout (~/snap/firefox/common/.mozilla,
 * ~/.var/app/org.mozilla.firefox/.mozilla, ~/.var/app/ID/config = ~/.config): read as the place it stands for.
 */
function sandboxView(p: string, h: string): string {
  if (!p.startsWith(`${h}/snap/`) && !p.startsWith(`${h}/.var/app/`)) return p;
  const snap = /^\/snap\/[^/]+\/(?:common|current|x?\d+)\/(.+)$/.exec(p.slice(h.length));
  if (snap) return `${h}/${snap[1]}`;
  const flat = /^\/\.var\/app\/[^/]+\/(.+)$/.exec(p.slice(h.length));
  return flat ? `${h}/${flat[1].replace(/^config(?=\/|$)/, '.config').replace(/^data(?=\/|$)/, '.local/share').replace(/^cache(?=\/|$)/, '.cache')}` : p;
}

/** A virtual machine's or WSL distro's disk (ext4.vhdx, .vdi, .vmdk, .qcow2): deleting it deletes the machine. */
export function isMachineDisk(p: string, env: PathEnv): boolean {
  return /\.(vhdx?|vdi|vmdk|qcow2)$/i.test(p) && !isUnder(p, env.project) && !/^\/(tmp|var\/tmp)\//.test(p);
}
