/**
 * `positioner serve --rotctld [PORT]` as a child process: it announces the
 * rotctld address, the real `rotctl` drives the served positioner there (and
 * the REST API sees the result), and a bad or busy port is refused with a
 * message and an exit code.
 */
import net from 'node:net';
import t from 'tap';
import { buildCli, http, runCli, startServe, until } from '../helpers/cli';
import { rotctl } from '../helpers/rotctld';

const cli = buildCli(t);

t.test('--rotctld 0 announces its port; rotctl moves the positioner and the REST API agrees', async (t) => {
  const server = await startServe(t, cli, ['--port', '0', '--rotctld', '0', '--time-scale', '50']);
  let port = 0;
  await until('the rotctld announcement', async () => {
    const m = /Hamlib rotctld protocol on 127\.0\.0\.1:(\d+)/.exec(server.stdout());
    if (m) port = Number(m[1]);
    return m !== null;
  });
  t.not(port, 0);
  const set = await rotctl(port, ['P', '20', '80']);
  t.equal(set.code, 0, `rotctl P exits 0 (${set.stderr})`);
  await until('arrival', async () => (await http(`${server.url}/status`)).body.state === 'idle');
  const s = (await http(`${server.url}/status`)).body;
  t.equal(s.phi_deg, 20, 'phi = azimuth');
  t.equal(s.theta_deg, 10, 'theta = 90 - elevation');
  const get = await rotctl(port, ['p']);
  t.equal(get.stdout, '20.00\n80.00\n');
});

t.test('--rotctld with a bad port is a usage error; a port in use is refused with what to do', async (t) => {
  const bad = await runCli(t, cli, ['serve', '--port', '0', '--rotctld', 'abc']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--rotctld takes a port/);

  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => taken.close());
  const busyPort = (taken.address() as net.AddressInfo).port;
  const busy = await runCli(t, cli, ['serve', '--port', '0', '--rotctld', String(busyPort)]);
  t.equal(busy.code, 1);
  t.match(busy.stderr, new RegExp(`127\\.0\\.0\\.1:${busyPort} is already in use.*--rotctld PORT`));
});
