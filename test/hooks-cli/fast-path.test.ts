/**
 * The validator's fast path (lib/fast-path.ts) is a strict subset of what the
 * deep analysis lets through without a word: every line it takes, over the
 * whole corpus and over generated lines, gets no finding and no backup from
 * the analysis, and the same learner keys; no dangerous line of the corpus is
 * taken; look-alikes of plain lines fall through; and the bundled hook gives
 * byte for byte the same answers with and without it (HOOKS_CLI_NO_FAST_PATH=1),
 * learner warnings included, in both input shapes.
 */
import fc from 'fast-check';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { analyzeCommand } from '../../cli/hooks-cli/lib/command-rules';
import { fastPath, type FastEnv } from '../../cli/hooks-cli/lib/fast-path';
import { applyRuns, buildPredictions, commandKey, emptyDb, writeAllShards, writePredictionCache } from '../../cli/hooks-cli/lib/learner';
import { defaultSettings } from '../../cli/hooks-cli/lib/settings-schema';
import { dataPaths } from '../../cli/hooks-cli/lib/store';
import { buildInstall, hostInput, runHook, tempProject } from '../helpers/hooks';
import { readCorpus } from '../helpers/hooks-corpus';
import { loadHookInProcess } from './validator-harness';

const FIXTURES = path.resolve(__dirname, '..', 'fixtures');

/** Where the lines are judged: a project below the home directory (as the hook tests make), a work tree, root's home. */
const ENVS: FastEnv[] = [
  { cwd: '/tmp/hooks-cli-project-x/home/project', project: '/tmp/hooks-cli-project-x/home/project', home: '/tmp/hooks-cli-project-x/home' },
  { cwd: '/home/dev/work/app', project: '/home/dev/work/app', home: '/home/dev' },
  { cwd: '/root/app', project: '/root/app', home: '/root' },
  { cwd: '/tmp/hooks-cli-project-x/home/project', project: '/tmp/hooks-cli-project-x/home/project', home: '/root' },
];

/** What the deep analysis says of a line, as the hook would act on it: findings, backup, learner keys. */
function deep(line: string, env: FastEnv, branch: string | null) {
  const a = analyzeCommand(line, { ...env, currentBranch: () => branch });
  return { findings: a.findings.map((f) => `${f.level}: ${f.reason}`), critical: a.critical, keys: [...new Set(a.invocations.map((i) => commandKey(i.argv)).filter((k) => k !== null))] };
}

/** Fails unless the analysis is silent on a line the fast path took, with the same learner keys. */
function checkSubset(line: string, env: FastEnv, argvs: string[][], branch: string | null): string | null {
  const d = deep(line, env, branch);
  const keys = [...new Set(argvs.map((a) => commandKey(a)).filter((k) => k !== null))];
  if (d.findings.length > 0) return `findings ${JSON.stringify(d.findings)}`;
  if (d.critical !== null) return `backup: ${d.critical}`;
  if (JSON.stringify(keys) !== JSON.stringify(d.keys)) return `keys ${JSON.stringify(keys)} != ${JSON.stringify(d.keys)}`;
  return null;
}

function corpusFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...corpusFiles(p));
    else if (e.name.endsWith('.txt')) out.push(p);
  }
  return out.sort();
}

t.test('over the whole corpus: no dangerous line is taken, and every line taken is one the analysis lets through silently', async (t) => {
  let ordinary = 0;
  let ordinaryFast = 0;
  let dangerous = 0;
  const wrong: string[] = [];
  for (const root of ['hooks-corpus', 'hooks-corpus-unfixed']) {
    for (const file of corpusFiles(path.join(FIXTURES, root))) {
      const side = file.split(path.sep).includes('dangerous') ? 'dangerous' : file.split(path.sep).includes('ordinary') ? 'ordinary' : null;
      if (side === null) continue;
      for (const line of readCorpus(file)) {
        if (side === 'ordinary') ordinary++;
        else dangerous++;
        let taken = false;
        for (const env of ENVS) {
          const argvs = fastPath(line, env);
          if (argvs === null) continue;
          taken = true;
          if (side === 'dangerous') wrong.push(`dangerous line taken (${path.relative(FIXTURES, file)}): ${line}`);
          for (const branch of ['main', 'feature/x', null]) {
            const why = checkSubset(line, env, argvs, branch);
            if (why) wrong.push(`${path.relative(FIXTURES, file)} (${env.project}, branch ${branch}): ${line}: ${why}`);
          }
        }
        if (taken && side === 'ordinary') ordinaryFast++;
      }
    }
  }
  t.same(wrong, [], 'no line taken wrongly');
  t.ok(ordinary > 1000 && dangerous > 1000, `the corpus was read (${ordinary} ordinary, ${dangerous} dangerous lines)`);
  t.ok(ordinaryFast > 0, `ordinary lines taking the fast path: ${ordinaryFast} of ${ordinary} (${((ordinaryFast / ordinary) * 100).toFixed(1)}%)`);
  t.comment(`fast path: ${ordinaryFast} of ${ordinary} ordinary lines (${((ordinaryFast / ordinary) * 100).toFixed(1)}%), 0 of ${dangerous} dangerous`);
});

t.test('plain lines take the fast path, with the argv of each command', async (t) => {
  const env = ENVS[1];
  t.same(fastPath('cd src && npm test -- --grep parser 2>&1 | tee test.log', env), [['npm', 'test', '--', '--grep', 'parser'], ['tee', 'test.log']]);
  t.same(fastPath('git commit -m "fix(parser): keep the span"', env), [['git', 'commit', '-m', 'fix(parser): keep the span']]);
  t.same(fastPath('grep -rn TODO src | head -20', env), [['grep', '-rn', 'TODO', 'src'], ['head', '-20']]);
  t.same(fastPath('python3 -m pytest tests/ -x -q', env), [['python3', '-m', 'pytest', 'tests/', '-x', '-q']]);
  t.same(fastPath('go test ./... > out.txt 2>&1', env), [['go', 'test', './...']]);
  for (const line of ['git status', 'ls -la', 'npx tsc -p .', 'git diff --stat', 'make -j4 test', 'cargo test -q', 'npm run build 2>/dev/null', 'git log --oneline -n 5 | cat']) {
    t.ok(fastPath(line, env), line);
  }
});

t.test('look-alikes of plain lines fall through to the deep analysis', async (t) => {
  const env = ENVS[1];
  const lines = [
    'rm -rf build',
    'rm test.log',
    'git push -f origin main',
    'git push',
    'git branch -D main',
    'git reset --hard',
    'git clean -fdx',
    'git checkout .',
    'git checkout -- src/app.ts',
    'git restore src',
    'git stash drop',
    'git commit --amend -m x',
    'git -c core.pager=sh log',
    'git diff --output=x.txt',
    'cat ~/.ssh/id_rsa',
    'cat .env',
    'cat config/secrets.json',
    'cat /etc/passwd',
    'cat ../other/file.txt',
    'head -5 credentials.txt',
    'grep -r password ~/.aws',
    'ls ~',
    'ls /',
    'curl https://example.com',
    'wget http://example.com/x.sh',
    'echo x > ~/.bashrc',
    'echo x >> .bashrc',
    'tee ~/.profile',
    'echo x | tee -a .zshrc',
    'npm publish',
    'npm install left-pad',
    'npx some-package',
    'npm test; rm -rf /',
    'npm test && curl x | sh',
    'git status | sh',
    'ls | xargs rm',
    'sudo make install',
    'env X=1 npm test',
    'X=1 npm test',
    'echo $HOME',
    'echo `id`',
    'echo "$(id)"',
    'ls *',
    'cat src/*.ts',
    'cd /tmp && ls',
    'cd .. && ls',
    'cd ~ && ls',
    'npm test &',
    'cat < README.md',
    'cat <<EOF',
    'make && echo done > /etc/motd',
    'echo hi > /dev/sda',
    'echo hi > site-packages/x.pth',
    'tee bin/ls',
    'cat -- .env',
    'grep -r TODO . --include=*.ts',
    'rg --pre=sh TODO',
    'make -f /tmp/Makefile',
    'npm test -- ; id',
    'git log ..',
    'npm test\nrm -rf /',
    "git commit -m 'a\"b'",
    '\\rm -rf x',
  ];
  for (const line of lines) t.equal(fastPath(line, env), null, line);
  t.equal(fastPath('git status', { ...env, cwd: '/home/dev/work/app/sub' }), null, 'a working directory other than the project');
  for (const project of ['/', '/etc/app', '/usr/local', '/home/dev', '/home', '/home/other', '/opt/app', '/home/dev/bin', '/root/app']) {
    t.equal(fastPath('git status', { cwd: project, project, home: '/home/dev' }), null, `project ${project}`);
  }
});

// Lines built of plain programs, look-alikes and hostile words: whatever the fast path takes, the analysis lets through silently.
const HEADS = ['git status', 'git diff', 'git log', 'git show', 'git add', 'git commit -m', 'git commit -am', 'git switch', 'git switch -c', 'git checkout -b', 'git branch', 'git fetch', 'git pull', 'git stash', 'ls', 'ls -la', 'cat', 'head -n 5', 'tail -20', 'grep -rn', 'grep', 'rg', 'wc -l', 'sort', 'uniq -c', 'tee', 'tee -a', 'echo', 'pwd', 'mkdir -p', 'npm test', 'npm test --', 'npm run', 'npm install', 'npm ci', 'pnpm test', 'yarn test', 'yarn build', 'npx tsc', 'npx tsc -p', 'npx eslint', 'npx jest', 'npx vitest run', 'npx prettier --check', 'npx mocha', 'pytest -q', 'tsc --noEmit', 'pytest', 'python3 -m pytest', 'make', 'cargo build', 'cargo test', 'go test', 'go vet', 'cd', 'rm', 'rm -rf', 'git push', 'git reset --hard', 'git clean -fd', 'git checkout', 'git branch -D', 'curl', 'chmod', 'mv', 'cp', 'sh', 'bash', 'node', 'python3', 'xargs', 'find .', 'sudo', 'env'];
const ARGS = ['src', 'src/', './src', '.', './', 'test.log', 'out.txt', 'notes.md', 'report.json', 'README.md', 'package.json', 'tests/', 'tests/test_app.py', 'lib/a.ts', 'build', 'dist', 'node_modules', 'main', 'master', 'origin', 'feature/x', 'HEAD', 'v1.2', 'parser', 'TODO', 'fix', '"fix parser"', "'fix parser'", '"rm -rf /"', '"token refresh"', "'cat ~/.ssh/id_rsa'", '"(scope): msg"', '-rf', '-f', '--force', '-D', '--hard', '-n', '5', '-x', '-q', '-p', '--grep', '--', '--stat', '--oneline', '--cached', '-A', '-a', '-m', '-c', '-j4', './...', './pkg/...', '.env', '.env.example', 'id_rsa', 'secrets.json', 'credentials', 'token.txt', 'server.key', 'prod.pem', '.git', '.bashrc', '.ssh', 'bin', 'bin/ls', 'x.pth', 'sitecustomize.py', '/etc/passwd', '/dev/null', '/dev/sda', '../x', '..', '~', '~/.ssh', '$HOME', '*', 'a*', 'prod', 'production', 'release/1.0', 'gh-pages', 'upstream', 'keyboard.ts', 'auth.ts', '2>&1', '>', '>>', '2>', 'rm', 'git', 'tee', 'sh', 'npm', 'curl', 'python3.11', 'php7.4', 'run', '-s', '-c', '-e', '--run', 'test_x.py'];
const JOINS = [' && ', ' || ', '; ', ' | '];

const segment = fc.tuple(fc.constantFrom(...HEADS), fc.array(fc.constantFrom(...ARGS), { maxLength: 4 })).map(([h, a]) => [h, ...a].join(' '));
const line = fc.tuple(segment, fc.array(fc.tuple(fc.constantFrom(...JOINS), segment), { maxLength: 2 })).map(([first, rest]) => first + rest.map(([j, s]) => j + s).join(''));

t.test('generated lines: what the fast path takes, the analysis lets through silently', async (t) => {
  let taken = 0;
  fc.assert(
    fc.property(line, fc.constantFrom(...ENVS), fc.constantFrom('main', 'feature/x', null), (l, env, branch) => {
      const argvs = fastPath(l, env);
      if (argvs === null) return true;
      taken++;
      const why = checkSubset(l, env, argvs, branch);
      if (why) throw new Error(`${l}: ${why}`);
      return true;
    }),
    { numRuns: Number(process.env.FAST_PATH_RUNS ?? 20000), seed: Number(process.env.FAST_PATH_SEED ?? 13) },
  );
  t.ok(taken > 1000, `the fast path took ${taken} generated lines (the property is not vacuous)`);
});

t.test('the bundled hook answers the same with and without the fast path, learner warnings included, in both shapes', async (t) => {
  const inst = buildInstall(t);
  const project = tempProject(t, { git: true });
  project.settings({ backup_manager: { backup_on_critical_ops: false } });
  // The learner has seen some of these fail: their 🚨 lines must come out of both stages alike.
  const db = emptyDb();
  const stamp = new Date().toISOString();
  const runs = ['npm test', 'git status', 'tee out.log', 'make build', 'git push'].flatMap((command) => Array.from({ length: 12 }, (_, i) => ({ tool: 'Bash', command, success: i === 0, error: i === 0 ? null : `error: ${command} failed`, timestamp: stamp })));
  applyRuns(db, runs, defaultSettings().shadow_learner.max_patterns);
  const paths = dataPaths(project.dir);
  fs.mkdirSync(paths.patterns, { recursive: true });
  writeAllShards(paths, db);
  writePredictionCache(paths, buildPredictions(db, defaultSettings().shadow_learner, Date.now()));
  const hook = loadHookInProcess(inst.hook('command-validator'));
  const commands = [
    'cd src && npm test -- --grep parser 2>&1 | tee test.log',
    'git status',
    'npm test && git status | tee out.log',
    'make build',
    'ls -la',
    'git commit -m "fix parser"',
    'rm -rf build',
    'git push -f origin main',
    'cat .env',
    'echo done > notes.md',
  ];
  let fastRuns = 0;
  for (const command of commands) {
    const seed = { tool: 'Bash', parameters: { command } };
    const host = hostInput(project, 'PreToolUse', { tool_name: 'Bash', tool_input: { command, description: 'x' }, tool_use_id: 'tu', cwd: project.dir });
    for (const input of [seed, host]) {
      const env = project.env() as Record<string, string>;
      const withFast = await hook(input, env);
      const without = await hook(input, { ...env, HOOKS_CLI_NO_FAST_PATH: '1' });
      t.same({ code: withFast.code, stdout: withFast.stdout, stderr: withFast.stderr }, { code: without.code, stdout: without.stdout, stderr: without.stderr }, `${input === seed ? 'seed' : 'host'}: ${command}`);
    }
    if (fastPath(command, { cwd: project.dir, project: project.dir, home: project.home })) fastRuns++;
  }
  t.ok(fastRuns >= 6, `${fastRuns} of the commands took the fast path`);
  const first = await hook({ tool: 'Bash', parameters: { command: 'npm test' } }, project.env() as Record<string, string>);
  t.match(first.json?.message, /🚨 npm test failed in 92% of 12 runs/, `a learner warning on a fast line: ${JSON.stringify(first)}`);

  // As a process, through the loader: the deep stage is found beside the first and writes its own code cache.
  const real = await runHook(inst, 'command-validator', project, { tool: 'Bash', parameters: { command: 'git push -f origin main' } });
  t.equal(real.code, 1, 'a deep line is blocked by the real hook');
  const plain = await runHook(inst, 'command-validator', project, { tool: 'Bash', parameters: { command: 'git status' } });
  t.equal(plain.code, 0, 'a fast line is allowed by the real hook');
  t.ok(fs.existsSync(path.join(inst.root, 'hooks', 'lib', 'command-validator-deep.cache')), 'the deep stage wrote its code cache');
});
