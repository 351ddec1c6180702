/**
 * Web frameworks' own consoles and tasks (Laravel's artisan and Sail, WordPress's wp-cli, Rails and
 * rake, Capistrano, Drush, Heroku): their code consoles are the language's interpreter (`artisan
 * tinker --execute=CODE`, `wp eval CODE`, `rails runner CODE`, `rake -e CODE`, or the code on stdin),
 * their secret printers are secrets (`wp config get DB_PASSWORD`, `rails credentials:show`), and their
 * data-destroying tasks aimed at production (`wp --ssh=production db reset`, `cap production
 * invoke:rake TASK=db:reset`, `rails runner -e production 'User.delete_all'`) are refused. Pure: each
 * function reads the argv (and stdin text, VAR=value prefixes); command-rules.ts runs what they return.
 */
import { placesIn } from './code-places';

import { mayBeFramework } from './rule-gates';

export interface FrameworkCode {
  lang: 'php' | 'ruby';
  code: string;
  /** Runs on another host (wp --ssh=HOST, wp @alias). */
  remote: boolean;
  /** Runs against production (-e production, RAILS_ENV=production, wp @production...). */
  prod: boolean;
}

export interface FrameworkFinding {
  level: 'block' | 'warn';
  reason: string;
}

const PROD = /(^|[^a-z0-9])(prod|production|prd|live)([^a-z0-9]|$)/i;

/** bundle exec X, sail artisan X, heroku run X: the framework command itself, with where it runs. */
function core(argv: string[]): { a: string[]; remote: boolean; prod: boolean } {
  // ./vendor/bin/sail, vendor/bin/sail, ./wp-cli.phar: the tool by its name.
  let a = /\/(sail|wp|artisan)$/.test(argv[0] ?? '') ? [argv[0].split('/').pop()!, ...argv.slice(1)] : argv;
  let remote = false;
  let prod = false;
  if (a[0] === 'bundle' && a[1] === 'exec') a = a.slice(2);
  // ./vendor/bin/sail artisan …, sail php artisan …: Laravel's commands in the project's container.
  if (a[0] === 'sail' || a[0] === 'ddev' || a[0] === 'lando') a = a[1] === 'php' && a[2] === 'artisan' ? ['artisan', ...a.slice(3)] : a[1] === 'artisan' || a[1] === 'tinker' ? ['artisan', ...(a[1] === 'tinker' ? ['tinker'] : []), ...a.slice(2)] : a;
  if (a[0] === 'php' && a[1] === 'artisan') a = ['artisan', ...a.slice(2)];
  if (a[0] === 'heroku' && a[1] === 'run') {
    const app = a.find((x, k) => /^(-a|--app)$/.test(a[k - 1] ?? '')) ?? a.find((x) => x.startsWith('--app='))?.slice(6) ?? '';
    remote = true;
    prod = PROD.test(app);
    a = a.slice(2).filter((x, k, all) => !/^(-a|--app|-r|--remote|-s|--size|-e|--env)$/.test(x) && !/^(-a|--app|-r|--remote|-s|--size|-e|--env)$/.test(all[k - 1] ?? '') && !/^--(app|remote|size|env)=/.test(x) && x !== '--exit-code' && x !== '-x');
  }
  if (a[0] === 'bin/rails' || a[0] === 'bin/rake') a = [a[0].slice(4), ...a.slice(1)];
  return { a, remote, prod };
}

/** Where a wp-cli command runs: --ssh=HOST, @alias. */
function wpTarget(a: string[]): { remote: boolean; prod: boolean } {
  const ssh = a.find((x) => x.startsWith('--ssh='))?.slice(6) ?? a.find((x) => /^@\w/.test(x));
  return { remote: ssh !== undefined, prod: ssh !== undefined && PROD.test(ssh) };
}

/** The code a framework's console runs, in its language, or null. */
export function frameworkCode(argv: string[], assigned: string[], stdin: () => string | null): FrameworkCode | null {
  if (!mayBeFramework(argv)) return null;
  const { a, remote, prod } = core(argv);
  const envProd = assigned.some((x) => /^(RAILS_ENV|RACK_ENV|APP_ENV)=prod/i.test(x)) || prod;
  const opt = (names: RegExp) => {
    const k = a.findIndex((x) => names.test(x.split('=')[0]));
    if (k < 0) return undefined;
    return a[k].includes('=') ? a[k].slice(a[k].indexOf('=') + 1) : a[k + 1];
  };
  if (a[0] === 'artisan' && a[1] === 'tinker') {
    const code = opt(/^--execute$/) ?? stdin();
    return code ? { lang: 'php', code, remote, prod: envProd || a.some((x) => /^--env=prod/i.test(x)) } : null;
  }
  if (a[0] === 'wp') {
    const t = wpTarget(a);
    const verbs = a.slice(1).filter((x) => !x.startsWith('-') && !x.startsWith('@'));
    if (verbs[0] === 'eval') return verbs[1] !== undefined ? { lang: 'php', code: verbs[1], ...t } : null;
    if (verbs[0] === 'eval-file' || verbs[0] === 'shell') {
      // The file from stdin (-), a process substitution (<(…)) or a here-document: the callback finds it.
      const code = stdin();
      return code ? { lang: 'php', code, ...t } : null;
    }
    return null;
  }
  if (a[0] === 'rails' && (a[1] === 'runner' || a[1] === 'r' || a[1] === 'console' || a[1] === 'c')) {
    const rest = a.slice(2);
    const env = opt(/^(-e|--environment)$/);
    const code = rest.find((x, k) => !x.startsWith('-') && !/^(-e|--environment)$/.test(rest[k - 1] ?? '') && !/\.rb$/.test(x));
    const text = a[1] === 'console' || a[1] === 'c' || rest.includes('-') ? stdin() : code;
    return text ? { lang: 'ruby', code: text, remote, prod: envProd || PROD.test(env ?? '') } : null;
  }
  if (a[0] === 'rake') {
    const code = opt(/^(-e|--execute|-E|--execute-continue|-p|--execute-print)$/);
    return code ? { lang: 'ruby', code, remote, prod: envProd } : null;
  }
  if (a[0] === 'drush' && /^(php:eval|php-eval|ev|eval)$/.test(a.find((x) => !x.startsWith('-') && x !== 'drush') ?? '')) {
    const code = a.filter((x) => !x.startsWith('-'))[2];
    return code ? { lang: 'php', code, remote: a.some((x) => /^@/.test(x)), prod: a.some((x) => /^@.*prod/i.test(x)) } : null;
  }
  return null;
}

/** The framework's names for the project's directories, in code: Laravel's base_path(), WordPress's ABSPATH, Rails.root. */
export function frameworkPaths(lang: 'php' | 'ruby', code: string): string {
  // (The names themselves are code-places.ts's table, families php-app and ruby-app.)
  if (lang === 'php')
    return placesIn('php-app', code.replace(/^\s*<\?php\b/, ''))
      // Illuminate's and Symfony's filesystems, WordPress's: their tree deletes.
      .replace(/\(\s*new\s+\\?[\w\\]*Filesystem(?:\(\s*\))?\s*\)\s*->\s*(deleteDirectory|cleanDirectory|remove)\s*\(/g, 'File::deleteDirectory(')
      .replace(/\$wp_filesystem\s*->\s*(rmdir|delete)\s*\(/g, 'File::deleteDirectory(');
  return placesIn('ruby-app', code).replace(/\bPathname(?:\.new)?\(\s*([^()]*(?:\([^()]*\))?[^()]*)\)\s*\.rmtree\b/g, 'FileUtils.rm_rf($1)');
}

/** Code of an app's console deleting production data: User.delete_all, Blob.find_each(&:purge), Storage::disk('s3')->deleteDirectory(''). */
export function frameworkCodeFindings(fc: FrameworkCode): FrameworkFinding[] {
  const out: FrameworkFinding[] = [];
  if (fc.lang === 'php' && /Storage::(?:disk\([^)]*\)\s*->\s*)?(deleteDirectory|delete)\s*\(/.test(fc.code) && (/disk\(\s*['"](s3|gcs|azure|r2|spaces|do|minio|ftp|sftp)/.test(fc.code) || fc.prod || fc.remote)) {
    out.push({ level: 'block', reason: "the app's console deletes files on its cloud storage disk (S3 and the like), where no backup of the project reaches" });
  }
  if (fc.prod && /\.(delete_all|destroy_all|truncate|purge|purge_later)\b|&:(purge|destroy|delete)\b|\bDB::table\([^)]*\)\s*->\s*(delete|truncate)\(|::truncate\(|->forceDelete\(/.test(fc.code)) {
    out.push({ level: 'block', reason: "the app's console deletes rows or files of the production database in bulk" });
  }
  return out;
}

/** Destructive framework tasks: wp-cli's database and content wipes, Capistrano's and Heroku's rake tasks, on production. */
export function frameworkFindings(argv: string[], assigned: string[]): FrameworkFinding[] {
  const out: FrameworkFinding[] = [];
  if (!mayBeFramework(argv)) return out;
  const { a, prod: hostProd } = core(argv);
  const say = (what: string) => out.push({ level: 'block', reason: `${argv.slice(0, 5).join(' ')}: ${what}` });
  if (a[0] === 'wp') {
    const { remote, prod } = wpTarget(a);
    if (a.includes('--dry-run')) return out;
    const verbs = a.slice(1).filter((x) => !x.startsWith('-') && !x.startsWith('@'));
    const v = verbs.slice(0, 2).join(' ');
    const wipe = /^(db (reset|clean|drop)|site (empty|delete))$/.test(v) || (verbs[0] === 'db' && verbs[1] === 'query' && /\b(drop|truncate)\s+(table|database)\b|\bdelete\s+from\s+\w+\s*(;|$)/i.test(verbs[2] ?? ''));
    const bulk = /^(plugin|theme) (delete|uninstall)$/.test(v) && a.includes('--all');
    const rows = /^(post|user|comment|term|media|site|option) delete$/.test(v);
    const rewrite = verbs[0] === 'search-replace' && a.includes('--all-tables');
    if (wipe) {
      if (prod || remote) say('empties or drops the database or the content of a live site');
      else out.push({ level: 'warn', reason: `${argv.slice(0, 4).join(' ')}: empties or drops the site's database; make sure it is not a shared or live one` });
    } else if ((bulk || rows || rewrite) && (prod || remote)) say(bulk ? 'deletes every plugin or theme of a live site' : rewrite ? "rewrites every table of a live site's database" : 'deletes content or accounts of a live site');
    return out;
  }
  // cap production invoke:rake TASK=db:reset, cap production rails:rake:db:drop, heroku run rails db:schema:load -a shop-production.
  const capProd = a[0] === 'cap' && PROD.test(a[1] ?? '');
  if (capProd || hostProd || assigned.some((x) => /^(RAILS_ENV|RACK_ENV|APP_ENV)=prod/i.test(x))) {
    const task = a.find((x) => /(^|:|=)db:(drop|reset|schema:load|structure:load|purge|truncate_all|seed:replant|migrate:reset)\b|(^|=)migrate:(fresh|reset)\b|(^|=)db:wipe\b/.test(x));
    if (task) say(`runs ${task} on production: the live database is dropped or emptied`);
  }
  return out;
}

/** Framework commands that print the app's secrets: wp config get/list, rails credentials:show, heroku config. */
export function frameworkSecretPrinter(argv: string[]): string | null {
  if (!mayBeFramework(argv)) return null;
  const { a } = core(argv);
  const verbs = a.slice(1).filter((x) => !x.startsWith('-') && !x.startsWith('@'));
  if (a[0] === 'wp' && verbs[0] === 'config' && (verbs[1] === 'list' || (verbs[1] === 'get' && /PASSWORD|KEY|SALT|SECRET|TOKEN/i.test(verbs[2] ?? '')))) return "the site's wp-config.php secrets (database password, keys and salts)";
  if (a[0] === 'rails' && /^(credentials|secrets|encrypted):show$/.test(verbs[0] ?? '')) return "the app's decrypted credentials";
  if (argv[0] === 'heroku' && /^config(:get)?$/.test(argv[1] ?? '')) return "the app's config vars (its database URL and API keys)";
  if (a[0] === 'artisan' && (verbs[0] === 'env:decrypt' || (verbs[0] === 'config:show' && /^(app|database|services|mail)$/.test(verbs[1] ?? '')))) return "the app's configuration secrets";
  return null;
}

/** An app's secrets as code names them: Rails credentials, Laravel's app key and connections, WordPress's keys, salts and database password. */
const APP_SECRET = /\bRails\.application\.(credentials|secrets)\b|\bconfig\(\s*['"](app\.key|database|services|mail|filesystems\.disks)|\benv\(\s*['"]\w*(KEY|SECRET|PASSWORD|TOKEN)\w*['"]|(?<![\w$])(DB_PASSWORD|(AUTH|SECURE_AUTH|LOGGED_IN|NONCE)_(KEY|SALT))\b|\bENV\s*\[\s*['"]\w*(KEY|SECRET|PASSWORD|TOKEN)\w*['"]\s*\]/;

/** Interpreter code that holds a secret (a file literal such as ".env" or "config/master.key", or an app's secret), or null. */
export function codeSecret(code: string, isSecretName: (name: string) => boolean): string | null {
  const app = APP_SECRET.exec(code);
  if (app) return `the app's secret ${app[0]}`;
  for (const m of code.matchAll(/(["'])([^"'\n]{1,200})\1/g)) {
    const name = m[2].split('/').pop() ?? '';
    if (name !== '' && !/\s/.test(name) && isSecretName(name)) return m[2];
  }
  return null;
}

/**
 * The command a project's development container runs (Laravel Sail, DDEV, Lando, docker compose
 * exec/run): those tools mount the project into the container, at /var/www/html (Sail, DDEV), /app
 * (Lando and most compose files) and the like, so what the command does there it does to the project.
 */
export function devContainerCommand(argv: string[]): string | null {
  const [name0, ...args] = argv;
  const name = /\/sail$/.test(name0 ?? '') ? 'sail' : name0;
  const q = (xs: string[]) => xs.map((x) => (/^[\w@%+=:,./~-]+$/.test(x) ? x : `'${x.replace(/'/g, `'\\''`)}'`)).join(' ');
  const dashC = (xs: string[]) => xs[xs.findIndex((x) => x === '-c' || x === '--command') + 1];
  if (name === 'sail') {
    if (/^(shell|bash|root-shell|root-bash)$/.test(args[0] ?? '')) return args.includes('-c') ? dashC(args) ?? null : null;
    if (args[0] === 'exec') return args.length > 2 ? q(args.slice(2)) : null;
    return null;
  }
  if (name === 'ddev') {
    if (args[0] !== 'exec') return null;
    const rest = args.slice(1).filter((x, k, all) => !/^(-s|--service|-d|--dir)$/.test(x) && !/^(-s|--service|-d|--dir)$/.test(all[k - 1] ?? '') && !/^--(service|dir)=/.test(x) && x !== '--raw');
    return rest.length === 1 ? rest[0] : rest.length > 1 ? q(rest) : null;
  }
  if (name === 'lando') {
    if (args[0] === 'ssh' && (args.includes('-c') || args.includes('--command'))) return dashC(args) ?? null;
    if (args[0] === 'exec' && args.includes('--')) return q(args.slice(args.indexOf('--') + 1));
    return null;
  }
  const compose = (name === 'docker' || name === 'podman') && args[0] === 'compose' ? args.slice(1) : /^(docker|podman)-compose$/.test(name ?? '') ? args : null;
  if (!compose) return null;
  let k = 0;
  while (k < compose.length && compose[k].startsWith('-')) k += /^(-f|--file|-p|--project-name|--env-file|--profile)$/.test(compose[k]) ? 2 : 1;
  if (!/^(exec|run)$/.test(compose[k] ?? '')) return null;
  // run -v HOST:PATH names its own mounts: the container rules map those (command-rules.ts containerRun).
  if (compose[k] === 'run' && compose.some((x) => /^(-v|--volume)(=|$)/.test(x))) return null;
  k++;
  while (k < compose.length && compose[k].startsWith('-')) k += /^(-u|--user|-w|--workdir|-e|--env|--index|--entrypoint|-v|--volume|-p|--publish|--name|-l|--label)$/.test(compose[k]) ? 2 : 1;
  return k + 1 < compose.length ? q(compose.slice(k + 1)) : null;
}

/** Where development containers mount the project: these paths, in what such a container runs, are the project's. */
export function projectMounts(script: string, project: string): string {
  return script.replace(/(^|[\s'"=:@;&(])(\/var\/www\/html|\/var\/www|\/app|\/code|\/workspace|\/srv\/app)(?=\/|\s|$|['";&|)*{])/g, `$1${project}`);
}

/**
 * Remote trees emptied by deploy tools: rsync --delete from an empty or temporary directory, or onto
 * a remote home (`user@host:` or `:~/`); lftp's `rm -r`, `glob rm -r`, and `mirror -R --delete` of an
 * empty directory. The site on the other side is gone, and nothing of the project's backs it up.
 */
export function remoteWipeFindings(argv: string[]): FrameworkFinding[] {
  const [name, ...args] = argv;
  const out: FrameworkFinding[] = [];
  if (name === 'rsync' && args.some((a) => /^--delete/.test(a))) {
    const ops = args.filter((a, k) => !a.startsWith('-') && !/^(-e|--rsh|--exclude|--include|--filter|-f)$/.test(args[k - 1] ?? ''));
    const dst = ops[ops.length - 1] ?? '';
    const remote = /^(?:[\w.-]+@)?[\w.-]+:(?!\/\/)(.*)$/.exec(dst);
    const src = ops.length >= 2 ? ops[ops.length - 2] : '';
    if (remote && (/^(~\/?|\/?)$/.test(remote[1]) || /^\/tmp\/tmp\.|^\/tmp\/(empty|e)\/?$/.test(src))) out.push({ level: 'block', reason: `rsync --delete onto ${dst}: ${remote[1] === '' || remote[1].startsWith('~') ? 'the remote home directory' : 'a remote tree'} is emptied of everything the source does not hold` });
  }
  if (/^lftp$/.test(name ?? '')) {
    const script = args.filter((_, k) => /^(-e|-c)$/.test(args[k - 1] ?? '')).join(';');
    if (/(^|;)\s*(glob\s+)?(rm\s+-r\w*|rmdir|mrm)\b|mirror\s+(-\w+\s+)*-R\b[^;]*--delete[^;]*(\/tmp\/|\$\(mktemp)|mirror\s+[^;]*--delete[^;]*-R\b[^;]*(\/tmp\/|\$\(mktemp)/.test(script)) out.push({ level: 'block', reason: 'lftp deletes a remote tree (rm -r, or a mirror with --delete of an empty directory): the site on the server is gone' });
  }
  return out;
}
