/**
 * The parts of the Firmata protocol (2.x) and of ConfigurableFirmata's
 * AccelStepperFirmata (sysex 0x62) that the positioner uses, as constants
 * and pure codecs: the commands the driver sends (`firmataCommand`), a
 * reader for what the board says (`FirmataReader`), and the number codecs
 * the simulated board (sim/firmata-board.ts) decodes with.
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

/** STRING_DATA sysex (the board's log lines, e.g. "Booting device. Stand by..."). */
export const STRING_DATA = 0x71;

/** The bytes of the commands the driver sends (Firmata 2.x and AccelStepperFirmata). */
export const firmataCommand = {
  systemReset: (): number[] => [FIRMATA.SYSTEM_RESET],
  reportVersion: (): number[] => [FIRMATA.REPORT_VERSION],
  samplingInterval: (ms: number): number[] => [FIRMATA.START_SYSEX, FIRMATA.SAMPLING_INTERVAL, ms & 0x7f, (ms >> 7) & 0x7f, FIRMATA.END_SYSEX],
  setPinMode: (pin: number, mode: number): number[] => [FIRMATA.SET_PIN_MODE, pin, mode],
  /** SET_DIGITAL_PIN_VALUE: one output pin high (1) or low (0). */
  setDigitalPinValue: (pin: number, high: boolean): number[] => [FIRMATA.SET_DIGITAL_PIN_VALUE, pin, high ? 1 : 0],
  reportDigital: (port: number, on: boolean): number[] => [FIRMATA.REPORT_DIGITAL | port, on ? 1 : 0],
  /** A step/dir driver (interface 0x10: one "wire", whole steps) with an explicit "no pin inverted" byte. */
  stepperConfigDriver: (device: number, stepPin: number, dirPin: number): number[] => accelSysex(ACCEL.CONFIG, device, 0x10, stepPin, dirPin, 0x00),
  stepperZero: (device: number): number[] => accelSysex(ACCEL.ZERO, device),
  stepperTo: (device: number, steps: number): number[] => accelSysex(ACCEL.TO, device, ...encodeInt32(steps)),
  stepperStop: (device: number): number[] => accelSysex(ACCEL.STOP, device),
  stepperReportPosition: (device: number): number[] => accelSysex(ACCEL.REPORT_POSITION, device),
  stepperSpeed: (device: number, stepsS: number): number[] => accelSysex(ACCEL.SET_SPEED, device, ...encodeCustomFloat(stepsS)),
  stepperAcceleration: (device: number, stepsS2: number): number[] => accelSysex(ACCEL.SET_ACCELERATION, device, ...encodeCustomFloat(stepsS2)),
};

function accelSysex(...data: number[]): number[] {
  return [FIRMATA.START_SYSEX, FIRMATA.ACCELSTEPPER, ...data, FIRMATA.END_SYSEX];
}

/** What a ConfigurableFirmata board says, decoded. */
export type FirmataMessage =
  | { kind: 'version'; major: number; minor: number }
  | { kind: 'firmware'; major: number; minor: number; name: string }
  | { kind: 'string'; text: string }
  | { kind: 'digital'; port: number; value: number }
  /** REPORT_POSITION's answer (`complete` false) or MOVE_COMPLETE (true): device `device` is at `steps`. */
  | { kind: 'stepper'; device: number; steps: number; complete: boolean }
  | { kind: 'group-complete'; group: number }
  | { kind: 'other'; bytes: number[] };

/**
 * The host's side of the wire: bytes in, messages out. A byte that belongs to
 * no message (line noise, a wrong baud rate) is counted in `garbageBytes` and
 * skipped; a sysex frame broken by a command byte is dropped.
 */
export class FirmataReader {
  garbageBytes = 0;
  messages = 0;
  private sysex: number[] | null = null;
  private message: number[] = [];

  constructor(private readonly onMessage: (m: FirmataMessage) => void) {}

  feed(data: Buffer): void {
    for (const byte of data) this.byte(byte);
  }

  private byte(byte: number): void {
    if (this.sysex) {
      if (byte === FIRMATA.END_SYSEX) {
        const frame = this.sysex;
        this.sysex = null;
        return this.emit(decodeSysex(frame));
      }
      if (byte < 0x80) {
        if (this.sysex.length < 4096) this.sysex.push(byte);
        return;
      }
      this.garbageBytes += this.sysex.length + 1;
      this.sysex = null;
    }
    if (byte === FIRMATA.START_SYSEX) {
      if (this.message.length > 0) this.garbageBytes += this.message.length;
      this.message = [];
      this.sysex = [];
      return;
    }
    if (byte >= 0x80) {
      if (this.message.length > 0) this.garbageBytes += this.message.length;
      const kind = byte < 0xf0 ? byte & 0xf0 : byte;
      if (kind !== FIRMATA.DIGITAL_MESSAGE && kind !== 0xe0 && kind !== FIRMATA.REPORT_VERSION) {
        this.garbageBytes++;
        this.message = [];
        return;
      }
      this.message = [byte];
      return;
    }
    if (this.message.length === 0) {
      this.garbageBytes++;
      return;
    }
    this.message.push(byte);
    if (this.message.length < 3) return;
    const [command, lsb, msb] = this.message;
    this.message = [];
    if (command === FIRMATA.REPORT_VERSION) return this.emit({ kind: 'version', major: lsb, minor: msb });
    if ((command & 0xf0) === FIRMATA.DIGITAL_MESSAGE) return this.emit({ kind: 'digital', port: command & 0x0f, value: lsb | (msb << 7) });
    this.emit({ kind: 'other', bytes: [command, lsb, msb] });
  }

  private emit(m: FirmataMessage): void {
    this.messages++;
    this.onMessage(m);
  }
}

function decodeSysex(frame: number[]): FirmataMessage {
  const [id, ...data] = frame;
  const text = (pairs: number[]) => String.fromCharCode(...Array.from({ length: Math.floor(pairs.length / 2) }, (_, i) => pairs[2 * i] | (pairs[2 * i + 1] << 7)));
  if (id === FIRMATA.QUERY_FIRMWARE && data.length >= 2) return { kind: 'firmware', major: data[0], minor: data[1], name: text(data.slice(2)) };
  if (id === STRING_DATA) return { kind: 'string', text: text(data) };
  if (id === FIRMATA.ACCELSTEPPER) {
    const [command, device] = data;
    if ((command === ACCEL.REPORT_POSITION || command === ACCEL.MOVE_COMPLETE) && data.length >= 7) {
      return { kind: 'stepper', device, steps: decodeInt32(data.slice(2, 7)), complete: command === ACCEL.MOVE_COMPLETE };
    }
    if (command === ACCEL.MULTI_MOVE_COMPLETE && data.length >= 2) return { kind: 'group-complete', group: device };
  }
  return { kind: 'other', bytes: [FIRMATA.START_SYSEX, ...frame, FIRMATA.END_SYSEX] };
}
