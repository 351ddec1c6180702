/** The space-event records as the API serves them (seed 002) and the errors of their sources. */

export interface Conjunction {
  sat1_name: string;
  sat1_id: number | null;
  sat2_name: string;
  sat2_id: number | null;
  tca: string | null;
  min_range_km: number | null;
  relative_speed_km_s: number | null;
  max_probability: number | null;
}

export interface Neo {
  id: string | null;
  name: string;
  absolute_magnitude: number | null;
  estimated_diameter_min_m: number | null;
  estimated_diameter_max_m: number | null;
  is_potentially_hazardous: boolean;
  close_approach_date: string | null;
  /** Addition to the seed: the full time of closest approach (UTC, ISO 8601) when the feed gives it. */
  close_approach_at: string | null;
  relative_velocity_km_s: number | null;
  miss_distance_km: number | null;
  miss_distance_lunar: number | null;
}

export interface Astronaut {
  id: number;
  name: string;
  agency: string;
  nationality: string;
  craft: string;
  profile_image: string;
  bio: string;
}

export interface AstronautData {
  astronauts: Astronaut[];
  crafts: string[];
}

/** The upstream answered something that is not the expected format. */
export class UpstreamFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamFormatError';
  }
}

/** Number from a JSON number or a numeric string (NeoWs sends strings); null when absent or not a number. */
export function num(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** A zone-less UTC time (`2026-09-27 22:46:51.724`, `2026-Nov-21 03:31`) as ISO 8601 with Z; null when unreadable. */
export function utcIso(s: unknown): string | null {
  if (typeof s !== 'string' || s.trim() === '') return null;
  const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
  let t = s.trim().replace(/^(\d{4})-([A-Za-z]{3})-(\d{2})/, (m, y: string, mon: string, d: string) => {
    const i = MONTHS.indexOf(mon.toLowerCase());
    return i < 0 ? m : `${y}-${String(i + 1).padStart(2, '0')}-${d}`;
  });
  t = t.replace(' ', 'T');
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/.test(t)) return null;
  if (!t.includes('T')) t += 'T00:00';
  const ms = Date.parse(`${t}Z`);
  if (Number.isNaN(ms)) return null;
  const iso = new Date(ms).toISOString();
  // Date.parse rolls 30 February over into March; a date that does not exist is unreadable.
  return iso.slice(0, 10) === t.slice(0, 10) ? iso : null;
}
