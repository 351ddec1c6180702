/**
 * The scan endpoints (docs/api.md "Scans"), mounted on the express app by
 * buildExpressApp when the server has a Scanner (firmware/scan.ts):
 *
 *   POST /scan             start a scan (body: ScanRequest, api/schemas.ts) -> 201 Scan
 *   GET  /scan             the current or last scan, {"state": "none"} before the first
 *   POST /scan/pause       pause at the next point boundary        -> Scan (409 when nothing runs)
 *   POST /scan/resume      continue at the first point not done    -> Scan (409 when done / none)
 *   GET  /scan/results     ?format=json|csv (or Accept: text/csv) &id=...
 *
 * POST /stop (api/app.ts) aborts a scan through the positioner's stop.
 * Bodies are snake_case with units, as the rest of the API.
 */
import Ajv, { type ErrorObject } from 'ajv';
import type express from 'express';
import type { Request } from 'express';
import { PositionerError } from '../firmware/errors';
import { ScanPlanError, type ScanPlan, type ScanRange } from '../firmware/scan-plan';
import { ScanSourceError } from '../firmware/scan-sources';
import { ScanStateError, type ScanInfo, type Scanner, type ScanSample, type ScanSettings, type SourceSpec } from '../firmware/scan';
import type { ScanRecord } from '../firmware/scan-store';
import { ApiError } from './errors';
import { scanBodySchema } from './schemas';

/** Methods of each scan path (for 405 answers). */
export const SCAN_ROUTES: Record<string, string[]> = {
  '/scan': ['GET', 'POST'],
  '/scan/pause': ['POST'],
  '/scan/resume': ['POST'],
  '/scan/results': ['GET'],
};

const ajv = new Ajv({ allErrors: false, useDefaults: true, coerceTypes: false, strict: true, discriminator: true });
const validateScan = ajv.compile(scanBodySchema);

const DEFAULT_TIMEOUT_S = { exec: 10, http: 5 } as const;

interface RangeBody {
  start_deg: number;
  stop_deg: number;
  step_deg: number;
}
type SourceBody = { kind: 'sim' | 'exec' | 'http' | 'trigger'; command?: string; url?: string; timeout_s?: number; pulse_ms?: number; then?: SourceBody | null };
export interface ScanRequestBody {
  plan:
    | { kind: 'grid'; theta: RangeBody; phi: RangeBody; order?: 'serpentine' | 'raster' }
    | { kind: 'phi_cuts'; phi_deg: number[]; theta: RangeBody }
    | { kind: 'theta_cuts'; theta_deg: number[]; phi: RangeBody }
    | { kind: 'points'; points: { theta_deg: number; phi_deg: number }[] };
  mode: 'step' | 'sweep';
  settle_s: number;
  dwell_s: number;
  samples: number;
  sample_interval_s: number;
  source?: SourceBody;
  on_error: 'continue' | 'stop';
  name?: string;
}

/** The request body checked and turned into the scanner's settings; the body comes back with every default filled. */
export function parseScanRequest(raw: unknown, defaultSource: SourceSpec | null = { kind: 'sim' }): { settings: ScanSettings; request: ScanRequestBody } {
  const body = structuredClone(raw === undefined ? {} : raw);
  if (!validateScan(body)) throw new ApiError('API_ERR_INVALID_BODY', describeScanError(validateScan.errors ?? []));
  const request = body as unknown as ScanRequestBody;
  if (request.plan.kind === 'grid') request.plan.order ??= 'serpentine';
  if (!request.source && !defaultSource) {
    throw new ApiError('API_ERR_INVALID_BODY', "POST /scan needs 'source' on real hardware: {\"kind\":\"exec\",\"command\":...}, {\"kind\":\"http\",\"url\":...} or {\"kind\":\"trigger\",...} ({\"kind\":\"sim\"} measures the simulated antenna)");
  }
  request.source = fillSource(request.source ?? { kind: 'sim' }, 'source');
  const settings: ScanSettings = {
    plan: toPlan(request.plan),
    mode: request.mode,
    settleS: request.settle_s,
    dwellS: request.dwell_s,
    samples: request.samples,
    sampleIntervalS: request.sample_interval_s,
    source: toSource(request.source),
    onError: request.on_error,
    name: request.name ?? null,
  };
  return { settings, request };
}

function fillSource(s: SourceBody, field: string): SourceBody {
  const only = (allowed: string[]) => {
    for (const key of Object.keys(s)) {
      if (key !== 'kind' && !allowed.includes(key)) throw new ApiError('API_ERR_INVALID_BODY', `${field}.${key} does not apply to a ${s.kind} source (it takes ${allowed.length ? allowed.join(', ') : 'no other field'})`);
    }
  };
  switch (s.kind) {
    case 'sim':
      only([]);
      return { kind: 'sim' };
    case 'exec':
      only(['command', 'timeout_s']);
      if (!s.command) throw new ApiError('API_ERR_INVALID_BODY', `${field}.command is required for an exec source (the command to run at each point)`);
      return { kind: 'exec', command: s.command, timeout_s: s.timeout_s ?? DEFAULT_TIMEOUT_S.exec };
    case 'http':
      only(['url', 'timeout_s']);
      if (!s.url || !/^https?:\/\//.test(s.url)) throw new ApiError('API_ERR_INVALID_BODY', `${field}.url must be an http:// or https:// URL for an http source (got ${JSON.stringify(s.url ?? null)})`);
      return { kind: 'http', url: s.url, timeout_s: s.timeout_s ?? DEFAULT_TIMEOUT_S.http };
    case 'trigger':
      only(['pulse_ms', 'then']);
      return { kind: 'trigger', pulse_ms: s.pulse_ms ?? 10, then: s.then ? fillSource(s.then, `${field}.then`) : null };
  }
}

function toSource(s: SourceBody): SourceSpec {
  switch (s.kind) {
    case 'sim':
      return { kind: 'sim' };
    case 'exec':
      return { kind: 'exec', command: s.command as string, timeoutS: s.timeout_s as number };
    case 'http':
      return { kind: 'http', url: s.url as string, timeoutS: s.timeout_s as number };
    case 'trigger':
      return { kind: 'trigger', pulseMs: s.pulse_ms as number, then: s.then ? (toSource(s.then) as Extract<SourceSpec, { kind: 'trigger' }>['then']) : null };
  }
}

function toRange(r: RangeBody): ScanRange {
  return { startDeg: r.start_deg, stopDeg: r.stop_deg, stepDeg: r.step_deg };
}

function toPlan(p: ScanRequestBody['plan']): ScanPlan {
  switch (p.kind) {
    case 'grid':
      return { kind: 'grid', theta: toRange(p.theta), phi: toRange(p.phi), order: p.order ?? 'serpentine' };
    case 'phi_cuts':
      return { kind: 'phi_cuts', phiDeg: p.phi_deg, theta: toRange(p.theta) };
    case 'theta_cuts':
      return { kind: 'theta_cuts', thetaDeg: p.theta_deg, phi: toRange(p.phi) };
    case 'points':
      return { kind: 'points', points: p.points.map((q) => ({ thetaDeg: q.theta_deg, phiDeg: q.phi_deg })) };
  }
}

/** One sentence naming the field, e.g. "plan.theta.step_deg must be a number". */
function describeScanError(errors: ErrorObject[]): string {
  const e = errors[0];
  if (!e) return 'invalid body for POST /scan';
  const field = e.instancePath ? e.instancePath.slice(1).replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/\//g, '.') : 'the body';
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return `unknown field '${String(p.additionalProperty)}' in ${field === 'the body' ? 'POST /scan' : field}`;
    case 'required':
      return `${field === 'the body' ? 'POST /scan' : field} needs '${String(p.missingProperty)}'`;
    case 'type':
      return field === 'the body' ? 'POST /scan body must be a JSON object' : `${field} must be a ${String(p.type)}`;
    case 'enum':
      return `${field} must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'discriminator':
      return `${field} needs 'kind': one of "grid", "phi_cuts", "theta_cuts", "points"${p.error === 'mapping' ? ` (got ${JSON.stringify(p.tagValue)})` : ''}`;
    default:
      return `${field} ${e.message ?? 'is invalid'}`;
  }
}

export function scanBody(info: ScanInfo) {
  return {
    id: info.id,
    name: info.name,
    state: info.state,
    points_done: info.pointsDone,
    points_total: info.pointsTotal,
    points_failed: info.pointsFailed,
    elapsed_s: info.elapsedS,
    remaining_s: info.remainingS,
    started_at: info.startedAt,
    ended_at: info.endedAt,
    request: info.request,
    error: info.error,
  };
}

export function sampleBody(s: ScanSample) {
  return { index: s.index, theta_deg: s.thetaDeg, phi_deg: s.phiDeg, time_s: s.timeS, values: s.values, error: s.error };
}

/** Column names: "value" for one value per sample, value_1..value_n for several. */
export function resultColumns(samples: readonly ScanSample[]): string[] {
  const width = Math.max(1, ...samples.map((s) => s.values.length));
  return width === 1 ? ['value'] : Array.from({ length: width }, (_, i) => `value_${i + 1}`);
}

function csvField(v: string): string {
  return /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

export function resultsCsv(samples: readonly ScanSample[]): string {
  const columns = resultColumns(samples);
  const lines = [['index', 'theta_deg', 'phi_deg', 'time_s', ...columns, 'error'].join(',')];
  for (const s of samples) {
    const values = columns.map((_, i) => (s.values[i] === undefined ? '' : String(s.values[i])));
    lines.push([s.index, s.thetaDeg, s.phiDeg, s.timeS, ...values, csvField(s.error ?? '')].join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** Firmware and scan errors as the API's: plan errors 400 naming the field, state errors 409. */
function asApiError(error: unknown): unknown {
  if (error instanceof ScanPlanError) return new ApiError('API_ERR_INVALID_BODY', error.message);
  if (error instanceof ScanStateError) return new ApiError('API_ERR_SCAN_STATE', error.message);
  if (error instanceof ScanSourceError) return new ApiError('API_ERR_INVALID_BODY', `source: ${error.message}`);
  if (error instanceof PositionerError && error.code === 'POS_ERR_HARDWARE') return new ApiError('API_ERR_INVALID_BODY', `source: ${error.message}`);
  return error;
}

function guarded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw asApiError(error);
  }
}

export function mountScanRoutes(app: express.Express, scanner: Scanner, json: express.RequestHandler): void {
  app.post('/scan', json, (req, res) => {
    const { settings, request } = parseScanRequest(req.body, scanner.defaultSource());
    const info = guarded(() => scanner.start(settings, request));
    res.status(201).json(scanBody(info));
  });

  app.get('/scan', (_req, res) => {
    const info = scanner.current();
    res.json(info ? scanBody(info) : { state: 'none', error: null, points_done: 0, points_total: 0 });
  });

  app.post('/scan/pause', (_req, res) => {
    res.json(scanBody(guarded(() => scanner.pause())));
  });

  app.post('/scan/resume', (_req, res) => {
    res.json(scanBody(guarded(() => scanner.resume())));
  });

  app.get('/scan/results', (req, res) => {
    const format = resultFormat(req);
    const id = typeof req.query.id === 'string' ? req.query.id : undefined;
    const record: ScanRecord | null = scanner.record(id);
    if (!record) throw new ApiError('API_ERR_NOT_FOUND', id ? `no scan with id ${id}; GET /scan shows the last scan's id` : 'no scan has run yet; start one with POST /scan');
    const samples = scanner.samples(record.id);
    if (format === 'csv') {
      res.setHeader('Content-Disposition', `attachment; filename="scan-${record.id.replace(/[^0-9A-Za-z-]/g, '')}.csv"`);
      res.type('text/csv; charset=utf-8').send(resultsCsv(samples));
      return;
    }
    res.json({ id: record.id, state: record.state, columns: resultColumns(samples), samples: samples.map(sampleBody) });
  });
}

function resultFormat(req: Request): 'json' | 'csv' {
  const format = req.query.format;
  if (format !== undefined) {
    if (format === 'json' || format === 'csv') return format;
    throw new ApiError('API_ERR_INVALID_BODY', `format must be json or csv, got ${JSON.stringify(format)}`);
  }
  return /\btext\/csv\b/.test(req.headers.accept ?? '') ? 'csv' : 'json';
}
