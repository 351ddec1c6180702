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

  // The registry server (HTTP status of each).
  /** No device with that id. */
  REG_ERR_NOT_FOUND: 404,
  /** Deleting a device shared in from elsewhere (Tailscale answers 501 too). */
  REG_ERR_EXTERNAL_DEVICE: 501,
  /** No, malformed, unknown, revoked or expired API key. */
  REG_ERR_UNAUTHENTICATED: 401,
  /** A route that is not an IP prefix in canonical form. */
  REG_ERR_INVALID_ROUTE: 400,
  /** More routes than a device may have (MAX_ROUTES_PER_DEVICE in server/routes.ts). */
  REG_ERR_TOO_MANY_ROUTES: 400,
  /** A request body the operation does not take (e.g. an id that differs from the path). */
  REG_ERR_BAD_REQUEST: 400,
  /** Accept names neither JSON nor protobuf. */
  REG_ERR_NOT_ACCEPTABLE: 406,
  /** Content-Type is neither JSON nor protobuf. */
  REG_ERR_UNSUPPORTED_MEDIA_TYPE: 415,
  REG_ERR_PAYLOAD_TOO_LARGE: 413,
  REG_ERR_ROUTE_NOT_FOUND: 404,
  REG_ERR_METHOD_NOT_ALLOWED: 405,
  REG_ERR_INTERNAL: 500,
  /** A device file to import that is not a list of device records. */
  REG_ERR_IMPORT: 400,
} as const;

export type RegistryErrorCode = keyof typeof REGISTRY_ERRORS;

/** An error of the registry server or store; `status` is its HTTP status. */
export class RegistryError extends Error {
  readonly status: number;
  constructor(
    readonly code: RegistryErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RegistryError';
    this.status = REGISTRY_ERRORS[code];
  }
}

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
