/**
 * The one delivery path with preferences, on an injected clock and a real
 * push service: category enabled, location over global, altitude floor,
 * quiet hours (logged, not pushed), event notifications once per event and
 * lead time, the daily digest on its cron schedule across a DST change.
 */
import t, { type Test } from 'tap';
import { ManualClock } from '../../api/space/clock';
import type { Conjunction, Neo } from '../../api/space/events/types';
import { startPushService, startService, type LocalPushService } from '../helpers/space';

let push: LocalPushService;
t.before(async () => {
  push = await startPushService(t);
});

async function withSubscriber(t: Test, clock: ManualClock) {
  const h = await startService(t, { clock });
  const sub = await push.subscribe(h.config.vapid!.publicKey);
  await h.api.post('/api/notifications/subscribe', { endpoint: sub.endpoint, keys: sub.keys });
  const received = async () => (await push.received(sub.clientHash)).map((m) => JSON.parse(m) as { title: string; category: string; notification_id: number });
  return { ...h, received };
}

function conjunction(over: Partial<Conjunction> = {}): Conjunction {
  return { sat1_name: 'FAKESAT-1', sat1_id: 81001, sat2_name: 'DEBRIS', sat2_id: 82002, tca: '2026-06-02T00:30:00.000Z', min_range_km: 0.2, relative_speed_km_s: 10, max_probability: 1e-4, ...over };
}

t.test('a notification nobody asked for, or disabled, is neither logged nor pushed', async (t) => {
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  const { service, api, received } = await withSubscriber(t, clock);
  const c = { category: 'launch', title: 'Launch', body: 'b', data: {}, location_id: null };
  t.equal((await service.notifier.deliver(c)).decision, 'no_preference');
  await api.put('/api/notifications/preferences/global/launch', { is_enabled: false });
  t.equal((await service.notifier.deliver(c)).decision, 'disabled');
  t.strictSame((await api.get('/api/notifications')).body, []);
  t.strictSame(await received(), []);
  await api.put('/api/notifications/preferences/global/launch', {});
  const r = await service.notifier.deliver(c);
  t.equal(r.decision, 'pushed');
  t.equal(r.entry?.push_sent, true);
  t.strictSame((await received()).map((m) => m.notification_id), [r.entry!.id]);
});

t.test('a location preference governs its location; others fall back to the global one', async (t) => {
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  const { service, api } = await withSubscriber(t, clock);
  await api.put('/api/notifications/preferences/global/launch', {});
  await api.put('/api/notifications/preferences/4/launch', { is_enabled: false });
  const at = (location_id: number | null) => service.notifier.deliver({ category: 'launch', title: 'L', body: 'b', data: {}, location_id });
  t.equal((await at(4)).decision, 'disabled', 'location 4 turned it off');
  t.equal((await at(5)).decision, 'pushed', 'location 5 follows the global preference');
  t.equal((await at(null)).decision, 'pushed');
});

t.test('pass notifications below min_altitude are dropped', async (t) => {
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  const { service, api, received } = await withSubscriber(t, clock);
  await api.put('/api/notifications/preferences/3/satellite_pass', { min_altitude: 30 });
  const pass = (altitude_deg: number) => service.notifier.deliver({ category: 'satellite_pass', title: `ISS ${altitude_deg}`, body: 'b', data: {}, location_id: 3, altitude_deg });
  t.equal((await pass(29.9)).decision, 'below_altitude');
  t.equal((await pass(30)).decision, 'pushed');
  t.strictSame(
    (await received()).map((m) => m.title),
    ['ISS 30'],
  );
  t.equal((await api.get('/api/notifications')).body.length, 1, 'the low pass is not in the log');
});

t.test('quiet hours in the preference\'s zone: logged and broadcast, not pushed; pushed again after', async (t) => {
  // 22:30 in Berlin (CEST) is 20:30Z.
  const clock = new ManualClock('2026-06-01T20:30:00Z');
  const { service, api, received } = await withSubscriber(t, clock);
  await api.put('/api/notifications/preferences/global/solar_flare', { quiet_start: '22:00', quiet_end: '07:00', timezone: 'Europe/Berlin' });
  const flare = (title: string) => service.notifier.deliver({ category: 'solar_flare', title, body: 'X1.2', data: {}, location_id: null });
  const seen: string[] = [];
  service.feed.broadcast = (e) => void seen.push(e.title);
  t.equal((await flare('night')).decision, 'quiet_hours');
  clock.set('2026-06-01T23:59:00Z'); // 01:59 local, after UTC midnight
  t.equal((await flare('after midnight')).decision, 'quiet_hours');
  clock.set('2026-06-02T05:00:00Z'); // 07:00 local
  t.equal((await flare('morning')).decision, 'pushed');
  const log = (await api.get('/api/notifications')).body;
  t.strictSame(
    log.map((n: { title: string; push_sent: boolean }) => [n.title, n.push_sent]),
    [
      ['morning', true],
      ['after midnight', false],
      ['night', false],
    ],
  );
  t.strictSame(
    (await received()).map((m) => m.title),
    ['morning'],
  );
  t.strictSame(seen, ['night', 'after midnight', 'morning'], 'every logged notification is broadcast');
  // The test notification is a request, not an alert: quiet hours do not hold it.
  clock.set('2026-06-01T21:00:00Z');
  await api.put('/api/notifications/preferences/global/launch', { quiet_start: '00:00', quiet_end: '23:59' });
  t.equal((await api.post('/api/notifications/test')).body.sent_count, 1);
});

t.test('conjunctions raise a notification once per event, only from upstream data that matches the settings', async (t) => {
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  const { service, api, received } = await withSubscriber(t, clock);
  const now = clock.now();
  service.store.saveSourceData(
    'conjunctions',
    [conjunction(), conjunction({ sat1_id: 81003, min_range_km: 5 }), conjunction({ sat1_id: 81004, tca: '2026-06-01T11:00:00.000Z' }), conjunction({ sat1_id: 81005, max_probability: 1e-9 })],
    'upstream',
    now,
  );
  t.strictSame(await service.notifier.raiseEventNotifications(service.events), [], 'nobody asked yet');
  await api.put('/api/notifications/preferences/global/conjunction', { config: { max_range_km: 1, min_probability: 1e-6 } });
  const first = await service.notifier.raiseEventNotifications(service.events);
  t.equal(first.length, 1, 'within 1 km, probable enough, still ahead');
  t.match(first[0].entry?.title, /FAKESAT-1 \/ DEBRIS/);
  t.strictSame(await service.notifier.raiseEventNotifications(service.events), [], 'not twice');
  // A refresh that brings the same event back (same objects and TCA) does not repeat it.
  service.store.saveSourceData('conjunctions', [conjunction()], 'upstream', now);
  t.strictSame(await service.notifier.raiseEventNotifications(service.events), []);
  t.equal((await received()).length, 1);
  // The offline sample never raises anything.
  service.store.saveSourceData('conjunctions', [conjunction({ sat1_id: 99999 })], 'sample', now);
  t.strictSame(await service.notifier.raiseEventNotifications(service.events), []);
  // norad_ids narrows to the objects asked for.
  await api.put('/api/notifications/preferences/global/conjunction', { config: { norad_ids: [70000] } });
  service.store.saveSourceData('conjunctions', [conjunction({ sat1_id: 81010 }), conjunction({ sat1_id: 81011, sat2_id: 70000 })], 'upstream', now);
  const narrowed = await service.notifier.raiseEventNotifications(service.events);
  t.strictSame(
    narrowed.map((r) => (JSON.parse(r.entry!.data_json) as { conjunction: Conjunction }).conjunction.sat1_id),
    [81011],
  );
});

t.test('lead times: one notification per lead as each window opens, across midnight', async (t) => {
  const clock = new ManualClock('2026-05-31T00:00:00Z');
  const { service, api } = await withSubscriber(t, clock);
  service.store.saveSourceData('conjunctions', [conjunction()], 'upstream', clock.now()); // TCA 2026-06-02T00:30Z
  await api.put('/api/notifications/preferences/global/conjunction', { lead_times: [1440, 60] });
  const tick = async () => (await service.notifier.raiseEventNotifications(service.events)).map((r) => (JSON.parse(r.entry!.data_json) as { lead_minutes: number }).lead_minutes);
  t.strictSame(await tick(), [], 'two days ahead');
  clock.set('2026-06-01T00:30:00Z');
  t.strictSame(await tick(), [1440], 'a day ahead');
  t.strictSame(await tick(), [], 'once');
  clock.set('2026-06-01T23:30:00Z');
  t.strictSame(await tick(), [60], 'an hour ahead, the evening before');
  clock.set('2026-06-02T00:29:00Z');
  t.strictSame(await tick(), []);
  // An event first seen late opens both windows at once: one notification, for the nearer lead.
  service.store.saveSourceData('conjunctions', [conjunction({ sat1_id: 81020, tca: '2026-06-02T01:00:00.000Z' })], 'upstream', clock.now());
  t.strictSame(await tick(), [60]);
  t.strictSame(await tick(), []);
});

t.test('NEO approaches: hazardous_only and distance filter; lead time before the approach', async (t) => {
  const clock = new ManualClock('2026-11-21T00:00:00Z');
  const { service, api } = await withSubscriber(t, clock);
  const neo = (id: string, hazardous: boolean, lunar: number, at: string): Neo => ({
    id,
    name: `(TEST ${id})`,
    absolute_magnitude: 22,
    estimated_diameter_min_m: 100,
    estimated_diameter_max_m: 200,
    is_potentially_hazardous: hazardous,
    close_approach_date: at.slice(0, 10),
    close_approach_at: at,
    relative_velocity_km_s: 10,
    miss_distance_km: lunar * 384400,
    miss_distance_lunar: lunar,
  });
  service.store.saveSourceData(
    'neos',
    [neo('1', true, 3, '2026-11-22T06:45:00.000Z'), neo('2', false, 1, '2026-11-22T07:00:00.000Z'), neo('3', true, 40, '2026-11-22T08:00:00.000Z')],
    'upstream',
    clock.now(),
  );
  await api.put('/api/notifications/preferences/global/neo_approach', { config: { hazardous_only: true, max_miss_distance_lunar: 5 }, lead_times: [720] });
  t.strictSame(await service.notifier.raiseEventNotifications(service.events), [], 'more than 12 h ahead');
  clock.set('2026-11-21T18:45:00Z');
  const r = await service.notifier.raiseEventNotifications(service.events);
  t.equal(r.length, 1);
  t.match(r[0].entry?.title, /Potentially hazardous asteroid \(TEST 1\) in under 12 h/);
});

t.test('daily digest: on its cron schedule in its zone, across the DST change, once per run', async (t) => {
  // New York: 08:00 EST is 13:00Z; from 8 March 2026 08:00 EDT is 12:00Z.
  const clock = new ManualClock('2026-03-07T10:00:00Z');
  const { service, api, received } = await withSubscriber(t, clock);
  await api.put('/api/notifications/preferences/global/daily_digest', { schedule_cron: '0 8 * * *', timezone: 'America/New_York' });
  const digest = async () => (await service.notifier.runDigest(service.events)).map((r) => r.entry?.sent_at);
  t.strictSame(await digest(), [], 'the first run only starts the count');
  clock.set('2026-03-07T12:59:00Z');
  t.strictSame(await digest(), []);
  clock.set('2026-03-07T13:00:00Z');
  t.strictSame(await digest(), ['2026-03-07T13:00:00.000Z'], '08:00 EST');
  t.strictSame(await digest(), [], 'once');
  clock.set('2026-03-08T11:59:00Z');
  t.strictSame(await digest(), []);
  clock.set('2026-03-08T12:00:00Z');
  t.strictSame(await digest(), ['2026-03-08T12:00:00.000Z'], '08:00 EDT, an hour earlier in UTC');
  // Down for two days: one catch-up digest, not one per missed day.
  clock.set('2026-03-11T09:00:00Z');
  t.equal((await digest()).length, 1);
  t.strictSame(await digest(), []);
  const msgs = await received();
  t.equal(msgs.length, 3);
  t.equal(msgs[0].category, 'daily_digest');
  t.match(msgs[0].title, /digest/i);
  // Without a schedule the default is 08:00 in the preference's zone.
  await api.put('/api/notifications/preferences/global/daily_digest', { timezone: 'UTC' });
  clock.set('2026-03-12T07:59:00Z');
  t.strictSame(await digest(), []);
  clock.set('2026-03-12T08:00:00Z');
  t.equal((await digest()).length, 1);
});
