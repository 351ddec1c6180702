/**
 * Damage done through a service's own client rather than the filesystem: data stores wiped
 * (SQL, Mongo, etcd, object stores, cluster volumes), packages unpublished, branches deleted and
 * repositories or buckets made public through hosting APIs, keys and logs destroyed. Pure: each
 * rule reads the argv (and the VAR=value prefixes) and returns findings; command-rules.ts files them.
 *
 * Whole-store wipes are refused anywhere. Table-level wipes (DROP TABLE, TRUNCATE, DELETE without
 * WHERE, dropping collections, uninstalling releases, deleting volumes) are refused when the command
 * names production (a host, database, namespace, bucket or file called prod/production), and only
 * warned about elsewhere: a dev or test database is reset every day.
 */
export interface ServiceFinding {
  level: 'block' | 'warn';
  reason: string;
}

/** The command names production: prod-db.acme.internal, app_production, -n production, acme-prod-data, production.sqlite3. */
const PROD = /(^|[^a-z0-9])(prod|production|prd)([^a-z0-9]|$)/i;
const SQL_CLIENTS = /^(psql|mysql|mariadb|sqlite3|sqlcmd|cockroach|duckdb|clickhouse-client|clickhouse|cqlsh|snowsql|bq|pgcli|mycli|litecli|usql)$/;
/** SQL that empties or removes a table: DROP TABLE/SCHEMA/DATABASE, TRUNCATE, DELETE FROM t with no WHERE. */
const WIPE_SQL = /\bdrop\s+(table|schema|database|keyspace)\b|\btruncate\b|\bdelete\s+from\s+[\w."`]+\s*(;|$)/i;
const MONGO_WIPE = /\.drop\s*\(|\bdropDatabase\s*\(|\.(deleteMany|remove)\s*\(\s*\{\s*\}\s*\)/;

/** A branch a team protects (the default branch, release/hotfix families). */
const PROTECTED = /^(refs\/heads\/)?(main|master|trunk|develop|production|prod|release|stable|live|gh-pages|(release|releases|hotfix|production|prod|stable|main|master|support|maintenance)\/.+)$/;

export function serviceFindings(argv: string[], assigned: string[]): ServiceFinding[] {
  const [name, ...args] = argv;
  const out: ServiceFinding[] = [];
  const all = [...assigned, ...args].join(' ');
  const prod = PROD.test(all);
  const say = (level: 'block' | 'warn', what: string) => out.push({ level, reason: `${name} ${args.slice(0, 4).join(' ')}: ${what}` });
  const wipe = (what: string) => say(prod ? 'block' : 'warn', prod ? `${what} of a production data store, which no undo brings back` : `${what}; make sure this is not a shared or production database`);
  const verbs = args.filter((a) => !a.startsWith('-'));
  const method = args.find((a, k) => /^(-X|--request|--method)$/.test(args[k - 1] ?? '')) ?? args.find((a) => /^(-X|--request=|--method=)[A-Z]+$/i.test(a))?.replace(/^(-X|--request=|--method=)/i, '');
  if (SQL_CLIENTS.test(name ?? '') && WIPE_SQL.test(all)) wipe('drops or empties tables');
  else if (/^(mongo|mongosh)$/.test(name ?? '') && MONGO_WIPE.test(all)) wipe('drops collections or deletes every document');
  else if (name === 'etcdctl' && verbs[0] === 'del' && (args.includes('--from-key') || args.includes('--prefix')) && /^(''|""|\/?)$/.test(verbs[1] ?? '')) say('block', 'deletes every key of the etcd cluster (for Kubernetes, the whole cluster state)');
  else if (name === 'helm' && /^(uninstall|delete|del|un)$/.test(verbs[0] ?? '')) wipe('removes a release with its resources');
  else if (name === 'kubectl' && verbs[0] === 'delete' && /^(pvc|persistentvolumeclaims?|pv|persistentvolumes?|statefulsets?|sts|deployments?|deploy)$/.test(verbs[1] ?? '')) wipe('deletes volumes or workloads');
  else if (name === 'aws' && verbs[0] === 's3api' && /^(delete-objects|delete-bucket)$/.test(verbs[1] ?? '')) wipe('deletes objects and their versions');
  else if (/^(npm|pnpm|yarn)$/.test(name ?? '') && verbs[0] === 'unpublish') {
    // Without a version (or with --force) the whole package goes, and its name and versions cannot be published again.
    const pkg = verbs[1] ?? '';
    if (args.includes('--force') || !/.@[^@/]+$/.test(pkg)) say('block', 'unpublishes the package from the registry: every project that depends on it breaks, and those versions can never be published again');
    else say('warn', 'unpublishes one version from the registry');
  } else if (name === 'security' && /^delete-(keychain|identity|certificate)$/.test(verbs[0] ?? '')) say('block', 'deletes a macOS keychain or identity with the passwords and keys in it');
  else if (/^gpg2?$/.test(name ?? '') && args.some((a) => /^--delete-(secret-keys|secret-and-public-keys?|keys?)$/.test(a)) && args.some((a) => a === '--yes' || a === '--batch')) say('block', 'deletes keys from the keyring without asking: a secret key is gone for good');
  else if (name === 'journalctl' && args.some((a, k) => vacuumsAll(a, args[k + 1]))) say('block', 'deletes the system journal (every log kept so far)');
  // The hosting service's REST API: a protected branch deleted, a repository or bucket made public.
  if (/^(curl|http|https|xh|wget|gh|glab)$/.test(name ?? '')) {
    const apiMethod = method ?? (/^(http|https|xh)$/.test(name ?? '') ? args.find((a) => /^[A-Z]+$/.test(a)) : undefined);
    if (apiMethod && /^delete$/i.test(apiMethod)) {
      for (const a of args) {
        const m = /\/git\/refs\/heads\/([^?\s]+)|\/repository\/branches\/([^/?\s]+)|\/branches\/([^/?\s]+)$/.exec(a);
        const branch = m ? decodeURIComponent(m[1] ?? m[2] ?? m[3]) : null;
        if (branch && PROTECTED.test(branch) && name !== 'gh') say('block', `deletes the protected branch ${branch} on the hosting service through its API`);
      }
    }
    if (apiMethod && /^(patch|put|post)$/i.test(apiMethod) && args.some((a) => /^(private=false|visibility=public)$/.test(a) || /"private"\s*:\s*false|"visibility"\s*:\s*"public"/.test(a))) say('block', 'makes the repository public: its code and history, secrets committed in it included, go to everyone');
  }
  // Buckets and objects opened to everyone (allUsers, public-read ACLs, public blob access).
  if (/^(gsutil|gcloud|aws|az|s3cmd|mc)$/.test(name ?? '') && (/\ballUsers\b|\ballAuthenticatedUsers\b|AllUsers:|public-read(-write)?\b|--public-access\s+(blob|container)|\bsetpolicy\s+public\b|anonymous\s+set\s+(public|download)/i.test(all))) {
    say('block', 'opens a bucket or its objects to everyone on the internet');
  }
  return out;
}

/** journalctl --vacuum-time under a day, --vacuum-size under a megabyte, --vacuum-files=1: nothing is left. */
function vacuumsAll(a: string, next: string | undefined): boolean {
  const m = /^--vacuum-(time|size|files)(?:=(.*))?$/.exec(a);
  if (!m) return false;
  const v = m[2] ?? next ?? '';
  if (m[1] === 'time') return /^\d+\s*(s|sec|seconds?|m|min|minutes?|h|hours?|us|ms)?$/i.test(v) && !/^\d+\s*(h|hours?)$/i.test(v) ? true : /^\d+\s*(h|hours?)$/i.test(v) && parseInt(v, 10) < 24;
  if (m[1] === 'size') return /^\d+\s*(K|B)?$/i.test(v);
  return /^[01]$/.test(v);
}
