/**
 * Event refresh against a local fake upstream serving our fixtures in the
 * real formats: data cached, a failing upstream keeps the last good data and
 * is reported, garbage is refused, a 429 is respected, a refresh already
 * running is not started twice, and conjunction/NEO notifications follow.
 */
import path from 'node:path';
import t from 'tap';
import { ManualClock } from '../../api/space/clock';
import { configFromEnv } from '../../api/space/config';
import { startSpaceService } from '../../api/space/serve';
import { PREFERENCE_DEFAULTS } from '../../api/space/validation';
import { serveFixture, startFakeUpstream, startService, upstreamEnv, type FakeUpstream } from '../helpers/space';

function serveAll(u: FakeUpstream) {
  u.route('/SOCRATES/sort-minRange.csv', serveFixture('socrates-sort-minRange.csv', 'text/csv'));
  u.route('/neo/rest/v1/feed', serveFixture('neows-feed.json', 'application/json'));
  u.route('/2.2.0/astronaut/', serveFixture('ll2-astronauts.json', 'application/json'));
  u.route('/astros.json', serveFixture('open-notify-astros.json', 'application/json'));
}

t.test('start-up with an empty cache fills it from the upstreams', async (t) => {
  const u = await startFakeUpstream(t);
  serveAll(u);
  const clock = new ManualClock('2026-11-21T12:00:00Z');
  const { api } = await startService(t, { env: upstreamEnv(u), clock });
  const c = (await api.get('/api/events/conjunctions')).body;
  t.equal(c.count, 4);
  t.equal(c.source, 'upstream');
  t.equal(c.conjunctions[0].sat1_name, 'FAKESAT-12');
  t.equal(c.updated_at, '2026-11-21T12:00:00.000Z');
  const n = (await api.get('/api/events/neos')).body;
  t.equal(n.count, 4);
  t.equal(n.hazardous_count, 1);
  const a = (await api.get('/api/events/astronauts')).body;
  t.equal(a.count, 4);
  t.strictSame(a.crafts, ['Mock Capsule', 'Pretend Station']);
  t.equal(a.astronauts[0].craft, 'Pretend Station');
  // NeoWs got a seven-day window from the clock's date and the configured key.
  const q = new URLSearchParams(u.queries.get('/neo/rest/v1/feed')?.[0]);
  t.strictSame([q.get('start_date'), q.get('end_date'), q.get('api_key')], ['2026-11-21', '2026-11-27', 'TEST_KEY']);
  const status = (await api.get('/api/events/status')).body;
  t.strictSame(
    status.sources.map((s: { source: string; origin: string; last_error: string | null }) => [s.source, s.origin, s.last_error]),
    [
      ['conjunctions', 'upstream', null],
      ['neos', 'upstream', null],
      ['astronauts', 'upstream', null],
      ['crafts', 'upstream', null],
    ],
  );
});

t.test('a failing upstream keeps the last good data and reports the failure; recovery clears it', async (t) => {
  const u = await startFakeUpstream(t);
  serveAll(u);
  const { api, service } = await startService(t, { env: upstreamEnv(u) });
  const before = (await api.get('/api/events/conjunctions')).body.conjunctions;

  u.route('/SOCRATES/sort-minRange.csv', (_req, res) => res.writeHead(500).end('internal error'));
  u.route('/neo/rest/v1/feed', (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"near_earth_objects": [tru'));
  u.route('/2.2.0/astronaut/', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>'));
  u.route('/astros.json', (req) => req.socket.destroy()); // connection dropped
  const report = await service.events.refresh().done;
  t.strictSame(
    report.sources.map((s) => s.outcome),
    ['failed', 'failed', 'failed', 'failed'],
  );
  const c = (await api.get('/api/events/conjunctions')).body;
  t.strictSame(c.conjunctions, before, 'conjunctions kept');
  t.match(c.last_error, /HTTP 500/, 'and the failure reported');
  t.equal(c.source, 'upstream', 'still the upstream data, not the sample');
  t.equal((await api.get('/api/events/neos')).body.count, 4, 'NEOs kept after a truncated JSON answer');
  t.match((await api.get('/api/events/neos')).body.last_error, /not JSON/);
  const astro = (await api.get('/api/events/astronauts')).body;
  t.equal(astro.count, 4, 'astronauts kept after an HTML answer');
  t.match(astro.last_error, /not JSON/);

  // LL2 back, Open Notify still down: crafts come from its last good answer.
  serveAll(u);
  u.route('/astros.json', (_req, res) => res.writeHead(503).end());
  await service.events.refresh().done;
  const again = (await api.get('/api/events/astronauts')).body;
  t.equal(again.last_error, null);
  t.strictSame(again.crafts, ['Mock Capsule', 'Pretend Station']);
  const c2 = (await api.get('/api/events/conjunctions')).body;
  t.equal(c2.last_error, null, 'a good answer clears the error');
});

t.test('an upstream answering 429 is not asked again before its Retry-After', async (t) => {
  const u = await startFakeUpstream(t);
  serveAll(u);
  const clock = new ManualClock('2026-11-21T12:00:00Z');
  const { service } = await startService(t, { env: upstreamEnv(u), clock });
  u.route('/neo/rest/v1/feed', (_req, res) => res.writeHead(429, { 'retry-after': '3600' }).end('{"error":{"code":"OVER_RATE_LIMIT"}}'));
  const hits = () => u.hits.get('/neo/rest/v1/feed') ?? 0;
  const h0 = hits();
  let r = await service.events.refresh().done;
  t.equal(r.sources[1].outcome, 'throttled');
  t.equal(hits(), h0 + 1);
  clock.advanceMinutes(30);
  r = await service.events.refresh().done;
  t.equal(r.sources[1].outcome, 'skipped', 'half an hour later: not asked');
  t.equal(hits(), h0 + 1, 'no request went out');
  t.equal(r.sources[0].outcome, 'updated', 'other sources refresh as usual');
  const status = service.events.status().find((s) => s.source === 'neos');
  t.equal(status?.retry_not_before, '2026-11-21T13:00:00.000Z');
  t.equal((service.events.neos().data ?? []).length, 4, 'the cached NEOs stay');
  clock.advanceMinutes(31);
  serveAll(u);
  r = await service.events.refresh().done;
  t.equal(r.sources[1].outcome, 'updated', 'asked again after Retry-After');
  t.equal(service.events.status().find((s) => s.source === 'neos')?.retry_not_before, null);
});

t.test('a 429 without Retry-After waits an hour', async (t) => {
  const u = await startFakeUpstream(t);
  serveAll(u);
  const clock = new ManualClock('2026-11-21T12:00:00Z');
  const { service } = await startService(t, { env: upstreamEnv(u), clock });
  u.route('/2.2.0/astronaut/', (_req, res) => res.writeHead(429).end());
  await service.events.refresh().done;
  t.equal(service.events.status().find((s) => s.source === 'astronauts')?.retry_not_before, '2026-11-21T13:00:00.000Z');
});

t.test('POST /api/events/refresh runs in the background and never twice at once', async (t) => {
  const u = await startFakeUpstream(t);
  serveAll(u);
  const { api, service } = await startService(t, { env: upstreamEnv(u) });
  const hits = () => u.hits.get('/SOCRATES/sort-minRange.csv') ?? 0;
  const h0 = hits();
  // Hold the SOCRATES answer until released, so the refresh stays running.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  u.route('/SOCRATES/sort-minRange.csv', (req, res) => {
    void held.then(() => serveFixture('socrates-sort-minRange.csv', 'text/csv')(req, res));
  });
  const first = await api.post('/api/events/refresh');
  t.strictSame({ status: first.body.status, already_running: first.body.already_running }, { status: 'refreshing', already_running: false });
  t.equal((await api.get('/api/events/status')).body.refreshing, true, 'answered before the refresh finished');
  const more = await Promise.all([api.post('/api/events/refresh'), api.post('/api/events/refresh'), api.post('/api/events/refresh')]);
  for (const r of more) {
    t.equal(r.status, 200);
    t.equal(r.body.status, 'refreshing');
    t.equal(r.body.already_running, true);
  }
  while (hits() === h0) await new Promise((r) => setTimeout(r, 10));
  release();
  await service.events.whenIdle();
  t.equal(hits(), h0 + 1, 'one upstream request for four POSTs');
  t.equal((await api.get('/api/events/status')).body.refreshing, false);
  // Once finished, a new one can start.
  const next = await api.post('/api/events/refresh');
  t.equal(next.body.already_running, false);
  await service.events.whenIdle();
  t.equal(hits(), h0 + 2);
});

t.test('a refresh raises conjunction and NEO notifications for those who asked, once per event', async (t) => {
  const u = await startFakeUpstream(t);
  serveAll(u);
  const clock = new ManualClock('2026-11-21T12:00:00Z');
  const { api, service } = await startService(t, { env: upstreamEnv(u), clock });
  await api.put('/api/notifications/preferences/global/conjunction', { config: { max_range_km: 0.1 } });
  await api.put('/api/notifications/preferences/global/neo_approach', { config: { max_miss_distance_lunar: 5 } });
  await service.events.refresh().done;
  const titles = () => service.store.listNotifications(200, 0).map((n) => n.title);
  // Fixture: conjunctions within 0.1 km still ahead are FAKESAT-12 (0.012 km) and TESTBIRD (0.087 km);
  // NEOs within 5 lunar distances: ZZ9 (4.98) and QX1 (0.77).
  t.strictSame(titles().sort(), [
    'Asteroid (2026 QX1)',
    'Conjunction: FAKESAT-12 / FAKESAT DEB',
    'Conjunction: TESTBIRD 4, BLOCK B / ROCKETBODY R/B',
    'Potentially hazardous asteroid (2026 ZZ9)',
  ]);
  await service.events.refresh().done;
  t.equal(titles().length, 4, 'a second refresh with the same events raises nothing');
});

t.test('an upstream that never answers times out; the sample stands in while the cache is empty', async (t) => {
  const u = await startFakeUpstream(t);
  u.route('/SOCRATES/sort-minRange.csv', () => {}); // never answers
  const { service, api } = await startService(t, { env: { ...upstreamEnv(u), UPSTREAM_TIMEOUT_MS: '200' } });
  const c = (await api.get('/api/events/conjunctions')).body;
  t.equal(c.source, 'sample');
  t.match(c.last_error, /did not answer within 200 ms/);
  t.ok(c.conjunctions.every((x: { sat1_name: string }) => x.sat1_name.startsWith('SAMPLE')));
  // The first good answer replaces the sample.
  serveAll(u);
  await service.events.refresh().done;
  t.equal((await api.get('/api/events/conjunctions')).body.source, 'upstream');
});

t.test('however many refreshes are asked for, a source is called at most once per UPSTREAM_MIN_INTERVAL_SECONDS', async (t) => {
  const u = await startFakeUpstream(t);
  serveAll(u);
  const clock = new ManualClock('2026-11-21T12:00:00Z');
  const { service } = await startService(t, { env: { ...upstreamEnv(u), UPSTREAM_MIN_INTERVAL_SECONDS: '300' }, clock });
  const hits = () => u.hits.get('/2.2.0/astronaut/') ?? 0;
  t.equal(hits(), 1, 'the start-up refresh');
  clock.advanceMinutes(4);
  const r = await service.events.refresh().done;
  t.strictSame(
    r.sources.map((s) => s.outcome),
    ['skipped', 'skipped', 'skipped', 'skipped'],
  );
  t.match(r.sources[2].error, /not again before 2026-11-21T12:05:00.000Z/);
  t.equal(hits(), 1, 'no call went out');
  clock.advanceMinutes(1);
  await service.events.refresh().done;
  t.equal(hits(), 2);
});

t.test('a restart refreshes a cache older than the refresh interval, not a fresh one', async (t) => {
  const u = await startFakeUpstream(t);
  serveAll(u);
  const clock = new ManualClock('2026-11-21T12:00:00Z');
  const env = { ...upstreamEnv(u), EVENTS_REFRESH_MINUTES: '360' };
  const first = await startService(t, { env, clock });
  const dbPath = first.dbPath;
  await first.stop();
  const hits = () => u.hits.get('/SOCRATES/sort-minRange.csv') ?? 0;
  t.equal(hits(), 1);
  clock.advanceMinutes(60);
  await (await startService(t, { env, clock, dbPath })).stop();
  t.equal(hits(), 1, 'an hour-old cache is kept');
  clock.advanceMinutes(6 * 60);
  await (await startService(t, { env, clock, dbPath })).stop();
  t.equal(hits(), 2, 'a seven-hour-old cache is refreshed at start');
});

t.test('serve\'s timers: the event refresh repeats on its interval and the tick raises what is due', async (t) => {
  const u = await startFakeUpstream(t);
  serveAll(u);
  const clock = new ManualClock('2026-11-21T12:00:00Z');
  const config = configFromEnv({ ...upstreamEnv(u), UPSTREAM_MIN_INTERVAL_SECONDS: '0', PORT: '0', DATABASE_PATH: path.join(t.testdir(), 'timers.db') });
  config.refreshMinutes = 0.002; // 120 ms, so the test sees several rounds
  config.tickSeconds = 0.05;
  const service = await startSpaceService(config, { clock, sleep: async () => {} });
  t.teardown(() => service.close());
  await service.initialRefresh;
  // A conjunction 30 minutes ahead with a 60-minute lead: the next tick (not a refresh) must raise it.
  service.store.savePreference(null, 'conjunction', { ...PREFERENCE_DEFAULTS, lead_times: [60], config: { max_range_km: 0.02 } }, clock.now());
  const deadline = Date.now() + 20_000;
  while (((u.hits.get('/SOCRATES/sort-minRange.csv') ?? 0) < 3 || service.store.unreadCount() === 0) && Date.now() < deadline) {
    clock.set('2026-11-22T02:45:00Z'); // 29 min before FAKESAT-12's TCA
    await new Promise((r) => setTimeout(r, 50));
  }
  t.ok((u.hits.get('/SOCRATES/sort-minRange.csv') ?? 0) >= 3, 'refreshed again and again by the timer');
  t.strictSame(
    service.store.listNotifications(10, 0).map((n) => n.title),
    ['Conjunction in under 1 h: FAKESAT-12 / FAKESAT DEB'],
    'raised once by the tick',
  );
});
