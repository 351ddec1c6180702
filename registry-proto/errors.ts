/**
 * The registry tooling's error catalogue. Callers and tests branch on `code`,
 * never on the message; the message says what was wrong and where (the field
 * path, the byte offset, the JSON position or the text line).
 */
export const REGISTRY_ERRORS = {
  /** Bytes that are not a valid encoding of the message type (truncated, bad tag, wrong wire type, bad UTF-8). */
  REG_ERR_WIRE: 400,
  /** Text that is not JSON at all. */
  REG_ERR_JSON_SYNTAX: 400,
  /** JSON that does not match the message type (unknown field, wrong type, bad timestamp). */
  REG_ERR_JSON: 400,
  /** Protobuf text format that does not parse or does not match the message type. */
  REG_ERR_TEXT: 400,
  /** A message that cannot be written (e.g. a timestamp outside 0001-01-01..9999-12-31 as JSON). */
  REG_ERR_ENCODE: 400,
  /** A message type name that the schema does not define. */
  REG_ERR_UNKNOWN_TYPE: 400,
} as const;

export type RegistryErrorCode = keyof typeof REGISTRY_ERRORS;

export interface CodecErrorDetails {
  /** Dotted field path from the top message, e.g. `client_connectivity.latency["fra"].latency_ms`. */
  field?: string;
  /** Byte offset in the input (binary input) or character position (JSON). */
  offset?: number;
}

export class CodecError extends Error {
  readonly field?: string;
  readonly offset?: number;
  constructor(
    readonly code: RegistryErrorCode,
    message: string,
    details: CodecErrorDetails = {},
  ) {
    super(message);
    this.name = 'CodecError';
    this.field = details.field;
    this.offset = details.offset;
  }
}
