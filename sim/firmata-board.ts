/**
 * A simulated Arduino running ConfigurableFirmata with AccelStepperFirmata:
 * two step/dir steppers and two home switches on digital inputs, as seen
 * from the USB serial line. It speaks the real Firmata wire protocol
 * (hal/firmata-protocol.ts) over any byte stream and moves the same simulated
 * axes (sim/sim-axis.ts) as the simulation backend; put it on the far end of
 * a pty pair with sim/serial-peer.ts.
 *
 * What it answers: the version report and firmware name (also sent at
 * power-up, as the real firmware does), capability and analog-mapping
 * queries, pin modes, digital port reporting (a switch wired to ground with
 * the pull-up on reads 0 when closed; a change is reported at once; each
 * driver's nFAULT output on its own input, low while the driver is in fault),
 * AccelStepperFirmata configure, zero, step, to, enable, stop, report
 * position, speed, acceleration, and multi-stepper configure / to / stop,
 * with the move-complete replies. Each stepper runs its own trapezoid (our
 * planner, in steps) as an AccelStepper does; a multi-stepper move runs at
 * constant speed with both arriving together, as MultiStepper does. A stop
 * halts at once. Unknown or broken bytes are skipped.
 */
import type { AxisName, AxisPair } from '../hal/axes';
import { AXES } from '../hal/axes';
import type { Clock } from '../hal/clock';
import { ACCEL, decodeCustomFloat, decodeInt32, encodeInt32, FIRMATA, PIN_MODE, toSevenBitPairs } from '../hal/firmata-protocol';
import type { StepperAxis } from '../hal/stepper-axis';
import { StepMotionController } from '../firmware/step-controller';
import type { SimAxis } from './sim-axis';

export const SIM_FIRMATA_VERSION = [2, 7] as const;
const FIRMWARE_NAME = 'ConfigurableFirmata.ino';
const PIN_COUNT = 20;

export interface SimFirmataWiring {
  /** Step pin of each axis's driver (which stepper a CONFIG message sets up). */
  stepPin: AxisPair<number>;
  dirPin: AxisPair<number>;
  /** Digital input of each axis's home switch (to ground; closed reads 0 with the pull-up). */
  switchPin: AxisPair<number>;
  /** Digital input wired to each driver's open-drain nFAULT output (DRV8825): reads 0 with the pull-up while the driver is in fault. */
  faultPin: AxisPair<number>;
}

export const DEFAULT_FIRMATA_WIRING: SimFirmataWiring = {
  stepPin: { theta: 2, phi: 3 },
  dirPin: { theta: 5, phi: 6 },
  switchPin: { theta: 9, phi: 10 },
  faultPin: { theta: 11, phi: 12 },
};

export interface SimFirmataOptions {
  clock: Clock;
  axes: AxisPair<SimAxis>;
  wiring?: SimFirmataWiring;
  send: (data: Buffer) => void;
}

interface Device {
  axis: AxisName;
  controller: StepMotionController;
  speedStepsS: number;
  accelStepsS2: number;
  /** Controller position of this device's 0. */
  zeroSteps: number;
  running: boolean;
  /** Bumped by every stop so the end of a halted move says nothing. */
  generation: number;
}

export interface SimFirmataEvent {
  type: 'halt' | 'move' | 'reset' | 'config';
  detail: string;
}

const idle: StepperAxis = { step: () => undefined, setEnabled: () => undefined };

export class SimFirmataBoard {
  /** Every complete sysex or command received, as hex (for tests). */
  readonly received: string[] = [];
  garbageBytes = 0;
  private readonly wiring: SimFirmataWiring;
  private readonly devices = new Map<number, Device>();
  private readonly groups = new Map<number, number[]>();
  private readonly reportedPorts = new Set<number>();
  private readonly pinModes = new Map<number, number>();
  private readonly listeners = new Set<(e: SimFirmataEvent) => void>();
  private readonly lastPortValue = new Map<number, number>();
  private sysex: number[] | null = null;
  private message: number[] = [];

  constructor(private readonly opts: SimFirmataOptions) {
    this.wiring = opts.wiring ?? DEFAULT_FIRMATA_WIRING;
  }

  onEvent(listener: (e: SimFirmataEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Power-up (or the reset button): everything forgotten, version and firmware name sent. */
  powerUp(): void {
    this.resetState();
    this.emit('reset', 'power-up');
    this.sendVersion();
    this.sendFirmware();
  }

  /** The position of device `n` as the board believes it (steps). */
  devicePosition(n: number): number | null {
    const d = this.devices.get(n);
    return d ? this.position(d) : null;
  }

  receive(data: Buffer): void {
    for (const byte of data) this.receiveByte(byte);
  }

  private emit(type: SimFirmataEvent['type'], detail: string): void {
    for (const l of this.listeners) l({ type, detail });
  }

  private send(bytes: number[]): void {
    this.opts.send(Buffer.from(bytes));
  }

  private receiveByte(byte: number): void {
    if (this.sysex) {
      if (byte === FIRMATA.END_SYSEX) {
        const frame = this.sysex;
        this.sysex = null;
        this.received.push(Buffer.from([FIRMATA.START_SYSEX, ...frame, FIRMATA.END_SYSEX]).toString('hex'));
        this.handleSysex(frame);
      } else if (byte & 0x80) {
        this.garbageBytes += this.sysex.length + 1; // a command byte inside a sysex: the frame was broken
        this.sysex = null;
        this.receiveByte(byte);
      } else if (this.sysex.length < 256) {
        this.sysex.push(byte);
      }
      return;
    }
    if (byte === FIRMATA.START_SYSEX) {
      this.sysex = [];
      this.message = [];
      return;
    }
    if (byte & 0x80) {
      if (this.message.length > 0) this.garbageBytes += this.message.length;
      this.message = [byte];
    } else if (this.message.length > 0) {
      this.message.push(byte);
    } else {
      this.garbageBytes++;
      return;
    }
    const command = this.message[0];
    const kind = command < 0xf0 ? command & 0xf0 : command;
    const length = kind === FIRMATA.REPORT_VERSION || kind === FIRMATA.SYSTEM_RESET ? 1 : kind === FIRMATA.REPORT_DIGITAL || kind === FIRMATA.REPORT_ANALOG ? 2 : 3;
    if (this.message.length < length) return;
    const msg = this.message;
    this.message = [];
    this.received.push(Buffer.from(msg).toString('hex'));
    this.handleMessage(kind, msg);
  }

  private handleMessage(kind: number, msg: number[]): void {
    switch (kind) {
      case FIRMATA.REPORT_VERSION:
        return this.sendVersion();
      case FIRMATA.SYSTEM_RESET:
        this.resetState();
        return this.emit('reset', 'system reset');
      case FIRMATA.SET_PIN_MODE:
        this.pinModes.set(msg[1], msg[2]);
        return;
      case FIRMATA.REPORT_DIGITAL: {
        const port = msg[0] & 0x0f;
        if (msg[1]) {
          this.reportedPorts.add(port);
          this.lastPortValue.delete(port);
          this.reportPorts();
        } else {
          this.reportedPorts.delete(port);
        }
        return;
      }
      default:
        return; // digital/analog writes: nothing wired to them here
    }
  }

  private handleSysex(frame: number[]): void {
    const [id, ...data] = frame;
    switch (id) {
      case FIRMATA.QUERY_FIRMWARE:
        return this.sendFirmware();
      case FIRMATA.CAPABILITY_QUERY:
        return this.sendCapabilities();
      case FIRMATA.ANALOG_MAPPING_QUERY: {
        const mapping = Array.from({ length: PIN_COUNT }, (_, pin) => (pin >= 14 ? pin - 14 : 0x7f));
        return this.send([FIRMATA.START_SYSEX, FIRMATA.ANALOG_MAPPING_RESPONSE, ...mapping, FIRMATA.END_SYSEX]);
      }
      case FIRMATA.SAMPLING_INTERVAL:
        return;
      case FIRMATA.ACCELSTEPPER:
        return this.accelStepper(data);
      default:
        this.garbageBytes += frame.length + 2;
    }
  }

  private accelStepper(data: number[]): void {
    const [command, n] = data;
    if (command === ACCEL.CONFIG) return this.configure(n, data);
    if (command === ACCEL.MULTI_CONFIG) {
      this.groups.set(n, data.slice(2));
      return;
    }
    if (command === ACCEL.MULTI_TO) return this.multiTo(n, data.slice(2));
    if (command === ACCEL.MULTI_STOP) {
      for (const dev of this.groups.get(n) ?? []) this.stopDevice(dev);
      return this.send([FIRMATA.START_SYSEX, FIRMATA.ACCELSTEPPER, ACCEL.MULTI_MOVE_COMPLETE, n, FIRMATA.END_SYSEX]);
    }
    const d = this.devices.get(n);
    if (!d) return;
    switch (command) {
      case ACCEL.ZERO:
        d.zeroSteps = d.controller.positionSteps()[d.axis];
        return;
      case ACCEL.STEP:
        return this.moveDevice(n, d, this.position(d) + decodeInt32(data.slice(2, 7)), d.speedStepsS, d.accelStepsS2, () => this.moveComplete(n, d));
      case ACCEL.TO:
        return this.moveDevice(n, d, decodeInt32(data.slice(2, 7)), d.speedStepsS, d.accelStepsS2, () => this.moveComplete(n, d));
      case ACCEL.ENABLE:
        this.opts.axes[d.axis].stepper.setEnabled(data[2] === 1);
        return;
      case ACCEL.STOP:
        this.stopDevice(n);
        return this.moveComplete(n, d);
      case ACCEL.REPORT_POSITION:
        return this.send([FIRMATA.START_SYSEX, FIRMATA.ACCELSTEPPER, ACCEL.REPORT_POSITION, n, ...encodeInt32(this.position(d)), FIRMATA.END_SYSEX]);
      case ACCEL.SET_ACCELERATION:
        d.accelStepsS2 = decodeCustomFloat(data.slice(2, 6));
        return;
      case ACCEL.SET_SPEED:
        d.speedStepsS = Math.abs(decodeCustomFloat(data.slice(2, 6)));
        return;
      default:
        this.garbageBytes += data.length;
    }
  }

  private configure(n: number, data: number[]): void {
    const iface = data[2];
    const stepPin = data[3];
    const axis = AXES.find((a) => this.wiring.stepPin[a] === stepPin);
    if ((iface >> 4) !== 1 || axis === undefined) {
      this.emit('config', `device ${n}: step pin ${stepPin} drives no simulated axis`);
      return;
    }
    this.devices.get(n)?.controller.stop();
    const sim = this.opts.axes[axis];
    // Watch the switch after every step, so a change is reported the moment it happens.
    const stepper: StepperAxis = {
      step: (direction, atUs) => {
        try {
          sim.stepper.step(direction, atUs);
        } finally {
          // A driver in fault refuses the step and pulls its nFAULT line low.
          this.reportPorts();
        }
      },
      setEnabled: (on) => sim.stepper.setEnabled(on),
    };
    const noSwitch = { isTriggered: () => false };
    const hardware = { theta: { stepper: idle, homeSwitch: noSwitch }, phi: { stepper: idle, homeSwitch: noSwitch } };
    hardware[axis] = { stepper, homeSwitch: sim.homeSwitch };
    const controller = new StepMotionController({
      clock: this.opts.clock,
      hardware,
      // The planner works in this device's steps: one "degree" is one step.
      stepsPerDeg: { theta: 1, phi: 1 },
      homing: { theta: { seekDegS: 1, feedDegS: 1, pullOffDeg: 1 }, phi: { seekDegS: 1, feedDegS: 1, pullOffDeg: 1 } },
      travelDeg: { theta: 1, phi: 1 },
      homingAccelDegS2: () => 1,
    });
    this.devices.set(n, { axis, controller, speedStepsS: 1, accelStepsS2: 0, zeroSteps: 0, running: false, generation: 0 });
    this.emit('config', `device ${n}: ${axis} (step ${stepPin})`);
  }

  private position(d: Device): number {
    return d.controller.positionSteps()[d.axis] - d.zeroSteps;
  }

  /** Moves one device to `target` (its own frame) with a trapezoid; accel 0 means constant speed. */
  private moveDevice(n: number, d: Device, target: number, speedStepsS: number, accelStepsS2: number, done: () => void): void {
    this.stopDevice(n);
    const targetSteps = { theta: 0, phi: 0 };
    targetSteps[d.axis] = target + d.zeroSteps;
    const generation = d.generation;
    d.running = true;
    this.emit('move', `device ${n} to ${target}`);
    d.controller.move({ targetSteps, speedDegS: Math.max(speedStepsS, 1e-3), accelDegS2: accelStepsS2 > 0 ? accelStepsS2 : 1e9 }, (end) => {
      if (d.generation !== generation) return;
      d.running = false;
      if (end.outcome === 'completed') done();
    });
  }

  private moveComplete(n: number, d: Device): void {
    this.send([FIRMATA.START_SYSEX, FIRMATA.ACCELSTEPPER, ACCEL.MOVE_COMPLETE, n, ...encodeInt32(this.position(d)), FIRMATA.END_SYSEX]);
  }

  private stopDevice(n: number): void {
    const d = this.devices.get(n);
    if (!d) return;
    d.generation++;
    if (d.running) this.emit('halt', `device ${n}`);
    d.running = false;
    d.controller.stop();
  }

  /** MultiStepper: straight line at constant speed, limited by each member's max speed; all arrive together. */
  private multiTo(group: number, data: number[]): void {
    const members = (this.groups.get(group) ?? []).filter((dev) => this.devices.has(dev));
    const targets = members.map((_, i) => decodeInt32(data.slice(i * 5, i * 5 + 5)));
    let durationS = 0;
    members.forEach((dev, i) => {
      const d = this.devices.get(dev)!;
      durationS = Math.max(durationS, Math.abs(targets[i] - this.position(d)) / Math.max(d.speedStepsS, 1e-3));
    });
    let left = members.length;
    const finished = () => {
      if (--left === 0) this.send([FIRMATA.START_SYSEX, FIRMATA.ACCELSTEPPER, ACCEL.MULTI_MOVE_COMPLETE, group, FIRMATA.END_SYSEX]);
    };
    if (left === 0) return finished();
    members.forEach((dev, i) => {
      const d = this.devices.get(dev)!;
      const distance = Math.abs(targets[i] - this.position(d));
      this.moveDevice(dev, d, targets[i], durationS > 0 ? distance / durationS : 1, 0, finished);
    });
  }

  /** Sends the value of every reported port whose value changed (switches read 0 when closed, nFAULT 0 while in fault). */
  private reportPorts(): void {
    for (const port of this.reportedPorts) {
      let value = 0;
      for (let bit = 0; bit < 8; bit++) {
        const pin = port * 8 + bit;
        const switchOf = AXES.find((a) => this.wiring.switchPin[a] === pin);
        const faultOf = AXES.find((a) => this.wiring.faultPin[a] === pin);
        if (switchOf === undefined && faultOf === undefined) continue;
        const pulledUp = this.pinModes.get(pin) === PIN_MODE.PULLUP;
        const low = switchOf !== undefined ? this.opts.axes[switchOf].homeSwitch.isTriggered() : this.opts.axes[faultOf!].faults.driver !== null;
        if (low ? false : pulledUp) value |= 1 << bit;
      }
      if (this.lastPortValue.get(port) === value) continue;
      this.lastPortValue.set(port, value);
      this.send([FIRMATA.DIGITAL_MESSAGE | port, value & 0x7f, (value >> 7) & 0x7f]);
    }
  }

  private sendVersion(): void {
    this.send([FIRMATA.REPORT_VERSION, SIM_FIRMATA_VERSION[0], SIM_FIRMATA_VERSION[1]]);
  }

  private sendFirmware(): void {
    const name = toSevenBitPairs([...Buffer.from(FIRMWARE_NAME, 'ascii')]);
    this.send([FIRMATA.START_SYSEX, FIRMATA.QUERY_FIRMWARE, SIM_FIRMATA_VERSION[0], SIM_FIRMATA_VERSION[1], ...name, FIRMATA.END_SYSEX]);
  }

  private sendCapabilities(): void {
    const out: number[] = [FIRMATA.START_SYSEX, FIRMATA.CAPABILITY_RESPONSE];
    for (let pin = 0; pin < PIN_COUNT; pin++) {
      if (pin >= 2) out.push(PIN_MODE.INPUT, 1, PIN_MODE.OUTPUT, 1, PIN_MODE.PULLUP, 1);
      if (pin >= 2 && pin < 14) out.push(PIN_MODE.STEPPER, 1);
      if (pin >= 14) out.push(PIN_MODE.ANALOG, 10);
      out.push(0x7f);
    }
    out.push(FIRMATA.END_SYSEX);
    this.send(out);
  }

  private resetState(): void {
    for (const n of this.devices.keys()) this.stopDevice(n);
    this.devices.clear();
    this.groups.clear();
    this.reportedPorts.clear();
    this.pinModes.clear();
    this.lastPortValue.clear();
    this.sysex = null;
    this.message = [];
  }
}
