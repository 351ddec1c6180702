/**
 * JSON schemas (2020-12, as OpenAPI 3.1 uses) of every answer the positioner
 * API and its live feed give. With the request schemas in api/schemas.ts they
 * are the one source of /openapi.json (api/openapi.ts); the tests check every
 * real answer against the served document, so a change here that the code
 * does not follow (or the reverse) fails there.
 */
import { AXIS_RANGE_DEG } from '../firmware/config';

const STATES = ['connecting', 'idle', 'moving', 'homing', 'stopped', 'error'] as const;

export const axisStatusSchema = {
  type: 'object',
  description: 'per-axis detail',
  properties: {
    homed: { type: 'boolean', description: 'this axis has been homed since power-on' },
    position_deg: { type: 'number', description: 'position in degrees, in the firmware frame (may read negative while the axis homes)' },
    position_steps: { type: 'integer', description: 'position in microsteps' },
    velocity_deg_s: { type: 'number', description: 'signed commanded velocity, deg/s' },
    homing_error_steps: {
      type: ['integer', 'null'],
      description: 'microsteps between where the last re-homing found the switch and where the firmware expected it (lost steps); null until an axis is homed a second time',
    },
    homing_phase: {
      enum: ['waiting', 'seek', 'back_off', 'approach', 'done', null],
      description:
        "while homing: where this axis's cycle is (waiting behind the other axis, seeking the switch, backing off it, re-approaching slowly, done); null when not homing, or when the hardware does not say (grbl reports nothing during its cycle)",
    },
  },
  required: ['homed', 'position_deg', 'position_steps', 'velocity_deg_s', 'homing_error_steps', 'homing_phase'],
  additionalProperties: false,
} as const;

export const faultSchema = {
  type: 'object',
  description: 'the latched fault that put the positioner in its error state',
  properties: {
    code: { type: 'string', description: 'stable code, e.g. POS_ERR_HOMING_SWITCH_NOT_FOUND or POS_ERR_HARDWARE' },
    message: { type: 'string', description: 'what happened, for people' },
  },
  required: ['code', 'message'],
  additionalProperties: false,
} as const;

/** Properties of GET /status, shared with the live feed's status message. */
const statusProperties = {
  theta_deg: { type: 'number', description: `polar angle, degrees (${AXIS_RANGE_DEG.theta.min} to ${AXIS_RANGE_DEG.theta.max})` },
  phi_deg: { type: 'number', description: `azimuth angle, degrees (${AXIS_RANGE_DEG.phi.min} to ${AXIS_RANGE_DEG.phi.max})` },
  moving: { type: 'boolean', description: 'true while the motors move (a move or a homing cycle)' },
  homed: { type: 'boolean', description: 'true once both axes have been homed' },
  state: { type: 'string', enum: STATES, description: 'the state machine: connecting (a serial board not configured yet), idle, moving, homing, stopped or error' },
  fault: { oneOf: [{ type: 'null' }, { $ref: '#/components/schemas/Fault' }], description: 'null, or the fault latched in the error state' },
  target: {
    oneOf: [
      { type: 'null' },
      {
        type: 'object',
        properties: { theta_deg: { type: 'number' }, phi_deg: { type: 'number' } },
        required: ['theta_deg', 'phi_deg'],
        additionalProperties: false,
      },
    ],
    description: 'where the move in progress goes (rounded to a microstep, degrees); null when no move runs',
  },
  axes: {
    type: 'object',
    properties: { theta: { $ref: '#/components/schemas/AxisStatus' }, phi: { $ref: '#/components/schemas/AxisStatus' } },
    required: ['theta', 'phi'],
    additionalProperties: false,
  },
} as const;
const statusRequired = ['theta_deg', 'phi_deg', 'moving', 'homed', 'state', 'fault', 'target', 'axes'] as const;

export const statusSchema = {
  type: 'object',
  description: "the seed's four fields (theta_deg, phi_deg, moving, homed) then the additions",
  properties: statusProperties,
  required: statusRequired,
  additionalProperties: false,
} as const;

export const moveAcceptedSchema = {
  type: 'object',
  properties: {
    status: { const: 'moving' },
    target_theta: { type: 'number', description: 'absolute theta target, rounded to a microstep, degrees' },
    target_phi: { type: 'number', description: 'absolute phi target, rounded to a microstep, degrees' },
  },
  required: ['status', 'target_theta', 'target_phi'],
  additionalProperties: false,
} as const;

export const homeAcceptedSchema = {
  type: 'object',
  properties: { status: { const: 'homing' }, axis: { type: 'string', enum: ['theta', 'phi', 'both'] } },
  required: ['status', 'axis'],
  additionalProperties: false,
} as const;

export const stopAnswerSchema = {
  type: 'object',
  properties: { status: { const: 'stopped' } },
  required: ['status'],
  additionalProperties: false,
} as const;

const configProperties = {
  speed: { type: 'number', description: 'top speed of the axis that travels furthest in a move, deg/s' },
  accel: { type: 'number', description: 'acceleration of that axis, deg/s^2' },
  microstepping: { type: 'integer', description: 'microsteps per full step (driver wiring; read-only)' },
} as const;

export const configSchema = {
  type: 'object',
  properties: {
    ...configProperties,
    theta_steps_per_deg: { type: 'number', description: 'microsteps per degree of theta (read-only)' },
    phi_steps_per_deg: { type: 'number', description: 'microsteps per degree of phi (read-only)' },
    max_speed: { type: 'number', description: 'highest speed POST /config accepts, deg/s (read-only)' },
    max_accel: { type: 'number', description: 'highest accel POST /config accepts, deg/s^2 (read-only)' },
  },
  required: ['speed', 'accel', 'microstepping', 'theta_steps_per_deg', 'phi_steps_per_deg', 'max_speed', 'max_accel'],
  additionalProperties: false,
} as const;

export const configUpdatedSchema = {
  type: 'object',
  properties: { status: { const: 'ok' }, ...configProperties },
  required: ['status', 'speed', 'accel', 'microstepping'],
  additionalProperties: false,
} as const;

export const errorSchema = {
  type: 'object',
  description: "every error answer; the stable code is in the Positioner-Error-Code header",
  properties: { error: { type: 'string', minLength: 1, description: 'what went wrong and what to do' } },
  required: ['error'],
  additionalProperties: false,
} as const;

/** Live feed (GET /ws, WebSocket): a status snapshot, sent while moving (20 a second) and on every change. */
export const statusMessageSchema = {
  type: 'object',
  description: 'live-feed status message: the GET /status body plus type, seq and sent_at_ms',
  properties: {
    type: { const: 'status' },
    seq: { type: 'integer', minimum: 1, description: 'message number on this connection, from 1' },
    sent_at_ms: { type: 'number', description: 'server wall time when sent, milliseconds since the Unix epoch' },
    ...statusProperties,
  },
  required: ['type', 'seq', 'sent_at_ms', ...statusRequired],
  additionalProperties: false,
} as const;

/** Live feed: the motion configuration, sent on connect and whenever it changes. */
export const configMessageSchema = {
  type: 'object',
  description: 'live-feed config message: the GET /config body plus type and seq',
  properties: {
    type: { const: 'config' },
    seq: { type: 'integer', minimum: 1 },
    ...configSchema.properties,
  },
  required: ['type', 'seq', ...configSchema.required],
  additionalProperties: false,
} as const;
