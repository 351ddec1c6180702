/**
 * Bounded storage: the write-ahead log stays small under many writes (SQLite's
 * automatic checkpoint runs, the maintenance run truncates the file), the
 * notification log keeps NOTIFICATION_RETENTION_DAYS of history, and read-all
 * is one mark whose effect (read_at, the unread counter) is exact.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ManualClock } from '../../api/space/clock';
import { configFromEnv, ConfigError, DEFAULT_RETENTION_DAYS } from '../../api/space/config';
import Database from 'better-sqlite3';
import { migrate, MIGRATIONS, openDatabase } from '../../api/space/db';
import { maintainDatabase } from '../../api/space/serve';
import { Store } from '../../api/space/store';
import { startService } from '../helpers/space';

const MB = 1024 * 1024;
const walSize = (file: string) => (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0);

t.test('20,000 writes through the store: the WAL stays under 8 MB (it grew to hundreds of MB when writes never let SQLite checkpoint)', async (t) => {
  const file = path.join(t.testdir(), 'space.db');
  const db = openDatabase(file);
  t.teardown(() => db.close());
  const store = new Store(db);
  const now = new Date('2026-11-21T12:00:00Z');
  let maxWal = 0;
  for (let i = 0; i < 10_000; i++) {
    // The writes of a subscribe and a test notification, as the API makes them (each its own commit).
    store.upsertSubscription({ endpoint: `https://push.example.org/${i}`, p256dh: 'p'.repeat(87), auth: 'a'.repeat(22), user_agent: null }, now);
    const e = store.logNotification({ category: 'test', title: 'Test notification', body: 'Push notifications reach this device.', data: { test: true }, location_id: null }, false, now);
    const sent = store.markPushSent(e.id);
    if (i % 1000 === 0) t.equal(sent.push_sent, true, `entry ${e.id} marked sent`);
    if (i % 500 === 0) maxWal = Math.max(maxWal, walSize(file));
  }
  maxWal = Math.max(maxWal, walSize(file));
  t.ok(maxWal < 8 * MB, `WAL at most ${(maxWal / MB).toFixed(1)} MB`);
  t.ok(fs.statSync(file).size > 1 * MB, 'the data reached the database file (checkpoints ran)');
  const r = maintainDatabase(db, store, now, DEFAULT_RETENTION_DAYS);
  t.equal(r.checkpoint.busy, false);
  t.equal(walSize(file), 0, 'the maintenance checkpoint truncates the WAL');
  t.equal(store.unreadCount(), 10_000);
});

t.test('NOTIFICATION_RETENTION_DAYS: a year by default, 0 keeps everything, nonsense refused', async (t) => {
  t.equal(configFromEnv({}).retentionDays, 365);
  t.equal(configFromEnv({ NOTIFICATION_RETENTION_DAYS: '30' }).retentionDays, 30);
  t.equal(configFromEnv({ NOTIFICATION_RETENTION_DAYS: '0' }).retentionDays, 0);
  t.throws(() => configFromEnv({ NOTIFICATION_RETENTION_DAYS: 'a year' }), ConfigError);
  t.throws(() => configFromEnv({ NOTIFICATION_RETENTION_DAYS: '-1' }), /NOTIFICATION_RETENTION_DAYS must be an integer/);
});

t.test('retention: the maintenance run deletes entries older than the retention, the rest and the counts stay exact', async (t) => {
  const clock = new ManualClock('2025-01-01T00:00:00Z');
  const { api, service } = await startService(t, { clock, env: { NOTIFICATION_RETENTION_DAYS: '30' } });
  const log = (title: string) => service.store.logNotification({ category: 'launch', title, body: 'b', data: null, location_id: null }, false, clock.now()).id;
  const old = [log('old 1'), log('old 2'), log('old 3')];
  await api.post(`/api/notifications/${old[0]}/read`);
  await api.post('/api/notifications/read-all'); // a mark covering the old entries
  clock.advanceMinutes(20 * 1440);
  const mid = [log('mid 1'), log('mid 2')];
  clock.advanceMinutes(15 * 1440); // the old ones are 35 days old, the middle ones 15
  const fresh = log('fresh');
  service.store.claimEventKey('conjunction:old', new Date('2025-01-01T00:00:00Z'));
  t.strictSame((await api.get('/api/notifications/unread-count')).body, { count: 3 });

  const r = service.maintain();
  t.strictSame(r.pruned, { notifications: 3, eventKeys: 1 });
  const left = (await api.get('/api/notifications')).body as Array<{ id: number; read_at: string | null }>;
  t.strictSame(
    left.map((n) => n.id),
    [fresh, ...mid.reverse()],
    'only the entries within 30 days remain',
  );
  t.ok(left.every((n) => n.read_at === null));
  t.strictSame((await api.get('/api/notifications/unread-count')).body, { count: 3 }, 'deleting read entries leaves the unread count');
  t.equal((service.db.prepare('SELECT count(*) AS n FROM read_all_marks').get() as { n: number }).n, 0, 'the mark that covered only deleted entries is gone');

  clock.advanceMinutes(40 * 1440);
  service.maintain();
  t.strictSame((await api.get('/api/notifications')).body, []);
  t.strictSame((await api.get('/api/notifications/unread-count')).body, { count: 0 }, 'deleting unread entries counts them out');
});

t.test('NOTIFICATION_RETENTION_DAYS=0 keeps the log for ever; event keys still go after 30 days', async (t) => {
  const clock = new ManualClock('2025-01-01T00:00:00Z');
  const { api, service } = await startService(t, { clock, env: { NOTIFICATION_RETENTION_DAYS: '0' } });
  service.store.logNotification({ category: 'launch', title: 'old', body: 'b', data: null, location_id: null }, false, clock.now());
  service.store.claimEventKey('neo_approach:old', clock.now());
  clock.advanceMinutes(29 * 1440);
  service.store.claimEventKey('neo_approach:recent', clock.now());
  clock.set('2025-02-01T00:00:00Z');
  t.strictSame(service.maintain().pruned, { notifications: 0, eventKeys: 1 });
  t.equal(service.store.eventKeySeen('neo_approach:old'), false);
  t.equal(service.store.eventKeySeen('neo_approach:recent'), true);
  clock.set('2035-01-01T00:00:00Z');
  service.maintain();
  t.equal((await api.get('/api/notifications')).body.length, 1, 'the ten-year-old entry is still there');
});

t.test('read-all is one mark: earlier read_at kept, later entries unread, a later single read keeps the mark time', async (t) => {
  const clock = new ManualClock('2026-11-21T12:00:00Z');
  const { api, service } = await startService(t, { clock });
  const log = () => service.store.logNotification({ category: 'launch', title: 't', body: 'b', data: null, location_id: null }, false, clock.now()).id;
  const a = [log(), log(), log()];
  clock.advanceMinutes(1);
  await api.post(`/api/notifications/${a[1]}/read`);
  const readOne = clock.now().toISOString();
  clock.advanceMinutes(1);
  t.strictSame((await api.post('/api/notifications/read-all')).body, { ok: true });
  const allAt = clock.now().toISOString();
  const rows = service.db.prepare('SELECT count(*) AS n FROM notifications WHERE read_at IS NULL').get() as { n: number };
  t.equal(rows.n, 2, 'read-all wrote no row of the log');
  clock.advanceMinutes(1);
  const b = [log(), log()];
  t.strictSame((await api.get('/api/notifications/unread-count')).body, { count: 2 });
  const byId = new Map(((await api.get('/api/notifications')).body as Array<{ id: number; read_at: string | null }>).map((n) => [n.id, n.read_at]));
  t.strictSame([a[0], a[1], a[2], b[0], b[1]].map((id) => byId.get(id)), [allAt, readOne, allAt, null, null]);

  clock.advanceMinutes(1);
  await api.post(`/api/notifications/${a[0]}/read`);
  t.equal((await api.get('/api/notifications')).body.find((n: { id: number }) => n.id === a[0]).read_at, allAt, 'read again later: the read-all time stays');
  t.strictSame((await api.get('/api/notifications/unread-count')).body, { count: 2 }, 'an entry covered by read-all does not count twice');
  await api.post(`/api/notifications/${b[0]}/read`);
  t.strictSame((await api.get('/api/notifications/unread-count')).body, { count: 1 });
  await api.post('/api/notifications/read-all');
  await api.post('/api/notifications/read-all');
  t.strictSame((await api.get('/api/notifications/unread-count')).body, { count: 0 });
  t.equal((service.db.prepare('SELECT count(*) AS n FROM read_all_marks').get() as { n: number }).n, 2, 'a read-all with nothing new adds no mark');
});

t.test('migration 2 starts the unread counter from the entries already there', async (t) => {
  const file = path.join(t.testdir(), 'v1.db');
  const db = new Database(file);
  migrate(db, MIGRATIONS.slice(0, 1));
  const ins = db.prepare("INSERT INTO notifications (category, title, body, data_json, sent_at, read_at, push_sent) VALUES ('launch', 't', 'b', 'null', '2026-01-01T00:00:00.000Z', ?, 0)");
  ins.run(null);
  ins.run('2026-01-02T00:00:00.000Z');
  ins.run(null);
  db.close();
  const reopened = openDatabase(file);
  t.teardown(() => reopened.close());
  t.equal(new Store(reopened).unreadCount(), 2);
});
