/**
 * A simulated Arduino Uno running ConfigurableFirmata 3.3.0 with
 * AccelStepperFirmata (AccelStepper 1.57), built as docs/hardware.md says
 * (digital and analog I/O, AccelStepper, FirmataExt, FirmataReporting),
 * seen from its USB serial line, with two step/dir drivers, two home switches
 * and two nFAULT inputs wired to simulated axes (sim/sim-axis.ts). Put it on
 * the far end of a pty pair with sim/serial-peer.ts.
 *
 * Everything here is taken from the firmware's source (firmata/
 * ConfigurableFirmata: examples/ConfigurableFirmata/ConfigurableFirmata.ino,
 * src/ConfigurableFirmata.cpp, src/AccelStepperFirmata.cpp,
 * src/utility/AccelStepper.cpp, src/DigitalInputFirmata.cpp,
 * src/FirmataReporting.cpp) and checked against the real firmware on a
 * simulated ATmega328P (test/fixtures/firmata-real-*.json); each behaviour
 * cites its function. The ones a driver can trip over:
 * - power-up: the sketch blinks its version for 1.875 s with its serial port
 *   open but unread: the first 63 bytes the host sends wait in the receive
 *   ring, the rest are lost; then it sends VERSION, FIRMWARE and a STRING and
 *   resets itself;
 * - one message is parsed per pass of loop(), then every running stepper is
 *   run once; a pass with nothing to step takes ~52 us, each step ~224 us
 *   (measured): one axis alone tops out near 3,620 steps/s, two together near
 *   2,000 steps/s each, whatever speed is asked;
 * - ACCELSTEPPER_STOP stops at once (the stepper is no longer run) and
 *   reports MOVE_COMPLETE, but AccelStepper keeps its speed: the next TO
 *   starts at that speed, first in the old direction; ACCELSTEPPER_ZERO
 *   forgets it; MULTISTEPPER_STOP only clears the group's flag and reports the
 *   group complete: steppers started with TO run on;
 * - switch (and nFAULT) inputs are read every sampling interval (19 ms by
 *   default), a port is reported only when it changed;
 * - every CONFIG allocates a new AccelStepper without freeing the old one;
 *   SYSTEM_RESET frees them all; once the heap is gone the sketch hangs.
 */
import type { AxisName, AxisPair } from '../hal/axes';
import { AXES } from '../hal/axes';
import type { Clock, TimerHandle } from '../hal/clock';
import type { OutputPin } from '../hal/output-pin';
import { ACCEL, decodeCustomFloat, decodeInt32, encodeInt32, FIRMATA, PIN_MODE, toSevenBitPairs } from '../hal/firmata-protocol';
import { AccelStepperModel } from './accel-stepper';
import type { SimAxis } from './sim-axis';

/** The Firmata protocol version (printVersion()) and the firmware's own (setFirmwareNameAndVersion() in the example sketch). */
export const SIM_FIRMATA_PROTOCOL_VERSION = [2, 7] as const;
export const SIM_FIRMATA_FIRMWARE = { name: 'ConfigurableFirmata', major: 3, minor: 3 } as const;

/** Timing and memory of the sketch on a 16 MHz ATmega328P. */
export const UNO_FIRMATA = {
  /** ConfigurableFirmata.cpp blinkVersion(): 3 x (40 + 210) ms, 250 ms, 3 x (40 + 210) ms, 125 ms for version 3.3. */
  blinkUs: 1_875_000,
  /** One pass of loop() with no step to make (the real firmware, test/fixtures/firmata-real-exchanges.json "rates": one axis alone steps every ~276 us, 3,620-3,650 steps/s). */
  loopUs: 52,
  /** One step: runSpeed(), step1() with its 1 us pulse, computeNewSpeed() in soft float (two axes together step every ~500 us, 2,000 steps/s each). */
  stepUs: 224,
  /** HardwareSerial's 64-byte receive ring keeps one slot free. */
  rxBufferBytes: 63,
  /** ConfigurableFirmata.h MAX_DATA_BYTES on an AVR: a longer sysex is discarded. */
  maxSysexBytes: 64,
  /** FirmataReporting::reset(): the default sampling interval, ms. */
  samplingIntervalMs: 19,
  /**
   * Heap left for `new` once the sketch runs (2 KB RAM, 828 B static, the stack), and what an
   * AccelStepper and a MultiStepper take with malloc's header: calibrated so that 14 steppers fit
   * and the 15th and 16th (the seventh reconfiguration without a reset) do not, as seen.
   */
  heapBytes: 1100,
  stepperBytes: 72,
  groupBytes: 25,
} as const;

const PIN_COUNT = 20;
const PWM_PINS = new Set([3, 5, 6, 9, 10, 11]);
const MAX_ACCELSTEPPERS = 10;
const MAX_GROUPS = 5;
const MULTISTEPPER_MAX_STEPPERS = 10;
const STRING_DATA = 0x71;
/** PIN_MODE_IGNORE: the serial pins D0/D1. */
const PIN_MODE_IGNORE = 0x7f;

export interface SimFirmataWiring {
  /** Step pin of each axis's driver (which stepper a CONFIG message sets up). */
  stepPin: AxisPair<number>;
  dirPin: AxisPair<number>;
  /** Digital input of each axis's home switch (to ground; closed reads 0 with the pull-up). */
  switchPin: AxisPair<number>;
  /** Digital input wired to each driver's open-drain nFAULT output (DRV8825): reads 0 with the pull-up while the driver is in fault. */
  faultPin: AxisPair<number>;
  /** Digital output pulsed as a measurement trigger (SET_DIGITAL_PIN_VALUE), wired to `outputs[triggerPin]`. */
  triggerPin?: number;
}

export const DEFAULT_FIRMATA_WIRING: SimFirmataWiring = {
  stepPin: { theta: 2, phi: 3 },
  dirPin: { theta: 5, phi: 6 },
  switchPin: { theta: 9, phi: 10 },
  faultPin: { theta: 11, phi: 12 },
  // A3 (D17): the CNC shield's coolant-enable pin, free with Firmata: the measurement trigger.
  triggerPin: 17,
};

export interface SimFirmataOptions {
  clock: Clock;
  axes: AxisPair<SimAxis>;
  wiring?: SimFirmataWiring;
  send: (data: Buffer) => void;
  /** Outputs wired to digital pins, by pin number (a trigger line to an instrument). */
  outputs?: Record<number, OutputPin>;
  /** The MCU's loop timing (default the Uno's, measured); see `firmataLoopFor`. */
  loop?: { loopUs: number; stepUs: number };
}

/**
 * The loop timing of a board whose lone axis makes `maxStepRateStepsS`, in the
 * Uno's proportions (as hal/firmata-step-rate.ts loopTimingFor assumes): for
 * tests of the API's timing on a board fast enough not to be the limit (a
 * 32-bit board running ConfigurableFirmata), not a measured board.
 */
export function firmataLoopFor(maxStepRateStepsS: number): { loopUs: number; stepUs: number } {
  const scale = 1e6 / maxStepRateStepsS / (UNO_FIRMATA.loopUs + UNO_FIRMATA.stepUs);
  return { loopUs: UNO_FIRMATA.loopUs * scale, stepUs: UNO_FIRMATA.stepUs * scale };
}

export interface SimFirmataEvent {
  type: 'halt' | 'move' | 'reset' | 'config' | 'crash' | 'overflow';
  detail: string;
}

/** One `new AccelStepper` (stepper[deviceNum] points at the latest; older ones leak). */
interface Stepper {
  model: AccelStepperModel;
  /** The simulated axis its step pin drives, or null (pins wired to nothing). */
  axis: AxisName | null;
  /** setPinsInverted(): the DIR pin's sense flipped (bit 0 of the invert byte). */
  dirInverted: boolean;
}

interface Group {
  /** MultiStepper keeps references to the stepper objects it was given (a later CONFIG of a slot does not change them). */
  members: Stepper[];
  /** groupIsRunning[] */
  running: boolean;
}

type BoardState = 'off' | 'booting' | 'running' | 'crashed';

export class SimFirmataBoard {
  /** Every complete message parsed, as hex (for tests). */
  readonly received: string[] = [];
  /** Bytes lost because the receive ring was full. */
  droppedBytes = 0;
  readonly stats = { stepperAllocations: 0, heapUsedBytes: 0, loopsWithSteps: 0 };
  private readonly wiring: SimFirmataWiring;
  private readonly listeners = new Set<(e: SimFirmataEvent) => void>();
  private state: BoardState = 'off';
  private readonly rx: number[] = [];
  // ConfigurableFirmata.cpp parse() state.
  private parsingSysex = false;
  /** storedInputData: kept between messages, so a short message reads the previous one's bytes past its end. */
  private readonly stored: number[] = new Array(UNO_FIRMATA.maxSysexBytes).fill(0);
  private sysexBytes = 0;
  private waitForData = 0;
  private multiByteCommand = 0;
  private multiByteChannel = 0;
  private multiByteData: number[] = [];
  // Features' state.
  private readonly stepper: (Stepper | null)[] = new Array(MAX_ACCELSTEPPERS).fill(null);
  private readonly isRunning: boolean[] = new Array(MAX_ACCELSTEPPERS).fill(false);
  private readonly group: (Group | null)[] = new Array(MAX_GROUPS).fill(null);
  private readonly groupStepperCount: number[] = new Array(MAX_GROUPS).fill(0);
  private readonly pinMode: number[] = new Array(PIN_COUNT).fill(PIN_MODE.OUTPUT);
  private readonly outputLevel: boolean[] = new Array(PIN_COUNT).fill(false);
  private readonly portConfigInputs: number[] = [0, 0, 0];
  private readonly reportPins: boolean[] = [false, false, false];
  private readonly previousPins: number[] = [0, 0, 0];
  private samplingIntervalMs: number = UNO_FIRMATA.samplingIntervalMs;
  private previousSampleMs = 0;
  /** When the CPU is next free: the end of the last pass of loop() that stepped. */
  private cpuFreeUs = 0;
  private loopTimer: TimerHandle | null = null;
  private bootTimer: TimerHandle | null = null;

  private readonly loopTiming: { loopUs: number; stepUs: number };

  constructor(private readonly opts: SimFirmataOptions) {
    this.wiring = opts.wiring ?? DEFAULT_FIRMATA_WIRING;
    this.loopTiming = opts.loop ?? { loopUs: UNO_FIRMATA.loopUs, stepUs: UNO_FIRMATA.stepUs };
  }

  onEvent(listener: (e: SimFirmataEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Power-up or the reset button: RAM is gone; setup() runs (blink, hello, reset), then loop(). */
  powerUp(): void {
    this.loopTimer?.cancel();
    this.bootTimer?.cancel();
    this.loopTimer = null;
    this.stepper.fill(null);
    this.isRunning.fill(false);
    this.group.fill(null);
    this.groupStepperCount.fill(0);
    this.leakedBytes = 0;
    this.stats.heapUsedBytes = 0;
    this.rx.length = 0;
    this.resetParser();
    this.state = 'booting';
    this.emit('reset', 'power-up');
    // setup(): Firmata.begin() opens the port, then blinkVersion() (the ring fills unread), printVersion(), printFirmwareVersion().
    this.bootTimer = this.opts.clock.setTimerAt(this.opts.clock.nowUs() + UNO_FIRMATA.blinkUs, () => {
      this.bootTimer = null;
      this.state = 'running';
      this.sendVersion();
      this.sendFirmware();
      this.sendString('Booting device. Stand by...');
      // setup(): Firmata.parse(SYSTEM_RESET).
      this.systemReset();
      this.previousSampleMs = this.millis();
      this.schedule();
      this.drainRx();
    });
  }

  /** Power off (the USB cable pulled from a board powered by it): nothing runs, nothing is said, nothing is heard. */
  powerOff(): void {
    this.loopTimer?.cancel();
    this.bootTimer?.cancel();
    this.loopTimer = this.bootTimer = null;
    this.state = 'off';
    this.emit('reset', 'power-off');
  }

  /** True between power-up and the end of setup(). */
  booting(): boolean {
    return this.state === 'booting';
  }

  crashed(): boolean {
    return this.state === 'crashed';
  }

  /** The position of device `n` as the board believes it (steps), or null without a stepper. */
  devicePosition(n: number): number | null {
    return this.stepper[n]?.model.currentPos ?? null;
  }

  /** The AccelStepper behind device `n` (for tests: its speed after a stop, its target). */
  deviceModel(n: number): AccelStepperModel | null {
    return this.stepper[n]?.model ?? null;
  }

  deviceRunning(n: number): boolean {
    return this.stepper[n] !== null && this.isRunning[n];
  }

  samplingInterval(): number {
    return this.samplingIntervalMs;
  }

  /** Bytes from the host: into the receive ring (HardwareSerial's RX interrupt), read by loop(). */
  receive(data: Buffer): void {
    if (this.state === 'off' || this.state === 'crashed') return;
    if (this.state === 'running') {
      // The loop reads a message per pass (~60 us) while bytes come one per 87 us at 115200: the ring never fills.
      this.rx.push(...data);
      return this.drainRx();
    }
    const before = this.droppedBytes;
    for (const byte of data) {
      if (this.rx.length >= UNO_FIRMATA.rxBufferBytes) this.droppedBytes++;
      else this.rx.push(byte);
    }
    if (this.droppedBytes > before) this.emit('overflow', `${this.droppedBytes} bytes lost while the sketch blinked`);
  }

  private emit(type: SimFirmataEvent['type'], detail: string): void {
    for (const l of this.listeners) l({ type, detail });
  }

  private send(bytes: number[]): void {
    if (this.state !== 'running') return;
    this.opts.send(Buffer.from(bytes));
  }

  private millis(): number {
    return Math.floor(this.opts.clock.nowUs() / 1000);
  }

  /**
   * loop(): `while (Firmata.available()) { processInput(); if (!isParsingMessage()) break; }`
   * then firmataExt.report(): one complete message per pass, then the steppers run once.
   * The bytes arrive at once here (the line is faster than the loop), so each message is
   * followed by one stepper pass at the same instant.
   */
  private drainRx(): void {
    while (this.rx.length > 0 && this.state === 'running') {
      const complete = this.parse(this.rx.shift()!);
      if (complete) this.runSteppers(this.opts.clock.nowUs());
    }
    this.schedule();
  }

  // ---- ConfigurableFirmata.cpp FirmataClass::parse() ----

  private resetParser(): void {
    this.parsingSysex = false;
    this.sysexBytes = 0;
    this.waitForData = 0;
    this.multiByteCommand = 0;
  }

  /** One byte into the parser; true when it completed a message (loop() then moves on). */
  private parse(byte: number): boolean {
    if (byte === FIRMATA.SYSTEM_RESET) {
      // "A system reset shall always be done, regardless of the state of the parser."
      this.resetParser();
      this.record([byte]);
      this.systemReset();
      return true;
    }
    if (this.parsingSysex) {
      if (byte === FIRMATA.END_SYSEX) {
        this.parsingSysex = false;
        const frame = this.stored.slice(0, this.sysexBytes);
        this.record([FIRMATA.START_SYSEX, ...frame, FIRMATA.END_SYSEX]);
        this.processSysex(frame);
        return true;
      }
      if (this.sysexBytes === UNO_FIRMATA.maxSysexBytes) {
        // "Discarding input message, out of buffer"
        this.sendString('Discarding input message, out of buffer');
        this.resetParser();
        return true;
      }
      // Any byte but END_SYSEX is data here, a START_SYSEX or a command byte included.
      this.stored[this.sysexBytes++] = byte;
      return false;
    }
    if (this.waitForData > 0 && byte < 0x80) {
      this.waitForData--;
      this.multiByteData.push(byte);
      if (this.waitForData === 0 && this.multiByteCommand) {
        const msg = [this.multiByteCommand | this.multiByteChannel, ...this.multiByteData];
        this.record(this.multiByteCommand >= 0xf0 ? [this.multiByteCommand, ...this.multiByteData] : msg);
        this.processMultiByte(this.multiByteCommand, this.multiByteChannel, this.multiByteData);
        this.multiByteCommand = 0;
        return true;
      }
      return false;
    }
    const command = byte < 0xf0 ? byte & 0xf0 : byte;
    this.multiByteChannel = byte & 0x0f;
    this.multiByteData = [];
    switch (command) {
      case 0xe0: // ANALOG_MESSAGE
      case FIRMATA.DIGITAL_MESSAGE:
      case FIRMATA.SET_PIN_MODE:
      case FIRMATA.SET_DIGITAL_PIN_VALUE:
        this.waitForData = 2;
        this.multiByteCommand = command;
        return false;
      case FIRMATA.REPORT_ANALOG:
      case FIRMATA.REPORT_DIGITAL:
        this.waitForData = 1;
        this.multiByteCommand = command;
        return false;
      case FIRMATA.START_SYSEX:
        this.parsingSysex = true;
        this.sysexBytes = 0;
        return false;
      case FIRMATA.REPORT_VERSION:
        this.record([byte]);
        this.sendVersion();
        return true;
      default:
        // A data byte with no command, or an unknown command: ignored.
        return false;
    }
  }

  private record(bytes: number[]): void {
    this.received.push(Buffer.from(bytes).toString('hex'));
  }

  private processMultiByte(command: number, channel: number, data: number[]): void {
    // parse() stores the data bytes reversed: storedInputData[1] is the first byte received.
    switch (command) {
      case FIRMATA.SET_PIN_MODE:
        return this.setPinMode(data[0], data[1]);
      case FIRMATA.SET_DIGITAL_PIN_VALUE:
        return this.setPinValue(data[0], data[1]);
      case FIRMATA.REPORT_DIGITAL:
        return this.reportDigital(channel, data[0]);
      default:
        return; // digital and analog writes, analog reporting: nothing wired to them here
    }
  }

  private processSysex(frame: number[]): void {
    if (frame.length === 0) return;
    const [id, ...argv] = frame;
    switch (id) {
      case FIRMATA.QUERY_FIRMWARE:
        return this.sendFirmware();
      case STRING_DATA:
        return;
      case FIRMATA.CAPABILITY_QUERY:
        return this.sendCapabilities();
      case FIRMATA.ANALOG_MAPPING_QUERY: {
        // AnalogInputFirmata: A0..A5 on D14..D19; without it in the build nothing answers (firmata.js then waits forever).
        const mapping = Array.from({ length: PIN_COUNT }, (_, pin) => (pin >= 14 ? pin - 14 : 0x7f));
        return this.send([FIRMATA.START_SYSEX, FIRMATA.ANALOG_MAPPING_RESPONSE, ...mapping, FIRMATA.END_SYSEX]);
      }
      case FIRMATA.SAMPLING_INTERVAL:
        // FirmataReporting::handleSysex(): two 7-bit bytes, at least MINIMUM_SAMPLING_INTERVAL (1 ms).
        if (argv.length > 1) this.samplingIntervalMs = Math.max(1, argv[0] + (argv[1] << 7));
        // elapsed() compares with the new interval on the very next pass.
        if (this.state === 'running') this.schedule();
        return;
      case FIRMATA.ACCELSTEPPER:
        return this.accelStepper(argv);
      default:
        return;
    }
  }

  // ---- ConfigurableFirmata.ino systemResetCallback() and the features' reset() ----

  private systemReset(): void {
    for (let pin = 0; pin < PIN_COUNT; pin++) {
      if (pin < 2) this.pinMode[pin] = PIN_MODE_IGNORE;
      else this.setPinMode(pin, pin >= 14 ? PIN_MODE.ANALOG : PIN_MODE.OUTPUT);
    }
    // DigitalInputFirmata::reset()
    this.reportPins.fill(false);
    this.portConfigInputs.fill(0);
    this.previousPins.fill(0);
    // FirmataReporting::reset()
    this.samplingIntervalMs = UNO_FIRMATA.samplingIntervalMs;
    this.previousSampleMs = this.millis();
    // AccelStepperFirmata::reset(): free() every stepper and group (isRunning[] and groupStepperCount[] are left as they were);
    // steppers an older CONFIG of a slot left behind are in no array and stay allocated.
    this.stepper.fill(null);
    this.group.fill(null);
    this.updateHeap();
    this.emit('reset', 'system reset');
  }

  /** Bytes of steppers a CONFIG replaced without freeing. */
  private leakedBytes = 0;

  private updateHeap(): void {
    const live = this.stepper.filter((s) => s !== null).length * UNO_FIRMATA.stepperBytes + this.group.filter((g) => g !== null).length * UNO_FIRMATA.groupBytes;
    this.stats.heapUsedBytes = this.leakedBytes + live;
  }

  /**
   * DigitalOutputFirmata.cpp handleSetPinValueCallback(): a digital pin in OUTPUT mode is written
   * (digitalWrite, Firmata.setPinState); in any other mode the message does nothing.
   */
  private setPinValue(pin: number, value: number): void {
    if (pin >= PIN_COUNT || this.pinMode[pin] !== PIN_MODE.OUTPUT) return;
    this.writePin(pin, value !== 0);
  }

  /** digitalWrite() on an output: the level, and the edge on the wired output (the trigger line). */
  private writePin(pin: number, high: boolean): void {
    if (this.outputLevel[pin] === high) return;
    this.outputLevel[pin] = high;
    const out = this.opts.outputs?.[pin];
    out?.write(high, this.opts.clock.nowUs());
  }

  /** The level the board drives on an output pin. */
  pinLevel(pin: number): boolean {
    return this.outputLevel[pin] ?? false;
  }

  /** FirmataClass::setPinMode() -> the features' handlePinMode(). */
  private setPinMode(pin: number, mode: number): void {
    if (pin >= PIN_COUNT || this.pinMode[pin] === PIN_MODE_IGNORE) return;
    // DigitalOutputFirmata::handlePinMode(): OUTPUT mode starts low (digitalWrite LOW, then pinMode OUTPUT).
    if (mode === PIN_MODE.OUTPUT) this.writePin(pin, false);
    this.pinMode[pin] = mode;
    // DigitalInputFirmata::handlePinMode(): INPUT and PULLUP pins are inputs of their port; any other mode clears the bit.
    const port = pin >> 3;
    if (mode === PIN_MODE.INPUT || mode === PIN_MODE.PULLUP) this.portConfigInputs[port] |= 1 << (pin & 7);
    else this.portConfigInputs[port] &= ~(1 << (pin & 7));
  }

  // ---- DigitalInputFirmata ----

  /** reportDigital(): reporting on sends the port at once (forced). */
  private reportDigital(port: number, enable: number): void {
    if (port >= this.reportPins.length) return;
    this.reportPins[port] = enable !== 0;
    if (enable) this.outputPort(port, true);
  }

  /** The level of a digital pin: switches and nFAULT pull to ground; an open input with the pull-up reads 1. */
  private readPin(pin: number): number {
    const switchOf = AXES.find((a) => this.wiring.switchPin[a] === pin);
    if (switchOf !== undefined && this.opts.axes[switchOf].homeSwitch.isTriggered()) return 0;
    const faultOf = AXES.find((a) => this.wiring.faultPin[a] === pin);
    if (faultOf !== undefined && this.opts.axes[faultOf].faults.driver !== null) return 0;
    return this.pinMode[pin] === PIN_MODE.PULLUP ? 1 : 0;
  }

  /** outputPort(): only the port's input pins, sent when changed (or forced). */
  private outputPort(port: number, force: boolean): void {
    let value = 0;
    for (let bit = 0; bit < 8; bit++) {
      const pin = port * 8 + bit;
      if (pin < PIN_COUNT && this.portConfigInputs[port] & (1 << bit) && this.readPin(pin)) value |= 1 << bit;
    }
    if (!force && this.previousPins[port] === value) return;
    this.previousPins[port] = value;
    this.send([FIRMATA.DIGITAL_MESSAGE | port, value & 0x7f, (value >> 7) & 0x7f]);
  }

  /**
   * FirmataReporting::elapsed() is true on the first pass after more than `samplingInterval`
   * ms since the last sample (then previousMillis moves on by one interval, or catches up);
   * DigitalInputFirmata::report() then reads the reported ports. Null while no port is reported.
   */
  private nextSampleUs(): number | null {
    if (this.state !== 'running' || !this.reportPins.some((on) => on)) return null;
    return (this.previousSampleMs + this.samplingIntervalMs + 1) * 1000;
  }

  private sample(atUs: number): void {
    const nowMs = Math.floor(atUs / 1000);
    this.previousSampleMs += this.samplingIntervalMs;
    if (nowMs - this.previousSampleMs > this.samplingIntervalMs) this.previousSampleMs = nowMs - this.samplingIntervalMs;
    for (let port = 0; port < this.reportPins.length; port++) if (this.reportPins[port]) this.outputPort(port, false);
  }

  // ---- AccelStepperFirmata::handleSysex() ----

  private accelStepper(argv: number[]): void {
    const [command, deviceNum] = argv;
    if (deviceNum === undefined || deviceNum >= MAX_ACCELSTEPPERS) return;
    const s = this.stepper[deviceNum];
    switch (command) {
      case ACCEL.CONFIG:
        return this.configure(deviceNum, argv);
      case ACCEL.STEP:
        if (!s) return;
        s.model.move(decodeInt32(argv.slice(2, 7)));
        this.isRunning[deviceNum] = true;
        return this.emit('move', `device ${deviceNum} by ${decodeInt32(argv.slice(2, 7))}`);
      case ACCEL.ZERO:
        s?.model.setCurrentPosition(0);
        return;
      case ACCEL.TO:
        if (!s) return;
        s.model.moveTo(decodeInt32(argv.slice(2, 7)));
        this.isRunning[deviceNum] = true;
        return this.emit('move', `device ${deviceNum} to ${decodeInt32(argv.slice(2, 7))}`);
      case ACCEL.ENABLE:
        if (s?.axis) this.opts.axes[s.axis].enabled = argv[2] !== 0;
        return;
      case ACCEL.STOP:
        // stop() only sets a deceleration target; isRunning = false means run() is never called again: it halts now.
        if (!s) return;
        s.model.stop();
        if (this.isRunning[deviceNum]) this.emit('halt', `device ${deviceNum}`);
        this.isRunning[deviceNum] = false;
        return this.reportPosition(deviceNum, true);
      case ACCEL.REPORT_POSITION:
        return this.reportPosition(deviceNum, false);
      case ACCEL.SET_ACCELERATION: {
        // "<HACK>": 0 means no acceleration: MAX_ACCELERATION (1e6 steps/s^2 in AccelStepperFirmata.h).
        const accel = decodeCustomFloat(argv.slice(2, 6));
        s?.model.setAcceleration(accel === 0 ? MAX_ACCELERATION : accel);
        return;
      }
      case ACCEL.SET_SPEED:
        s?.model.setMaxSpeed(decodeCustomFloat(argv.slice(2, 6)));
        return;
      case ACCEL.MULTI_CONFIG:
        return this.configureGroup(deviceNum, argv.slice(2));
      case ACCEL.MULTI_TO:
        return this.groupTo(deviceNum, argv.slice(2));
      case ACCEL.MULTI_STOP:
        // Only the group's flag; steppers that run on their own (TO) are not touched.
        if (this.group[deviceNum]) this.group[deviceNum]!.running = false;
        return this.reportGroupComplete(deviceNum);
      default:
        return;
    }
  }

  /** ACCELSTEPPER_CONFIG: `new AccelStepper` whether or not the slot had one (the old one leaks). */
  private configure(deviceNum: number, argv: number[]): void {
    const iface = argv[2];
    const stepPin = argv[3];
    const dirPin = argv[4];
    if (stepPin === undefined || dirPin === undefined || this.pinMode[stepPin] === PIN_MODE_IGNORE || this.pinMode[dirPin] === PIN_MODE_IGNORE) return;
    this.setPinMode(stepPin, PIN_MODE.STEPPER);
    this.setPinMode(dirPin, PIN_MODE.STEPPER);
    if (!this.allocate(UNO_FIRMATA.stepperBytes)) return;
    if (this.stepper[deviceNum]) this.leakedBytes += UNO_FIRMATA.stepperBytes;
    this.stats.stepperAllocations++;
    const wireCount = (iface >> 4) & 0x07;
    const axis = wireCount === 1 ? (AXES.find((a) => this.wiring.stepPin[a] === stepPin && this.wiring.dirPin[a] === dirPin) ?? null) : null;
    // "If there is still another byte to read we must be inverting some pins": `argc >= index` holds even when
    // the message ends at the direction pin, so the byte read is whatever the buffer held from an earlier message.
    const invertPins = this.stored[1 + 5];
    const model = new AccelStepperModel();
    // "Default to no acceleration": maxSpeed 2 then 1 (so the change is seen), acceleration MAX_ACCELERATION.
    model.setMaxSpeed(2);
    model.setMaxSpeed(1);
    model.setAcceleration(MAX_ACCELERATION);
    this.stepper[deviceNum] = { model, axis, dirInverted: (invertPins & 0x01) !== 0 };
    this.updateHeap();
    this.isRunning[deviceNum] = false;
    this.emit('config', `device ${deviceNum}: ${axis ?? 'no simulated axis'} (step ${stepPin}, dir ${dirPin})`);
  }

  /** operator new on the AVR heap; out of memory the sketch dies (here: hangs, as the real one was seen to). */
  private allocate(bytes: number): boolean {
    if (this.stats.heapUsedBytes + bytes > UNO_FIRMATA.heapBytes) {
      this.state = 'crashed';
      this.loopTimer?.cancel();
      this.emit('crash', `out of heap after ${this.stats.stepperAllocations} stepper allocations (${this.stats.heapUsedBytes} bytes in use)`);
      return false;
    }
    return true;
  }

  private configureGroup(groupNum: number, devices: number[]): void {
    if (groupNum >= MAX_GROUPS) return;
    if (!this.group[groupNum]) {
      if (!this.allocate(UNO_FIRMATA.groupBytes)) return;
      this.group[groupNum] = { members: [], running: false };
      this.updateHeap();
    }
    const g = this.group[groupNum]!;
    for (const n of devices) {
      const s = this.stepper[n];
      if (!s) continue;
      this.groupStepperCount[groupNum]++;
      // MultiStepper::addStepper(): refuses past MULTISTEPPER_MAX_STEPPERS; the count above goes up anyway.
      if (g.members.length < MULTISTEPPER_MAX_STEPPERS) g.members.push(s);
    }
    g.running = false;
  }

  /**
   * MULTISTEPPER_TO -> MultiStepper::moveTo(): the longest member's time at its max speed sets a
   * constant speed for every member (no ramps); run() steps each with runSpeed() until there.
   */
  private groupTo(groupNum: number, data: number[]): void {
    const g = this.group[groupNum];
    if (!g) return;
    g.running = true;
    const targets = g.members.map((_, i) => decodeInt32(data.slice(i * 5, i * 5 + 5)));
    let longestS = 0;
    g.members.forEach((m, i) => {
      longestS = Math.max(longestS, Math.abs(targets[i] - m.model.currentPos) / m.model.maxSpeedStepsS);
    });
    g.members.forEach((m, i) => {
      const distance = targets[i] - m.model.currentPos;
      m.model.moveTo(targets[i]);
      m.model.setConstantSpeed(longestS > 0 ? distance / longestS : 0);
    });
    this.schedule();
  }

  private reportPosition(deviceNum: number, complete: boolean): void {
    const s = this.stepper[deviceNum];
    if (!s) return;
    this.send([FIRMATA.START_SYSEX, FIRMATA.ACCELSTEPPER, complete ? ACCEL.MOVE_COMPLETE : ACCEL.REPORT_POSITION, deviceNum, ...encodeInt32(s.model.currentPos), FIRMATA.END_SYSEX]);
  }

  private reportGroupComplete(groupNum: number): void {
    if (!this.group[groupNum]) return;
    this.send([FIRMATA.START_SYSEX, FIRMATA.ACCELSTEPPER, ACCEL.MULTI_MOVE_COMPLETE, groupNum, FIRMATA.END_SYSEX]);
  }

  // ---- AccelStepperFirmata::update(): the steppers, once per pass of loop() ----

  /**
   * One pass over the steppers starting at `startUs`: groups first, then each running
   * stepper in device order; a stepper that steps holds the CPU for `stepUs`, so the next
   * one is checked later. Ends the pass at the time the CPU is free again.
   */
  private runSteppers(startUs: number): void {
    if (this.state !== 'running') return;
    let tUs = startUs;
    let steps = 0;
    for (let i = 0; i < MAX_GROUPS; i++) {
      const g = this.group[i];
      if (!g || !g.running) continue;
      let left = false;
      for (const m of g.members) {
        if (m.model.distanceToGo() === 0) continue;
        left = true;
        const dir = m.model.runConstantSpeed(tUs);
        if (dir !== 0) {
          this.pulse(m, dir, tUs);
          tUs += this.loopTiming.stepUs;
          steps++;
        }
      }
      if (!left) {
        g.running = false;
        this.reportGroupComplete(i);
      }
    }
    for (let i = 0; i < MAX_ACCELSTEPPERS; i++) {
      const s = this.stepper[i];
      if (!s || !this.isRunning[i]) continue;
      const { stepped, running } = s.model.run(tUs);
      if (stepped !== 0) {
        this.pulse(s, stepped, tUs);
        tUs += this.loopTiming.stepUs;
        steps++;
      }
      if (!running) {
        this.isRunning[i] = false;
        this.reportPosition(i, true);
      }
    }
    if (steps > 0) {
      this.stats.loopsWithSteps++;
      this.cpuFreeUs = tUs;
    }
  }

  /** step1(): DIR, then a 1 us STEP pulse; a driver in fault (nFAULT low) ignores it. */
  private pulse(s: Stepper, direction: 1 | -1, atUs: number): void {
    if (!s.axis) return;
    try {
      this.opts.axes[s.axis].stepper.step(s.dirInverted ? (-direction as 1 | -1) : direction, atUs);
    } catch {
      // The DRV8825's outputs are off while it is in fault: the pulse is lost.
    }
  }

  /** The next pass that has a step to make (or a stepper to see at rest): the first pass of the idle loop at or after it; null if none. */
  private nextPassUs(): number | null {
    // Idle passes follow each other every loopUs from the end of the last busy one; a step waits for the next.
    const firstUs = this.cpuFreeUs + this.loopTiming.loopUs;
    let dueUs = Infinity;
    for (let i = 0; i < MAX_ACCELSTEPPERS; i++) {
      const s = this.stepper[i];
      // A running stepper with no interval (at rest at its target) is seen complete on the next pass.
      if (s && this.isRunning[i]) dueUs = Math.min(dueUs, s.model.nextDueUs() ?? firstUs);
    }
    for (const g of this.group) {
      if (!g?.running) continue;
      for (const m of g.members) dueUs = Math.min(dueUs, m.model.distanceToGo() === 0 ? firstUs : (m.model.nextDueUs() ?? firstUs));
    }
    if (dueUs === Infinity) return null;
    return dueUs <= firstUs ? firstUs : firstUs + Math.ceil((dueUs - firstUs) / this.loopTiming.loopUs) * this.loopTiming.loopUs;
  }

  /** One timer for the loop: the next pass with a step or the next input sample, whichever comes first. */
  private schedule(): void {
    this.loopTimer?.cancel();
    this.loopTimer = null;
    if (this.state !== 'running') return;
    const atUs = Math.min(this.nextPassUs() ?? Infinity, this.nextSampleUs() ?? Infinity);
    if (atUs === Infinity) return;
    this.loopTimer = this.opts.clock.setTimerAt(Math.max(atUs, this.opts.clock.nowUs()), () => {
      this.loopTimer = null;
      this.catchUp();
    });
  }

  /**
   * Runs every pass and sample due by now, in time order: once on a discrete-event clock (the
   * timer fires at its instant), many on a wall clock whose timers fire late (the MCU did not wait).
   */
  private catchUp(): void {
    const nowUs = this.opts.clock.nowUs();
    for (let guard = 0; guard < 10_000_000 && this.state === 'running'; guard++) {
      const passUs = this.nextPassUs() ?? Infinity;
      const sampleUs = this.nextSampleUs() ?? Infinity;
      const atUs = Math.min(passUs, sampleUs);
      if (atUs > nowUs) break;
      if (sampleUs <= passUs) this.sample(sampleUs);
      else this.runSteppers(passUs);
    }
    this.schedule();
  }

  // ---- what the board says by itself or when asked ----

  private sendVersion(): void {
    this.send([FIRMATA.REPORT_VERSION, SIM_FIRMATA_PROTOCOL_VERSION[0], SIM_FIRMATA_PROTOCOL_VERSION[1]]);
  }

  private sendFirmware(): void {
    const name = toSevenBitPairs([...Buffer.from(SIM_FIRMATA_FIRMWARE.name, 'ascii')]);
    this.send([FIRMATA.START_SYSEX, FIRMATA.QUERY_FIRMWARE, SIM_FIRMATA_FIRMWARE.major, SIM_FIRMATA_FIRMWARE.minor, ...name, FIRMATA.END_SYSEX]);
  }

  private sendString(text: string): void {
    this.send([FIRMATA.START_SYSEX, STRING_DATA, ...toSevenBitPairs([...Buffer.from(text, 'ascii')]), FIRMATA.END_SYSEX]);
  }

  /** Each feature's handleCapability() in the order the sketch adds them: input, output, analog in, PWM, stepper. */
  private sendCapabilities(): void {
    const out: number[] = [FIRMATA.START_SYSEX, FIRMATA.CAPABILITY_RESPONSE];
    for (let pin = 0; pin < PIN_COUNT; pin++) {
      if (pin >= 2) {
        out.push(PIN_MODE.INPUT, 1, PIN_MODE.PULLUP, 1, PIN_MODE.OUTPUT, 1);
        if (pin >= 14) out.push(PIN_MODE.ANALOG, 10);
        if (PWM_PINS.has(pin)) out.push(PIN_MODE_PWM, 8);
        out.push(PIN_MODE.STEPPER, 21);
      }
      out.push(0x7f);
    }
    out.push(FIRMATA.END_SYSEX);
    this.send(out);
  }
}

/** AccelStepperFirmata.h: the "no acceleration" acceleration. */
const MAX_ACCELERATION = 1_000_000;
const PIN_MODE_PWM = 0x03;
