/**
 * The shadow learner: it watches tool runs and learns
 *  - command patterns, keyed by command name (plus the subcommand for tools
 *    that have them: `git push`, `npm test`), with success and failure counts
 *    and the commonest errors;
 *  - context patterns, keyed by tool and error type, with the likely error and
 *    suggestions.
 *
 * Hot path and fold. The database can hold 10,000 patterns (megabytes of
 * JSON), too much to parse and rewrite on every tool call. The logger appends
 * each run to a journal (`patterns/pending.jsonl`); the journal is folded into
 * the database under a lock when it has grown (`async_logging`), at once when
 * `async_logging` is off, at the session's end, and before the CLI reads
 * patterns. The fold is incremental: the database is stored as
 * `patterns/db/index.json` (context patterns, per-tool failure counts, the
 * pattern count) and 256 shards `c-XX.json` of command patterns, XX from a
 * hash of the key, and a fold reads and rewrites only the shards its runs
 * touch (a few KB each), whatever the size of the whole. Each fold also
 * updates the prediction cache (`patterns/predictions/`: only the patterns
 * above the confidence and evidence thresholds, sharded the same way) for
 * the keys whose prediction changed; the validator reads the shard of each
 * key it looks up. (The one-file `patterns.json` of earlier
 * versions is split into shards by the first fold.)
 *
 * Confidence of a pattern with n observations whose dominant outcome has rate
 * r is r * n / (n + 1): one observation is never trusted, and it approaches r.
 * When there are more than `max_patterns`, the least useful go first:
 * lowest confidence * log(1 + evidence), then the least recently seen; a fold
 * that finds the database over the limit (the one moment it reads every
 * shard) trims it to 95% of it, so a full database is not read whole on
 * every new pattern.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Settings } from './settings-schema';
import { appendJsonLine, fnv1a, isObject, readJson, tryWithLock, unlinkQuiet, withLock, writeFileAtomic, writeJsonAtomic, type DataPaths } from './store';

export interface CommandPattern {
  pattern_id: string;
  pattern_type: 'command_execution';
  trigger: { command: string };
  prediction: { success_count: number; failure_count: number; common_errors: string[] };
  confidence: number;
  evidence_count: number;
  last_seen: string;
  success_rate: number;
}

export interface ContextPattern {
  pattern_type: 'context_error';
  trigger: { tool: string; error_type: string };
  prediction: { likely_error: string; suggestions: string[] };
  confidence: number;
  evidence_count: number;
  last_seen: string;
}

export interface PatternDb {
  command_patterns: Record<string, CommandPattern>;
  context_patterns: Record<string, ContextPattern>;
  /** Failures seen per tool: the denominator of context-pattern confidence. */
  tool_failures: Record<string, number>;
  updated_at: string | null;
}

export interface LearnedRun {
  tool: string;
  /** Command key (Bash only). */
  command: string | null;
  success: boolean;
  error: string | null;
  timestamp: string;
}

export interface Prediction {
  failure_rate: number;
  confidence: number;
  evidence_count: number;
  common_error: string | null;
}

export interface PredictionCache {
  /** When its content was computed. */
  built_at: number;
  /** When it was last found still true (its cache_ttl_seconds count from here); built_at when absent. */
  checked_at?: number;
  /** The thresholds it was built with: a cache built under other settings is rebuilt. */
  thresholds?: string;
  commands: Record<string, Prediction>;
}

export function emptyDb(): PatternDb {
  return { command_patterns: {}, context_patterns: {}, tool_failures: {}, updated_at: null };
}

const isDb = (v: unknown): boolean => isObject(v) && isObject(v.command_patterns) && isObject(v.context_patterns);

/** The whole database (every shard): for the CLI, eviction and a rebuilt cache, never the per-call path. */
export function readDb(paths: DataPaths): PatternDb {
  if (!fs.existsSync(path.join(paths.patternShards, INDEX))) return readLegacyDb(paths);
  const index = readIndex(paths);
  return { command_patterns: allCommandPatterns(paths), context_patterns: index.context_patterns, tool_failures: index.tool_failures, updated_at: index.updated_at };
}

function allCommandPatterns(paths: DataPaths): Record<string, CommandPattern> {
  const all: Record<string, CommandPattern> = {};
  for (let i = 0; i < SHARDS; i++) Object.assign(all, readShard(paths, shardName(i)));
  return all;
}

function readLegacyDb(paths: DataPaths): PatternDb {
  const db = readJson<PatternDb>(paths.patternDb, emptyDb, isDb);
  if (!isObject(db.tool_failures)) db.tool_failures = {};
  return db;
}

// ---- the sharded store -------------------------------------------------------------------------

const SHARDS = 256;
const INDEX = 'index.json';

interface DbIndex {
  version: 1;
  updated_at: string | null;
  command_count: number;
  context_patterns: Record<string, ContextPattern>;
  tool_failures: Record<string, number>;
  /** The built_at of the prediction cache that matches this database (every fold since kept it true), or null. */
  cache_built_at?: number | null;
}

const shardName = (i: number) => `c-${i.toString(16).padStart(2, '0')}.json`;

/** The shard of a command key: FNV-1a of the key, low 8 bits. */
export function shardOf(key: string): string {
  return shardName(fnv1a(key) % SHARDS);
}

function readIndex(paths: DataPaths): DbIndex {
  const idx = readJson<DbIndex>(path.join(paths.patternShards, INDEX), () => ({ version: 1, updated_at: null, command_count: 0, context_patterns: {}, tool_failures: {} }), (v) => isObject(v) && isObject(v.context_patterns));
  if (!isObject(idx.tool_failures)) idx.tool_failures = {};
  if (typeof idx.command_count !== 'number') idx.command_count = 0;
  return idx;
}

function readShard(paths: DataPaths, name: string): Record<string, CommandPattern> {
  return readJson<Record<string, CommandPattern>>(path.join(paths.patternShards, name), () => ({}));
}

/**
 * Where a fold's file changes go: straight to disk (each file replaced
 * atomically), or into a FoldTxn that applies them all or none (see fold).
 */
export interface FileWrites {
  put(file: string, text: string): void;
  del(file: string): void;
}

const directWrites: FileWrites = { put: (file, text) => writeFileAtomic(file, text), del: unlinkQuiet };
const jsonText = (data: unknown) => JSON.stringify(data) + '\n';

/** Writes `db` whole as shards and index (a migration, after eviction; a benchmark's or test's database). */
export function writeAllShards(paths: DataPaths, db: PatternDb, w: FileWrites = directWrites): void {
  const shards = new Map<string, Record<string, CommandPattern>>();
  for (let i = 0; i < SHARDS; i++) shards.set(shardName(i), {});
  for (const [k, p] of Object.entries(db.command_patterns)) shards.get(shardOf(k))![k] = p;
  fs.mkdirSync(paths.patternShards, { recursive: true });
  for (const [name, content] of shards) {
    const file = path.join(paths.patternShards, name);
    if (Object.keys(content).length > 0) w.put(file, jsonText(content));
    else w.del(file);
  }
  writeIndex(paths, db, Object.keys(db.command_patterns).length, null, w);
}

function writeIndex(paths: DataPaths, db: PatternDb, commandCount: number, cacheBuiltAt: number | null, w: FileWrites = directWrites): void {
  const index: DbIndex = { version: 1, updated_at: db.updated_at, command_count: commandCount, context_patterns: db.context_patterns, tool_failures: db.tool_failures, cache_built_at: cacheBuiltAt };
  w.put(path.join(paths.patternShards, INDEX), jsonText(index));
}

/** Splits an earlier version's one-file database into shards (under the database lock). */
function migrateLegacy(paths: DataPaths): void {
  if (fs.existsSync(path.join(paths.patternShards, INDEX)) || !fs.existsSync(paths.patternDb)) return;
  const db = readLegacyDb(paths);
  writeAllShards(paths, db);
  unlinkQuiet(paths.patternDb);
}

const SUBCOMMAND_TOOLS = new Set([
  'git', 'npm', 'npx', 'pnpm', 'yarn', 'bun', 'docker', 'kubectl', 'cargo', 'go', 'pip', 'pip3', 'make', 'gh', 'dotnet', 'mvn', 'gradle', 'terraform', 'helm', 'systemctl', 'brew', 'apt', 'apt-get', 'poetry', 'uv',
]);

/** `git push`, `npm test`, `ls`: the key a command is learned under. */
export function commandKey(argv: readonly string[]): string | null {
  if (argv.length === 0) return null;
  const name = argv[0].split('/').pop() || argv[0];
  if (!SUBCOMMAND_TOOLS.has(name)) return name;
  let sub: string | undefined;
  for (let i = 1; i < argv.length; i++) {
    if (name === 'git' && (argv[i] === '-c' || argv[i] === '-C')) i++; // git's global options with a value
    else if (!argv[i].startsWith('-')) {
      sub = argv[i];
      break;
    }
  }
  // npx runs a package: its name is the interesting part.
  return sub && /^[\w.:@/-]+$/.test(sub) && sub.length <= 40 ? `${name} ${sub}` : name;
}

const ERROR_TYPES: [string, RegExp, string[]][] = [
  ['command_not_found', /command not found|not recognized as|ENOENT.*spawn|No such command/i, ['Check the spelling, or install the tool', 'Check PATH, or use the project-local binary (npx <tool>)']],
  ['permission_denied', /permission denied|EACCES|EPERM|operation not permitted/i, ['Check file ownership and mode (ls -l)', 'Do not reach for sudo inside a project directory']],
  ['module_not_found', /cannot find module|module not found|no module named|ERR_MODULE_NOT_FOUND/i, ['Install dependencies (npm install / pip install -r requirements.txt)', 'Check the import path']],
  ['no_such_file', /no such file or directory|ENOENT|cannot access|does not exist/i, ['Check the path relative to the current directory (pwd)', 'List the directory first (ls)']],
  ['syntax_error', /syntax ?error|unexpected token|parse error/i, ['Check quoting and brackets', 'Run the linter or type checker on the file']],
  ['type_error', /TypeError|error TS\d+|type error/i, ['Run the type checker (tsc --noEmit) and read the first error']],
  ['test_failure', /tests? failed|failing|assertion|AssertionError|not ok \d+/i, ['Run the failing test alone and read its first failure']],
  ['timeout', /timed? ?out|ETIMEDOUT|deadline exceeded/i, ['Raise the timeout or run the step in the background']],
  ['network', /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|network|could not resolve host|connection refused/i, ['Check that the service is running and reachable', 'Retry after checking the network']],
  ['merge_conflict', /conflict|not possible to fast-forward|rejected|non-fast-forward/i, ['Fetch and rebase (git pull --rebase), then resolve conflicts']],
  ['edit_mismatch', /string to replace not found|old_string|file has been modified/i, ['Read the file again before editing it']],
];

export function classifyError(error: string): { type: string; suggestions: string[] } {
  for (const [type, re, suggestions] of ERROR_TYPES) if (re.test(error)) return { type, suggestions };
  return { type: 'other', suggestions: ['Read the full error output before retrying'] };
}

export function confidenceOf(dominant: number, n: number): number {
  return n === 0 ? 0 : (dominant / n) * (n / (n + 1));
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Folds runs into the database and keeps it within `maxPatterns` (pure: mutates `db`). */
export function applyRuns(db: PatternDb, runs: readonly LearnedRun[], maxPatterns: number): void {
  applyRunsNoEvict(db, runs);
  evict(db, maxPatterns);
}

/** Folds runs into the patterns `db` holds (pure: mutates `db`); returns the command keys it touched. */
function applyRunsNoEvict(db: PatternDb, runs: readonly LearnedRun[]): Set<string> {
  const touched = new Set<string>();
  for (const run of runs) {
    if (run.command) {
      const key = run.command;
      touched.add(key);
      const p =
        db.command_patterns[key] ??
        (db.command_patterns[key] = {
          pattern_id: `cmd_${key.replace(/[^\w]+/g, '_')}`,
          pattern_type: 'command_execution',
          trigger: { command: key },
          prediction: { success_count: 0, failure_count: 0, common_errors: [] },
          confidence: 0,
          evidence_count: 0,
          last_seen: run.timestamp,
          success_rate: 0,
        });
      if (run.success) p.prediction.success_count++;
      else {
        p.prediction.failure_count++;
        if (run.error) {
          const line = firstLine(run.error);
          p.prediction.common_errors = [line, ...p.prediction.common_errors.filter((e) => e !== line)].slice(0, 5);
        }
      }
      const { success_count: s, failure_count: f } = p.prediction;
      p.evidence_count = s + f;
      p.success_rate = round3(s / p.evidence_count);
      p.confidence = round3(confidenceOf(Math.max(s, f), p.evidence_count));
      p.last_seen = run.timestamp;
    }
    if (!run.success) {
      const { type, suggestions } = classifyError(run.error ?? '');
      const failures = (db.tool_failures[run.tool] = (db.tool_failures[run.tool] ?? 0) + 1);
      const id = `${run.tool}:${type}`;
      const c =
        db.context_patterns[id] ??
        (db.context_patterns[id] = {
          pattern_type: 'context_error',
          trigger: { tool: run.tool, error_type: type },
          prediction: { likely_error: '', suggestions },
          confidence: 0,
          evidence_count: 0,
          last_seen: run.timestamp,
        });
      c.evidence_count++;
      if (run.error) c.prediction.likely_error = firstLine(run.error);
      c.last_seen = run.timestamp;
      c.confidence = round3(confidenceOf(c.evidence_count, failures));
    }
  }
  return touched;
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? text;
  return line.trim().slice(0, 200);
}

const usefulness = (p: { confidence: number; evidence_count: number }) => p.confidence * Math.log1p(p.evidence_count);

function evict(db: PatternDb, maxPatterns: number, target = maxPatterns): void {
  const cmd = Object.keys(db.command_patterns);
  const ctx = Object.keys(db.context_patterns);
  if (cmd.length + ctx.length <= maxPatterns) return;
  const excess = cmd.length + ctx.length - target;
  if (excess <= 0) return;
  const all = [
    ...cmd.map((k) => ({ k, kind: 'command' as const, p: db.command_patterns[k] })),
    ...ctx.map((k) => ({ k, kind: 'context' as const, p: db.context_patterns[k] })),
  ];
  all.sort((a, b) => usefulness(a.p) - usefulness(b.p) || a.p.last_seen.localeCompare(b.p.last_seen));
  for (const { k, kind } of all.slice(0, excess)) {
    if (kind === 'command') delete db.command_patterns[k];
    else delete db.context_patterns[k];
  }
}

/** The patterns worth warning about: above both thresholds and predicting failure. */
export function buildPredictions(db: PatternDb, sl: Settings['shadow_learner'], nowMs: number): PredictionCache {
  const commands: Record<string, Prediction> = {};
  for (const [key, p] of Object.entries(db.command_patterns)) {
    const pred = predictionOf(p, sl);
    if (pred) commands[key] = pred;
  }
  return { built_at: nowMs, thresholds: `${sl.confidence_threshold}/${sl.evidence_threshold}`, commands };
}

function predictionOf(p: CommandPattern, sl: Settings['shadow_learner']): Prediction | null {
  const { success_count: s, failure_count: f } = p.prediction;
  if (f <= s || p.confidence < sl.confidence_threshold || p.evidence_count < sl.evidence_threshold) return null;
  return { failure_rate: round3(f / (s + f)), confidence: p.confidence, evidence_count: p.evidence_count, common_error: p.prediction.common_errors[0] ?? null };
}

function thresholdsKey(settings: Settings): string {
  return `${settings.shadow_learner.confidence_threshold}/${settings.shadow_learner.evidence_threshold}`;
}

function dbMtime(paths: DataPaths): number {
  for (const f of [path.join(paths.patternShards, INDEX), paths.patternDb]) {
    try {
      return fs.statSync(f).mtimeMs;
    } catch {
      /* the next */
    }
  }
  return 0;
}

/** Appends one run to the journal (the hot path: one small write). */
export function journalRun(paths: DataPaths, run: LearnedRun): void {
  appendJsonLine(paths.learnJournal, run);
}

function journalLength(paths: DataPaths): number {
  try {
    const size = fs.statSync(paths.learnJournal).size;
    return size === 0 ? 0 : Math.ceil(size / 80); // about 80+ bytes a run: an estimate is enough to decide a fold
  } catch {
    return 0;
  }
}

/** Whether the logger should fold now (see the header). */
export function shouldFold(paths: DataPaths, settings: Settings, nowMs: number): boolean {
  if (!settings.performance.async_logging) return true;
  const length = journalLength(paths);
  if (length === 0) return false;
  // The last fold: every fold with runs writes the index (the prediction cache only when a prediction changed).
  const lastFoldMs = dbMtime(paths);
  if (nowMs - lastFoldMs < settings.performance.rate_limit_ms) return false;
  return length >= 25 || nowMs - lastFoldMs >= 30_000;
}

/** A detached fold asked for and not yet ended (see startFold). */
const FOLD_REQUEST = 'fold.requested';
/** A request older than this is taken for one whose fold died or never started, and is replaced. */
const FOLD_REQUEST_STALE_MS = 30_000;

export type StartFoldResult = 'started' | 'pending' | 'failed';

/**
 * Starts the fold in another process (`spawn`: the hooks pass hook-runtime's
 * spawnDetached) unless one is already asked for: each hook whose schedule
 * says fold would otherwise start its own (a burst of tool calls runs several
 * loggers within the 0.2 s the detached fold waits before it starts), and all
 * but the first would start Node for nothing (the database's lock keeps
 * them correct, not cheap). The request is `patterns/fold.requested`, made
 * exclusively, holding a token the fold is given (`<worker> <project>
 * <token>`) and removes when it ends (releaseFold); one left by a fold that
 * died is replaced after FOLD_REQUEST_STALE_MS. 'failed': the worker is
 * missing or no process could be started (the request is withdrawn).
 */
export function startFold(paths: DataPaths, worker: string, nowMs: number, spawn: (file: string, args: string[], cwd: string) => boolean): StartFoldResult {
  const request = path.join(paths.patterns, FOLD_REQUEST);
  const token = `${process.pid}-${nowMs}`;
  if (!fs.existsSync(worker)) return 'failed';
  try {
    fs.writeFileSync(request, token, { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return 'failed';
    const mtimeMs = fs.statSync(request, { throwIfNoEntry: false })?.mtimeMs;
    if (mtimeMs !== undefined && nowMs - mtimeMs < FOLD_REQUEST_STALE_MS) return 'pending';
    writeFileAtomic(request, token); // stale (or just released): take it over
  }
  if (spawn(worker, [paths.project, token], paths.project)) return 'started';
  releaseFold(paths, token);
  return 'failed';
}

/** Ends the request `token` names (a newer request, made after it went stale, is left alone). */
export function releaseFold(paths: DataPaths, token: string): void {
  const request = path.join(paths.patterns, FOLD_REQUEST);
  try {
    if (fs.readFileSync(request, 'utf8') === token) fs.unlinkSync(request);
  } catch {
    /* already gone */
  }
}

/**
 * Moves the journal aside (new runs go to a fresh one), folds it into the
 * database, writes the database and the prediction cache. Returns the number
 * of runs folded. Runs only holding the database's lock: a fold without it
 * could overwrite another's (so when the lock is busy past the wait, the
 * journal is left for the next fold).
 *
 * All or nothing, whenever the folding process dies (killed at a hook's
 * deadline, or the detached fold of an answer end killed with its terminal):
 * the journal is moved aside (`pending.jsonl.<pid>.folding`); every changed
 * file is written beside its target (`<file>.fold.tmp`); then the commit
 * record `patterns/fold.commit` (the changes and the journals they fold) is
 * written, the one step that makes the fold count; then the changes are moved
 * into place and the journals and the record removed. The next fold, holding
 * the lock, first finishes a committed fold (moving what is left into place)
 * and then folds every `.folding` journal left without a commit (its runs
 * never reached the database). So a run is never lost and never counted
 * twice. A folded journal is not removed at once but renamed
 * `<journal>.<pid>.folded-<bytes folded>`: a logger that opened the journal
 * before the fold moved it aside can write its line after the fold read it
 * (a process descheduled between its open and its write); the next fold
 * folds what such a file gained beyond that byte, and removes the files that
 * gained nothing.
 */
export function fold(paths: DataPaths, settings: Settings, now: Date): number {
  const inputs = () => journalFiles(paths);
  const commitFile = path.join(paths.patterns, COMMIT);
  // Nothing new: leave the database alone (parsing 10,000 patterns costs more than a hook's whole start-up).
  if (!fs.existsSync(paths.learnJournal) && !fs.existsSync(commitFile) && !inputs().some((j) => j.fresh || fileSize(j.file) > j.offset)) return 0;
  const folded = tryWithLock(
    paths.patternDb,
    () => {
      const recovered = finishCommitted(paths);
      const taken = `${paths.learnJournal}.${process.pid}.folding`;
      crashPoint();
      try {
        fs.renameSync(paths.learnJournal, taken);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      const journals = inputs();
      if (journals.some((j) => j.fresh && j.file !== taken) && !recovered) removeStrayTmp(paths); // a fold died before its commit
      const read = journals.map((j) => ({ ...j, ...readJournal(j.file, j.offset) }));
      const runs = read.flatMap((j) => j.runs);
      migrateLegacy(paths);
      const txn = new FoldTxn();
      foldRuns(paths, settings, runs, now, txn);
      // Each journal is kept, renamed `.folded-<bytes read>`, until a fold finds it grown by nothing: a logger
      // that opened the journal before it was moved aside may write its line after this fold read it.
      txn.commit(
        paths,
        read.map((j) => ({ file: j.file, to: j.fresh || j.end > j.offset ? `${j.base}.folded-${j.end}` : null })),
      );
      return runs.length;
    },
    Math.max(200, settings.performance.max_hook_execution_time / 2),
  );
  return folded ?? 0;
}

/** The journals moved aside: `<journal>.<pid>.folding` (never folded: from byte 0) and `<journal>.<pid>.folded-<n>` (folded up to byte n). */
function journalFiles(paths: DataPaths): { file: string; base: string; offset: number; fresh: boolean }[] {
  const dir = path.dirname(paths.learnJournal);
  const prefix = `${path.basename(paths.learnJournal)}.`;
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: { file: string; base: string; offset: number; fresh: boolean; mtimeNs: bigint }[] = [];
  for (const n of names) {
    if (!n.startsWith(prefix)) continue;
    const m = /^(.*)\.(?:folding|folded-(\d+))$/.exec(n);
    const mtimeNs = m ? fs.statSync(path.join(dir, n), { bigint: true, throwIfNoEntry: false })?.mtimeNs : undefined;
    if (m && mtimeNs !== undefined) out.push({ file: path.join(dir, n), base: path.join(dir, m[1]), offset: m[2] === undefined ? 0 : Number(m[2]), fresh: m[2] === undefined, mtimeNs });
  }
  // Oldest writes first, then by name: the order the runs happened in, and the same order whichever fold reads them.
  // The fold is not order-free (a pattern's last error and its recent errors follow the runs' order), and the
  // directory's order depends on the pids in the names: a fold redone after a crash read the journals in another
  // order than the fold it redid, and kept another last error (test/hooks-cli/learner.test.ts, the killed fold).
  out.sort((a, b) => (a.mtimeNs < b.mtimeNs ? -1 : a.mtimeNs > b.mtimeNs ? 1 : a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return out;
}

function fileSize(file: string): number {
  return fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
}

/** The runs of a journal from byte `offset` to its last whole line, and where that line ends. */
function readJournal(file: string, offset: number): { runs: LearnedRun[]; end: number } {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return { runs: [], end: offset };
  }
  const last = buf.lastIndexOf(0x0a);
  if (last < offset) return { runs: [], end: offset };
  const runs: LearnedRun[] = [];
  for (const line of buf.subarray(offset, last + 1).toString('utf8').split('\n')) {
    if (!line) continue;
    try {
      const v: unknown = JSON.parse(line);
      if (isRun(v)) runs.push(v);
    } catch {
      /* a line cut by a crash: skipped */
    }
  }
  return { runs, end: last + 1 };
}

const COMMIT = 'fold.commit';
const TMP_SUFFIX = '.fold.tmp';

/**
 * Test hook for the all-or-nothing fold: with HOOKS_CLI_TEST_FOLD_CRASH_AT=n
 * the process kills itself (SIGKILL, as a crash) at the n-th step of a fold
 * (1 = before moving the journal aside). Unset in real use.
 */
let crashSteps = 0;
function crashPoint(): void {
  const at = process.env.HOOKS_CLI_TEST_FOLD_CRASH_AT;
  if (at && ++crashSteps === Number(at)) process.kill(process.pid, 'SIGKILL');
}

interface CommitRecord {
  /** Paths relative to `patterns/`; `del` removes the file. */
  changes: { file: string; del?: true }[];
  /** The journals folded: each renamed `to` (folded up to there), or removed when `to` is null. */
  journals: { file: string; to: string | null }[];
}

/** A fold's file changes, kept until commit() writes them all (see fold). */
class FoldTxn implements FileWrites {
  private readonly changes = new Map<string, string | null>();
  put(file: string, text: string): void {
    this.changes.delete(file); // a later write of the same file replaces the earlier, in order
    this.changes.set(file, text);
  }
  del(file: string): void {
    this.changes.delete(file);
    this.changes.set(file, null);
  }
  commit(paths: DataPaths, journals: { file: string; to: string | null }[]): void {
    const rel = (f: string) => path.relative(paths.patterns, f);
    const record: CommitRecord = { changes: [], journals: journals.map((j) => ({ file: rel(j.file), to: j.to === null ? null : rel(j.to) })) };
    for (const [file, text] of this.changes) {
      if (text !== null) {
        crashPoint();
        fs.writeFileSync(file + TMP_SUFFIX, text);
        record.changes.push({ file: rel(file) });
      } else record.changes.push({ file: rel(file), del: true });
    }
    crashPoint();
    const commitFile = path.join(paths.patterns, COMMIT);
    fs.writeFileSync(commitFile + TMP_SUFFIX, JSON.stringify(record));
    fs.renameSync(commitFile + TMP_SUFFIX, commitFile); // the fold counts from here
    applyCommit(paths, record);
  }
}

/** Moves a committed fold's files into place (what is left of them), removes its journals, then the record. */
function applyCommit(paths: DataPaths, record: CommitRecord): void {
  const abs = (f: string) => path.resolve(paths.patterns, f);
  for (const c of record.changes) {
    crashPoint();
    if (c.del) unlinkQuiet(abs(c.file));
    else {
      try {
        fs.renameSync(abs(c.file) + TMP_SUFFIX, abs(c.file));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // moved before a crash
      }
    }
  }
  for (const j of record.journals) {
    crashPoint();
    if (j.to === null) unlinkQuiet(abs(j.file));
    else {
      try {
        fs.renameSync(abs(j.file), abs(j.to));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // renamed before a crash
      }
    }
  }
  crashPoint();
  unlinkQuiet(path.join(paths.patterns, COMMIT));
}

/** Finishes the fold a dead process had committed; true when there was one. */
function finishCommitted(paths: DataPaths): boolean {
  const file = path.join(paths.patterns, COMMIT);
  let record: CommitRecord;
  try {
    record = JSON.parse(fs.readFileSync(file, 'utf8')) as CommitRecord;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    unlinkQuiet(file); // cannot be half written (it is renamed into place): not ours
    return false;
  }
  if (!isObject(record) || !Array.isArray(record.changes) || !Array.isArray(record.journals) || !record.journals.every((j) => isObject(j) && typeof j.file === 'string')) {
    unlinkQuiet(file);
    return false;
  }
  applyCommit(paths, record);
  removeStrayTmp(paths);
  return true;
}

/** Removes the `.fold.tmp` files a fold that died before its commit left (they were never part of the database). */
function removeStrayTmp(paths: DataPaths): void {
  for (const dir of [paths.patternShards, paths.predictionCache, paths.patterns]) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const n of names) if (n.endsWith(TMP_SUFFIX)) unlinkQuiet(path.join(dir, n));
  }
}

/**
 * The incremental fold: reads the index and the shards the runs touch,
 * applies the runs, writes those shards, the index and the prediction cache
 * (updated for the touched keys) into `w`. Over `max_patterns`, the whole
 * database is read once and trimmed to 95% of it.
 */
function foldRuns(paths: DataPaths, settings: Settings, runs: LearnedRun[], now: Date, w: FileWrites): void {
  const sl = settings.shadow_learner;
  const index = readIndex(paths);
  const names = [...new Set(runs.filter((r) => r.command).map((r) => shardOf(r.command!)))];
  const shards = new Map(names.map((n) => [n, readShard(paths, n)]));
  const db: PatternDb = { command_patterns: {}, context_patterns: index.context_patterns, tool_failures: index.tool_failures, updated_at: index.updated_at };
  for (const content of shards.values()) Object.assign(db.command_patterns, content);
  const predictedBefore = new Map<string, string>();
  for (const r of runs) if (r.command && !predictedBefore.has(r.command)) predictedBefore.set(r.command, predictionKey(db.command_patterns[r.command], sl));
  const before = Object.keys(db.command_patterns).length;
  const touched = runs.length > 0 ? applyRunsNoEvict(db, runs) : new Set<string>();
  const count = index.command_count + Object.keys(db.command_patterns).length - before;
  if (runs.length > 0) db.updated_at = now.toISOString();
  fs.mkdirSync(paths.patternShards, { recursive: true });
  fs.mkdirSync(paths.predictionCache, { recursive: true });
  if (count + Object.keys(db.context_patterns).length > sl.max_patterns) {
    const whole = readDb(paths);
    Object.assign(whole.command_patterns, db.command_patterns);
    whole.context_patterns = db.context_patterns;
    whole.tool_failures = db.tool_failures;
    whole.updated_at = db.updated_at;
    evict(whole, sl.max_patterns, Math.floor(sl.max_patterns * 0.95));
    writeAllShards(paths, whole, w);
    writePredictionCache(paths, buildPredictions(whole, sl, now.getTime()), w);
    writeIndex(paths, whole, Object.keys(whole.command_patterns).length, now.getTime(), w);
    return;
  }
  for (const [name, content] of shards) {
    for (const k of Object.keys(db.command_patterns)) if (shardOf(k) === name) content[k] = db.command_patterns[k];
    w.put(path.join(paths.patternShards, name), jsonText(content));
  }
  // The prediction cache changes only when a touched key's prediction does (most runs of known-good commands
  // change none): then it is read and rewritten; otherwise it is left alone, still true for the database.
  let cacheBuiltAt = index.cache_built_at ?? null;
  const changed = [...touched].filter((k) => predictionKey(db.command_patterns[k], sl) !== predictedBefore.get(k));
  if (changed.length > 0 || cacheBuiltAt === null) {
    const meta = readPredMeta(paths);
    const nowMs = now.getTime();
    if (!meta || meta.thresholds !== thresholdsKey(settings) || cacheBuiltAt === null || meta.built_at !== cacheBuiltAt) {
      // Missing, built under other thresholds, or not known to match: built from the whole database (rare),
      // the shards this fold changed taken from it.
      const all = allCommandPatterns(paths);
      Object.assign(all, db.command_patterns);
      writePredictionCache(paths, buildPredictions({ ...db, command_patterns: all }, sl, nowMs), w);
    } else {
      updatePredictions(paths, new Map(changed.map((k) => [k, predictionOf(db.command_patterns[k], sl)])), { ...meta, built_at: nowMs, checked_at: nowMs }, w);
    }
    cacheBuiltAt = nowMs;
  }
  if (runs.length > 0 || cacheBuiltAt !== (index.cache_built_at ?? null) || !fs.existsSync(path.join(paths.patternShards, INDEX))) writeIndex(paths, db, count, cacheBuiltAt, w);
}

/** A pattern's prediction as a string, to tell whether a fold changed it ('' for none). */
function predictionKey(p: CommandPattern | undefined, sl: Settings['shadow_learner']): string {
  const pred = p ? predictionOf(p, sl) : null;
  return pred ? JSON.stringify(pred) : '';
}

function isRun(v: unknown): v is LearnedRun {
  return isObject(v) && typeof v.tool === 'string' && typeof v.success === 'boolean' && typeof v.timestamp === 'string';
}

/**
 * The predictions for the validator: the cache while it is younger than
 * `cache_ttl_seconds` (and `cache_predictions` is on), otherwise rebuilt
 * from the database (and the cache rewritten).
 */
export function predictions(paths: DataPaths, settings: Settings, nowMs: number): PredictionCache {
  if (settings.performance.cache_predictions) {
    const meta = readPredMeta(paths);
    if (meta && meta.thresholds === thresholdsKey(settings)) {
      const checkedAt = meta.checked_at ?? meta.built_at;
      if (nowMs - checkedAt < settings.shadow_learner.cache_ttl_seconds * 1000) return { ...meta, commands: lazyPredictions(paths) };
      // Expired: trust it again if the database has not changed since it was last checked, or if every fold
      // since has kept it true (the index names this cache), without reading the database.
      if (dbMtime(paths) <= checkedAt || indexCacheBuiltAt(paths) === meta.built_at) {
        const renewed = { ...meta, checked_at: nowMs };
        try {
          writeJsonAtomic(path.join(paths.predictionCache, PRED_META), renewed, false);
        } catch {
          /* read-only: still valid */
        }
        return { ...renewed, commands: lazyPredictions(paths) };
      }
    }
  }
  const built = buildPredictions(readDb(paths), settings.shadow_learner, nowMs);
  if (settings.performance.cache_predictions) {
    try {
      writePredictionCache(paths, built);
    } catch {
      /* read-only data dir: predictions still work */
    }
  }
  return built;
}

// ---- the prediction cache: predictions/meta.json and shards of predictions (the database's shard of each key) ----

const PRED_META = 'meta.json';
type PredMeta = Omit<PredictionCache, 'commands'>;

function readPredMeta(paths: DataPaths): PredMeta | null {
  return readJson<PredMeta | null>(path.join(paths.predictionCache, PRED_META), () => null, (v) => isObject(v) && typeof v.built_at === 'number');
}

function readPredShard(paths: DataPaths, name: string): Record<string, Prediction> {
  return readJson<Record<string, Prediction>>(path.join(paths.predictionCache, name), () => ({}));
}

/**
 * The predictions as an object the validator looks keys up in: each lookup
 * reads only the shard of that key (a few KB), however many predictions there are.
 */
function lazyPredictions(paths: DataPaths): Record<string, Prediction> {
  const shards = new Map<string, Record<string, Prediction>>();
  const shard = (key: string) => {
    const name = shardOf(key);
    let content = shards.get(name);
    if (!content) shards.set(name, (content = readPredShard(paths, name)));
    return content;
  };
  return new Proxy({} as Record<string, Prediction>, {
    get: (_t, key) => (typeof key === 'string' && Object.hasOwn(shard(key), key) ? shard(key)[key] : undefined),
    has: (_t, key) => typeof key === 'string' && Object.hasOwn(shard(key), key),
  });
}

/** Writes a whole prediction cache (shards first, the meta file last). */
export function writePredictionCache(paths: DataPaths, cache: PredictionCache, w: FileWrites = directWrites): void {
  const dir = paths.predictionCache;
  fs.mkdirSync(dir, { recursive: true });
  const shards = new Map<string, Record<string, Prediction>>();
  for (const [k, p] of Object.entries(cache.commands)) {
    const name = shardOf(k);
    (shards.get(name) ?? shards.set(name, {}).get(name)!)[k] = p;
  }
  for (const name of fs.readdirSync(dir)) if (name.startsWith('c-') && name.endsWith('.json') && !shards.has(name)) w.del(path.join(dir, name));
  for (const [name, content] of shards) w.put(path.join(dir, name), jsonText(content));
  const { commands: _omit, ...meta } = cache;
  w.put(path.join(dir, PRED_META), jsonText(meta));
}

/** Every prediction in the cache (tests and tools; the validator looks keys up one by one). */
export function readPredictionCache(paths: DataPaths): PredictionCache | null {
  const meta = readPredMeta(paths);
  if (!meta) return null;
  const commands: Record<string, Prediction> = {};
  for (let i = 0; i < SHARDS; i++) Object.assign(commands, readPredShard(paths, shardName(i)));
  return { ...meta, commands };
}

function updatePredictions(paths: DataPaths, changes: Map<string, Prediction | null>, meta: PredMeta, w: FileWrites = directWrites): void {
  const byShard = new Map<string, string[]>();
  for (const k of changes.keys()) (byShard.get(shardOf(k)) ?? byShard.set(shardOf(k), []).get(shardOf(k))!).push(k);
  for (const [name, keys] of byShard) {
    const content = readPredShard(paths, name);
    for (const k of keys) {
      const pred = changes.get(k);
      if (pred) content[k] = pred;
      else delete content[k];
    }
    w.put(path.join(paths.predictionCache, name), jsonText(content));
  }
  w.put(path.join(paths.predictionCache, PRED_META), jsonText(meta));
}

function indexCacheBuiltAt(paths: DataPaths): number | null {
  try {
    const v = JSON.parse(fs.readFileSync(path.join(paths.patternShards, INDEX), 'utf8')) as DbIndex;
    return typeof v.cache_built_at === 'number' ? v.cache_built_at : null;
  } catch {
    return null;
  }
}

/** Removes every learned pattern (and the journal and cache). */
export function clearPatterns(paths: DataPaths): void {
  withLock(paths.patternDb, () => {
    fs.rmSync(paths.patternDb, { force: true });
    fs.rmSync(paths.patternShards, { recursive: true, force: true });
    fs.mkdirSync(paths.patternShards, { recursive: true });
    writeIndex(paths, emptyDb(), 0, null);
    fs.rmSync(paths.learnJournal, { force: true });
    for (const j of journalFiles(paths)) unlinkQuiet(j.file);
    fs.rmSync(paths.predictionCache, { recursive: true, force: true });
    unlinkQuiet(path.join(paths.patterns, 'prediction_cache.json')); // an earlier version's
  });
}
