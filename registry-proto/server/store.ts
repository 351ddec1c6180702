/**
 * The registry's SQLite database (better-sqlite3), one file that survives
 * restarts and is shared safely by the server and the CLI at once:
 *
 * - WAL journal (readers never wait for the writer; a crash loses nothing
 *   committed), synchronous=NORMAL (safe with WAL), a 5 s busy timeout so a
 *   second process waits for the write lock instead of failing;
 * - every read-modify-write (enabling routes, deleting, importing) is one
 *   IMMEDIATE transaction, so concurrent writers serialise instead of losing
 *   updates;
 * - a device is stored as its GetDeviceResponse protobuf bytes (the wire
 *   form: served as is for binary GETs, and it evolves with the schema like
 *   any protobuf) beside the columns the store queries on;
 * - API keys are stored as the SHA-256 of their secret: the secret is 256
 *   random bits, so a fast hash is enough (no password stretching needed) and
 *   the database alone never lets anyone call the API.
 *
 * The schema version is PRAGMA user_version; migrate() brings an older file up.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { codecFor } from '../codec';
import { RegistryError } from '../errors';
import type { GetDeviceResponse } from '../messages';
import type { TailscaleExtras } from '../tailscale-json';
import { normaliseRoutes } from './routes';

const SCHEMA_VERSION = 2;
const device = codecFor<GetDeviceResponse>('registry.v1.GetDeviceResponse');

export interface Routes {
  enabledRoutes: string[];
  advertisedRoutes: string[];
}

export interface ApiKeyInfo {
  id: string;
  description: string;
  createdMs: number;
  /** undefined: never expires. */
  expiresMs?: number;
  lastUsedMs?: number;
  revoked: boolean;
}

export interface StoreOptions {
  /** The clock for key expiry and last-used times (ms since the epoch). */
  nowMs?: () => number;
  /** Refuse to create the file (commands that only read or change what is there). */
  mustExist?: boolean;
}

/** Prefix of every key: lets secret scanners and people recognise one. */
export const API_KEY_PREFIX = 'rpk';
const KEY_PATTERN = /^rpk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

const LAST_USE_RESOLUTION_MS = 60_000;

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest();

export class RegistryStore {
  readonly db: Database.Database;
  private readonly nowMs: () => number;
  private readonly stmt;
  /** When each key's last use was last written (ms), to write it at most once a minute. */
  private readonly lastUseWrittenMs = new Map<string, number>();

  constructor(readonly file: string, options: StoreOptions = {}) {
    this.nowMs = options.nowMs ?? Date.now;
    try {
      this.db = new Database(file, { fileMustExist: options.mustExist === true });
    } catch (err) {
      if (options.mustExist && !fs.existsSync(file)) throw new RegistryError('REG_ERR_NOT_FOUND', `no registry database at ${file}: make one with \`registry-proto devices import\` or \`keys create\`, or name it with --db / REGISTRY_DB`);
      throw err;
    }
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
    this.stmt = {
      get: this.db.prepare<[string], { record: Buffer }>('SELECT record FROM devices WHERE id = ?'),
      // API v2 names a device by id or by Tailscale's nodeId.
      resolve: this.db.prepare<[string, string], { id: string }>('SELECT id FROM devices WHERE id = ? UNION ALL SELECT id FROM devices WHERE node_id = ? LIMIT 1'),
      extras: this.db.prepare<[string], { tailscale: string | null }>('SELECT tailscale FROM devices WHERE id = ?'),
      allWithExtras: this.db.prepare<[], { record: Buffer; tailscale: string | null }>('SELECT record, tailscale FROM devices ORDER BY id'),
      update: this.db.prepare<[Buffer, string]>('UPDATE devices SET record = ? WHERE id = ?'),
      external: this.db.prepare<[string], { is_external: number }>('SELECT is_external FROM devices WHERE id = ?'),
      delete: this.db.prepare<[string]>('DELETE FROM devices WHERE id = ?'),
      put: this.db.prepare<[string, number, Buffer, string | null, string | null]>(
        'INSERT INTO devices (id, is_external, record, node_id, tailscale) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET is_external = excluded.is_external, record = excluded.record, node_id = excluded.node_id, tailscale = excluded.tailscale',
      ),
      all: this.db.prepare<[], { record: Buffer }>('SELECT record FROM devices ORDER BY id'),
      count: this.db.prepare<[], { n: number }>('SELECT count(*) AS n FROM devices'),
      key: this.db.prepare<[string], { hash: Buffer; expires_ms: number | null; revoked: number }>('SELECT hash, expires_ms, revoked FROM api_keys WHERE id = ?'),
      keyUsed: this.db.prepare<[number, string]>('UPDATE api_keys SET last_used_ms = ? WHERE id = ?'),
    };
  }

  private migrate(): void {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new Error(`${this.file} has database schema ${version}, newer than this registry-proto (${SCHEMA_VERSION}): upgrade registry-proto`);
    }
    if (version < 1) {
      this.db.exec(`
        BEGIN IMMEDIATE;
        CREATE TABLE IF NOT EXISTS devices (
          id TEXT PRIMARY KEY NOT NULL,
          is_external INTEGER NOT NULL DEFAULT 0,
          record BLOB NOT NULL
        ) STRICT;
        CREATE TABLE IF NOT EXISTS api_keys (
          id TEXT PRIMARY KEY NOT NULL,
          hash BLOB NOT NULL,
          description TEXT NOT NULL DEFAULT '',
          created_ms INTEGER NOT NULL,
          expires_ms INTEGER,
          last_used_ms INTEGER,
          revoked INTEGER NOT NULL DEFAULT 0
        ) STRICT;
        PRAGMA user_version = 1;
        COMMIT;`);
    }
    if (version < 2) {
      // Version 2: Tailscale-only fields (API v2), its nodeId queryable.
      this.db.exec(`
        BEGIN IMMEDIATE;
        ALTER TABLE devices ADD COLUMN node_id TEXT;
        ALTER TABLE devices ADD COLUMN tailscale TEXT;
        CREATE UNIQUE INDEX devices_node_id ON devices (node_id) WHERE node_id IS NOT NULL;
        PRAGMA user_version = 2;
        COMMIT;`);
    }
  }

  close(): void {
    this.db.close();
  }

  /** The stored protobuf bytes of a device (GetDeviceResponse), or undefined. */
  getDeviceBytes(id: string): Buffer | undefined {
    return this.stmt.get.get(id)?.record;
  }

  getDevice(id: string): GetDeviceResponse | undefined {
    const bytes = this.getDeviceBytes(id);
    return bytes && device.decode(bytes);
  }

  /** Deletes a device; refuses an external one (REG_ERR_EXTERNAL_DEVICE), REG_ERR_NOT_FOUND when there is none. */
  deleteDevice(id: string): void {
    this.db
      .transaction(() => {
        const row = this.stmt.external.get(id);
        if (!row) throw notFound(id);
        if (row.is_external) throw new RegistryError('REG_ERR_EXTERNAL_DEVICE', `device ${id} is external (shared in from another network): it cannot be deleted here`);
        this.stmt.delete.run(id);
      })
      .immediate();
  }

  getRoutes(id: string): Routes {
    const d = this.getDevice(id);
    if (!d) throw notFound(id);
    return routesOf(d);
  }

  /**
   * Replaces the enabled routes of a device with `routes` (Tailscale's
   * semantics: the list is the new whole; routes the device does not
   * advertise may be enabled ahead of time). Returns both lists after.
   */
  enableRoutes(id: string, routes: readonly string[], options: { checked?: boolean } = {}): Routes {
    // `checked`: the caller ran normaliseRoutes (the server does, in chunks, before the transaction).
    const enabled = options.checked ? [...routes] : normaliseRoutes(routes);
    return this.db
      .transaction(() => {
        const d = this.getDevice(id);
        if (!d) throw notFound(id);
        d.enabledRoutes = enabled;
        // Only the record changes: the Tailscale-only fields stay as they are.
        this.stmt.update.run(Buffer.from(device.encode(d)), id);
        return routesOf(d);
      })
      .immediate();
  }

  private writeDevice(d: GetDeviceResponse, extras?: TailscaleExtras): void {
    const hasExtras = extras !== undefined && Object.keys(extras).length > 0;
    this.stmt.put.run(d.id ?? '', d.isExternal ? 1 : 0, Buffer.from(device.encode(d)), extras?.nodeId ?? null, hasExtras ? JSON.stringify(extras) : null);
  }

  /** The id of the device named `idOrNodeId` (its id, or its Tailscale nodeId), or undefined. */
  resolveDeviceId(idOrNodeId: string): string | undefined {
    return this.stmt.resolve.get(idOrNodeId, idOrNodeId)?.id;
  }

  /** The Tailscale-only fields stored with a device (empty when none were imported). */
  getTailscaleExtras(id: string): TailscaleExtras {
    const text = this.stmt.extras.get(id)?.tailscale;
    return text ? (JSON.parse(text) as TailscaleExtras) : {};
  }

  /** Every device with its Tailscale-only fields, by id. */
  listDevicesWithExtras(): { device: GetDeviceResponse; extras: TailscaleExtras }[] {
    return this.stmt.allWithExtras.all().map(({ record, tailscale }) => ({ device: device.decode(record), extras: tailscale ? (JSON.parse(tailscale) as TailscaleExtras) : {} }));
  }

  /**
   * Adds or replaces devices in one transaction (all or nothing). With
   * `replaceAll`, devices not in `devices` are removed. Every device needs an
   * id; ids must be unique; routes must be canonical prefixes.
   */
  importDevices(devices: readonly GetDeviceResponse[], options: { replaceAll?: boolean; extras?: readonly (TailscaleExtras | undefined)[] } = {}): { added: number; replaced: number; removed: number } {
    const seen = new Set<string>();
    const nodeIds = new Map<string, string>();
    devices.forEach((d, i) => {
      const where = `device #${i + 1}${d.id ? ` (id ${d.id})` : ''}`;
      if (!d.id) throw new RegistryError('REG_ERR_IMPORT', `${where}: has no id`);
      if (seen.has(d.id)) throw new RegistryError('REG_ERR_IMPORT', `${where}: the id appears twice in the file`);
      seen.add(d.id);
      const nodeId = options.extras?.[i]?.nodeId;
      if (nodeId !== undefined) {
        if (nodeIds.has(nodeId)) throw new RegistryError('REG_ERR_IMPORT', `${where}: nodeId ${nodeId} is also device ${nodeIds.get(nodeId)}'s`);
        nodeIds.set(nodeId, d.id);
      }
      try {
        normaliseRoutes(d.enabledRoutes ?? [], 'enabled routes');
        normaliseRoutes(d.advertisedRoutes ?? [], 'advertised routes');
      } catch (err) {
        throw new RegistryError('REG_ERR_IMPORT', `${where}: ${(err as Error).message}`);
      }
    });
    const run = this.db.transaction(() => {
        let removed = 0;
        if (options.replaceAll) {
          for (const { record } of this.stmt.all.all()) {
            const id = device.decode(record).id ?? '';
            if (!seen.has(id)) removed += this.stmt.delete.run(id).changes;
          }
        }
        let added = 0;
        let replaced = 0;
        devices.forEach((d, i) => {
          if (this.stmt.external.get(d.id!)) replaced++;
          else added++;
          this.writeDevice(d, options.extras?.[i]);
        });
        return { added, replaced, removed };
      });
    try {
      return run.immediate();
    } catch (err) {
      // A nodeId that another device (not in the file) already has.
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new RegistryError('REG_ERR_IMPORT', `a nodeId in the file belongs to another device already: ${(err as Error).message}`);
      throw err;
    }
  }

  /** Every device, by id. */
  listDevices(): GetDeviceResponse[] {
    return this.stmt.all.all().map(({ record }) => device.decode(record));
  }

  deviceCount(): number {
    return this.stmt.count.get()!.n;
  }

  /** Makes an API key; the returned secret is shown once and never stored. */
  createApiKey(options: { description?: string; expiresMs?: number } = {}): { id: string; key: string } {
    const id = crypto.randomBytes(8).toString('hex');
    const secret = crypto.randomBytes(32).toString('base64url');
    this.db
      .prepare('INSERT INTO api_keys (id, hash, description, created_ms, expires_ms) VALUES (?, ?, ?, ?, ?)')
      .run(id, sha256(secret), options.description ?? '', this.nowMs(), options.expiresMs ?? null);
    return { id, key: `${API_KEY_PREFIX}_${id}_${secret}` };
  }

  /** Whether `key` is a current key; records its use. Constant-time in the secret. */
  verifyApiKey(key: string): { ok: true; id: string } | { ok: false; reason: string } {
    const m = KEY_PATTERN.exec(key);
    if (!m) return { ok: false, reason: 'not a registry API key (rpk_…)' };
    const row = this.stmt.key.get(m[1]);
    const hash = sha256(m[2]);
    // Compare even when the id is unknown, so timing says nothing about which ids exist.
    const match = crypto.timingSafeEqual(hash, row?.hash ?? Buffer.alloc(32));
    if (!row || !match) return { ok: false, reason: 'unknown API key' };
    if (row.revoked) return { ok: false, reason: 'API key revoked' };
    const now = this.nowMs();
    if (row.expires_ms !== null && now >= row.expires_ms) return { ok: false, reason: 'API key expired' };
    // Last use to the minute: a write per request would make every GET a write transaction.
    const last = this.lastUseWrittenMs.get(m[1]);
    if (last === undefined || now - last >= LAST_USE_RESOLUTION_MS) {
      this.stmt.keyUsed.run(now, m[1]);
      this.lastUseWrittenMs.set(m[1], now);
    }
    return { ok: true, id: m[1] };
  }

  listApiKeys(): ApiKeyInfo[] {
    const rows = this.db.prepare('SELECT id, description, created_ms, expires_ms, last_used_ms, revoked FROM api_keys ORDER BY created_ms, id').all() as {
      id: string;
      description: string;
      created_ms: number;
      expires_ms: number | null;
      last_used_ms: number | null;
      revoked: number;
    }[];
    return rows.map((r) => ({
      id: r.id,
      description: r.description,
      createdMs: r.created_ms,
      expiresMs: r.expires_ms ?? undefined,
      lastUsedMs: r.last_used_ms ?? undefined,
      revoked: r.revoked === 1,
    }));
  }

  /** Revokes a key by id; false when there is no such key. */
  revokeApiKey(id: string): boolean {
    return this.db.prepare('UPDATE api_keys SET revoked = 1 WHERE id = ?').run(id).changes > 0;
  }
}

function notFound(id: string): RegistryError {
  return new RegistryError('REG_ERR_NOT_FOUND', `device ${id} not found`);
}

function routesOf(d: GetDeviceResponse): Routes {
  return { enabledRoutes: d.enabledRoutes ?? [], advertisedRoutes: d.advertisedRoutes ?? [] };
}
