/**
 * The parts of the Firmata protocol (2.x) and of ConfigurableFirmata's
 * AccelStepperFirmata (sysex 0x62) that the positioner uses, as constants
 * and pure codecs. The driver talks through firmata.js, which encodes for
 * it; the simulated board (sim/firmata-board.ts) decodes with these.
 *
 * Wire format in short: MIDI-like messages (a command byte >= 0x80, then
 * 7-bit data bytes) and sysex frames 0xF0 <id> <7-bit data...> 0xF7.
 * AccelStepperFirmata numbers are 32-bit signed integers in five 7-bit
 * bytes (sign in bit 3 of the last) and "custom floats": a 23-bit
 * significand, a 4-bit exponent of ten biased by 11, and a sign bit, in four
 * 7-bit bytes.
 */

export const FIRMATA = {
  DIGITAL_MESSAGE: 0x90, // | port, lsb, msb
  REPORT_ANALOG: 0xc0, // | pin, enable
  REPORT_DIGITAL: 0xd0, // | port, enable
  SET_PIN_MODE: 0xf4, // pin, mode
  SET_DIGITAL_PIN_VALUE: 0xf5, // pin, value
  REPORT_VERSION: 0xf9,
  SYSTEM_RESET: 0xff,
  START_SYSEX: 0xf0,
  END_SYSEX: 0xf7,
  ANALOG_MAPPING_QUERY: 0x69,
  ANALOG_MAPPING_RESPONSE: 0x6a,
  CAPABILITY_QUERY: 0x6b,
  CAPABILITY_RESPONSE: 0x6c,
  PIN_STATE_QUERY: 0x6d,
  QUERY_FIRMWARE: 0x79,
  SAMPLING_INTERVAL: 0x7a,
  ACCELSTEPPER: 0x62,
} as const;

export const PIN_MODE = { INPUT: 0x00, OUTPUT: 0x01, ANALOG: 0x02, STEPPER: 0x08, PULLUP: 0x0b } as const;

/** AccelStepperFirmata sub-commands (the byte after 0x62). */
export const ACCEL = {
  CONFIG: 0x00,
  ZERO: 0x01,
  STEP: 0x02,
  TO: 0x03,
  ENABLE: 0x04,
  STOP: 0x05,
  REPORT_POSITION: 0x06,
  SET_ACCELERATION: 0x08,
  SET_SPEED: 0x09,
  MOVE_COMPLETE: 0x0a,
  MULTI_CONFIG: 0x20,
  MULTI_TO: 0x21,
  MULTI_STOP: 0x23,
  MULTI_MOVE_COMPLETE: 0x24,
} as const;

/** AccelStepperFirmata interface type in a CONFIG message (bits 4-6): a step/dir driver. */
export const STEPPER_TYPE_DRIVER = 1;

export function encodeInt32(value: number): number[] {
  const magnitude = Math.abs(Math.trunc(value));
  const bytes = [magnitude & 0x7f, (magnitude >> 7) & 0x7f, (magnitude >> 14) & 0x7f, (magnitude >> 21) & 0x7f, (magnitude >> 28) & 0x07];
  if (value < 0) bytes[4] |= 0x08;
  return bytes;
}

export function decodeInt32(bytes: readonly number[]): number {
  const magnitude = (bytes[0] & 0x7f) | ((bytes[1] & 0x7f) << 7) | ((bytes[2] & 0x7f) << 14) | ((bytes[3] & 0x7f) << 21) | ((bytes[4] & 0x07) * 2 ** 28);
  return bytes[4] & 0x08 ? -magnitude : magnitude;
}

/**
 * Encodes a speed or acceleration as AccelStepperFirmata reads it. Unlike
 * firmata.js's encoder (whose exponent overflows its 4 bits for values from
 * 100,000 up, e.g. an acceleration of 400,000 steps/s^2), this picks the
 * exponent that keeps the most significant digits and fits: any value from
 * 1e-11 to 8.3e10 keeps 6-7 significant digits.
 */
export function encodeCustomFloat(value: number): number[] {
  const magnitude = Math.abs(value);
  let exponent = -11;
  while (exponent < 4 && Math.round(magnitude / 10 ** exponent) >= 2 ** 23) exponent++;
  const significand = Math.min(2 ** 23 - 1, Math.round(magnitude / 10 ** exponent));
  return [significand & 0x7f, (significand >> 7) & 0x7f, (significand >> 14) & 0x7f, ((significand >> 21) & 0x03) | (((exponent + 11) & 0x0f) << 2) | ((value < 0 ? 1 : 0) << 6)];
}

export function decodeCustomFloat(bytes: readonly number[]): number {
  const significand = (bytes[0] & 0x7f) | ((bytes[1] & 0x7f) << 7) | ((bytes[2] & 0x7f) << 14) | ((bytes[3] & 0x03) << 21);
  const exponent = ((bytes[3] >> 2) & 0x0f) - 11;
  const value = significand * 10 ** exponent;
  return (bytes[3] >> 6) & 0x01 ? -value : value;
}

/** Splits bytes (< 0x100) into the 7-bit pairs a sysex string is sent as. */
export function toSevenBitPairs(bytes: readonly number[]): number[] {
  return bytes.flatMap((b) => [b & 0x7f, (b >> 7) & 0x7f]);
}
