/**
 * What a new user hit with the `positioner` CLI (issue 16), as child
 * processes against a real `positioner serve`: POSITIONER_HOST (or --host)
 * given as a bare port; refusals in the CLI's words (THETA, --speed,
 * `positioner stop`), never the API's field names; a misspelt flag gets a
 * "did you mean"; `serve` on a busy port says so and exits as the README
 * documents.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { buildCli, cliEnv, http, runCli, spawnCli, startServe, until, type ServeRun } from '../helpers/cli';

const cli = buildCli(t);
let server: ServeRun;
let port: string;

t.before(async () => {
  server = await startServe(t, cli, ['--port', '0', '--time-scale', '20', '--quiet']);
  port = new URL(server.url).port;
});

const pos = (args: string[], env: Record<string, string | undefined> = {}) => runCli(t, cli, args, { env: cliEnv(env) });

t.test('a bare port in POSITIONER_HOST or --host means this machine (127.0.0.1) on that port', async (t) => {
  const [bare, colon, flag] = await Promise.all([pos(['status', '--json'], { POSITIONER_HOST: port }), pos(['status', '--json'], { POSITIONER_HOST: `:${port}` }), pos(['status', '--json', '--host', port])]);
  for (const [what, r] of [['POSITIONER_HOST=PORT', bare], ['POSITIONER_HOST=:PORT', colon], ['--host PORT', flag]] as const) {
    t.equal(r.code, 0, `${what}: ${r.stderr}`);
    t.match(JSON.parse(r.stdout), { state: 'idle' }, `${what}: the status of the server on that port`);
  }
  const [tooBig, junk] = await Promise.all([pos(['status'], { POSITIONER_HOST: '99999' }), pos(['status', '--host', 'http://[nope'])]);
  t.equal(tooBig.code, 2, 'a port out of range is a usage error');
  t.match(tooBig.stderr, /POSITIONER_HOST '99999' is not a port from 1 to 65535/);
  t.equal(junk.code, 2);
  t.match(junk.stderr, /--host 'http:\/\/\[nope' is not a port, host:port or URL/);
});

t.test("refusals name the CLI's arguments, flags, units and commands, not the API's fields and paths", async (t) => {
  const env = { POSITIONER_HOST: port };
  const [theta, speed] = await Promise.all([pos(['move', '200', '10'], env), pos(['config', '--speed', '1000'], env)]);
  t.equal(theta.code, 1);
  t.match(theta.stderr, /^error: the positioner refused \(POS_ERR_OUT_OF_RANGE\): THETA must be <= 180 degrees/);
  t.notMatch(theta.stderr, /theta_deg|POST \//);
  t.equal(speed.code, 1);
  t.match(speed.stderr, /--speed must be between 0\.001 and \d+ deg\/s, got 1000/);
  // Busy: the API says "wait for it to finish or POST /stop".
  t.equal((await http(`${server.url}/config`, 'POST', { speed: 0.5 })).status, 200);
  t.teardown(() => http(`${server.url}/config`, 'POST', { speed: 10 }).then(() => http(`${server.url}/stop`, 'POST')));
  t.equal((await http(`${server.url}/move`, 'POST', { theta_deg: 90, phi_deg: 90 })).status, 200);
  const busy = await pos(['move', '10', '10'], env);
  t.equal(busy.code, 1);
  t.match(busy.stderr, /busy.*`positioner stop`/);
  t.notMatch(busy.stderr, /POST \//);
  await http(`${server.url}/stop`, 'POST');
});

t.test('a misspelt flag is a usage error with the nearest flag of that command', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['config', '--sped', '3'], /Unknown argument: sped\. Did you mean --speed\?/],
    [['move', '1', '2', '--wiat'], /Unknown argument: wiat\. Did you mean --wait\?/],
    [['status', '--wacth'], /Did you mean --watch\?/],
    [['serve', '--prot', '9000'], /Did you mean --port\?/],
    [['status', '--hots', 'x'], /Did you mean --host\?/],
  ];
  const results = await Promise.all(cases.map(([args]) => pos(args, { POSITIONER_HOST: port })));
  cases.forEach(([args, message], i) => {
    t.equal(results[i].code, 2, `${args.join(' ')}: exit 2`);
    t.match(results[i].stderr, message, args.join(' '));
  });
  const far = await pos(['status', '--frobnicate'], { POSITIONER_HOST: port });
  t.equal(far.code, 2);
  t.notMatch(far.stderr, /Did you mean/, 'nothing close: no guess');
});

t.test('serve on a port in use says so and exits 1, as the README documents', async (t) => {
  const readme = fs.readFileSync(path.resolve(__dirname, '..', '..', 'README.md'), 'utf8');
  t.match(readme, /`serve`\s+exits\s+1\s+when\s+its\s+port\s+is\s+in\s+use/, 'the README says what serve does on a busy port');
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  const busy = String((blocker.address() as net.AddressInfo).port);
  const [viaFlag, viaEnv] = await Promise.all([pos(['serve', '--port', busy]), pos(['serve'], { PORT: busy })]);
  for (const r of [viaFlag, viaEnv]) {
    t.equal(r.code, 1, r.stderr);
    t.match(r.stderr, `127.0.0.1:${busy} is already in use; choose another port with --port or PORT`);
    t.equal(r.stdout, '', 'it never claimed to serve');
  }
});

t.test('status --watch follows until Ctrl-C and exits 130, as an interrupted command does', async (t) => {
  const watch = spawnCli(t, cli, ['status', '--watch'], { env: cliEnv({ POSITIONER_HOST: port }) });
  await until('the first status line', async () => watch.stdout().includes('\n'));
  watch.child.kill('SIGINT');
  const r = await watch.done;
  t.equal(r.code, 130, r.stderr);
  t.match(r.stdout, /theta .* phi .* (idle|stopped)/);
});
