/**
 * CelesTrak SOCRATES conjunction reports (`sort-minRange.csv`): one header
 * line, then one conjunction per line. Quirks handled: object names carry a
 * status suffix such as ` [+]`, TCA is UTC without a zone, the probability is
 * in E-notation, fields may be quoted.
 */
import { num, UpstreamFormatError, utcIso, type Conjunction } from './types';

const REQUIRED = ['NORAD_CAT_ID_1', 'OBJECT_NAME_1', 'NORAD_CAT_ID_2', 'OBJECT_NAME_2', 'TCA', 'TCA_RANGE', 'TCA_RELATIVE_SPEED', 'MAX_PROB'] as const;

/** Splits one CSV line (RFC 4180 quoting, `""` for a quote inside quotes). */
export function splitCsvLine(line: string): string[] {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(field);
      field = '';
    } else field += c;
  }
  out.push(field);
  return out;
}

/** `ISS (ZARYA) [+]` -> `ISS (ZARYA)`. */
export function stripStatusSuffix(name: string): string {
  return name.replace(/\s*\[[^\]]*\]\s*$/, '').trim();
}

function catalogId(s: string | undefined): number | null {
  const n = num(s);
  return n !== null && Number.isInteger(n) && n > 0 ? n : null;
}

/**
 * Parses the CSV into conjunctions, closest first. Throws UpstreamFormatError
 * when the text is not a SOCRATES table (an HTML error page, truncated JSON…);
 * single malformed lines are skipped.
 */
export function parseSocratesCsv(text: string, maxRows = 1000): Conjunction[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length === 0) throw new UpstreamFormatError('SOCRATES answer is empty');
  const header = splitCsvLine(lines[0]).map((h) => h.trim().toUpperCase());
  const col = Object.fromEntries(REQUIRED.map((h) => [h, header.indexOf(h)])) as Record<(typeof REQUIRED)[number], number>;
  const missing = REQUIRED.filter((h) => col[h] < 0);
  if (missing.length > 0) throw new UpstreamFormatError(`SOCRATES answer is not the expected CSV (missing columns ${missing.join(', ')})`);
  const rows: Conjunction[] = [];
  for (const line of lines.slice(1)) {
    const f = splitCsvLine(line);
    if (f.length < header.length) continue;
    const name1 = stripStatusSuffix(f[col.OBJECT_NAME_1] ?? '');
    const name2 = stripStatusSuffix(f[col.OBJECT_NAME_2] ?? '');
    if (!name1 || !name2) continue;
    rows.push({
      sat1_name: name1,
      sat1_id: catalogId(f[col.NORAD_CAT_ID_1]),
      sat2_name: name2,
      sat2_id: catalogId(f[col.NORAD_CAT_ID_2]),
      tca: utcIso(f[col.TCA]),
      min_range_km: num(f[col.TCA_RANGE]),
      relative_speed_km_s: num(f[col.TCA_RELATIVE_SPEED]),
      max_probability: num(f[col.MAX_PROB]),
    });
  }
  if (rows.length === 0 && lines.length > 1) throw new UpstreamFormatError('SOCRATES answer has a header but no readable conjunction line');
  rows.sort((a, b) => (a.min_range_km ?? Infinity) - (b.min_range_km ?? Infinity));
  return rows.slice(0, maxRows);
}
