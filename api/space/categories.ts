/**
 * The notification categories of seed 002. Global categories need no
 * location; location categories are written only through a location's
 * preference endpoint.
 */
export const GLOBAL_CATEGORIES = [
  'launch',
  'reentry',
  'space_weather',
  'solar_flare',
  'agency_scales',
  'neo_approach',
  'conjunction',
  'hf_conditions',
  'daily_digest',
] as const;

export const LOCATION_CATEGORIES = ['satellite_pass', 'aurora', 'observing', 'sonde_nearby', 'whats_up'] as const;

export type GlobalCategory = (typeof GLOBAL_CATEGORIES)[number];
export type LocationCategory = (typeof LOCATION_CATEGORIES)[number];
export type Category = GlobalCategory | LocationCategory;

/** The category of the test notification: not a preference category, so no preference can silence it. */
export const TEST_CATEGORY = 'test';

/** Categories whose notifications describe a pass over the observer, filtered by `min_altitude`. */
export const PASS_CATEGORIES: ReadonlySet<string> = new Set<Category>(['satellite_pass']);

const globalSet: ReadonlySet<string> = new Set(GLOBAL_CATEGORIES);
const locationSet: ReadonlySet<string> = new Set(LOCATION_CATEGORIES);

export function isGlobalCategory(c: string): c is GlobalCategory {
  return globalSet.has(c);
}

export function isLocationCategory(c: string): c is LocationCategory {
  return locationSet.has(c);
}

export function isCategory(c: string): c is Category {
  return globalSet.has(c) || locationSet.has(c);
}
