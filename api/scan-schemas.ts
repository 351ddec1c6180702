/**
 * JSON schemas of the scan answers (GET/POST /scan, /scan/results) and the
 * live feed's scan and sample messages, for /openapi.json (api/openapi.ts);
 * test/api/http-scan.test.ts checks real answers against them.
 */

const SCAN_STATES = ['running', 'paused', 'done', 'aborted', 'failed'] as const;

export const scanSchema = {
  type: 'object',
  description: 'a scan: its progress and the request it runs',
  properties: {
    id: { type: 'string', description: 'unique id: the start time and a number, e.g. 2026-11-24T05:01:02Z-1' },
    name: { type: ['string', 'null'], description: 'the label given in the request' },
    state: { type: 'string', enum: SCAN_STATES, description: 'running, paused, done, aborted (POST /stop, or a server restart) or failed (a fault, or a failed point with on_error stop); aborted, paused and failed scans can be resumed' },
    points_done: { type: 'integer', minimum: 0, description: 'points measured (failed ones included)' },
    points_total: { type: 'integer', minimum: 1 },
    points_failed: { type: 'integer', minimum: 0, description: 'points whose measurement failed or timed out (marked in the results)' },
    elapsed_s: { type: 'number', minimum: 0, description: 'scan time so far, seconds (pauses excluded)' },
    remaining_s: { type: ['number', 'null'], description: 'estimated seconds left (elapsed per point times points left); null before the first point' },
    started_at: { type: 'string', format: 'date-time' },
    ended_at: { type: ['string', 'null'], format: 'date-time', description: 'when it ended (done, aborted, failed), null while running or paused' },
    request: { description: 'the ScanRequest as accepted, every default filled' },
    error: { type: ['string', 'null'], description: 'why it was aborted or failed' },
  },
  required: ['id', 'name', 'state', 'points_done', 'points_total', 'points_failed', 'elapsed_s', 'remaining_s', 'started_at', 'ended_at', 'request', 'error'],
  additionalProperties: false,
} as const;

export const noScanSchema = {
  type: 'object',
  description: 'GET /scan before any scan ran',
  properties: { state: { const: 'none' }, error: { type: 'null' }, points_done: { const: 0 }, points_total: { const: 0 } },
  required: ['state'],
  additionalProperties: false,
} as const;

const sampleProperties = {
  index: { type: 'integer', minimum: 0, description: 'point index (step mode) or sample number (sweep mode)' },
  theta_deg: { type: 'number', description: 'where the sample was taken (sweep: the position read at the sample time)' },
  phi_deg: { type: 'number' },
  time_s: { type: 'number', description: 'scan time of the sample, seconds' },
  values: { type: 'array', items: { type: 'number' }, description: 'the measured values (sim: received power in dB relative to the peak); empty when the measurement failed' },
  error: { type: ['string', 'null'], description: 'why the measurement failed or timed out' },
} as const;

export const scanSampleSchema = {
  type: 'object',
  properties: sampleProperties,
  required: ['index', 'theta_deg', 'phi_deg', 'time_s', 'values', 'error'],
  additionalProperties: false,
} as const;

export const scanResultsSchema = {
  type: 'object',
  description: 'a scan\'s samples; as CSV (format=csv or Accept: text/csv): a header index,theta_deg,phi_deg,time_s,<columns>,error and one row per sample',
  properties: {
    id: { type: 'string' },
    state: { type: 'string', enum: SCAN_STATES },
    columns: { type: 'array', items: { type: 'string' }, description: '["value"] for one value per sample, ["value_1", "value_2", ...] for several' },
    samples: { type: 'array', items: { $ref: '#/components/schemas/ScanSample' } },
  },
  required: ['id', 'state', 'columns', 'samples'],
  additionalProperties: false,
} as const;

export const scanMessageSchema = {
  type: 'object',
  description: 'live feed: scan progress (at most every 100 ms, and on every state change; also on connect when a scan ever ran): the GET /scan body with type and seq',
  properties: { type: { const: 'scan' }, seq: { type: 'integer', minimum: 1 }, ...scanSchema.properties },
  required: ['type', 'seq', ...scanSchema.required],
  additionalProperties: false,
} as const;

export const sampleMessageSchema = {
  type: 'object',
  description: 'live feed: one new sample of scan scan_id, as in /scan/results',
  properties: { type: { const: 'sample' }, seq: { type: 'integer', minimum: 1 }, scan_id: { type: 'string' }, ...sampleProperties },
  required: ['type', 'seq', 'scan_id', ...scanSampleSchema.required],
  additionalProperties: false,
} as const;
