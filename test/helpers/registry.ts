/**
 * Test helpers for the device-registry tooling: a full made-up device record,
 * fast-check arbitraries for any message type of the schema (built from the
 * reflected type, so a field added to the .proto is covered without touching
 * the tests), and a canonical form to compare decoded messages by value
 * (map order, Long vs number and absent vs default do not matter; -0 and NaN do).
 */
import fc from 'fast-check';
import protobuf from 'protobufjs';
import type { GetDeviceResponse } from '../../registry-proto/messages';

/** A device with every field set, connectivity and a latency map of three regions. */
export function sampleDevice(id = '27'): GetDeviceResponse {
  return {
    addresses: ['100.64.0.27', 'fd7a:115c:a1e0::1b'],
    id,
    user: 'ada@example.test',
    name: 'bench-rig-east',
    hostname: 'bench-rig-east',
    clientVersion: '1.62.1-t2d4f1e6c',
    updateAvailable: true,
    os: 'linux',
    created: { seconds: 1_700_000_000, nanos: 0 },
    lastSeen: { seconds: 1_731_000_123, nanos: 456_000_000 },
    keyExpiryDisabled: false,
    expires: { seconds: 1_746_000_000, nanos: 0 },
    authorized: true,
    isExternal: false,
    machineKey: 'mkey:4f2c9d1e0b7a65388c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b',
    nodeKey: 'nodekey:9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d',
    blocksIncomingConnections: false,
    enabledRoutes: ['10.20.0.0/16'],
    advertisedRoutes: ['10.20.0.0/16', '192.168.7.0/24'],
    clientConnectivity: {
      endpoints: ['198.51.100.7:41641', '[2001:db8::7]:41641'],
      derp: '127.3.3.40:7',
      mappingVariesByDestIp: false,
      latency: {
        'Frankfurt': { latencyMs: 12.5, preferred: true },
        'New York City': { latencyMs: 81.25, preferred: false },
        'Singapore': { latencyMs: 190.75, preferred: false },
      },
      clientSupports: { hairPinning: false, ipv6: true, pcp: false, pmp: true, udp: true, upnp: false },
    },
  };
}

const MIN_TIMESTAMP_S = -62_135_596_800; // 0001-01-01T00:00:00Z
const MAX_TIMESTAMP_S = 253_402_300_799; // 9999-12-31T23:59:59Z

function scalarArbitrary(type: string): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return fc.string({ unit: 'binary', maxLength: 12 });
    case 'bool':
      return fc.boolean();
    case 'float':
      // float32 values with NaN, ±Infinity, -0 (kept in every encoding) and FLT_MAX.
      return fc.float();
    case 'double':
      return fc.double();
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return fc.integer();
    case 'int64':
    case 'sint64':
    case 'sfixed64':
      return fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });
    default:
      throw new Error(`no arbitrary for ${type}: extend test/helpers/registry.ts`);
  }
}

const arbitraries = new Map<protobuf.Type, fc.Arbitrary<Record<string, unknown>>>();

/** Random plain messages of `type` (static-class field names); every field is optional. */
export function messageArbitrary(type: protobuf.Type, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const cached = arbitraries.get(type);
  if (cached) return cached;
  if (type.fullName === '.google.protobuf.Timestamp') {
    const ts = fc.record({ seconds: fc.integer({ min: MIN_TIMESTAMP_S, max: MAX_TIMESTAMP_S }), nanos: fc.integer({ min: 0, max: 999_999_999 }) });
    arbitraries.set(type, ts);
    return ts;
  }
  const shape: Record<string, fc.Arbitrary<unknown>> = {};
  for (const field of type.fieldsArray) {
    field.resolve();
    const one = field.resolvedType instanceof protobuf.Type ? messageArbitrary(field.resolvedType, depth + 1) : scalarArbitrary(field.type);
    // A map key `__proto__` is refused in every encoding (bad-input.test.ts), so it is no round-trip case.
    if (field instanceof protobuf.MapField) shape[field.name] = fc.dictionary((scalarArbitrary(field.keyType) as fc.Arbitrary<string>).filter((k) => k !== '__proto__'), one, { maxKeys: 4 });
    else if (field.repeated) shape[field.name] = fc.array(one, { maxLength: 4 });
    else shape[field.name] = one;
  }
  const arb = fc.record(shape, { requiredKeys: [] });
  arbitraries.set(type, arb);
  return arb;
}

/**
 * A message as plain data for comparing by value: scalar defaults and empty
 * lists or maps dropped (proto3 does not tell them from absent), message
 * fields kept even when empty (they have presence), 64-bit integers as
 * decimal strings, NaN and -0 spelled out so that a lost sign fails.
 */
export function canonical(type: protobuf.Type, message: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const source = message as Record<string, unknown>;
  for (const field of type.fieldsArray) {
    const value = source[field.name];
    if (value === undefined || value === null) continue;
    const one = (v: unknown): unknown => {
      if (field.resolvedType instanceof protobuf.Type) return canonical(field.resolvedType, v as object);
      if (/64$/.test(field.type)) return String(v); // number or Long
      if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : Object.is(v, -0) ? '-0' : v;
      if (v !== null && typeof v === 'object') return String(v); // Long
      return v;
    };
    if (field instanceof protobuf.MapField) {
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.length > 0) out[field.name] = Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, one(v)]));
    } else if (field.repeated) {
      if ((value as unknown[]).length > 0) out[field.name] = (value as unknown[]).map(one);
    } else {
      const v = one(value);
      if (!(field.resolvedType instanceof protobuf.Type) && (v === 0 || v === false || v === '' || v === '0')) continue;
      out[field.name] = v;
    }
  }
  return out;
}
