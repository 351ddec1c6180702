/**
 * The delivery rules as pure functions of a preference and a time: quiet
 * hours read on the wall clock of the preference's time zone (a window whose
 * start is after its end crosses midnight), lead-time windows before an
 * event (absolute minutes, so a daylight-saving change does not move them),
 * the altitude floor of pass-type categories, and the category settings of
 * the event categories.
 */
import { SpaceError } from './errors';
import type { PreferenceOut } from './store';

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Minutes since local midnight at `t` in the IANA zone `tz`. */
export function localMinuteOfDay(t: Date, tz: string): number {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { timeZone: tz, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formatters.set(tz, f);
  }
  let h = 0;
  let m = 0;
  for (const p of f.formatToParts(t)) {
    if (p.type === 'hour') h = Number(p.value);
    else if (p.type === 'minute') m = Number(p.value);
  }
  return h * 60 + m;
}

function hhmm(s: string): number {
  return Number(s.slice(0, 2)) * 60 + Number(s.slice(3, 5));
}

/**
 * Whether `t` falls in the preference's quiet hours [quiet_start, quiet_end)
 * on the local clock. Both must be set; equal start and end mean no quiet hours.
 */
export function inQuietHours(pref: Pick<PreferenceOut, 'quiet_start' | 'quiet_end' | 'timezone'>, t: Date): boolean {
  if (pref.quiet_start === null || pref.quiet_end === null) return false;
  const start = hhmm(pref.quiet_start);
  const end = hhmm(pref.quiet_end);
  if (start === end) return false;
  const now = localMinuteOfDay(t, pref.timezone);
  return start < end ? now >= start && now < end : now >= start || now < end;
}

/**
 * The lead times (minutes) whose notice window [event - lead, event) holds
 * `now`, most imminent last. An event already past has none.
 */
export function openLeadTimes(eventAt: Date, leadTimes: readonly number[], now: Date): number[] {
  const untilMs = eventAt.getTime() - now.getTime();
  if (untilMs <= 0) return [];
  return leadTimes.filter((lead) => untilMs <= lead * 60_000).sort((a, b) => b - a);
}

/** Pass-type notifications below the preference's altitude floor are not wanted. */
export function belowAltitude(pref: Pick<PreferenceOut, 'min_altitude'>, altitudeDeg: number | undefined): boolean {
  return altitudeDeg !== undefined && altitudeDeg < pref.min_altitude;
}

// --- category settings (`config`) ---------------------------------------------
// Keys this service reads; other keys are stored for clients and ignored here.

export interface ConjunctionConfig {
  /** Only conjunctions closer than this (km). */
  max_range_km: number;
  /** Only conjunctions at least this likely (0 = any). */
  min_probability: number;
  /** Only conjunctions involving one of these catalogue numbers (empty = any). */
  norad_ids: number[];
}

export interface NeoConfig {
  hazardous_only: boolean;
  /** Only approaches closer than this many lunar distances. */
  max_miss_distance_lunar: number;
}

export const CONJUNCTION_CONFIG_DEFAULTS: ConjunctionConfig = { max_range_km: 1, min_probability: 0, norad_ids: [] };
export const NEO_CONFIG_DEFAULTS: NeoConfig = { hazardous_only: false, max_miss_distance_lunar: 10 };

type Check = (v: unknown) => boolean;
const nonNegative: Check = (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const KNOWN_CONFIG: Record<string, Record<string, [Check, string]>> = {
  conjunction: {
    max_range_km: [nonNegative, 'a number >= 0'],
    min_probability: [(v) => nonNegative(v) && (v as number) <= 1, 'a number from 0 to 1'],
    norad_ids: [(v) => Array.isArray(v) && v.length <= 100 && v.every((x) => Number.isInteger(x) && x > 0), 'a list of up to 100 positive integers'],
  },
  neo_approach: {
    hazardous_only: [(v) => typeof v === 'boolean', 'true or false'],
    max_miss_distance_lunar: [nonNegative, 'a number >= 0'],
  },
};

/** Checks the keys this service reads for the category; throws SPACE_ERR_INVALID naming the key. */
export function checkCategoryConfig(category: string, config: Record<string, unknown> | null): void {
  const known = KNOWN_CONFIG[category];
  if (!known || !config) return;
  for (const [key, [ok, what]] of Object.entries(known)) {
    if (key in config && !ok(config[key])) throw new SpaceError('SPACE_ERR_INVALID', `config.${key} for ${category} must be ${what}`);
  }
}

export function conjunctionConfig(config: Record<string, unknown> | null): ConjunctionConfig {
  return { ...CONJUNCTION_CONFIG_DEFAULTS, ...(config as Partial<ConjunctionConfig> | null) };
}

export function neoConfig(config: Record<string, unknown> | null): NeoConfig {
  return { ...NEO_CONFIG_DEFAULTS, ...(config as Partial<NeoConfig> | null) };
}
