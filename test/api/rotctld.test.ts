/**
 * The Hamlib rotctld server: driven by the real `rotctl -m 2` client (set
 * and read a position, out of range, stop, park, refusal while homing), its
 * replies compared with those of Hamlib's own `rotctld -m 1`, and the
 * protocol edges a raw client sees (extended replies, several commands on a
 * line, bad commands), several clients at once, targets sent while moving,
 * and what a disconnect does. The positioner runs on a virtual clock, so
 * each test decides when the motion ends.
 */
import t from 'tap';
import { RPRT } from '../../api/rotctld';
import { SEC, simOnVirtualClock } from '../helpers/sim';
import { RawClient, realRotctld, rotctl, serveRotctld } from '../helpers/rotctld';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('rotctl sets a position (az = phi, el = 90 - theta) and reads it back', async (t) => {
  const { positioner, clock } = simOnVirtualClock();
  const { port } = await serveRotctld(t, positioner);
  const set = await rotctl(port, ['P', '123.5', '30']);
  t.equal(set.code, 0, `rotctl P exits 0 (stderr ${set.stderr})`);
  t.equal(positioner.status().state, 'moving', 'the positioner is moving');
  clock.runUntilIdle();
  const s = positioner.status();
  t.equal(s.state, 'idle');
  t.equal(s.phiDeg, 123.5, 'phi = azimuth');
  t.equal(s.thetaDeg, 60, 'theta = 90 - elevation');

  const get = await rotctl(port, ['p']);
  t.equal(get.code, 0);
  t.equal(get.stdout, '123.50\n30.00\n', 'rotctl prints azimuth then elevation');
});

t.test('rotctl refuses an out-of-range target from the limits our dump_state gives, and the server refuses it too', async (t) => {
  const { positioner } = simOnVirtualClock();
  const { port, log } = await serveRotctld(t, positioner);
  // Our limits are az 0..360, el -90..90: the dummy rotator's (-180..450, 0..90) would have accepted both.
  for (const [az, el] of [['10', '-95'], ['370', '10']]) {
    const r = await rotctl(port, ['P', az, el]);
    t.not(r.code, 0, `rotctl P ${az} ${el} fails`);
    t.match(r.stdout + r.stderr, /Invalid parameter/, 'with Hamlib\'s message for RPRT -1');
  }
  // What a client that does not check gets: RPRT -1 from the server.
  const raw = await RawClient.open(t, port);
  t.equal(await raw.ask('P 10 -95', 1), `RPRT ${RPRT.EINVAL}\n`);
  t.equal(await raw.ask('P 360.01 0', 1), 'RPRT -1\n');
  t.equal(positioner.status().state, 'idle', 'nothing moved');
  t.equal(positioner.status().thetaDeg, 0);
  t.ok(log.some((l) => /out of range/.test(l)), 'the refusal is logged');
});

t.test('rotctl S stops a running move at once; K parks at az 0, el 90', async (t) => {
  const { positioner, clock } = simOnVirtualClock();
  const { port } = await serveRotctld(t, positioner);
  t.equal((await rotctl(port, ['P', '300', '0'])).code, 0);
  clock.advanceBy(3 * SEC);
  const partway = positioner.status().phiDeg;
  t.ok(partway > 0 && partway < 300, `on its way: phi ${partway}`);
  const stop = await rotctl(port, ['S']);
  t.equal(stop.code, 0);
  t.equal(positioner.status().state, 'stopped', 'stopped');
  clock.advanceBy(10 * SEC);
  t.equal(positioner.status().phiDeg, partway, 'and stays where it stopped');

  t.equal((await rotctl(port, ['K'])).code, 0);
  clock.runUntilIdle();
  t.match(positioner.status(), { state: 'idle', thetaDeg: 0, phiDeg: 0 }, 'parked at theta 0 (el 90), phi 0');
});

t.test('while homing, or in the error state, P is refused with RPRT -9 and rotctl says so', async (t) => {
  const sim = simOnVirtualClock();
  const { positioner, clock } = sim;
  const { port } = await serveRotctld(t, positioner);
  positioner.home('both');
  const busy = await rotctl(port, ['P', '10', '10']);
  t.not(busy.code, 0, 'rotctl fails');
  t.match(busy.stdout + busy.stderr, /rejected/i, 'with Hamlib\'s "Command rejected" message');
  const raw = await RawClient.open(t, port);
  t.equal(await raw.ask('+P 10 10', 'rprt'), 'set_pos: 10 10\nRPRT -9\n');
  t.equal(positioner.status().state, 'homing', 'homing goes on');
  clock.runUntilIdle();

  sim.sim.phi.faults.driver = 'phi driver fault';
  t.equal(await raw.ask('P 10 80', 1), 'RPRT 0\n');
  clock.runUntilIdle();
  t.equal(positioner.status().state, 'error');
  t.equal(await raw.ask('P 20 80', 1), 'RPRT -9\n', 'refused in the error state');
});

t.test('replies match Hamlib rotctld -m 1 byte for byte (numbers aside)', async (t) => {
  const { positioner } = simOnVirtualClock();
  const { port } = await serveRotctld(t, positioner);
  const realPort = await realRotctld(t);
  const ours = await RawClient.open(t, port);
  const theirs = await RawClient.open(t, realPort);
  // Positions and the info text differ by design; the shape of every reply must not.
  const numbers = (s: string) => s.replace(/-?\d+\.\d+/g, 'N').replace(/Info: .*/, 'Info: X');
  const cases: Array<[string, number | 'rprt', boolean]> = [
    // [command, reply end, compare numbers too]
    ['\\dump_state', 9, false],
    ['+\\dump_state', 'rprt', false],
    ['p', 2, false],
    ['+p', 'rprt', false],
    [';p', 'rprt', false],
    ['|p', 'rprt', false],
    ['P 10 20', 1, true],
    ['+P 30 40', 'rprt', true],
    [';P 1 2', 'rprt', true],
    ['P 10 100', 1, true],
    ['+P 10 100', 'rprt', true],
    ['P a b', 1, true],
    ['S', 1, true],
    ['+S', 'rprt', true],
    ['K', 1, true],
    ['+K', 'rprt', true],
    ['p p', 4, false],
    ['\\set_pos 10 20', 1, true],
    ['\\stop', 1, true],
    ['\\park', 1, true],
    ['+_', 'rprt', false],
  ];
  for (const [cmd, end, exact] of cases) {
    const a = await ours.ask(cmd, end);
    const b = await theirs.ask(cmd, end);
    if (exact) t.equal(a, b, `${JSON.stringify(cmd)}: ${JSON.stringify(a)}`);
    else t.equal(numbers(a), numbers(b), `${JSON.stringify(cmd)} (numbers masked): ${JSON.stringify(a)}`);
  }
});

t.test('the protocol edges: extended separators, several commands per line, CRLF, bad and unknown commands', async (t) => {
  const { positioner } = simOnVirtualClock();
  const { port } = await serveRotctld(t, positioner);
  const c = await RawClient.open(t, port);
  t.equal(await c.ask('\\dump_state', 9), '1\n1\nmin_az=0.000000\nmax_az=360.000000\nmin_el=-90.000000\nmax_el=90.000000\nsouth_zero=0\nrot_type=AzEl\ndone\n');
  t.equal(await c.ask('p', 2), '0.00\n90.00\n', 'power-on: theta 0 is elevation 90');
  t.equal(await c.ask('+p', 'rprt'), 'get_pos:\nAzimuth: 0.00\nElevation: 90.00\nRPRT 0\n');
  t.equal(await c.ask('|p', 'rprt'), 'get_pos:|Azimuth: 0.00|Elevation: 90.00|RPRT 0\n');
  t.equal(await c.ask('p\r', 2), '0.00\n90.00\n', 'CRLF line ends work');
  t.equal(await c.ask('_', 1), 'Positioner theta/phi (az = phi, el = 90 - theta)\n');
  t.equal(await c.ask('x', 1), `RPRT ${RPRT.ENIMPL}\n`, 'an unknown command is answered (rotctld 4.5 stays silent)');
  t.equal(await c.ask('+\\frobnicate', 'rprt'), 'frobnicate:\nRPRT -4\n');
  t.equal(await c.ask('P', 1), 'RPRT -1\n', 'missing arguments');
  t.equal(await c.ask('P 10', 1), 'RPRT -1\n');
  t.equal(await c.ask('P 10 abc', 1), 'RPRT -1\n', 'a non-numeric argument');
  t.equal(await c.ask('P NaN 10', 1), 'RPRT -1\n');
  t.equal(await c.ask('P 10 20 p', 3), 'RPRT 0\n0.00\n90.00\n', 'a set and a get on one line, answered in order');
  t.equal(await c.ask('x'.repeat(5000), 1), 'RPRT -1\n', 'an over-long line is refused');
  c.socket.write('y'.repeat(100_000)); // no line end at all: refused once, not buffered forever
  t.equal(await c.ask('', 1), 'RPRT -1\n');
  t.equal(await c.ask('_', 1), 'Positioner theta/phi (az = phi, el = 90 - theta)\n', 'the next line is served again');
  t.equal(positioner.status().state, 'moving', 'the P 10 20 started');
  c.socket.write('q\n');
  await c.closed;
  t.pass('q closes the connection');
});

t.test('several clients at once: each gets its own answers; a P while moving is kept and runs next', async (t) => {
  const { positioner, clock } = simOnVirtualClock();
  const { port, server } = await serveRotctld(t, positioner);
  const a = await RawClient.open(t, port);
  const b = await RawClient.open(t, port);
  const c = await RawClient.open(t, port);
  await sleep(20);
  t.equal(server.clientCount, 3);
  t.equal(await a.ask('P 100 45', 1), 'RPRT 0\n');
  clock.advanceBy(SEC);
  const [pb, pc] = await Promise.all([b.ask('p', 2), c.ask('+p', 'rprt')]);
  t.match(pb, /^\d+\.\d\d\n\d+\.\d\d\n$/);
  t.match(pc, /^get_pos:\nAzimuth: [\d.]+\nElevation: [\d.]+\nRPRT 0\n$/);
  // A tracker re-sends targets while the slew runs: the move is not jerked to a halt.
  t.equal(await b.ask('P 110 40', 1), 'RPRT 0\n');
  t.equal(await c.ask('P 120 35', 1), 'RPRT 0\n', 'the latest target wins');
  t.equal(positioner.status().state, 'moving', 'the running move goes on');
  clock.runUntilIdle(); // the first move completes...
  await sleep(20); // ...the kept target starts on the next turn of the event loop
  t.equal(positioner.status().state, 'moving', 'the kept target started');
  clock.runUntilIdle();
  t.match(positioner.status(), { state: 'idle', phiDeg: 120, thetaDeg: 55 }, 'and ended at az 120, el 35');
  t.equal(await a.ask('p', 2), '120.00\n35.00\n');
});

t.test('a stop from anywhere drops a kept target', async (t) => {
  const { positioner, clock } = simOnVirtualClock();
  const { port } = await serveRotctld(t, positioner);
  const a = await RawClient.open(t, port);
  await a.ask('P 100 45', 1);
  clock.advanceBy(SEC);
  await a.ask('P 200 45', 1);
  positioner.stop(); // as POST /stop or the dashboard's stop button
  clock.runUntilIdle();
  await sleep(20);
  t.equal(positioner.status().state, 'stopped', 'nothing started after the stop');
  t.ok(positioner.status().phiDeg < 100);
});

t.test('a client that drops without q while its move runs leaves the positioner stopped; after q the move completes', async (t) => {
  const { positioner, clock } = simOnVirtualClock();
  const { port, server, log } = await serveRotctld(t, positioner);
  const other = await RawClient.open(t, port);
  const tracker = await RawClient.open(t, port);
  await tracker.ask('P 200 10', 1);
  clock.advanceBy(SEC);
  await tracker.ask('P 210 10', 1); // a kept target too
  tracker.socket.destroy(); // crashed tracker, pulled cable
  await sleep(50);
  t.equal(positioner.status().state, 'stopped', 'the positioner stopped');
  clock.runUntilIdle();
  await sleep(20);
  t.equal(positioner.status().state, 'stopped', 'and the kept target never started');
  t.ok(log.some((l) => /dropped without quitting/.test(l)), 'the server says why it stopped');
  t.equal(server.clientCount, 1, 'the other client is still connected');
  t.equal(await other.ask('S', 1), 'RPRT 0\n', 'and still served');

  // rotctl's one-shot use: P, then q. The move must run on.
  t.equal((await rotctl(port, ['P', '50', '60'])).code, 0);
  clock.advanceBy(SEC);
  t.equal(positioner.status().state, 'moving', 'a client that quit leaves its move running');
  clock.runUntilIdle();
  t.match(positioner.status(), { state: 'idle', phiDeg: 50, thetaDeg: 30 });
});
