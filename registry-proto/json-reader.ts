/**
 * A ProtoJSON reader compiled once per message type, the counterpart of
 * json-writer.ts: a table of the type's JSON keys (lowerCamelCase and proto
 * names) to small converters, walked directly over the parsed JSON into an
 * instance of the pbjs static class. It replaces protobufjs/ext/protojson's
 * reflective walk followed by a binary encode, wire check and decode (about
 * twenty times the work; docs/benchmarks.md). The rules are the ProtoJSON
 * spec's (https://protobuf.dev/programming-guides/json/) as protojson.js
 * implements them (readMessage, readScalar, parseFloat32Or64, the Timestamp
 * reader), with these differences on purpose:
 *
 * - a float written as FLT_MAX rounded to 9 digits (`3.4028235e+38`, as Go,
 *   buf and protoc print it) reads as FLT_MAX; only values that round to
 *   infinity as a float32 are out of range;
 * - `-0` is kept (a float or double field holding -0 is set, not dropped as
 *   the default);
 * - fromJsonText() refuses an object with the same key twice, naming the key
 *   (JSON.parse would keep the last one silently).
 *
 * Covered: proto3 scalars but 64-bit integers, bytes and enums; nested
 * messages, repeated fields, string-keyed maps, google.protobuf.Timestamp.
 * A type that uses anything else gets no compiled reader (codec.ts falls
 * back to the reflective path). The equivalence with the reflective path is
 * a property test (test/registry-proto/json-reader.test.ts).
 */
import protobuf from 'protobufjs';
import { CodecError } from './errors';
import { staticClassOf } from './messages';
import { PROTO_KEY_REFUSED } from './wire-check';

export interface ReadContext {
  ignoreUnknownFields: boolean;
  /**
   * Check each string for lone surrogates (no UTF-8 form). False when the
   * JSON text was checked whole (mayHoldLoneSurrogate): one scan instead of
   * one call per string.
   */
  checkStrings: boolean;
  /** Object keys seen (message fields and map entries), to detect duplicate keys in the text. */
  keys: number;
}

export type CompiledReader = (json: unknown, ctx: ReadContext, depth: number) => Record<string, unknown>;

const NUMERIC = /^[+-]?(?:[0-9]*\.[0-9]+|[0-9]+\.?)(?:[eE][+-]?[0-9]+)?$/;
const TIMESTAMP_MIN_S = -62_135_596_800;
const TIMESTAMP_MAX_S = 253_402_300_799;
const MAX_DEPTH = 100;

/** String.prototype.isWellFormed (Node 20; not in this TypeScript lib): no lone surrogates. */
const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

function fail(name: string, value: unknown, what: string): never {
  throw new CodecError('REG_ERR_JSON', `invalid JSON: ${name}: ${what}: ${JSON.stringify(value)}`, { field: name });
}

type Convert = (value: unknown, ctx: ReadContext, depth: number) => unknown;

function readFloat(name: string, isFloat: boolean): Convert {
  return (value) => {
    let num: number;
    if (typeof value === 'number') num = value;
    else if (typeof value === 'string') {
      if (value === 'NaN') return NaN;
      if (value === 'Infinity') return Infinity;
      if (value === '-Infinity') return -Infinity;
      if (!NUMERIC.test(value)) fail(name, value, 'invalid number');
      num = Number(value);
      if (!Number.isFinite(num)) fail(name, value, 'invalid number');
    } else return fail(name, value, 'expected number');
    // Rounding decides: 3.4028235e+38 is FLT_MAX printed with 9 digits.
    if (!isFloat) return num;
    // A float holds what a float32 holds (as after a binary round trip).
    const f = Math.fround(num);
    if (!Number.isFinite(f)) fail(name, value, 'out of range for float');
    return f;
  };
}

const INT_RANGE: Record<string, [number, number]> = {
  int32: [-2147483648, 2147483647],
  sint32: [-2147483648, 2147483647],
  sfixed32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
  fixed32: [0, 4294967295],
};

function readInt32(name: string, type: string): Convert {
  const [min, max] = INT_RANGE[type];
  return (value) => {
    let num: number;
    if (typeof value === 'number') num = value;
    else if (typeof value === 'string' && NUMERIC.test(value)) num = Number(value);
    else return fail(name, value, typeof value === 'string' ? 'invalid integer' : 'expected integer (number or string)');
    if (!Number.isInteger(num)) fail(name, value, 'not an integer');
    if (num < min || num > max) fail(name, value, `out of range for ${type}`);
    return num === 0 ? 0 : num;
  };
}

function readString(name: string): Convert {
  return (value, ctx) => {
    if (typeof value !== 'string') fail(name, value, 'expected string');
    // proto3 strings are UTF-8: a lone surrogate has no UTF-8 form.
    if (ctx.checkStrings && !wellFormed(value)) fail(name, value, 'unpaired surrogate');
    return value;
  };
}

/**
 * Whether a JSON text can hold a string with a lone surrogate: only as a raw
 * lone surrogate in the text, or written as a \u escape.
 */
export function mayHoldLoneSurrogate(text: string): boolean {
  return text.includes('\\u') || !wellFormed(text);
}

function readBool(name: string): Convert {
  return (value) => (typeof value === 'boolean' ? value : fail(name, value, 'expected boolean'));
}

function daysInMonth(year: number, month: number): number {
  return month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Two or four decimal digits at `at` (-1 if any is not a digit). */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * RFC 3339 (offsets allowed, 0..9 fractional digits) to a Timestamp in
 * 0001..9999: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, read by position
 * (a regular expression with nine captures cost more than the rest of a
 * device record).
 */
export function readTimestamp(value: unknown, name = 'google.protobuf.Timestamp'): { seconds: number; nanos: number } {
  if (typeof value !== 'string') fail(name, value, 'expected timestamp string');
  const s = value;
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  if (s.length < 20 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
    fail(name, value, 'invalid timestamp');
  }
  let i = 19;
  let nanos = 0;
  if (s.charCodeAt(i) === 46) {
    const start = ++i;
    while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
    const n = i - start;
    if (n < 1 || n > 9) fail(name, value, 'invalid timestamp');
    nanos = digits(s, start, n) * 10 ** (9 - n);
  }
  let offsetS = 0;
  const zone = s.charCodeAt(i);
  if (zone === 90 && i + 1 === s.length) {
    // Z: UTC
  } else if ((zone === 43 || zone === 45) && i + 6 === s.length && s.charCodeAt(i + 3) === 58) {
    const oh = digits(s, i + 1, 2);
    const om = digits(s, i + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) fail(name, value, 'invalid timestamp');
    offsetS = (zone === 45 ? -1 : 1) * (oh * 3600 + om * 60);
  } else fail(name, value, 'invalid timestamp');
  if (day > daysInMonth(year, month)) fail(name, value, 'invalid timestamp date');
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offsetS;
  if (seconds < TIMESTAMP_MIN_S || seconds > TIMESTAMP_MAX_S) fail(name, value, 'timestamp out of range');
  return { seconds, nanos };
}

/** Counts the keys of a skipped value (an unknown field under ignoreUnknownFields), for the duplicate-key check. */
function countKeys(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countKeys(v), 0);
  let n = 0;
  for (const k in value) n += 1 + countKeys((value as Record<string, unknown>)[k]);
  return n;
}

interface FieldPlan {
  prop: string;
  /** Proto name: both spellings of one field in one object are refused. */
  id: number;
  read: Convert;
  kind: 'single' | 'repeated' | 'map';
  /** Implicit presence: the default value is not set (the field stays absent). */
  isDefault?: (v: unknown) => boolean;
}

const compiled = new WeakMap<protobuf.Type, CompiledReader | null>();
const inProgress = new Set<protobuf.Type>();

/** The compiled reader of `type`, or undefined when it needs the reflective path. */
export function compiledReader(type: protobuf.Type): CompiledReader | undefined {
  if (compiled.has(type)) return compiled.get(type) ?? undefined;
  const cls = staticClassOf(type) as unknown as (new () => Record<string, unknown>) | undefined;
  if (!cls || type.fullName.startsWith('.google.protobuf.')) {
    compiled.set(type, null);
    return undefined;
  }
  inProgress.add(type);
  const typeName = type.fullName.slice(1);
  const byKey = new Map<string, FieldPlan>();
  let ok = true;
  type.fieldsArray.forEach((field, id) => {
    field.resolve();
    const name = `${typeName}.${field.jsonName}`;
    const one = singleReader(field, name);
    if (!one || (field instanceof protobuf.MapField && field.keyType !== 'string') || field.partOf) {
      ok = false;
      return;
    }
    const kind = field instanceof protobuf.MapField ? 'map' : field.repeated ? 'repeated' : 'single';
    const scalarDefault = !(field.resolvedType instanceof protobuf.Type) && kind === 'single' ? defaultTest(field.type) : undefined;
    let read: Convert;
    if (kind === 'repeated') {
      read = (value, ctx, depth) => {
        if (!Array.isArray(value)) fail(name, value, 'expected array');
        const out = new Array(value.length);
        for (let i = 0; i < value.length; i++) {
          if (value[i] === null) fail(name, null, 'null element');
          out[i] = one.read(value[i], ctx, depth);
        }
        return out;
      };
    } else if (kind === 'map') {
      read = (value, ctx, depth) => {
        if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(name, value, 'expected object for map');
        const out: Record<string, unknown> = {};
        const obj = value as Record<string, unknown>;
        for (const k in obj) {
          ctx.keys++;
          if (k === '__proto__') throw new CodecError('REG_ERR_JSON', `invalid JSON for ${typeName}: ${field.protoName ?? field.name}[].key: ${PROTO_KEY_REFUSED}`, { field: `${field.protoName ?? field.name}[].key` });
          if (ctx.checkStrings && !wellFormed(k)) fail(name, k, 'unpaired surrogate in map key');
          out[k] = one.read(obj[k], ctx, depth);
        }
        return out;
      };
    } else read = one.read;
    const plan: FieldPlan = { prop: field.name, id, read, kind, isDefault: scalarDefault };
    byKey.set(field.jsonName, plan);
    const protoName = field.protoName ?? field.name;
    if (protoName !== field.jsonName) byKey.set(protoName, plan);
  });
  inProgress.delete(type);
  if (!ok) {
    compiled.set(type, null);
    return undefined;
  }
  const plans = byKey;
  const generated = plans.size > 0 && type.fieldsArray.length <= 30 ? generateReader(type, cls, plans) : undefined;
  if (generated) {
    compiled.set(type, generated);
    return generated;
  }
  const reader: CompiledReader = (json, ctx, depth) => {
    if (depth > MAX_DEPTH) throw new CodecError('REG_ERR_JSON', `invalid JSON: ${typeName}: nesting deeper than ${MAX_DEPTH}`);
    if (json === null || typeof json !== 'object' || Array.isArray(json)) fail(typeName, json, 'expected object');
    const message = new cls();
    const obj = json as Record<string, unknown>;
    let seen = 0; // bit per field index (fields beyond 31 fall back to a Set)
    let seenMore: Set<number> | undefined;
    for (const key in obj) {
      ctx.keys++;
      const plan = plans.get(key);
      const value = obj[key];
      if (plan === undefined) {
        if (ctx.ignoreUnknownFields) {
          ctx.keys += countKeys(value);
          continue;
        }
        fail(typeName, key, 'unknown field');
      }
      if (plan.id < 31) {
        if (seen & (1 << plan.id)) fail(typeName, key, 'duplicate field');
        seen |= 1 << plan.id;
      } else {
        seenMore ??= new Set();
        if (seenMore.has(plan.id)) fail(typeName, key, 'duplicate field');
        seenMore.add(plan.id);
      }
      if (value === null) continue; // null: the default
      const v = plan.read(value, ctx, depth + 1);
      if (plan.isDefault?.(v)) continue;
      message[plan.prop] = v;
    }
    return message;
  };
  compiled.set(type, reader);
  return reader;
}

/**
 * The reader's loop generated as JavaScript (`new Function`): a switch over
 * the type's JSON keys with the property names written out, so each store is
 * a named property store, as in pbjs's static code; converters stay closures.
 */
function generateReader(type: protobuf.Type, cls: new () => Record<string, unknown>, plans: Map<string, FieldPlan>): CompiledReader {
  const typeName = type.fullName.slice(1);
  const deps: unknown[] = [cls];
  const dep = (x: unknown): string => `d[${deps.push(x) - 1}]`;
  const byPlan = new Map<FieldPlan, string[]>();
  for (const [key, plan] of plans) byPlan.set(plan, [...(byPlan.get(plan) ?? []), key]);
  const cases: string[] = [];
  for (const [plan, keys] of byPlan) {
    const field = type.fieldsArray[plan.id];
    const scalarDefault =
      plan.kind !== 'single' || field.resolvedType instanceof protobuf.Type ? 'false' : field.type === 'string' ? 'v === ""' : field.type === 'bool' ? 'v === false' : '(v === 0 && !Object.is(v, -0))';
    cases.push(`${keys.map((k) => `case ${JSON.stringify(k)}:`).join(' ')}
      if (seen & ${1 << plan.id}) fail(${JSON.stringify(typeName)}, key, "duplicate field");
      seen |= ${1 << plan.id};
      if (value === null) continue;
      v = ${dep(plan.read)}(value, ctx, depth + 1);
      if (!(${scalarDefault})) m[${JSON.stringify(plan.prop)}] = v;
      continue;`);
  }
  const source = `return function read_${type.name}(json, ctx, depth) {
    if (depth > ${MAX_DEPTH}) tooDeep(${JSON.stringify(typeName)});
    if (json === null || typeof json !== "object" || Array.isArray(json)) fail(${JSON.stringify(typeName)}, json, "expected object");
    var m = new d[0](), seen = 0, n = 0, v, value;
    for (var key in json) {
      n++;
      value = json[key];
      switch (key) {
        ${cases.join('\n')}
      }
      if (!ctx.ignoreUnknownFields) fail(${JSON.stringify(typeName)}, key, "unknown field");
      n += countKeys(value);
    }
    ctx.keys += n;
    return m;
  };`;
  const tooDeep = (name: string) => {
    throw new CodecError('REG_ERR_JSON', `invalid JSON: ${name}: nesting deeper than ${MAX_DEPTH}`);
  };
  return new Function('d', 'fail', 'tooDeep', 'countKeys', source)(deps, fail, tooDeep, countKeys) as CompiledReader;
}

function defaultTest(type: string): ((v: unknown) => boolean) | undefined {
  switch (type) {
    case 'string':
      return (v) => v === '';
    case 'bool':
      return (v) => v === false;
    default:
      // numbers: 0 is the default, -0 is not (its sign is kept)
      return (v) => v === 0 && !Object.is(v, -0);
  }
}

function singleReader(field: protobuf.Field, name: string): { read: Convert } | undefined {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) return undefined;
  if (resolved instanceof protobuf.Type) {
    if (resolved.fullName === '.google.protobuf.Timestamp') {
      const cls = staticClassOf(resolved) as unknown as new () => Record<string, unknown>;
      return {
        read: (value) => {
          const { seconds, nanos } = readTimestamp(value);
          const t = new cls();
          if (seconds !== 0) t.seconds = seconds;
          if (nanos !== 0) t.nanos = nanos;
          return t;
        },
      };
    }
    if (resolved.fullName.startsWith('.google.protobuf.')) return undefined;
    if (!inProgress.has(resolved) && compiledReader(resolved) === undefined) return undefined;
    return {
      read: (value, ctx, depth) => {
        const r = compiled.get(resolved);
        if (!r) throw new Error(`no compiled JSON reader for ${resolved.fullName}`);
        return r(value, ctx, depth);
      },
    };
  }
  switch (field.type) {
    case 'string':
      return { read: readString(name) };
    case 'bool':
      return { read: readBool(name) };
    case 'float':
      return { read: readFloat(name, true) };
    case 'double':
      return { read: readFloat(name, false) };
    case 'int32':
    case 'sint32':
    case 'sfixed32':
    case 'uint32':
    case 'fixed32':
      return { read: readInt32(name, field.type) };
    default:
      return undefined; // 64-bit integers and bytes: the reflective path
  }
}

/**
 * How many object keys a JSON text holds (strings followed by a colon). The
 * text has been through JSON.parse, so every quote outside a string opens
 * one. Compared with the keys the reader met: fewer met means JSON.parse
 * merged a key given twice.
 */
export function countJsonKeys(text: string): number {
  // A key is a closing quote, optional white space and a colon; a quote inside
  // a string is escaped (\"), and only then can the pattern occur inside one:
  // texts with an escaped quote take the exact scan.
  if (text.includes('\\"')) return countJsonKeysSlow(text);
  KEY_END.lastIndex = 0;
  let n = 0;
  while (KEY_END.test(text)) n++;
  return n;
}

/** The end of a key (test() with the g flag walks the matches without making arrays). */
const KEY_END = /"[ \t\n\r]*:/g;

function countJsonKeysSlow(text: string): number {
  let n = 0;
  let i = 0;
  for (;;) {
    const open = text.indexOf('"', i);
    if (open < 0) return n;
    let close = text.indexOf('"', open + 1);
    // A quote preceded by an odd number of backslashes is inside the string.
    while (close > 0 && text.charCodeAt(close - 1) === 92) {
      let b = close - 1;
      while (text.charCodeAt(b) === 92) b--;
      if ((close - 1 - b) % 2 === 0) break;
      close = text.indexOf('"', close + 1);
    }
    if (close < 0) return n;
    i = close + 1;
    let c = text.charCodeAt(i);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++i);
    if (c === 58) n++;
  }
}

/** Finds the first key that appears twice in one object of a (valid) JSON text: its name, object path and position. */
export function findDuplicateKey(text: string): { key: string; path: string; position: number } | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \n\r\t'.includes(text[i])) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: string): { key: string; path: string; position: number } | undefined => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return undefined;
      }
      for (;;) {
        ws();
        const at = i;
        const key = str();
        if (seen.has(key)) return { key, path, position: at };
        seen.add(key);
        ws();
        i++; // ':'
        const inner = value(path ? `${path}.${key}` : key);
        if (inner) return inner;
        ws();
        if (text[i++] === '}') return undefined;
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return undefined;
      }
      for (let n = 0; ; n++) {
        const inner = value(`${path}[${n}]`);
        if (inner) return inner;
        ws();
        if (text[i++] === ']') return undefined;
      }
    }
    if (c === '"') {
      str();
      return undefined;
    }
    while (i < text.length && !',}] \n\r\t'.includes(text[i])) i++;
    return undefined;
  };
  return value('');
}

/** Throws REG_ERR_JSON naming the key when a JSON text repeats a key in one object (`metKeys`: the keys the parsed value holds). */
export function assertNoDuplicateKeys(text: string, metKeys: number): void {
  if (countJsonKeys(text) === metKeys) return;
  const dup = findDuplicateKey(text);
  if (!dup) return;
  throw new CodecError('REG_ERR_JSON', `invalid JSON: key ${JSON.stringify(dup.key)} appears twice in ${dup.path ? `the object at ${dup.path}` : 'the top object'} (position ${dup.position}): give each key once`, {
    field: dup.path ? `${dup.path}.${dup.key}` : dup.key,
    offset: dup.position,
  });
}

/** Every key of a parsed JSON value (for assertNoDuplicateKeys on values read by other means). */
export function jsonKeyCount(value: unknown): number {
  return countKeys(value);
}
