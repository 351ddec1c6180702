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
/** Longest slice of route checking between two turns of the event loop. */
export const SLICE_MS = 1;

/** An IPv4 address as 32 bits (a number; net.isIP has checked the text). */
function ipv4Value(ip: string): number {
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

/** An IPv6 address (net.isIP has checked it) as eight 16-bit groups, '::' and an embedded IPv4 tail expanded. */
function ipv6Groups(ip: string): number[] {
  let text = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = ipv4Value(v4[1]);
    text = `${text.slice(0, -v4[1].length)}${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const groups = tail === undefined ? headParts : [...headParts, ...new Array(8 - headParts.length - tailParts.length).fill('0'), ...tailParts];
  return groups.map((g) => parseInt(g, 16));
}

function formatIpv4(n: number): string {
  return [16777216, 65536, 256, 1].map((d) => String(Math.floor(n / d) % 256)).join('.');
}

function formatIpv6(values: number[]): string {
  const groups = values.map((g) => g.toString(16));
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
  // Plain numbers, no BigInt: a 1000-route body is checked in well under a millisecond per hundred.
  let canonical: string;
  if (family === 4) {
    const hostBits = 32 - bits;
    canonical = `${formatIpv4(hostBits === 32 ? 0 : Math.floor(ipv4Value(m[1]) / 2 ** hostBits) * 2 ** hostBits)}/${bits}`;
  } else {
    const masked = ipv6Groups(m[1]).map((g, i) => {
      const keep = bits - 16 * i; // bits of this group inside the prefix
      return keep >= 16 ? g : keep <= 0 ? 0 : g & (0xffff << (16 - keep)) & 0xffff;
    });
    canonical = `${formatIpv6(masked)}/${bits}`;
  }
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

/**
 * normaliseRoutes in slices: at most ROUTE_CHUNK routes or SLICE_MS of work,
 * then a turn of the event loop (setImmediate), so the requests that arrived
 * meanwhile are answered before the next slice.
 */
export async function normaliseRoutesInChunks(routes: readonly unknown[]): Promise<string[]> {
  if (routes.length > MAX_ROUTES_PER_DEVICE) throw tooMany(routes.length, 'routes');
  const out = new Set<string>();
  let i = 0;
  while (i < routes.length) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const sliceEnd = performance.now() + SLICE_MS;
    const stop = Math.min(routes.length, i + ROUTE_CHUNK);
    while (i < stop) {
      out.add(checkRoute(routes[i++]));
      if ((i & 15) === 0 && performance.now() > sliceEnd) break;
    }
  }
  return [...out];
}
