/**
 * Subnet routes as the registry stores them: IPv4 or IPv6 prefixes in
 * canonical form (`10.0.0.0/8`, `fd00:1::/64`), host bits zero, as Tailscale
 * requires. A route with host bits set is refused with the canonical form in
 * the message, rather than silently widened or narrowed.
 */
import net from 'node:net';
import { RegistryError } from '../errors';

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
  const value = family === 4 ? ipv4ToBigInt(m[1]) : ipv6ToBigInt(m[1]);
  const mask = ((1n << BigInt(width)) - 1n) ^ ((1n << BigInt(width - bits)) - 1n);
  const canonical = `${family === 4 ? formatIpv4(value & mask) : formatIpv6(value & mask)}/${bits}`;
  if (canonical !== route) throw new RegistryError('REG_ERR_INVALID_ROUTE', `route "${route}" is not in canonical form: did you mean "${canonical}"?`);
  return route;
}

/** Checks every route and drops repeats, keeping first-seen order. */
export function normaliseRoutes(routes: readonly unknown[]): string[] {
  return [...new Set(routes.map(checkRoute))];
}
