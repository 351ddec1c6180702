/**
 * Data survives a restart on a real database file; schema migrations apply
 * once, in order, and a database from a newer version is refused.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { migrate, MIGRATIONS, openDatabase, SchemaTooNewError } from '../../api/space/db';
import { startService } from '../helpers/space';

function keys() {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  return { p256dh: ecdh.getPublicKey().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') };
}

t.test('subscriptions, preferences, the log with read state and the event cache survive a restart', async (t) => {
  const dbPath = path.join(t.testdir(), 'nested', 'dir', 'space.db');
  const first = await startService(t, { dbPath });
  const s1 = await first.api.post('/api/notifications/subscribe', { endpoint: 'https://push.example.org/a', keys: keys() });
  const s2 = await first.api.post('/api/notifications/subscribe', { endpoint: 'https://push.example.org/b', keys: keys() });
  await first.api.del(`/api/notifications/subscribe/${s2.body.id}`);
  const pref = await first.api.put('/api/notifications/preferences/5/satellite_pass', { lead_times: [15], timezone: 'Asia/Tokyo', config: { note: 'x' } });
  await first.api.post('/api/notifications/test');
  await first.api.post('/api/notifications/test');
  const log = (await first.api.get('/api/notifications')).body;
  await first.api.post(`/api/notifications/${log[1].id}/read`);
  const logAfterRead = (await first.api.get('/api/notifications')).body;
  t.type(logAfterRead[1].read_at, 'string');
  const conj = (await first.api.get('/api/events/conjunctions')).body;
  await first.stop();

  const second = await startService(t, { dbPath });
  t.strictSame((await second.api.get('/api/notifications/preferences')).body, [pref.body]);
  t.strictSame((await second.api.get('/api/notifications')).body, logAfterRead, 'the log with its read state');
  t.strictSame((await second.api.get('/api/notifications/unread-count')).body, { count: 1 });
  t.strictSame(
    second.service.store.activePushTargets().map((s) => s.id),
    [s1.body.id],
  );
  t.equal(second.service.store.subscriptionHealth(s2.body.id)?.is_active, false, 'the inactive record is still there');
  t.strictSame((await second.api.get('/api/events/conjunctions')).body.conjunctions, conj.conjunctions, 'the cached events come back as they were');
  const again = await second.api.post('/api/notifications/subscribe', { endpoint: 'https://push.example.org/b', keys: keys() });
  t.equal(again.body.id, s2.body.id, 'upsert finds the record kept across the restart');
});

t.test('migrations: applied once and in order, recorded in user_version', async (t) => {
  const file = path.join(t.testdir(), 'm.db');
  const db = openDatabase(file);
  t.equal(db.pragma('user_version', { simple: true }), MIGRATIONS.length);
  db.prepare("INSERT INTO scheduler_state (key, value) VALUES ('k', 'v')").run();
  db.close();
  const reopened = openDatabase(file);
  t.equal((reopened.prepare("SELECT value FROM scheduler_state WHERE key = 'k'").get() as { value: string }).value, 'v', 'reopening keeps the data');

  // A later migration applies to an existing database without touching what is there.
  const next = [...MIGRATIONS, 'ALTER TABLE notifications ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;'];
  t.equal(migrate(reopened, next), next.length);
  t.equal(reopened.pragma('user_version', { simple: true }), next.length);
  t.ok((reopened.prepare('PRAGMA table_info(notifications)').all() as Array<{ name: string }>).some((c) => c.name === 'priority'));
  t.equal(migrate(reopened, next), next.length, 'a second run is a no-op');
  reopened.close();

  // A failing migration leaves the database at the last good version.
  const broken = new Database(path.join(t.testdir(), 'b.db'));
  t.throws(() => migrate(broken, ['CREATE TABLE a (x INTEGER);', 'CREATE TABLE b (oops']));
  t.equal(broken.pragma('user_version', { simple: true }), 1);
  t.equal((broken.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'b'").get() as { n: number }).n, 0);
  broken.close();

  // A database from a newer service is refused, not misread.
  const newer = new Database(path.join(t.testdir(), 'n.db'));
  newer.pragma(`user_version = ${MIGRATIONS.length + 5}`);
  t.throws(() => migrate(newer), SchemaTooNewError);
  newer.close();
});

t.test('preferences stay unique per location and category in the database itself', async (t) => {
  const db = openDatabase(':memory:');
  const insert = db.prepare("INSERT INTO preferences (location_id, category, is_enabled, min_altitude, timezone, updated_at) VALUES (?, 'launch', 1, 10, 'UTC', 'now')");
  insert.run(null);
  t.throws(() => insert.run(null), /UNIQUE/, 'two global preferences of one category');
  insert.run(3);
  t.throws(() => insert.run(3), /UNIQUE/);
  db.close();
});
