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
];

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

/** Opens (creating its folder if needed) and migrates the database at `file` (':memory:' for none). */
export function openDatabase(file: string): Db {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file);
  if (file !== ':memory:') {
    db.pragma('journal_mode = WAL');
    // Safe with WAL (no corruption on a crash); a power cut may drop the last commits instead of every commit waiting for fsync.
    db.pragma('synchronous = NORMAL');
  }
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}
