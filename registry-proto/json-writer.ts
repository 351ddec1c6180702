/**
 * A ProtoJSON writer compiled once per message type: a plan of its fields
 * (JSON key, kind, presence) walked directly over a message, instead of
 * protobufjs/ext/protojson's general reflective walk followed by a second
 * pass for our options (codec.ts shapeJson). Same output, about an order of
 * magnitude less work per message (docs/benchmarks.md); the equivalence is a
 * property test (test/registry-proto/json-writer.test.ts).
 *
 * It covers proto3 scalars, enums, nested messages, repeated fields, maps
 * and google.protobuf.Timestamp. A type that uses anything else (other
 * well-known types, extensions) gets no compiled writer, and codec.ts falls
 * back to the reflective path.
 */
import protobuf from 'protobufjs';
import { CodecError } from './errors';

export interface JsonWriteOptions {
  /** Also print fields without presence (scalars, repeated, maps) at their default values. */
  emitDefaults?: boolean;
  /** Print proto field names (`last_seen`) instead of lowerCamelCase (`lastSeen`). */
  protoNames?: boolean;
}

type Json = unknown;
type Value = (v: unknown) => Json;

interface FieldPlan {
  /** Property of the message object. */
  prop: string;
  jsonName: string;
  protoName: string;
  /** Converts one (non-repeated) value. */
  value: Value;
  /** Whether a singular value is at its default (implicit presence: not printed). */
  isDefault: (v: unknown) => boolean;
  /** JSON of the default, for emitDefaults; undefined for fields with presence. */
  defaultJson?: () => Json;
  repeated: boolean;
  map: boolean;
  /** Explicit presence (messages, proto3 optional, oneof members): printed whenever set. */
  presence: boolean;
}

export type CompiledWriter = (message: Record<string, unknown>, options: JsonWriteOptions) => Record<string, Json>;

const TIMESTAMP_MIN_S = -62_135_596_800;
const TIMESTAMP_MAX_S = 253_402_300_799;

/**
 * Shortest decimal that reads back as the same float32, as protoc, Go and buf
 * print floats: 12.3 (not 12.300000190734863), FLT_MAX as 3.4028235e+38 (it
 * rounds back to FLT_MAX; json-reader.ts accepts it), -0 kept as -0.
 */
export function shortestFloat(value: number): number {
  if (!Number.isFinite(value) || Math.fround(value) !== value || value === 0) return value;
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(value.toPrecision(digits));
    if (Math.fround(candidate) === value) return candidate;
  }
  return value;
}

/** Set when a writer printed -0, which JSON.stringify would turn into 0 (see stringifyJson). */
let negativeZeroWritten = false;
const signedZero = (v: number): number => {
  if (Object.is(v, -0)) negativeZeroWritten = true;
  return v;
};

/**
 * JSON text of a written message. JSON.stringify prints -0 as 0, losing the
 * sign ProtoJSON keeps (protoc and Go print -0); when a writer wrote a -0,
 * this prints the value itself, -0 included.
 */
export function stringifyJson(value: unknown, indent?: number, wroteNegativeZero = negativeZeroWritten): string {
  if (!wroteNegativeZero) return JSON.stringify(value, null, indent);
  const pad = indent ? ' '.repeat(indent) : '';
  const walk = (v: unknown, at: string): string => {
    if (typeof v === 'number') return Object.is(v, -0) ? '-0' : JSON.stringify(v);
    if (v === null || typeof v !== 'object') return JSON.stringify(v);
    const inner = at + pad;
    const nl = pad ? `\n${inner}` : '';
    const end = pad ? `\n${at}` : '';
    const sep = pad ? ': ' : ':';
    if (Array.isArray(v)) return v.length === 0 ? '[]' : `[${nl}${v.map((x) => walk(x, inner)).join(`,${nl}`)}${end}]`;
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    return entries.length === 0 ? '{}' : `{${nl}${entries.map(([k, x]) => `${JSON.stringify(k)}${sep}${walk(x, inner)}`).join(`,${nl}`)}${end}}`;
  };
  return walk(value, '');
}

/** The default of a float or double: 0, but not -0 (its sign is data, kept as protoc keeps it). */
const isZero = (v: unknown): boolean => v === 0 && !Object.is(v, -0);

const nonFinite = (v: number): Json => (Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity');

function scalarPlan(type: string): { value: Value; isDefault: (v: unknown) => boolean; defaultJson: () => Json } | undefined {
  switch (type) {
    case 'string':
      return { value: (v) => v, isDefault: (v) => v === '', defaultJson: () => '' };
    case 'bool':
      return { value: (v) => v, isDefault: (v) => v === false, defaultJson: () => false };
    case 'float':
      return { value: (v) => (Number.isFinite(v) ? signedZero(shortestFloat(v as number)) : nonFinite(v as number)), isDefault: isZero, defaultJson: () => 0 };
    case 'double':
      return { value: (v) => (Number.isFinite(v) ? signedZero(v as number) : nonFinite(v as number)), isDefault: isZero, defaultJson: () => 0 };
    case 'int32':
    case 'uint32':
    case 'sint32':
    case 'fixed32':
    case 'sfixed32':
      return { value: (v) => v, isDefault: (v) => v === 0, defaultJson: () => 0 };
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      // number, Long or string: always a decimal string in ProtoJSON
      return { value: (v) => String(v), isDefault: (v) => String(v) === '0', defaultJson: () => '0' };
    case 'bytes':
      return {
        value: (v) => (typeof v === 'string' ? v : Buffer.from(v as Uint8Array).toString('base64')),
        isDefault: (v) => (v as { length: number }).length === 0,
        defaultJson: () => '',
      };
    default:
      return undefined;
  }
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** RFC 3339 in UTC with 0, 3, 6 or 9 fractional digits, as the ProtoJSON spec asks. */
export function timestampJson(v: unknown): string {
  const t = v as { seconds?: unknown; nanos?: number };
  const seconds = Number(t.seconds ?? 0);
  const nanos = t.nanos ?? 0;
  if (!(seconds >= TIMESTAMP_MIN_S && seconds <= TIMESTAMP_MAX_S) || !(nanos >= 0 && nanos <= 999_999_999) || !Number.isInteger(nanos)) {
    throw new CodecError('REG_ERR_ENCODE', `google.protobuf.Timestamp out of range (seconds ${String(t.seconds)}, nanos ${nanos}): JSON has years 0001..9999 only`);
  }
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (nanos === 0) return `${base}Z`;
  if (nanos % 1_000_000 === 0) return `${base}.${pad(nanos / 1_000_000, 3)}Z`;
  if (nanos % 1_000 === 0) return `${base}.${pad(nanos / 1_000, 6)}Z`;
  return `${base}.${pad(nanos, 9)}Z`;
}

/** A type's writer, or null when it has none (needs the reflective path). */
const compiled = new WeakMap<protobuf.Type, CompiledWriter | null>();
/** Types whose writer is being made (recursive types refer to themselves). */
const inProgress = new Set<protobuf.Type>();

/** The compiled writer of `type`, or undefined when the type needs the reflective path. */
export function compiledWriter(type: protobuf.Type): CompiledWriter | undefined {
  if (compiled.has(type)) return compiled.get(type) ?? undefined;
  if (type.fullName.startsWith('.google.protobuf.')) {
    compiled.set(type, null); // a well-known type at the top has its own JSON form (a Timestamp is a string)
    return undefined;
  }
  inProgress.add(type);
  const plans: FieldPlan[] = [];
  for (const field of type.fieldsArray) {
    field.resolve();
    const value = valuePlan(field);
    if (!value) {
      inProgress.delete(type);
      compiled.set(type, null);
      return undefined;
    }
    const presence = !field.repeated && !(field instanceof protobuf.MapField) && (field.resolvedType instanceof protobuf.Type || field.partOf !== null);
    plans.push({
      prop: field.name,
      jsonName: field.jsonName,
      protoName: field.protoName ?? field.name,
      value: value.value,
      isDefault: value.isDefault,
      defaultJson: presence ? undefined : field instanceof protobuf.MapField ? () => ({}) : field.repeated ? () => [] : value.defaultJson,
      repeated: field.repeated,
      map: field instanceof protobuf.MapField,
      presence,
    });
  }
  const writer: CompiledWriter = (message, options) => {
    const out: Record<string, Json> = {};
    for (const p of plans) {
      const key = options.protoNames ? p.protoName : p.jsonName;
      const v = message[p.prop];
      if (p.map) {
        const entries = v && typeof v === 'object' ? Object.entries(v as Record<string, unknown>) : [];
        if (entries.length > 0) {
          const obj: Record<string, Json> = {};
          for (const [k, item] of entries) obj[k] = p.value(item);
          out[key] = obj;
        } else if (options.emitDefaults) out[key] = {};
      } else if (p.repeated) {
        const list = Array.isArray(v) ? v : [];
        if (list.length > 0) out[key] = list.map(p.value);
        else if (options.emitDefaults) out[key] = [];
      } else if (v !== undefined && v !== null && (p.presence || !p.isDefault(v))) {
        out[key] = p.value(v);
      } else if (options.emitDefaults && p.defaultJson) {
        out[key] = p.defaultJson();
      }
    }
    return out;
  };
  inProgress.delete(type);
  compiled.set(type, writer);
  return writer;

  function valuePlan(field: protobuf.Field): { value: Value; isDefault: (v: unknown) => boolean; defaultJson: () => Json } | undefined {
    const resolved = field.resolvedType;
    if (resolved instanceof protobuf.Enum) {
      const names = new Map<number, string>();
      for (const [name, n] of Object.entries(resolved.values)) if (!names.has(n)) names.set(n, name);
      return { value: (v) => names.get(v as number) ?? v, isDefault: (v) => v === 0, defaultJson: () => names.get(0) ?? 0 };
    }
    if (resolved instanceof protobuf.Type) {
      if (resolved.fullName === '.google.protobuf.Timestamp') return { value: timestampJson, isDefault: () => false, defaultJson: () => undefined };
      if (resolved.fullName.startsWith('.google.protobuf.')) return undefined; // other WKTs: their own JSON forms
      if (!inProgress.has(resolved) && compiledWriter(resolved) === undefined) return undefined;
      // Looked up at call time: a recursive type's writer exists by then.
      return {
        value: (v) => {
          const w = compiled.get(resolved);
          if (!w) throw new Error(`no compiled JSON writer for ${resolved.fullName}`);
          return w(v as Record<string, unknown>, currentOptions);
        },
        isDefault: () => false,
        defaultJson: () => undefined,
      };
    }
    return scalarPlan(field.type);
  }
}

// The options of the call in progress, for nested messages (writers are synchronous).
let currentOptions: JsonWriteOptions = {};

/** Writes `message` of `type` with a compiled writer; undefined when the type has none. */
export function writeJson(type: protobuf.Type, message: Record<string, unknown>, options: JsonWriteOptions): Record<string, Json> | undefined {
  const writer = compiledWriter(type);
  if (!writer) return undefined;
  const saved = currentOptions;
  currentOptions = options;
  negativeZeroWritten = false;
  try {
    return writer(message, options);
  } finally {
    currentOptions = saved;
  }
}
