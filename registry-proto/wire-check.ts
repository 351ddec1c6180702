/**
 * Validates protobuf binary input against a message type before it is
 * decoded, so that malformed bytes are refused with the field path and byte
 * offset of the fault and no half-decoded message is ever passed on.
 *
 * It walks the bytes once without allocating: every tag must be well formed
 * (field number 1..2^29-1, wire type 0, 1, 2, 3, 4 or 5), every length must fit
 * the enclosing message, groups must close, strings must be valid UTF-8
 * (proto3 requires it), nested messages are checked recursively (depth at
 * most 100, as protoc), and a known field must arrive with its declared wire
 * type. That last rule is stricter than protoc, which files a known field with
 * another wire type under unknown fields: here it almost always means the
 * bytes were written for another schema, and saying so beats dropping the
 * value. Packed and unpacked encodings of repeated scalars are both accepted.
 * Unknown field numbers are skipped, as the spec asks.
 */
import { isUtf8 } from 'node:buffer';
import protobuf from 'protobufjs';
import { CodecError } from './errors';

const WIRE_NAMES = ['varint', 'fixed64', 'length-delimited', 'start-group', 'end-group', 'fixed32'];
const MAX_DEPTH = 100;

/** `mapKey`: a string map key (UTF-8, and never `__proto__`). */
type Kind = 'scalar' | 'string' | 'mapKey' | 'bytes' | 'message';

interface FieldRule {
  /** Proto name, for error messages. */
  name: string;
  wireType: number;
  kind: Kind;
  /** Repeated numeric field: also accepted packed (wire type 2). */
  packable: boolean;
  /** Map fields: `[key]` is added to the path. */
  map: boolean;
  sub?: TypeRules;
}

export interface TypeRules {
  name: string;
  fields: Map<number, FieldRule>;
}

function scalarWireType(type: string): number {
  switch (type) {
    case 'double':
    case 'fixed64':
    case 'sfixed64':
      return 1;
    case 'float':
    case 'fixed32':
    case 'sfixed32':
      return 5;
    case 'string':
    case 'bytes':
      return 2;
    default:
      return 0; // int32, int64, uint32, uint64, sint32, sint64, bool, enums
  }
}

const cache = new WeakMap<protobuf.Type, TypeRules>();

/** The wire rules of a reflected message type (built once per type; recursive types share their rules). */
export function wireRules(type: protobuf.Type): TypeRules {
  const cached = cache.get(type);
  if (cached) return cached;
  const rules: TypeRules = { name: type.fullName.replace(/^\./, ''), fields: new Map() };
  cache.set(type, rules);
  for (const field of type.fieldsArray) {
    field.resolve();
    const name = field.protoName ?? field.name;
    if (field instanceof protobuf.MapField) {
      const value = field.resolvedType;
      const entry: TypeRules = { name: `${rules.name}.${name}`, fields: new Map() };
      entry.fields.set(1, { name: 'key', wireType: scalarWireType(field.keyType), kind: field.keyType === 'string' ? 'mapKey' : 'scalar', packable: false, map: false });
      entry.fields.set(2, valueRule('value', field.type, value, false));
      rules.fields.set(field.id, { name, wireType: 2, kind: 'message', packable: false, map: true, sub: entry });
    } else {
      rules.fields.set(field.id, valueRule(name, field.type, field.resolvedType, field.repeated));
    }
  }
  return rules;
}

function valueRule(name: string, typeName: string, resolved: protobuf.Type | protobuf.Enum | null, repeated: boolean): FieldRule {
  if (resolved instanceof protobuf.Type) return { name, wireType: 2, kind: 'message', packable: false, map: false, sub: wireRules(resolved) };
  if (resolved instanceof protobuf.Enum) return { name, wireType: 0, kind: 'scalar', packable: repeated, map: false };
  const wireType = scalarWireType(typeName);
  const kind: Kind = typeName === 'string' ? 'string' : typeName === 'bytes' ? 'bytes' : 'scalar';
  return { name, wireType, kind, packable: repeated && wireType !== 2, map: false };
}

class Scanner {
  /** Where the last varint() ended (a field, not a returned pair: no allocation per varint). */
  private next = 0;

  constructor(readonly buf: Uint8Array) {}

  /** Throws REG_ERR_WIRE; `name` (a field) is appended to `path` only now, so the hot path builds no strings. */
  fail(parent: string, offset: number, what: string, name?: string | number): never {
    const path = join(parent, name);
    throw new CodecError('REG_ERR_WIRE', `${path || '(message)'}: ${what} at byte offset ${offset}`, { field: path || undefined, offset });
  }

  /** Reads a varint at `pos` that must end before `end`; returns its low 32 bits (-1: wider), sets `next`. */
  varint(pos: number, end: number, path: string, name?: string | number): number {
    const start = pos;
    const buf = this.buf;
    let low = 0;
    for (let i = 0; i < 10; i++) {
      if (pos >= end) this.fail(path, start, 'truncated varint', name);
      const b = buf[pos++];
      if (i < 5) low = i < 4 ? low | ((b & 0x7f) << (7 * i)) : low | ((b & 0x0f) << 28);
      if (b < 0x80) {
        // Tags and lengths must fit 32 bits unsigned: -1 says they do not.
        this.next = pos;
        return (i === 4 && b > 0x0f) || i > 4 ? -1 : low >>> 0;
      }
    }
    this.fail(path, start, 'varint longer than 10 bytes', name);
  }

  /** Checks the message `rules` in [pos, end); `group` is the field number of an enclosing group. */
  message(rules: TypeRules | undefined, pos: number, end: number, path: string, depth: number, group = 0): number {
    if (depth > MAX_DEPTH) this.fail(path, pos, `nesting deeper than ${MAX_DEPTH}`);
    while (pos < end) {
      const tagAt = pos;
      const tag = this.varint(pos, end, path);
      pos = this.next;
      if (tag < 0) this.fail(path, tagAt, 'tag does not fit 32 bits');
      const fieldNo = tag >>> 3;
      const wireType = tag & 7;
      if (fieldNo === 0) this.fail(path, tagAt, 'field number 0 is invalid');
      if (wireType > 5) this.fail(path, tagAt, `invalid wire type ${wireType} for field ${fieldNo}`);
      if (wireType === 4) {
        if (group === fieldNo) return pos;
        this.fail(path, tagAt, `end-group tag for field ${fieldNo} without a matching start-group`);
      }
      const rule = rules?.fields.get(fieldNo);
      const name = rule ? rule.name : fieldNo;
      if (rule && wireType !== rule.wireType && !(rule.packable && wireType === 2)) {
        this.fail(path, tagAt, `wire type ${wireType} (${WIRE_NAMES[wireType]}) where field ${fieldNo} (${rule.name}) is ${rule.wireType} (${WIRE_NAMES[rule.wireType]})`, name);
      }
      switch (wireType) {
        case 0:
          this.varint(pos, end, path, name);
          pos = this.next;
          break;
        case 1:
        case 5: {
          const size = wireType === 1 ? 8 : 4;
          if (pos + size > end) this.fail(path, tagAt, `truncated ${WIRE_NAMES[wireType]} value (needs ${size} bytes, ${end - pos} left)`, name);
          pos += size;
          break;
        }
        case 2: {
          const lenAt = pos;
          const len = this.varint(pos, end, path, name);
          pos = this.next;
          if (len < 0 || pos + len > end) this.fail(path, lenAt, `length ${len < 0 ? '>= 2^32' : len} runs past the end of the ${path ? 'enclosing message' : 'input'} (${end - pos} bytes left)`, name);
          const valueEnd = pos + len;
          if (rule && wireType === rule.wireType) {
            if (rule.kind === 'string') this.utf8(pos, valueEnd, path, name);
            else if (rule.kind === 'mapKey') {
              this.utf8(pos, valueEnd, path, name);
              if (len === PROTO_KEY.length && isProtoKey(this.buf, pos)) this.fail(path, pos, PROTO_KEY_REFUSED, name);
            }
            if (rule.kind === 'message') this.message(rule.sub, pos, valueEnd, rule.map ? `${join(path, name)}[]` : join(path, name), depth + 1);
          } else if (rule?.packable) {
            this.packed(rule, pos, valueEnd, join(path, name));
          }
          pos = valueEnd;
          break;
        }
        case 3:
          pos = this.message(undefined, pos, end, join(path, name), depth + 1, fieldNo);
          break;
      }
    }
    if (group !== 0) this.fail(path, end, `start-group of field ${group} is never closed`);
    if (pos !== end) this.fail(path, pos, 'message ends inside a field');
    return pos;
  }

  /** Fails unless [pos, end) is valid UTF-8. ASCII (most strings here) is checked inline, without a subarray. */
  utf8(pos: number, end: number, path: string, name: string | number): void {
    const buf = this.buf;
    // Short strings: a loop beats making a subarray; long ones: the native check.
    let i = pos;
    if (end - pos < 24) while (i < end && buf[i] < 0x80) i++;
    if (i < end && !isUtf8(buf.subarray(i, end))) this.fail(path, pos, 'string is not valid UTF-8', name);
  }

  packed(rule: FieldRule, pos: number, end: number, path: string): void {
    if (rule.wireType === 0) {
      while (pos < end) {
        this.varint(pos, end, path);
        pos = this.next;
      }
    } else {
      const size = rule.wireType === 1 ? 8 : 4;
      if ((end - pos) % size !== 0) this.fail(path, pos, `packed ${WIRE_NAMES[rule.wireType]} values: length ${end - pos} is not a multiple of ${size}`);
    }
  }
}

const PROTO_KEY = Buffer.from('__proto__');

/** Why a map key `__proto__` is refused in every encoding (codec.ts uses it too). */
export const PROTO_KEY_REFUSED = 'map key "__proto__" is refused: it names the JavaScript object prototype, so the entry would be lost';

function isProtoKey(buf: Uint8Array, pos: number): boolean {
  for (let i = 0; i < PROTO_KEY.length; i++) if (buf[pos + i] !== PROTO_KEY[i]) return false;
  return true;
}

/** `path.name`, or either alone. */
function join(path: string, name?: string | number): string {
  if (name === undefined) return path;
  return path ? `${path}.${name}` : String(name);
}

/** Throws CodecError REG_ERR_WIRE when `bytes[start, end)` is not a valid encoding of `rules`. */
export function checkWire(rules: TypeRules, bytes: Uint8Array, start = 0, end = bytes.length): void {
  new Scanner(bytes).message(rules, start, end, '', 0);
}
