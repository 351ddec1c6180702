/**
 * Tailscale's own JSON for a device (API v2), beside ProtoJSON (API v1).
 *
 * The two differ in ways a Tailscale client notices, all taken from the
 * Tailscale Go client (tailscale/tailscale client/tailscale/devices.go,
 * types Device, ClientConnectivity, DerpRegion) and the device object and
 * curl recipes of Tailscale's API docs (tailscale/tailscale api.md, "Fetch
 * the details for a device"):
 *
 * - every field is written, defaults too (`""`, `false`, `[]`), as Go's
 *   encoding/json writes a struct without `omitempty`; an unknown time
 *   (`created` of an external device) is `""`;
 * - `clientConnectivity.mappingVariesByDestIP` (ProtoJSON: `...DestIp`);
 * - in the latency map, `preferred` only when true (`json:"preferred,omitempty"`),
 *   `latencyMs` always;
 * - times as Go's time.Time marshals them (RFC 3339 with nanoseconds, trailing
 *   zeros dropped: `2024-11-07T17:22:03.456Z`);
 * - `?fields=default` (the default) leaves out `enabledRoutes`,
 *   `advertisedRoutes` and `clientConnectivity`; `all` (or a list naming
 *   `all`, e.g. `default,all`) writes them;
 * - Tailscale has fields the seed's schema lacks (`nodeId`, `tags`,
 *   `tailnetLockKey`, `tailnetLockError`): they are kept beside the record
 *   (TailscaleExtras) and written here, never added to registry.v1.
 */
import { RegistryError } from './errors';
import type { ClientConnectivity, GetDeviceResponse, TimestampValue } from './messages';

/** The Tailscale-only device fields the registry keeps (API v2 only). */
export interface TailscaleExtras {
  nodeId?: string;
  tags?: string[];
  tailnetLockKey?: string;
  tailnetLockError?: string;
}

const EXTRA_STRINGS = ['nodeId', 'tailnetLockKey', 'tailnetLockError'] as const;
export const TAILSCALE_EXTRA_FIELDS = [...EXTRA_STRINGS, 'tags'] as const;

export type FieldSet = 'default' | 'all';

/** `?fields=`: `default` or `all`, or a comma list of them (any `all` wins, as Tailscale documents). */
export function parseFieldSet(value: unknown): FieldSet {
  if (value === undefined || value === '') return 'default';
  const items = (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(',')).map((s) => s.trim());
  const bad = items.find((s) => s !== 'all' && s !== 'default');
  if (bad !== undefined) throw new RegistryError('REG_ERR_BAD_REQUEST', `unknown fields option "${bad}": use fields=default or fields=all`);
  return items.includes('all') ? 'all' : 'default';
}

/** A time as Go's time.Time marshals it in UTC (RFC 3339, nanoseconds without trailing zeros); `""` when unset. */
export function goTime(t: TimestampValue | null | undefined): string {
  if (!t) return '';
  const seconds = Number(t.seconds ?? 0);
  const nanos = t.nanos ?? 0;
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (!nanos) return `${base}Z`;
  return `${base}.${String(nanos).padStart(9, '0').replace(/0+$/, '')}Z`;
}

function connectivityJson(c: ClientConnectivity | null | undefined): Record<string, unknown> {
  const latency: Record<string, unknown> = {};
  for (const [region, l] of Object.entries(c?.latency ?? {})) {
    latency[region] = l?.preferred ? { preferred: true, latencyMs: shortest(l.latencyMs ?? 0) } : { latencyMs: shortest(l?.latencyMs ?? 0) };
  }
  const s = c?.clientSupports ?? {};
  return {
    endpoints: c?.endpoints ?? [],
    derp: c?.derp ?? '',
    mappingVariesByDestIP: c?.mappingVariesByDestIp ?? false,
    latency,
    clientSupports: { hairPinning: s.hairPinning ?? false, ipv6: s.ipv6 ?? false, pcp: s.pcp ?? false, pmp: s.pmp ?? false, udp: s.udp ?? false, upnp: s.upnp ?? false },
  };
}

/** Shortest decimal of a float32 latency (31.32381, not 31.323810577392578). */
function shortest(v: number): number {
  if (!Number.isFinite(v)) return 0; // Go's encoding/json cannot write NaN or Inf
  for (let digits = 1; digits <= 9; digits++) {
    const c = Number(v.toPrecision(digits));
    if (Math.fround(c) === Math.fround(v)) return c;
  }
  return v;
}

/** A device as Tailscale's API v2 writes it. */
export function tailscaleDeviceJson(d: GetDeviceResponse, extras: TailscaleExtras | undefined, fields: FieldSet): Record<string, unknown> {
  const out: Record<string, unknown> = {
    addresses: d.addresses ?? [],
    id: d.id ?? '',
    nodeId: extras?.nodeId ?? '',
    user: d.user ?? '',
    name: d.name ?? '',
    hostname: d.hostname ?? '',
    clientVersion: d.clientVersion ?? '',
    updateAvailable: d.updateAvailable ?? false,
    os: d.os ?? '',
    tags: extras?.tags ?? [],
    created: goTime(d.created),
    lastSeen: goTime(d.lastSeen),
    keyExpiryDisabled: d.keyExpiryDisabled ?? false,
    expires: goTime(d.expires),
    authorized: d.authorized ?? false,
    isExternal: d.isExternal ?? false,
    machineKey: d.machineKey ?? '',
    nodeKey: d.nodeKey ?? '',
    blocksIncomingConnections: d.blocksIncomingConnections ?? false,
    tailnetLockKey: extras?.tailnetLockKey ?? '',
    tailnetLockError: extras?.tailnetLockError ?? '',
  };
  if (fields === 'all') {
    out.enabledRoutes = d.enabledRoutes ?? [];
    out.advertisedRoutes = d.advertisedRoutes ?? [];
    out.clientConnectivity = connectivityJson(d.clientConnectivity);
  }
  return out;
}

/** The routes answer of API v2 (GET and POST .../routes): both lists, always present. */
export function tailscaleRoutesJson(r: { enabledRoutes?: string[] | null; advertisedRoutes?: string[] | null }): Record<string, unknown> {
  return { advertisedRoutes: r.advertisedRoutes ?? [], enabledRoutes: r.enabledRoutes ?? [] };
}

/**
 * Splits a device in Tailscale's JSON into its ProtoJSON part (for the codec)
 * and the Tailscale-only fields (checked here). Throws RegistryError
 * REG_ERR_IMPORT naming the field when an extra has the wrong type.
 */
export function splitTailscaleDevice(device: unknown): { protoJson: unknown; extras: TailscaleExtras } {
  if (!device || typeof device !== 'object' || Array.isArray(device)) return { protoJson: device, extras: {} };
  const d = { ...(device as Record<string, unknown>) };
  const extras: TailscaleExtras = {};
  for (const k of EXTRA_STRINGS) {
    if (!(k in d)) continue;
    const v = d[k];
    delete d[k];
    if (v === null || v === '') continue;
    if (typeof v !== 'string') throw new RegistryError('REG_ERR_IMPORT', `${k}: expected a string, not ${JSON.stringify(v)}`);
    extras[k] = v;
  }
  if ('tags' in d) {
    const v = d.tags;
    delete d.tags;
    if (v !== null) {
      if (!Array.isArray(v) || v.some((t) => typeof t !== 'string')) throw new RegistryError('REG_ERR_IMPORT', `tags: expected an array of strings, not ${JSON.stringify(v)}`);
      if (v.length > 0) extras.tags = v as string[];
    }
  }
  for (const k of ['created', 'lastSeen', 'expires']) if (d[k] === '') delete d[k];
  const cc = d.clientConnectivity as Record<string, unknown> | undefined;
  if (cc && typeof cc === 'object' && 'mappingVariesByDestIP' in cc) {
    const { mappingVariesByDestIP, ...rest } = cc;
    d.clientConnectivity = { ...rest, mappingVariesByDestIp: mappingVariesByDestIP };
  }
  return { protoJson: d, extras };
}
