/**
 * Damage done through a service's own client rather than the filesystem: data stores wiped
 * (SQL, Mongo, etcd, object stores, cluster volumes and releases), packages unpublished, repositories
 * and buckets made public. (Branch deletes through hosting APIs, keychains, GPG keys and the journal are
 * in command-rules.ts checkCloudDestroy.) Pure: each
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
const WIPE_SQL = /\bdrop\s+(table|schema|database|keyspace)\b|\btruncate\s+(table\s+)?(only\s+)?[\w."`]+|\bdelete\s+from\s+[\w."`]+\s*(;|$)/i;
const MONGO_WIPE = /\.drop\s*\(|\bdropDatabase\s*\(|\.(deleteMany|remove)\s*\(\s*\{\s*\}\s*\)/;

/** The clients the rules below know: any other command is left at once (this runs for every command). */
const CLIENTS = /^(psql|mysql|mariadb|sqlite3|sqlcmd|cockroach|duckdb|clickhouse-client|clickhouse|cqlsh|snowsql|bq|pgcli|mycli|litecli|usql|mongo|mongosh|redis-cli|vault|etcdctl|helm|kubectl|aws|npm|pnpm|yarn|curl|http|https|xh|wget|glab|gh|wsl|wsl\.exe|tmutil|gsutil|gcloud|az|mc)$/i;

export function serviceFindings(argv: string[], assigned: string[]): ServiceFinding[] {
  const [name, ...args] = argv;
  const out: ServiceFinding[] = [];
  if (!CLIENTS.test(name ?? '')) return out;
  // --dry-run, --dryrun: the client only shows what it would do (kubectl --dry-run=none is the real thing).
  if (args.some((a) => /^--(dry-?run(=(client|server|true))?)$/i.test(a))) return out;
  const all = [...assigned, ...args].join(' ');
  // A photo, book or reference manager's catalogue (darktable's library.db, digiKam's digikam4.db, Lightroom's .lrcat, Calibre's
  // metadata.db, Zotero's zotero.sqlite, Capture One's, Apple Photos'): the edits, ratings and albums live only there.
  const prod = PROD.test(all) || (/^(sqlite3|litecli|duckdb)$/.test(name ?? '') && args.some((a) => /(\.lrcat|\/darktable\/(library|data)\.db|(^|\/)digikam4\.db|[Cc]alibre[^/]*\/metadata\.db|(^|\/)zotero\.sqlite|\.cocatalogdb|\/Photos\.sqlite)$/.test(a)));
  const say = (level: 'block' | 'warn', what: string) => out.push({ level, reason: `${name} ${args.slice(0, 4).join(' ')}: ${what}` });
  const wipe = (what: string) => say(prod ? 'block' : 'warn', prod ? `${what} of a production data store, which no undo brings back` : `${what}; make sure this is not a shared or production database`);
  // The words that are not options nor option values (kubectl -n prod delete …, helm --kube-context x uninstall …).
  const verbs = args.filter((a, k) => !a.startsWith('-') && !/^(-n|--namespace|--context|--kube-context|--kubeconfig|-l|--selector|--cluster|--user|-o|--output|--endpoints|--profile|--region)$/.test(args[k - 1] ?? ''));
  const method = args.find((a, k) => /^(-X|--request|--method)$/.test(args[k - 1] ?? '')) ?? args.find((a) => /^(-X|--request=|--method=)[A-Z]+$/i.test(a))?.replace(/^(-X|--request=|--method=)/i, '');
  if (SQL_CLIENTS.test(name ?? '') && WIPE_SQL.test(all)) wipe('drops or empties tables');
  else if (/^(mongo|mongosh)$/.test(name ?? '') && MONGO_WIPE.test(all)) wipe('drops collections or deletes every document');
  // FLUSHDB on another host (a shared cache or store) is a whole store gone; on this machine, a dev reset.
  else if (name === 'redis-cli' && args.some((a) => /^flushdb$/i.test(a))) (args.some((a, k) => /^(-h|--host|-u)$/.test(args[k - 1] ?? '') && !/^(localhost|127\.0\.0\.1|::1|redis:\/\/(localhost|127\.0\.0\.1))/.test(a)) ? say('block', 'deletes every key of the database on another host') : wipe('deletes every key of the database'));
  // DELETE of a whole Elasticsearch/OpenSearch index (or all of them): its documents are gone.
  else if (/^(curl|http|https|xh)$/.test(name ?? '') && /^delete$/i.test(method ?? args.find((a) => /^[A-Z]+$/.test(a)) ?? '') && args.some((a) => /^(https?:\/\/)?[^/\s]+:(9200|9243)\/([^/?\s_][^/?\s]*|_all|\*)\/?(\?.*)?$/.test(a))) say('block', 'deletes a search index with every document in it');
  // vault secrets disable PATH drops the engine with every secret in it; kv metadata delete / kv destroy erase every version.
  else if (name === 'vault' && verbs[0] === 'secrets' && /^(disable|unmount)$/.test(verbs[1] ?? '')) say('block', 'disables a secrets engine: every secret stored under it is deleted');
  else if (name === 'vault' && verbs[0] === 'kv' && /^(destroy|metadata)$/.test(verbs[1] ?? '') && (verbs[1] === 'destroy' || verbs[2] === 'delete')) wipe('erases secrets with all their versions');
  else if (name === 'etcdctl' && verbs[0] === 'del' && (args.includes('--from-key') || args.includes('--prefix')) && /^(''|""|\/?)$/.test(verbs[1] ?? '')) say('block', 'deletes every key of the etcd cluster (for Kubernetes, the whole cluster state)');
  else if (name === 'helm' && /^(uninstall|delete|del|un)$/.test(verbs[0] ?? '')) wipe('removes a release with its resources');
  else if (name === 'kubectl' && verbs[0] === 'delete' && /^(pvc|persistentvolumeclaims?|pv|persistentvolumes?|statefulsets?|sts)$/.test(verbs[1] ?? '')) wipe('deletes volumes or the stateful sets that own them');
  else if (name === 'aws' && verbs[0] === 's3api' && /^(delete-objects|delete-bucket)$/.test(verbs[1] ?? '')) wipe('deletes objects and their versions');
  else if (/^(npm|pnpm|yarn)$/.test(name ?? '') && verbs[0] === 'unpublish') {
    // Without a version (or with --force) the whole package goes, and its name and versions cannot be published again.
    const pkg = verbs[1] ?? '';
    if (args.includes('--force') || !/.@[^@/]+$/.test(pkg)) say('block', 'unpublishes the package from the registry: every project that depends on it breaks, and those versions can never be published again');
    else say('warn', 'unpublishes one version from the registry');
  }
  // A repository made public through the hosting API (curl -X PATCH … '{"private":false}', gh/glab api -F private=false).
  const apiMethod = method ?? (/^(http|https|xh)$/.test(name ?? '') ? args.find((a) => /^[A-Z]+$/.test(a)) : undefined);
  if (/^(curl|http|https|xh|wget|glab)$/.test(name ?? '') && /^(patch|put|post)$/i.test(apiMethod ?? '') && args.some((a) => /^(private=false|visibility=public)$|"private"\s*:\s*false|"visibility"\s*:\s*"public"/.test(a))) say('block', 'makes the repository public: its code and history, secrets committed in it included, go to everyone');
  // wsl --unregister DISTRO deletes the distribution's whole filesystem; tmutil delete removes Time Machine backups.
  if (/^wsl(\.exe)?$/i.test(name ?? '') && args.some((a) => /^(--unregister|-unregister)$/i.test(a))) say('block', 'deletes the WSL distribution with every file in it');
  if (name === 'tmutil' && /^(delete|deleteinprogress)$/.test(verbs[0] ?? '')) say('block', 'deletes Time Machine backups: the copies that would bring lost files back');
  // gh repo create NAME --public --source=. --push: the project published to everyone (open-sourcing is a choice: said, not refused).
  if (/^(gh|glab)$/.test(name ?? '') && verbs[0] === 'repo' && verbs[1] === 'create' && args.some((a) => /^--public$|^--visibility[= ]public$/.test(a)) && args.some((a) => /^(--push|--source(=.*)?|-s)$/.test(a))) say('warn', 'publishes the project\'s code and history in a public repository: secrets committed in it included, for everyone');
  // A bucket opened to everyone (an object uploaded with --acl public-read is ordinary publishing).
  if ((/^(gsutil|gcloud)$/.test(name ?? '') && /\b(allUsers|allAuthenticatedUsers|AllUsers)\b/.test(all) && /\b(iam|acl|defacl|add-iam-policy-binding)\b/.test(all)) || (name === 'aws' && /\bput-bucket-(acl|policy)\b/.test(all) && /public-read|"Principal"\s*:\s*"\*"/.test(all)) || (name === 'az' && /--public-access\s+(blob|container)\b/.test(all)) || (name === 'mc' && /\banonymous\s+set\s+(public|download)\b/.test(all))) {
    say('block', 'opens a bucket to everyone on the internet');
  }
  return out;
}
