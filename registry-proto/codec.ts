/**
 * One codec per message type, over the three encodings users meet:
 *
 * - binary: an encoder and a one-pass decoder generated per type
 *   (binary-encoder.ts, binary-decoder.ts); the decoder checks the wire
 *   format as it goes, and on bad bytes wire-check.ts says where (field path,
 *   byte offset); the pbjs static code remains for shapes they do not cover.
 *   Unknown fields are kept (`$unknowns`) and written back, unless
 *   `discardUnknown`;
 * - ProtoJSON (https://protobuf.dev/programming-guides/json/): read by the
 *   reader compiled per type in json-reader.ts (a key given twice in one
 *   object refused), written by the writer compiled per type in
 *   json-writer.ts; the reflective paths through protobufjs/ext/protojson
 *   stay as their references and for other well-known types. Beyond the
 *   extension: `emitDefaults` (print fields that have no presence even at
 *   their defaults), `protoNames` (print proto field names instead of
 *   lowerCamelCase), float values written as the shortest decimal that reads
 *   back as the same 32-bit float (12.3, not 12.300000190734863; FLT_MAX as
 *   3.4028235e+38), as protoc does, and -0 kept;
 * - the protobuf text format: protobufjs/ext/textformat.
 *
 * Every decode either returns a whole message or throws CodecError; nothing
 * half-decoded is returned.
 */
import protobuf from 'protobufjs';
import protojson from 'protobufjs/ext/protojson';
import textformat from 'protobufjs/ext/textformat';
import { compiledDecoder, INVALID, UNSUPPORTED } from './binary-decoder';
import { compiledEncoder } from './binary-encoder';
import { CodecError } from './errors';
import { fullName, messageTypes, staticClassOf, type StaticMessageClass } from './messages';
import { assertNoDuplicateKeys, compiledReader, jsonKeyCount, mayHoldLoneSurrogate, type ReadContext } from './json-reader';
import { shortestFloat, stringifyJson, writeJson, type JsonWriteOptions } from './json-writer';
import { checkWire, wireRules, type TypeRules } from './wire-check';

export type { JsonWriteOptions };

export interface BinaryReadOptions {
  /**
   * Drop fields the schema does not know. By default they are kept (as
   * protobuf requires of a parser): each decoded message holds them, as their
   * wire bytes, in a non-enumerable `$unknowns` list (the pbjs static code's),
   * and encode() writes them back after the known fields, so a
   * decode/encode round trip keeps what a newer schema added. JSON and the
   * text format never print them (the ProtoJSON spec drops them).
   */
  discardUnknown?: boolean;
}

export interface JsonReadOptions {
  /** Skip object members that name no field instead of refusing them. */
  ignoreUnknownFields?: boolean;
}

/** A decoded message of a type: the static class instance (typed by the caller). */
export type Message = Record<string, unknown>;

export class MessageCodec<T extends object = Message> {
  readonly name: string;
  private readonly rules: TypeRules;
  private readonly cls: StaticMessageClass;
  private readonly fused: ReturnType<typeof compiledDecoder>;
  private readonly encodeFast: ReturnType<typeof compiledEncoder>;

  constructor(readonly type: protobuf.Type) {
    this.name = fullName(type);
    this.rules = wireRules(type);
    const cls = staticClassOf(type);
    if (!cls) throw new Error(`no generated code for ${this.name}: run npm run registry:generate`);
    this.cls = cls;
    this.fused = compiledDecoder(type);
    this.encodeFast = compiledEncoder(type);
  }

  /** Binary encoding of `message` (binary-encoder.ts where the type has a generated encoder, else pbjs). */
  encode(message: T): Uint8Array {
    if (this.encodeFast) return this.encodeFast(message as Message);
    return this.cls.encode(message).finish();
  }

  /** Decodes binary input (unknown fields kept unless `discardUnknown`); throws CodecError REG_ERR_WIRE on malformed bytes. */
  decode(bytes: Uint8Array, options: BinaryReadOptions = {}): T {
    return this.decodeOnePass(bytes, 0, bytes.length, options);
  }

  /**
   * The one-pass decoder (binary-decoder.ts) where the type has one; on bytes
   * it refuses, wire-check.ts says why (path and offset). The pbjs decode
   * after the wire check stays for other types and for values it leaves to
   * pbjs (int64 beyond 2^53).
   */
  private decodeOnePass(bytes: Uint8Array, start: number, end: number, options: BinaryReadOptions): T {
    if (this.fused) {
      try {
        return this.fused(bytes, start, end, options.discardUnknown !== true) as T;
      } catch (err) {
        if (err !== INVALID && err !== UNSUPPORTED) throw err;
      }
    }
    checkWire(this.rules, bytes, start, end);
    return this.decodeChecked(bytes, start, end, options);
  }

  private decodeChecked(bytes: Uint8Array, start: number, end: number, options: BinaryReadOptions): T {
    try {
      const reader = protobuf.Reader.create(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end));
      // protobufjs discards unknown fields by default (Reader.discardUnknown); the spec says keep them.
      reader.discardUnknown = options.discardUnknown === true;
      return this.cls.decode(reader) as T;
    } catch (err) {
      // checkWire accepted the bytes, so this is a limit of the decoder (e.g. depth).
      throw new CodecError('REG_ERR_WIRE', `${this.name}: ${(err as Error).message} at byte offset ${start}`, { offset: start });
    }
  }

  /** Length-delimited stream: each message prefixed by its length as a varint (as writeDelimitedTo / protoc tools). */
  encodeDelimited(messages: Iterable<T>): Uint8Array {
    const writer = protobuf.Writer.create();
    for (const m of messages) {
      writer.fork();
      this.cls.encode(m, writer);
      writer.ldelim();
    }
    return writer.finish();
  }

  /** Decodes a whole length-delimited stream; the error names the message index and the byte offset. */
  decodeDelimited(bytes: Uint8Array, options: BinaryReadOptions = {}): T[] {
    const out: T[] = [];
    for (const { start, end } of delimitedFrames(bytes)) {
      try {
        out.push(this.decodeOnePass(bytes, start, end, options));
      } catch (err) {
        const e = err as CodecError;
        if (!(e instanceof CodecError) || !e.message.includes('at byte offset')) throw err;
        throw new CodecError('REG_ERR_WIRE', `message #${out.length + 1} (starting at byte ${start}): ${e.message}`, { field: e.field, offset: e.offset });
      }
    }
    return out;
  }

  /** ProtoJSON value of `message`: the compiled writer (json-writer.ts) where the type has one. */
  toJson(message: T, options: JsonWriteOptions = {}): unknown {
    const fast = writeJson(this.type, message as Message, options);
    if (fast) return fast;
    return this.toJsonReflective(message, options);
  }

  /** ProtoJSON through protobufjs/ext/protojson plus shapeJson (every type; the reference for the compiled writer). */
  toJsonReflective(message: T, options: JsonWriteOptions = {}): unknown {
    let json: unknown;
    try {
      json = protojson.toJson(this.type, message as Message);
    } catch (err) {
      throw new CodecError('REG_ERR_ENCODE', `${this.name}: cannot write as JSON: ${(err as Error).message}`);
    }
    return shapeJson(this.type, json, options, message as Message);
  }

  toJsonString(message: T, options: JsonWriteOptions & { indent?: number } = {}): string {
    return stringifyJson(this.toJson(message, options), options.indent);
  }

  /** Reads a parsed ProtoJSON value (the reader compiled for the type, json-reader.ts); throws CodecError REG_ERR_JSON naming the field. */
  fromJson(json: unknown, options: JsonReadOptions = {}): T {
    const reader = compiledReader(this.type);
    if (reader) return reader(json, { ignoreUnknownFields: options.ignoreUnknownFields === true, checkStrings: true, keys: 0 }, 0) as T;
    return this.fromJsonReflective(json, options);
  }

  /** ProtoJSON through protobufjs/ext/protojson (every type; the reference for the compiled reader). */
  fromJsonReflective(json: unknown, options: JsonReadOptions = {}): T {
    let reflected: protobuf.Message<object>;
    try {
      reflected = protojson.fromJson(this.type, json, { ignoreUnknownFields: options.ignoreUnknownFields === true });
    } catch (err) {
      const message = (err as Error).message;
      const field = /^\.?([\w.]+?):/.exec(message)?.[1];
      throw new CodecError('REG_ERR_JSON', `invalid JSON: ${message.replace(/^\./, '')}`, { field });
    }
    return this.fromReflected(reflected, 'REG_ERR_JSON');
  }

  /** Reads ProtoJSON text; broken JSON is REG_ERR_JSON_SYNTAX with the position, a key given twice in one object REG_ERR_JSON naming it. */
  fromJsonString(text: string, options: JsonReadOptions = {}): T {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      const message = (err as Error).message;
      const at = /position (\d+)/.exec(message);
      throw new CodecError('REG_ERR_JSON_SYNTAX', `not JSON: ${message}`, { offset: at ? Number(at[1]) : undefined });
    }
    const reader = compiledReader(this.type);
    if (!reader) {
      assertNoDuplicateKeys(text, jsonKeyCount(json));
      return this.fromJsonReflective(json, options);
    }
    const ctx: ReadContext = { ignoreUnknownFields: options.ignoreUnknownFields === true, checkStrings: mayHoldLoneSurrogate(text), keys: 0 };
    let message: T;
    try {
      message = reader(json, ctx, 0) as T;
    } catch (err) {
      // A key given twice explains more than what its last value did wrong.
      assertNoDuplicateKeys(text, jsonKeyCount(json));
      throw err;
    }
    assertNoDuplicateKeys(text, ctx.keys);
    return message;
  }

  /** Protobuf text format (proto field names, one field per line). */
  toText(message: T): string {
    try {
      return textformat.toText(this.type, roundFloats(this.type, message as Message));
    } catch (err) {
      throw new CodecError('REG_ERR_ENCODE', `${this.name}: cannot write as text: ${(err as Error).message}`);
    }
  }

  fromText(text: string): T {
    let reflected: protobuf.Message<object>;
    try {
      reflected = textformat.fromText(this.type, text);
    } catch (err) {
      throw new CodecError('REG_ERR_TEXT', `invalid text for ${this.name}: ${(err as Error).message.replace(/^\./, '')}`);
    }
    return this.fromReflected(reflected, 'REG_ERR_TEXT');
  }

  /**
   * A reflected message as an instance of the static class, through its bytes.
   * The reflected encoder makes them valid, but they still pass the wire check:
   * JSON and text keep a map key `__proto__`, which the static decoder would
   * drop, and the check refuses it as it does in binary input.
   */
  private fromReflected(message: protobuf.Message<object>, code: 'REG_ERR_JSON' | 'REG_ERR_TEXT'): T {
    const bytes = this.type.encode(message).finish();
    try {
      checkWire(this.rules, bytes);
    } catch (err) {
      const e = err as CodecError;
      throw new CodecError(code, `invalid ${code === 'REG_ERR_JSON' ? 'JSON' : 'text'} for ${this.name}: ${e.message.replace(/ at byte offset \d+$/, '')}`, { field: e.field });
    }
    return this.cls.decode(bytes) as T;
  }
}

/** [start, end) of each message of a length-delimited stream; throws REG_ERR_WIRE on a bad or truncated prefix. */
export function* delimitedFrames(bytes: Uint8Array): Generator<{ start: number; end: number }> {
  let pos = 0;
  let index = 0;
  while (pos < bytes.length) {
    index++;
    const prefixAt = pos;
    let len = 0;
    let shift = 0;
    for (;;) {
      if (pos >= bytes.length) throw new CodecError('REG_ERR_WIRE', `message #${index}: truncated length prefix at byte offset ${prefixAt}`, { offset: prefixAt });
      const b = bytes[pos++];
      len += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) break;
      if (shift >= 35) throw new CodecError('REG_ERR_WIRE', `message #${index}: length prefix longer than 5 bytes at byte offset ${prefixAt}`, { offset: prefixAt });
    }
    if (pos + len > bytes.length) {
      throw new CodecError('REG_ERR_WIRE', `message #${index}: length ${len} at byte offset ${prefixAt} runs past the end of the input (${bytes.length - pos} bytes left)`, { offset: prefixAt });
    }
    yield { start: pos, end: pos + len };
    pos += len;
  }
}

const WKT_PREFIX = '.google.protobuf.';

function defaultJson(field: protobuf.Field): unknown {
  if (field instanceof protobuf.MapField) return {};
  if (field.repeated) return [];
  if (field.resolvedType instanceof protobuf.Enum) return Object.keys(field.resolvedType.values).find((k) => field.resolvedType instanceof protobuf.Enum && field.resolvedType.values[k] === 0) ?? 0;
  switch (field.type) {
    case 'string':
    case 'bytes':
      return '';
    case 'bool':
      return false;
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      return '0';
    default:
      return 0;
  }
}

/**
 * Applies JsonWriteOptions and float printing to the JSON that protojson made
 * for `type`. `message` (the value written) restores a float or double -0,
 * which protojson drops as if it were the default.
 */
function shapeJson(type: protobuf.Type, json: unknown, options: JsonWriteOptions, message?: Message): unknown {
  // Well-known types have their own JSON forms (a Timestamp is a string).
  if (type.fullName.startsWith(WKT_PREFIX) || json === null || typeof json !== 'object' || Array.isArray(json)) return json;
  const input = json as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    const has = Object.prototype.hasOwnProperty.call(input, field.jsonName);
    const hasPresence = !field.repeated && !(field instanceof protobuf.MapField) && (field.resolvedType instanceof protobuf.Type || field.optional && field.options?.proto3_optional === true || field.partOf !== null);
    const key = options.protoNames ? (field.protoName ?? field.name) : field.jsonName;
    const value = message?.[field.name];
    if (!has && (field.type === 'float' || field.type === 'double') && !field.repeated && Object.is(value, -0)) {
      out[key] = -0;
      continue;
    }
    if (!has && !(options.emitDefaults && !hasPresence)) continue;
    out[key] = has ? shapeValue(field, input[field.jsonName], options, value) : defaultJson(field);
  }
  // Extensions and anything the loop does not know stay as protojson wrote them.
  for (const [k, v] of Object.entries(input)) if (!type.fieldsArray.some((f) => f.jsonName === k)) out[k] = v;
  return out;
}

function shapeValue(field: protobuf.Field, value: unknown, options: JsonWriteOptions, source: unknown): unknown {
  const one = (v: unknown, from: unknown): unknown => {
    if (field.resolvedType instanceof protobuf.Type) return shapeJson(field.resolvedType, v, options, from as Message | undefined);
    if (field.type === 'float' && typeof v === 'number') return shortestFloat(Object.is(from, -0) ? -0 : v);
    if (field.type === 'double' && Object.is(from, -0)) return -0;
    return v;
  };
  if (field instanceof protobuf.MapField) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = one(v, (source as Record<string, unknown> | undefined)?.[k]);
    return out;
  }
  if (field.repeated && Array.isArray(value)) return value.map((v, i) => one(v, (source as unknown[] | undefined)?.[i]));
  return one(value, source);
}

/**
 * A plain copy of `message` whose float fields hold the shortest decimal of
 * their float32 value, so the text format prints 12.3 rather than
 * 12.300000190734863 (as protoc does); the value reads back bit-identical.
 */
function roundFloats(type: protobuf.Type, message: Message): Message {
  if (type.fullName.startsWith(WKT_PREFIX)) return message;
  const out: Message = {};
  for (const field of type.fieldsArray) {
    // Own properties only: static instances keep scalar defaults on the prototype.
    if (!Object.prototype.hasOwnProperty.call(message, field.name)) continue;
    const value = message[field.name];
    if (value === undefined || value === null) continue;
    const one = (v: unknown): unknown =>
      field.resolvedType instanceof protobuf.Type ? roundFloats(field.resolvedType, v as Message) : field.type === 'float' && typeof v === 'number' ? shortestFloat(v) : v;
    if (field instanceof protobuf.MapField) out[field.name] = Object.fromEntries(Object.entries(value as Message).map(([k, v]) => [k, one(v)]));
    else if (field.repeated && Array.isArray(value)) out[field.name] = value.map(one);
    else out[field.name] = one(value);
  }
  return out;
}

const codecs = new Map<string, MessageCodec>();

/** The codec of a message type by full name (`registry.v1.GetDeviceResponse`) or, within the registry package, short name (`GetDeviceResponse`). */
export function codecFor<T extends object = Message>(name: string): MessageCodec<T> {
  const key = name.replace(/^\./, '');
  let codec = codecs.get(key);
  if (!codec) {
    const type = messageTypes().find((t) => fullName(t) === key) ?? messageTypes().find((t) => fullName(t) === `registry.v1.${key}`);
    if (!type) {
      throw new CodecError('REG_ERR_UNKNOWN_TYPE', `no message type '${name}' in the schema; known: ${messageTypes().map(fullName).join(', ')}`);
    }
    codec = new MessageCodec(type);
    codecs.set(key, codec);
  }
  return codec as unknown as MessageCodec<T>;
}

/** Every message type name the codec knows (map entries left out). */
export function messageTypeNames(): string[] {
  return messageTypes().map(fullName);
}

