/**
 * The `positioner` client commands as child processes against a real
 * `positioner serve` child (free port, time x20). What the CLI did is
 * checked on the server over HTTP, not taken from the CLI's own output.
 * (Usage errors, help, an unreachable host and colours, which need no
 * server, are in cli-usage.test.ts.)
 *
 * Exit codes under test: 0 done, 1 refused or not completed, 130 interrupted
 * (Ctrl-C during --wait or status --watch).
 */
import t, { type Test } from 'tap';
import { inCliWords } from '../../cli/positioner';
import { buildCli, cliEnv, freePort, http, runCli, spawnCli, startServe, until, type CliResult, type ServeRun } from '../helpers/cli';

const cli = buildCli(t);
const TIME_SCALE = 20;
/** Default speed and accel of the firmware (deg/s, deg/s^2). */
const DEFAULTS = { speed: 10, accel: 20 };

let server: ServeRun;
/** host:port where nothing listens. */
let deadHost: string;

t.before(async () => {
  server = await startServe(t, cli, ['--port', '0', '--time-scale', String(TIME_SCALE)]);
  deadHost = `127.0.0.1:${await freePort()}`;
});

const cliOptions = (env: Record<string, string | undefined> = {}) => ({ env: cliEnv({ POSITIONER_HOST: server.hostPort, ...env }) });

/** Runs the CLI with POSITIONER_HOST pointing at the test server (as host:port) unless `env` says otherwise. */
function pos(t: Test, args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return runCli(t, cli, args, cliOptions(env));
}

const status = async () => (await http(`${server.url}/status`)).body;
const lastLine = (text: string) => text.trim().split('\n').pop() ?? '';

async function waitIdle(): Promise<void> {
  await until('the positioner to stand still', async () => (await status()).moving === false);
}

/** Moves to (theta, phi) through the API and waits for arrival. */
async function placeAt(theta: number, phi: number): Promise<void> {
  const res = await http(`${server.url}/move`, 'POST', { theta_deg: theta, phi_deg: phi });
  if (res.status !== 200) throw new Error(`placing at ${theta}, ${phi}: ${JSON.stringify(res.body)}`);
  await waitIdle();
}

interface SlowMove {
  fromTheta: number;
  toTheta: number;
  toPhi: number;
}

/**
 * Sets a slow speed (0.5 deg/s: 10 deg/s of wall time) and picks a target at
 * least 85 degrees away on both axes: several seconds to act on the move.
 */
async function slowTarget(): Promise<SlowMove> {
  t.equal((await http(`${server.url}/config`, 'POST', { speed: 0.5 })).status, 200);
  const s = await status();
  return { fromTheta: s.theta_deg, toTheta: s.theta_deg < 90 ? 175 : 5, toPhi: s.phi_deg < 180 ? 355 : 5 };
}

/** Starts a slow move through the API. */
async function startSlowMove(t: Test): Promise<SlowMove> {
  const move = await slowTarget();
  t.equal((await http(`${server.url}/move`, 'POST', { theta_deg: move.toTheta, phi_deg: move.toPhi })).status, 200);
  t.equal((await status()).moving, true, 'the slow move is under way');
  return move;
}

const between = (v: number, a: number, b: number) => v > Math.min(a, b) && v < Math.max(a, b);

// Every test starts from a still positioner with the default motion settings.
t.beforeEach(async () => {
  await http(`${server.url}/stop`, 'POST');
  await waitIdle();
  await http(`${server.url}/config`, 'POST', DEFAULTS);
});

t.test('status prints position, state and homing, with POSITIONER_HOST as host:port', async (t) => {
  await placeAt(12.5, 45);
  const r = await pos(t, ['status']);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, 'theta 12.500°  phi 45.000°  idle  homed: no\n');
  t.equal(r.stderr, '');
});

t.test('status --json prints the status body as JSON, with POSITIONER_HOST as a URL', async (t) => {
  await placeAt(33.25, 100);
  const hosts = [server.url, `${server.url}/`];
  const results = await Promise.all(hosts.map((host) => pos(t, ['status', '--json'], { POSITIONER_HOST: host })));
  const now = await status();
  hosts.forEach((host, i) => {
    const r = results[i];
    t.equal(r.code, 0, `POSITIONER_HOST=${host}: ${r.stderr}`);
    t.equal(r.stdout.split('\n').length, 2, 'one line');
    const body = JSON.parse(r.stdout);
    t.match(body, { theta_deg: 33.25, phi_deg: 100, moving: false, homed: false, state: 'idle' }, `POSITIONER_HOST=${host}`);
    t.strictSame(body, now, 'the API body, unchanged');
  });
});

t.test('--host wins over POSITIONER_HOST, as host:port and as a URL', async (t) => {
  const hosts = [server.hostPort, server.url];
  const results = await Promise.all(hosts.map((host) => pos(t, ['status', '--json', '--host', host], { POSITIONER_HOST: deadHost })));
  hosts.forEach((host, i) => {
    t.equal(results[i].code, 0, `--host ${host}: ${results[i].stderr}`);
    t.equal(JSON.parse(results[i].stdout).moving, false);
  });
});

t.test('move without --wait returns at once with the target while the positioner moves on', async (t) => {
  const { fromTheta, toTheta, toPhi } = await slowTarget();
  const r = await pos(t, ['move', String(toTheta), String(toPhi)]);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, `moving to theta ${toTheta.toFixed(3)}°  phi ${toPhi.toFixed(3)}°\n`);
  const s = await status();
  t.equal(s.moving, true, 'still moving after the command exited');
  t.ok(between(s.theta_deg, fromTheta, toTheta), `on the way: theta ${s.theta_deg}`);

  await http(`${server.url}/stop`, 'POST');
  await waitIdle();
  const j = await pos(t, ['move', '20', '30', '--json']);
  t.equal(j.code, 0, j.stderr);
  t.strictSame(JSON.parse(j.stdout), { status: 'moving', target_theta: 20, target_phi: 30 });
});

t.test('move --wait exits 0 only after arrival; the final --json status shows the target', async (t) => {
  await placeAt(0, 0);
  const r = await pos(t, ['move', '40', '80', '--wait', '--json']);
  const after = await status();
  t.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  t.equal(lines.length, 1, 'only the final status on stdout');
  t.match(JSON.parse(lines[0]), { theta_deg: 40, phi_deg: 80, moving: false, state: 'idle' });
  t.match(after, { theta_deg: 40, phi_deg: 80, moving: false, state: 'idle' }, 'arrived by the time the command exited');
  // phi's 80 degrees at 10 deg/s are 8 s of simulated time: 0.4 s of wall time at x20.
  t.ok(r.ms >= (8 / TIME_SCALE) * 1000, `took the move's time (${r.ms} ms)`);

  const human = await pos(t, ['move', '10', '20', '--wait']);
  t.equal(human.code, 0, human.stderr);
  t.equal(human.stdout, '', 'progress goes to stderr');
  t.match(human.stderr, /^moving to theta 10\.000°  phi 20\.000°\n/);
  t.equal(lastLine(human.stderr), 'move: done at theta 10.000°  phi 20.000°');
  t.match(await status(), { theta_deg: 10, phi_deg: 20, moving: false });
});

t.test('move-rel takes negative offsets, with and without --', async (t) => {
  await placeAt(40, 80);
  const forms: Array<[string[], number, number]> = [
    [['move-rel', '-5', '3', '--wait', '--json'], 35, 83],
    [['move-rel', '--wait', '--json', '--', '-5', '3'], 30, 86],
  ];
  for (const [args, theta, phi] of forms) {
    const r = await pos(t, args);
    t.equal(r.code, 0, `${args.join(' ')}: ${lastLine(r.stderr)}`);
    t.match(JSON.parse(r.stdout), { theta_deg: theta, phi_deg: phi, moving: false }, args.join(' '));
  }
  // The plain form, with decimals: `move-rel -- -2.5 -.5`.
  const r = await pos(t, ['move-rel', '--', '-2.5', '-.5']);
  t.equal(r.code, 0, lastLine(r.stderr));
  t.equal(r.stdout, 'moving to theta 27.500°  phi 85.500°\n');
  await waitIdle();
  t.match(await status(), { theta_deg: 27.5, phi_deg: 85.5 });
});

t.test('home --wait ends homed at zero', async (t) => {
  await placeAt(20, 30);
  const r = await pos(t, ['home', '--wait', '--json']);
  t.equal(r.code, 0, r.stderr);
  t.match(JSON.parse(r.stdout), { theta_deg: 0, phi_deg: 0, moving: false, homed: true, state: 'idle' });
  t.match(await status(), { homed: true, moving: false, axes: { theta: { homed: true }, phi: { homed: true } } });

  const one = await pos(t, ['home', 'theta']);
  t.equal(one.code, 0, one.stderr);
  t.equal(one.stdout, 'homing theta\n');
});

t.test('stop halts a move at once, between start and target', async (t) => {
  const { fromTheta, toTheta } = await startSlowMove(t);
  await until('some progress', async () => Math.abs((await status()).theta_deg - fromTheta) > 1);
  const r = await pos(t, ['stop']);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, 'stopped\n');
  const s = await status();
  t.match(s, { moving: false, state: 'stopped' });
  t.ok(between(s.theta_deg, fromTheta, toTheta), `stopped on the way: theta ${s.theta_deg}`);
  await new Promise((r) => setTimeout(r, 200));
  t.equal((await status()).theta_deg, s.theta_deg, 'and stays there');

  const j = await pos(t, ['stop', '--json']);
  t.equal(j.code, 0, j.stderr);
  t.strictSame(JSON.parse(j.stdout), { status: 'stopped' });
});

t.test('config shows the configuration; --speed and --accel change it', async (t) => {
  const current = (await http(`${server.url}/config`)).body;
  const [json, human] = await Promise.all([pos(t, ['config', '--json']), pos(t, ['config'])]);
  t.equal(json.code, 0, json.stderr);
  t.strictSame(JSON.parse(json.stdout), current);
  t.equal(human.code, 0, human.stderr);
  t.equal(human.stdout, `${Object.entries(current).map(([k, v]) => `${k}: ${v}`).join('\n')}\n`);
  t.match(human.stdout, /^speed: 10\naccel: 20\n/);

  const both = await pos(t, ['config', '--speed', '30', '--accel', '50']);
  t.equal(both.code, 0, both.stderr);
  t.equal(both.stdout, 'status: ok\nspeed: 30\naccel: 50\nmicrostepping: 16\n');
  t.match((await http(`${server.url}/config`)).body, { speed: 30, accel: 50 });

  const speedOnly = await pos(t, ['config', '--speed', '25', '--json']);
  t.equal(speedOnly.code, 0, speedOnly.stderr);
  t.match(JSON.parse(speedOnly.stdout), { status: 'ok', speed: 25, accel: 50 });
  t.match((await http(`${server.url}/config`)).body, { speed: 25, accel: 50 }, 'accel left as it was');
});

t.test("a refused command exits 1 with the server's message on stderr, in the CLI's words", async (t) => {
  await placeAt(10, 10);
  const cases: Array<[string[], string, unknown]> = [
    [['move', '200', '10'], '/move', { theta_deg: 200, phi_deg: 10 }],
    [['move-rel', '--', '-20', '0'], '/move/relative', { d_theta: -20, d_phi: 0 }],
    [['config', '--speed', '1000'], '/config', { speed: 1000 }],
  ];
  const results = await Promise.all(cases.map(([args]) => pos(t, args)));
  for (const [i, [args, path, body]] of cases.entries()) {
    const expected = await http(`${server.url}${path}`, 'POST', body);
    t.equal(expected.status, 400, `the server refuses ${JSON.stringify(body)}`);
    const r = results[i];
    t.equal(r.code, 1, `${args.join(' ')}: exit 1`);
    t.equal(r.stdout, '');
    t.match(r.stderr, /^error: /);
    const words = inCliWords(expected.body.error);
    t.ok(r.stderr.includes(words), `${args.join(' ')}: stderr has "${words}" (got ${r.stderr.trim()})`);
    t.notMatch(r.stderr, /theta_deg|phi_deg|d_theta|d_phi|POST \//, `${args.join(' ')}: no API names`);
  }
  t.match(await status(), { theta_deg: 10, phi_deg: 10, moving: false }, 'nothing moved');
});

t.test('a motion command while moving exits 1 saying the positioner is busy', async (t) => {
  await startSlowMove(t);
  const commands = [['move', '10', '10'], ['move-rel', '1', '1', '--wait'], ['home']];
  const results = await Promise.all(commands.map((args) => pos(t, args)));
  commands.forEach((args, i) => {
    t.equal(results[i].code, 1, `${args.join(' ')}: exit 1`);
    t.match(results[i].stderr, /busy/, `${args.join(' ')}: ${results[i].stderr.trim()}`);
  });
  t.equal((await status()).moving, true, 'the first move carries on');
});

t.test('--wait exits 1 when someone else stops the move', async (t) => {
  const { fromTheta, toTheta, toPhi } = await slowTarget();
  const run = spawnCli(t, cli, ['move', String(toTheta), String(toPhi), '--wait'], cliOptions());
  await until('some progress', async () => Math.abs((await status()).theta_deg - fromTheta) > 1);
  await http(`${server.url}/stop`, 'POST');
  const r = await run.done;
  t.equal(r.code, 1, r.stderr);
  t.match(r.stderr, /move: stopped at theta/);
  t.equal(lastLine(r.stderr), 'error: the motion was stopped before it completed');
});

t.test('Ctrl-C during --wait stops the positioner and exits 130', async (t) => {
  const { fromTheta, toTheta, toPhi } = await slowTarget();
  const run = spawnCli(t, cli, ['move', String(toTheta), String(toPhi), '--wait'], cliOptions());
  // The CLI prints this line just before it starts following the move (and catching SIGINT).
  await until('the CLI to follow the move', async () => run.stderr().includes('moving to theta'));
  await until('some progress', async () => Math.abs((await status()).theta_deg - fromTheta) > 1);
  run.child.kill('SIGINT');
  const r = await run.done;
  t.equal(r.code, 130, r.stderr);
  t.match(r.stderr, /interrupted; positioner stopped/);
  const s = await status();
  t.match(s, { moving: false, state: 'stopped' });
  t.ok(between(s.theta_deg, fromTheta, toTheta), `stopped short of the target: theta ${s.theta_deg}`);
});

t.test('status --watch --json prints one JSON status per change, following a move, until Ctrl-C (exit 130)', async (t) => {
  await waitIdle();
  // Slow (3 deg at 0.2 deg/s: about 0.75 s of wall time at x20) so the 4 Hz watch sees it move.
  t.equal((await http(`${server.url}/config`, 'POST', { speed: 0.2 })).status, 200);
  t.teardown(() => http(`${server.url}/config`, 'POST', { speed: DEFAULTS.speed }));
  const watch = spawnCli(t, cli, ['status', '--watch', '--json'], cliOptions());
  await until('the first status line', async () => watch.stdout().includes('\n'));
  const start = await status();
  const target = { theta: start.theta_deg < 90 ? start.theta_deg + 3 : start.theta_deg - 3, phi: start.phi_deg < 180 ? start.phi_deg + 3 : start.phi_deg - 3 };
  t.equal((await http(`${server.url}/move`, 'POST', { theta_deg: target.theta, phi_deg: target.phi })).status, 200);
  await until('the watch to see the arrival', async () =>
    watch
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .some((s) => s.state === 'idle' && Math.abs(s.theta_deg - target.theta) < 1e-9 && Math.abs(s.phi_deg - target.phi) < 1e-9),
  );
  watch.child.kill('SIGINT');
  const r = await watch.done;
  t.equal(r.code, 130, `interrupted: exit 130 (${r.stderr})`);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  t.ok(lines.length >= 3, `several lines (${lines.length})`);
  t.ok(lines.some((s) => s.moving === true), 'saw it moving');
  for (let i = 1; i < lines.length; i++) t.notSame(lines[i], lines[i - 1], 'a line only when something changed');
});
