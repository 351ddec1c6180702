/**
 * The one path every notification takes (Notifier.deliver):
 *
 *   1. the preference that governs it: the location's own preference for the
 *      category when the notification is about a location and one exists,
 *      else the global one. No preference, or a disabled one, means nobody
 *      asked: nothing is logged or pushed.
 *   2. pass-type categories below the preference's `min_altitude`: dropped.
 *   3. logged (the notification log is the history, whatever happens next);
 *   4. in the preference's quiet hours (its time zone): not pushed;
 *      otherwise pushed to every active subscription; `push_sent` is true
 *      when at least one push service accepted it;
 *   5. broadcast on the live WebSocket feed.
 *
 * The test notification skips step 1-2 and 4 (it is a request, not an alert).
 * Event notifications (conjunction, neo_approach) are raised once per event
 * and lead time; the daily digest fires on its cron schedule. Both are run by
 * `tick()`, which the scheduler calls every minute and after each refresh.
 */
import { Cron } from 'croner';
import { PASS_CATEGORIES, TEST_CATEGORY } from './categories';
import type { Clock } from './clock';
import type { EventRefresher } from './events/refresher';
import type { Conjunction, Neo } from './events/types';
import { MAX_PAYLOAD_BYTES, type PushSender, type PushSummary } from './push';
import { belowAltitude, conjunctionConfig, inQuietHours, neoConfig, openLeadTimes } from './rules';
import type { NewNotification, NotificationEntry, PreferenceOut, Store } from './store';
import { PAYLOAD_ICON } from './web/assets';

export interface Candidate extends NewNotification {
  /** Elevation of a pass, for pass-type categories. */
  altitude_deg?: number;
}

export type Decision = 'pushed' | 'not_pushed' | 'quiet_hours' | 'no_subscribers' | 'push_not_configured' | 'no_preference' | 'disabled' | 'below_altitude';

export interface DeliveryResult {
  decision: Decision;
  entry: NotificationEntry | null;
  push: PushSummary | null;
}

export const DEFAULT_DIGEST_CRON = '0 8 * * *';
const DIGEST_STATE_KEY = 'daily_digest:last_run';

/** The JSON a push carries (the service worker shows title/body and may use the rest). */
export interface PushPayload {
  notification_id: number;
  category: string;
  title: string;
  body: string;
  location_id: number | null;
  sent_at: string;
  data: unknown;
  /** Where a click on the notification leads: `data.url` when the notification names one, else the subscribe page on this entry (relative: resolved against the service worker's scope, so it works behind a proxy's path prefix). */
  url: string;
  /** The notification icon, relative like `url` (api/space/web/icon.png). */
  icon: string;
}

/** `data.url` when it is an http(s) URL or a path on this origin (not `//host`), else the page on the entry. */
function clickUrl(id: number, data: unknown): string {
  const u = (data as { url?: unknown } | null)?.url;
  if (typeof u === 'string' && u.length <= 1000 && (/^https?:\/\/[^\s]+$/i.test(u) || /^\/(?![/\\])\S*$/.test(u))) return u;
  return `./?notification=${id}`;
}

/** The push payload of a log entry, shortened (data dropped, then body cut) to stay under MAX_PAYLOAD_BYTES. */
export function pushPayload(e: NotificationEntry): string {
  const data = JSON.parse(e.data_json) as unknown;
  const p: PushPayload = {
    notification_id: e.id,
    category: e.category,
    title: e.title,
    body: e.body,
    location_id: e.location_id,
    sent_at: e.sent_at,
    data,
    url: clickUrl(e.id, data),
    icon: PAYLOAD_ICON,
  };
  let text = JSON.stringify(p);
  if (Buffer.byteLength(text) <= MAX_PAYLOAD_BYTES) return text;
  p.data = null;
  text = JSON.stringify(p);
  while (Buffer.byteLength(text) > MAX_PAYLOAD_BYTES) {
    p.body = `${p.body.slice(0, Math.floor(p.body.length * 0.8))}…`;
    p.title = p.title.slice(0, 200);
    text = JSON.stringify(p);
  }
  return text;
}

function fmt(n: number | null, digits: number, unit: string): string {
  return n === null ? 'unknown' : `${n.toFixed(digits)} ${unit}`;
}

function leadText(minutes: number): string {
  if (minutes % 1440 === 0) return `${minutes / 1440} d`;
  if (minutes % 60 === 0) return `${minutes / 60} h`;
  return `${minutes} min`;
}

/**
 * The digest's counts. A source that holds only the offline sample (or
 * nothing) is not counted as tracked: the text says so and names the sample
 * count as such, and `data` gives null for it and lists it in `sample_sources`.
 */
export function digestNotification(events: EventRefresher, unread: number): Candidate {
  const conj = events.conjunctions();
  const neos = events.neos();
  const astro = events.astronauts();
  const real = (s: { origin: string | null }) => s.origin === 'upstream';
  const sampleSources = [['conjunctions', conj], ['neos', neos], ['astronauts', astro]].filter(([, s]) => !real(s as { origin: string | null })).map(([n]) => n as string);
  const none = (what: string, n: number) => `no ${what} data from upstream yet${n > 0 ? ` (${n} made-up sample entries shown)` : ''}`;
  const conjN = conj.data?.length ?? 0;
  const neoList = neos.data ?? [];
  const hazardous = neoList.filter((n) => n.is_potentially_hazardous).length;
  const people = astro.data?.astronauts.length ?? 0;
  const parts = [
    real(conj) ? `${conjN} conjunctions tracked` : none('conjunction', conjN),
    real(neos) ? `${neoList.length} near-Earth object approaches (${hazardous} potentially hazardous)` : none('near-Earth object', neoList.length),
    real(astro) ? `${people} people in space` : none('crew', people),
  ];
  return {
    category: 'daily_digest',
    title: 'Daily space digest',
    body: `${parts.join(', ')}. ${unread} unread notifications.`,
    data: {
      conjunctions: real(conj) ? conjN : null,
      neos: real(neos) ? neoList.length : null,
      hazardous_neos: real(neos) ? hazardous : null,
      astronauts: real(astro) ? people : null,
      unread,
      sample_sources: sampleSources,
    },
    location_id: null,
  };
}

export class Notifier {
  constructor(
    private readonly store: Store,
    private readonly push: PushSender,
    private readonly clock: Clock,
    private readonly broadcast: (e: NotificationEntry) => void,
  ) {}

  /** The preference that governs a notification (see the header). */
  governingPreference(category: string, locationId: number | null): PreferenceOut | undefined {
    return (locationId !== null ? this.store.preference(locationId, category) : undefined) ?? this.store.preference(null, category);
  }

  async deliver(c: Candidate): Promise<DeliveryResult> {
    const now = this.clock.now();
    const isTest = c.category === TEST_CATEGORY;
    const pref = isTest ? undefined : this.governingPreference(c.category, c.location_id);
    if (!isTest) {
      if (!pref) return { decision: 'no_preference', entry: null, push: null };
      if (!pref.is_enabled) return { decision: 'disabled', entry: null, push: null };
      if (PASS_CATEGORIES.has(c.category) && belowAltitude(pref, c.altitude_deg)) return { decision: 'below_altitude', entry: null, push: null };
    }
    let entry = this.store.logNotification(c, false, now);
    let decision: Decision;
    let push: PushSummary | null = null;
    if (pref && inQuietHours(pref, now)) decision = 'quiet_hours';
    else if (!this.push.configured) decision = 'push_not_configured';
    else {
      const targets = this.store.activePushTargets();
      if (targets.length === 0) decision = 'no_subscribers';
      else {
        push = await this.push.sendAll(targets, pushPayload(entry));
        decision = push.sent > 0 ? 'pushed' : 'not_pushed';
        if (push.sent > 0) entry = this.store.markPushSent(entry.id);
      }
    }
    this.broadcast(entry);
    return { decision, entry, push };
  }

  /** POST /api/notifications/test: every active subscription, logged, broadcast. */
  async sendTest(): Promise<DeliveryResult> {
    return this.deliver({
      category: TEST_CATEGORY,
      title: 'Test notification',
      body: 'Push notifications from the space service reach this device.',
      data: { test: true },
      location_id: null,
    });
  }

  /** Raises what is due at the clock's time: event notifications, then the digest. */
  async tick(events: EventRefresher): Promise<DeliveryResult[]> {
    return [...(await this.raiseEventNotifications(events)), ...(await this.runDigest(events))];
  }

  /**
   * Conjunction and NEO notifications for cached upstream events (never the
   * offline sample) that match the category's settings. Without lead times an
   * event is announced once, when first seen before it happens; with lead
   * times once per open lead time, and several leads opening at once (an
   * event first seen late) give one notification, for the most imminent.
   */
  async raiseEventNotifications(events: EventRefresher): Promise<DeliveryResult[]> {
    const out: DeliveryResult[] = [];
    const conj = events.conjunctions();
    const conjPref = this.wanted('conjunction');
    if (conjPref && conj.origin === 'upstream' && conj.data) {
      const cfg = conjunctionConfig(conjPref.config);
      for (const c of conj.data) {
        if (c.tca === null || c.min_range_km === null || c.min_range_km > cfg.max_range_km) continue;
        if ((c.max_probability ?? 0) < cfg.min_probability) continue;
        if (cfg.norad_ids.length > 0 && !cfg.norad_ids.some((id) => id === c.sat1_id || id === c.sat2_id)) continue;
        const key = `conjunction:${c.sat1_id ?? c.sat1_name}:${c.sat2_id ?? c.sat2_name}:${c.tca}`;
        const r = await this.raiseOnce(conjPref, key, new Date(c.tca), (lead) => this.conjunctionNotification(c, lead));
        if (r) out.push(r);
      }
    }
    const neos = events.neos();
    const neoPref = this.wanted('neo_approach');
    if (neoPref && neos.origin === 'upstream' && neos.data) {
      const cfg = neoConfig(neoPref.config);
      for (const n of neos.data) {
        if (n.close_approach_at === null || (cfg.hazardous_only && !n.is_potentially_hazardous)) continue;
        if (n.miss_distance_lunar === null || n.miss_distance_lunar > cfg.max_miss_distance_lunar) continue;
        const key = `neo_approach:${n.id ?? n.name}:${n.close_approach_at}`;
        const r = await this.raiseOnce(neoPref, key, new Date(n.close_approach_at), (lead) => this.neoNotification(n, lead));
        if (r) out.push(r);
      }
    }
    return out;
  }

  /** The daily digest when its cron schedule (in the preference's zone) has come round since the last one. */
  async runDigest(events: EventRefresher): Promise<DeliveryResult[]> {
    const pref = this.wanted('daily_digest');
    const now = this.clock.now();
    const last = this.store.getState(DIGEST_STATE_KEY);
    if (!pref || last === undefined) {
      // Start counting from now: enabling the digest does not fire one for a schedule that passed before.
      this.store.setState(DIGEST_STATE_KEY, now.toISOString());
      return [];
    }
    const cron = new Cron(pref.schedule_cron ?? DEFAULT_DIGEST_CRON, { timezone: pref.timezone, paused: true });
    const due = cron.nextRun(new Date(last));
    cron.stop();
    if (!due || due.getTime() > now.getTime()) return [];
    this.store.setState(DIGEST_STATE_KEY, now.toISOString());
    return [await this.deliver(digestNotification(events, this.store.unreadCount()))];
  }

  private wanted(category: string): PreferenceOut | undefined {
    const p = this.store.preference(null, category);
    return p?.is_enabled ? p : undefined;
  }

  /** Delivers the event's notification unless this event (and lead time) has been raised before. */
  private async raiseOnce(pref: PreferenceOut, key: string, eventAt: Date, make: (leadMin: number | null) => Candidate): Promise<DeliveryResult | null> {
    const now = this.clock.now();
    if (pref.lead_times === null) {
      if (eventAt.getTime() <= now.getTime() || !this.store.claimEventKey(key, now)) return null;
      return this.deliver(make(null));
    }
    const open = openLeadTimes(eventAt, pref.lead_times, now);
    const fresh = open.filter((lead) => !this.store.eventKeySeen(`${key}:lead${lead}`));
    if (fresh.length === 0) return null;
    for (const lead of fresh) this.store.claimEventKey(`${key}:lead${lead}`, now);
    return this.deliver(make(fresh[fresh.length - 1]));
  }

  private conjunctionNotification(c: Conjunction, leadMin: number | null): Candidate {
    return {
      category: 'conjunction',
      title: `Conjunction${leadMin === null ? '' : ` in under ${leadText(leadMin)}`}: ${c.sat1_name} / ${c.sat2_name}`,
      body: `Closest approach ${fmt(c.min_range_km, 3, 'km')} at ${c.tca ?? 'unknown time'}, relative speed ${fmt(c.relative_speed_km_s, 2, 'km/s')}, probability ${c.max_probability ?? 'unknown'}.`,
      data: { event: 'conjunction', lead_minutes: leadMin, conjunction: c },
      location_id: null,
    };
  }

  private neoNotification(n: Neo, leadMin: number | null): Candidate {
    return {
      category: 'neo_approach',
      title: `${n.is_potentially_hazardous ? 'Potentially hazardous asteroid' : 'Asteroid'} ${n.name}${leadMin === null ? '' : ` in under ${leadText(leadMin)}`}`,
      body: `Closest approach ${n.close_approach_at ?? n.close_approach_date ?? 'soon'}: ${fmt(n.miss_distance_lunar, 2, 'lunar distances')} (${fmt(n.miss_distance_km, 0, 'km')}) at ${fmt(n.relative_velocity_km_s, 2, 'km/s')}.`,
      data: { event: 'neo_approach', lead_minutes: leadMin, neo: n },
      location_id: null,
    };
  }
}
