/**
 * Scans kept in a SQLite file (better-sqlite3, as the space service keeps
 * its log): each scan's record and every sample, written as they happen
 * (WAL, one transaction per sample), so a server that stops mid-scan loses
 * nothing measured and the next one can resume the scan.
 *
 * `PRAGMA user_version` numbers the schema as api/space/db.ts does; a file
 * from a newer version is refused, not misread.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import type { ScanRecord, ScanSample, ScanStore } from '../firmware/scan-store';

const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE scans (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    -- written once: a long point list is not rewritten with every sample
    settings_json TEXT NOT NULL,
    request_json TEXT NOT NULL,
    -- the progress: the record without settings and request
    record_json TEXT NOT NULL
  );
  CREATE TABLE scan_samples (
    scan_seq INTEGER NOT NULL REFERENCES scans(seq),
    n INTEGER NOT NULL,
    point_index INTEGER NOT NULL,
    theta_deg REAL NOT NULL,
    phi_deg REAL NOT NULL,
    time_s REAL NOT NULL,
    values_json TEXT NOT NULL,
    error TEXT,
    PRIMARY KEY (scan_seq, n)
  );
  `,
];

interface RecordRow {
  settings_json: string;
  request_json: string;
  record_json: string;
}

function progressJson(record: ScanRecord): string {
  const { settings: _settings, request: _request, ...progress } = record;
  return JSON.stringify(progress);
}

function fromRow(row: RecordRow | undefined): ScanRecord | null {
  if (!row) return null;
  return { ...(JSON.parse(row.record_json) as Omit<ScanRecord, 'settings' | 'request'>), settings: JSON.parse(row.settings_json) as ScanRecord['settings'], request: JSON.parse(row.request_json) as unknown };
}

export const DEFAULT_SCAN_DB = 'positioner-scans.db';

export class SqliteScanStore implements ScanStore {
  private readonly db: Database.Database;
  private readonly stmts;
  /** Per scan id: its row seq and the number of samples it has (the next sample's n). */
  private readonly seqs = new Map<string, { seq: number; n: number }>();

  constructor(file: string) {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      this.db.close();
      throw new Error(`the scan database ${file} has schema version ${version}, newer than this positioner knows (${MIGRATIONS.length}); use another file (--scan-db)`);
    }
    for (let v = version; v < MIGRATIONS.length; v++) {
      this.db.transaction(() => {
        this.db.exec(MIGRATIONS[v]);
        this.db.pragma(`user_version = ${v + 1}`);
      })();
    }
    this.stmts = {
      insert: this.db.prepare('INSERT INTO scans (id, settings_json, request_json, record_json) VALUES (?, ?, ?, ?)'),
      update: this.db.prepare('UPDATE scans SET record_json = ? WHERE id = ?'),
      seq: this.db.prepare('SELECT seq, (SELECT count(*) FROM scan_samples WHERE scan_seq = scans.seq) AS n FROM scans WHERE id = ?'),
      sample: this.db.prepare('INSERT INTO scan_samples (scan_seq, n, point_index, theta_deg, phi_deg, time_s, values_json, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
      latest: this.db.prepare('SELECT settings_json, request_json, record_json FROM scans ORDER BY seq DESC LIMIT 1'),
      get: this.db.prepare('SELECT settings_json, request_json, record_json FROM scans WHERE id = ?'),
      samples: this.db.prepare('SELECT point_index, theta_deg, phi_deg, time_s, values_json, error FROM scan_samples WHERE scan_seq = ? ORDER BY n'),
      count: this.db.prepare('SELECT count(*) AS n FROM scans'),
    };
  }

  insert(record: ScanRecord): void {
    const info = this.stmts.insert.run(record.id, JSON.stringify(record.settings), JSON.stringify(record.request ?? null), progressJson(record));
    this.seqs.set(record.id, { seq: Number(info.lastInsertRowid), n: 0 });
  }

  update(record: ScanRecord): void {
    this.stmts.update.run(progressJson(record), record.id);
  }

  private readonly addSampleTx = (record: ScanRecord, sample: ScanSample): void => {
    this.db.transaction(() => {
      const at = this.seqOf(record.id);
      this.stmts.sample.run(at.seq, at.n, sample.index, sample.thetaDeg, sample.phiDeg, sample.timeS, JSON.stringify(sample.values), sample.error);
      at.n += 1;
      this.update(record);
    })();
  };

  addSample(record: ScanRecord, sample: ScanSample): void {
    this.addSampleTx(record, sample);
  }

  private seqOf(id: string): { seq: number; n: number } {
    let at = this.seqs.get(id);
    if (!at) {
      const row = this.stmts.seq.get(id) as { seq: number; n: number } | undefined;
      if (!row) throw new Error(`no scan ${id} in the store`);
      at = { seq: row.seq, n: row.n };
      this.seqs.set(id, at);
    }
    return at;
  }

  latest(): ScanRecord | null {
    return fromRow(this.stmts.latest.get() as RecordRow | undefined);
  }

  get(id: string): ScanRecord | null {
    return fromRow(this.stmts.get.get(id) as RecordRow | undefined);
  }

  samples(id: string): ScanSample[] {
    const row = this.stmts.seq.get(id) as { seq: number } | undefined;
    if (!row) return [];
    const rows = this.stmts.samples.all(row.seq) as { point_index: number; theta_deg: number; phi_deg: number; time_s: number; values_json: string; error: string | null }[];
    return rows.map((r) => ({ index: r.point_index, thetaDeg: r.theta_deg, phiDeg: r.phi_deg, timeS: r.time_s, values: JSON.parse(r.values_json) as number[], error: r.error }));
  }

  count(): number {
    return (this.stmts.count.get() as { n: number }).n;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * A SqliteScanStore that creates its file only when the first scan starts:
 * `positioner serve` leaves no database behind in a directory where nobody
 * scanned. Reads before that see an empty store.
 */
export class LazySqliteScanStore implements ScanStore {
  private store: SqliteScanStore | null = null;

  constructor(private readonly file: string) {
    if (file === ':memory:' || fs.existsSync(file)) this.store = new SqliteScanStore(file);
  }

  private open(): SqliteScanStore {
    this.store ??= new SqliteScanStore(this.file);
    return this.store;
  }

  insert(record: ScanRecord): void {
    this.open().insert(record);
  }

  update(record: ScanRecord): void {
    this.open().update(record);
  }

  addSample(record: ScanRecord, sample: ScanSample): void {
    this.open().addSample(record, sample);
  }

  latest(): ScanRecord | null {
    return this.store?.latest() ?? null;
  }

  get(id: string): ScanRecord | null {
    return this.store?.get(id) ?? null;
  }

  samples(id: string): ScanSample[] {
    return this.store?.samples(id) ?? [];
  }

  count(): number {
    return this.store?.count() ?? 0;
  }

  close(): void {
    this.store?.close();
  }
}
