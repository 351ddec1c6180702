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

export class Store {
  private readonly q;

  constructor(readonly db: Db) {
    this.q = {
      upsertSubscription: db.prepare<[string, string, string, string | null, string, string]>(
        `INSERT INTO subscriptions (endpoint, p256dh, auth, user_agent, is_active, created_at, updated_at)
         VALUES (?, ?, ?, ?, 1, ?, ?)
         ON CONFLICT(endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth,
           user_agent = coalesce(excluded.user_agent, user_agent), is_active = 1, updated_at = excluded.updated_at,
           failure_count = 0, last_error = NULL
         RETURNING ${SUBSCRIPTION_COLUMNS}`,
      ),
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
           quiet_start = excluded.quiet_start, quiet_end = excluded.quiet_end, updated_at = excluded.updated_at
         RETURNING *`,
      ),
      listPreferences: db.prepare('SELECT * FROM preferences ORDER BY location_id IS NOT NULL, location_id, category'),
      preferencesOf: db.prepare<[string]>('SELECT * FROM preferences WHERE category = ? ORDER BY location_id IS NOT NULL, location_id'),
      preference: db.prepare<[number, string]>('SELECT * FROM preferences WHERE coalesce(location_id, 0) = ? AND category = ?'),
      deletePreference: db.prepare<[number, string]>('DELETE FROM preferences WHERE coalesce(location_id, 0) = ? AND category = ?'),

      insertNotification: db.prepare<[string, string, string, string, number | null, string, number]>(
        `INSERT INTO notifications (category, title, body, data_json, location_id, sent_at, push_sent) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      ),
      markPushSent: db.prepare<[number]>('UPDATE notifications SET push_sent = 1 WHERE id = ? RETURNING *'),
      listNotifications: db.prepare<[number, number]>('SELECT * FROM notifications ORDER BY id DESC LIMIT ? OFFSET ?'),
      unreadCount: db.prepare('SELECT count(*) AS n FROM notifications WHERE read_at IS NULL'),
      markRead: db.prepare<[string, number]>('UPDATE notifications SET read_at = coalesce(read_at, ?) WHERE id = ?'),
      markAllRead: db.prepare<[string]>('UPDATE notifications SET read_at = ? WHERE read_at IS NULL'),

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
    const row = this.q.upsertSubscription.get(s.endpoint, s.p256dh, s.auth, s.user_agent, t, t) as Omit<SubscriptionOut, 'is_active'> & { is_active: number };
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
    const row = this.q.upsertPreference.get({
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
    }) as PreferenceRow;
    return preferenceOut(row);
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
    const row = this.q.insertNotification.get(n.category, n.title, n.body, JSON.stringify(n.data ?? null), n.location_id, now.toISOString(), pushSent ? 1 : 0);
    return notificationOut(row as NotificationRow);
  }

  markPushSent(id: number): NotificationEntry {
    return notificationOut(this.q.markPushSent.get(id) as NotificationRow);
  }

  /** Newest first. */
  listNotifications(limit: number, offset: number): NotificationEntry[] {
    return (this.q.listNotifications.all(limit, offset) as NotificationRow[]).map(notificationOut);
  }

  unreadCount(): number {
    return (this.q.unreadCount.get() as { n: number }).n;
  }

  /** Sets read_at (kept if already read); false when the id is unknown. */
  markRead(id: number, now: Date): boolean {
    return this.q.markRead.run(now.toISOString(), id).changes === 1;
  }

  markAllRead(now: Date): number {
    return this.q.markAllRead.run(now.toISOString()).changes;
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
