/**
 * `positioner serve` as a child process: where it listens (flags, then PORT
 * and HOST, then the defaults), how it refuses a bad port, host or config
 * file (a clear message and an exit code), what a valid config file changes,
 * and that SIGTERM/SIGINT stop it cleanly with exit 0.
 */
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { buildCli, cliEnv, freePort, http, runCli, startServe, until } from '../helpers/cli';

const cli = buildCli(t);
/** Not an address of this machine (TEST-NET-3, RFC 5737): listening there must fail. */
const FOREIGN_HOST = '203.0.113.7';

function configFile(name: string, text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'positioner-config-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

t.test('--port 0 prints the URL it serves in its first stdout line, and the API answers there', async (t) => {
  const server = await startServe(t, cli, ['--port', '0', '--time-scale', '20']);
  t.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'default host 127.0.0.1, a real port');
  t.not(server.port, 0);
  const res = await http(`${server.url}/status`);
  t.equal(res.status, 200);
  t.equal(typeof res.body.theta_deg, 'number');
  t.equal(res.body.moving, false);
});

t.test('PORT is honoured when --port is not given', async (t) => {
  const port = await freePort();
  const server = await startServe(t, cli, ['--time-scale', '20'], cliEnv({ PORT: String(port) }));
  t.equal(server.url, `http://127.0.0.1:${port}`);
  t.equal((await http(`${server.url}/status`)).status, 200);
});

t.test('--port wins over PORT', async (t) => {
  const [envPort, flagPort] = [await freePort(), await freePort()];
  const server = await startServe(t, cli, ['--port', String(flagPort)], cliEnv({ PORT: String(envPort) }));
  t.equal(server.port, flagPort, 'listens on the flag port');
  // Even an unusable PORT does not matter when the flag is given.
  const other = await startServe(t, cli, ['--port', '0'], cliEnv({ PORT: 'not-a-port' }));
  t.not(other.port, 0);
});

t.test('an invalid PORT is a usage error (exit 2) naming the value', async (t) => {
  const r = await runCli(t, cli, ['serve'], { env: cliEnv({ PORT: 'eighty' }) });
  t.equal(r.code, 2, r.stderr);
  t.match(r.stderr, /port must be a whole number.*'eighty'/);
  t.equal(r.stdout, '', 'nothing claims to be serving');
});

t.test('HOST is honoured when --host is not given', async (t) => {
  // The address is not local, so listening fails: the message proves HOST was used.
  const r = await runCli(t, cli, ['serve', '--port', '0'], { env: cliEnv({ HOST: FOREIGN_HOST }) });
  t.equal(r.code, 2, r.stderr);
  t.match(r.stderr, `cannot listen on host '${FOREIGN_HOST}'`);
  t.match(r.stderr, /--host or HOST/);
  if (process.platform === 'linux') {
    // All of 127.0.0.0/8 is loopback on Linux: a working address other than the default.
    const server = await startServe(t, cli, ['--port', '0'], cliEnv({ HOST: '127.0.0.2' }));
    t.match(server.url, /^http:\/\/127\.0\.0\.2:\d+$/);
    t.equal((await http(`${server.url}/status`)).status, 200);
  }
});

t.test('--host wins over HOST', async (t) => {
  const server = await startServe(t, cli, ['--host', '127.0.0.1', '--port', '0'], cliEnv({ HOST: FOREIGN_HOST }));
  t.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.equal((await http(`${server.url}/status`)).status, 200);
});

t.test('a port in use gives a clear error and a non-zero exit', async (t) => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  const { port } = blocker.address() as net.AddressInfo;
  const r = await runCli(t, cli, ['serve', '--port', String(port)]);
  t.equal(r.code, 1, r.stderr);
  t.match(r.stderr, `127.0.0.1:${port} is already in use`);
  t.match(r.stderr, /--port or PORT/, 'says how to choose another port');
  t.equal(r.stdout, '');
});

t.test('a config file that is wrong is refused with a clear message and exit 2, before listening', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    ['unknown key', configFile('typo.json', '{"sped": 10}'), /typo\.json.*additional properties 'sped'/],
    ['nested unknown key', configFile('nested.json', '{"theta": {"gear": 3}}'), /\/theta .*additional properties 'gear'/],
    ['wrong type', configFile('type.json', '{"speed": "fast"}'), /\/speed must be number/],
    ['speed above max_speed', configFile('over.json', '{"speed": 100}'), /speed 100 is above max_speed 60/],
    ['bad JSON', configFile('bad.json', '{"speed": 10,'), /config file .*bad\.json is not valid JSON/],
    ['missing file', path.join(os.tmpdir(), 'positioner-no-such-config.json'), /cannot read config file .*positioner-no-such-config\.json.*ENOENT/],
  ];
  const results = await Promise.all(cases.map(([, file]) => runCli(t, cli, ['serve', '--port', '0', '--config', file])));
  cases.forEach(([what, , message], i) => {
    const r = results[i];
    t.equal(r.code, 2, `${what}: exit 2 (${r.stderr.trim()})`);
    t.match(r.stderr, /^error: /, `${what}: an error line`);
    t.match(r.stderr, message, `${what}: names the problem`);
    t.equal(r.stdout, '', `${what}: never serves`);
  });
});

t.test('a valid config file changes GET /config', async (t) => {
  const file = configFile('good.json', JSON.stringify({ speed: 15, accel: 40, max_speed: 50, microstepping: 8, theta: { gear_ratio: 18 } }));
  const server = await startServe(t, cli, ['--port', '0', '--config', file]);
  const res = await http(`${server.url}/config`);
  t.equal(res.status, 200);
  t.strictSame(res.body, {
    speed: 15,
    accel: 40,
    microstepping: 8,
    // 200 full steps x 8 microsteps x gear 18 / 360 deg; phi keeps its gear of 90.
    theta_steps_per_deg: 80,
    phi_steps_per_deg: 400,
    max_speed: 50,
    max_accel: 500,
  });
});

t.test('--time-scale must be positive: a usage error (exit 2)', async (t) => {
  const [zero, text] = await Promise.all([runCli(t, cli, ['serve', '--port', '0', '--time-scale', '0']), runCli(t, cli, ['serve', '--port', '0', '--time-scale', 'fast'])]);
  t.equal(zero.code, 2, zero.stderr);
  t.match(zero.stderr, /--time-scale must be a positive number/);
  t.equal(text.code, 2, text.stderr);
  t.match(text.stderr, /time-scale must be a number/);
});

t.test('--home homes both axes as the server starts', async (t) => {
  const server = await startServe(t, cli, ['--port', '0', '--time-scale', '20', '--home']);
  const first = await http(`${server.url}/status`);
  t.equal(first.body.state, 'homing', 'homing right after start-up');
  await until('homed', async () => (await http(`${server.url}/status`)).body.homed === true);
  const s = (await http(`${server.url}/status`)).body;
  t.match(s, { theta_deg: 0, phi_deg: 0, moving: false, homed: true, state: 'idle' });
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`${signal} while idle shuts the server down with exit 0`, async (t) => {
    const server = await startServe(t, cli, ['--port', '0']);
    server.child.kill(signal);
    const r = await server.done;
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, `positioner: ${signal}, stopping motors and closing`);
    t.equal(r.stderr, '');
    await t.rejects(fetch(`${server.url}/status`), 'the port is closed');
  });
}

t.test('SIGTERM mid-move with a keep-alive client connected still exits 0 promptly', async (t) => {
  const server = await startServe(t, cli, ['--port', '0', '--time-scale', '20']);
  await http(`${server.url}/config`, 'POST', { speed: 1 });
  t.equal((await http(`${server.url}/move`, 'POST', { theta_deg: 170, phi_deg: 350 })).status, 200);
  t.equal((await http(`${server.url}/status`)).body.moving, true);
  const startMs = Date.now();
  server.child.kill('SIGTERM');
  const r = await server.done;
  t.equal(r.code, 0, r.stderr);
  t.ok(Date.now() - startMs < 3000, 'does not wait for the move or for idle connections');
});

t.test('serve logs each state change with the position, and --quiet silences it', async (t) => {
  const server = await startServe(t, cli, ['--port', '0', '--time-scale', '50']);
  t.equal((await http(`${server.url}/move`, 'POST', { theta_deg: 2, phi_deg: 3 })).status, 200);
  await until('the arrival is logged', async () => /moving -> idle/.test(server.stdout()));
  t.match(server.stdout(), /positioner: idle -> moving at theta 0\.000 phi 0\.000\n/);
  t.match(server.stdout(), /positioner: moving -> idle at theta 2\.000 phi 3\.000\n/);

  const quiet = await startServe(t, cli, ['--port', '0', '--time-scale', '50', '--quiet']);
  t.equal((await http(`${quiet.url}/move`, 'POST', { theta_deg: 1, phi_deg: 1 })).status, 200);
  await until('the quiet server arrives', async () => (await http(`${quiet.url}/status`)).body.state === 'idle');
  t.equal(quiet.stdout().split('\n').filter(Boolean).length, 1, 'only the serving line');
});
