/**
 * Subnet routes as the registry stores them: IPv4 or IPv6 prefixes in
 * canonical form (`10.0.0.0/8`, `fd00:1::/64`), host bits zero, as Tailscale
 * requires. A route with host bits set is refused with the canonical form in
 * the message, rather than silently widened or narrowed.
 *
 * Limits: a device has at most MAX_ROUTES_PER_DEVICE enabled (and
 * advertised) routes, so the work of one request is bounded; the server checks
 * a request's routes in chunks of ROUTE_CHUNK, giving the event loop back
 * between chunks (normaliseRoutesInChunks), so other requests are answered
 * while a large body is checked.
 */
import net from 'node:net';
import { RegistryError } from '../errors';

/** Most routes a device may have enabled or advertised (Tailscale documents none; a subnet router has tens). */
export const MAX_ROUTES_PER_DEVICE = 1000;
/** Routes checked between two turns of the event loop. */
export const ROUTE_CHUNK = 100;

function ipv4ToBigInt(ip: string): bigint {
  return ip.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function ipv6ToBigInt(ip: string): bigint {
  // Expand '::' and an embedded IPv4 tail into eight 16-bit groups.
  let text = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = ipv4ToBigInt(v4[1]);
    text = `${text.slice(0, -v4[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const groups = tail === undefined ? headParts : [...headParts, ...new Array(8 - headParts.length - tailParts.length).fill('0'), ...tailParts];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function formatIpv4(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join('.');
}

function formatIpv6(n: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  // RFC 5952: compress the longest run (length >= 2) of zero groups.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

/** The route if it is a canonical prefix; throws REG_ERR_INVALID_ROUTE saying what is wrong otherwise. */
export function checkRoute(route: unknown): string {
  if (typeof route !== 'string') throw new RegistryError('REG_ERR_INVALID_ROUTE', `a route is a string like "10.0.0.0/8", not ${JSON.stringify(route)}`);
  const m = /^([^/]+)\/(\d{1,3})$/.exec(route);
  const family = m ? net.isIP(m[1]) : 0;
  if (!m || family === 0) throw new RegistryError('REG_ERR_INVALID_ROUTE', `route "${route}" is not an IP prefix (address/bits, e.g. "10.0.0.0/8" or "fd00::/64")`);
  const bits = Number(m[2]);
  const width = family === 4 ? 32 : 128;
  if (bits > width) throw new RegistryError('REG_ERR_INVALID_ROUTE', `route "${route}": an IPv${family} prefix has at most ${width} bits`);
  if (family === 4) {
    // 32-bit arithmetic (no BigInt): the common case, and the one a large body is made of.
    const value = m[1].split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
    const hostBits = 32 - bits;
    const network = hostBits === 32 ? 0 : Math.floor(value / 2 ** hostBits) * 2 ** hostBits;
    const canonical4 = `${formatIpv4(BigInt(network))}/${bits}`;
    if (canonical4 !== route) throw new RegistryError('REG_ERR_INVALID_ROUTE', `route "${route}" is not in canonical form: did you mean "${canonical4}"?`);
    return route;
  }
  const value = ipv6ToBigInt(m[1]);
  const mask = ((1n << BigInt(width)) - 1n) ^ ((1n << BigInt(width - bits)) - 1n);
  const canonical = `${family === 4 ? formatIpv4(value & mask) : formatIpv6(value & mask)}/${bits}`;
  if (canonical !== route) throw new RegistryError('REG_ERR_INVALID_ROUTE', `route "${route}" is not in canonical form: did you mean "${canonical}"?`);
  return route;
}

function tooMany(count: number, what: string): RegistryError {
  return new RegistryError('REG_ERR_TOO_MANY_ROUTES', `${count} ${what}: a device has at most ${MAX_ROUTES_PER_DEVICE}; enable a covering prefix instead (e.g. 10.0.0.0/8 for many 10.x subnets)`);
}

/** Checks every route and drops repeats, keeping first-seen order; at most MAX_ROUTES_PER_DEVICE. */
export function normaliseRoutes(routes: readonly unknown[], what = 'routes'): string[] {
  if (routes.length > MAX_ROUTES_PER_DEVICE) throw tooMany(routes.length, what);
  return [...new Set(routes.map(checkRoute))];
}

/** normaliseRoutes in chunks of ROUTE_CHUNK with a turn of the event loop between them. */
export async function normaliseRoutesInChunks(routes: readonly unknown[]): Promise<string[]> {
  if (routes.length > MAX_ROUTES_PER_DEVICE) throw tooMany(routes.length, 'routes');
  const out = new Set<string>();
  for (let i = 0; i < routes.length; i += ROUTE_CHUNK) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    for (const r of routes.slice(i, i + ROUTE_CHUNK)) out.add(checkRoute(r));
  }
  return [...out];
}
