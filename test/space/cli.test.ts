/**
 * `space` as a real child process: vapid-keys makes a usable pair; serve
 * honours PORT, HOST and DATABASE_PATH, answers, stops cleanly on SIGTERM
 * and finds its data again on the next start; bad configuration exits 2
 * with a message, a busy port exits 1.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildCli, cliEnv, freePort, http, runCli, spawnCli, startServe, until } from '../helpers/cli';
import { DEAD_UPSTREAMS } from '../helpers/space';

const cli = buildCli(t, 'space');

t.test('vapid-keys prints a pair, as env lines or JSON', async (t) => {
  const json = await runCli(t, cli, ['vapid-keys', '--json']);
  t.equal(json.code, 0);
  const keys = JSON.parse(json.stdout) as { public_key: string; private_key: string };
  t.equal(Buffer.from(keys.public_key, 'base64url').length, 65, 'an uncompressed P-256 public key');
  t.equal(Buffer.from(keys.private_key, 'base64url').length, 32);
  const env = await runCli(t, cli, ['vapid-keys']);
  t.match(env.stdout, /^VAPID_PUBLIC_KEY=[A-Za-z0-9_-]{87}\nVAPID_PRIVATE_KEY=[A-Za-z0-9_-]{43}\nVAPID_SUBJECT=mailto:/);
});

t.test('the 503 for missing VAPID keys names a command that works, run as npm runs it', async (t) => {
  const running = await startServe(t, cli, ['--quiet', '--port', '0'], cliEnv({ ...DEAD_UPSTREAMS, DATABASE_PATH: path.join(t.testdir(), 'h.db') }));
  const r = await http(`${running.url}/api/notifications/vapid-key`);
  t.equal(r.status, 503);
  const hint = /`npm run --silent (\S+) -- ([^`]+)`/.exec(r.body.error as string);
  t.ok(hint, `the error names an npm command: ${r.body.error}`);
  if (!hint) return;
  // What npm runs: the script's last step (after the build) with the arguments after `--` appended.
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const script = pkg.scripts[hint[1]];
  t.type(script, 'string', `package.json has the script "${hint[1]}"`);
  // `exec` only replaces npm's shell with node; the words after it are what runs.
  const words = script.split('&&').at(-1)!.trim().replace(/^exec\s+/, '').split(/\s+/);
  t.strictSame(words.slice(0, 2), ['node', 'dist/cli/space.js'], 'the script runs the space CLI');
  const keys = await runCli(t, cli, [...words.slice(2), ...hint[2].trim().split(/\s+/)]);
  t.equal(keys.code, 0, `exit 0 (stderr: ${keys.stderr})`);
  t.match(keys.stdout, /^VAPID_PUBLIC_KEY=[A-Za-z0-9_-]{87}\nVAPID_PRIVATE_KEY=[A-Za-z0-9_-]{43}\n/, 'a key pair to paste');
});

t.test('serve is the default command: `space` with no command serves (what `npm run space` runs)', async (t) => {
  const run = spawnCli(t, cli, ['--quiet', '--port', '0'], { env: cliEnv({ ...DEAD_UPSTREAMS, DATABASE_PATH: path.join(t.testdir(), 'd.db') }), preload: [cli.watchdog], timeoutMs: 120_000 });
  await until('the serving line', () => /serving http:\/\/\S+/.test(run.stdout()), 20_000);
  const url = /serving (http:\/\/\S+?:\d+)/.exec(run.stdout())![1];
  t.equal((await http(`${url}/api/notifications/unread-count`)).status, 200);
  run.child.kill('SIGTERM');
  t.equal((await run.done).code, 0);
});

t.test('serve: PORT, HOST, DATABASE_PATH and VAPID keys from the environment; data kept across restarts', async (t) => {
  const keys = JSON.parse((await runCli(t, cli, ['vapid-keys', '--json'])).stdout) as { public_key: string; private_key: string };
  const port = await freePort();
  const db = path.join(t.testdir(), 'svc', 'space.db');
  const env = cliEnv({ ...DEAD_UPSTREAMS, PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: db, VAPID_PUBLIC_KEY: keys.public_key, VAPID_PRIVATE_KEY: keys.private_key, VAPID_SUBJECT: 'mailto:t@example.org' });
  const first = await startServe(t, cli, ['--quiet'], env);
  t.equal(first.url, `http://127.0.0.1:${port}`);
  t.strictSame((await http(`${first.url}/api/notifications/vapid-key`)).body, { public_key: keys.public_key });
  const put = await fetch(`${first.url}/api/notifications/preferences/global/launch`, { method: 'PUT', body: '{"timezone":"Europe/Paris"}' });
  t.equal(put.status, 200);
  t.equal((await http(`${first.url}/api/events/conjunctions`)).body.source, 'sample', 'offline: the sample data');
  first.child.kill('SIGTERM');
  const end = await first.done;
  t.equal(end.code, 0, `clean exit on SIGTERM: ${end.stderr}`);

  const second = await startServe(t, cli, ['--quiet'], env);
  const prefs = (await http(`${second.url}/api/notifications/preferences`)).body;
  t.equal(prefs[0]?.timezone, 'Europe/Paris', 'the preference is still there');
  // Flags win over the environment.
  second.child.kill('SIGTERM');
  await second.done;
  const other = await freePort();
  const third = await startServe(t, cli, ['--port', String(other), '--quiet'], env);
  t.equal(third.port, other);
});

t.test('serve: configuration errors exit 2 with what to do; a busy port exits 1', async (t) => {
  const base = { ...DEAD_UPSTREAMS, DATABASE_PATH: path.join(t.testdir(), 'x.db') };
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['PORT not a number', { PORT: 'eighty' }, /PORT must be an integer/],
    ['one VAPID key only', { VAPID_PUBLIC_KEY: 'abc' }, /set both VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY/],
    ['VAPID keys that are not keys', { VAPID_PUBLIC_KEY: 'abc', VAPID_PRIVATE_KEY: 'def' }, /VAPID settings rejected/],
    ['upstream URL not a URL', { SOCRATES_URL: 'celestrak' }, /SOCRATES_URL must be an http\(s\) URL/],
    ['refresh interval negative', { EVENTS_REFRESH_MINUTES: '-5' }, /EVENTS_REFRESH_MINUTES/],
  ];
  for (const [what, extra, message] of cases) {
    const r = await runCli(t, cli, ['serve'], { env: cliEnv({ ...base, ...extra, PORT: extra.PORT ?? '0' }) });
    t.equal(r.code, 2, `${what}: exit 2`);
    t.match(r.stderr, message, what);
  }
  const r = await runCli(t, cli, ['nonsense']);
  t.equal(r.code, 2, 'unknown command');
  t.equal((await runCli(t, cli, ['--help'])).code, 0);

  const running = await startServe(t, cli, ['--quiet', '--port', '0'], cliEnv(base));
  const busy = await runCli(t, cli, ['serve', '--port', String(running.port)], { env: cliEnv({ ...base, DATABASE_PATH: path.join(t.testdir(), 'y.db') }) });
  t.equal(busy.code, 1);
  t.match(busy.stderr, /already in use/);
});
