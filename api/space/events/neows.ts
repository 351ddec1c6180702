/**
 * NASA NeoWs feed (`/neo/rest/v1/feed?start_date&end_date&api_key`, at most
 * seven days): `near_earth_objects` keyed by date. Quirks handled: the
 * approach figures are strings, `close_approach_date_full` is a zone-less
 * UTC time with a month name.
 */
import { num, UpstreamFormatError, utcIso, type Neo } from './types';

/** The feed URL for the `days` days from `from` (UTC dates). */
export function neoFeedUrl(base: string, apiKey: string, from: Date, days = 7): string {
  const day = (d: Date) => d.toISOString().slice(0, 10);
  const url = new URL(base);
  url.searchParams.set('start_date', day(from));
  url.searchParams.set('end_date', day(new Date(from.getTime() + (Math.min(days, 7) - 1) * 86_400_000)));
  url.searchParams.set('api_key', apiKey);
  return url.toString();
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

/** Parses the feed into one record per object, soonest approach first (then closest). */
export function parseNeoFeed(json: unknown): Neo[] {
  const feed = obj(json);
  const byDate = feed.near_earth_objects;
  if (byDate === null || typeof byDate !== 'object' || Array.isArray(byDate)) {
    throw new UpstreamFormatError('NeoWs answer has no near_earth_objects object');
  }
  const out: Neo[] = [];
  for (const list of Object.values(byDate as Json)) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      const o = obj(item);
      if (typeof o.name !== 'string') continue;
      const meters = obj(obj(o.estimated_diameter).meters);
      const approaches = Array.isArray(o.close_approach_data) ? o.close_approach_data.map(obj) : [];
      const a = approaches.find((x) => x.orbiting_body === undefined || x.orbiting_body === 'Earth') ?? {};
      const date = typeof a.close_approach_date === 'string' ? a.close_approach_date : null;
      out.push({
        id: typeof o.id === 'string' || typeof o.id === 'number' ? String(o.id) : null,
        name: o.name.trim(),
        absolute_magnitude: num(o.absolute_magnitude_h),
        estimated_diameter_min_m: num(meters.estimated_diameter_min),
        estimated_diameter_max_m: num(meters.estimated_diameter_max),
        is_potentially_hazardous: o.is_potentially_hazardous_asteroid === true,
        close_approach_date: date,
        close_approach_at: utcIso(a.close_approach_date_full) ?? utcIso(date),
        relative_velocity_km_s: num(obj(a.relative_velocity).kilometers_per_second),
        miss_distance_km: num(obj(a.miss_distance).kilometers),
        miss_distance_lunar: num(obj(a.miss_distance).lunar),
      });
    }
  }
  out.sort(
    (x, y) =>
      (x.close_approach_at ?? '9999').localeCompare(y.close_approach_at ?? '9999') ||
      (x.miss_distance_km ?? Infinity) - (y.miss_distance_km ?? Infinity),
  );
  return out;
}
