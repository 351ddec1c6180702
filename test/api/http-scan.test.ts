/**
 * The scan endpoints on a real server (api/scan-routes.ts), over whichever
 * backend POSITIONER_TEST_DRIVER names: the simulation, or the grbl or
 * Firmata driver over a pty against the simulated board (npm test runs this
 * file for all three). A scan of the simulated antenna from POST /scan to
 * its results as JSON and CSV, the 400s that name the field, the 503s while
 * it runs, POST /stop aborting it, a resume after a server restart from the
 * same SQLite file, pause/resume, and progress and samples on the WebSocket.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import WebSocket from 'ws';
import Ajv2020 from 'ajv/dist/2020';
import { openApiDocument } from '../../api/openapi';
import { createScanner } from '../../cli/assemble-scan';
import { SqliteScanStore } from '../../api/scan-store';
import { MemoryScanStore, type ScanStore } from '../../firmware/scan-store';
import { SimulatedAntenna, defaultAntennaConfig } from '../../sim/antenna';
import type { SimOutputPin } from '../../sim/trigger-output';
import { assertError, assertJson, serveApi } from '../helpers/http-server';
import type { LineClock } from '../helpers/line-clock';
import { runScan, runScanOnLine } from '../helpers/scan';
import { simOnVirtualClock, testDriver } from '../helpers/sim';

const DRIVER = testDriver();
const GRID = { kind: 'grid', theta: { start_deg: 0, stop_deg: 10, step_deg: 5 }, phi: { start_deg: 0, stop_deg: 10, step_deg: 5 } };

async function setup(t: Test, store: ScanStore = new MemoryScanStore(), simulated = true) {
  const sim = simOnVirtualClock();
  const { scanner } = createScanner({ positioner: sim.positioner, clock: sim.clock, store, now: () => new Date('2026-11-24T05:00:00Z'), simulated });
  const api = await serveApi(t, sim.positioner, undefined, { scanner });
  const clock = sim.clock;
  /** Runs the scan to its end (or pause/abort) on the virtual time line. */
  const finish = () => (DRIVER === 'sim' ? runScan(clock, scanner, { sync: true }) : runScanOnLine(clock as LineClock, scanner));
  /** Advances until `n` points are done. */
  const until = async (n: number) => {
    for (let i = 0; i < 10_000 && (scanner.current()?.pointsDone ?? 0) < n; i++) await clock.run(50e3);
  };
  return { ...sim, scanner, api, finish, until };
}

t.test('POST /scan starts a scan of the simulated antenna; GET /scan follows it to done; the results come as JSON and CSV', async (t) => {
  const { api, finish } = await setup(t);
  const res = await api.post('/scan', { plan: GRID, settle_s: 0.1, name: 'first light' });
  t.equal(res.status, 201, res.text);
  assertJson(t, res);
  const body = res.body as Record<string, any>;
  t.same(Object.keys(body), ['id', 'name', 'state', 'points_done', 'points_total', 'points_failed', 'elapsed_s', 'remaining_s', 'started_at', 'ended_at', 'request', 'error']);
  t.match(body, { id: '2026-11-24T05:00:00Z-1', name: 'first light', state: 'running', points_total: 9, points_failed: 0, remaining_s: null, started_at: '2026-11-24T05:00:00.000Z', ended_at: null, error: null });
  t.same(body.request, {
    plan: { ...GRID, order: 'serpentine' },
    settle_s: 0.1,
    name: 'first light',
    mode: 'step',
    dwell_s: 0,
    samples: 1,
    sample_interval_s: 0.1,
    on_error: 'continue',
    source: { kind: 'sim' },
  }, 'the request with every default filled');

  await finish();
  const done = (await api.get('/scan')).body as Record<string, any>;
  t.match(done, { state: 'done', points_done: 9, points_total: 9, remaining_s: 0, error: null });
  t.ok(done.elapsed_s > 0.8, `elapsed is scan time: ${done.elapsed_s}`);
  t.type(done.ended_at, 'string');

  const json = await api.get('/scan/results');
  t.equal(json.status, 200);
  const results = json.body as { id: string; columns: string[]; samples: Record<string, any>[] };
  t.equal(results.id, done.id);
  t.same(results.columns, ['value']);
  t.same(results.samples.map((s) => [s.index, s.theta_deg, s.phi_deg]), [
    [0, 0, 0], [1, 5, 0], [2, 10, 0], [3, 10, 5], [4, 5, 5], [5, 0, 5], [6, 0, 10], [7, 5, 10], [8, 10, 10],
  ], 'serpentine order');
  const antenna = new SimulatedAntenna(defaultAntennaConfig());
  for (const s of results.samples) {
    t.same(Object.keys(s), ['index', 'theta_deg', 'phi_deg', 'time_s', 'values', 'error']);
    t.same(s.values, [antenna.measureDb(s.theta_deg, s.phi_deg, s.index, 0)], `sample ${s.index} is the antenna's value`);
  }

  const csv = await api.get('/scan/results?format=csv');
  t.equal(csv.status, 200);
  t.match(csv.headers.get('content-type'), /^text\/csv/);
  t.match(csv.headers.get('content-disposition'), /attachment; filename="scan-.*\.csv"/);
  const lines = csv.text.trim().split('\n');
  t.equal(lines[0], 'index,theta_deg,phi_deg,time_s,value,error');
  t.equal(lines.length, 10);
  const row = lines[4].split(',');
  t.same([row[0], row[1], row[2], row[4], row[5]], ['3', '10', '5', String(results.samples[3].values[0]), '']);
  const byAccept = await api.send('GET', '/scan/results', { headers: { accept: 'text/csv' } });
  t.equal(byAccept.text, csv.text, 'Accept: text/csv selects CSV too');
  assertError(t, await api.get('/scan/results?format=xml'), 400, 'API_ERR_INVALID_BODY', 'an unknown format');
  assertError(t, await api.get('/scan/results?id=nope'), 404, 'API_ERR_NOT_FOUND', 'an unknown id');
});

t.test('a bad plan is refused with 400 naming the field; nothing moves', async (t) => {
  const { api } = await setup(t);
  const refuse = async (body: unknown, pattern: RegExp) => {
    const res = await api.post('/scan', body);
    assertError(t, res, 400, 'API_ERR_INVALID_BODY', JSON.stringify(body).slice(0, 80));
    t.match((res.body as { error: string }).error, pattern);
  };
  await refuse({ plan: { ...GRID, theta: { start_deg: 0, stop_deg: 10, step_deg: 0 } } }, /^plan\.theta\.step_deg must be > 0/);
  await refuse({ plan: { ...GRID, phi: { start_deg: 0, stop_deg: 400, step_deg: 5 } } }, /^plan\.phi\.stop_deg must be between 0 and 360/);
  await refuse({ plan: { ...GRID, theta: { start_deg: 0, stop_deg: 10 } } }, /plan\.theta needs 'step_deg'/);
  await refuse({ plan: { ...GRID, colour: 'red' } }, /unknown field 'colour' in plan/);
  await refuse({ plan: { kind: 'spiral' } }, /plan needs 'kind': one of "grid", "phi_cuts", "theta_cuts", "points" \(got "spiral"\)/);
  await refuse({ plan: { theta: GRID.theta } }, /plan needs 'kind'/);
  await refuse({ plan: GRID, settle_s: -1 }, /settle_s must be >= 0/);
  await refuse({ plan: GRID, mode: 'fast' }, /mode must be one of "step", "sweep"/);
  await refuse({ plan: GRID, source: { kind: 'exec' } }, /source\.command is required/);
  await refuse({ plan: GRID, source: { kind: 'http', url: 'ftp://x' } }, /source\.url must be an http/);
  await refuse({ plan: GRID, source: { kind: 'sim', command: 'x' } }, /source\.command does not apply to a sim source/);
  await refuse({ plan: { kind: 'points', points: [{ theta_deg: 200, phi_deg: 0 }] } }, /^plan\.points\[0\]\.theta_deg must be between 0 and 180/);
  await refuse({}, /POST \/scan needs 'plan'/);
  t.equal(((await api.get('/scan')).body as { state: string }).state, 'none', 'no scan was started');
  t.equal(((await api.get('/status')).body as { state: string }).state, 'idle');
});

t.test('while a scan runs: a second POST /scan and motion commands get 503; POST /stop aborts it, keeps its samples, and resume finishes it', async (t) => {
  const { api, until, finish } = await setup(t);
  t.equal((await api.post('/scan', { plan: GRID, settle_s: 0.1 })).status, 201);
  await until(2);
  assertError(t, await api.post('/scan', { plan: GRID }), 503, 'POS_ERR_BUSY', 'a second scan');
  assertError(t, await api.post('/move', { theta_deg: 90, phi_deg: 90 }), 503, 'POS_ERR_BUSY', 'a move while scanning');
  assertError(t, await api.post('/home', { axis: 'both' }), 503, 'POS_ERR_BUSY', 'a homing while scanning');
  const stop = await api.post('/stop');
  t.equal(stop.status, 200);
  const aborted = (await api.get('/scan')).body as Record<string, any>;
  t.equal(aborted.state, 'aborted');
  t.match(aborted.error, /stop/);
  const kept = aborted.points_done as number;
  t.ok(kept >= 2 && kept < 9, `points so far: ${kept}`);
  const results = (await api.get('/scan/results')).body as { samples: unknown[] };
  t.equal(results.samples.length, kept, 'the results so far are kept');
  const resumed = await api.post('/scan/resume');
  t.equal(resumed.status, 200, resumed.text);
  t.equal((resumed.body as { state: string }).state, 'running');
  await finish();
  const done = (await api.get('/scan')).body as Record<string, any>;
  t.equal(done.state, 'done');
  const all = (await api.get('/scan/results')).body as { samples: { index: number }[] };
  t.same(all.samples.map((s) => s.index), [0, 1, 2, 3, 4, 5, 6, 7, 8], 'every point once');
  assertError(t, await api.post('/scan/resume'), 409, 'API_ERR_SCAN_STATE', 'resuming a done scan');
  assertError(t, await api.post('/scan/pause'), 409, 'API_ERR_SCAN_STATE', 'pausing with nothing running');
});

t.test('pause stops at the next point and frees the positioner; resume goes on', async (t) => {
  const { api, until, finish, clock } = await setup(t);
  await api.post('/scan', { plan: GRID, settle_s: 0.1 });
  await until(1);
  t.equal((await api.post('/scan/pause')).status, 200);
  for (let i = 0; i < 200 && ((await api.get('/scan')).body as { state: string }).state !== 'paused'; i++) await clock.run(50e3);
  const paused = (await api.get('/scan')).body as Record<string, any>;
  t.equal(paused.state, 'paused');
  t.equal((await api.post('/move/relative', { d_theta: 1, d_phi: 0 })).status, 200, 'a paused scan leaves the positioner free');
  await clock.runIdle();
  t.equal((await api.post('/scan/resume')).status, 200);
  await finish();
  t.equal(((await api.get('/scan')).body as { state: string }).state, 'done');
  const all = (await api.get('/scan/results')).body as { samples: { index: number }[] };
  t.same(all.samples.map((s) => s.index), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
});

t.test('a scan aborted by POST /stop, then the server restarts on the same SQLite file: GET /scan shows it, resume finishes it', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'http-scan-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'scans.db');
  let id = '';
  let kept = 0;
  await t.test('first server', async (t) => {
    const store = new SqliteScanStore(file);
    t.teardown(() => store.close());
    const { api, until } = await setup(t, store);
    await api.post('/scan', { plan: GRID, settle_s: 0.1 });
    await until(3);
    await api.post('/stop');
    const aborted = (await api.get('/scan')).body as Record<string, any>;
    t.equal(aborted.state, 'aborted');
    id = aborted.id;
    kept = aborted.points_done;
  });
  const store = new SqliteScanStore(file);
  t.teardown(() => store.close());
  const { api, finish } = await setup(t, store);
  const found = (await api.get('/scan')).body as Record<string, any>;
  t.match(found, { id, state: 'aborted', points_done: kept, points_total: 9 });
  t.equal(((await api.get('/scan/results')).body as { samples: unknown[] }).samples.length, kept, 'the results before the restart are there');
  t.equal((await api.post('/scan/resume')).status, 200);
  await finish();
  const done = (await api.get('/scan')).body as Record<string, any>;
  t.match(done, { id, state: 'done', points_done: 9 });
  const all = (await api.get(`/scan/results?id=${encodeURIComponent(id)}`)).body as { samples: { index: number }[] };
  t.same(all.samples.map((s) => s.index), [0, 1, 2, 3, 4, 5, 6, 7, 8], 'every point once across the restart');
});

t.test('the WebSocket carries scan progress and every sample', async (t) => {
  const { api, finish } = await setup(t);
  const ws = new WebSocket(api.wsUrl);
  t.teardown(() => ws.terminate());
  const messages: Record<string, any>[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data)) as Record<string, any>));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  await api.post('/scan', { plan: GRID, settle_s: 0.1 });
  await finish();
  const waitFor = async (pred: () => boolean) => {
    for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 25));
  };
  await waitFor(() => messages.some((m) => m.type === 'scan' && m.state === 'done') && messages.filter((m) => m.type === 'sample').length >= 9);
  const scans = messages.filter((m) => m.type === 'scan');
  const samples = messages.filter((m) => m.type === 'sample');
  t.equal(scans[0].state, 'running', 'the start');
  // Nine samples in no wall time: progress is sent on each state change and at most every 100 ms, not per sample.
  t.ok(scans.length <= 4, `progress messages are throttled: ${scans.length} for 9 samples`);
  t.match(scans.at(-1), { state: 'done', points_done: 9 }, 'the end');
  t.same(samples.map((s) => s.index), [0, 1, 2, 3, 4, 5, 6, 7, 8], 'one sample message per point');
  t.same(Object.keys(samples[0]), ['type', 'seq', 'scan_id', 'index', 'theta_deg', 'phi_deg', 'time_s', 'values', 'error']);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ $id: 'openapi.json', components: openApiDocument().components });
  const validateScan = ajv.getSchema('openapi.json#/components/schemas/ScanMessage')!;
  const validateSample = ajv.getSchema('openapi.json#/components/schemas/SampleMessage')!;
  for (const m of scans) t.ok(validateScan(m), `scan message matches ScanMessage ${JSON.stringify(validateScan.errors)}`);
  for (const m of samples) t.ok(validateSample(m), `sample message matches SampleMessage ${JSON.stringify(validateSample.errors)}`);
  const seqs = messages.map((m) => m.seq);
  t.same(seqs, seqs.map((_, i) => seqs[0] + i), 'seq counts every message');

  // A client that connects later gets the scan once, right after the status.
  const late = new WebSocket(api.wsUrl);
  t.teardown(() => late.terminate());
  const first: Record<string, any>[] = [];
  late.on('message', (data) => first.push(JSON.parse(String(data)) as Record<string, any>));
  for (let i = 0; i < 200 && first.length < 3; i++) await new Promise((r) => setTimeout(r, 25));
  t.same(first.slice(0, 3).map((m) => m.type), ['config', 'status', 'scan']);
  t.match(first[2], { state: 'done', points_done: 9 });
});

t.test('trigger source: a pulse on the board output at each point, once the positioner stands at it', async (t) => {
  const rig = await setup(t);
  const { api, clock, scanner, sim } = rig;
  const trigger = (rig as unknown as { trigger: SimOutputPin }).trigger;
  const perDeg = { theta: 320, phi: 800 };
  const powerOn = { theta: sim.theta.truePositionSteps, phi: sim.phi.truePositionSteps };
  // Where the shaft really is at each rising edge, in the firmware's frame (degrees from power-on).
  const atEdges: [number, number][] = [];
  trigger.onEdge = (high) => {
    if (high) atEdges.push([(sim.theta.truePositionSteps - powerOn.theta) / perDeg.theta, (sim.phi.truePositionSteps - powerOn.phi) / perDeg.phi]);
  };
  const points = [{ theta_deg: 0, phi_deg: 0 }, { theta_deg: 4, phi_deg: 2 }, { theta_deg: 1, phi_deg: 3 }];
  const res = await api.post('/scan', { plan: { kind: 'points', points }, settle_s: 0.05, source: { kind: 'trigger', pulse_ms: 10 } });
  t.equal(res.status, 201, res.text);
  if (DRIVER === 'sim') await runScan(clock, scanner, { clockDriven: true });
  else await runScanOnLine(clock as LineClock, scanner, { clockDriven: true, sliceUs: 5e3 });
  const done = (await api.get('/scan')).body as Record<string, any>;
  t.match(done, { state: 'done', points_done: 3, points_failed: 0 }, String(done.error));
  const pulses = trigger.pulses();
  t.equal(pulses.length, 3, 'one pulse per point');
  // grbl dwells in 50 ms steps (nuts_bolts.c delay_sec()): a 10 ms pulse lasts 50 ms there.
  const expectedUs = DRIVER === 'grbl' ? 50_000 : 10_000;
  for (const p of pulses) t.ok(Math.abs(p.endUs - p.startUs - expectedUs) <= 2_000, `pulse of ${(p.endUs - p.startUs) / 1000} ms (expected ${expectedUs / 1000} ms)`);
  t.same(atEdges.map(([a, b]) => [Math.round(a * 1e3) / 1e3, Math.round(b * 1e3) / 1e3]), points.map((p) => [p.theta_deg, p.phi_deg]), 'each pulse is given at its point');
  t.equal(trigger.high, false, 'the output is low at the end');
  const results = (await api.get('/scan/results')).body as { samples: { values: number[]; error: null }[] };
  t.same(results.samples.map((s) => [s.values, s.error]), [[[], null], [[], null], [[], null]], 'a bare trigger leaves the values empty');
});

t.test('sweep: samples taken while moving along each cut, stamped with the position read at the sample time', async (t) => {
  const { api, finish } = await setup(t);
  const res = await api.post('/scan', { plan: { kind: 'phi_cuts', phi_deg: [0, 10], theta: { start_deg: 0, stop_deg: 20, step_deg: 10 } }, mode: 'sweep', sample_interval_s: 0.2, settle_s: 0.1 });
  t.equal(res.status, 201, res.text);
  await finish();
  const done = (await api.get('/scan')).body as Record<string, any>;
  t.match(done, { state: 'done', points_done: 6, points_total: 6 }, String(done.error));
  const { samples } = (await api.get('/scan/results')).body as { samples: { index: number; theta_deg: number; phi_deg: number; time_s: number; values: number[] }[] };
  t.ok(samples.length >= 10, `samples along both 20 deg sweeps: ${samples.length}`);
  t.same(samples.map((s) => s.index), samples.map((_, i) => i), 'numbered in order');
  for (let i = 1; i < samples.length; i++) t.ok(samples[i].time_s >= samples[i - 1].time_s, `time runs on at sample ${i}`);
  const cut0 = samples.filter((s) => s.phi_deg === 0);
  t.ok(cut0.some((s) => s.theta_deg > 0.5 && s.theta_deg < 19.5 && Math.abs(s.theta_deg - 10) > 0.5), 'samples between the grid points: taken while moving');
  t.ok(cut0.every((s, i) => i === 0 || s.theta_deg >= cut0[i - 1].theta_deg - 1e-9), 'theta rises along the first cut');
  const antenna = new SimulatedAntenna(defaultAntennaConfig());
  for (const s of samples.slice(0, 5)) t.same(s.values, [antenna.measureDb(s.theta_deg, s.phi_deg, s.index, 0)], `sample ${s.index} is the antenna at its stamped position`);
});

t.test('an exec source that fails on some points: those rows carry the error (CSV-quoted), the others the numbers it printed', async (t) => {
  const { api, clock, scanner } = await setup(t);
  const command = 'if [ "$POINT_INDEX" = 1 ]; then echo "VNA: no lock, retry" >&2; exit 2; fi; echo "S21 $THETA_DEG dB"';
  const res = await api.post('/scan', { plan: { kind: 'points', points: [{ theta_deg: 0, phi_deg: 0 }, { theta_deg: 2, phi_deg: 0 }, { theta_deg: 4, phi_deg: 0 }] }, settle_s: 0.05, source: { kind: 'exec', command } });
  t.equal(res.status, 201, res.text);
  t.same((res.body as { request: { source: unknown } }).request.source, { kind: 'exec', command, timeout_s: 10 }, 'the default timeout filled in');
  if (DRIVER === 'sim') await runScan(clock, scanner);
  else await runScanOnLine(clock as LineClock, scanner, { sliceUs: 20e3 });
  const done = (await api.get('/scan')).body as Record<string, any>;
  t.match(done, { state: 'done', points_done: 3, points_failed: 1 });
  const { samples } = (await api.get('/scan/results')).body as { samples: { values: number[]; error: string | null }[] };
  t.same(samples.map((s) => s.values), [[21, 0], [], [21, 4]], 'every number printed (S21 too)');
  t.match(samples[1].error, /exited with status 2: VNA: no lock, retry/);
  const csv = (await api.get('/scan/results?format=csv')).text.trim().split('\n');
  t.equal(csv[0], 'index,theta_deg,phi_deg,time_s,value_1,value_2,error', 'two value columns');
  t.match(csv[2], /^1,2,0,[\d.]+,,,"the command .* exited with status 2: VNA: no lock, retry"$/, 'the failed row: empty values, the error quoted (it has a comma)');
});

t.test('on real hardware a scan must name its source; the simulated antenna is there when asked for', async (t) => {
  const { api } = await setup(t, new MemoryScanStore(), false);
  const res = await api.post('/scan', { plan: GRID });
  assertError(t, res, 400, 'API_ERR_INVALID_BODY', 'no source');
  t.match((res.body as { error: string }).error, /needs 'source' on real hardware/);
  t.equal((await api.post('/scan', { plan: GRID, source: { kind: 'sim' } })).status, 201);
});
