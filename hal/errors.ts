/**
 * One error type for every HAL capability, with a small shared set of kinds
 * (as embedded-hal's ErrorKind): callers branch on `kind`, never on messages.
 */
export type HalErrorKind =
  | 'DRIVER_FAULT' // the driver reported a failure (over-current, over-temperature, enable lost)
  | 'DISCONNECTED' // the link to the hardware is gone (serial line dropped, board reset)
  | 'TIMEOUT' // the hardware did not answer in time
  | 'PROTOCOL' // the hardware answered something we cannot understand
  | 'OTHER';

export class HalError extends Error {
  readonly kind: HalErrorKind;
  constructor(kind: HalErrorKind, message: string) {
    super(message);
    this.name = 'HalError';
    this.kind = kind;
  }
}
