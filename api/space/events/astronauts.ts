/**
 * People in space: Launch Library 2 astronauts (`/2.2.0/astronaut/?in_space=true`)
 * give name, agency, nationality, picture and biography but no spacecraft;
 * Open Notify (`astros.json`) gives `people[{name, craft}]`. The craft is
 * joined on the name, compared without case, accents or punctuation.
 */
import { num, UpstreamFormatError, type Astronaut, type AstronautData } from './types';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');

export const UNKNOWN_CRAFT = 'Unknown';

/** `Sunita "Suni" Williams` and `sunita williams` compare equal. */
export function nameKey(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/"[^"]*"/g, ' ')
    .toLowerCase()
    .replace(/[^a-z ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .join(' ');
}

/** LL2 `nationality` is a string in 2.2.0 and a list of country objects in later versions. */
function nationality(v: unknown): string {
  if (typeof v === 'string') return v.trim();
  if (Array.isArray(v)) {
    return v
      .map((c) => str(obj(c).nationality_name) || str(obj(c).name))
      .filter(Boolean)
      .join(', ');
  }
  return '';
}

/** Astronauts from an LL2 astronaut list answer, craft still unknown. */
export function parseLl2Astronauts(json: unknown): Astronaut[] {
  const results = obj(json).results;
  if (!Array.isArray(results)) throw new UpstreamFormatError('Launch Library 2 answer has no results list');
  const out: Astronaut[] = [];
  for (const r of results.map(obj)) {
    const id = num(r.id);
    const name = str(r.name);
    if (id === null || !name) continue;
    const agency = obj(r.agency);
    const image = r.profile_image ?? r.profile_image_thumbnail ?? obj(r.image).image_url;
    out.push({
      id,
      name,
      agency: str(agency.name) || str(agency.abbrev),
      nationality: nationality(r.nationality),
      craft: UNKNOWN_CRAFT,
      profile_image: str(image),
      bio: str(r.bio),
    });
  }
  return out;
}

/** `people[{name, craft}]` from Open Notify's astros.json. */
export function parseOpenNotify(json: unknown): Array<{ name: string; craft: string }> {
  const people = obj(json).people;
  if (!Array.isArray(people)) throw new UpstreamFormatError('Open Notify answer has no people list');
  return people.map(obj).flatMap((p) => (str(p.name) && str(p.craft) ? [{ name: str(p.name), craft: str(p.craft) }] : []));
}

/** Puts each astronaut in their craft (by name; the LL2 name and the Open Notify name may differ in accents or nicknames). */
export function joinCrafts(astronauts: Astronaut[], people: Array<{ name: string; craft: string }> | null): AstronautData {
  const byName = new Map<string, string>();
  const byLast = new Map<string, string[]>();
  for (const p of people ?? []) {
    const key = nameKey(p.name);
    byName.set(key, p.craft);
    const last = key.split(' ').at(-1) ?? '';
    byLast.set(last, [...(byLast.get(last) ?? []), p.craft]);
  }
  const withCraft = astronauts.map((a) => {
    const key = nameKey(a.name);
    const crafts = byLast.get(key.split(' ').at(-1) ?? '') ?? [];
    // A surname shared by two people in space is not enough to place either.
    const craft = byName.get(key) ?? (crafts.length === 1 ? crafts[0] : UNKNOWN_CRAFT);
    return { ...a, craft };
  });
  const crafts = [...new Set(withCraft.map((a) => a.craft).filter((c) => c !== UNKNOWN_CRAFT))].sort();
  return { astronauts: withCraft, crafts };
}
