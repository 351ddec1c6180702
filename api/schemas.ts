/**
 * JSON schemas of every positioner request body: the one source of truth for
 * validation (and for the API documentation). Bodies with unknown keys are
 * rejected, since a misspelt field would otherwise silently do nothing.
 */
import { AXIS_RANGE_DEG, MIN_ACCEL_DEG_S2, MIN_SPEED_DEG_S } from '../firmware/config';

const finite = { type: 'number' } as const;

export const moveBodySchema = {
  $id: 'MoveRequest',
  type: 'object',
  properties: {
    theta_deg: { ...finite, minimum: AXIS_RANGE_DEG.theta.min, maximum: AXIS_RANGE_DEG.theta.max, description: 'absolute polar angle target, degrees' },
    phi_deg: { ...finite, minimum: AXIS_RANGE_DEG.phi.min, maximum: AXIS_RANGE_DEG.phi.max, description: 'absolute azimuth target, degrees' },
  },
  required: ['theta_deg', 'phi_deg'],
  additionalProperties: false,
} as const;

export const moveRelativeBodySchema = {
  $id: 'MoveRelativeRequest',
  type: 'object',
  properties: {
    d_theta: { ...finite, description: 'signed theta offset from the current position, degrees' },
    d_phi: { ...finite, description: 'signed phi offset from the current position, degrees' },
  },
  required: ['d_theta', 'd_phi'],
  additionalProperties: false,
} as const;

export const homeBodySchema = {
  $id: 'HomeRequest',
  type: 'object',
  properties: {
    axis: { type: 'string', enum: ['theta', 'phi', 'both'], default: 'both', description: 'axis to home (default both)' },
  },
  additionalProperties: false,
} as const;

/** Fields GET /config reports that POST /config refuses to change. */
export const READ_ONLY_CONFIG_FIELDS = ['microstepping', 'theta_steps_per_deg', 'phi_steps_per_deg', 'max_speed', 'max_accel'] as const;

export const configBodySchema = {
  $id: 'ConfigUpdate',
  type: 'object',
  properties: {
    speed: { ...finite, minimum: MIN_SPEED_DEG_S, description: `top speed of the faster axis, deg/s (${MIN_SPEED_DEG_S} to max_speed)` },
    accel: { ...finite, minimum: MIN_ACCEL_DEG_S2, description: `acceleration limit of the faster axis, deg/s^2 (${MIN_ACCEL_DEG_S2} to max_accel)` },
  },
  additionalProperties: false,
} as const;

const nonNegative = { type: 'number', minimum: 0 } as const;

const scanRangeSchema = (axis: 'theta' | 'phi') =>
  ({
    type: 'object',
    description: `${axis} values start_deg, start_deg + step_deg, ... up to stop_deg (included when on the grid), within ${AXIS_RANGE_DEG[axis].min}..${AXIS_RANGE_DEG[axis].max} deg`,
    properties: {
      start_deg: { ...finite, description: 'first angle, degrees' },
      stop_deg: { ...finite, description: 'last angle, degrees (>= start_deg)' },
      step_deg: { ...finite, description: 'spacing, degrees (> 0)' },
    },
    required: ['start_deg', 'stop_deg', 'step_deg'],
    additionalProperties: false,
  }) as const;

const angleList = (what: string) => ({ type: 'array', minItems: 1, items: { ...finite }, description: what }) as const;

const execSourceProps = {
  command: { type: 'string', minLength: 1, description: 'exec: shell command run at each point; gets THETA_DEG, PHI_DEG, POINT_INDEX, SAMPLE_INDEX in its environment and theta phi index as $1 $2 $3; every number it prints is a value' },
  url: { type: 'string', minLength: 1, description: 'http: webhook POSTed {"theta_deg","phi_deg","index","sample"}; its JSON answer (a number, a list, {"value"} or {"values"}) gives the values' },
  timeout_s: { type: 'number', exclusiveMinimum: 0, maximum: 3600, description: 'exec/http: seconds before the point is marked timed out (default 10 for exec, 5 for http)' },
} as const;

/** POST /scan (docs/api.md "Scans"; the contract the dashboard follows is /work/notes' scan-contract.md). */
export const scanBodySchema = {
  $id: 'ScanRequest',
  type: 'object',
  properties: {
    plan: {
      type: 'object',
      description: 'the points to visit: a theta x phi grid, phi cuts, theta cuts or a list of points',
      discriminator: { propertyName: 'kind' },
      properties: { kind: { type: 'string', description: 'grid, phi_cuts, theta_cuts or points' } },
      required: ['kind'],
      oneOf: [
        {
          properties: { kind: { const: 'grid' }, theta: scanRangeSchema('theta'), phi: scanRangeSchema('phi'), order: { type: 'string', enum: ['serpentine', 'raster'], description: 'serpentine (default) reverses every other line to save travel' } },
          required: ['kind', 'theta', 'phi'],
          additionalProperties: false,
        },
        {
          properties: { kind: { const: 'phi_cuts' }, phi_deg: angleList('the fixed phi angles, degrees'), theta: scanRangeSchema('theta') },
          required: ['kind', 'phi_deg', 'theta'],
          additionalProperties: false,
        },
        {
          properties: { kind: { const: 'theta_cuts' }, theta_deg: angleList('the fixed theta angles, degrees'), phi: scanRangeSchema('phi') },
          required: ['kind', 'theta_deg', 'phi'],
          additionalProperties: false,
        },
        {
          properties: {
            kind: { const: 'points' },
            points: {
              type: 'array',
              minItems: 1,
              items: { type: 'object', properties: { theta_deg: { ...finite }, phi_deg: { ...finite } }, required: ['theta_deg', 'phi_deg'], additionalProperties: false },
            },
          },
          required: ['kind', 'points'],
          additionalProperties: false,
        },
      ],
    },
    mode: { type: 'string', enum: ['step', 'sweep'], default: 'step', description: 'step: move, settle, then dwell and measure `samples` times per point; sweep: continuous motion along each line, a sample every sample_interval_s stamped with the position at that time' },
    settle_s: { ...nonNegative, maximum: 3600, default: 0.2, description: 'wait after each arrival before measuring, seconds' },
    dwell_s: { ...nonNegative, maximum: 3600, default: 0, description: 'step mode: wait before each sample (the instrument integration time), seconds' },
    samples: { type: 'integer', minimum: 1, maximum: 1000, default: 1, description: 'step mode: samples per point, averaged into one row' },
    sample_interval_s: { type: 'number', minimum: 0.001, maximum: 3600, default: 0.1, description: 'sweep mode: seconds between samples' },
    source: {
      type: 'object',
      description: 'where the values come from (default sim: the simulated antenna under test)',
      properties: {
        kind: { type: 'string', enum: ['sim', 'exec', 'http', 'trigger'] },
        ...execSourceProps,
        pulse_ms: { type: 'number', minimum: 0.1, maximum: 10000, description: 'trigger: pulse length on the board output, ms (default 10)' },
        then: {
          type: ['object', 'null'],
          description: 'trigger: the exec or http source that reads the value after the pulse (null: no value, the pulse only)',
          properties: { kind: { type: 'string', enum: ['exec', 'http'] }, ...execSourceProps },
          required: ['kind'],
          additionalProperties: false,
        },
      },
      required: ['kind'],
      additionalProperties: false,
    },
    on_error: { type: 'string', enum: ['continue', 'stop'], default: 'continue', description: 'a point whose measurement fails or times out: marked, and the scan goes on (continue) or ends failed (stop)' },
    name: { type: 'string', maxLength: 200, description: 'a label for the scan' },
  },
  required: ['plan'],
  additionalProperties: false,
} as const;
