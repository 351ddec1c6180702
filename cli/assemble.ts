/**
 * The composition root: wires a positioner from a clock, a motion controller
 * and its hardware. The firmware never imports a driver or the simulator;
 * this file is where they meet.
 */
import type { AxisPair } from '../hal/axes';
import { mapAxes } from '../hal/axes';
import type { Clock } from '../hal/clock';
import type { PositionerConfig } from '../firmware/config';
import { AXIS_RANGE_DEG, axisStepsPerDeg } from '../firmware/config';
import { Positioner } from '../firmware/positioner';
import { StepMotionController } from '../firmware/step-controller';
import { degToSteps } from '../firmware/units';
import { SimAxis } from '../sim/sim-axis';
import { SimOutputPin } from '../sim/trigger-output';
import { GrblDriver, type GrblDriverOptions } from '../hal/grbl-driver';
import { SimGrblController, type SimGrblOptions } from '../sim/grbl-controller';
import { FirmataDriver, type FirmataDriverOptions, type FirmataWiring } from '../hal/firmata-driver';
import { DEFAULT_FIRMATA_WIRING, SimFirmataBoard, type SimFirmataOptions } from '../sim/firmata-board';
import type { SerialTrace } from '../hal/serial-link';

/** How the simulated machine is built, in user units. */
export interface SimAxisSettings {
  /** Where the shaft really is at power-on, degrees from the home switch (the firmware does not know). */
  powerOnDeg: number;
  /** Motor pull-out rate in full steps per second; faster stepping stalls the motor. */
  maxFullStepRateHz: number;
  /** Switch hysteresis, degrees. */
  switchHysteresisDeg: number;
}

export interface SimSettings {
  axes: AxisPair<SimAxisSettings>;
}

export function defaultSimSettings(): SimSettings {
  return {
    axes: {
      theta: { powerOnDeg: 37.5, maxFullStepRateHz: 1000, switchHysteresisDeg: 0.05 },
      phi: { powerOnDeg: 123.25, maxFullStepRateHz: 1000, switchHysteresisDeg: 0.05 },
    },
  };
}

export interface SimulatedPositioner {
  positioner: Positioner;
  controller: StepMotionController;
  /** The simulated hardware, for tests and diagnostics: true positions, lost steps, faults. */
  sim: AxisPair<SimAxis>;
  /** The simulated trigger output (a scan's trigger source pulses it). */
  trigger: SimOutputPin;
}

function stepsPerDegOf(config: PositionerConfig): AxisPair<number> {
  return { theta: axisStepsPerDeg(config, 'theta'), phi: axisStepsPerDeg(config, 'phi') };
}

/** The simulated axes (motor, drive train, switch) of the machine `config` and `simSettings` describe. */
export function buildSimAxes(config: PositionerConfig, simSettings: SimSettings = defaultSimSettings()): AxisPair<SimAxis> {
  const perDeg = stepsPerDegOf(config);
  return mapAxes(simSettings.axes, (s, axis) => {
    const revolution = axis === 'phi' ? degToSteps(360, perDeg.phi) : undefined;
    return new SimAxis({
      powerOnSteps: degToSteps(s.powerOnDeg, perDeg[axis]),
      maxStepRateHz: s.maxFullStepRateHz * config.microstepping,
      hysteresisSteps: Math.max(1, degToSteps(s.switchHysteresisDeg, perDeg[axis])),
      // The phi switch is a cam closed over a few degrees once per revolution; theta's is closed all the way below 0.
      switchWidthSteps: revolution === undefined ? undefined : degToSteps(5, perDeg.phi),
      revolutionSteps: revolution,
    });
  });
}

export function createSimulatedPositioner(clock: Clock, config: PositionerConfig, simSettings: SimSettings = defaultSimSettings()): SimulatedPositioner {
  const perDeg = stepsPerDegOf(config);
  const sim = buildSimAxes(config, simSettings);
  const trigger = new SimOutputPin();
  let positioner: Positioner | null = null;
  const controller = new StepMotionController({
    trigger,
    clock,
    hardware: mapAxes(sim, (a) => ({ stepper: a.stepper, homeSwitch: a.homeSwitch })),
    stepsPerDeg: perDeg,
    homing: mapAxes(config.axes, (a) => a.homing),
    travelDeg: mapAxes(AXIS_RANGE_DEG, (r) => r.max - r.min),
    // Homing accelerates at the accel currently set (POST /config changes it).
    homingAccelDegS2: () => positioner?.settings().accelDegS2 ?? config.accelDegS2,
    simultaneousHoming: config.simultaneousHoming,
  });
  positioner = new Positioner(controller, config);
  return { positioner, controller, sim, trigger };
}

/** How the firmware reaches its hardware: the built-in simulation, or a board on a serial line. */
export type DriverKind = 'sim' | 'grbl' | 'firmata';
export const DRIVER_KINDS: readonly DriverKind[] = ['sim', 'grbl', 'firmata'];

export interface SerialSettings {
  path: string;
  baudRate: number;
  /** Sees every byte on the line (for `--trace-serial` and test rigs). */
  trace?: SerialTrace;
}

/** grbl 1.1 talks at 115200; so do ConfigurableFirmata 3.x's examples (2.x and StandardFirmata: 57600; a mismatch is a fault naming the rate). */
export const DEFAULT_BAUD: Record<Exclude<DriverKind, 'sim'>, number> = { grbl: 115200, firmata: 115200 };

const TRAVEL_DEG = mapAxes(AXIS_RANGE_DEG, (r) => r.max - r.min);

/**
 * The grbl settings of a board set up for `config`: what docs/hardware.md
 * tells users to send, and what the simulated grbl starts with.
 * One grbl "mm" is one degree; rates are per minute.
 */
export function grblSettingsFor(config: PositionerConfig): Record<number, number> {
  const perDeg = stepsPerDegOf(config);
  const homing = config.axes.theta.homing;
  return {
    10: 1, // status reports carry the machine position
    13: 0, // report in mm (degrees)
    20: 0, // soft limits off: the firmware checks every target
    21: 0, // hard limits off: a homed axis rests on its switch at 0
    22: 1, // homing enabled
    23: 3, // X and Y home toward their minimum
    24: homing.feedDegS * 60,
    25: homing.seekDegS * 60,
    27: homing.pullOffDeg,
    100: perDeg.theta,
    101: perDeg.phi,
    110: config.maxSpeedDegS * 60,
    111: config.maxSpeedDegS * 60,
    120: config.accelDegS2,
    121: config.accelDegS2,
    130: TRAVEL_DEG.theta + 10,
    131: TRAVEL_DEG.phi + 10,
  };
}

export interface SimGrblBoard {
  board: SimGrblController;
  sim: AxisPair<SimAxis>;
  /** The flood coolant pin (M8/M9), the trigger output. */
  trigger: SimOutputPin;
  /** Bytes from the serial line (what sim/serial-peer.ts feeds it). */
  receive(data: Buffer): void;
}

/** A simulated grbl board for `config`, writing its bytes with `send`; call `board.powerUp()` once it is wired. */
export function createSimGrblBoard(
  clock: Clock,
  config: PositionerConfig,
  simSettings: SimSettings,
  send: (text: string) => void,
  options: Pick<SimGrblOptions, 'build' | 'eepromTiming'> & { settings?: Record<number, number> } = {},
): SimGrblBoard {
  const sim = buildSimAxes(config, simSettings);
  const trigger = new SimOutputPin();
  const board = new SimGrblController({ clock, axes: sim, settings: { ...grblSettingsFor(config), ...options.settings }, send, build: options.build, eepromTiming: options.eepromTiming, coolantOutput: trigger });
  return { board, sim, trigger, receive: (data) => board.receive(data) };
}

export interface DriverPositioner<D = GrblDriver> {
  positioner: Positioner;
  controller: D;
}

/** The firmware on a grbl board at `serial`; `controller.start()` opens the line and connects in the background. */
export function createGrblPositioner(
  clock: Clock,
  config: PositionerConfig,
  serial: SerialSettings,
  tuning: Pick<GrblDriverOptions, 'pollMovingMs' | 'pollIdleMs' | 'answerTimeoutMs' | 'retryMs' | 'stopMode' | 'bannerTimeoutMs'> = {},
): DriverPositioner {
  const controller = new GrblDriver({
    path: serial.path,
    baudRate: serial.baudRate,
    trace: serial.trace,
    clock,
    stepsPerDeg: stepsPerDegOf(config),
    maxSpeedDegS: config.maxSpeedDegS,
    travelDeg: TRAVEL_DEG,
    ...tuning,
  });
  const positioner = new Positioner(controller, config);
  return { positioner, controller };
}

/** Pins of the Firmata build docs/hardware.md describes: the CNC-shield step/dir pins, switches on D9 and D10. */
export const FIRMATA_WIRING: FirmataWiring = DEFAULT_FIRMATA_WIRING;

export interface SimFirmataMachine {
  board: SimFirmataBoard;
  sim: AxisPair<SimAxis>;
  /** The output on the wiring's trigger pin. */
  trigger: SimOutputPin;
  receive(data: Buffer): void;
}

/** A simulated ConfigurableFirmata board for `config`, writing its bytes with `send`; call `board.powerUp()` once it is wired. */
export function createSimFirmataBoard(
  clock: Clock,
  config: PositionerConfig,
  simSettings: SimSettings,
  send: (data: Buffer) => void,
  loop?: SimFirmataOptions['loop'],
): SimFirmataMachine {
  const sim = buildSimAxes(config, simSettings);
  const trigger = new SimOutputPin();
  const outputs = FIRMATA_WIRING.triggerPin === undefined ? {} : { [FIRMATA_WIRING.triggerPin]: trigger };
  const board = new SimFirmataBoard({ clock, axes: sim, wiring: FIRMATA_WIRING, send, loop, outputs });
  return { board, sim, trigger, receive: (data) => board.receive(data) };
}

/** The firmware on a Firmata board at `serial`; `controller.start()` opens the line and connects in the background. */
export function createFirmataPositioner(
  clock: Clock,
  config: PositionerConfig,
  serial: SerialSettings,
  tuning: Pick<FirmataDriverOptions, 'pollMovingMs' | 'pollIdleMs' | 'answerTimeoutMs' | 'retryMs' | 'handshakeTimeoutMs' | 'maxStepRateStepsS' | 'samplingIntervalMs'> & { triggerPin?: number } = {},
): DriverPositioner<FirmataDriver> {
  const { triggerPin, ...driverTuning } = tuning;
  let positioner: Positioner | null = null;
  const controller = new FirmataDriver({
    path: serial.path,
    baudRate: serial.baudRate,
    trace: serial.trace,
    clock,
    stepsPerDeg: stepsPerDegOf(config),
    wiring: { ...FIRMATA_WIRING, triggerPin: triggerPin ?? FIRMATA_WIRING.triggerPin },
    homing: mapAxes(config.axes, (a) => a.homing),
    travelDeg: TRAVEL_DEG,
    homingAccelDegS2: () => positioner?.settings().accelDegS2 ?? config.accelDegS2,
    simultaneousHoming: config.simultaneousHoming,
    ...driverTuning,
  });
  positioner = new Positioner(controller, config);
  return { positioner, controller };
}
