/**
 * A binary decoder compiled once per message type that checks the wire
 * format while it decodes: one pass over the bytes where the codec used to
 * make two (wire-check.ts, then the pbjs static decode).
 *
 * It refuses everything wire-check.ts refuses (bad tags, field number 0,
 * wire types 6 and 7, a known field with another wire type unless packed,
 * truncated varints, lengths or fixed values, varints over 10 bytes, tags and
 * lengths over 32 bits, invalid UTF-8 in strings, a map key `__proto__`,
 * nesting over 100, unclosed or stray groups) but says only that it failed:
 * codec.ts then runs wire-check.ts on the same bytes for the message with the
 * field path and byte offset. So the fast path never builds an error string
 * and the error texts stay those of the wire check.
 *
 * It builds what the pbjs static decode builds (static class instances;
 * fields at their defaults left unset, -0 kept; a repeated message field
 * merged into; map entries last one wins; unknown fields kept as raw bytes in
 * the non-enumerable `$unknowns` unless discarded), with one difference: a
 * 64-bit integer is a number (exact: values beyond 2^53 fall back to the pbjs
 * decode, which makes a Long). Types with fields it does not cover (bytes,
 * enums, 64-bit fields other than varints, maps with non-string keys) get no
 * compiled decoder and keep the two passes.
 */
import { isUtf8 } from 'node:buffer';
import protobuf from 'protobufjs';
import { staticClassOf } from './messages';

/** Thrown (never shown) when the bytes are not valid: the caller asks wire-check.ts why. */
export const INVALID = new Error('invalid protobuf wire data');
/** Thrown when the bytes are valid but hold what a number cannot (an int64 beyond 2^53): the caller uses the pbjs decode. */
export const UNSUPPORTED = new Error('value needs the pbjs decode');

const MAX_DEPTH = 100;


// The decode in progress (decoding is synchronous and never re-entered): one
// object, so the code generated per type (new Function) shares it.
const st: { buf: Buffer; pos: number; keepUnknown: boolean; hi: number } = { buf: Buffer.alloc(0), pos: 0, keepUnknown: true, hi: 0 };

function varint32(end: number): number {
  // Tags and lengths: at most 5 bytes and 32 bits.
  let b = 0;
  let v = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (st.pos >= end) throw INVALID;
    b = st.buf[st.pos++];
    if (shift === 28) {
      if (b > 0x0f) throw INVALID;
      return (v | (b << 28)) >>> 0;
    }
    v |= (b & 0x7f) << shift;
    if (b < 0x80) return v >>> 0;
  }
  throw INVALID;
}

/** Low 32 bits of a varint of up to 10 bytes; st.hi gets the high 32 bits. */
function varint64(end: number): number {
  let lo = 0;
  let hi = 0;
  let b = 0;
  let i = 0;
  for (; i < 4; i++) {
    if (st.pos >= end) throw INVALID;
    b = st.buf[st.pos++];
    lo |= (b & 0x7f) << (7 * i);
    if (b < 0x80) {
      st.hi = 0;
      return lo >>> 0;
    }
  }
  if (st.pos >= end) throw INVALID;
  b = st.buf[st.pos++];
  lo |= (b & 0x7f) << 28;
  hi = (b & 0x7f) >> 4;
  if (b < 0x80) {
    st.hi = hi;
    return lo >>> 0;
  }
  for (i = 0; i < 5; i++) {
    if (st.pos >= end) throw INVALID;
    b = st.buf[st.pos++];
    hi |= (b & 0x7f) << (7 * i + 3);
    if (b < 0x80) {
      st.hi = hi >>> 0;
      return lo >>> 0;
    }
  }
  throw INVALID;
}

function readString(end: number): string {
  const len = varint32(end);
  const start = st.pos;
  const stop = start + len;
  if (stop > end) throw INVALID;
  st.pos = stop;
  // ASCII (most strings here) needs no UTF-8 check and decodes as latin1.
  let i = start;
  while (i < stop && st.buf[i] < 0x80) i++;
  if (i === stop) return len <= 8 ? asciiUpTo8(st.buf, start, len) : (st.buf as unknown as NodeSlices).latin1Slice(start, stop);
  if (!isUtf8(st.buf.subarray(start, stop))) throw INVALID;
  return (st.buf as unknown as NodeSlices).utf8Slice(start, stop);
}

const fc = String.fromCharCode;

/** A short ASCII string by String.fromCharCode with its bytes as arguments: a third of a native slice call's cost. */
function asciiUpTo8(b: Buffer, s: number, len: number): string {
  switch (len) {
    case 0:
      return '';
    case 1:
      return fc(b[s]);
    case 2:
      return fc(b[s], b[s + 1]);
    case 3:
      return fc(b[s], b[s + 1], b[s + 2]);
    case 4:
      return fc(b[s], b[s + 1], b[s + 2], b[s + 3]);
    case 5:
      return fc(b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4]);
    case 6:
      return fc(b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4], b[s + 5]);
    case 7:
      return fc(b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4], b[s + 5], b[s + 6]);
    default:
      return fc(b[s], b[s + 1], b[s + 2], b[s + 3], b[s + 4], b[s + 5], b[s + 6], b[s + 7]);
  }
}

/** Buffer's own slice-to-string methods (no argument checks; not in @types/node). */
interface NodeSlices {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}


/** Skips a field of an unknown number, checking it as wire-check.ts does. */
function skip(wire: number, fieldNo: number, end: number, depth: number): void {
  switch (wire) {
    case 0:
      varint64(end);
      return;
    case 1:
      if ((st.pos += 8) > end) throw INVALID;
      return;
    case 5:
      if ((st.pos += 4) > end) throw INVALID;
      return;
    case 2: {
      const len = varint32(end);
      if ((st.pos += len) > end) throw INVALID;
      return;
    }
    case 3: {
      if (depth + 1 > MAX_DEPTH) throw INVALID;
      for (;;) {
        const tag = varint32(end);
        const no = tag >>> 3;
        const w = tag & 7;
        if (no === 0 || w > 5) throw INVALID;
        if (w === 4) {
          if (no === fieldNo) return;
          throw INVALID;
        }
        skip(w, no, end, depth + 1);
      }
    }
    default:
      throw INVALID; // 4: an end-group with no start
  }
}

/** Adds the raw bytes of an unknown field (tagAt..pos) to `m.$unknowns` (non-enumerable, as pbjs keeps them). */
function keepUnknownField(m: Record<string, unknown>, tagAt: number): void {
  if (!Object.prototype.hasOwnProperty.call(m, '$unknowns')) Object.defineProperty(m, '$unknowns', { value: [], writable: true, configurable: true, enumerable: false });
  (m.$unknowns as Uint8Array[]).push(st.buf.subarray(tagAt, st.pos));
}

type Decode = (end: number, depth: number, into?: Record<string, unknown>) => Record<string, unknown>;

/** Scalars: wire type, the expression that reads one (helpers in scope), and the test of its default. */
const SCALARS: Record<string, { wire: number; read: string; isDefault: (v: string) => string }> = {
  string: { wire: 2, read: 'readString(end)', isDefault: (v) => `${v}.length === 0` },
  bool: { wire: 0, read: '(varint64(end) !== 0 || st.hi !== 0)', isDefault: (v) => `${v} === false` },
  float: { wire: 5, read: 'readFloat(end)', isDefault: (v) => `Object.is(${v}, 0)` },
  double: { wire: 1, read: 'readDouble(end)', isDefault: (v) => `Object.is(${v}, 0)` },
  int32: { wire: 0, read: '(varint64(end) | 0)', isDefault: (v) => `${v} === 0` },
  uint32: { wire: 0, read: 'varint64(end)', isDefault: (v) => `${v} === 0` },
  sint32: { wire: 0, read: 'zigzag32(varint64(end))', isDefault: (v) => `${v} === 0` },
  int64: { wire: 0, read: 'int64(end)', isDefault: (v) => `${v} === 0` },
};

function readFloat(end: number): number {
  if (st.pos + 4 > end) throw INVALID;
  const v = st.buf.readFloatLE(st.pos);
  st.pos += 4;
  return v;
}

function readDouble(end: number): number {
  if (st.pos + 8 > end) throw INVALID;
  const v = st.buf.readDoubleLE(st.pos);
  st.pos += 8;
  return v;
}

const zigzag32 = (n: number): number => (n >>> 1) ^ -(n & 1);

function int64(end: number): number {
  const lo = varint64(end);
  const hi = st.hi | 0;
  // Exact as a number only within ±2^53.
  if (hi >= 0 ? hi >= 0x200000 : hi < -0x200000) throw UNSUPPORTED;
  return hi * 4294967296 + lo;
}

/** Reads a length prefix and decodes a message of `decode` within it. */
function sub(decode: Decode, end: number, depth: number, into?: Record<string, unknown>): Record<string, unknown> {
  const len = varint32(end);
  const stop = st.pos + len;
  if (stop > end) throw INVALID;
  return decode(stop, depth + 1, into);
}

const decoders = new WeakMap<protobuf.Type, Decode | null>();
const building = new Map<protobuf.Type, { decode?: Decode }>();

/**
 * Generates the decode function of `type` (JavaScript source with the field
 * numbers in a switch and the property names written out, as pbjs does: a
 * property store by a computed name would be an order of magnitude slower).
 */
function decoderOf(type: protobuf.Type): Decode | undefined {
  const known = decoders.get(type);
  if (known !== undefined) return known ?? undefined;
  const inProgress = building.get(type);
  if (inProgress) return (end, depth, into) => inProgress.decode!(end, depth, into); // a recursive type
  const cls = staticClassOf(type);
  if (!cls) {
    decoders.set(type, null);
    return undefined;
  }
  const slot: { decode?: Decode } = {};
  building.set(type, slot);
  const deps: unknown[] = [cls];
  const dep = (x: unknown): string => `d[${deps.push(x) - 1}]`;
  const cases: string[] = [];
  let ok = true;
  for (const field of type.fieldsArray) {
    field.resolve();
    const prop = JSON.stringify(field.name);
    const at = `m[${prop}]`;
    const own = `hasOwn.call(m, ${prop})`;
    const resolved = field.resolvedType;
    let read: string;
    let wire: number;
    let isDefault: ((v: string) => string) | undefined;
    if (resolved instanceof protobuf.Type) {
      const d = decoderOf(resolved);
      if (!d) {
        ok = false;
        break;
      }
      read = `sub(${dep(d)}, end, depth)`;
      wire = 2;
    } else if (resolved instanceof protobuf.Enum || !SCALARS[field.type] || field.partOf) {
      ok = false;
      break;
    } else {
      ({ read, wire, isDefault } = SCALARS[field.type]);
    }
    if (field instanceof protobuf.MapField) {
      if (field.keyType !== 'string') {
        ok = false;
        break;
      }
      const empty = resolved instanceof protobuf.Type ? `new ${dep(staticClassOf(resolved))}()` : field.type === 'string' ? '""' : field.type === 'bool' ? 'false' : '0';
      // A map entry is a message: key = 1 (string), value = 2; other fields are skipped.
      cases.push(`case ${field.id}: {
        if (w !== 2) throw INVALID;
        var len = varint32(end), stop = st.pos + len;
        if (stop > end) throw INVALID;
        var k = "", v = undefined;
        while (st.pos < stop) {
          var t2 = varint32(stop), n2 = t2 >>> 3, w2 = t2 & 7;
          if (n2 === 0 || w2 > 5) throw INVALID;
          if (n2 === 1) { if (w2 !== 2) throw INVALID; k = readString(stop); if (k === "__proto__") throw INVALID; }
          else if (n2 === 2) { if (w2 !== ${wire}) throw INVALID; v = ${read.replace(/\bend\b/g, 'stop').replace('depth)', resolved instanceof protobuf.Type ? 'depth + 1, v)' : 'depth + 1)')}; }
          else skip(w2, n2, stop, depth + 1);
        }
        if (st.pos !== stop) throw INVALID;
        if (${at} === ${dep((cls as unknown as { prototype: Record<string, unknown> }).prototype[field.name])}) ${at} = {}; // the prototype's shared empty object
        ${at}[k] = v === undefined ? ${empty} : v;
        continue;
      }`);
    } else if (field.repeated) {
      const packed = wire !== 2 ? `if (w === 2) {
          var len = varint32(end), stop = st.pos + len;
          if (stop > end) throw INVALID;
          if (${at}.length === 0) ${at} = [];
          while (st.pos < stop) ${at}.push(${read.replace(/\bend\b/g, 'stop')});
          if (st.pos !== stop) throw INVALID;
          continue;
        }` : '';
      // The prototype's default is a shared empty array (pbjs's $util.emptyArray): replace it, never push to it.
      // pbjs's constructor gives each instance its own empty array; the prototype's is shared: never push to that one.
      const shared = dep((cls as unknown as { prototype: Record<string, unknown> }).prototype[field.name]);
      cases.push(`case ${field.id}: {
        ${packed}
        if (w !== ${wire}) throw INVALID;
        var v = ${read};
        var a = ${at};
        if (a === ${shared}) ${at} = a = [];
        a.push(v);
        continue;
      }`);
    } else if (resolved instanceof protobuf.Type) {
      cases.push(`case ${field.id}: {
        if (w !== 2) throw INVALID;
        var len = varint32(end), stop = st.pos + len;
        if (stop > end) throw INVALID;
        ${at} = ${dep(decoderOf(resolved))}(stop, depth + 1, ${at} == null ? undefined : ${at});
        continue;
      }`);
    } else {
      cases.push(`case ${field.id}: {
        if (w !== ${wire}) throw INVALID;
        var v = ${read};
        if (${isDefault!('v')}) { if (${own}) delete ${at}; } else ${at} = v;
        continue;
      }`);
    }
  }
  building.delete(type);
  if (!ok) {
    decoders.set(type, null);
    return undefined;
  }
  const source = `return function decode_${type.name}(end, depth, into) {
    if (depth > ${MAX_DEPTH}) throw INVALID;
    var m = into === undefined ? new d[0]() : into;
    while (st.pos < end) {
      var tagAt = st.pos, tag = st.buf[tagAt];
      if (tag < 0x80) st.pos = tagAt + 1; else tag = varint32(end); // one-byte tags (fields 1..15) inline
      var no = tag >>> 3, w = tag & 7;
      if (no === 0 || w > 5) throw INVALID;
      switch (no) {
        ${cases.join('\n')}
      }
      skip(w, no, end, depth);
      if (st.keepUnknown) keepUnknownField(m, tagAt);
    }
    if (st.pos !== end) throw INVALID;
    return m;
  };`;
  const decode = new Function('d', 'st', 'INVALID', 'hasOwn', 'varint32', 'varint64', 'readString', 'readFloat', 'readDouble', 'zigzag32', 'int64', 'sub', 'skip', 'keepUnknownField', source)(
    deps,
    st,
    INVALID,
    Object.prototype.hasOwnProperty,
    varint32,
    varint64,
    readString,
    readFloat,
    readDouble,
    zigzag32,
    int64,
    sub,
    skip,
    keepUnknownField,
  ) as Decode;
  slot.decode = decode;
  decoders.set(type, decode);
  return decode;
}

/** The one-pass decoder of `type`, or undefined when it needs the two passes. */
export function compiledDecoder(type: protobuf.Type): ((bytes: Uint8Array, start: number, end: number, keepUnknownFields: boolean) => Record<string, unknown>) | undefined {
  const decode = decoderOf(type);
  if (!decode) return undefined;
  return (bytes, start, end, keepUnknownFields) => {
    st.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    st.pos = start;
    st.keepUnknown = keepUnknownFields;
    try {
      return decode(end, 0);
    } finally {
      st.buf = EMPTY;
    }
  };
}

const EMPTY = Buffer.alloc(0);
