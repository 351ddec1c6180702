/**
 * `hooks-cli install` / `uninstall` against Claude Code's real settings
 * shape, and the installed hooks run end to end as the host runs them: the
 * command line taken from the settings file, run by a shell, the host's JSON
 * on stdin, CLAUDE_PROJECT_DIR set, in an install path with a space in it.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { failClosed, isOurCommand, mergeHooks, removeOurHooks, renderTemplate, toHostHooks } from '../../cli/hooks-cli/lib/install';
import { buildInstall, hostInput, readJsonFile, runCli, tempDir, tempProject, type Install, type Project } from '../helpers/hooks';

const built = buildInstall(t);

/** The install copied to a path with a space, as users' home folders sometimes have. */
function spacedInstall(): Install {
  const parent = tempDir(t, 'hooks cli ');
  const root = path.join(parent, 'My Tools', 'hooks-cli');
  fs.cpSync(built.root, root, { recursive: true, verbatimSymlinks: true });
  return { root, cli: path.join(root, 'hooks-cli.js'), hook: (n) => path.join(root, 'hooks', `${n}.js`) };
}
const inst = spacedInstall();

const TEMPLATE = fs.readFileSync(path.join(__dirname, '..', '..', 'cli', 'hooks-cli', 'config', 'hooks.json.template'), 'utf8');

t.test('the template is the spec’s shape and renders into the host’s shape, with derived PreCompact and PostToolUseFailure', async (t) => {
  const tpl = JSON.parse(TEMPLATE);
  t.same(Object.keys(tpl.hooks), ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']);
  t.type(tpl.hooks.UserPromptSubmit, 'string');
  t.same(Object.keys(tpl.hooks.PreToolUse), ['Bash']);
  t.same(Object.keys(tpl.hooks.PostToolUse), ['*']);
  t.match(tpl.hooks.Stop, /\{\{INSTALL_PATH\}\}\/hooks\/session-finalizer\.js/);
  const host = toHostHooks(renderTemplate(TEMPLATE, "/opt/it's here"), 10);
  t.same(host.PreToolUse, [{ matcher: 'Bash', hooks: [{ type: 'command', command: failClosed(`node '/opt/it'\\''s here'/hooks/command-validator.js`), timeout: 10 }] }]);
  t.match(host.PreToolUse[0].hooks[0].command, /^node '\/opt\/it'\\''s here'\/hooks\/command-validator\.js; s=\$\?; case \$s in 0\|2\) exit \$s;; esac; echo "hooks-cli: the PreToolUse guard could not run .*" >&2; exit 2$/);
  t.equal(host.UserPromptSubmit[0].hooks[0].command, `node '/opt/it'\\''s here'/hooks/context-monitor.js`, 'only PreToolUse fails closed');
  t.same(host.UserPromptSubmit, [{ hooks: [{ type: 'command', command: `node '/opt/it'\\''s here'/hooks/context-monitor.js`, timeout: 10 }] }]);
  t.equal(host.PreCompact[0].hooks[0].command, host.UserPromptSubmit[0].hooks[0].command);
  t.same(host.PostToolUseFailure, host.PostToolUse);
  t.equal(host.PostToolUse[0].matcher, '*');
});

t.test('merging keeps the user’s hooks and settings, and is idempotent; uninstall takes only ours out', async (t) => {
  const user = { model: 'opus', hooks: { PreToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: 'my-lint.sh' }] }], Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }] } };
  const ours = toHostHooks(renderTemplate(TEMPLATE, '/x'), 10);
  const once = mergeHooks(structuredClone(user), ours);
  const twice = mergeHooks(structuredClone(once), ours);
  t.same(twice, once, 'a second install changes nothing');
  t.equal((once.hooks as any).PreToolUse.length, 2);
  t.equal((once.hooks as any).Stop.length, 2);
  const moved = mergeHooks(structuredClone(once), toHostHooks(renderTemplate(TEMPLATE, '/elsewhere'), 10));
  t.equal((moved.hooks as any).PreToolUse.length, 2, 'reinstalling from another path replaces, not adds');
  t.match((moved.hooks as any).PreToolUse[1].hooks[0].command, /^node \/elsewhere\//);
  const back = structuredClone(once);
  t.equal(removeOurHooks(back), 6);
  t.same(back, user, 'uninstall restores the user’s file exactly');
  t.ok(isOurCommand('node /a/b/hooks/session-logger.js'));
  t.ok(isOurCommand("node '/a b/hooks/session-logger.js'"));
  t.notOk(isOurCommand('node /a/b/hooks/session-logger.jsx'));
  t.notOk(isOurCommand('my-lint.sh'));
});

function runShell(command: string, input: unknown, p: Project): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // As the host does: a shell runs the command line, JSON on stdin, CLAUDE_PROJECT_DIR set, cwd the project.
    const child = spawn('/bin/sh', ['-c', command], { cwd: p.dir, env: p.env(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.on('error', () => undefined); // a hook that cannot start never reads it
    child.stdin.end(JSON.stringify(input));
  });
}

function commandFor(settings: any, event: string, tool?: string): string {
  const groups = settings.hooks[event] as { matcher?: string; hooks: { command: string }[] }[];
  const g = groups.find((x) => x.matcher === undefined || x.matcher === '*' || x.matcher === '' || (tool !== undefined && new RegExp(`^(${x.matcher})$`).test(tool)));
  if (!g) throw new Error(`no ${event} hook for ${tool}`);
  return g.hooks[0].command;
}

t.test('install into .claude/settings.local.json, then the hooks run from it as the host runs them', async (t) => {
  const p = tempProject(t, { git: true });
  fs.mkdirSync(path.join(p.dir, '.claude'));
  const file = path.join(p.dir, '.claude', 'settings.local.json');
  fs.writeFileSync(file, JSON.stringify({ permissions: { allow: ['Bash(npm test)'] }, hooks: { PostToolUse: [{ matcher: 'Edit', hooks: [{ type: 'command', command: 'prettier-hook' }] }] } }));
  const r = await runCli(inst, p, ['install']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /Installed hooks-cli hooks \(UserPromptSubmit, PreToolUse, PostToolUse, Stop, PreCompact, PostToolUseFailure\) into .*settings\.local\.json/);
  const settings = readJsonFile(file);
  t.same(settings.permissions, { allow: ['Bash(npm test)'] }, 'other settings kept');
  t.equal(settings.hooks.PostToolUse[0].hooks[0].command, 'prettier-hook', 'the user’s hook kept, first');
  t.equal(settings.hooks.PreToolUse[0].hooks[0].timeout, 10, 'timeout: max_hook_execution_time plus a margin, in seconds');
  const again = await runCli(inst, p, ['install']);
  t.equal(again.code, 0);
  t.same(readJsonFile(file), settings, 'idempotent');
  t.ok(fs.existsSync(`${file}.hooks-cli.bak`), 'the original kept once as .hooks-cli.bak');

  // End to end, through /bin/sh, from the installed command lines (the install path has spaces).
  const validator = commandFor(settings, 'PreToolUse', 'Bash');
  t.match(validator, /'.*My Tools.*'/, 'the path is quoted for the shell');
  const block = await runShell(validator, hostInput(p, 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'rm -rf ~' } }), p);
  t.equal(block.code, 2, 'the host would block it');
  t.match(block.stderr, /⛔ Command blocked: recursive delete of the home directory/);
  const allow = await runShell(validator, hostInput(p, 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'npm test' } }), p);
  t.equal(allow.code, 0);
  const prompt = await runShell(commandFor(settings, 'UserPromptSubmit'), hostInput(p, 'UserPromptSubmit', { prompt: 'hello' }), p);
  t.equal(prompt.code, 0);
  t.match(JSON.parse(prompt.stdout).hookSpecificOutput.additionalContext, /^Context usage: /);
  const post = await runShell(commandFor(settings, 'PostToolUse', 'Bash'), hostInput(p, 'PostToolUse', { tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_response: { stdout: 'ok' } }), p);
  t.equal(post.code, 0);
  const fail = await runShell(commandFor(settings, 'PostToolUseFailure', 'Bash'), hostInput(p, 'PostToolUseFailure', { tool_name: 'Bash', tool_input: { command: 'npm run build' }, error: 'exit 1' }), p);
  t.equal(fail.code, 0);
  const compact = await runShell(commandFor(settings, 'PreCompact'), hostInput(p, 'PreCompact', { trigger: 'auto' }), p);
  t.equal(compact.code, 0);
  const stop = await runShell(commandFor(settings, 'Stop'), hostInput(p, 'Stop', { stop_hook_active: false }), p);
  t.equal(stop.code, 0);
  const state = readJsonFile(path.join(p.data, 'session_state.json'));
  t.same(state.tool_usage, { Bash: 2 });
  t.equal(state.backup_history[0].reason, 'before context compaction (auto)');
  t.match(p.read('.hooks_data/LAST_SESSION.md'), /Session: sess-1/);
  t.match(p.read('.hooks_data/RECOVERY_GUIDE.md'), /the last tool run failed/);
  t.equal(p.git('status', '--porcelain', '--', '.hooks_data'), '', '.hooks_data never shows up in git status');

  const un = await runCli(inst, p, ['uninstall']);
  t.equal(un.code, 0);
  t.match(un.stdout, /Removed 6 hooks-cli hooks/);
  t.same(readJsonFile(file), { permissions: { allow: ['Bash(npm test)'] }, hooks: { PostToolUse: [{ matcher: 'Edit', hooks: [{ type: 'command', command: 'prettier-hook' }] }] } });
  const none = await runCli(inst, p, ['uninstall', '--json']);
  t.same(none.json, { settings_file: file, removed: 0 });
});

t.test('install: --scope project and user, --settings-file, --dry-run; a broken settings file is left alone (exit 1)', async (t) => {
  const p = tempProject(t);
  const proj = await runCli(inst, p, ['install', '--scope', 'project', '--json']);
  t.equal(proj.code, 1, 'an install outside the project cannot be named in a shared settings file');
  t.match(proj.stderr, /is outside the project .* would not exist on a teammate's clone; add hooks-cli to the project .* or install with --scope local/);
  t.notOk(fs.existsSync(path.join(p.dir, '.claude', 'settings.json')), 'nothing written');
  const user = await runCli(inst, p, ['install', '--scope', 'user']);
  t.equal(user.code, 0);
  t.ok(fs.existsSync(path.join(p.home, '.claude', 'settings.json')), 'HOME/.claude/settings.json');
  const custom = path.join(p.dir, 'custom.json');
  const dry = await runCli(inst, p, ['install', '--settings-file', custom, '--dry-run']);
  t.equal(dry.code, 0);
  t.ok(JSON.parse(dry.stdout).hooks.PreToolUse);
  t.notOk(fs.existsSync(custom), 'dry run writes nothing');
  fs.writeFileSync(custom, '{"hooks": [');
  const broken = await runCli(inst, p, ['install', '--settings-file', custom]);
  t.equal(broken.code, 1);
  t.match(broken.stderr, /is not valid JSON .*; fix it by hand, nothing was changed/);
  t.equal(fs.readFileSync(custom, 'utf8'), '{"hooks": [');
  const bare = tempDir(t, 'hooks-bare-');
  fs.cpSync(path.join(inst.root, 'config'), path.join(bare, 'config'), { recursive: true });
  fs.copyFileSync(inst.cli, path.join(bare, 'hooks-cli.js'));
  fs.symlinkSync(path.join(inst.root, 'node_modules'), path.join(bare, 'node_modules'));
  const unbuilt = await runCli({ ...inst, root: bare, cli: path.join(bare, 'hooks-cli.js') }, p, ['install']);
  t.equal(unbuilt.code, 1);
  t.match(unbuilt.stderr, /the hook scripts are not built .* run npm run build/);
});

t.test('install --scope project names the install relative to $CLAUDE_PROJECT_DIR: the hooks run from a teammate’s clone; a guard that cannot start blocks (exit 2)', async (t) => {
  const p = tempProject(t, { git: true });
  const root = path.join(p.dir, 'tools', 'hooks-cli');
  fs.cpSync(built.root, root, { recursive: true, verbatimSymlinks: true });
  const inProject: Install = { root, cli: path.join(root, 'hooks-cli.js'), hook: (name) => path.join(root, 'hooks', `${name}.js`) };
  const r = await runCli(inProject, p, ['install', '--scope', 'project']);
  t.equal(r.code, 0, r.stderr);
  const text = fs.readFileSync(path.join(p.dir, '.claude', 'settings.json'), 'utf8');
  t.notMatch(text, new RegExp(p.dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'no machine-specific path in the shared file');
  const settings = JSON.parse(text);
  const pre = commandFor(settings, 'PreToolUse', 'Bash');
  t.match(pre, /^node "\$CLAUDE_PROJECT_DIR"\/tools\/hooks-cli\/hooks\/command-validator\.js; /);
  t.match(commandFor(settings, 'Stop'), /^node "\$CLAUDE_PROJECT_DIR"\/tools\/hooks-cli\/hooks\/session-finalizer\.js$/);

  // A teammate's clone, somewhere else: the same commands work there.
  const clone = tempProject(t);
  fs.rmSync(clone.dir, { recursive: true });
  fs.cpSync(p.dir, clone.dir, { recursive: true, verbatimSymlinks: true });
  fs.rmSync(path.join(clone.dir, '.hooks_data'), { recursive: true, force: true });
  const block = await runShell(pre, hostInput(clone, 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'rm -rf /' } }), clone);
  t.equal(block.code, 2, 'blocked in the clone');
  t.match(block.stderr, /⛔ Command blocked/);
  const ok = await runShell(pre, hostInput(clone, 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'ls -la' } }), clone);
  t.equal(ok.code, 0, ok.stderr);
  t.ok(fs.existsSync(path.join(clone.dir, '.hooks_data')), 'the clone’s own data folder');

  // The clone without the hook scripts (not built yet): the guard fails closed, with a reason.
  fs.rmSync(path.join(clone.dir, 'tools', 'hooks-cli', 'hooks'), { recursive: true });
  const missing = await runShell(pre, hostInput(clone, 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'ls' } }), clone);
  t.equal(missing.code, 2, 'exit 2 (blocks), not 1 (which the host ignores)');
  t.match(missing.stderr, /hooks-cli: the PreToolUse guard could not run \(exit 1; .*\); the call is blocked until it runs/);
  // No node on PATH: 127 from the shell becomes 2 as well.
  const noNode = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn('/bin/sh', ['-c', pre], { cwd: p.dir, env: { ...p.env(), PATH: '/nonexistent' }, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
    child.stdin.on('error', () => undefined); // the shell may exit before reading it
    child.stdin.end('{}');
  });
  t.equal(noNode.code, 2);
  t.match(noNode.stderr, /could not run \(exit 127;/);
});
