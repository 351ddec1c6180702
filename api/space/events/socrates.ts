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
 * The SOCRATES table read line by line: the header first, then one
 * conjunction per line. Only the closest `maxRows` are kept, trimmed as the
 * rows come (sort and cut whenever twice as many are held), so a 120,000-row
 * file never sits in memory as a whole nor is sorted at once.
 */
export class SocratesParser {
  private col: Record<(typeof REQUIRED)[number], number> | null = null;
  private width = 0;
  private lines = 0;
  private rows: Conjunction[] = [];

  constructor(private readonly maxRows = 1000) {}

  /** One line of the file (without its line break); blank lines are ignored. */
  line(raw: string): void {
    const line = this.col === null && this.lines === 0 ? raw.replace(/^\uFEFF/, '') : raw;
    if (line.trim() === '') return;
    this.lines++;
    if (this.col === null) {
      const header = splitCsvLine(line).map((h) => h.trim().toUpperCase());
      const col = Object.fromEntries(REQUIRED.map((h) => [h, header.indexOf(h)])) as Record<(typeof REQUIRED)[number], number>;
      const missing = REQUIRED.filter((h) => col[h] < 0);
      if (missing.length > 0) throw new UpstreamFormatError(`SOCRATES answer is not the expected CSV (missing columns ${missing.join(', ')})`);
      this.col = col;
      this.width = header.length;
      return;
    }
    const col = this.col;
    const f = splitCsvLine(line);
    if (f.length < this.width) return;
    const name1 = stripStatusSuffix(f[col.OBJECT_NAME_1] ?? '');
    const name2 = stripStatusSuffix(f[col.OBJECT_NAME_2] ?? '');
    if (!name1 || !name2) return;
    this.rows.push({
      sat1_name: name1,
      sat1_id: catalogId(f[col.NORAD_CAT_ID_1]),
      sat2_name: name2,
      sat2_id: catalogId(f[col.NORAD_CAT_ID_2]),
      tca: utcIso(f[col.TCA]),
      min_range_km: num(f[col.TCA_RANGE]),
      relative_speed_km_s: num(f[col.TCA_RELATIVE_SPEED]),
      max_probability: num(f[col.MAX_PROB]),
    });
    if (this.rows.length >= 2 * this.maxRows) this.trim();
  }

  /** The conjunctions, closest first (a stable sort: equal ranges keep the file's order). */
  finish(): Conjunction[] {
    if (this.lines === 0) throw new UpstreamFormatError('SOCRATES answer is empty');
    if (this.rows.length === 0 && this.lines > 1) throw new UpstreamFormatError('SOCRATES answer has a header but no readable conjunction line');
    this.trim();
    return this.rows;
  }

  private trim(): void {
    this.rows.sort((a, b) => (a.min_range_km ?? Infinity) - (b.min_range_km ?? Infinity));
    if (this.rows.length > this.maxRows) this.rows.length = this.maxRows;
  }
}

/**
 * Parses the CSV into conjunctions, closest first. Throws UpstreamFormatError
 * when the text is not a SOCRATES table (an HTML error page, truncated JSON…);
 * single malformed lines are skipped.
 */
export function parseSocratesCsv(text: string, maxRows = 1000): Conjunction[] {
  const p = new SocratesParser(maxRows);
  for (const line of text.split(/\r?\n/)) p.line(line);
  return p.finish();
}

/** Lines handled between two turns of the event loop: a few milliseconds of work. */
export const LINES_PER_TURN = 500;
/** A SOCRATES line is about 120 characters; anything this long is not the table (and would be split again per chunk). */
const MAX_LINE_CHARS = 64 * 1024;

/**
 * The same from a streamed answer, a chunk at a time, yielding to the event
 * loop every LINES_PER_TURN lines (and between chunks, which arrive
 * asynchronously), so API requests are answered while a 13 MB file is read.
 */
export async function parseSocratesStream(chunks: AsyncIterable<string>, maxRows = 1000): Promise<Conjunction[]> {
  const p = new SocratesParser(maxRows);
  let rest = '';
  let sinceYield = 0;
  for await (const chunk of chunks) {
    const lines = (rest + chunk).split(/\r?\n/);
    rest = lines.pop() ?? '';
    if (rest.length > MAX_LINE_CHARS) throw new UpstreamFormatError(`SOCRATES answer is not the expected CSV (a line longer than ${MAX_LINE_CHARS} characters)`);
    for (const line of lines) {
      p.line(line);
      if (++sinceYield >= LINES_PER_TURN) {
        sinceYield = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  }
  p.line(rest);
  return p.finish();
}
