/**
 * The real-time path: the positioner on a WallClock (sped up 10x) behind a real
 * server. A client polls /status until the move ends, as a user would. (Not
 * named http-*: it builds its own simulated positioner, so the HTTP suites over
 * the serial drivers would only run it again.)
 */
import t from 'tap';
import { defaultConfig } from '../../firmware/config';
import { createSimulatedPositioner } from '../../cli/assemble';
import { WallClock } from '../../sim/wall-clock';
import { serveApi } from '../helpers/http-server';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('on a wall clock a move runs by itself: /status goes moving, then idle at the target', async (t) => {
  const { positioner, sim } = createSimulatedPositioner(new WallClock(10), defaultConfig());
  t.teardown(() => positioner.stop());
  const api = await serveApi(t, positioner);

  // Phi's 360 deg at 10 deg/s with 20 deg/s^2 ramps: 36.5 s of machine time, 3.65 s of real
  // time: long enough that a machine loaded by two test runs at once still sees it moving
  // (at 50x, 730 ms, one such run's first answer came after the move had ended).
  const started = Date.now();
  const res = await api.post('/move', { theta_deg: 45, phi_deg: 360 });
  t.strictSame(res.body, { status: 'moving', target_theta: 45, target_phi: 360 });

  let sawMoving = false;
  let s: Record<string, any> = {};
  for (;;) {
    s = (await api.get('/status')).body as Record<string, any>;
    if (s.moving) sawMoving = true;
    else break;
    t.ok(s.phi_deg >= 0 && s.phi_deg <= 360, `phi within the move: ${s.phi_deg}`);
    if (Date.now() - started > 20_000) break;
    await sleep(20);
  }
  t.ok(sawMoving, 'status reported moving while the move ran');
  const tookMs = Date.now() - started;
  t.equal(s.moving, false, `the move ended within 20 s (took ${tookMs} ms)`);
  t.ok(tookMs >= 3640, `the move took real time, paced by the clock: ${tookMs} ms >= 3650 ms less timer slack`);
  t.equal(s.state, 'idle');
  t.equal(s.theta_deg, 45);
  t.equal(s.phi_deg, 360);
  // Unhomed, the firmware counts from the power-on position (theta 37.5, phi 123.25 deg).
  t.equal(sim.theta.truePositionSteps, (37.5 + 45) * 320, 'the theta shaft really moved 45 deg');
  t.equal(sim.phi.truePositionSteps, (123.25 + 360) * 800, 'the phi shaft really moved 360 deg');
  t.equal(sim.theta.lostSteps + sim.phi.lostSteps, 0, 'no step lost');
});

t.test('on a wall clock POST /stop halts a long move at once', async (t) => {
  const { positioner, sim } = createSimulatedPositioner(new WallClock(10), defaultConfig());
  t.teardown(() => positioner.stop());
  const api = await serveApi(t, positioner);

  // 360 deg of phi takes 36.5 s of machine time, 3.65 s of real time at 10x: stop it partway.
  await api.post('/move', { theta_deg: 0, phi_deg: 360 });
  await sleep(100);
  t.strictSame((await api.post('/stop')).body, { status: 'stopped' });
  const stepsAtStop = sim.phi.stepsReceived;
  const s = (await api.get('/status')).body as Record<string, any>;
  t.equal(s.state, 'stopped');
  t.ok(s.phi_deg > 0 && s.phi_deg < 360, `phi stopped partway: ${s.phi_deg}`);
  await sleep(100);
  t.equal(sim.phi.stepsReceived, stepsAtStop, 'no step after the stop was answered');
  t.strictSame((await api.get('/status')).body, s, 'status unchanged 100 ms later');
});
