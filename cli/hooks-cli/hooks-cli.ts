#!/usr/bin/env node
/**
 * hooks-cli: inspect and manage the data the hooks keep in a project's
 * `.hooks_data/`, and install the hooks into Claude Code's settings.
 *
 * Exit codes: 0 success (also: nothing found, cancelled); 1 data access
 * error or failure; 2 usage error, or permission denied (export, restore,
 * install).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import yargs from 'yargs';
import { BackupError, createBackup, listBackups, restoreBackup } from './lib/backup';
import { formatPercent } from './lib/context';
import { hostSettingsPath, InstallScopeError, mergeHooks, readHostSettings, removeOurHooks, renderTemplate, toHostHooks, HOOK_FILES, type Scope } from './lib/install';
import { clearPatterns, fold, readDb } from './lib/learner';
import { listSessions, readState, type SessionState } from './lib/session';
import { loadSettings, SettingsError } from './lib/settings';
import type { Settings } from './lib/settings-schema';
import { dataPaths, readJsonLines, writeFileAtomic, writeJsonAtomic, type DataPaths } from './lib/store';
import { formatDuration } from './lib/time';

/** Where config/ and hooks/ are: HOOKS_CLI_ROOT, this file's folder (a bundled install), or the repository's cli/hooks-cli (run from dist/). */
export function installRoot(): string {
  const candidates = [process.env.HOOKS_CLI_ROOT, __dirname, path.resolve(__dirname, '..', '..', '..', 'cli', 'hooks-cli')];
  for (const c of candidates) if (c && fs.existsSync(path.join(c, 'config', 'settings.json'))) return path.resolve(c);
  throw new CliError(1, `cannot find the hooks-cli install (config/settings.json) near ${__dirname}; set HOOKS_CLI_ROOT`);
}

class CliError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}

class UsageError extends Error {}

const PERMISSION_CODES = new Set(['EACCES', 'EPERM', 'EROFS']);
const isPermission = (err: unknown) => PERMISSION_CODES.has((err as NodeJS.ErrnoException)?.code ?? '');

const useColor = () => process.stdout.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
const bold = (s: string) => (useColor() ? `\x1b[1m${s}\x1b[22m` : s);

interface Common {
  'project-dir': string;
  json: boolean;
}

function projectOf(argv: Common): DataPaths {
  return dataPaths(path.resolve(argv['project-dir']));
}

function settingsFor(paths: DataPaths): Settings {
  try {
    return loadSettings(installRoot(), paths.project);
  } catch (err) {
    if (err instanceof SettingsError) throw new CliError(1, `${err.message}\nFix the file (hooks-cli config shows what is in effect).`);
    throw err;
  }
}

function out(argv: Common, data: unknown, text: () => string): void {
  process.stdout.write(argv.json ? JSON.stringify(data, null, 2) + '\n' : text() + '\n');
}

function sessionSummary(s: SessionState, cm: Settings['context_monitor'], nowMs: number) {
  const end = s.ended_at ? Date.parse(s.ended_at) : nowMs;
  const durationMs = end - Date.parse(s.start_time);
  const recommendation = s.context.usage >= cm.emergency_threshold ? 'urgent' : s.context.usage >= cm.backup_threshold ? 'recommended' : 'not needed';
  return {
    session_id: s.session_id,
    start_time: s.start_time,
    last_activity: s.last_activity,
    duration_seconds: Math.round(durationMs / 1000),
    ended: s.ended_at !== null,
    context_usage: s.context.usage,
    tool_executions: Object.values(s.tool_usage).reduce((a, b) => a + b, 0),
    files_modified: s.modified_files.length,
    commands_executed: s.commands_executed.length,
    backup_recommendation: recommendation,
    backups: s.backup_history.length,
  };
}

/**
 * The current session (the one with the latest activity; `--session ID`
 * another), or with `--all` every session recorded in the project (several
 * terminals can run sessions in one project at once).
 */
function status(argv: Common & { all: boolean; session?: string }): void {
  const paths = projectOf(argv);
  const settings = settingsFor(paths);
  const cm = settings.context_monitor;
  if (!fs.existsSync(paths.sessionState) && !fs.existsSync(paths.sessions)) {
    throw new CliError(1, `no session data in ${paths.root}: the hooks have not run in this project yet (install them with hooks-cli install, or pass --project-dir)`);
  }
  if (argv.all) {
    let all: SessionState[];
    try {
      all = listSessions(paths);
    } catch (err) {
      throw new CliError(1, `cannot read the sessions in ${paths.sessions}: ${(err as Error).message}`);
    }
    const rows = all.map((x) => sessionSummary(x, cm, Date.now()));
    out(argv, { current: rows[0]?.session_id ?? null, sessions: rows }, () =>
      rows.length === 0
        ? 'No sessions recorded.'
        : [
            bold(`${rows.length} session${rows.length === 1 ? '' : 's'} (latest activity first)`),
            ...rows.map(
              (r, i) =>
                `${i === 0 ? '* ' : '  '}${r.session_id}  last activity ${r.last_activity}${r.ended ? ' (ended)' : ''}  context ${formatPercent(r.context_usage)}  ${r.tool_executions} tool runs  ${r.backups} backups`,
            ),
          ].join('\n'),
    );
    return;
  }
  let s;
  try {
    s = readState(paths, new Date(), argv.session ?? null);
  } catch (err) {
    throw new CliError(1, `cannot read ${argv.session ? `session ${argv.session}` : paths.sessionState}: ${(err as Error).message}`);
  }
  if (!s && argv.session) throw new CliError(1, `no session ${argv.session} in ${paths.root}; hooks-cli status --all lists them`);
  if (!s) throw new CliError(1, `${paths.sessionState} was unreadable and has been set aside; the next hook run starts a new session`);
  const data = sessionSummary(s, cm, Date.now());
  const others = argv.session ? 0 : listSessions(paths).length - 1;
  const recommendation = data.backup_recommendation;
  out(argv, { ...data, other_sessions: Math.max(0, others) }, () =>
    [
      `${bold('Session')}: ${s.session_id} (${formatDuration(data.duration_seconds * 1000)}${s.ended_at ? ', ended' : ''})`,
      `Context usage: ${formatPercent(s.context.usage)}`,
      `Tool executions: ${data.tool_executions}`,
      `Files modified: ${s.modified_files.length}`,
      `Commands executed: ${s.commands_executed.length}`,
      `Backup: ${recommendation === 'not needed' ? 'not needed' : `${recommendation} (context above ${formatPercent(recommendation === 'urgent' ? cm.emergency_threshold : cm.backup_threshold)})`}; ${s.backup_history.length} taken this session`,
      ...(others > 0 ? [`Other sessions in this project: ${others} (hooks-cli status --all)`] : []),
    ].join('\n'),
  );
}

function listBackupsCmd(argv: Common): void {
  const paths = projectOf(argv);
  const all = listBackups(paths);
  out(argv, all, () => (all.length === 0 ? 'No backups found.' : all.map((b) => `${b.backup_id}\n${b.timestamp}\n${b.reason}${b.success ? '' : ' [FAILED]'}`).join('\n\n')));
}

function patternsCmd(argv: Common & { limit: number }): void {
  const paths = projectOf(argv);
  const settings = settingsFor(paths);
  let db;
  try {
    if (fs.existsSync(paths.learnJournal)) fold(paths, settings, new Date());
    db = readDb(paths);
  } catch (err) {
    throw new CliError(1, `cannot access the patterns database ${paths.patternDb}: ${(err as Error).message}`);
  }
  const score = (p: { confidence: number; evidence_count: number }) => p.confidence * Math.log1p(p.evidence_count);
  const cmd = Object.values(db.command_patterns).sort((a, b) => score(b) - score(a)).slice(0, argv.limit);
  const ctx = Object.entries(db.context_patterns).sort((a, b) => score(b[1]) - score(a[1])).slice(0, argv.limit);
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  out(
    argv,
    { command_patterns: cmd, context_patterns: Object.fromEntries(ctx), totals: { command_patterns: Object.keys(db.command_patterns).length, context_patterns: Object.keys(db.context_patterns).length } },
    () => {
      const lines = [bold(`Command patterns (top ${cmd.length} of ${Object.keys(db.command_patterns).length})`)];
      if (cmd.length === 0) lines.push('  none learned yet');
      for (const p of cmd) lines.push(`  ${p.trigger.command}: confidence ${pct(p.confidence)}, evidence ${p.evidence_count}, success rate ${pct(p.success_rate)}`);
      lines.push('', bold(`Context patterns (top ${ctx.length} of ${Object.keys(db.context_patterns).length})`));
      if (ctx.length === 0) lines.push('  none learned yet');
      for (const [, p] of ctx) lines.push(`  ${p.trigger.error_type} (${p.trigger.tool}): confidence ${pct(p.confidence)}, evidence ${p.evidence_count}`);
      return lines.join('\n');
    },
  );
}

function ask(question: string): Promise<string> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  return new Promise((resolve) => {
    rl.question(question, (answer) => {
      resolve(answer); // before close(), whose 'close' event would resolve with ''
      rl.close();
    });
    rl.on('close', () => resolve(''));
  });
}

async function clearPatternsCmd(argv: Common & { yes: boolean }): Promise<void> {
  const paths = projectOf(argv);
  let total: number;
  try {
    const db = readDb(paths);
    total = Object.keys(db.command_patterns).length + Object.keys(db.context_patterns).length;
  } catch (err) {
    throw new CliError(1, `cannot access the patterns database ${paths.patternDb}: ${(err as Error).message}`);
  }
  if (!argv.yes) {
    if (!process.stdin.isTTY) {
      out(argv, { cleared: false, reason: 'no terminal to confirm on' }, () => 'Cancelled: no terminal to confirm on. Run again with --yes to clear the patterns.');
      return;
    }
    const answer = (await ask(`Remove all ${total} learned patterns? [y/N] `)).trim().toLowerCase();
    if (answer !== 'y' && answer !== 'yes') {
      out(argv, { cleared: false, reason: 'cancelled' }, () => 'Cancelled.');
      return;
    }
  }
  try {
    fs.mkdirSync(paths.patterns, { recursive: true });
    clearPatterns(paths);
  } catch (err) {
    throw new CliError(1, `cannot clear the patterns database ${paths.patternDb}: ${(err as Error).message}`);
  }
  out(argv, { cleared: true, removed: total }, () => `Removed ${total} learned patterns.`);
}

function exportCmd(argv: Common & { directory: string }): void {
  const paths = projectOf(argv);
  const dir = path.resolve(argv.directory);
  try {
    fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
    const state = readState(paths);
    const history = readJsonLines(paths.completions);
    writeJsonAtomic(path.join(dir, 'session_data.json'), { exported_at: new Date().toISOString(), project: paths.project, session_state: state, session_history: history, backups: listBackups(paths) });
    writeJsonAtomic(path.join(dir, 'patterns.json'), readDb(paths));
    let copied = 0;
    if (fs.existsSync(paths.logs)) {
      for (const name of fs.readdirSync(paths.logs)) {
        if (!name.endsWith('.jsonl') && !name.endsWith('.log')) continue;
        fs.copyFileSync(path.join(paths.logs, name), path.join(dir, 'logs', name));
        copied++;
      }
    }
    out(argv, { directory: dir, files: ['session_data.json', 'patterns.json'], logs: copied }, () => `Exported session data, patterns and ${copied} log files to ${dir}`);
  } catch (err) {
    if (isPermission(err)) throw new CliError(2, `permission denied writing to ${dir} (${(err as NodeJS.ErrnoException).code}); choose a directory you can write to`);
    throw new CliError(1, `export to ${dir} failed: ${(err as Error).message}`);
  }
}

function readTemplate(root: string): string {
  return fs.readFileSync(path.join(root, 'config', 'hooks.json.template'), 'utf8');
}

function hooksBuilt(root: string): void {
  const missing = HOOK_FILES.filter((f) => !fs.existsSync(path.join(root, 'hooks', f)));
  if (missing.length) throw new CliError(1, `the hook scripts are not built (${missing.join(', ')} missing in ${path.join(root, 'hooks')}); run npm run build`);
}

function settingsTarget(argv: Common & { scope: Scope; 'settings-file'?: string }): string {
  return argv['settings-file'] ? path.resolve(argv['settings-file']) : hostSettingsPath(argv.scope, path.resolve(argv['project-dir']), os.homedir());
}

function writeHostSettings(file: string, settings: Record<string, unknown>): void {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    if (fs.existsSync(file) && !fs.existsSync(`${file}.hooks-cli.bak`)) fs.copyFileSync(file, `${file}.hooks-cli.bak`);
    writeFileAtomic(file, JSON.stringify(settings, null, 2) + '\n');
  } catch (err) {
    if (isPermission(err)) throw new CliError(2, `permission denied writing ${file}`);
    throw err;
  }
}

function installCmd(argv: Common & { scope: Scope; 'settings-file'?: string; 'dry-run': boolean }): void {
  const root = installRoot();
  hooksBuilt(root);
  const paths = projectOf(argv);
  const settings = settingsFor(paths);
  const timeoutSec = Math.ceil(settings.performance.max_hook_execution_time / 1000) + 5;
  // A project-scope file is committed: its commands name the install relative to the project, for every clone.
  const shared = argv.scope === 'project' && !argv['settings-file'];
  let ours;
  try {
    ours = toHostHooks(renderTemplate(readTemplate(root), root, shared ? paths.project : null), timeoutSec);
  } catch (err) {
    if (err instanceof InstallScopeError) throw new CliError(1, err.message);
    throw err;
  }
  const file = settingsTarget(argv);
  const host = readHostSettings(file);
  const merged = mergeHooks(host, ours);
  if (!argv['dry-run']) writeHostSettings(file, merged);
  out(argv, { settings_file: file, install_path: root, events: Object.keys(ours), dry_run: argv['dry-run'], settings: merged }, () =>
    argv['dry-run']
      ? JSON.stringify(merged, null, 2)
      : `Installed hooks-cli hooks (${Object.keys(ours).join(', ')}) into ${file}\nHook scripts: ${path.join(root, 'hooks')}\nRemove them with: hooks-cli uninstall${argv['settings-file'] ? ` --settings-file ${file}` : ` --scope ${argv.scope}`}`,
  );
}

function uninstallCmd(argv: Common & { scope: Scope; 'settings-file'?: string }): void {
  const file = settingsTarget(argv);
  const host = readHostSettings(file);
  const removed = removeOurHooks(host);
  if (removed > 0) writeHostSettings(file, host);
  out(argv, { settings_file: file, removed }, () => (removed > 0 ? `Removed ${removed} hooks-cli hooks from ${file}` : `No hooks-cli hooks in ${file}`));
}

function restoreCmd(argv: Common & { backup_id: string }): void {
  const paths = projectOf(argv);
  const settings = settingsFor(paths);
  try {
    const safety = createBackup(paths, settings, `before restoring ${argv.backup_id}`, new Date(), settings.performance.max_hook_execution_time * 4);
    const { meta, files } = restoreBackup(paths, argv.backup_id);
    out(argv, { restored: meta.backup_id, method: meta.method, files, safety_backup: safety.success ? safety.backup_id : null }, () =>
      `Restored ${files} files from ${meta.backup_id} (${meta.method}, ${meta.timestamp}: ${meta.reason}).${safety.success && safety.backup_id !== meta.backup_id ? `\nThe state before the restore is in ${safety.backup_id}.` : ''}`,
    );
  } catch (err) {
    if (err instanceof BackupError) throw new CliError(1, err.message);
    if (isPermission(err)) throw new CliError(2, `permission denied restoring ${argv.backup_id}: ${(err as Error).message}`);
    throw new CliError(1, `restore of ${argv.backup_id} failed: ${(err as Error).message}`);
  }
}

function configCmd(argv: Common): void {
  const paths = projectOf(argv);
  const settings = settingsFor(paths);
  out(argv, settings, () => JSON.stringify(settings, null, 2));
}

export async function main(args: string[]): Promise<number> {
  let exitCode = 0;
  const run = (fn: (a: never) => void | Promise<void>) => async (a: unknown) => {
    try {
      await fn(a as never);
    } catch (err) {
      if (err instanceof CliError) {
        process.stderr.write(`hooks-cli: ${err.message}\n`);
        exitCode = err.exitCode;
      } else {
        process.stderr.write(`hooks-cli: ${(err as Error).message}\n`);
        exitCode = 1;
      }
    }
  };
  const parser = yargs(args)
    .scriptName('hooks-cli')
    .usage('$0 <command> [options]\n\nInspect and manage the data of the hooks-cli hooks in a project (.hooks_data/), and install the hooks into Claude Code.')
    .option('project-dir', { type: 'string', default: process.env.CLAUDE_PROJECT_DIR || process.cwd(), defaultDescription: '$CLAUDE_PROJECT_DIR or the current directory', describe: 'the guarded project (holds .hooks_data/)' })
    .option('json', { type: 'boolean', default: false, describe: 'print data as JSON' })
    .command(
      'status',
      'session ID and duration, context usage, tool executions, files modified, commands, backup recommendation',
      (y) =>
        y
          .option('all', { type: 'boolean', default: false, describe: 'list every session recorded in the project, latest activity first' })
          .option('session', { type: 'string', describe: 'show this session instead of the one with the latest activity' }),
      run(status),
    )
    .command('list-backups', 'list backups: ID, time, reason', {}, run(listBackupsCmd))
    .command(
      'patterns',
      'learned command and context patterns',
      (y) => y.option('limit', { type: 'number', default: 10, describe: 'show the top N of each kind' }).check((a) => {
        if (!Number.isInteger(a.limit) || (a.limit as number) < 1) throw new Error('--limit must be a whole number of at least 1');
        return true;
      }),
      run(patternsCmd),
    )
    .command('clear-patterns', 'remove every learned pattern (asks y/N)', (y) => y.option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'do not ask' }), run(clearPatternsCmd))
    .command(
      'export [directory]',
      'write session_data.json, patterns.json and logs/ into a directory',
      (y) => y.positional('directory', { type: 'string', default: 'hooks_export', describe: 'target directory' }),
      run(exportCmd),
    )
    .command(
      'install',
      "add the hooks to Claude Code's settings (idempotent; your own hooks are kept)",
      (y) =>
        y
          .option('scope', { choices: ['project', 'local', 'user'] as const, default: 'local' as Scope, describe: 'project: .claude/settings.json, local: .claude/settings.local.json, user: ~/.claude/settings.json' })
          .option('settings-file', { type: 'string', describe: 'a settings file to use instead of --scope' })
          .option('dry-run', { type: 'boolean', default: false, describe: 'print the merged settings, change nothing' }),
      run(installCmd),
    )
    .command(
      'uninstall',
      "remove the hooks from Claude Code's settings (leaves everything else)",
      (y) =>
        y
          .option('scope', { choices: ['project', 'local', 'user'] as const, default: 'local' as Scope })
          .option('settings-file', { type: 'string' }),
      run(uninstallCmd),
    )
    .command('restore <backup_id>', "bring a backup's files back (a backup of the current state is taken first)", (y) => y.positional('backup_id', { type: 'string', demandOption: true }), run(restoreCmd))
    .command('config', 'show the settings in effect (validated)', {}, run(configCmd))
    .demandCommand(1, 'name a command (see --help)')
    .strict()
    .help()
    .alias('h', 'help')
    .version(false)
    .epilogue('Exit codes: 0 success (also nothing found or cancelled); 1 data access error or failure; 2 usage error or permission denied.\nEnvironment: CLAUDE_PROJECT_DIR, HOOKS_CLI_ROOT, NO_COLOR.')
    .wrap(Math.min(100, process.stdout.columns || 100))
    .fail((msg, err) => {
      throw new UsageError(msg ?? err?.message ?? 'invalid usage');
    });
  try {
    await parser.parseAsync();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`hooks-cli: ${err.message}\nRun hooks-cli --help for usage.\n`);
    return 2;
  }
  return exitCode;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: Error) => {
      process.stderr.write(`hooks-cli: ${err.message}\n`);
      process.exitCode = 1;
    },
  );
}
