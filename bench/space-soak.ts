/**
 * Soak: an hour's worth of heavy use of the space service, written as fast
 * as the machine allows over real HTTP against a real SQLite file, with the
 * service's virtual clock moved one minute per minute of load, and the
 * maintenance run (retention + WAL checkpoint) called every five virtual
 * minutes as its timer would. Printed every ten virtual minutes: the
 * database file, its WAL and the largest WAL seen.
 *
 * One virtual minute of load: SUBS_PER_MIN subscribe upserts (over 500
 * endpoints), TESTS_PER_MIN POST /api/notifications/test (logged and
 * broadcast; no VAPID keys, so nothing leaves the machine), READS_PER_MIN
 * single reads, one read-all, ten preference writes; every five minutes
 * the conjunction cache rewritten with 1,000 rows (as a refresh does).
 * With the defaults that is about 21,000 writes an hour, the load that
 * grew the WAL to 317 MB before issue 15.
 *
 * Baseline in the same run: the same number of log and subscription writes
 * made the way the service made them before issue 15 (INSERT ... RETURNING
 * read with better-sqlite3's .get(), which never lets SQLite's automatic
 * checkpoint run), on another file: its WAL size is the ratio's denominator.
 *
 * Then retention: the clock moves NOTIFICATION_RETENTION_DAYS + 1 days and
 * one maintenance run deletes the hour's entries.
 *
 * Run: npm run bench:space-soak   (node dist/bench/space-soak.js after npm run build)
 * Env: SOAK_MINUTES (60), SUBS_PER_MIN (150), TESTS_PER_MIN (150), READS_PER_MIN (50)
 */
import Database from 'better-sqlite3';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../api/space/clock';
import { configFromEnv } from '../api/space/config';
import { MIGRATIONS, migrate } from '../api/space/db';
import { startSpaceService } from '../api/space/serve';
import { fmtInt, machineLine } from './bench-helpers';

const SOAK_MINUTES = Number(process.env.SOAK_MINUTES ?? 60);
const SUBS_PER_MIN = Number(process.env.SUBS_PER_MIN ?? 150);
const TESTS_PER_MIN = Number(process.env.TESTS_PER_MIN ?? 150);
const READS_PER_MIN = Number(process.env.READS_PER_MIN ?? 50);
const MAINTENANCE_EVERY_MIN = 5;

const MB = 1024 * 1024;
const size = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
const mb = (bytes: number) => `${(bytes / MB).toFixed(2)} MB`;

/** Real client key pairs (the API checks the point), one per endpoint; never used to encrypt here. */
const KEY_POOL = Array.from({ length: 50 }, () => {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  return { p256dh: ecdh.getPublicKey().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') };
});
const keys = (i: number) => KEY_POOL[i % KEY_POOL.length];

function conjunctions(n: number, now: Date) {
  return Array.from({ length: n }, (_, i) => ({
    sat1_name: `OBJECT ${i}`,
    sat1_id: 10_000 + i,
    sat2_name: `DEBRIS ${i}`,
    sat2_id: 50_000 + i,
    tca: new Date(now.getTime() + i * 60_000).toISOString(),
    min_range_km: i / 100,
    relative_speed_km_s: 10 + (i % 5),
    max_probability: 1e-6 * (i % 7),
  }));
}

/** The old write path on another file: what the WAL did before. */
function legacyWal(dir: string, subs: number, tests: number): number {
  const file = path.join(dir, 'legacy.db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  migrate(db, MIGRATIONS.slice(0, 1));
  const sub = db.prepare(
    `INSERT INTO subscriptions (endpoint, p256dh, auth, is_active, created_at, updated_at) VALUES (?, ?, ?, 1, 't', 't')
     ON CONFLICT(endpoint) DO UPDATE SET p256dh = excluded.p256dh, updated_at = excluded.updated_at RETURNING id`,
  );
  const log = db.prepare(`INSERT INTO notifications (category, title, body, data_json, location_id, sent_at, push_sent) VALUES ('test', 'Test notification', ?, '{"test":true}', NULL, 't', 0) RETURNING *`);
  for (let i = 0; i < Math.max(subs, tests); i++) {
    if (i < subs) sub.get(`https://push.example.org/${i % 500}`, keys(i).p256dh, keys(i).auth);
    if (i < tests) log.get('Push notifications from the space service reach this device.');
  }
  const wal = size(`${file}-wal`);
  db.close();
  return wal;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'space-bench-soak-'));
  const file = path.join(dir, 'space.db');
  const config = configFromEnv({ PORT: '0', DATABASE_PATH: file, SOCRATES_URL: 'http://127.0.0.1:9/', NEOWS_URL: 'http://127.0.0.1:9/', LL2_ASTRONAUTS_URL: 'http://127.0.0.1:9/', OPEN_NOTIFY_URL: 'http://127.0.0.1:9/' });
  const clock = new ManualClock('2026-11-21T12:00:00Z');
  const service = await startSpaceService(config, { clock, timers: false });
  await service.initialRefresh;
  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(service.url + p, { method, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status} ${await res.text()}`);
    return res.json() as Promise<{ notification_id?: number }>;
  };

  process.stdout.write(`${machineLine()}\n${SOAK_MINUTES} virtual minutes of load over HTTP on ${file}\n\n| virtual time | writes so far | database | WAL | largest WAL so far |\n| --- | --- | --- | --- | --- |\n`);
  const t0 = performance.now();
  let writes = 0;
  let maxWal = 0;
  let lastId = 0;
  const categories = ['launch', 'reentry', 'space_weather', 'solar_flare', 'neo_approach', 'conjunction', 'hf_conditions', 'daily_digest', 'agency_scales', 'launch'];
  for (let minute = 1; minute <= SOAK_MINUTES; minute++) {
    for (let i = 0; i < Math.max(SUBS_PER_MIN, TESTS_PER_MIN); i++) {
      if (i < SUBS_PER_MIN) {
        const n = minute * SUBS_PER_MIN + i;
        await api('POST', '/api/notifications/subscribe', { endpoint: `https://push.example.org/${n % 500}`, keys: keys(n) });
        writes++;
      }
      if (i < TESTS_PER_MIN) {
        lastId = (await api('POST', '/api/notifications/test')).notification_id ?? lastId;
        writes++;
      }
      if (i < READS_PER_MIN && lastId > 0) {
        await api('POST', `/api/notifications/${lastId - (i % 40)}/read`);
        writes++;
      }
      maxWal = Math.max(maxWal, size(`${file}-wal`));
    }
    await api('POST', '/api/notifications/read-all');
    for (const c of categories) await api('PUT', `/api/notifications/preferences/global/${c}`, { lead_times: [minute % 60 + 1] });
    writes += 1 + categories.length;
    if (minute % 5 === 0) {
      service.store.saveSourceData('conjunctions', conjunctions(1000, clock.now()), 'upstream', clock.now());
      writes++;
    }
    maxWal = Math.max(maxWal, size(`${file}-wal`));
    clock.advanceMinutes(1);
    if (minute % MAINTENANCE_EVERY_MIN === 0) service.maintain();
    if (minute % 10 === 0 || minute === SOAK_MINUTES) {
      process.stdout.write(`| ${minute} min | ${fmtInt(writes)} | ${mb(size(file))} | ${mb(size(`${file}-wal`))} | ${mb(maxWal)} |\n`);
    }
  }
  const loadMs = performance.now() - t0;
  const entries = (service.db.prepare('SELECT count(*) AS n FROM notifications').get() as { n: number }).n;

  // Retention: a year and a day later, one maintenance run.
  clock.advanceMinutes((config.retentionDays + 1) * 1440);
  const pruned = service.maintain();
  const pages = service.db.pragma('page_count', { simple: true }) as number;
  const free = service.db.pragma('freelist_count', { simple: true }) as number;
  const finalWal = size(`${file}-wal`);
  await service.close();

  const legacy = legacyWal(dir, SOAK_MINUTES * SUBS_PER_MIN, SOAK_MINUTES * TESTS_PER_MIN);
  process.stdout.write(
    `\n${fmtInt(writes)} writes in ${(loadMs / 1000).toFixed(1)} s (${fmtInt((writes / loadMs) * 1000)} writes/s), ${fmtInt(entries)} log entries\n` +
      `largest WAL: ${mb(maxWal)}; after the last maintenance run: ${mb(finalWal)}\n` +
      `baseline, the same ${fmtInt(SOAK_MINUTES * (SUBS_PER_MIN + TESTS_PER_MIN))} subscribe and log writes the old way (INSERT ... RETURNING with .get()): WAL ${mb(legacy)}\n` +
      `largest WAL / baseline WAL: ${(maxWal / legacy).toFixed(4)}\n` +
      `retention (${config.retentionDays} days): removed ${fmtInt(pruned.pruned.notifications)} entries; ${fmtInt(free)} of ${fmtInt(pages)} pages now free for reuse\n` +
      `${machineLine()}\n`,
  );
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
