/**
 * `npm start` as a user runs it (the real npm on PATH, the repository's own
 * package.json scripts and cli/ensure-built.mjs), in a scratch copy of the
 * project whose dist/ is the CLI built for the tests: with a current build
 * it starts the server without compiling anything; killing the npm process
 * stops the server's node process too (it used to be left running, holding
 * the port); and cli/ensure-built.mjs compiles exactly when a source is
 * newer than the last successful build, and fails when the build does.
 * (How long a start takes is measured in bench/npm-start.ts, not here.)
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { buildCli, cliEnv, until } from '../helpers/cli';

const REPO = path.resolve(__dirname, '..', '..');
const cli = buildCli(t);

/** Pids of every process running in `dir` (npm and what it starts run there) or naming it. */
function processesUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readlinkSync(`/proc/${entry}/cwd`) === dir || fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** A scratch project: the real package.json, tsconfig.json and cli/ensure-built.mjs, dist/ = the test build, stamped current. */
function scratchProject(t: Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'positioner-npm-start-'));
  t.teardown(() => {
    for (const pid of processesUnder(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  for (const file of ['package.json', 'tsconfig.json', 'cli/ensure-built.mjs']) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.copyFileSync(path.join(REPO, file), path.join(dir, file));
  }
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'junction');
  fs.mkdirSync(path.join(dir, 'dist'));
  for (const entry of fs.readdirSync(cli.dir)) {
    if (entry !== 'node_modules' && entry !== 'package.json') fs.symlinkSync(path.join(cli.dir, entry), path.join(dir, 'dist', entry));
  }
  // The sources are older than the build.
  const past = Date.now() / 1000 - 3600;
  for (const file of ['package.json', 'tsconfig.json']) fs.utimesSync(path.join(dir, file), past, past);
  fs.writeFileSync(path.join(dir, 'dist', '.build-stamp'), 'test\n');
  return dir;
}

t.test('npm start with a current build serves without compiling; killing npm stops the node server too', async (t) => {
  const dir = scratchProject(t);
  const stampBefore = fs.statSync(path.join(dir, 'dist', '.build-stamp')).mtimeMs;
  const startedMs = Date.now();
  const npm = spawn('npm', ['start', '--silent', '--', '--port', '0', '--quiet'], { cwd: dir, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  npm.stdout.on('data', (d: Buffer) => (stdout += d));
  npm.stderr.on('data', (d: Buffer) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
  await until('the server to say where it serves', () => /serving (http:\/\/\S+);/.test(stdout), 60_000);
  t.comment(`npm start to serving: ${Date.now() - startedMs} ms`);
  const url = /serving (http:\/\/\S+);/.exec(stdout)![1];
  t.equal((await fetch(`${url}/status`)).status, 200, 'the API answers');
  t.notMatch(stderr, /building|built in/, `nothing was compiled (stderr: ${stderr.trim()})`);
  t.equal(fs.statSync(path.join(dir, 'dist', '.build-stamp')).mtimeMs, stampBefore, 'the build stamp is untouched');
  const servers = processesUnder(dir).filter((pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('positioner.js'));
  t.equal(servers.length, 1, 'one node process runs the server');

  npm.kill('SIGTERM');
  await exited;
  await until('the server process to end', () => processesUnder(dir).length === 0, 10_000);
  t.same(processesUnder(dir), [], 'no process of the project is left');
  const refused = await fetch(`${url}/status`).then(
    () => false,
    () => true,
  );
  t.ok(refused, 'the port is free again');
});

t.test('npm run space goes through the same staleness check, and execs the server', async (t) => {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  // `space` serves by default (its other command, vapid-keys, is named after `--`), so its script names no command.
  t.equal(pkg.scripts.start, 'node cli/ensure-built.mjs && exec node dist/cli/positioner.js serve', `start: ${pkg.scripts.start}`);
  t.equal(pkg.scripts.space, 'node cli/ensure-built.mjs && exec node dist/cli/space.js', `space: ${pkg.scripts.space}`);
  t.notOk(pkg.scripts.prestart, 'no full build before every start');
});

t.test('ensure-built compiles on the first run, not when current (nor for a test edit), again when a source is newer, and fails with the build', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'positioner-ensure-built-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, 'cli'));
  fs.mkdirSync(path.join(dir, 'src'));
  fs.copyFileSync(path.join(REPO, 'cli', 'ensure-built.mjs'), path.join(dir, 'cli', 'ensure-built.mjs'));
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'junction');
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name": "scratch", "private": true}\n');
  fs.mkdirSync(path.join(dir, 'test'));
  fs.writeFileSync(path.join(dir, 'test', 'a.test.ts'), 'export const t = 1;\n');
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { outDir: 'dist', rootDir: '.', strict: true, types: [] }, include: ['src', 'test'] }));
  const source = path.join(dir, 'src', 'a.ts');
  fs.writeFileSync(source, 'export const a: number = 1;\n');
  const past = Date.now() / 1000 - 3600;
  for (const file of ['package.json', 'tsconfig.json', 'src/a.ts', 'test/a.test.ts']) fs.utimesSync(path.join(dir, file), past, past);
  const run = () => spawnSync(process.execPath, [path.join(dir, 'cli', 'ensure-built.mjs')], { cwd: dir, encoding: 'utf8' });

  let r = run();
  t.equal(r.status, 0, r.stderr);
  t.match(r.stderr, /building \(first start\)/);
  t.ok(fs.existsSync(path.join(dir, 'dist', 'src', 'a.js')), 'compiled');
  r = run();
  t.equal(r.status, 0);
  t.equal(r.stderr, '', 'current: nothing compiled, nothing said');
  fs.writeFileSync(path.join(dir, 'test', 'a.test.ts'), 'export const t = 2;\n');
  r = run();
  t.equal(r.stderr, '', 'a test changed: the servers do not run it, nothing compiled');
  fs.writeFileSync(source, 'export const a: number = 2;\n');
  r = run();
  t.match(r.stderr, /sources changed since the last build: building/);
  t.match(fs.readFileSync(path.join(dir, 'dist', 'src', 'a.js'), 'utf8'), /a = 2/, 'the change is built');
  fs.writeFileSync(source, 'export const a: number = "two";\n');
  r = run();
  t.not(r.status, 0, 'a failed build fails the start');
  t.match(r.stderr, /the build failed/);
  r = run();
  t.match(r.stderr, /building/, 'and is tried again next time (no stamp for a failed build)');
});
