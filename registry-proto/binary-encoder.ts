/**
 * A binary encoder generated once per message type: two passes over the
 * message, one to size it (every nested message and string, kept in a list
 * in the order they are met), one to write it into a single buffer of that
 * size. The pbjs static encoder instead builds a linked list of write
 * operations and copies it out at the end (Writer.finish).
 *
 * Output is what the pbjs encoder writes, byte for byte (a property test
 * checks it): fields in field-number order, fields at their defaults left
 * out (-0 written), map entries in the object's key order, unknown fields
 * (`$unknowns`, kept by the decoders) after the known ones; one exception: a
 * string with a lone surrogate gets U+FFFD there (valid UTF-8), not pbjs's
 * invalid bytes. Types it does not
 * cover (bytes, enums, fixed-width 64-bit integers, oneofs, non-string map
 * keys) keep the pbjs encoder.
 */
import protobuf from 'protobufjs';
import { staticClassOf } from './messages';

type Msg = Record<string, unknown>;
type Size = (m: Msg) => number;
type Write = (m: Msg) => void;

// The encode in progress (synchronous): byte lengths of strings and nested
// messages in the order pass one met them, and the write position.
const st = { lens: [] as number[], li: 0, buf: Buffer.alloc(0), pos: 0 };

function varintSize(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** UTF-8 byte length of a string (pushed for pass two). */
function strSize(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) {
      if (c < 0x800) n += 1;
      else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
        n += 2; // a surrogate pair: 4 bytes for 2 UTF-16 units
        i++;
      } else n += 2;
    }
  }
  st.lens.push(n);
  return varintSize(n) + n;
}

function writeVarint(v: number): void {
  const buf = st.buf;
  while (v > 0x7f) {
    buf[st.pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[st.pos++] = v;
}

function writeStr(s: string): void {
  const n = st.lens[st.li++];
  writeVarint(n);
  const buf = st.buf;
  let p = st.pos;
  if (n === s.length) {
    for (let i = 0; i < n; i++) buf[p++] = s.charCodeAt(i);
  } else {
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      if (c < 0x80) buf[p++] = c;
      else if (c < 0x800) {
        buf[p++] = (c >> 6) | 0xc0;
        buf[p++] = (c & 0x3f) | 0x80;
      } else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
        c = 0x10000 + ((c & 0x3ff) << 10) + (s.charCodeAt(++i) & 0x3ff);
        buf[p++] = (c >> 18) | 0xf0;
        buf[p++] = ((c >> 12) & 0x3f) | 0x80;
        buf[p++] = ((c >> 6) & 0x3f) | 0x80;
        buf[p++] = (c & 0x3f) | 0x80;
      } else {
        // A lone surrogate has no UTF-8 form: written as U+FFFD (3 bytes), as TextEncoder does.
        // (The pbjs writer writes its 3 surrogate bytes, invalid UTF-8 that every decoder refuses.)
        if (c >= 0xd800 && c < 0xe000) c = 0xfffd;
        buf[p++] = (c >> 12) | 0xe0;
        buf[p++] = ((c >> 6) & 0x3f) | 0x80;
        buf[p++] = (c & 0x3f) | 0x80;
      }
    }
  }
  st.pos = p;
}

/** Low and high 32 bits of an int64 value (number, Long or decimal string). */
function int64Bits(v: unknown): { lo: number; hi: number } {
  if (typeof v === 'number') {
    const bits = protobuf.util.LongBits.fromNumber(v);
    return { lo: bits.lo, hi: bits.hi };
  }
  const bits = protobuf.util.LongBits.from(v as number);
  return { lo: bits.lo, hi: bits.hi };
}

function int64Size(v: unknown): number {
  if (typeof v === 'number' && v >= 0 && v < 0x10000000) return varintSize(v);
  const { lo, hi } = int64Bits(v);
  return new protobuf.util.LongBits(lo, hi).length();
}

function writeInt64(v: unknown): void {
  if (typeof v === 'number' && v >= 0 && v < 0x10000000) return writeVarint(v);
  let { lo, hi } = int64Bits(v);
  const buf = st.buf;
  lo >>>= 0;
  hi >>>= 0;
  while (hi) {
    buf[st.pos++] = (lo & 0x7f) | 0x80;
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi >>>= 7;
  }
  while (lo > 0x7f) {
    buf[st.pos++] = (lo & 0x7f) | 0x80;
    lo >>>= 7;
  }
  buf[st.pos++] = lo;
}

/** int32: a negative value is sign-extended to 10 bytes. */
const int32Size = (v: number): number => (v < 0 ? 10 : varintSize(v));
function writeInt32(v: number): void {
  if (v >= 0) return writeVarint(v);
  const buf = st.buf;
  for (let i = 0; i < 9; i++) {
    buf[st.pos++] = (v & 0x7f) | 0x80;
    v >>= 7;
  }
  buf[st.pos++] = 1;
}

function writeFloat(v: number): void {
  st.buf.writeFloatLE(v, st.pos);
  st.pos += 4;
}

function writeDouble(v: number): void {
  st.buf.writeDoubleLE(v, st.pos);
  st.pos += 8;
}

function unknownSize(m: Msg): number {
  const list = m.$unknowns as Uint8Array[] | undefined;
  if (!list || !Object.prototype.hasOwnProperty.call(m, '$unknowns')) return 0;
  let n = 0;
  for (const u of list) n += u.length;
  return n;
}

function writeUnknown(m: Msg): void {
  const list = m.$unknowns as Uint8Array[] | undefined;
  if (!list || !Object.prototype.hasOwnProperty.call(m, '$unknowns')) return;
  for (const u of list) {
    st.buf.set(u, st.pos);
    st.pos += u.length;
  }
}

/** Per scalar type: wire type, size and write expressions of a value `v`, and "is not the default" (pbjs's tests). */
const SCALARS: Record<string, { wire: number; size: string; write: string; set: string }> = {
  string: { wire: 2, size: 'strSize(v)', write: 'writeStr(v)', set: 'v !== ""' },
  bool: { wire: 0, size: '1', write: 'st.buf[st.pos++] = v ? 1 : 0', set: 'v !== false' },
  float: { wire: 5, size: '4', write: 'writeFloat(v)', set: '!Object.is(v, 0)' },
  double: { wire: 1, size: '8', write: 'writeDouble(v)', set: '!Object.is(v, 0)' },
  int32: { wire: 0, size: 'int32Size(v)', write: 'writeInt32(v)', set: 'v !== 0' },
  uint32: { wire: 0, size: 'varintSize(v >>> 0)', write: 'writeVarint(v >>> 0)', set: 'v !== 0' },
  sint32: { wire: 0, size: 'varintSize(((v << 1) ^ (v >> 31)) >>> 0)', write: 'writeVarint(((v << 1) ^ (v >> 31)) >>> 0)', set: 'v !== 0' },
  int64: { wire: 0, size: 'int64Size(v)', write: 'writeInt64(v)', set: '(typeof v === "object" ? v.low || v.high : v != 0)' },
};

interface Compiled {
  size: Size;
  write: Write;
}

const compiled = new WeakMap<protobuf.Type, Compiled | null>();
const building = new Map<protobuf.Type, Partial<Compiled>>();

function tagBytes(id: number, wire: number): number[] {
  const out: number[] = [];
  let v = (id << 3) | wire;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
}

function compile(type: protobuf.Type): Compiled | undefined {
  const known = compiled.get(type);
  if (known !== undefined) return known ?? undefined;
  const inProgress = building.get(type);
  if (inProgress) return { size: (m) => inProgress.size!(m), write: (m) => inProgress.write!(m) };
  if (!staticClassOf(type)) {
    compiled.set(type, null);
    return undefined;
  }
  const slot: Partial<Compiled> = {};
  building.set(type, slot);
  const deps: unknown[] = [];
  const dep = (x: unknown): string => `d[${deps.push(x) - 1}]`;
  const sizes: string[] = [];
  const writes: string[] = [];
  let ok = true;
  for (const field of [...type.fieldsArray].sort((a, b) => a.id - b.id)) {
    field.resolve();
    const prop = JSON.stringify(field.name);
    const resolved = field.resolvedType;
    const get = `var v = m[${prop}];`;
    const own = `hasOwn.call(m, ${prop})`;
    let one: { wire: number; size: string; write: string; set: string };
    if (resolved instanceof protobuf.Type) {
      const c = compile(resolved);
      if (!c) {
        ok = false;
        break;
      }
      const cs = dep(c);
      // A nested message: its size is kept for pass two (prefix), then itself.
      one = { wire: 2, size: `(ix = st.lens.push(0) - 1, n2 = ${cs}.size(v), st.lens[ix] = n2, varintSize(n2) + n2)`, write: `(writeVarint(st.lens[st.li++]), ${cs}.write(v))`, set: 'true' };
    } else if (resolved instanceof protobuf.Enum || !SCALARS[field.type] || field.partOf) {
      ok = false;
      break;
    } else one = SCALARS[field.type];
    const tag = tagBytes(field.id, field instanceof protobuf.MapField ? 2 : one.wire);
    const writeTag = tag.map((b) => `st.buf[st.pos++] = ${b};`).join(' ');
    if (field instanceof protobuf.MapField) {
      if (field.keyType !== 'string') {
        ok = false;
        break;
      }
      const keyTag = 10;
      const valueTag = tagBytes(2, one.wire);
      const writeValueTag = valueTag.map((b) => `st.buf[st.pos++] = ${b};`).join(' ');
      // entry = key (field 1, always written) + value (field 2, always written, as pbjs does)
      sizes.push(`if (m[${prop}] != null && ${own}) { var mp = m[${prop}], ks = Object.keys(mp); for (var j = 0; j < ks.length; j++) { var k = ks[j], v = mp[k];
        var ie = st.lens.push(0) - 1; var e = 1 + strSize(k) + ${valueTag.length} + ${one.size}; st.lens[ie] = e; n += ${tag.length} + varintSize(e) + e; } }`);
      writes.push(`if (m[${prop}] != null && ${own}) { var mp = m[${prop}], ks = Object.keys(mp); for (var j = 0; j < ks.length; j++) { var k = ks[j], v = mp[k];
        ${writeTag} writeVarint(st.lens[st.li++]); st.buf[st.pos++] = ${keyTag}; writeStr(k); ${writeValueTag} ${one.write}; } }`);
    } else if (field.repeated) {
      const packed = one.wire !== 2;
      if (packed) {
        const packedTag = tagBytes(field.id, 2).map((b) => `st.buf[st.pos++] = ${b};`).join(' ');
        sizes.push(`if (m[${prop}] != null && m[${prop}].length) { var a = m[${prop}], p = 0, ip = st.lens.push(0) - 1; for (var i = 0; i < a.length; i++) { var v = a[i]; p += ${one.size}; } st.lens[ip] = p; n += ${tagBytes(field.id, 2).length} + varintSize(p) + p; }`);
        writes.push(`if (m[${prop}] != null && m[${prop}].length) { var a = m[${prop}]; ${packedTag} writeVarint(st.lens[st.li++]); for (var i = 0; i < a.length; i++) { var v = a[i]; ${one.write}; } }`);
      } else {
        sizes.push(`if (m[${prop}] != null && m[${prop}].length) { var a = m[${prop}]; for (var i = 0; i < a.length; i++) { var v = a[i]; n += ${tag.length} + ${one.size}; } }`);
        writes.push(`if (m[${prop}] != null && m[${prop}].length) { var a = m[${prop}]; for (var i = 0; i < a.length; i++) { var v = a[i]; ${writeTag} ${one.write}; } }`);
      }
    } else {
      sizes.push(`{ ${get} if (v != null && ${own} && ${one.set}) n += ${tag.length} + ${one.size}; }`);
      writes.push(`{ ${get} if (v != null && ${own} && ${one.set}) { ${writeTag} ${one.write}; } }`);
    }
  }
  building.delete(type);
  if (!ok) {
    compiled.set(type, null);
    return undefined;
  }
  const helpers = { st, hasOwn: Object.prototype.hasOwnProperty, varintSize, strSize, writeVarint, writeStr, int32Size, writeInt32, int64Size, writeInt64, writeFloat, writeDouble, unknownSize, writeUnknown };
  const names = Object.keys(helpers);
  const make = (source: string) => new Function('d', ...names, source)(deps, ...Object.values(helpers)) as Size & Write;
  const size = make(`return function size_${type.name}(m) { var n = 0, n2 = 0, ix = 0;\n${sizes.join('\n')}\nreturn n + unknownSize(m); };`) as Size;
  const write = make(`return function write_${type.name}(m) {\n${writes.join('\n')}\nwriteUnknown(m); };`) as Write;
  const c: Compiled = { size, write };
  slot.size = size;
  slot.write = write;
  compiled.set(type, c);
  return c;
}

/** The generated encoder of `type` (bytes of a message), or undefined when the type keeps the pbjs encoder. */
export function compiledEncoder(type: protobuf.Type): ((message: Msg) => Uint8Array) | undefined {
  const c = compile(type);
  if (!c) return undefined;
  return (message) => {
    st.lens.length = 0;
    st.li = 0;
    const n = c.size(message);
    st.buf = Buffer.allocUnsafe(n);
    st.pos = 0;
    c.write(message);
    const out = st.buf;
    st.buf = EMPTY;
    return out;
  };
}

const EMPTY = Buffer.alloc(0);
