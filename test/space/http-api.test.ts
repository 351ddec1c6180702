/**
 * Every endpoint of seed 002 and every error case, over real HTTP against
 * the service on a free port and a real SQLite file.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { GLOBAL_CATEGORIES, LOCATION_CATEGORIES } from '../../api/space/categories';
import { ManualClock } from '../../api/space/clock';
import { migrate, MIGRATIONS } from '../../api/space/db';
import { assertSpaceError, startService } from '../helpers/space';

/** A subscription body as a browser's PushSubscription.toJSON() gives it. */
function browserSubscription(endpoint = `https://push.example.org/send/${crypto.randomUUID()}`) {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  return { endpoint, expirationTime: null, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') } };
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

t.test('GET /api/notifications/vapid-key: the configured key, 503 without one', async (t) => {
  const { api, config } = await startService(t);
  const r = await api.get('/api/notifications/vapid-key');
  t.equal(r.status, 200);
  t.strictSame(r.body, { public_key: config.vapid?.publicKey });
  const { api: bare } = await startService(t, { vapid: null });
  assertSpaceError(t, await bare.get('/api/notifications/vapid-key'), 503, 'SPACE_ERR_VAPID_NOT_CONFIGURED');
});

t.test('subscribe: created, upserted by endpoint, deactivated and kept, reactivated', async (t) => {
  const { api, service } = await startService(t);
  const sub = browserSubscription();
  const r1 = await api.post('/api/notifications/subscribe', { ...sub, user_agent: 'Firefox/140' });
  t.equal(r1.status, 200);
  t.strictSame(Object.keys(r1.body).sort(), ['created_at', 'endpoint', 'id', 'is_active']);
  t.equal(r1.body.endpoint, sub.endpoint);
  t.equal(r1.body.is_active, true);
  t.match(r1.body.created_at, ISO);

  // Same endpoint, new keys: same record, keys replaced.
  const again = browserSubscription(sub.endpoint);
  const r2 = await api.post('/api/notifications/subscribe', again);
  t.equal(r2.body.id, r1.body.id, 'upsert keeps the id');
  t.equal(r2.body.created_at, r1.body.created_at, 'and the creation time');
  t.equal(service.store.activePushTargets()[0].keys.p256dh, again.keys.p256dh, 'keys updated');

  const other = await api.post('/api/notifications/subscribe', browserSubscription());
  t.not(other.body.id, r1.body.id);

  const d = await api.del(`/api/notifications/subscribe/${r1.body.id}`);
  t.strictSame(d.body, { ok: true });
  t.strictSame(
    service.store.activePushTargets().map((s) => s.id),
    [other.body.id],
    'only the other subscription is active',
  );
  t.equal(service.store.subscriptionHealth(r1.body.id)?.is_active, false, 'the record is kept, inactive');
  t.strictSame((await api.del(`/api/notifications/subscribe/${r1.body.id}`)).body, { ok: true }, 'deleting an inactive one again is ok');

  const r3 = await api.post('/api/notifications/subscribe', again);
  t.equal(r3.body.id, r1.body.id);
  t.equal(r3.body.is_active, true, 'subscribing again reactivates');
});

t.test('subscribe: invalid bodies are 422 or 400, unknown ids 404', async (t) => {
  const { api } = await startService(t);
  const good = browserSubscription();
  const cases: Array<[string, unknown]> = [
    ['no endpoint', { keys: good.keys }],
    ['no keys', { endpoint: good.endpoint }],
    ['no auth', { endpoint: good.endpoint, keys: { p256dh: good.keys.p256dh } }],
    ['endpoint not a URL', { ...good, endpoint: 'not a url' }],
    ['endpoint not http', { ...good, endpoint: 'ftp://push.example.org/x' }],
    ['endpoint too long', { ...good, endpoint: `https://p.example.org/${'x'.repeat(2100)}` }],
    ['p256dh not a key', { ...good, keys: { ...good.keys, p256dh: 'AAAA' } }],
    ['p256dh not base64url', { ...good, keys: { ...good.keys, p256dh: '!!!' } }],
    ['auth wrong length', { ...good, keys: { ...good.keys, auth: 'AAAA' } }],
    ['unknown field', { ...good, user_agnet: 'typo' }],
    ['endpoint a number', { ...good, endpoint: 5 }],
    ['array body', [good]],
  ];
  for (const [what, body] of cases) assertSpaceError(t, await api.post('/api/notifications/subscribe', body), 422, 'SPACE_ERR_INVALID', what);
  assertSpaceError(t, await api.send('POST', '/api/notifications/subscribe', { raw: '{"endpoint":', headers: { 'content-type': 'application/json' } }), 400, 'SPACE_ERR_MALFORMED_JSON', 'broken JSON');
  assertSpaceError(t, await api.send('POST', '/api/notifications/subscribe', { raw: 'null' }), 400, 'SPACE_ERR_MALFORMED_JSON', 'JSON null');
  assertSpaceError(t, await api.send('POST', '/api/notifications/subscribe'), 422, 'SPACE_ERR_INVALID', 'no body');
  assertSpaceError(t, await api.post('/api/notifications/subscribe', { ...good, user_agent: 'x'.repeat(20_000) }), 413, 'SPACE_ERR_PAYLOAD_TOO_LARGE');
  assertSpaceError(t, await api.del('/api/notifications/subscribe/999'), 404, 'SPACE_ERR_NOT_FOUND', 'unknown sub_id');
  assertSpaceError(t, await api.del('/api/notifications/subscribe/abc'), 422, 'SPACE_ERR_INVALID', 'sub_id not an integer');
  assertSpaceError(t, await api.del('/api/notifications/subscribe/0'), 422, 'SPACE_ERR_INVALID', 'sub_id 0');
  assertSpaceError(t, await api.del('/api/notifications/subscribe/-3'), 422, 'SPACE_ERR_INVALID', 'negative sub_id');
});

t.test('preferences: defaults on write, upsert per scope, ordering, delete', async (t) => {
  const { api } = await startService(t);
  const g = await api.put('/api/notifications/preferences/global/launch');
  t.equal(g.status, 200);
  t.strictSame(g.body, {
    id: g.body.id,
    location_id: null,
    category: 'launch',
    is_enabled: true,
    lead_times: null,
    schedule_cron: null,
    min_altitude: 10,
    timezone: 'UTC',
    config: null,
    quiet_start: null,
    quiet_end: null,
  });
  const full = {
    is_enabled: false,
    lead_times: [1440, 60, 1],
    schedule_cron: '30 7 * * 1-5',
    min_altitude: 45.5,
    timezone: 'Europe/Berlin',
    config: { max_range_km: 0.5, colour: 'red' },
    quiet_start: '22:30',
    quiet_end: '06:45',
  };
  const c = await api.put('/api/notifications/preferences/global/conjunction', full);
  t.strictSame(c.body, { id: c.body.id, location_id: null, category: 'conjunction', ...full });

  // A PUT writes the whole preference: omitted fields go back to their defaults, the id stays.
  const c2 = await api.put('/api/notifications/preferences/global/conjunction', { min_altitude: 0 });
  t.equal(c2.body.id, c.body.id);
  t.equal(c2.body.is_enabled, true);
  t.equal(c2.body.lead_times, null);
  t.equal(c2.body.min_altitude, 0);

  const l7 = await api.put('/api/notifications/preferences/7/satellite_pass', { min_altitude: 90, lead_times: [10] });
  t.equal(l7.body.location_id, 7);
  const l2 = await api.put('/api/notifications/preferences/2/launch', {});
  t.equal(l2.body.location_id, 2, 'the location endpoint accepts a global category');
  t.not(l2.body.id, g.body.id, 'a location preference is separate from the global one of the same category');
  await api.put('/api/notifications/preferences/2/aurora', {});
  await api.put('/api/notifications/preferences/global/agency_scales', {});

  const list = await api.get('/api/notifications/preferences');
  t.strictSame(
    list.body.map((p: { location_id: number | null; category: string }) => `${p.location_id}/${p.category}`),
    ['null/agency_scales', 'null/conjunction', 'null/launch', '2/aurora', '2/launch', '7/satellite_pass'],
    'global first, then by location, then by category',
  );

  t.strictSame((await api.del('/api/notifications/preferences/global/launch')).body, { ok: true });
  assertSpaceError(t, await api.del('/api/notifications/preferences/global/launch'), 404, 'SPACE_ERR_NOT_FOUND', 'deleted twice');
  t.strictSame((await api.del('/api/notifications/preferences/2/launch')).body, { ok: true });
  assertSpaceError(t, await api.del('/api/notifications/preferences/2/launch'), 404, 'SPACE_ERR_NOT_FOUND', 'location deleted twice');
  assertSpaceError(t, await api.del('/api/notifications/preferences/3/aurora'), 404, 'SPACE_ERR_NOT_FOUND', 'other location');
  t.equal((await api.get('/api/notifications/preferences')).body.length, 4);
});

t.test('preferences: every category is accepted where the seed allows it', async (t) => {
  const { api } = await startService(t);
  for (const c of GLOBAL_CATEGORIES) t.equal((await api.put(`/api/notifications/preferences/global/${c}`, {})).status, 200, `global ${c}`);
  for (const c of [...GLOBAL_CATEGORIES, ...LOCATION_CATEGORIES]) t.equal((await api.put(`/api/notifications/preferences/1/${c}`, {})).status, 200, `location ${c}`);
  for (const c of LOCATION_CATEGORIES) {
    assertSpaceError(t, await api.put(`/api/notifications/preferences/global/${c}`, {}), 400, 'SPACE_ERR_LOCATION_CATEGORY_ON_GLOBAL', `global ${c}`);
  }
  t.equal((await api.get('/api/notifications/preferences')).body.length, GLOBAL_CATEGORIES.length * 2 + LOCATION_CATEGORIES.length);
});

t.test('preferences: each bound and rule is enforced with 422', async (t) => {
  const { api } = await startService(t);
  const bad: Array<[string, unknown]> = [
    ['11 lead times', { lead_times: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] }],
    ['lead time 0', { lead_times: [0] }],
    ['lead time 10081', { lead_times: [10081] }],
    ['fractional lead time', { lead_times: [1.5] }],
    ['lead_times not a list', { lead_times: 5 }],
    ['min_altitude -0.1', { min_altitude: -0.1 }],
    ['min_altitude 90.01', { min_altitude: 90.01 }],
    ['min_altitude a string', { min_altitude: '10' }],
    ['timezone unknown', { timezone: 'Mars/Olympus_Mons' }],
    ['timezone empty', { timezone: '' }],
    ['timezone null', { timezone: null }],
    ['cron with 61 minutes', { schedule_cron: '61 * * * *' }],
    ['cron garbage', { schedule_cron: 'every day' }],
    ['cron empty', { schedule_cron: '' }],
    ['21 config keys', { config: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, i])) }],
    ['config a list', { config: [1] }],
    ['quiet_start 24:00', { quiet_start: '24:00', quiet_end: '06:00' }],
    ['quiet_end 7:00', { quiet_start: '22:00', quiet_end: '7:00' }],
    ['quiet_start alone', { quiet_start: '22:00' }],
    ['is_enabled a string', { is_enabled: 'yes' }],
    ['unknown field', { enabled: true }],
    ['id is output only', { id: 3 }],
  ];
  for (const [what, body] of bad) assertSpaceError(t, await api.put('/api/notifications/preferences/global/launch', body), 422, 'SPACE_ERR_INVALID', what);
  // Limits exactly at their bounds are accepted.
  const edge = await api.put('/api/notifications/preferences/global/launch', {
    lead_times: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10080],
    min_altitude: 90,
    config: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])),
    schedule_cron: '0 8 * * *',
    timezone: 'UTC',
    quiet_start: '00:00',
    quiet_end: '23:59',
  });
  t.equal(edge.status, 200, `bounds accepted: ${edge.text.slice(0, 200)}`);
  t.equal((await api.put('/api/notifications/preferences/global/launch', { min_altitude: 0, timezone: 'America/Argentina/Buenos_Aires' })).status, 200);
  // Settings this service reads are type-checked for their category.
  assertSpaceError(t, await api.put('/api/notifications/preferences/global/conjunction', { config: { max_range_km: 'far' } }), 422, 'SPACE_ERR_INVALID', 'conjunction config');
  assertSpaceError(t, await api.put('/api/notifications/preferences/global/neo_approach', { config: { hazardous_only: 1 } }), 422, 'SPACE_ERR_INVALID', 'neo config');
  // Unknown categories and bad location ids anywhere.
  assertSpaceError(t, await api.put('/api/notifications/preferences/global/weather', {}), 422, 'SPACE_ERR_INVALID', 'unknown category');
  assertSpaceError(t, await api.put('/api/notifications/preferences/1/weather', {}), 422, 'SPACE_ERR_INVALID', 'unknown location category');
  assertSpaceError(t, await api.del('/api/notifications/preferences/global/weather'), 422, 'SPACE_ERR_INVALID', 'delete unknown category');
  assertSpaceError(t, await api.put('/api/notifications/preferences/x1/launch', {}), 422, 'SPACE_ERR_INVALID', 'location id not an integer');
  assertSpaceError(t, await api.del('/api/notifications/preferences/0/launch'), 422, 'SPACE_ERR_INVALID', 'location id 0');
  assertSpaceError(t, await api.send('PUT', '/api/notifications/preferences/global/launch', { raw: '{oops' }), 400, 'SPACE_ERR_MALFORMED_JSON');
  t.strictSame(
    (await api.get('/api/notifications/preferences')).body.map((p: { category: string }) => p.category),
    ['launch'],
    'no rejected write left anything behind',
  );
});

t.test('notification log: newest first, paging, limits, read state', async (t) => {
  const { api, service } = await startService(t);
  const ids: number[] = [];
  for (let i = 0; i < 260; i++) ids.push(service.store.logNotification({ category: 'launch', title: `n${i}`, body: 'b', data: { i }, location_id: i % 2 ? 4 : null }, false, new Date()).id);

  const first = await api.get('/api/notifications');
  t.equal(first.body.length, 50, 'default page of 50');
  t.equal(first.body[0].id, ids[259], 'newest first');
  t.strictSame(Object.keys(first.body[0]).sort(), ['body', 'category', 'data_json', 'id', 'location_id', 'push_sent', 'read_at', 'sent_at', 'title']);
  t.equal(first.body[0].data_json, '{"i":259}', 'data_json is JSON text');
  t.equal(first.body[0].location_id, 4);
  t.equal(first.body[1].location_id, null);
  t.equal(first.body[0].push_sent, false);
  t.equal((await api.get('/api/notifications?limit=200')).body.length, 200, 'max page');
  const page = await api.get('/api/notifications?limit=10&offset=255');
  t.strictSame(
    page.body.map((n: { id: number }) => n.id),
    ids.slice(0, 5).reverse(),
    'offset pages back in time',
  );
  t.strictSame((await api.get('/api/notifications?offset=1000')).body, []);
  for (const q of ['limit=201', 'limit=0', 'limit=-1', 'limit=abc', 'limit=1.5', 'offset=-1', 'offset=x', 'limit=10&limit=20']) {
    assertSpaceError(t, await api.get(`/api/notifications?${q}`), 422, 'SPACE_ERR_INVALID', q);
  }

  t.strictSame((await api.get('/api/notifications/unread-count')).body, { count: 260 });
  t.strictSame((await api.post(`/api/notifications/${ids[3]}/read`)).body, { ok: true });
  t.strictSame((await api.get('/api/notifications/unread-count')).body, { count: 259 });
  const readAt = service.store.listNotifications(1, 256)[0].read_at;
  t.match(readAt, ISO);
  t.strictSame((await api.post(`/api/notifications/${ids[3]}/read`)).body, { ok: true }, 'reading twice is fine');
  t.equal(service.store.listNotifications(1, 256)[0].read_at, readAt, 'and keeps the first read_at');
  assertSpaceError(t, await api.post('/api/notifications/99999/read'), 404, 'SPACE_ERR_NOT_FOUND');
  assertSpaceError(t, await api.post('/api/notifications/abc/read'), 422, 'SPACE_ERR_INVALID');
  t.strictSame((await api.post('/api/notifications/read-all')).body, { ok: true });
  t.strictSame((await api.get('/api/notifications/unread-count')).body, { count: 0 });
  t.equal(service.store.listNotifications(1, 256)[0].read_at, readAt, 'read-all leaves earlier read_at alone');
});

t.test('notification log: keyset paging with before_id walks the whole log, Link names the next page', async (t) => {
  const { api, service } = await startService(t);
  const ids: number[] = [];
  for (let i = 0; i < 125; i++) ids.push(service.store.logNotification({ category: 'launch', title: `n${i}`, body: 'b', data: null, location_id: null }, false, new Date()).id);
  const newestFirst = [...ids].reverse();

  const first = await api.get('/api/notifications?limit=50');
  t.equal(first.headers.get('link'), `</api/notifications?limit=50&before_id=${newestFirst[49]}>; rel="next"`);
  const seen: number[] = first.body.map((n: { id: number }) => n.id);
  let next = first.headers.get('link');
  while (next) {
    const url = /^<([^>]+)>; rel="next"$/.exec(next)![1];
    const page = await api.get(url);
    t.equal(page.status, 200);
    seen.push(...page.body.map((n: { id: number }) => n.id));
    next = page.headers.get('link');
  }
  t.strictSame(seen, newestFirst, 'every entry once, newest first, following Link');
  t.strictSame(
    (await api.get(`/api/notifications?before_id=${ids[10]}&limit=3`)).body.map((n: { id: number }) => n.id),
    [ids[9], ids[8], ids[7]],
  );
  t.strictSame((await api.get(`/api/notifications?before_id=${ids[0]}`)).body, [], 'nothing older than the oldest');
  t.equal((await api.get(`/api/notifications?before_id=${ids[0]}`)).headers.get('link'), null, 'and no next page');
  t.equal((await api.get('/api/notifications?limit=50&offset=100')).headers.get('link'), null, 'a short offset page has no next page');
  t.equal((await api.get('/api/notifications?limit=50&offset=50')).headers.get('link'), `</api/notifications?limit=50&before_id=${newestFirst[99]}>; rel="next"`, 'a full offset page links on by keyset');
  for (const q of ['before_id=0', 'before_id=-3', 'before_id=x', `before_id=${ids[5]}&offset=0`]) {
    assertSpaceError(t, await api.get(`/api/notifications?${q}`), 422, 'SPACE_ERR_INVALID', q);
  }
});

t.test('notification log: the page JSON written by SQLite (json_object) is byte for byte what JSON.stringify gives', async (t) => {
  const clock = new ManualClock('2026-11-21T12:00:00Z');
  const { api, service } = await startService(t, { clock });
  // The last two: the text the page query writes a read-all's read_at over, inside values (it must stay as it is there).
  const odd = ['quote " and backslash \\', 'tab\tnew\nline', 'é ✓ 🚀', '\u2028\u2029', '\u0000\u001f', '</script>', '"read_at":null,', 'x\\","read_at":null,'];
  for (const [i, text] of odd.entries()) {
    const e = service.store.logNotification({ category: 'launch', title: text, body: `b ${text}`, data: { text, n: [1.5, null, true] }, location_id: i % 2 ? 2147483647 : null }, i % 3 === 0, clock.now());
    if (i === 2) service.store.markRead(e.id, clock.now());
  }
  await api.post('/api/notifications/read-all');
  // Entries under the read-all mark: one read again (it keeps the mark's read_at), one marked sent afterwards.
  service.store.markRead(1, clock.now());
  service.store.markPushSent(2);
  service.store.logNotification({ category: 'test', title: 'after', body: 'b', data: null, location_id: null }, false, clock.now());
  const page = await api.get('/api/notifications?limit=200');
  t.equal(page.text, JSON.stringify(service.store.listNotifications(200, 0)));
  t.match(page.headers.get('content-type'), /^application\/json; charset=utf-8/);
  const keyset = await api.get('/api/notifications?limit=3&before_id=5');
  t.equal(keyset.text, JSON.stringify(service.store.listNotificationsBefore(5, 3)));
  t.equal(keyset.body.length, 3);
});

t.test('notification log: a page kept between requests never outlives a write to the log, by this service or another connection', async (t) => {
  const clock = new ManualClock('2026-11-21T12:00:00Z');
  const { api, service, dbPath } = await startService(t, { clock });
  const log = (title: string) => service.store.logNotification({ category: 'launch', title, body: 'b', data: null, location_id: null }, false, clock.now());
  const first = log('one');
  const second = log('two');
  const page = async (q = '') => (await api.get(`/api/notifications${q}`)).body as Array<{ id: number; title: string; read_at: string | null; push_sent: boolean }>;
  t.strictSame((await page()).map((e) => e.title), ['two', 'one']);
  t.strictSame((await page()).map((e) => e.title), ['two', 'one'], 'asked again: the same');

  log('three');
  t.strictSame((await page()).map((e) => e.title), ['three', 'two', 'one'], 'a new entry shows at once');
  clock.advanceMinutes(1);
  await api.post(`/api/notifications/${first.id}/read`);
  t.equal((await page()).find((e) => e.id === first.id)?.read_at, clock.now().toISOString(), 'a read shows at once');
  service.store.markPushSent(second.id);
  t.equal((await page()).find((e) => e.id === second.id)?.push_sent, true, 'a push marked sent shows at once');
  clock.advanceMinutes(1);
  await page(`?before_id=${second.id + 1}`);
  await api.post('/api/notifications/read-all');
  t.ok((await page()).every((e) => e.read_at !== null), 'read-all shows at once');
  t.equal((await page(`?before_id=${second.id + 1}`)).find((e) => e.id === second.id)?.read_at, clock.now().toISOString(), 'also on a keyset page asked for before it');
  clock.advanceMinutes(400 * 24 * 60);
  service.maintain();
  t.strictSame(await page(), [], 'retention shows at once');

  // Another process writing to the same file (e.g. a second service or a script) is seen through SQLite's data_version.
  log('four');
  t.strictSame((await page()).map((e) => e.title), ['four']);
  const other = new Database(dbPath);
  t.teardown(() => other.close());
  other.prepare("UPDATE notifications SET read_at = '2030-01-01T00:00:00.000Z' WHERE title = 'four'").run();
  t.equal((await page())[0].read_at, '2030-01-01T00:00:00.000Z', "another connection's write shows at once");
  t.equal((await page())[0].read_at, '2030-01-01T00:00:00.000Z');
});

t.test('notification log: a store that fails answers 500 with the JSON error body, and the service goes on', async (t) => {
  const { api, service } = await startService(t);
  const original = service.store.notificationPage.bind(service.store);
  service.store.notificationPage = () => {
    throw new Error('disk I/O error');
  };
  const failed = await api.get('/api/notifications');
  assertSpaceError(t, failed, 500, 'SPACE_ERR_INTERNAL', 'the page');
  t.match(failed.body.error, /disk I\/O error/);
  service.store.notificationPage = original;
  t.equal((await api.get('/api/notifications')).status, 200, 'the next request is served');
});

t.test('notification log: entries written before the stored page JSON (schema 2) are served as before, and kept up by later writes', async (t) => {
  const dbPath = path.join(t.testdir(), 'v2.db');
  const db = new Database(dbPath);
  migrate(db, MIGRATIONS.slice(0, 2));
  const ins = db.prepare("INSERT INTO notifications (category, title, body, data_json, location_id, sent_at, read_at, push_sent) VALUES ('launch', ?, 'b \"q\"', '{\"k\":[1,2]}', ?, '2026-11-20T00:00:00.000Z', ?, ?)");
  ins.run('old unread', 7, null, 1);
  ins.run('old read', null, '2026-11-20T01:00:00.000Z', 0);
  ins.run('old unread too', null, null, 0);
  db.close();
  const { api, service } = await startService(t, { dbPath });
  const body = (await api.get('/api/notifications')).text;
  t.equal(body, JSON.stringify(service.store.listNotifications(50, 0)), 'byte for byte what the entries give');
  t.strictSame(JSON.parse(body).map((e: { title: string }) => e.title), ['old unread too', 'old read', 'old unread']);
  await api.post('/api/notifications/1/read');
  await api.post('/api/notifications/read-all');
  const after = (await api.get('/api/notifications')).text;
  t.equal(after, JSON.stringify(service.store.listNotifications(50, 0)));
  t.ok(JSON.parse(after).every((e: { read_at: string | null }) => e.read_at !== null));
});

t.test('notification log queries: pages walk the rowid, the unread count reads a counter (no scan of the log)', async (t) => {
  const { service } = await startService(t);
  const plan = (sql: string) => (service.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail);
  const before = plan('SELECT id FROM notifications n WHERE id < 500 ORDER BY id DESC LIMIT 50');
  t.match(before[0], /^SEARCH n USING INTEGER PRIMARY KEY \(rowid<\?\)/, before.join('; '));
  t.notOk(before.some((d) => /TEMP B-TREE/.test(d)), 'no sort');
  const first = plan('SELECT id FROM notifications n ORDER BY id DESC LIMIT 50');
  t.match(first[0], /^SCAN n$/, 'walks the table in rowid order (stops at LIMIT)');
  t.notOk(first.some((d) => /TEMP B-TREE/.test(d)), 'no sort');
  const mark = plan('SELECT m.read_at FROM read_all_marks m WHERE m.up_to_id >= 7 ORDER BY m.up_to_id LIMIT 1');
  t.match(mark[0], /USING INTEGER PRIMARY KEY \(rowid>\?\)/, 'the read-all mark of an entry is one lookup');
  const retention = plan("DELETE FROM notifications WHERE sent_at < '2025-01-01'");
  t.match(retention.join('; '), /USING (COVERING )?INDEX notifications_sent_at/, 'retention finds old entries by index');
});

t.test('POST /api/notifications/test with no subscription: logged, sent_count 0', async (t) => {
  const { api } = await startService(t);
  const r = await api.post('/api/notifications/test');
  t.equal(r.status, 200);
  t.equal(r.body.ok, true);
  t.equal(r.body.sent_count, 0);
  const log = (await api.get('/api/notifications')).body;
  t.equal(log.length, 1);
  t.equal(log[0].category, 'test');
  t.equal(log[0].push_sent, false);
  t.equal(log[0].id, r.body.notification_id);
});

t.test('space events: offline sample with no upstream, shapes and counts', async (t) => {
  const { api } = await startService(t);
  const c = await api.get('/api/events/conjunctions');
  t.equal(c.status, 200);
  t.equal(c.body.count, c.body.conjunctions.length);
  t.ok(c.body.count > 0, 'sample conjunctions');
  t.equal(c.body.source, 'sample');
  t.match(c.body.last_error, /unreachable/, 'the failure is reported beside the sample');
  t.strictSame(Object.keys(c.body.conjunctions[0]).sort(), ['max_probability', 'min_range_km', 'relative_speed_km_s', 'sat1_id', 'sat1_name', 'sat2_id', 'sat2_name', 'tca']);
  const n = await api.get('/api/events/neos');
  t.equal(n.body.count, n.body.neos.length);
  t.equal(n.body.hazardous_count, n.body.neos.filter((x: { is_potentially_hazardous: boolean }) => x.is_potentially_hazardous).length);
  t.ok(n.body.hazardous_count > 0 && n.body.hazardous_count < n.body.count);
  const a = await api.get('/api/events/astronauts');
  t.equal(a.body.count, a.body.astronauts.length);
  t.strictSame(Object.keys(a.body.astronauts[0]).sort(), ['agency', 'bio', 'craft', 'id', 'name', 'nationality', 'profile_image']);
  t.strictSame(a.body.crafts, [...new Set(a.body.astronauts.map((x: { craft: string }) => x.craft))].sort());
  const r = await api.post('/api/events/refresh');
  t.equal(r.status, 200);
  t.equal(r.body.status, 'refreshing');
  t.type(r.body.message, 'string');
});

t.test('unknown paths 404, wrong methods 405 with Allow, broken requests 400', async (t) => {
  const { api, service } = await startService(t);
  assertSpaceError(t, await api.get('/api/nope'), 404, 'SPACE_ERR_NOT_FOUND');
  assertSpaceError(t, await api.get('/api/notifications/ws'), 404, 'SPACE_ERR_NOT_FOUND', 'feed without upgrade');
  const cases: Array<[string, string, string]> = [
    ['POST', '/api/notifications/vapid-key', 'GET'],
    ['GET', '/api/notifications/subscribe', 'POST'],
    ['GET', '/api/notifications/subscribe/1', 'DELETE'],
    ['POST', '/api/notifications/preferences', 'GET'],
    ['GET', '/api/notifications/preferences/global/launch', 'PUT, DELETE'],
    ['DELETE', '/api/notifications', 'GET'],
    ['GET', '/api/notifications/read-all', 'POST'],
    ['GET', '/api/notifications/test', 'POST'],
    ['GET', '/api/notifications/3/read', 'POST'],
    ['POST', '/api/events/conjunctions', 'GET'],
    ['GET', '/api/events/refresh', 'POST'],
  ];
  for (const [method, path, allow] of cases) {
    const r = await api.send(method, path);
    assertSpaceError(t, r, 405, 'SPACE_ERR_METHOD_NOT_ALLOWED', `${method} ${path}`);
    t.equal(r.headers.get('allow'), allow);
  }
  // A request line the HTTP parser refuses still gets a JSON answer.
  const net = await import('node:net');
  const raw = await new Promise<string>((resolve) => {
    const s = net.connect(Number(new URL(service.url).port), '127.0.0.1', () => s.write('NOT HTTP AT ALL\r\n\r\n'));
    let out = '';
    s.on('data', (d) => (out += d));
    s.on('close', () => resolve(out));
  });
  t.match(raw, /^HTTP\/1\.1 400/);
  t.match(raw, /"code":"SPACE_ERR_MALFORMED_JSON"/);
});
