/**
 * Concurrent motion commands: the server admits exactly one, answers the rest
 * 503, and the machine goes where the admitted one said.
 */
import t from 'tap';
import { simOnVirtualClock } from '../helpers/sim';
import { assertError, serveApi, type ApiResponse } from '../helpers/http-server';

function tally(responses: ApiResponse[]) {
  const counts = new Map<number, number>();
  for (const r of responses) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return Object.fromEntries(counts);
}

t.test('100 concurrent POST /move: exactly one 200, 99 503, and the machine goes to the accepted target', async (t) => {
  const { positioner, clock } = simOnVirtualClock();
  const api = await serveApi(t, positioner);
  // Each request has its own target, so the accepted one can be told apart.
  const targets = Array.from({ length: 100 }, (_, i) => ({ theta_deg: 1 + i, phi_deg: 2 + 3 * i }));
  const responses = await Promise.all(targets.map((body) => api.post('/move', body)));

  t.strictSame(tally(responses), { 200: 1, 503: 99 });
  const accepted = responses.findIndex((r) => r.status === 200);
  t.strictSame(responses[accepted].body, { status: 'moving', target_theta: targets[accepted].theta_deg, target_phi: targets[accepted].phi_deg });
  responses.forEach((r, i) => {
    if (i !== accepted) assertError(t, r, 503, 'POS_ERR_BUSY', `request ${i}`);
  });

  await clock.runIdle();
  const s = (await api.get('/status')).body as Record<string, unknown>;
  t.equal(s.theta_deg, targets[accepted].theta_deg, 'theta at the accepted target');
  t.equal(s.phi_deg, targets[accepted].phi_deg, 'phi at the accepted target');
  t.equal(s.state, 'idle');
});

t.test('concurrent move, move/relative and home: exactly one is admitted', async (t) => {
  const { positioner } = simOnVirtualClock();
  const api = await serveApi(t, positioner);
  const requests = Array.from({ length: 90 }, (_, i) => {
    if (i % 3 === 0) return api.post('/move', { theta_deg: 10, phi_deg: 10 });
    if (i % 3 === 1) return api.post('/move/relative', { d_theta: 5, d_phi: 5 });
    return api.post('/home', { axis: 'both' });
  });
  const responses = await Promise.all(requests);
  t.strictSame(tally(responses), { 200: 1, 503: 89 });
  const s = (await api.get('/status')).body as Record<string, unknown>;
  t.equal(s.moving, true);
});

t.test('POST /stop among concurrent moves always answers 200 and leaves the machine still', async (t) => {
  const { positioner, clock, sim } = simOnVirtualClock();
  const api = await serveApi(t, positioner);
  const moves = Array.from({ length: 50 }, () => api.post('/move', { theta_deg: 90, phi_deg: 180 }));
  const stops = Array.from({ length: 10 }, () => api.post('/stop'));
  const [moveResponses, stopResponses] = await Promise.all([Promise.all(moves), Promise.all(stops)]);
  for (const r of stopResponses) t.strictSame(r.body, { status: 'stopped' });
  // Every move either was admitted (stops then reset it) or met a busy positioner.
  for (const r of moveResponses) t.ok(r.status === 200 || r.status === 503, `move answered ${r.status}`);

  // Whatever the interleaving, a last stop leaves nothing running.
  await api.post('/stop');
  const steps = sim.theta.stepsReceived + sim.phi.stepsReceived;
  await clock.runIdle();
  t.equal(sim.theta.stepsReceived + sim.phi.stepsReceived, steps, 'no step after the last stop');
  t.equal(((await api.get('/status')).body as Record<string, unknown>).moving, false);
});
