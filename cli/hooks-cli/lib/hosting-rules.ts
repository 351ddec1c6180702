/**
 * Hosting rules: what a web developer destroys through the deploy platforms (Vercel, Netlify, Firebase,
 * Supabase, Cloudflare wrangler, Neon, Turso, Upstash, Render, Railway, Fly) that is neither the
 * project's nor a preview. Three principles:
 *
 * - A durable resource of a platform (a project, site, database, namespace, bucket, storage tree)
 *   deleted, or a production environment variable removed, whether or not the tool would ask: the
 *   assistant's shell has no terminal to answer a prompt with, and the prompt is not a backup.
 *   Previews (a deployment URL, a preview channel, pr-N) and local emulators (--local, demo-*) are not.
 * - Data statements run against the platform's remote database (`wrangler d1 execute --remote`), and
 *   an ORM or SQL client aimed at production through a dotenv wrapper, a PROD_* variable or a value
 *   read from .env.production, told to reset, push with data loss, drop, truncate or delete.
 * - A platform's REST API told to delete a durable resource (`curl -X DELETE https://api.vercel.com/…
 *   /projects/x`) or to flush a store (`…/flushdb`, `…/flushall`).
 *
 * Pure functions over argv; command-rules.ts calls `platformFindings` for the commands isHostingTool
 * names.
 */

/** Commands platformFindings judges: a cheap gate before it (a literal word list, which the build makes a Set lookup). */
export const isHostingTool = (name: string): boolean => /^(dotenvx|env-cmd|infisical|doppler|knex|sequelize|typeorm|mikro-orm|npx|pnpx|bunx|bun|vercel|netlify|netlify-cli|firebase|firebase-tools|supabase|wrangler|neonctl|neon|turso|railway|render|fly|flyctl|upstash|prisma|drizzle-kit|dotenv|dotenv-cli|psql|mysql|curl|http|https|xh|npm|pnpm|yarn)$/.test(name);

/** Nouns of durable things on the platforms: their loss is the site's or its data's. */
const DURABLE = /^(projects?|sites?|sites:delete|databases?|db|d1|namespaces?|namespace|buckets?|storage|apps?|services?|instances?|clusters?|kv|r2|pages|domains?|functions?)$/;
const VERBS = /^(delete|destroy|remove|rm|purge|drop|unset)$/;

/** A target that is a preview or a scratch copy: a deployment URL, a preview channel or branch, a test or local name. */
const EPHEMERAL_TARGET = /\.vercel\.app$|--[\w-]+\.netlify\.app$|(^|[^a-z0-9])(pr-?\d+|preview|dev|test|tmp|temp|scratch|sandbox|demo|local|staging-tmp)([^a-z0-9]|$)/i;

/** The line aims at production: a production env file, a PROD_* variable, a production context or environment. */
const PROD_HINT = /\.env\.prod(uction)?\b|\$\{?PROD(UCTION)?_[A-Z_]*|(^|[^a-z0-9])(prod|production|prd)([^a-z0-9]|$)/i;

/** Database operations that lose data: resets, pushes that accept data loss, drops, truncations, deletes without WHERE, flushes. */
const LOSES_DATA = /\bmigrate\s+reset\b|\b(db|schema):(drop|reset|wipe)\b|\bmigrate:(fresh|reset)\b|\bmigrate:rollback\b[^|;&]*--all\b|\bdb\s+push\b[^|;&]*--(force-reset|accept-data-loss)\b|\bdb\s+reset\b|\bdrizzle-kit\s+drop\b|\bdrop\s+(table|schema|database)\b|\btruncate\s+(table\s+)?[\w."`]+|\bdelete\s+from\s+[\w."`]+\s*(;|$|"|')|\bflush(all|db)\b/i;

export interface HostingInvocation {
  argv: string[];
  /** The VAR=value prefixes of the command (DATABASE_URL="$PROD_DATABASE_URL" npx prisma …). */
  assigned: string[];
  /** Command substitutions in its words ($(grep ^DATABASE_URL= .env.production …)). */
  subs: string[];
  /** Text fed on stdin (a here-string or here-document), or null. */
  stdin: string | null;
  /** The argv of the pipeline stages before it, when xargs runs it on what they print. */
  fedBy: string[][];
}

/** The platform CLI's name for a package runner's argv: npx netlify-cli … is netlify. */
function toolOf(name: string): string {
  return name.replace(/-cli$|-tools$/, '').replace(/^flyctl$/, 'fly').replace(/^neon$/, 'neonctl');
}

/**
 * Invocations that destroy a platform's durable resources or production data. Returns the reasons to
 * refuse (none when it is ordinary).
 */
export function platformFindings(inv: HostingInvocation): string[] {
  // npx wrangler …, pnpm dlx supabase …, yarn dlx prisma …: the package runner runs the platform's CLI.
  const runner = /^(npx|pnpx|bunx)$/.test(inv.argv[0] ?? '') ? 1 : /^(pnpm|yarn|bun)$/.test(inv.argv[0] ?? '') && /^(dlx|exec|x)$/.test(inv.argv[1] ?? '') ? 2 : 0;
  let k0 = runner;
  while (runner > 0 && k0 < inv.argv.length && /^-/.test(inv.argv[k0])) k0 += /^(-p|--package)$/.test(inv.argv[k0]) ? 2 : 1;
  const [name0, ...args] = runner > 0 ? inv.argv.slice(k0) : inv.argv;
  const name = toolOf(name0 ?? '');
  const out: string[] = [];
  const all = [...inv.assigned, ...args, ...inv.subs].join(' ');
  const words = args.filter((a) => !a.startsWith('-'));
  const local = args.some((a, k) => (/^--(local|preview)$/.test(a) && args[k + 1] !== 'false') || /^--remote=false$/.test(a)) || args.some((a, k) => /^(--project|-P)$/.test(args[k - 1] ?? '') && /^demo-/.test(a));
  // Durable resources deleted through the CLI (noun… verb TARGET, or noun:verb): prompt or not.
  if (/^(vercel|netlify|firebase|supabase|wrangler|neonctl|turso|railway|render|fly|upstash)$/.test(name) && !local && !args.includes('--dry-run')) {
    const v = words.findIndex((w) => VERBS.test(w.replace(/^[\w-]+:/, '')));
    const nouns = v < 0 ? [] : words.slice(0, v).flatMap((w) => w.split(':'));
    // (vercel remove NAME, vercel rm NAME: a project, unless NAME is one deployment's URL.)
    const noun = words[v]?.includes(':') ? words[v].split(':')[0] : nouns[nouns.length - 1] ?? (name === 'vercel' && v === 0 ? 'project' : undefined);
    const target = words.slice(v + 1).find((w) => !/^(true|false)$/.test(w)) ?? args.find((a, k) => /^(--name|--binding|--namespace-id)$/.test(args[k - 1] ?? '')) ?? '';
    const envVar = (words[v] === 'rm' || /unset$/.test(words[v] ?? '')) && (noun === 'env' || /^env:/.test(words[v] ?? ''));
    if (envVar && PROD_HINT.test(args.join(' '))) out.push(`${name0} ${args.slice(0, 4).join(' ')} removes a production environment variable: the live site loses the secret or setting it runs on`);
    else if (v >= 0 && noun !== undefined && DURABLE.test(noun) && !EPHEMERAL_TARGET.test(target) && !/^(key|keys|object|objects|secret|secrets|env|alias|channel|hosting)$/.test(nouns[nouns.length - 1] ?? '') ) out.push(`${name0} ${args.slice(0, 5).join(' ')} deletes a ${noun.replace(/s$/, '')} of the platform with what it holds: the site's or its data's, not a preview`);
    // supabase storage rm -r ss:///bucket --linked: a remote storage tree.
    else if (name === 'supabase' && words.includes('storage') && /^(rm|delete)$/.test(words[words.indexOf('storage') + 1] ?? '') && args.some((a) => /^-[a-zA-Z]*r$|^--recursive$/.test(a)) && !local) out.push(`supabase storage rm -r deletes ${words[words.indexOf('storage') + 2] ?? 'a tree'} from the project's storage with every file in it`);
  }
  // wrangler kv key list … | xargs wrangler kv key delete …: every key the listing prints (no --prefix narrows it).
  const lister = inv.fedBy.map((a) => (/^(npx|pnpx|bunx)$/.test(a[0] ?? '') ? a.slice(1).filter((x) => !/^(-y|--yes)$/.test(x)) : a)).find((a) => toolOf(a[0] ?? '') === name && a.includes('list') && !a.some((x) => /^--prefix/.test(x)));
  if (lister && /^(delete|rm|remove)$/.test(words[2] ?? words[1] ?? '') && !local) out.push(`${name0} ${words.slice(0, 3).join(' ')} over ${lister.slice(0, 4).join(' ')}: every entry of the store is deleted`);
  // wrangler d1 execute DB --remote --command "DELETE FROM …": the live database.
  if (name === 'wrangler' && words[0] === 'd1' && words[1] === 'execute' && args.includes('--remote') && LOSES_DATA.test(all)) out.push(`wrangler d1 execute --remote ${words[2] ?? ''}: drops or deletes rows of the live database`);
  // An ORM or SQL client aimed at production (dotenv -e .env.production, DATABASE_URL=$PROD_…, --url "$PROD_…").
  // (The env wrappers carry the target: dotenv -e F, dotenvx run -f F, env-cmd -f F, infisical run --env=prod, doppler run -c prd.)
  const db = /^(prisma|drizzle-kit|psql|mysql|supabase|dotenv|dotenvx|env-cmd|infisical|doppler|knex|sequelize|typeorm|mikro-orm)$/.test(name) || (/^(npm|pnpm|yarn)$/.test(name) && words[0] === 'dotenv');
  if (db && PROD_HINT.test(all) && LOSES_DATA.test(`${inv.argv.join(' ')} ${inv.stdin ?? ''}`) && !args.includes('--dry-run')) out.push(`${name0} ${args.slice(0, 5).join(' ')} resets, drops or empties a production database: its data is gone`);
  // A platform's REST API told to delete a durable resource, or any REST store told to flush.
  if (/^(curl|http|https|xh)$/.test(name)) {
    const method = args.find((a, k) => /^(-X|--request|--method)$|^-[a-zA-Z]+X$/.test(args[k - 1] ?? '')) ?? args.find((a) => /^(-X|--request=)[A-Z]+$/i.test(a))?.replace(/^(-X|--request=)/i, '') ?? (/^(http|https|xh)$/.test(name) ? args.find((a) => /^[A-Z]+$/.test(a)) : undefined);
    const url = args.find((a) => /^(https?:\/\/|\$\{?\w+\}?\/)/.test(a)) ?? '';
    if (/^delete$/i.test(method ?? '') && /^https:\/\/(api\.(vercel\.com|netlify\.com|cloudflare\.com|supabase\.(com|io)|render\.com|heroku\.com|fly\.io|railway\.app|turso\.tech|upstash\.com|digitalocean\.com|linode\.com|hetzner\.cloud)|console\.neon\.tech\/api)\/.*\/(projects?|sites?|databases?|zones?|apps?|services?|buckets?|namespaces?|accounts?|teams?|domains?|organizations?|scripts)\/[^/?\s]+\/?(\?.*)?$/.test(url)) out.push(`${name0} -X DELETE ${url}: the platform's API deletes a durable resource (a project, site, database or domain)`);
    if (/\/(flushdb|flushall)\b/i.test(url)) out.push(`${name0} ${url}: the store's REST API deletes every key`);
  }
  // npm unpublish PKG@1.2.3: a release version (not a pre-release) every dependent's lock file pins.
  if (/^(npm|pnpm|yarn)$/.test(name) && words[0] === 'unpublish' && /^(@[^/]+\/)?[^@]+@v?\d+(\.\d+){1,2}$/.test(words[1] ?? '')) out.push(`${name0} unpublish ${words[1]}: a released version every project that pins it fails to install, and it can never be published again`);
  return out;
}

/**
 * What a platform CLI prints that is secret: the project's environment (vercel env pull, netlify env:get,
 * railway variables), Firebase's functions config, Supabase's keys (supabase status prints the service
 * role key). Null when none.
 */
export function platformSecretPrinter(argv: string[]): string | null {
  const a0 = /^(npx|pnpx|bunx)$/.test(argv[0] ?? '') ? argv.slice(1).filter((a) => !/^(-y|--yes)$/.test(a)) : argv;
  const name = toolOf(a0[0] ?? '');
  const words = a0.slice(1).filter((a) => !a.startsWith('-'));
  argv = a0;
  if ((name === 'vercel' && words[0] === 'env' && words[1] === 'pull') || (name === 'netlify' && /^env:(get|list)$/.test(words[0] ?? '') && argv.some((a) => /^--(json|plain)$/.test(a))) || (name === 'railway' && words[0] === 'variables')) return `the project's environment variables (${argv.slice(0, 3).join(' ')})`;
  if (name === 'firebase' && /^functions:config:get$/.test(words[0] ?? '')) return "the functions' config (firebase functions:config:get)";
  if (name === 'supabase' && words[0] === 'status' && argv.some((a) => /^(-o|--output)(=.*)?$/.test(a))) return "the project's keys (supabase status)";
  return null;
}

/** Variables holding a platform's token, and the hosts that token is meant for. */
export const PLATFORM_VAR_HOSTS: [RegExp, RegExp][] = [
  [/^VERCEL_(TOKEN|API_TOKEN)$/, /(^|\.)vercel\.(com|app)$/],
  [/^NETLIFY_(AUTH_)?TOKEN$/, /(^|\.)netlify\.(com|app)$/],
  [/^(CLOUDFLARE|CF)_API_(TOKEN|KEY)$/, /(^|\.)cloudflare\.com$/],
  [/^SUPABASE_(ACCESS_TOKEN|SERVICE_ROLE_KEY|SERVICE_KEY)$/, /(^|\.)supabase\.(co|com|in)$|^localhost$|^127\.0\.0\.1$/],
  [/^FIREBASE_TOKEN$/, /(^|\.)(googleapis\.com|firebaseio\.com|firebase\.google\.com)$/],
  [/^NEON_API_KEY$/, /(^|\.)neon\.tech$/],
  [/^TURSO_(AUTH|API)_TOKEN$/, /(^|\.)turso\.(io|tech)$/],
  [/^RAILWAY_(API_)?TOKEN$/, /(^|\.)railway\.app$/],
  [/^FLY_(API_)?TOKEN$/, /(^|\.)fly\.(io|dev)$/],
  [/^RENDER_API_KEY$/, /(^|\.)render\.com$/],
  [/^STRIPE_(SECRET_KEY|API_KEY)$/, /(^|\.)stripe\.com$/],
];
