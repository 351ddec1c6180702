/**
 * Repositories over the SQLite database: subscriptions, preferences, the
 * notification log, the event cache and small scheduler state. Rows are
 * turned into the seed's JSON shapes here (SQLite integers into booleans,
 * JSON text into values), so nothing above this file sees a raw row.
 */
import type { Db } from './db';

export interface SubscriptionOut {
  id: number;
  endpoint: string;
  is_active: boolean;
  created_at: string;
}

/** What a push needs: where to send and the client's keys. */
export interface PushTarget {
  id: number;
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export type PushOutcome = 'sent' | 'gone' | 'failed';

/** What one push round did to one subscription. */
export interface PushResult {
  subscriptionId: number;
  outcome: PushOutcome;
  attempts: number;
  status?: number;
  error?: string;
}

export interface SubscriptionHealth extends SubscriptionOut {
  failure_count: number;
  last_error: string | null;
  last_success_at: string | null;
}

export interface PreferenceFields {
  is_enabled: boolean;
  lead_times: number[] | null;
  schedule_cron: string | null;
  min_altitude: number;
  timezone: string;
  config: Record<string, unknown> | null;
  quiet_start: string | null;
  quiet_end: string | null;
}

export interface PreferenceOut extends PreferenceFields {
  id: number;
  location_id: number | null;
  category: string;
}

export interface NotificationEntry {
  id: number;
  category: string;
  title: string;
  body: string;
  data_json: string;
  location_id: number | null;
  sent_at: string;
  read_at: string | null;
  push_sent: boolean;
}

export interface NewNotification {
  category: string;
  title: string;
  body: string;
  data: unknown;
  location_id: number | null;
}

export type CacheOrigin = 'upstream' | 'sample';

export interface SourceState<T> {
  data: T | null;
  origin: CacheOrigin | null;
  fetched_at: string | null;
  last_attempt_at: string | null;
  last_error: string | null;
  retry_not_before: string | null;
}

interface PreferenceRow {
  id: number;
  location_id: number | null;
  category: string;
  is_enabled: number;
  lead_times: string | null;
  schedule_cron: string | null;
  min_altitude: number;
  timezone: string;
  config: string | null;
  quiet_start: string | null;
  quiet_end: string | null;
}

interface NotificationRow extends Omit<NotificationEntry, 'push_sent'> {
  push_sent: number;
}

/**
 * One page's entries (`tail`: its WHERE/ORDER/LIMIT), newest first, each as
 * the API's JSON object text: its stored text (entry_json, migration 3), but
 * for one without a read_at of its own at or below the last read-all mark
 * (`@lastMark`, read apart: as a subquery SQLite evaluated it per row, which
 * doubled the page's cost): that one gets its mark's read_at, written over
 * the `"read_at":null,` of its text. That sequence occurs once in an entry's
 * text: every quote inside a string value (title, body, data_json) is
 * escaped, so only the key itself is written that way. A plain replace()
 * adds about half what json_set() adds (which parses the entry): 25 against
 * 55 µs on a page of 50 read by a mark. The entries are
 * joined in JavaScript: group_concat keeps their order only with an ORDER BY
 * of its own, and that sort cost more than the rest of the page.
 */
function pageSql(tail: string): string {
  return `SELECT CASE WHEN n.read_at IS NULL AND n.id <= @lastMark
    THEN replace(n.entry_json, '"read_at":null,', '"read_at":' || json_quote(${MARK_READ_AT('n.id')}) || ',') ELSE n.entry_json END
    FROM notifications n ${tail}`;
}

function preferenceOut(r: PreferenceRow): PreferenceOut {
  return {
    id: r.id,
    location_id: r.location_id,
    category: r.category,
    is_enabled: r.is_enabled === 1,
    lead_times: r.lead_times === null ? null : (JSON.parse(r.lead_times) as number[]),
    schedule_cron: r.schedule_cron,
    min_altitude: r.min_altitude,
    timezone: r.timezone,
    config: r.config === null ? null : (JSON.parse(r.config) as Record<string, unknown>),
    quiet_start: r.quiet_start,
    quiet_end: r.quiet_end,
  };
}

function notificationOut(r: NotificationRow): NotificationEntry {
  return { ...r, push_sent: r.push_sent === 1 };
}

const SUBSCRIPTION_COLUMNS = 'id, endpoint, is_active = 1 AS is_active, created_at';

/** The read-all mark covering an entry (the first at or above its id): its read_at, or null. */
const MARK_READ_AT = (idColumn: string) => `(SELECT m.read_at FROM read_all_marks m WHERE m.up_to_id >= ${idColumn} ORDER BY m.up_to_id LIMIT 1)`;

/** A log entry as the API shows it: read_at is its own, else that of the read-all that covered it. */
const NOTIFICATION_COLUMNS = `n.id, n.category, n.title, n.body, n.data_json, n.location_id, n.sent_at,
  coalesce(n.read_at, ${MARK_READ_AT('n.id')}) AS read_at, n.push_sent`;

/** What one maintenance run removed. */
export interface PruneResult {
  notifications: number;
  eventKeys: number;
}

/** A page of the notification log as sent: the JSON array's text, its entry count and its oldest id. */
export interface NotificationPage {
  body: string;
  count: number;
  lastId: number | null;
}

export class Store {
  private readonly q;
  /** Bumped by every write to the notification log through this store: the page cache's key to staleness. */
  private logVersion = 0;
  /** The newest page as last read, with the versions of the log it was read at (notificationPage()). */
  private newestPage: { limit: number; logVersion: number; dataVersion: number; page: NotificationPage } | null = null;

  constructor(readonly db: Db) {
    this.q = {
      upsertSubscription: db.prepare<[string, string, string, string | null, string, string]>(
        `INSERT INTO subscriptions (endpoint, p256dh, auth, user_agent, is_active, created_at, updated_at)
         VALUES (?, ?, ?, ?, 1, ?, ?)
         ON CONFLICT(endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth,
           user_agent = coalesce(excluded.user_agent, user_agent), is_active = 1, updated_at = excluded.updated_at,
           failure_count = 0, last_error = NULL`,
      ),
      subscriptionByEndpoint: db.prepare<[string]>(`SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions WHERE endpoint = ?`),
      deactivateSubscription: db.prepare<[string, number]>('UPDATE subscriptions SET is_active = 0, updated_at = ? WHERE id = ?'),
      activeTargets: db.prepare('SELECT id, endpoint, p256dh, auth FROM subscriptions WHERE is_active = 1 ORDER BY id'),
      subscriptionHealth: db.prepare<[number]>(`SELECT ${SUBSCRIPTION_COLUMNS}, failure_count, last_error, last_success_at FROM subscriptions WHERE id = ?`),
      pushSucceeded: db.prepare<[string, number]>('UPDATE subscriptions SET last_success_at = ? WHERE id = ?'),
      pushFailed: db.prepare<[string, number]>('UPDATE subscriptions SET failure_count = failure_count + 1, last_error = ? WHERE id = ?'),
      pushGone: db.prepare<[string, string, number]>(
        'UPDATE subscriptions SET is_active = 0, failure_count = failure_count + 1, last_error = ?, updated_at = ? WHERE id = ?',
      ),

      upsertPreference: db.prepare(
        `INSERT INTO preferences (location_id, category, is_enabled, lead_times, schedule_cron, min_altitude, timezone, config, quiet_start, quiet_end, updated_at)
         VALUES (@location_id, @category, @is_enabled, @lead_times, @schedule_cron, @min_altitude, @timezone, @config, @quiet_start, @quiet_end, @updated_at)
         ON CONFLICT(coalesce(location_id, 0), category) DO UPDATE SET is_enabled = excluded.is_enabled, lead_times = excluded.lead_times,
           schedule_cron = excluded.schedule_cron, min_altitude = excluded.min_altitude, timezone = excluded.timezone, config = excluded.config,
           quiet_start = excluded.quiet_start, quiet_end = excluded.quiet_end, updated_at = excluded.updated_at`,
      ),
      listPreferences: db.prepare('SELECT * FROM preferences ORDER BY location_id IS NOT NULL, location_id, category'),
      preferencesOf: db.prepare<[string]>('SELECT * FROM preferences WHERE category = ? ORDER BY location_id IS NOT NULL, location_id'),
      preference: db.prepare<[number, string]>('SELECT * FROM preferences WHERE coalesce(location_id, 0) = ? AND category = ?'),
      deletePreference: db.prepare<[number, string]>('DELETE FROM preferences WHERE coalesce(location_id, 0) = ? AND category = ?'),

      insertNotification: db.prepare<[string, string, string, string, number | null, string, number]>(
        'INSERT INTO notifications (category, title, body, data_json, location_id, sent_at, push_sent) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      markPushSent: db.prepare<[number]>('UPDATE notifications SET push_sent = 1 WHERE id = ?'),
      notification: db.prepare<[number]>(`SELECT ${NOTIFICATION_COLUMNS} FROM notifications n WHERE id = ?`),
      // Both walk the rowid backwards from the newest (or from before_id): no sort, no scan of what is skipped by the keyset.
      listNotifications: db.prepare<[number, number]>(`SELECT ${NOTIFICATION_COLUMNS} FROM notifications n ORDER BY id DESC LIMIT ? OFFSET ?`),
      listNotificationsBefore: db.prepare<[number, number]>(`SELECT ${NOTIFICATION_COLUMNS} FROM notifications n WHERE id < ? ORDER BY id DESC LIMIT ?`),
      page: db.prepare<[{ limit: number; offset: number; lastMark: number }]>(pageSql('ORDER BY n.id DESC LIMIT @limit OFFSET @offset')).pluck(),
      pageBefore: db.prepare<[{ beforeId: number; limit: number; lastMark: number }]>(pageSql('WHERE n.id < @beforeId ORDER BY n.id DESC LIMIT @limit')).pluck(),
      // Changes when another connection commits to the file (https://sqlite.org/pragma.html#pragma_data_version).
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
      unreadCount: db.prepare("SELECT value AS n FROM log_counters WHERE name = 'unread'"),
      markRead: db.prepare<[string, number]>(`UPDATE notifications SET read_at = coalesce(read_at, ${MARK_READ_AT('notifications.id')}, ?) WHERE id = ?`),
      lastMark: db.prepare('SELECT coalesce(max(up_to_id), 0) AS id FROM read_all_marks'),
      newestId: db.prepare('SELECT coalesce(max(id), 0) AS id FROM notifications'),
      addMark: db.prepare<[number, string]>('INSERT INTO read_all_marks (up_to_id, read_at) VALUES (?, ?)'),
      resetUnread: db.prepare("UPDATE log_counters SET value = 0 WHERE name = 'unread'"),
      pruneNotifications: db.prepare<[string]>('DELETE FROM notifications WHERE sent_at < ?'),
      oldestId: db.prepare('SELECT min(id) AS id FROM notifications'),
      pruneMarks: db.prepare<[number]>('DELETE FROM read_all_marks WHERE up_to_id < ?'),
      pruneAllMarks: db.prepare('DELETE FROM read_all_marks'),
      pruneEventKeys: db.prepare<[string]>('DELETE FROM sent_events WHERE sent_at < ?'),

      source: db.prepare<[string]>('SELECT * FROM event_sources WHERE source = ?'),
      saveSourceData: db.prepare<[string, string, string, string, string]>(
        `INSERT INTO event_sources (source, data_json, origin, fetched_at, last_attempt_at, last_error, retry_not_before) VALUES (?, ?, ?, ?, ?, NULL, NULL)
         ON CONFLICT(source) DO UPDATE SET data_json = excluded.data_json, origin = excluded.origin, fetched_at = excluded.fetched_at,
           last_attempt_at = CASE WHEN excluded.origin = 'sample' THEN last_attempt_at ELSE excluded.last_attempt_at END,
           last_error = CASE WHEN excluded.origin = 'sample' THEN last_error END,
           retry_not_before = CASE WHEN excluded.origin = 'sample' THEN retry_not_before END`,
      ),
      saveSourceFailure: db.prepare<[string, string, string, string | null]>(
        `INSERT INTO event_sources (source, last_attempt_at, last_error, retry_not_before) VALUES (?, ?, ?, ?)
         ON CONFLICT(source) DO UPDATE SET last_attempt_at = excluded.last_attempt_at, last_error = excluded.last_error,
           retry_not_before = coalesce(excluded.retry_not_before, retry_not_before)`,
      ),

      markEventSent: db.prepare<[string, string]>('INSERT OR IGNORE INTO sent_events (key, sent_at) VALUES (?, ?)'),
      eventSent: db.prepare<[string]>('SELECT 1 FROM sent_events WHERE key = ?'),
      getState: db.prepare<[string]>('SELECT value FROM scheduler_state WHERE key = ?'),
      setState: db.prepare<[string, string]>('INSERT INTO scheduler_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
    };
  }

  // --- subscriptions -------------------------------------------------------

  /** Creates the subscription, or reactivates it and replaces its keys when the endpoint is known. */
  upsertSubscription(s: { endpoint: string; p256dh: string; auth: string; user_agent: string | null }, now: Date): SubscriptionOut {
    const t = now.toISOString();
    // .run() and a SELECT, not INSERT ... RETURNING read with .get(): .get() resets the statement before it is
    // stepped to its end, and SQLite's automatic WAL checkpoint only runs when a write is (see db.ts checkpoint()).
    this.q.upsertSubscription.run(s.endpoint, s.p256dh, s.auth, s.user_agent, t, t);
    const row = this.q.subscriptionByEndpoint.get(s.endpoint) as Omit<SubscriptionOut, 'is_active'> & { is_active: number };
    return { ...row, is_active: row.is_active === 1 };
  }

  /** Marks the subscription inactive (the record stays); false when the id is unknown. */
  deactivateSubscription(id: number, now: Date): boolean {
    return this.q.deactivateSubscription.run(now.toISOString(), id).changes === 1;
  }

  activePushTargets(): PushTarget[] {
    return (this.q.activeTargets.all() as Array<{ id: number; endpoint: string; p256dh: string; auth: string }>).map((r) => ({
      id: r.id,
      endpoint: r.endpoint,
      keys: { p256dh: r.p256dh, auth: r.auth },
    }));
  }

  subscriptionHealth(id: number): SubscriptionHealth | undefined {
    const r = this.q.subscriptionHealth.get(id) as (Omit<SubscriptionHealth, 'is_active'> & { is_active: number }) | undefined;
    return r && { ...r, is_active: r.is_active === 1 };
  }

  /**
   * The outcome of a push round, in one transaction: success stamps
   * last_success_at; failure counts and keeps the error; gone (404/410)
   * also deactivates the subscription.
   */
  recordPushResults(results: readonly PushResult[], now: Date): void {
    const t = now.toISOString();
    this.db.transaction(() => {
      for (const r of results) {
        if (r.outcome === 'sent') this.q.pushSucceeded.run(t, r.subscriptionId);
        else if (r.outcome === 'gone') this.q.pushGone.run(r.error ?? 'gone', t, r.subscriptionId);
        else this.q.pushFailed.run(r.error ?? 'failed', r.subscriptionId);
      }
    })();
  }

  // --- preferences ---------------------------------------------------------

  savePreference(locationId: number | null, category: string, f: PreferenceFields, now: Date): PreferenceOut {
    this.q.upsertPreference.run({
      location_id: locationId,
      category,
      is_enabled: f.is_enabled ? 1 : 0,
      lead_times: f.lead_times === null ? null : JSON.stringify(f.lead_times),
      schedule_cron: f.schedule_cron,
      min_altitude: f.min_altitude,
      timezone: f.timezone,
      config: f.config === null ? null : JSON.stringify(f.config),
      quiet_start: f.quiet_start,
      quiet_end: f.quiet_end,
      updated_at: now.toISOString(),
    });
    return preferenceOut(this.q.preference.get(locationId ?? 0, category) as PreferenceRow);
  }

  /** Every preference: global first, then by location, then by category. */
  listPreferences(): PreferenceOut[] {
    return (this.q.listPreferences.all() as PreferenceRow[]).map(preferenceOut);
  }

  /** The preferences of one category, global first. */
  preferencesOf(category: string): PreferenceOut[] {
    return (this.q.preferencesOf.all(category) as PreferenceRow[]).map(preferenceOut);
  }

  preference(locationId: number | null, category: string): PreferenceOut | undefined {
    const r = this.q.preference.get(locationId ?? 0, category) as PreferenceRow | undefined;
    return r && preferenceOut(r);
  }

  deletePreference(locationId: number | null, category: string): boolean {
    return this.q.deletePreference.run(locationId ?? 0, category).changes === 1;
  }

  // --- notification log ----------------------------------------------------

  logNotification(n: NewNotification, pushSent: boolean, now: Date): NotificationEntry {
    const data_json = JSON.stringify(n.data ?? null);
    const sent_at = now.toISOString();
    this.logVersion++;
    const r = this.q.insertNotification.run(n.category, n.title, n.body, data_json, n.location_id, sent_at, pushSent ? 1 : 0);
    return { id: Number(r.lastInsertRowid), category: n.category, title: n.title, body: n.body, data_json, location_id: n.location_id, sent_at, read_at: null, push_sent: pushSent };
  }

  markPushSent(id: number): NotificationEntry {
    this.logVersion++;
    this.q.markPushSent.run(id);
    return notificationOut(this.q.notification.get(id) as NotificationRow);
  }

  /** Newest first, skipping `offset` (the seed's paging: the cost grows with the offset). */
  listNotifications(limit: number, offset: number): NotificationEntry[] {
    return (this.q.listNotifications.all(limit, offset) as NotificationRow[]).map(notificationOut);
  }

  /** Newest first among the entries older than `beforeId` (keyset paging: the same cost on every page). */
  listNotificationsBefore(beforeId: number, limit: number): NotificationEntry[] {
    return (this.q.listNotificationsBefore.all(beforeId, limit) as NotificationRow[]).map(notificationOut);
  }

  /**
   * A page of the log as the JSON body GET /api/notifications answers, its
   * entries' text as stored (pageSql()) joined, so no row becomes a
   * JavaScript object to be serialised again: the hot path of the history.
   * `lastId` is the id of the page's last (oldest) entry, for the next keyset page.
   *
   * The newest page (what the subscribe page and polling clients ask for) is
   * kept until the log changes: by this store (logVersion, bumped by every
   * write to the log) or by another connection to the same file (SQLite's
   * data_version). One field, replaced only then: a Map cleared per request
   * kept each answer alive through V8's young-generation collections (its
   * cleared tables live in the old space and still point at their entries),
   * which made full collections run several times a second.
   */
  notificationPage(limit: number, page: { offset: number } | { beforeId: number }): NotificationPage {
    const newest = 'offset' in page && page.offset === 0;
    if (newest) {
      const kept = this.newestPage;
      if (kept && kept.limit === limit && kept.logVersion === this.logVersion && kept.dataVersion === this.q.dataVersion.get()) return kept.page;
    }
    // Read before the page, in the same call: a write between the two would only make the next request miss.
    const logVersion = this.logVersion;
    const dataVersion = newest ? (this.q.dataVersion.get() as number) : 0;
    const lastMark = (this.q.lastMark.get() as { id: number }).id;
    const entries = ('beforeId' in page ? this.q.pageBefore.all({ beforeId: page.beforeId, limit, lastMark }) : this.q.page.all({ limit, offset: page.offset, lastMark })) as string[];
    // Every entry's text starts with its id (entryJson(): `{"id":N,`).
    const last = entries.length > 0 ? /^\{"id":(\d+),/.exec(entries[entries.length - 1]) : null;
    const out: NotificationPage = { body: `[${entries.join(',')}]`, count: entries.length, lastId: last ? Number(last[1]) : null };
    if (newest) this.newestPage = { limit, logVersion, dataVersion, page: out };
    return out;
  }

  /** From a counter the triggers of migration 2 keep: no scan of the log. */
  unreadCount(): number {
    return (this.q.unreadCount.get() as { n: number }).n;
  }

  /** Sets read_at (kept if already read, directly or by a read-all); false when the id is unknown. */
  markRead(id: number, now: Date): boolean {
    this.logVersion++;
    return this.q.markRead.run(now.toISOString(), id).changes === 1;
  }

  /**
   * Every entry so far reads as read at `now`, without touching them: one
   * mark up to the newest id (entries already read keep their read_at).
   */
  markAllRead(now: Date): void {
    this.logVersion++;
    this.db.transaction(() => {
      const newest = (this.q.newestId.get() as { id: number }).id;
      if (newest > (this.q.lastMark.get() as { id: number }).id) this.q.addMark.run(newest, now.toISOString());
      this.q.resetUnread.run();
    })();
  }

  /**
   * Retention: removes log entries sent before `logBefore` (none when null:
   * kept for ever) with the read-all marks that then cover no entry, and the
   * event keys recorded before `eventKeysBefore` (their events have passed:
   * upstream data looks a week ahead at most).
   */
  pruneBefore(logBefore: Date | null, eventKeysBefore: Date): PruneResult {
    this.logVersion++;
    return this.db.transaction(() => {
      let notifications = 0;
      if (logBefore) {
        notifications = this.q.pruneNotifications.run(logBefore.toISOString()).changes;
        const oldest = (this.q.oldestId.get() as { id: number | null }).id;
        // A mark covers the ids above the previous mark: one below the oldest entry left covers nothing now.
        if (oldest === null) this.q.pruneAllMarks.run();
        else this.q.pruneMarks.run(oldest);
      }
      return { notifications, eventKeys: this.q.pruneEventKeys.run(eventKeysBefore.toISOString()).changes };
    })();
  }

  // --- event cache ---------------------------------------------------------

  source<T>(name: string): SourceState<T> {
    const r = this.q.source.get(name) as
      | { data_json: string | null; origin: CacheOrigin | null; fetched_at: string | null; last_attempt_at: string | null; last_error: string | null; retry_not_before: string | null }
      | undefined;
    if (!r) return { data: null, origin: null, fetched_at: null, last_attempt_at: null, last_error: null, retry_not_before: null };
    return {
      data: r.data_json === null ? null : (JSON.parse(r.data_json) as T),
      origin: r.origin,
      fetched_at: r.fetched_at,
      last_attempt_at: r.last_attempt_at,
      last_error: r.last_error,
      retry_not_before: r.retry_not_before,
    };
  }

  /** Replaces the cached data; an upstream answer clears the last error, the sample keeps it (it is still true). */
  saveSourceData(name: string, data: unknown, origin: CacheOrigin, now: Date): void {
    const t = now.toISOString();
    this.q.saveSourceData.run(name, JSON.stringify(data), origin, t, t);
  }

  /** Records a failed refresh; the cached data is left as it was. */
  saveSourceFailure(name: string, error: string, now: Date, retryNotBefore: Date | null): void {
    this.q.saveSourceFailure.run(name, now.toISOString(), error, retryNotBefore && retryNotBefore.toISOString());
  }

  // --- de-duplication and scheduler state -----------------------------------

  /** Records an event notification key; false when it was already there. */
  claimEventKey(key: string, now: Date): boolean {
    return this.q.markEventSent.run(key, now.toISOString()).changes === 1;
  }

  eventKeySeen(key: string): boolean {
    return this.q.eventSent.get(key) !== undefined;
  }

  getState(key: string): string | undefined {
    return (this.q.getState.get(key) as { value: string } | undefined)?.value;
  }

  setState(key: string, value: string): void {
    this.q.setState.run(key, value);
  }
}
