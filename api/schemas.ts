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
