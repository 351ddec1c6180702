/**
 * Every endpoint's happy path on a real server (127.0.0.1, free port), with
 * the positioner on a virtual clock so each test decides when time passes.
 * Response shapes and field names are the seed's (part B), plus the documented
 * additions (status: state, fault, axes; config: max_speed, max_accel).
 */
import t, { type Test } from 'tap';
import { SEC, simOnVirtualClock, testDriver } from '../helpers/sim';

/**
 * Over Firmata each axis runs its own AccelStepper ramp (the driver keeps them in step by trimming
 * the slower one, docs/hardware.md): the axes keep their proportion to a fraction of a percent, not
 * to the microstep a planner that times both axes gives (sim, grbl), and speeds are measured.
 */
const FIRMATA = testDriver() === 'firmata';
import { assertJson, serveApi } from '../helpers/http-server';

const STATUS_KEYS = ['theta_deg', 'phi_deg', 'moving', 'homed', 'state', 'fault', 'target', 'axes'];
const AXIS_KEYS = ['homed', 'position_deg', 'position_steps', 'velocity_deg_s', 'homing_error_steps', 'homing_phase'];

async function setup(tt: Test) {
  const sim = simOnVirtualClock();
  const api = await serveApi(tt, sim.positioner);
  const status = async () => {
    const res = await api.get('/status');
    tt.equal(res.status, 200, 'GET /status answers 200');
    return res.body as Record<string, any>;
  };
  return { ...sim, api, status };
}

t.test('GET /status reports the seed fields and the additions, all with their types', async (t) => {
  const { api } = await setup(t);
  const res = await api.get('/status');
  t.equal(res.status, 200);
  assertJson(t, res);
  const body = res.body as Record<string, any>;
  t.same(Object.keys(body), STATUS_KEYS, 'exactly the documented keys, seed fields first');
  // Power-on: the firmware counts from where it woke up, knows nothing yet.
  t.strictSame(body, {
    theta_deg: 0,
    phi_deg: 0,
    moving: false,
    homed: false,
    state: 'idle',
    fault: null,
    target: null,
    axes: {
      theta: { homed: false, position_deg: 0, position_steps: 0, velocity_deg_s: 0, homing_error_steps: null, homing_phase: null },
      phi: { homed: false, position_deg: 0, position_steps: 0, velocity_deg_s: 0, homing_error_steps: null, homing_phase: null },
    },
  });
  t.same(Object.keys(body.axes.theta), AXIS_KEYS);
  t.same(Object.keys(body.axes.phi), AXIS_KEYS);
});

t.test('GET /status carries the target of the move in progress (a client opened mid-move sees where it goes), null at rest', async (t) => {
  const { api, clock, status } = await setup(t);
  t.equal((await api.post('/move', { theta_deg: 45.5, phi_deg: 91 })).status, 200);
  await clock.run(SEC);
  const moving = await status();
  t.equal(moving.state, 'moving');
  t.same(moving.target, { theta_deg: 45.5, phi_deg: 91 });
  await clock.runIdle();
  t.equal((await status()).target, null, 'null once arrived');
});

t.test('POST /move answers moving with the targets; /status says moving, then arrives at 90, 180', async (t) => {
  const { api, clock, status } = await setup(t);
  const res = await api.post('/move', { theta_deg: 90, phi_deg: 180 });
  t.equal(res.status, 200);
  assertJson(t, res);
  t.strictSame(res.body, { status: 'moving', target_theta: 90, target_phi: 180 });

  let s = await status();
  t.equal(s.moving, true, 'moving right after the move is accepted');
  t.equal(s.state, 'moving');

  await clock.run(2 * SEC);
  s = await status();
  t.equal(s.moving, true, 'still moving 2 s into an 18.5 s move');
  t.ok(s.theta_deg > 0 && s.theta_deg < 90, `theta on its way: ${s.theta_deg}`);
  t.ok(s.phi_deg > 0 && s.phi_deg < 180, `phi on its way: ${s.phi_deg}`);
  // Coordinated: phi travels twice as far as theta, so it is always twice as far along.
  t.ok(Math.abs(s.phi_deg - 2 * s.theta_deg) <= (FIRMATA ? 0.01 * s.phi_deg : 2 / 320), `both axes progress in proportion: phi ${s.phi_deg}, theta ${s.theta_deg}`);
  t.ok(s.axes.phi.velocity_deg_s > 0, 'phi velocity reported while moving');

  await clock.runIdle();
  s = await status();
  t.equal(s.moving, false);
  t.equal(s.state, 'idle');
  t.equal(s.theta_deg, 90);
  t.equal(s.phi_deg, 180);
  t.equal(s.axes.theta.position_steps, 90 * 320);
  t.equal(s.axes.phi.position_steps, 180 * 800);
  t.equal(s.axes.phi.velocity_deg_s, 0);
});

t.test('POST /move accepts the ends of both ranges', async (t) => {
  const { api, clock, status } = await setup(t);
  for (const [theta, phi] of [
    [180, 360],
    [0, 0],
    [180, 0],
    [0, 360],
  ]) {
    const res = await api.post('/move', { theta_deg: theta, phi_deg: phi });
    t.strictSame(res.body, { status: 'moving', target_theta: theta, target_phi: phi }, `move to ${theta}, ${phi}`);
    await clock.runIdle();
    const s = await status();
    t.equal(s.theta_deg, theta);
    t.equal(s.phi_deg, phi);
  }
});

t.test('POST /move reports the microstep it will really reach', async (t) => {
  const { api } = await setup(t);
  // 45.0001 deg * 320 = 14400.032 microsteps: the target is microstep 14400, i.e. 45 deg;
  // 10.0007 deg * 800 = 8000.56 rounds up to microstep 8001, i.e. 10.00125 deg.
  const res = await api.post('/move', { theta_deg: 45.0001, phi_deg: 10.0007 });
  t.strictSame(res.body, { status: 'moving', target_theta: 45, target_phi: 8001 / 800 });
});

t.test('POST /move/relative answers the resulting absolute targets and gets there', async (t) => {
  const { api, clock, status } = await setup(t);
  await api.post('/move', { theta_deg: 90, phi_deg: 180 });
  await clock.runIdle();

  const res = await api.post('/move/relative', { d_theta: -10.5, d_phi: 20.25 });
  t.equal(res.status, 200);
  assertJson(t, res);
  t.strictSame(res.body, { status: 'moving', target_theta: 79.5, target_phi: 200.25 });
  t.equal((await status()).moving, true);
  await clock.runIdle();
  const s = await status();
  t.equal(s.theta_deg, 79.5);
  t.equal(s.phi_deg, 200.25);

  // Zero offsets are a valid (empty) move that ends where it started.
  const zero = await api.post('/move/relative', { d_theta: 0, d_phi: 0 });
  t.strictSame(zero.body, { status: 'moving', target_theta: 79.5, target_phi: 200.25 });
  await clock.runIdle();
  t.equal((await status()).state, 'idle');
});

t.test('POST /move/relative after a stop counts from where the axes stopped', async (t) => {
  const { api, clock, status } = await setup(t);
  await api.post('/move', { theta_deg: 90, phi_deg: 180 });
  await clock.run(3 * SEC);
  await api.post('/stop');
  const stopped = await status();
  const res = await api.post('/move/relative', { d_theta: 1, d_phi: -1 });
  const body = res.body as Record<string, number>;
  t.equal(res.status, 200);
  t.ok(Math.abs(body.target_theta - (stopped.theta_deg + 1)) < 1e-9, `theta target ${body.target_theta} = ${stopped.theta_deg} + 1`);
  t.ok(Math.abs(body.target_phi - (stopped.phi_deg - 1)) < 1e-9, `phi target ${body.target_phi} = ${stopped.phi_deg} - 1`);
  await clock.runIdle();
  const s = await status();
  t.equal(s.theta_deg, body.target_theta);
  t.equal(s.phi_deg, body.target_phi);
});

t.test('POST /home with no body homes both axes and finds the true zero', async (t) => {
  const { api, clock, status, sim } = await setup(t);
  const res = await api.post('/home');
  t.equal(res.status, 200);
  assertJson(t, res);
  t.strictSame(res.body, { status: 'homing', axis: 'both' });

  let s = await status();
  t.equal(s.state, 'homing');
  t.equal(s.moving, true, 'moving is true while homing');
  t.equal(s.homed, false);

  await clock.runIdle();
  s = await status();
  t.equal(s.state, 'idle');
  t.equal(s.moving, false);
  t.equal(s.homed, true);
  t.equal(s.theta_deg, 0);
  t.equal(s.phi_deg, 0);
  t.equal(s.axes.theta.homed, true);
  t.equal(s.axes.phi.homed, true);

  // The firmware's 0 is now the switch: a move lands where the hardware really is.
  await api.post('/move', { theta_deg: 10, phi_deg: 20 });
  await clock.runIdle();
  t.equal(sim.theta.truePositionSteps, 10 * 320, 'theta really at 10 deg');
  t.equal(sim.phi.truePositionSteps, 20 * 800, 'phi really at 20 deg');
});

t.test('POST /home with {} or an empty JSON body defaults to both', async (t) => {
  const { api, clock } = await setup(t);
  t.strictSame((await api.post('/home', {})).body, { status: 'homing', axis: 'both' });
  await clock.runIdle();
  const empty = await api.send('POST', '/home', { raw: '', headers: { 'content-type': 'application/json' } });
  t.strictSame(empty.body, { status: 'homing', axis: 'both' });
});

t.test('POST /home homes only the axis asked for', async (t) => {
  for (const axis of ['theta', 'phi'] as const) {
    await t.test(axis, async (t) => {
      const { api, clock, status } = await setup(t);
      const res = await api.post('/home', { axis });
      t.strictSame(res.body, { status: 'homing', axis });
      await clock.runIdle();
      const s = await status();
      const other = axis === 'theta' ? 'phi' : 'theta';
      t.equal(s.axes[axis].homed, true, `${axis} homed`);
      t.equal(s.axes[other].homed, false, `${other} untouched`);
      t.equal(s.homed, false, 'homed means both axes');
      t.equal(s.state, 'idle');
    });
  }
  const { api, clock, status } = await setup(t);
  t.strictSame((await api.post('/home', { axis: 'both' })).body, { status: 'homing', axis: 'both' });
  await clock.runIdle();
  t.equal((await status()).homed, true);
});

t.test('POST /stop answers stopped with no body, a garbage body, a JSON body or a 100 KB body', async (t) => {
  const { api, status } = await setup(t);
  const bodies: [string, Parameters<typeof api.send>[2]][] = [
    ['no body', {}],
    ['garbage', { raw: 'not json {{{' }],
    ['garbage with a JSON Content-Type', { raw: '{"a":', headers: { 'content-type': 'application/json' } }],
    ['binary', { raw: new Uint8Array([0, 255, 254, 1, 128]) }],
    ['a JSON object', { json: { axis: 'theta', anything: [1, 2] } }],
    ['100 KB', { raw: 'x'.repeat(100 * 1024) }],
  ];
  for (const [what, opts] of bodies) {
    const res = await api.send('POST', '/stop', opts);
    t.equal(res.status, 200, `${what}: 200`);
    assertJson(t, res, what);
    t.strictSame(res.body, { status: 'stopped' }, `${what}: stopped`);
  }
  const s = await status();
  t.equal(s.state, 'stopped', 'stop while idle leaves the positioner stopped');
  t.equal(s.moving, false);
});

t.test('POST /stop mid-move halts between start and target; advancing the clock changes nothing', async (t) => {
  const { api, clock, status, sim } = await setup(t);
  await api.post('/move', { theta_deg: 90, phi_deg: 180 });
  await clock.run(5 * SEC);
  const res = await api.post('/stop');
  t.strictSame(res.body, { status: 'stopped' });

  const s = await status();
  t.equal(s.moving, false);
  t.equal(s.state, 'stopped');
  t.ok(s.theta_deg > 0 && s.theta_deg < 90, `theta between start and target: ${s.theta_deg}`);
  t.ok(s.phi_deg > 0 && s.phi_deg < 180, `phi between start and target: ${s.phi_deg}`);
  t.equal(s.axes.theta.velocity_deg_s, 0);
  t.equal(s.axes.phi.velocity_deg_s, 0);
  const received = { theta: sim.theta.stepsReceived, phi: sim.phi.stepsReceived };

  await clock.run(60 * SEC);
  await clock.runIdle();
  const later = await status();
  t.strictSame(later, s, 'status unchanged a minute later');
  t.strictSame({ theta: sim.theta.stepsReceived, phi: sim.phi.stepsReceived }, received, 'no step issued after the stop');
  t.equal(clock.pendingTimers(), 0, 'nothing left scheduled');

  // A stopped positioner takes new moves.
  t.equal((await api.post('/move', { theta_deg: 1, phi_deg: 1 })).status, 200);
});

t.test('POST /stop halts homing', async (t) => {
  const { api, clock, status, sim } = await setup(t);
  await api.post('/home');
  await clock.run(1 * SEC);
  t.equal((await status()).state, 'homing');
  t.strictSame((await api.post('/stop')).body, { status: 'stopped' });
  const s = await status();
  t.equal(s.state, 'stopped');
  t.equal(s.moving, false);
  t.equal(s.homed, false);
  const received = sim.theta.stepsReceived + sim.phi.stepsReceived;
  await clock.runIdle();
  t.equal(sim.theta.stepsReceived + sim.phi.stepsReceived, received, 'no step after the stop');
  t.strictSame(await status(), s);
});

t.test('GET /config reports the motion settings and the derived, read-only resolution', async (t) => {
  const { api } = await setup(t);
  const res = await api.get('/config');
  t.equal(res.status, 200);
  assertJson(t, res);
  t.strictSame(res.body, {
    speed: 10,
    accel: 20,
    microstepping: 16,
    theta_steps_per_deg: 320,
    phi_steps_per_deg: 800,
    // grbl steps at most 30,000 steps/s: phi's 800 steps/deg allow 37.5 deg/s, below the config's 60.
    max_speed: testDriver() === 'grbl' ? 37.5 : 60,
    max_accel: 500,
  });
  t.same(Object.keys(res.body as object), ['speed', 'accel', 'microstepping', 'theta_steps_per_deg', 'phi_steps_per_deg', 'max_speed', 'max_accel']);
});

t.test('POST /config changes only the fields present', async (t) => {
  const { api } = await setup(t);
  const config = async () => (await api.get('/config')).body as Record<string, number>;
  const before = await config();

  let res = await api.post('/config', { speed: 25 });
  t.equal(res.status, 200);
  assertJson(t, res);
  t.strictSame(res.body, { status: 'ok', speed: 25, accel: 20, microstepping: 16 });
  t.strictSame(await config(), { ...before, speed: 25 }, 'only speed changed');

  res = await api.post('/config', { accel: 100.5 });
  t.strictSame(res.body, { status: 'ok', speed: 25, accel: 100.5, microstepping: 16 });
  t.strictSame(await config(), { ...before, speed: 25, accel: 100.5 }, 'accel changed, speed kept');

  const top = before.max_speed;
  res = await api.post('/config', { speed: top + 0.5 });
  t.equal(res.status, 400, `a speed above max_speed (${top}) is refused`);
  res = await api.post('/config', { speed: top, accel: 500 });
  t.strictSame(res.body, { status: 'ok', speed: top, accel: 500, microstepping: 16 }, 'both at once, at their maxima');

  res = await api.post('/config', {});
  t.strictSame(res.body, { status: 'ok', speed: top, accel: 500, microstepping: 16 }, 'an empty object changes nothing');
  res = await api.post('/config');
  t.strictSame(res.body, { status: 'ok', speed: top, accel: 500, microstepping: 16 }, 'no body changes nothing');
  t.strictSame(await config(), { ...before, speed: top, accel: 500 });
});

t.test('the next move runs at the speed POST /config set', async (t) => {
  const { api, clock, status } = await setup(t);
  t.equal((await api.post('/config', { speed: 30, accel: 300 })).status, 200);
  await api.post('/move', { theta_deg: 0, phi_deg: 180 });
  // Accelerating to 30 deg/s at 300 deg/s^2 takes 0.1 s; from 0.5 s to 1.5 s phi cruises. Measured
  // over that second, not from the request: grbl first writes the new acceleration to EEPROM ($121,
  // some 13 ms), so its move starts that much later, at the same speed.
  await clock.run(0.5 * SEC);
  const a = await status();
  await clock.run(1 * SEC);
  const b = await status();
  const tolerance = FIRMATA ? 0.005 : 0;
  t.ok(Math.abs(b.axes.phi.velocity_deg_s - 30) <= 30 * tolerance, `phi cruises at the configured 30 deg/s: ${b.axes.phi.velocity_deg_s}`);
  t.ok(Math.abs(b.phi_deg - a.phi_deg - 30) <= Math.max(1 / 800, 30 * tolerance), `phi moved 30 deg in that second: ${b.phi_deg - a.phi_deg}`);
  t.ok(b.phi_deg <= 1.5 + 42 + (FIRMATA ? 0.5 : 1 / 800) && b.phi_deg >= 1.5 + 42 - 1, `and is where a 30 deg/s move should be after 1.5 s, up to 33 ms late to start: ${b.phi_deg}`);
});

t.test('GET /status carries no ETag (a poll never gets a stale 304) and no X-Powered-By', async (t) => {
  const { api } = await setup(t);
  const res = await api.get('/status');
  t.equal(res.headers.get('etag'), null, 'no ETag: a status poll must never get a 304');
  t.equal(res.headers.get('x-powered-by'), null);
});
