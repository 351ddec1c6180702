/**
 * The OpenAPI 3.1 description of the positioner API, served at /openapi.json.
 *
 * Built from the very schemas that validate requests (api/schemas.ts) and
 * describe answers (api/response-schemas.ts): there is no second copy to
 * drift. OpenAPI 3.1 schemas are JSON Schema 2020-12, which is what the ajv
 * schemas already are; the only change is moving each request schema's `$id`
 * into its component name.
 */
import { version } from '../package.json';
import { POSITIONER_ERRORS } from '../firmware/errors';
import { API_ERRORS } from './errors';
import { configBodySchema, homeBodySchema, moveBodySchema, moveRelativeBodySchema, scanBodySchema } from './schemas';
import * as scanAnswers from './scan-schemas';
import * as answers from './response-schemas';
import { LIVE_STATUS_PATH } from './live-status';

type Schema = Record<string, unknown>;

/** A request schema as a component: its `$id` becomes the name, the rest is unchanged. */
function component(schema: { $id: string } & Schema): [string, Schema] {
  const { $id, ...rest } = schema;
  return [$id, rest];
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ 'application/json': { schema: ref(name) } });

function ok(description: string, schema: string) {
  return { description, content: json(schema) };
}

/** An error answer: `{"error": "..."}` with the code in a header. */
function error(description: string) {
  return { description, headers: { 'Positioner-Error-Code': { $ref: '#/components/headers/Positioner-Error-Code' } }, content: json('Error') };
}

const BAD_REQUEST = error('invalid request: malformed JSON, a wrong type, a missing or unknown field, or a value out of range');
const BUSY = {
  ...error('busy: the positioner is already moving or homing (POS_ERR_BUSY, with Retry-After), or in its error state (POS_ERR_FAULT: home to clear it)'),
  headers: {
    'Positioner-Error-Code': { $ref: '#/components/headers/Positioner-Error-Code' },
    'Retry-After': { description: 'seconds to wait, on POS_ERR_BUSY only', schema: { type: 'integer' } },
  },
};
const TOO_LARGE = error('request body over 16 KiB');

function jsonBody(name: string, required: boolean) {
  return { required, content: json(name) };
}

export function openApiDocument() {
  const requests = [moveBodySchema, moveRelativeBodySchema, homeBodySchema, configBodySchema, scanBodySchema].map((s) => component(s as unknown as { $id: string } & Schema));
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Positioner API',
      version,
      summary: 'A two-axis (theta/phi) antenna positioner: position, motion, homing, stop and motion settings',
      description: [
        'Angles are in degrees: theta (polar) 0 to 180, phi (azimuth) 0 to 360; phi does not wrap.',
        'Bodies are JSON whatever their Content-Type. Every error is a 4xx/5xx with `{"error": "..."}` and a stable code in the `Positioner-Error-Code` header.',
        `Live status: a WebSocket at \`${LIVE_STATUS_PATH}\` pushes \`StatusMessage\` (20 a second while moving, and on every change), \`ConfigMessage\` (on connect and on every change), and during scans \`ScanMessage\` and \`SampleMessage\`; see docs/api.md.`,
        'Unversioned and unauthenticated: bind it to localhost or a trusted network.',
      ].join('\n\n'),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    paths: {
      '/status': {
        get: {
          operationId: 'getStatus',
          summary: 'Where the axes are and what the positioner is doing',
          responses: { '200': ok('current status', 'Status') },
        },
      },
      '/move': {
        post: {
          operationId: 'move',
          summary: 'Absolute move of both axes (coordinated: both arrive together)',
          requestBody: jsonBody('MoveRequest', true),
          responses: { '200': ok('move accepted and started', 'MoveAccepted'), '400': BAD_REQUEST, '413': TOO_LARGE, '503': BUSY },
        },
      },
      '/move/relative': {
        post: {
          operationId: 'moveRelative',
          summary: 'Relative move: signed offsets from the current position',
          requestBody: jsonBody('MoveRelativeRequest', true),
          responses: { '200': ok('move accepted; targets are the resulting absolute angles', 'MoveAccepted'), '400': BAD_REQUEST, '413': TOO_LARGE, '503': BUSY },
        },
      },
      '/home': {
        post: {
          operationId: 'home',
          summary: 'Homing cycle of one axis or both (seek switch, back off, re-approach, set zero)',
          requestBody: jsonBody('HomeRequest', false),
          responses: { '200': ok('homing started', 'HomeAccepted'), '400': BAD_REQUEST, '413': TOO_LARGE, '503': error('busy: already moving or homing (POS_ERR_BUSY)') },
        },
      },
      '/stop': {
        post: {
          operationId: 'stop',
          summary: 'Stop all motors at once (the body, if any, is ignored)',
          description: 'Works in every state. When it answers, no further step is issued.',
          responses: { '200': ok('stopped', 'StopAnswer') },
        },
      },
      '/config': {
        get: {
          operationId: 'getConfig',
          summary: 'Motion settings and the derived, read-only values',
          responses: { '200': ok('motion configuration', 'Config') },
        },
        post: {
          operationId: 'updateConfig',
          summary: 'Change speed and/or accel (only the fields sent)',
          requestBody: jsonBody('ConfigUpdate', true),
          responses: { '200': ok('settings applied (the next move uses them)', 'ConfigUpdated'), '400': BAD_REQUEST, '413': TOO_LARGE },
        },
      },
      '/scan': {
        get: {
          operationId: 'getScan',
          summary: 'The current or last scan: state, points done/total, elapsed and estimated remaining time',
          responses: { '200': { description: 'the scan, or {"state": "none"} before the first', content: { 'application/json': { schema: { oneOf: [ref('Scan'), ref('NoScan')] } } } } },
        },
        post: {
          operationId: 'startScan',
          summary: 'Start a radiation-pattern scan: visit the plan\'s points and measure at each (one scan at a time)',
          description: 'POST /stop aborts it (the samples so far are kept; POST /scan/resume continues). While it runs, motion commands get 503 POS_ERR_BUSY. Progress and each sample are pushed on the live feed.',
          requestBody: jsonBody('ScanRequest', true),
          responses: { '201': ok('scan started', 'Scan'), '400': error('a bad plan or source: the message names the field, e.g. plan.theta.step_deg'), '413': TOO_LARGE, '503': BUSY },
        },
      },
      '/scan/pause': {
        post: {
          operationId: 'pauseScan',
          summary: 'Pause the running scan at the next point (line, in sweep mode); the positioner is free while paused',
          responses: { '200': ok('the scan (state running until the point in progress is measured, then paused)', 'Scan'), '409': error('no scan is running (API_ERR_SCAN_STATE)') },
        },
      },
      '/scan/resume': {
        post: {
          operationId: 'resumeScan',
          summary: 'Resume a paused, aborted or failed scan (also one interrupted by a server restart) at the first point not done',
          responses: { '200': ok('the scan, running again', 'Scan'), '409': error('no scan to resume, or it is done (API_ERR_SCAN_STATE)'), '503': BUSY },
        },
      },
      '/scan/results': {
        get: {
          operationId: 'getScanResults',
          summary: 'The samples of the current or last scan (or ?id=) as JSON or CSV',
          parameters: [
            { name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['json', 'csv'] }, description: 'json (default) or csv; Accept: text/csv also selects csv' },
            { name: 'id', in: 'query', required: false, schema: { type: 'string' }, description: 'a scan id (default: the current or last scan)' },
          ],
          responses: {
            '200': { description: 'the results', content: { 'application/json': { schema: ref('ScanResults') }, 'text/csv': { schema: { type: 'string' } } } },
            '400': BAD_REQUEST,
            '404': error('no such scan, or none ran yet'),
          },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'getOpenApi',
          summary: 'This document',
          responses: { '200': { description: 'the OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
      '/': {
        get: {
          operationId: 'getDashboard',
          summary: 'The web dashboard (HTML; its script and style sheet are /dashboard.js and /dashboard.css)',
          responses: { '200': { description: 'the dashboard page', content: { 'text/html': { schema: { type: 'string' } } } } },
        },
      },
      [LIVE_STATUS_PATH]: {
        get: {
          operationId: 'liveStatus',
          summary: 'Live status over WebSocket',
          description:
            'Upgrade to a WebSocket (RFC 6455). The server sends JSON text messages: `ConfigMessage` then `StatusMessage` at once, then a `StatusMessage` at least every 50 ms while anything moves and on every change, and a `ConfigMessage` whenever the motion settings change. The feed is read-only: a message from the client is answered with `{"type":"error","error":"..."}`. A plain GET without the upgrade gets 426.',
          responses: {
            '101': { description: 'switching to the WebSocket protocol' },
            '426': error('upgrade required: connect with a WebSocket client'),
          },
        },
      },
    },
    components: {
      schemas: {
        ...Object.fromEntries(requests),
        Status: answers.statusSchema,
        AxisStatus: answers.axisStatusSchema,
        Fault: answers.faultSchema,
        MoveAccepted: answers.moveAcceptedSchema,
        HomeAccepted: answers.homeAcceptedSchema,
        StopAnswer: answers.stopAnswerSchema,
        Config: answers.configSchema,
        ConfigUpdated: answers.configUpdatedSchema,
        Error: answers.errorSchema,
        StatusMessage: answers.statusMessageSchema,
        ConfigMessage: answers.configMessageSchema,
        Scan: scanAnswers.scanSchema,
        NoScan: scanAnswers.noScanSchema,
        ScanSample: scanAnswers.scanSampleSchema,
        ScanResults: scanAnswers.scanResultsSchema,
        ScanMessage: scanAnswers.scanMessageSchema,
        SampleMessage: scanAnswers.sampleMessageSchema,
      },
      headers: {
        'Positioner-Error-Code': {
          description: 'stable error code; clients branch on it, never on the message',
          schema: { type: 'string', enum: [...Object.keys(API_ERRORS), ...Object.keys(POSITIONER_ERRORS)] },
        },
      },
    },
  };
}
