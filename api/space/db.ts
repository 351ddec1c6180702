/**
 * The service's SQLite database (better-sqlite3) and its schema migrations.
 *
 * Migrations are numbered SQL scripts applied in order inside one
 * transaction each; `PRAGMA user_version` records the last one applied, so
 * reopening a database applies only what is new and a database written by a
 * newer version of the service is refused rather than misread.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';

export type Db = Database.Database;

/** Each entry is one migration; never edit one that has shipped, append a new one. */
export const MIGRATIONS: readonly string[] = [
  // 1: subscriptions, preferences, the notification log, the event cache and scheduler state.
  `
  CREATE TABLE subscriptions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    endpoint TEXT NOT NULL UNIQUE,
    p256dh TEXT NOT NULL,
    auth TEXT NOT NULL,
    user_agent TEXT,
    is_active INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    failure_count INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    last_success_at TEXT
  );
  CREATE INDEX subscriptions_active ON subscriptions(id) WHERE is_active = 1;

  CREATE TABLE preferences (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    location_id INTEGER,
    category TEXT NOT NULL,
    is_enabled INTEGER NOT NULL,
    lead_times TEXT,
    schedule_cron TEXT,
    min_altitude REAL NOT NULL,
    timezone TEXT NOT NULL,
    config TEXT,
    quiet_start TEXT,
    quiet_end TEXT,
    updated_at TEXT NOT NULL
  );
  -- NULLs are distinct in a UNIQUE index; location ids are >= 1, so 0 stands for "global".
  CREATE UNIQUE INDEX preferences_scope ON preferences(coalesce(location_id, 0), category);

  CREATE TABLE notifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    category TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    data_json TEXT NOT NULL,
    location_id INTEGER,
    sent_at TEXT NOT NULL,
    read_at TEXT,
    push_sent INTEGER NOT NULL
  );
  CREATE INDEX notifications_unread ON notifications(id) WHERE read_at IS NULL;

  CREATE TABLE event_sources (
    source TEXT PRIMARY KEY,
    data_json TEXT,
    origin TEXT,
    fetched_at TEXT,
    last_attempt_at TEXT,
    last_error TEXT,
    retry_not_before TEXT
  );

  -- Keys of event notifications already raised (once per event and lead time).
  CREATE TABLE sent_events (key TEXT PRIMARY KEY, sent_at TEXT NOT NULL);

  CREATE TABLE scheduler_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  `,
  // 2: retention (by sent_at), read-all as a mark instead of a row-by-row update, the unread count as a counter.
  `
  CREATE INDEX notifications_sent_at ON notifications(sent_at);
  CREATE INDEX sent_events_sent_at ON sent_events(sent_at);

  -- POST read-all records one mark: every entry with id <= up_to_id that had no read_at reads as read at the mark's
  -- read_at (the first mark at or above its id). Entries read one by one keep their own read_at.
  CREATE TABLE read_all_marks (up_to_id INTEGER PRIMARY KEY, read_at TEXT NOT NULL);

  -- Unread entries above the last mark, kept by triggers so GET unread-count reads one row.
  CREATE TABLE log_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
  INSERT INTO log_counters (name, value) SELECT 'unread', count(*) FROM notifications WHERE read_at IS NULL;
  CREATE TRIGGER notifications_unread_insert AFTER INSERT ON notifications WHEN NEW.read_at IS NULL
  BEGIN UPDATE log_counters SET value = value + 1 WHERE name = 'unread'; END;
  CREATE TRIGGER notifications_unread_read AFTER UPDATE OF read_at ON notifications
    WHEN OLD.read_at IS NULL AND NEW.read_at IS NOT NULL AND OLD.id > coalesce((SELECT max(up_to_id) FROM read_all_marks), 0)
  BEGIN UPDATE log_counters SET value = value - 1 WHERE name = 'unread'; END;
  CREATE TRIGGER notifications_unread_delete AFTER DELETE ON notifications
    WHEN OLD.read_at IS NULL AND OLD.id > coalesce((SELECT max(up_to_id) FROM read_all_marks), 0)
  BEGIN UPDATE log_counters SET value = value - 1 WHERE name = 'unread'; END;
  `,
  // 3: each log entry's JSON as GET /api/notifications answers it (with its own read_at), kept by triggers, so a page
  // is its entries' stored text joined (Store.notificationPage(); docs/benchmarks.md, bench:space-log).
  `
  ALTER TABLE notifications ADD COLUMN entry_json TEXT;
  UPDATE notifications SET entry_json = ${entryJson('notifications')};
  CREATE TRIGGER notifications_entry_insert AFTER INSERT ON notifications
  BEGIN UPDATE notifications SET entry_json = ${entryJson('notifications')} WHERE id = NEW.id; END;
  CREATE TRIGGER notifications_entry_update AFTER UPDATE OF read_at, push_sent ON notifications
  BEGIN UPDATE notifications SET entry_json = ${entryJson('notifications')} WHERE id = NEW.id; END;
  `,
];

/**
 * A log entry (`row`: the table's name or alias) as the API's JSON object, with
 * its own read_at; the keys in NotificationEntry's order, so that the text is
 * the one JSON.stringify writes for the entry (test/space/http-api.test.ts).
 */
export function entryJson(row: string): string {
  return `json_object('id', ${row}.id, 'category', ${row}.category, 'title', ${row}.title, 'body', ${row}.body, 'data_json', ${row}.data_json,
    'location_id', ${row}.location_id, 'sent_at', ${row}.sent_at, 'read_at', ${row}.read_at,
    'push_sent', json(CASE WHEN ${row}.push_sent = 1 THEN 'true' ELSE 'false' END))`;
}

export class SchemaTooNewError extends Error {
  constructor(readonly found: number, readonly known: number) {
    super(`database schema version ${found} is newer than this service knows (${known}); upgrade the service or use another DATABASE_PATH`);
    this.name = 'SchemaTooNewError';
  }
}

/** Applies the migrations the database has not seen yet; returns the version it is at. */
export function migrate(db: Db, migrations: readonly string[] = MIGRATIONS): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > migrations.length) throw new SchemaTooNewError(current, migrations.length);
  for (let v = current; v < migrations.length; v++) {
    db.transaction(() => {
      db.exec(migrations[v]);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
  return migrations.length;
}

/**
 * The write-ahead log is truncated to this size after a checkpoint (SQLite's
 * own checkpoint resets it to the start but otherwise leaves the file at its
 * largest size).
 */
export const JOURNAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * Copies the whole WAL into the database and truncates it to zero bytes.
 * SQLite's automatic checkpoint (every 1000 pages) runs only when a write
 * statement is stepped to its end (sqlite3_step returning SQLITE_DONE), and
 * it cannot restart the log while a reader holds an old snapshot; this call,
 * from the service's maintenance timer, bounds the file whatever happened.
 * Returns the pages the log held and the pages copied (busy: a reader kept
 * part of it; the next run catches up).
 */
export function checkpoint(db: Db): { busy: boolean; logPages: number; checkpointedPages: number } {
  const [r] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
  return { busy: r.busy === 1, logPages: r.log, checkpointedPages: r.checkpointed };
}

/** Opens (creating its folder if needed) and migrates the database at `file` (':memory:' for none). */
export function openDatabase(file: string): Db {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file);
  if (file !== ':memory:') {
    db.pragma('journal_mode = WAL');
    // Safe with WAL (no corruption on a crash); a power cut may drop the last commits instead of every commit waiting for fsync.
    db.pragma('synchronous = NORMAL');
    db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
    // Reads of history pages anywhere in a year of log: through a memory map and a 16 MB page cache rather than a
    // read() into SQLite's default 2 MB cache per page missed.
    db.pragma('mmap_size = 268435456');
    db.pragma('cache_size = -16000');
  }
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}
