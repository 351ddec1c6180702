/**
 * A binary encoder generated once per message type (`new Function`, property
 * names written out as in pbjs's static code), writing in one pass into a
 * scratch buffer that is reused across calls: a string's or a nested
 * message's length prefix is reserved as one byte and patched once its length
 * is known (rarely, when the length is 128 or more, the bytes after it move
 * to make room). The pbjs static encoder instead builds a linked list of
 * write operations and copies it out at the end (Writer.finish).
 *
 * Output is what the pbjs encoder writes, byte for byte (a property test
 * checks it): fields in field-number order, fields at their defaults left
 * out (-0 written), map entries in the object's key order, unknown fields
 * (`$unknowns`, kept by the decoders) after the known ones; one exception: a
 * string with a lone surrogate gets U+FFFD there (valid UTF-8), not pbjs's
 * invalid bytes. Types it does not cover (bytes, enums, fixed-width 64-bit
 * integers, oneofs, non-string map keys) keep the pbjs encoder.
 */
import protobuf from 'protobufjs';
import { staticClassOf } from './messages';

type Msg = Record<string, unknown>;
type Write = (m: Msg) => void;

const SCRATCH_BYTES = 8192;
/** A scratch buffer grown past this is dropped after the call, not kept. */
const KEEP_SCRATCH_BYTES = 1 << 20;

// The encode in progress (encoding is synchronous and never re-entered).
const st = { buf: Buffer.allocUnsafe(SCRATCH_BYTES), pos: 0 };

/** Makes room for `n` more bytes. */
function ensure(n: number): void {
  if (st.pos + n <= st.buf.length) return;
  const bigger = Buffer.allocUnsafe(Math.max(st.buf.length * 2, st.pos + n));
  st.buf.copy(bigger, 0, 0, st.pos);
  st.buf = bigger;
}

function varintSize(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

function writeVarint(v: number): void {
  const buf = st.buf;
  while (v > 0x7f) {
    buf[st.pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[st.pos++] = v;
}

/** Writes the length of what follows the one byte reserved at `at` (moving it if the length needs more bytes). */
function finishLen(at: number): void {
  const n = st.pos - at - 1;
  if (n < 0x80) {
    st.buf[at] = n;
    return;
  }
  const extra = varintSize(n) - 1;
  ensure(extra);
  st.buf.copyWithin(at + 1 + extra, at + 1, st.pos);
  const end = st.pos + extra;
  st.pos = at;
  writeVarint(n);
  st.pos = end;
}

/** Buffer's own string writer (no argument checks; not in @types/node): UTF-8, a lone surrogate as U+FFFD. */
interface NodeWrites {
  utf8Write(s: string, offset: number, length?: number): number;
}

function writeStr(s: string): void {
  const len = s.length;
  ensure(len * 3 + 5);
  const buf = st.buf;
  const at = st.pos;
  if (len > 24) {
    // Long strings: the native writer (a lone surrogate becomes U+FFFD, as below).
    st.pos = at + 1 + (buf as unknown as NodeWrites).utf8Write(s, at + 1);
    finishLen(at);
    return;
  }
  let p = at + 1;
  let i = 0;
  for (; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) break;
    buf[p++] = c;
  }
  for (; i < len; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) buf[p++] = c;
    else if (c < 0x800) {
      buf[p++] = (c >> 6) | 0xc0;
      buf[p++] = (c & 0x3f) | 0x80;
    } else if (c >= 0xd800 && c < 0xdc00 && i + 1 < len && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
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
  st.pos = p;
  // Strings under 25 UTF-16 units are under 128 bytes: the reserved byte is the length.
  buf[at] = p - at - 1;
}

/** int64 value (number, Long or decimal string) as a varint. */
function writeInt64(v: unknown): void {
  if (typeof v === 'number' && v >= 0 && v < 0x10000000) return writeVarint(v);
  const bits = typeof v === 'number' ? protobuf.util.LongBits.fromNumber(v) : protobuf.util.LongBits.from(v as number);
  let lo = bits.lo >>> 0;
  let hi = bits.hi >>> 0;
  const buf = st.buf;
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
function writeInt32(v: number): void {
  if (v >= 0) return writeVarint(v);
  const buf = st.buf;
  for (let i = 0; i < 9; i++) {
    buf[st.pos++] = (v & 0x7f) | 0x80;
    v >>= 7;
  }
  buf[st.pos++] = 1;
}

const f32 = new Float32Array(1);
const f32Bytes = new Uint8Array(f32.buffer);
const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function writeFloat(v: number): void {
  f32[0] = v;
  const buf = st.buf;
  for (let i = 0; i < 4; i++) buf[st.pos++] = f32Bytes[littleEndian ? i : 3 - i];
}

function writeDouble(v: number): void {
  f64[0] = v;
  const buf = st.buf;
  for (let i = 0; i < 8; i++) buf[st.pos++] = f64Bytes[littleEndian ? i : 7 - i];
}

function writeUnknown(m: Msg): void {
  const list = m.$unknowns as Uint8Array[] | undefined;
  if (!list || !Object.prototype.hasOwnProperty.call(m, '$unknowns')) return;
  for (const u of list) {
    ensure(u.length);
    st.buf.set(u, st.pos);
    st.pos += u.length;
  }
}

/** Per scalar type: wire type, the statement writing a value `v` (room for 16 bytes made), and "is not the default" (pbjs's tests). */
const SCALARS: Record<string, { wire: number; write: string; set: string }> = {
  string: { wire: 2, write: 'writeStr(v)', set: 'v !== ""' },
  bool: { wire: 0, write: 'st.buf[st.pos++] = v ? 1 : 0', set: 'v !== false' },
  float: { wire: 5, write: 'writeFloat(v)', set: '!Object.is(v, 0)' },
  double: { wire: 1, write: 'writeDouble(v)', set: '!Object.is(v, 0)' },
  int32: { wire: 0, write: 'writeInt32(v)', set: 'v !== 0' },
  uint32: { wire: 0, write: 'writeVarint(v >>> 0)', set: 'v !== 0' },
  sint32: { wire: 0, write: 'writeVarint(((v << 1) ^ (v >> 31)) >>> 0)', set: 'v !== 0' },
  int64: { wire: 0, write: 'writeInt64(v)', set: '(typeof v === "object" ? v.low || v.high : v != 0)' },
};

const compiled = new WeakMap<protobuf.Type, Write | null>();
const building = new Map<protobuf.Type, { write?: Write }>();

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

const writeTagCode = (id: number, wire: number) => tagBytes(id, wire).map((b) => `st.buf[st.pos++] = ${b};`).join(' ');

function compile(type: protobuf.Type): Write | undefined {
  const known = compiled.get(type);
  if (known !== undefined) return known ?? undefined;
  const inProgress = building.get(type);
  if (inProgress) return (m) => inProgress.write!(m);
  if (!staticClassOf(type)) {
    compiled.set(type, null);
    return undefined;
  }
  const slot: { write?: Write } = {};
  building.set(type, slot);
  const deps: unknown[] = [];
  const dep = (x: unknown): string => `d[${deps.push(x) - 1}]`;
  const writes: string[] = [];
  let ok = true;
  for (const field of [...type.fieldsArray].sort((a, b) => a.id - b.id)) {
    field.resolve();
    const prop = JSON.stringify(field.name);
    const at = `m[${prop}]`;
    // No own-property test (pbjs makes one): a value found on the prototype is
    // the field's default (null, "", false, 0, an empty array or object),
    // which the tests below leave out anyway.
    const resolved = field.resolvedType;
    let one: { wire: number; write: string; set: string };
    if (resolved instanceof protobuf.Type) {
      const w = compile(resolved);
      if (!w) {
        ok = false;
        break;
      }
      // A nested message: one byte reserved for its length, patched after.
      one = { wire: 2, write: `var at2 = st.pos++; ${dep(w)}(v); finishLen(at2)`, set: 'true' };
    } else if (resolved instanceof protobuf.Enum || !SCALARS[field.type] || field.partOf) {
      ok = false;
      break;
    } else one = SCALARS[field.type];
    if (field instanceof protobuf.MapField) {
      if (field.keyType !== 'string') {
        ok = false;
        break;
      }
      // An entry: key (field 1) and value (field 2), both always written, as pbjs does.
      writes.push(`if (${at} != null) { var mp = ${at}, ks = Object.keys(mp); for (var j = 0; j < ks.length; j++) { var k = ks[j], v = mp[k];
        ensure(16); ${writeTagCode(field.id, 2)} var at = st.pos++; st.buf[st.pos++] = 10; writeStr(k);
        ensure(16); ${writeTagCode(2, one.wire)} ${one.write}; finishLen(at); } }`);
    } else if (field.repeated) {
      if (one.wire !== 2) {
        writes.push(`if (${at} != null && ${at}.length) { var a = ${at}; ensure(16); ${writeTagCode(field.id, 2)} var at = st.pos++;
          for (var i = 0; i < a.length; i++) { var v = a[i]; ensure(16); ${one.write}; } finishLen(at); }`);
      } else {
        writes.push(`if (${at} != null && ${at}.length) { var a = ${at}; for (var i = 0; i < a.length; i++) { var v = a[i]; if (st.pos + 16 > st.buf.length) ensure(16); ${writeTagCode(field.id, 2)} ${one.write}; } }`);
      }
    } else {
      writes.push(`{ var v = ${at}; if (v != null && ${one.set}) { if (st.pos + 16 > st.buf.length) ensure(16); ${writeTagCode(field.id, one.wire)} ${one.write}; } }`);
    }
  }
  building.delete(type);
  if (!ok) {
    compiled.set(type, null);
    return undefined;
  }
  const helpers = { st, ensure, finishLen, writeVarint, writeStr, writeInt32, writeInt64, writeFloat, writeDouble, writeUnknown };
  const write = new Function('d', ...Object.keys(helpers), `return function write_${type.name}(m) {\n${writes.join('\n')}\nwriteUnknown(m);\n};`)(deps, ...Object.values(helpers)) as Write;
  slot.write = write;
  compiled.set(type, write);
  return write;
}

/** The generated encoder of `type` (bytes of a message), or undefined when the type keeps the pbjs encoder. */
export function compiledEncoder(type: protobuf.Type): ((message: Msg) => Uint8Array) | undefined {
  const write = compile(type);
  if (!write) return undefined;
  return (message) => {
    st.pos = 0;
    try {
      write(message);
      const out = Buffer.allocUnsafe(st.pos);
      st.buf.copy(out, 0, 0, st.pos);
      return out;
    } finally {
      if (st.buf.length > KEEP_SCRATCH_BYTES) st.buf = Buffer.allocUnsafe(SCRATCH_BYTES);
    }
  };
}
