/**
 * The space service's error catalogue. Every error answer has the body
 * `{"error": "<what went wrong and what to do>", "code": "SPACE_ERR_..."}`;
 * clients branch on `code`, never on the message.
 *
 * Status policy (the seed fixes 400/404/503 for its own cases and leaves the
 * rest open): a body that is not JSON is 400; well-formed input with a value
 * out of bounds or of the wrong type (a limit above its maximum included) is
 * 422 and is never clamped; the seed's "location category on the global
 * endpoint" is 400.
 */
export const SPACE_ERRORS = {
  SPACE_ERR_MALFORMED_JSON: 400,
  SPACE_ERR_LOCATION_CATEGORY_ON_GLOBAL: 400,
  SPACE_ERR_INVALID: 422,
  SPACE_ERR_PAYLOAD_TOO_LARGE: 413,
  SPACE_ERR_FORBIDDEN_ORIGIN: 403,
  SPACE_ERR_NOT_FOUND: 404,
  SPACE_ERR_METHOD_NOT_ALLOWED: 405,
  SPACE_ERR_VAPID_NOT_CONFIGURED: 503,
  SPACE_ERR_INTERNAL: 500,
} as const;

export type SpaceErrorCode = keyof typeof SPACE_ERRORS;

export class SpaceError extends Error {
  readonly status: number;
  constructor(
    readonly code: SpaceErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SpaceError';
    this.status = SPACE_ERRORS[code];
  }
}
