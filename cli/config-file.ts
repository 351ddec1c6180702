/**
 * The positioner's JSON config file: every key optional, merged onto the
 * defaults, checked with one schema. Unknown keys are an error, because a
 * misspelt key would otherwise be silently ignored.
 *
 * {
 *   "speed": 10, "accel": 20, "max_speed": 60, "max_accel": 500, "microstepping": 16,
 *   "simultaneous_homing": true,
 *   "theta": { "full_steps_per_rev": 200, "gear_ratio": 36,
 *              "homing": { "seek_speed": 10, "feed_speed": 1, "pull_off": 2 } },
 *   "phi":   { ... as theta, gear_ratio 90 ... },
 *   "sim":   { "theta": { "power_on_deg": 37.5, "max_full_step_rate": 1000, "switch_hysteresis_deg": 0.05 },
 *              "phi":   { ... } },
 *   "driver": { "type": "grbl", "serial": "/dev/ttyUSB0", "baud": 115200 }
 * }
 */
import fs from 'node:fs';
import Ajv from 'ajv';
import type { AxisName } from '../hal/axes';
import { AXES } from '../hal/axes';
import { defaultConfig, MIN_ACCEL_DEG_S2, MIN_SPEED_DEG_S, type PositionerConfig } from '../firmware/config';
import { defaultAntennaConfig, type AntennaModelConfig } from '../sim/antenna';
import { DRIVER_KINDS, defaultSimSettings, type DriverKind, type SimSettings } from './assemble';

const positive = { type: 'number', exclusiveMinimum: 0 } as const;
// Speeds and accelerations below these floors would make step times overflow to Infinity.
const speed = { type: 'number', minimum: MIN_SPEED_DEG_S } as const;
const accel = { type: 'number', minimum: MIN_ACCEL_DEG_S2 } as const;

const axisSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    full_steps_per_rev: { type: 'integer', minimum: 1 },
    gear_ratio: positive,
    homing: {
      type: 'object',
      additionalProperties: false,
      properties: { seek_speed: speed, feed_speed: speed, pull_off: positive },
    },
  },
} as const;

const simAxisSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    power_on_deg: { type: 'number' },
    max_full_step_rate: positive,
    switch_hysteresis_deg: { type: 'number', minimum: 0 },
  },
} as const;

/** The simulated antenna under test (sim/antenna.ts), the `sim` source of scans. */
const antennaSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    aperture_width_wl: { type: 'number', exclusiveMinimum: 0, maximum: 100 },
    aperture_height_wl: { type: 'number', exclusiveMinimum: 0, maximum: 100 },
    floor_db: { type: 'number', maximum: 0, minimum: -200 },
    noise_db: { type: 'number', minimum: 0, maximum: 20 },
    seed: { type: 'integer' },
  },
} as const;

export const configFileSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    speed,
    accel,
    max_speed: speed,
    max_accel: accel,
    microstepping: { type: 'integer', enum: [1, 2, 4, 8, 16, 32, 64, 128, 256] },
    simultaneous_homing: { type: 'boolean' },
    theta: axisSchema,
    phi: axisSchema,
    sim: { type: 'object', additionalProperties: false, properties: { theta: simAxisSchema, phi: simAxisSchema, antenna: antennaSchema } },
    driver: {
      type: 'object',
      additionalProperties: false,
      properties: {
        type: { type: 'string', enum: DRIVER_KINDS },
        serial: { type: 'string', minLength: 1 },
        baud: { type: 'integer', minimum: 300, maximum: 4000000 },
        // Firmata: steps/s the board makes on one axis alone (docs/hardware.md "What to expect"; an Uno ~3,600).
        max_step_rate: { type: 'integer', minimum: 100, maximum: 10000000 },
        // Firmata: the digital pin pulsed by a scan's trigger source (default 17, A3: the CNC shield's coolant enable).
        trigger_pin: { type: 'integer', minimum: 2, maximum: 127 },
      },
    },
  },
} as const;

interface AxisFile {
  full_steps_per_rev?: number;
  gear_ratio?: number;
  homing?: { seek_speed?: number; feed_speed?: number; pull_off?: number };
}
interface SimAxisFile {
  power_on_deg?: number;
  max_full_step_rate?: number;
  switch_hysteresis_deg?: number;
}
interface ConfigFile {
  speed?: number;
  accel?: number;
  max_speed?: number;
  max_accel?: number;
  microstepping?: number;
  simultaneous_homing?: boolean;
  theta?: AxisFile;
  phi?: AxisFile;
  sim?: { theta?: SimAxisFile; phi?: SimAxisFile; antenna?: { aperture_width_wl?: number; aperture_height_wl?: number; floor_db?: number; noise_db?: number; seed?: number } };
  driver?: DriverFile;
}

/** Which hardware to run on; each field may also come from the command line, which wins. */
export interface DriverFile {
  type?: DriverKind;
  serial?: string;
  baud?: number;
  max_step_rate?: number;
  trigger_pin?: number;
}

export class ConfigFileError extends Error {
  readonly code = 'CLI_ERR_CONFIG_FILE';
}

const validate = new Ajv({ allErrors: true, strict: true }).compile<ConfigFile>(configFileSchema);

export interface LoadedConfig {
  config: PositionerConfig;
  sim: SimSettings;
  driver: DriverFile;
  /** The simulated antenna under test (the scans' `sim` source). */
  antenna: AntennaModelConfig;
}

/** Reads and checks a config file; with no path, the defaults. */
export function loadConfig(path?: string): LoadedConfig {
  if (path === undefined) return { config: defaultConfig(), sim: defaultSimSettings(), driver: {}, antenna: defaultAntennaConfig() };
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigFileError(`cannot read config file ${path}: ${(e as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ConfigFileError(`config file ${path} is not valid JSON: ${(e as Error).message}`);
  }
  return parseConfig(data, path);
}

export function parseConfig(data: unknown, source = 'config'): LoadedConfig {
  if (!validate(data)) {
    const problems = (validate.errors ?? []).map((e) => {
      const where = e.instancePath || '(top level)';
      const extra = e.keyword === 'additionalProperties' ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'` : '';
      return `${where} ${e.message}${extra}`;
    });
    throw new ConfigFileError(`${source}: ${problems.join('; ')}`);
  }
  const config = defaultConfig();
  const sim = defaultSimSettings();
  const set = <T>(value: T | undefined, apply: (v: T) => void) => value !== undefined && apply(value);
  set(data.speed, (v) => (config.speedDegS = v));
  set(data.accel, (v) => (config.accelDegS2 = v));
  set(data.max_speed, (v) => (config.maxSpeedDegS = v));
  set(data.max_accel, (v) => (config.maxAccelDegS2 = v));
  set(data.microstepping, (v) => (config.microstepping = v));
  set(data.simultaneous_homing, (v) => (config.simultaneousHoming = v));
  for (const axis of AXES as readonly AxisName[]) {
    const a = data[axis];
    const c = config.axes[axis];
    set(a?.full_steps_per_rev, (v) => (c.fullStepsPerRev = v));
    set(a?.gear_ratio, (v) => (c.gearRatio = v));
    set(a?.homing?.seek_speed, (v) => (c.homing.seekDegS = v));
    set(a?.homing?.feed_speed, (v) => (c.homing.feedDegS = v));
    set(a?.homing?.pull_off, (v) => (c.homing.pullOffDeg = v));
    const s = data.sim?.[axis];
    const si = sim.axes[axis];
    set(s?.power_on_deg, (v) => (si.powerOnDeg = v));
    set(s?.max_full_step_rate, (v) => (si.maxFullStepRateHz = v));
    set(s?.switch_hysteresis_deg, (v) => (si.switchHysteresisDeg = v));
  }
  const antenna = defaultAntennaConfig();
  const a = data.sim?.antenna;
  set(a?.aperture_width_wl, (v) => (antenna.apertureWidthWl = v));
  set(a?.aperture_height_wl, (v) => (antenna.apertureHeightWl = v));
  set(a?.floor_db, (v) => (antenna.floorDb = v));
  set(a?.noise_db, (v) => (antenna.noiseDb = v));
  set(a?.seed, (v) => (antenna.seed = v));
  if (config.speedDegS > config.maxSpeedDegS) throw new ConfigFileError(`${source}: speed ${config.speedDegS} is above max_speed ${config.maxSpeedDegS}`);
  if (config.accelDegS2 > config.maxAccelDegS2) throw new ConfigFileError(`${source}: accel ${config.accelDegS2} is above max_accel ${config.maxAccelDegS2}`);
  return { config, sim, driver: { ...data.driver }, antenna };
}
