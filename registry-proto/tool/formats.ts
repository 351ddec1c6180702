/**
 * Reading and writing messages in the three encodings the CLI speaks, one
 * message or a stream of many:
 *
 *   binary  one message; a stream is length-delimited (varint length before
 *           each message, as protobuf's writeDelimitedTo and parseDelimitedFrom)
 *   json    ProtoJSON; a stream is one message per line (NDJSON) on output and
 *           NDJSON or a JSON array on input
 *   text    the protobuf text format; in a stream, messages are separated by a
 *           line `---` (never valid text format, so never ambiguous)
 */
import type { BinaryReadOptions, JsonReadOptions, JsonWriteOptions, Message, MessageCodec } from '../codec';

export const FORMATS = ['binary', 'json', 'text'] as const;
export type Format = (typeof FORMATS)[number];

export interface ReadOptions extends JsonReadOptions, BinaryReadOptions {
  delimited?: boolean;
}

export interface WriteOptions extends JsonWriteOptions {
  delimited?: boolean;
  /** JSON indentation for a single message (a stream is always one line per message). */
  indent?: number;
}

const TEXT_SEPARATOR = /^---[ \t]*$/m;

/** Parses `input` as `format`; throws CodecError with where the fault is (message # for streams). */
export function readMessages(codec: MessageCodec, format: Format, input: Buffer, options: ReadOptions = {}): Message[] {
  if (format === 'binary') return options.delimited ? codec.decodeDelimited(input, options) : [codec.decode(input, options)];
  const text = input.toString('utf8');
  if (format === 'text') {
    const parts = options.delimited ? text.split(TEXT_SEPARATOR).filter((p) => p.trim() !== '') : [text];
    return parts.map((part, i) => numbered(parts.length, i, () => codec.fromText(part)));
  }
  if (!options.delimited) return [codec.fromJsonString(text, options)];
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    let values: unknown;
    try {
      values = JSON.parse(trimmed);
    } catch {
      return [codec.fromJsonString(trimmed)]; // reports the syntax error and its position
    }
    const items = values as unknown[];
    return items.map((v, i) => numbered(items.length, i, () => codec.fromJson(v, options)));
  }
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines.map((line, i) => numbered(lines.length, i, () => codec.fromJsonString(line, options)));
}

function numbered<T>(count: number, index: number, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (count > 1 && err instanceof Error) err.message = `message #${index + 1}: ${err.message}`;
    throw err;
  }
}

/** Formats `messages` as `format` (a single message unless `delimited`). */
export function writeMessages(codec: MessageCodec, format: Format, messages: Message[], options: WriteOptions = {}): Buffer {
  if (format === 'binary') return Buffer.from(options.delimited ? codec.encodeDelimited(messages) : codec.encode(messages[0]));
  if (format === 'text') return Buffer.from(messages.map((m) => withNewline(codec.toText(m))).join('---\n'));
  if (options.delimited) return Buffer.from(messages.map((m) => `${codec.toJsonString(m, { ...options, indent: undefined })}\n`).join(''));
  return Buffer.from(`${codec.toJsonString(messages[0], { ...options, indent: options.indent })}\n`);
}

const withNewline = (text: string) => (text === '' || text.endsWith('\n') ? text : `${text}\n`);
