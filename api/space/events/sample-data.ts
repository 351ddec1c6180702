/**
 * Offline sample data, loaded when a source's cache is empty and its
 * upstream does not answer, so the service shows something with no network.
 * Made-up objects and people (not real catalogue entries); times are placed
 * relative to `now` so the sample never lies in the past. Every name a
 * client shows (object, asteroid, person, agency, craft) starts with SAMPLE,
 * so a list, a count or a notification built from it cannot pass for real data.
 */
import type { AstronautData, Conjunction, Neo } from './types';

const hours = (now: Date, h: number) => new Date(now.getTime() + h * 3600_000);

export function sampleConjunctions(now: Date): Conjunction[] {
  const rows: Array<[string, number, string, number, number, number, number, number]> = [
    ['SAMPLE SAT ALPHA', 90001, 'SAMPLE DEBRIS 17', 90117, 9, 0.084, 14.2, 3.1e-4],
    ['SAMPLE SAT BRAVO', 90002, 'SAMPLE ROCKET BODY', 90230, 20, 0.213, 9.87, 4.6e-5],
    ['SAMPLE STATION', 90003, 'SAMPLE DEBRIS 42', 90142, 31, 0.477, 11.05, 2.2e-6],
    ['SAMPLE CUBESAT 7', 90007, 'SAMPLE SAT CHARLIE', 90004, 44, 0.92, 0.35, 8.0e-7],
  ];
  return rows.map(([n1, id1, n2, id2, h, range, speed, prob]) => ({
    sat1_name: n1,
    sat1_id: id1,
    sat2_name: n2,
    sat2_id: id2,
    tca: hours(now, h).toISOString(),
    min_range_km: range,
    relative_speed_km_s: speed,
    max_probability: prob,
  }));
}

export function sampleNeos(now: Date): Neo[] {
  const rows: Array<[string, string, number, number, number, boolean, number, number, number]> = [
    ['9000001', 'SAMPLE (2026 AB1)', 24.1, 31, 70, false, 30, 7.42, 1_204_000],
    ['9000002', 'SAMPLE (2026 CD7)', 19.6, 251, 562, true, 52, 18.9, 6_930_000],
    ['9000003', 'SAMPLE (2026 EF3)', 27.8, 6, 13, false, 80, 5.05, 402_000],
  ];
  return rows.map(([id, name, h, dmin, dmax, hazardous, inHours, speed, km]) => {
    const at = hours(now, inHours);
    return {
      id,
      name,
      absolute_magnitude: h,
      estimated_diameter_min_m: dmin,
      estimated_diameter_max_m: dmax,
      is_potentially_hazardous: hazardous,
      close_approach_date: at.toISOString().slice(0, 10),
      close_approach_at: at.toISOString(),
      relative_velocity_km_s: speed,
      miss_distance_km: km,
      miss_distance_lunar: Math.round((km / 384_400) * 1000) / 1000,
    };
  });
}

export function sampleAstronauts(): AstronautData {
  const bio = 'Sample record shown while no upstream has answered; refresh when online for the real crew.';
  const astronauts = [
    { id: 900001, name: 'SAMPLE Astronaut A', agency: 'SAMPLE Space Agency', nationality: 'Sample', craft: 'SAMPLE Station' },
    { id: 900002, name: 'SAMPLE Astronaut B', agency: 'SAMPLE Space Agency', nationality: 'Sample', craft: 'SAMPLE Station' },
    { id: 900003, name: 'SAMPLE Astronaut C', agency: 'SAMPLE Orbital Office', nationality: 'Sample', craft: 'SAMPLE Capsule' },
  ].map((a) => ({ ...a, profile_image: '', bio }));
  return { astronauts, crafts: ['SAMPLE Capsule', 'SAMPLE Station'] };
}
