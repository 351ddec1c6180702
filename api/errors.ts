/**
 * The HTTP layer's error catalogue. Every error answer is the seed's body
 * `{"error": "<description>"}`; the stable code travels in the
 * `Positioner-Error-Code` header so clients can branch on it.
 */
import type { PositionerErrorCode } from '../firmware/errors';

export const API_ERRORS = {
  API_ERR_MALFORMED_JSON: 400,
  API_ERR_INVALID_BODY: 400,
  API_ERR_PAYLOAD_TOO_LARGE: 413,
  API_ERR_NOT_FOUND: 404,
  API_ERR_METHOD_NOT_ALLOWED: 405,
  API_ERR_UPGRADE_REQUIRED: 426,
  /** A scan command that does not apply now (pause with nothing running, resume a finished scan). */
  API_ERR_SCAN_STATE: 409,
  API_ERR_INTERNAL: 500,
} as const;

export type ApiErrorCode = keyof typeof API_ERRORS;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ApiErrorCode | PositionerErrorCode,
    message: string,
    status?: number,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status ?? (code in API_ERRORS ? API_ERRORS[code as ApiErrorCode] : 500);
  }
}

/** HTTP status of each firmware error. */
export const POSITIONER_ERROR_STATUS: Record<PositionerErrorCode, number> = {
  POS_ERR_BUSY: 503,
  POS_ERR_FAULT: 503,
  POS_ERR_OUT_OF_RANGE: 400,
  POS_ERR_CONFIG_READ_ONLY: 400,
  POS_ERR_HOMING_SWITCH_NOT_FOUND: 500,
  POS_ERR_HOMING_SWITCH_STUCK: 500,
  POS_ERR_HARDWARE: 500,
  POS_ERR_DISCONNECTED: 503,
  POS_ERR_NOT_HOMED: 503,
  POS_ERR_CONTROLLER_REJECTED: 502,
};
