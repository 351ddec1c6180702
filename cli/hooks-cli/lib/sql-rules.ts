/**
 * Data stores destroyed through their own clients, whatever the client: destructive SQL carried by
 * any SQL client, warehouse CLI or SDK call (psql, snowsql, bq query, spark-sql, trino, beeline,
 * clickhouse-client, dbt run-operation, `cursor.execute(…)`, `spark.sql(…)`), warehouse tables and
 * datasets removed or overwritten by their CLIs (`bq rm`, `bq cp -f`), lake storage deleted (HDFS,
 * DBFS, a bucket lifecycle that expires everything), streams destroyed (Kafka and Redpanda topics
 * deleted, their records deleted or retention cut, consumer offsets moved), a scheduler's metadata
 * database reset, and a listing of a store fed to that store's delete.
 *
 * One judgement serves them all (`storeScope`): a target that names production is refused; one that
 * names itself as throwaway (dev, test, ci, tmp, scratch, sandbox, a local host) is left to the
 * warnings of service-rules.ts; any other is refused when the store is shared by nature (a
 * warehouse, a lake, a broker or database on another host), since nothing on the line says it is
 * disposable. Pure: argv and text in, findings out; command-rules.ts files them.
 */
import type { ServiceFinding } from './service-rules';

/** Names production: acme-prod, -c prod, warehouse.prod.internal, app_production, lkc-prod01. */
const PROD = /(^|[^a-z0-9])(prod|production|prd)\d*([^a-z0-9]|$)/i;
/** Names a throwaway or local target: -c dev, acme-dev:sandbox_jdoe, dbt_ci_pr_1, scratch.t, localhost. (mc's `local/` alias alone is not: backups live there too.) */
const THROWAWAY = /(^|[^a-z0-9])(dev|devel|development|test|tests|testing|ci|tmp|temp|scratch|sandbox|sbx|playground|e2e|localhost)([^a-z0-9]|$)|(^|[^\d.])127\.0\.0\.1|\[?::1\]?(:|$)/i;

export type StoreScope = 'prod' | 'throwaway' | 'unknown';

/** What the words naming a store say about it; production wins over any throwaway word. */
export function storeScope(words: string[]): StoreScope {
  if (words.some((w) => PROD.test(w))) return 'prod';
  return words.some((w) => THROWAWAY.test(w)) ? 'throwaway' : 'unknown';
}

/** Clients that carry SQL in their arguments or stdin. */
const SQL_CLIENT = /^(psql|mysql|mariadb|sqlite3|sqlcmd|cockroach|duckdb|clickhouse-client|clickhouse|cqlsh|snowsql|bq|pgcli|mycli|litecli|usql|spark-sql|trino|trino-cli|presto|presto-cli|beeline|hive|impala-shell|vsql|bteq|sqlplus|isql|ysqlsh|ycqlsh|db2|databricks|dbsqlcli|athenacli|redshift|dbt|ksql|influx|mongosh|mongo)$/;
/** Clients whose store is shared by nature: a warehouse or a cluster's metastore, never a file on this machine. */
const WAREHOUSE = /^(bq|snowsql|spark-sql|trino|trino-cli|presto|presto-cli|beeline|hive|impala-shell|vsql|bteq|databricks|dbsqlcli|athenacli|redshift|dbt|ksql)$/;
const LOCAL_FILE_DB = /^(sqlite3|duckdb|litecli|clickhouse)$/;
/** Options whose value is a host, a connection URL or a broker list. */
const HOST_OPT = /^(-h|--host|--server|-S|--bootstrap-server|--brokers|-b|--broker-list|--zookeeper|-u|--url|--uri|--jdbc-url|-a|--accountname)$/;
const LOCAL_HOST = /^(localhost|127\.0\.0\.1|::1|\[::1\]|0\.0\.0\.0|db|postgres|mysql|redis|kafka|broker|clickhouse)(:\d+)?$/i;

/** The hosts a command names: option values and the host part of connection URLs. */
function hostsOf(args: string[]): string[] {
  const out: string[] = [];
  args.forEach((a, k) => {
    const opt = HOST_OPT.test(args[k - 1] ?? '') && !a.startsWith('-') ? a : /^--(host|server|bootstrap-server|brokers)=(.+)$/.exec(a)?.[2];
    for (const v of [opt, ...(/^(jdbc:)?[a-z][\w+]*:\/\/([^@/]*@)?([^/:?,]+)/i.exec(a) ?? []).slice(3, 4)]) {
      if (v === undefined) continue;
      for (const h of v.split(',')) out.push(h.replace(/^(jdbc:)?[a-z][\w+]*:\/\/([^@/]*@)?/i, '').replace(/[/?].*$/, ''));
    }
  });
  // -u is mysql's user and -a snowsql's account: only a URL or a dotted host counts there.
  return out.filter((h) => h !== '' && !/^\$/.test(h));
}

const remoteHost = (args: string[]) => hostsOf(args).some((h) => !LOCAL_HOST.test(h) && /[.\d-]/.test(h) && !/^[\w]+$/.test(h));

/**
 * Destructive statements in SQL text: DROP of a table, schema, database, catalog or keyspace; TRUNCATE;
 * DELETE with no WHERE (or WHERE TRUE, 1=1); CREATE OR REPLACE of a database or schema; VACUUM … RETAIN
 * 0 HOURS (the history time travel needs). Returns the statement's first words and whether it removes a
 * whole store (a database, schema or catalog) rather than a table.
 */
export function destructiveSql(sql: string): { stmt: string; whole: boolean } | null {
  if (!/drop|truncate|delete|replace|vacuum/i.test(sql)) return null;
  for (const m of sql.matchAll(/\b(drop\s+(?:temporary\s+)?(table|schema|database|catalog|keyspace|namespace)\b|truncate\b(?!\s*\()|delete\s+from\b|create\s+or\s+replace\s+(database|schema)\b|vacuum\b)([^;]*)/gi)) {
    const head = m[1].toLowerCase();
    const rest = m[4];
    if (head.startsWith('delete') && /\bwhere\b/i.test(rest) && !/\bwhere\s+(true|1\s*=\s*1|'1'\s*=\s*'1')\s*(["'`]|$)/i.test(rest)) continue;
    if (head.startsWith('vacuum') && !/\bretain\s+0\s+hours?\b/i.test(rest)) continue;
    if (head.startsWith('vacuum') && /\bdry\s+run\b/i.test(rest)) continue;
    // TRUNCATE as a word in a sentence (a commit message quoted into a query): a name must follow.
    if (head === 'truncate' && !/^\s*(table\s+)?(only\s+)?[`"\w.{}-]/i.test(rest)) continue;
    const whole = m[2] !== undefined ? /^(schema|database|catalog|keyspace|namespace)$/i.test(m[2]) : m[3] !== undefined;
    return { stmt: `${m[1]}${rest}`.replace(/\s+/g, ' ').trim().slice(0, 60), whole };
  }
  return null;
}

/** Statement-carrying option values: long forms any tool may use (aws athena --query-string, gcloud --sql, dbt --args). */
const SQL_OPT = /^(--sql|--query-string|--statement|--execute|--query|--args|--command)$/;

/** The SQL a command carries: a client's arguments and stdin, or a statement option of any tool. */
function sqlText(name: string, args: string[], stdin: string | null): string | null {
  if (SQL_CLIENT.test(name) || /sql|hive|trino|presto/.test(name)) return [...args, stdin ?? ''].join('\n');
  const opt = args.filter((a, k) => SQL_OPT.test(args[k - 1] ?? '') || /^--(sql|query-string|statement)=/.test(a));
  return opt.length > 0 ? opt.join('\n') : null;
}

/** Kafka-family CLIs: the Apache scripts, Confluent's, Redpanda's rpk, kafkactl. */
const STREAM_CLI = /^(kafka-[\w-]+?(\.sh)?|rpk|confluent|kafkactl|kaf)$/;
/** Lake and warehouse storage CLIs whose recursive delete is for good. */
const LAKE_CLI = /^(hdfs|hadoop|databricks|dbfs)$/;

/** The tools storeFindings judges: a cheap gate before it. */
const STORE_TOOLS = /^(psql|mysql|mariadb|sqlite3|sqlcmd|cockroach|duckdb|clickhouse-client|clickhouse|cqlsh|snowsql|bq|pgcli|mycli|litecli|usql|spark-sql|trino|trino-cli|presto|presto-cli|beeline|hive|impala-shell|vsql|bteq|sqlplus|isql|ysqlsh|ycqlsh|db2|databricks|dbsqlcli|athenacli|redshift|dbt|ksql|influx|mongosh|mongo|hdfs|hadoop|dbfs|rpk|confluent|kafkactl|kaf|kafka-[\w.-]+|airflow|superset|aws|gcloud|gsutil|az)$/;

export interface StoreInvocation {
  argv: string[];
  /** VAR=value words set for it. */
  assigned: string[];
  /** Text it reads on stdin when known (a here-document, echo 'SQL' |). */
  stdin: string | null;
  viaXargs: boolean;
  /** The argv of the pipeline stages before it. */
  upstream: string[][];
}

/** Findings for one invocation (none when it is ordinary or left to service-rules.ts's warnings). */
export function storeFindings(inv: StoreInvocation): ServiceFinding[] {
  const [name, ...args] = inv.argv;
  const out: ServiceFinding[] = [];
  if (name === undefined || !(STORE_TOOLS.test(name) || /sql|hive|trino|presto|kafka/.test(name) || args.some((a) => SQL_OPT.test(a))) || args.some((a) => /^--(dry-?run|dryrun)(=true)?$/i.test(a))) return out;
  const words = [...inv.assigned, ...args];
  // A listing of the same store fed to its delete (bq ls | xargs bq rm, kafka-topics --list | xargs … --delete): everything it lists.
  const lister = inv.viaXargs ? inv.upstream.find((u) => (u[0] === name || (STREAM_CLI.test(u[0] ?? '') && STREAM_CLI.test(name)) || (/^(kcat|kafkacat)$/.test(u[0] ?? '') && STREAM_CLI.test(name))) && u.slice(1).some((a) => /^(ls|list|-ls|--list|-L)$/.test(a))) : undefined;
  const scope = storeScope([...words, ...(lister ?? []).slice(1), ...(inv.stdin !== null ? [inv.stdin] : [])]);
  const shared = WAREHOUSE.test(name) || remoteHost(args) || (STREAM_CLI.test(name) && hostsOf(args).some((h) => !LOCAL_HOST.test(h)));
  const say = (what: string) => out.push({ level: 'block', reason: `${name} ${args.slice(0, 4).join(' ')}: ${what}` });
  const refuse = (what: string, whole = false) => {
    if (scope === 'prod') say(`${what} in production, which no undo brings back`);
    else if (scope === 'unknown' && (shared || whole)) say(`${what} in a shared store that nothing on the line names as a test or scratch one`);
  };

  // Destructive SQL, in any client or statement option.
  const sql = sqlText(name, args, inv.stdin);
  const bad = sql !== null ? destructiveSql(sql) : null;
  // A file on this machine (sqlite3, duckdb) is the user's own unless it names production.
  if (bad && (!LOCAL_FILE_DB.test(name) || scope === 'prod' || remoteHost(args))) refuse(`runs \`${bad.stmt}\``, bad.whole);

  const verbs = args.filter((a, k) => (!a.startsWith('-') && !/^(-[a-zA-Z]|--[\w-]+)$/.test(args[k - 1] ?? '')) || /^(-rm|-rmr|-rmdir|-delete|-expunge)$/.test(a));
  const positional = args.filter((a) => !a.startsWith('-'));
  const recursive = args.some((a) => /^(-r|-R|-rmr|--recursive|-[a-zA-Z]*[rR][a-zA-Z]*)$/.test(a));
  // Warehouse objects: bq rm of a table or dataset; bq cp -f / load --replace over a production table.
  if (name === 'bq' && verbs[0] === 'rm') refuse(`deletes ${args.some((a) => /^(-d|--dataset|-r|--recursive)$/.test(a)) ? 'a dataset with its tables' : 'a table'}`, recursive);
  if (name === 'bq' && /^(cp|load|query)$/.test(verbs[0] ?? '') && args.some((a) => /^(-f|--force|--replace|--replace=true|--noappend_table)$/.test(a))) {
    const dst = verbs[0] === 'cp' ? positional[positional.length - 1] : verbs[0] === 'load' ? positional[1] : args.find((a, k) => args[k - 1] === '--destination_table') ?? args.find((a) => a.startsWith('--destination_table='));
    if (dst && PROD.test(dst)) say(`overwrites the production table ${dst}`);
  }
  // Lake storage: hdfs dfs -rm -r (for good with -skipTrash, or high in the tree), databricks fs rm -r, workspace delete --recursive.
  if (LAKE_CLI.test(name) && recursive && verbs.some((v) => /^(-rm|-rmr|rm|delete)$/.test(v))) {
    const paths = positional.filter((v) => v.startsWith('/') || /^(dbfs|hdfs|abfss?|s3a?|gs):/.test(v));
    const high = paths.length === 0 || paths.some((p) => p.replace(/^\w+:\/*/, '/').split('/').filter((s) => s !== '').length <= 2);
    // HDFS keeps a trash only when the cluster turns it on: -skipTrash, a tree high up, or Hive's table storage is gone for good.
    if (/^(hdfs|hadoop)$/.test(name) ? args.includes('-skipTrash') || high || paths.some((p) => /\/warehouse(\/|$)/.test(p)) : true) refuse(`deletes ${paths.join(' ') || 'what the listing prints'} with everything under it`, true);
  }
  // Streams: topics deleted, their records deleted or expired, a live group's offsets moved.
  if (STREAM_CLI.test(name)) {
    const joined = words.join(' ');
    const topicDelete = (/^kafka-topics/.test(name) && args.includes('--delete')) || (verbs.includes('topic') && verbs.includes('delete')) || (name === 'kafkactl' && verbs[0] === 'delete') || /^kafka-delete-records/.test(name);
    const expires = /\bretention\.(ms|bytes)=(\d+)/.exec(joined);
    const resets = args.includes('--reset-offsets') && args.includes('--execute');
    if (topicDelete) refuse('deletes topics and every message in them', args.some((a) => /[*]|^\.\*$|^-r$|^--regex$/.test(a)));
    else if (expires && (expires[1] === 'bytes' ? Number(expires[2]) < 1e6 : Number(expires[2]) < 3.6e6)) refuse(`sets ${expires[0]}: the broker deletes the topic's messages`);
    else if (resets) refuse('moves a consumer group\'s offsets: messages are skipped or processed twice');
  }
  // Whatever the same store's listing printed, each deleted (gcloud storage ls | xargs -I{} gcloud storage rm -r {}).
  if (lister && verbs.some((v) => /^(rm|rb|del|delete|remove|purge|drop)$/.test(v)) && out.length === 0) refuse(`deletes everything \`${lister.slice(0, 3).join(' ')}\` lists`, true);
  // A scheduler's (or any tool's) metadata database reset: airflow db reset, superset db downgrade.
  const dbVerb = verbs.findIndex((v) => v === 'db');
  if (/^(airflow|superset)$/.test(name) && (dbVerb >= 0 ? /^(reset|drop|clean|downgrade)$/.test(verbs[dbVerb + 1] ?? '') : verbs[0] === 'resetdb') && (scope === 'prod' || inv.assigned.some((a) => /^\w*SQL_ALCHEMY_CONN=/.test(a) && remoteHost([a.slice(a.indexOf('=') + 1)])))) say('resets the metadata database: every run, connection and variable it holds is gone');
  // A bucket lifecycle rule that expires every object (no prefix, a filter that matches all).
  if (name === 'aws' && args.includes('put-bucket-lifecycle-configuration') && /"Expiration"\s*:\s*\{\s*"Days"\s*:\s*\d+/.test(joinedArgs(args)) && /"Filter"\s*:\s*\{\s*\}|"Prefix"\s*:\s*""/.test(joinedArgs(args))) refuse('expires every object of the bucket', true);
  return out;
}

const joinedArgs = (args: string[]) => args.join(' ');

/**
 * Local files that SQL hands to a store elsewhere: read by the statement (`PUT file://F @stage`,
 * `read_text('F')`, `pg_read_file`, `LOAD DATA LOCAL INFILE`, `\copy … from 'F'`) when the client talks
 * to a warehouse or another host, or when the statement writes to a URL (`COPY … TO 's3://…'`).
 * command-rules.ts refuses those that are secrets.
 */
export function sqlSentFiles(inv: StoreInvocation): string[] {
  const [name, ...args] = inv.argv;
  if (name === undefined || !SQL_CLIENT.test(name)) return [];
  const sql = [...args, inv.stdin ?? ''].join('\n');
  if (!/file:|read_|load_file|lo_import|infile|\\copy|\bcopy\b|\bfile\s*\(/i.test(sql)) return [];
  const away = WAREHOUSE.test(name) || remoteHost(args) || /\bto\s+'(s3|gs|gcs|az|abfss?|https?|r2):\/\//i.test(sql) || /\bput\s+file:/i.test(sql);
  if (!away) return [];
  const files = [...sql.matchAll(/\bput\s+'?file:\/\/([^\s']+)|\b(?:read_\w+|pg_read_(?:binary_)?file|load_file|lo_import|file)\s*\(\s*'([^']+)'|\blocal\s+infile\s+'([^']+)'|\\copy\s+[\w."]+\s+from\s+'([^']+)'|\bcopy\s+[\w."]+\s+from\s+'([^']+)'/gi)];
  return files.map((m) => m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5]).filter((f) => f !== undefined && !/^[a-z0-9]+:\/\//i.test(f));
}

/**
 * SQL run by code through a driver or session (`cursor.execute("DROP …")`, `spark.sql(…)`, `conn.query(…)`)
 * and warehouse SDK deletes (`delete_dataset`, `delete_table`, `delete_topics`, `dbutils.fs.rm(…, True)`).
 * Returns what goes, or null.
 */
export function codeStoreWipe(code: string): string | null {
  if (!/drop|truncate|delete|replace|vacuum|\.rm\s*\(/i.test(code)) return null;
  const scope = storeScope(code.match(/['"][^'"\n]*['"]/g) ?? []);
  // A warehouse or a database on another host: a table dropped there is shared data; a local file (sqlite3, duckdb) is the user's own.
  const shared = /\b(snowflake|bigquery|spark|pyspark|trino|presto|databricks|redshift|clickhouse|hive|athena|pyodbc)\b/i.test(code) || /\bhost\s*=\s*['"](?!localhost|127\.|db['"]|postgres['"])[\w.-]+\.[\w.-]+['"]/.test(code);
  for (const m of code.matchAll(/\.(?:execute|executemany|exec|sql|query|run|raw|execute_string|executescript|exec_driver_sql)\s*\(\s*(?:text\s*\(\s*)?[rbuf]?(['"]{1,3})([\s\S]*?)\1/g)) {
    const bad = destructiveSql(m[2]);
    if (bad && (scope === 'prod' || (scope === 'unknown' && (shared || (bad.whole && !/\b(sqlite3|duckdb)\b/.test(code)))))) return `a data store through SQL (\`${bad.stmt}\`)`;
  }
  if (scope === 'throwaway') return null;
  if (/\.delete_(dataset|table)\s*\(/.test(code)) return 'a BigQuery dataset or table (delete_dataset/delete_table)';
  if (/\.delete_topics\s*\(/.test(code)) return 'Kafka topics with their messages (delete_topics)';
  if (/\bdbutils\.fs\.rm\s*\([^)]*,\s*(True|recurse\s*=\s*True)/.test(code)) return 'a DBFS tree (dbutils.fs.rm recursive)';
  return null;
}

/** Flags of the sync commands that take no value (so the word after them is an operand). */
const SYNC_FLAGS = /^(--delete|-d|-r|-R|-m|--recursive|--create-empty-src-dirs|--dryrun|--dry-run|--quiet|-q|--progress|-P|--exact-timestamps|--size-only|--checksum|-c|-v|-vv|--verbose|--remove|--overwrite|--delete-unmatched-destination-objects|--delete-destination(=true)?|--fast-list|--no-follow-symlinks|--follow-symlinks|-u|--update|--no-progress|--only-show-errors|--delete-excluded|--delete-before|--delete-after|--delete-during)$/;

/**
 * The local destination of a sync that deletes what its source lacks (aws s3 sync … --delete, gsutil
 * rsync -d, gcloud storage rsync --delete-unmatched-destination-objects, rclone sync, azcopy sync
 * --delete-destination, s5cmd sync --delete, mc mirror --remove): that directory loses everything the
 * source does not hold, as with rsync --delete. Null when the destination is remote or nothing is deleted.
 */
export function syncDeleteDestination(argv: string[]): string | null {
  const [name, ...args] = argv;
  const has = (re: RegExp) => args.some((a) => re.test(a));
  const verbAt = (v: string) => args.indexOf(v);
  let at = -1;
  if (name === 'aws' && args[0] === 's3' && has(/^--delete$/)) at = verbAt('sync');
  else if (name === 'gsutil' && has(/^-[a-zA-Z]*d[a-zA-Z]*$/)) at = verbAt('rsync');
  else if (name === 'gcloud' && has(/^--delete-unmatched-destination-objects$/)) at = verbAt('rsync');
  else if (name === 'rclone') at = verbAt('sync');
  else if ((name === 'azcopy' && has(/^--delete-destination(=true)?$/)) || (name === 's5cmd' && has(/^--delete$/))) at = verbAt('sync');
  else if (name === 'mc' && has(/^--remove$/)) at = verbAt('mirror');
  if (at < 0 || has(/^(--dry-?run|--dryrun|-n)$/)) return null;
  const ops = args.slice(at + 1).filter((a, k, all) => !a.startsWith('-') && (k === 0 || !all[k - 1].startsWith('-') || all[k - 1].includes('=') || SYNC_FLAGS.test(all[k - 1])));
  const dst = ops[1];
  // A remote destination (s3://b, gs://b, remote:path, https://acct.blob…): the bucket's side, judged by the store rules.
  return dst === undefined || /^[a-z][\w+.-]*:/i.test(dst) ? null : dst;
}
