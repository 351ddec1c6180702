/**
 * Every error answer of the REST API on a real server: the status code, the
 * seed's body (`{"error": "..."}` and nothing else) and the stable code in the
 * Positioner-Error-Code header. After every rejected request the positioner
 * and its configuration must be exactly as before.
 */
import t, { type Test } from 'tap';
import { SEC, simOnVirtualClock, testDriver } from '../helpers/sim';
import { assertError, serveApi, type ApiClient, type SendOptions } from '../helpers/http-server';

const JSON_CT = { 'content-type': 'application/json' };

interface Case {
  what: string;
  method?: string;
  path: string;
  /** A JSON value to send, or raw text/bytes via `raw`. */
  json?: unknown;
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
  status: number;
  code: string;
}

async function setup(t: Test) {
  const sim = simOnVirtualClock();
  const api = await serveApi(t, sim.positioner);
  return { ...sim, api };
}

async function snapshot(api: ApiClient) {
  const [status, config] = await Promise.all([api.get('/status'), api.get('/config')]);
  return { status: status.body, config: config.body };
}

/** Sends each case and checks the error answer and that nothing changed. */
async function expectErrors(t: Test, api: ApiClient, cases: Case[]) {
  for (const c of cases) {
    const before = await snapshot(api);
    const opts: SendOptions = { headers: c.headers };
    if (c.raw !== undefined) opts.raw = c.raw;
    else if (c.json !== undefined) opts.json = c.json;
    const res = await api.send(c.method ?? 'POST', c.path, opts);
    assertError(t, res, c.status, c.code, c.what);
    // Busy passes, so a busy answer says when to retry; nothing else does.
    t.equal(res.headers.get('retry-after'), c.code === 'POS_ERR_BUSY' ? '1' : null, `${c.what}: Retry-After`);
    t.strictSame(await snapshot(api), before, `${c.what}: status and config unchanged`);
  }
}

t.test('malformed JSON is a 400 on every endpoint that reads a body', async (t) => {
  const { api } = await setup(t);
  const malformed = ['{', '{"theta_deg": 90, "phi_deg": 180', "{'theta_deg': 90}", '{"theta_deg": 90,}', 'theta_deg=90&phi_deg=180', 'NaN', '{"a": 1} trailing'];
  const cases: Case[] = [];
  for (const path of ['/move', '/move/relative', '/home', '/config']) {
    for (const raw of malformed) {
      cases.push({ what: `${path} ${raw}`, path, raw, headers: JSON_CT, status: 400, code: 'API_ERR_MALFORMED_JSON' });
    }
    // Bodies are JSON whatever the Content-Type says, so the same holds without one.
    cases.push({ what: `${path} '{' without Content-Type`, path, raw: '{', status: 400, code: 'API_ERR_MALFORMED_JSON' });
  }
  await expectErrors(t, api, cases);
});

t.test('a JSON body that is not an object is a 400', async (t) => {
  const { api } = await setup(t);
  const cases: Case[] = [];
  for (const path of ['/move', '/move/relative', '/home', '/config']) {
    cases.push({ what: `${path} []`, path, raw: '[]', headers: JSON_CT, status: 400, code: 'API_ERR_INVALID_BODY' });
    cases.push({ what: `${path} [{"theta_deg":1,"phi_deg":1}]`, path, json: [{ theta_deg: 1, phi_deg: 1 }], status: 400, code: 'API_ERR_INVALID_BODY' });
    // Top-level scalars are valid JSON, refused by the strict parser: reported as the wrong shape, not as broken JSON.
    for (const raw of ['null', '42', '"both"', 'true']) {
      cases.push({ what: `${path} ${raw}`, path, raw, headers: JSON_CT, status: 400, code: 'API_ERR_INVALID_BODY' });
    }
  }
  await expectErrors(t, api, cases);
  const r = await api.send('POST', '/move', { raw: 'null', headers: JSON_CT });
  t.equal((r.body as { error: string }).error, 'request body must be a JSON object, got null');
  const n = await api.send('POST', '/home', { raw: '42', headers: JSON_CT });
  t.equal((n.body as { error: string }).error, 'request body must be a JSON object, got number');
});

t.test('POST /move: wrong types, missing and unknown fields are 400', async (t) => {
  const { api } = await setup(t);
  const bad = (what: string, json: unknown): Case => ({ what: `/move ${what}`, path: '/move', json, status: 400, code: 'API_ERR_INVALID_BODY' });
  await expectErrors(t, api, [
    bad('theta_deg as a string "90"', { theta_deg: '90', phi_deg: 180 }),
    bad('phi_deg as a string', { theta_deg: 90, phi_deg: '180' }),
    bad('theta_deg null', { theta_deg: null, phi_deg: 180 }),
    bad('theta_deg true', { theta_deg: true, phi_deg: 180 }),
    bad('theta_deg [90]', { theta_deg: [90], phi_deg: 180 }),
    bad('theta_deg {}', { theta_deg: {}, phi_deg: 180 }),
    bad('missing phi_deg', { theta_deg: 90 }),
    bad('missing theta_deg', { phi_deg: 180 }),
    bad('empty object', {}),
    bad('unknown field', { theta_deg: 90, phi_deg: 180, speed: 5 }),
    bad('misspelt field', { theta: 90, phi_deg: 180 }),
    bad('relative fields on /move', { d_theta: 1, d_phi: 1 }),
    { what: '/move with no body', path: '/move', status: 400, code: 'API_ERR_INVALID_BODY' },
    { what: '/move __proto__ key', path: '/move', raw: '{"__proto__":{"x":1},"theta_deg":1,"phi_deg":1}', status: 400, code: 'API_ERR_INVALID_BODY' },
    // 1e400 parses to Infinity: not a number the API accepts.
    { what: '/move theta_deg 1e400', path: '/move', raw: '{"theta_deg":1e400,"phi_deg":1}', status: 400, code: 'API_ERR_INVALID_BODY' },
    { what: '/move phi_deg -1e400', path: '/move', raw: '{"theta_deg":1,"phi_deg":-1e400}', status: 400, code: 'API_ERR_INVALID_BODY' },
  ]);
});

t.test('POST /move: targets outside theta 0..180 or phi 0..360 are 400 out of range', async (t) => {
  const { api } = await setup(t);
  const out = (theta: number, phi: number): Case => ({
    what: `/move ${theta}, ${phi}`,
    path: '/move',
    json: { theta_deg: theta, phi_deg: phi },
    status: 400,
    code: 'POS_ERR_OUT_OF_RANGE',
  });
  await expectErrors(t, api, [out(180.5, 0), out(-1, 0), out(0, 361), out(0, -0.001), out(180.0001, 360), out(90, 360.0001), out(1e300, 0), out(-1e300, 0), out(0, 1e308)]);
});

t.test('POST /move/relative: bad bodies are 400; results outside the ranges are 400 out of range', async (t) => {
  const { api, clock } = await setup(t);
  await api.post('/move', { theta_deg: 170, phi_deg: 350 });
  await clock.runIdle();
  const bad = (what: string, json: unknown): Case => ({ what: `/move/relative ${what}`, path: '/move/relative', json, status: 400, code: 'API_ERR_INVALID_BODY' });
  const out = (dTheta: number, dPhi: number): Case => ({
    what: `/move/relative ${dTheta}, ${dPhi} from 170, 350`,
    path: '/move/relative',
    json: { d_theta: dTheta, d_phi: dPhi },
    status: 400,
    code: 'POS_ERR_OUT_OF_RANGE',
  });
  await expectErrors(t, api, [
    bad('d_theta as a string', { d_theta: '1', d_phi: 0 }),
    bad('d_phi null', { d_theta: 1, d_phi: null }),
    bad('missing d_phi', { d_theta: 1 }),
    bad('missing both', {}),
    bad('unknown field', { d_theta: 1, d_phi: 1, relative: true }),
    bad('absolute fields', { theta_deg: 1, phi_deg: 1 }),
    out(10.5, 0),
    out(0, 10.5),
    out(-170.5, 0),
    out(0, -351),
    out(11, 11),
    out(1e308, 0),
    out(-1e308, 0),
  ]);
  // The ends of the ranges are reachable.
  const ok = await api.post('/move/relative', { d_theta: 10, d_phi: -350 });
  t.strictSame(ok.body, { status: 'moving', target_theta: 180, target_phi: 0 });
});

t.test('POST /move/relative from the power-on zero cannot go negative', async (t) => {
  const { api } = await setup(t);
  await expectErrors(t, api, [
    { what: 'd_theta -1 from 0', path: '/move/relative', json: { d_theta: -1, d_phi: 0 }, status: 400, code: 'POS_ERR_OUT_OF_RANGE' },
    { what: 'd_phi -0.01 from 0', path: '/move/relative', json: { d_theta: 0, d_phi: -0.01 }, status: 400, code: 'POS_ERR_OUT_OF_RANGE' },
  ]);
});

t.test('POST /home: an axis other than theta, phi or both is 400', async (t) => {
  const { api } = await setup(t);
  const bad = (what: string, json: unknown): Case => ({ what: `/home ${what}`, path: '/home', json, status: 400, code: 'API_ERR_INVALID_BODY' });
  await expectErrors(t, api, [
    bad('axis x', { axis: 'x' }),
    bad('axis THETA', { axis: 'THETA' }),
    bad('axis "both "', { axis: 'both ' }),
    bad('axis empty string', { axis: '' }),
    bad('axis θ', { axis: 'θ' }),
    bad('axis 1', { axis: 1 }),
    bad('axis null', { axis: null }),
    bad('axis ["theta"]', { axis: ['theta'] }),
    bad('unknown field', { axis: 'both', force: true }),
    bad('misspelt field', { axes: 'both' }),
  ]);
});

t.test('POST /config: unknown and read-only fields are 400 and change nothing', async (t) => {
  const { api } = await setup(t);
  const unknown = (json: unknown): Case => ({ what: `/config ${JSON.stringify(json)}`, path: '/config', json, status: 400, code: 'API_ERR_INVALID_BODY' });
  const readOnly = (json: unknown): Case => ({ what: `/config ${JSON.stringify(json)}`, path: '/config', json, status: 400, code: 'POS_ERR_CONFIG_READ_ONLY' });
  await expectErrors(t, api, [
    unknown({ foo: 1 }),
    unknown({ speed: 20, foo: 1 }),
    unknown({ Speed: 20 }),
    unknown({ speed_deg_s: 20 }),
    // Read-only even when the value sent is the current one.
    readOnly({ microstepping: 32 }),
    readOnly({ microstepping: 16 }),
    readOnly({ theta_steps_per_deg: 100 }),
    readOnly({ phi_steps_per_deg: 800 }),
    readOnly({ max_speed: 1000 }),
    readOnly({ max_accel: 1000 }),
    readOnly({ speed: 20, microstepping: 8 }),
    readOnly({ accel: 30, theta_steps_per_deg: 1, phi_steps_per_deg: 1 }),
  ]);
});

t.test('POST /config: wrong types and out-of-range speed or accel are 400 and change nothing', async (t) => {
  const { api } = await setup(t);
  const type = (json: unknown): Case => ({ what: `/config ${JSON.stringify(json)}`, path: '/config', json, status: 400, code: 'API_ERR_INVALID_BODY' });
  const out = (json: unknown, raw?: string): Case => ({ what: `/config ${raw ?? JSON.stringify(json)}`, path: '/config', json, raw, status: 400, code: 'POS_ERR_OUT_OF_RANGE' });
  await expectErrors(t, api, [
    type({ speed: '10' }),
    type({ accel: null }),
    type({ speed: [10] }),
    type({ speed: true }),
    { what: '/config speed 1e400', path: '/config', raw: '{"speed":1e400}', status: 400, code: 'API_ERR_INVALID_BODY' },
    out({ speed: 0 }),
    out({ speed: -0 }),
    out({ speed: -10 }),
    out({ speed: 60.0001 }),
    out({ speed: 1e308 }),
    out({ accel: 0 }),
    out({ accel: -1 }),
    out({ accel: 500.5 }),
    // All fields are checked before any is applied.
    out({ speed: 20, accel: 0 }),
    out({ speed: 61, accel: 100 }),
    // So small that a move's step times overflow to Infinity: refused, not silently accepted.
    out(undefined, '{"speed":1e-320}'),
    out(undefined, '{"accel":1e-320}'),
    out({ speed: 1e-9 }),
  ]);
});

/** Every motion command, each of which must meet a 503 while the positioner is busy. */
function busyCases(state: string): Case[] {
  const busy = (what: string, path: string, json?: unknown): Case => ({ what: `${what} while ${state}`, path, json, status: 503, code: 'POS_ERR_BUSY' });
  return [
    busy('/move', '/move', { theta_deg: 10, phi_deg: 10 }),
    busy('/move/relative', '/move/relative', { d_theta: 1, d_phi: 1 }),
    busy('/home theta', '/home', { axis: 'theta' }),
    busy('/home phi', '/home', { axis: 'phi' }),
    busy('/home with no body', '/home'),
  ];
}

t.test('move, move/relative and home are 503 while moving, and the move carries on to its target', async (t) => {
  const { api, clock } = await setup(t);
  t.equal((await api.post('/move', { theta_deg: 90, phi_deg: 180 })).status, 200);
  await clock.run(1 * SEC);
  await expectErrors(t, api, [
    ...busyCases('moving'),
    { what: '/move to the same target while moving', path: '/move', json: { theta_deg: 90, phi_deg: 180 }, status: 503, code: 'POS_ERR_BUSY' },
  ]);
  await clock.runIdle();
  const s = (await api.get('/status')).body as Record<string, unknown>;
  t.equal(s.theta_deg, 90);
  t.equal(s.phi_deg, 180);
  t.equal(s.state, 'idle');
  t.equal((await api.post('/move', { theta_deg: 10, phi_deg: 10 })).status, 200, 'accepted again once idle');
});

t.test('move, move/relative and home are 503 while homing, and homing completes', async (t) => {
  const { api, clock } = await setup(t);
  t.equal((await api.post('/home', { axis: 'both' })).status, 200);
  await clock.run(1 * SEC);
  await expectErrors(t, api, busyCases('homing'));
  await clock.runIdle();
  const s = (await api.get('/status')).body as Record<string, unknown>;
  t.equal(s.homed, true);
  t.equal(s.state, 'idle');
});

t.test('POST /config and reads still answer while moving', async (t) => {
  const { api, clock } = await setup(t);
  await api.post('/move', { theta_deg: 90, phi_deg: 180 });
  await clock.run(1 * SEC);
  t.equal((await api.get('/status')).status, 200);
  t.equal((await api.get('/config')).status, 200);
  t.equal((await api.post('/config', { speed: 20 })).status, 200, 'config is not a motion command: no 503');
});

// grbl has no input for a stepper driver's fault output: a driver that shuts down is invisible to it (docs/hardware.md).
const NO_DRIVER_FAULT_INPUT = testDriver() === 'grbl' ? 'grbl cannot see a stepper driver fault (no input for it)' : false;

t.test('a hardware fault puts the positioner in its error state: moves are 503 until homing clears it', { skip: NO_DRIVER_FAULT_INPUT }, async (t) => {
  const { api, clock, sim } = await setup(t);
  await api.post('/move', { theta_deg: 90, phi_deg: 180 });
  await clock.run(1 * SEC);
  sim.theta.faults.driver = 'overcurrent';
  await clock.run(1 * SEC);
  let s = (await api.get('/status')).body as Record<string, any>;
  t.equal(s.state, 'error');
  t.equal(s.moving, false);
  t.equal(s.fault.code, 'POS_ERR_HARDWARE');
  t.match(s.fault.message, /overcurrent/);
  await expectErrors(t, api, [
    { what: '/move in the error state', path: '/move', json: { theta_deg: 1, phi_deg: 1 }, status: 503, code: 'POS_ERR_FAULT' },
    { what: '/move/relative in the error state', path: '/move/relative', json: { d_theta: 1, d_phi: 1 }, status: 503, code: 'POS_ERR_FAULT' },
  ]);
  t.strictSame((await api.post('/stop')).body, { status: 'stopped' }, 'stop still answers');
  t.equal(((await api.get('/status')).body as Record<string, unknown>).state, 'error', 'stop does not clear the fault');

  sim.theta.faults.driver = null;
  t.strictSame((await api.post('/home')).body, { status: 'homing', axis: 'both' });
  await clock.runIdle();
  s = (await api.get('/status')).body as Record<string, any>;
  t.equal(s.state, 'idle');
  t.equal(s.fault, null);
  t.equal((await api.post('/move', { theta_deg: 1, phi_deg: 1 })).status, 200);
});

t.test('unknown paths are a JSON 404', async (t) => {
  const { api } = await setup(t);
  // GET / is the dashboard (issue 4); paths beside it are still unknown.
  const cases: Case[] = [
    ['GET', '/dashboard'],
    ['GET', '/index.htm'],
    ['GET', '/nope'],
    ['POST', '/moves'],
    ['POST', '/move/absolute'],
    ['POST', '/move/relative/extra'],
    ['GET', '/status/theta'],
    ['DELETE', '/config/speed'],
    ['GET', '/%E2%82'],
  ].map(([method, path]) => ({ what: `${method} ${path}`, method, path, status: 404, code: 'API_ERR_NOT_FOUND' }));
  await expectErrors(t, api, cases);
});

t.test('a wrong method on a known path is a JSON 405 with an Allow header', async (t) => {
  const { api } = await setup(t);
  const cases: [string, string, string][] = [
    ['POST', '/', 'GET'],
    ['POST', '/status', 'GET'],
    ['DELETE', '/status', 'GET'],
    ['GET', '/move', 'POST'],
    ['PUT', '/move', 'POST'],
    ['GET', '/move/relative', 'POST'],
    ['GET', '/home', 'POST'],
    ['GET', '/stop', 'POST'],
    ['DELETE', '/stop', 'POST'],
    ['PUT', '/config', 'GET, POST'],
    ['PATCH', '/config', 'GET, POST'],
  ];
  for (const [method, path, allow] of cases) {
    const res = await api.send(method, path);
    assertError(t, res, 405, 'API_ERR_METHOD_NOT_ALLOWED', `${method} ${path}`);
    t.equal(res.headers.get('allow'), allow, `${method} ${path}: Allow: ${allow}`);
  }
  // A wrong method never reaches the positioner: GET /stop must not stop a move.
  const sim = simOnVirtualClock();
  const api2 = await serveApi(t, sim.positioner);
  await api2.post('/move', { theta_deg: 10, phi_deg: 10 });
  await api2.get('/stop');
  t.equal(((await api2.get('/status')).body as Record<string, unknown>).state, 'moving');
});

t.test('a 100 KB body is a JSON 413 on every endpoint that reads a body', async (t) => {
  const { api } = await setup(t);
  const junk = 'x'.repeat(100 * 1024);
  // Valid JSON, valid fields, just too big: the size limit comes first.
  const padded = JSON.stringify({ theta_deg: 1, phi_deg: 1, pad: 'y'.repeat(100 * 1024) });
  const cases: Case[] = [];
  for (const path of ['/move', '/move/relative', '/home', '/config']) {
    cases.push({ what: `${path} 100 KB of junk`, path, raw: junk, status: 413, code: 'API_ERR_PAYLOAD_TOO_LARGE' });
    cases.push({ what: `${path} 100 KB of JSON`, path, raw: padded, headers: JSON_CT, status: 413, code: 'API_ERR_PAYLOAD_TOO_LARGE' });
  }
  await expectErrors(t, api, cases);
});

t.test('a body the server cannot decode is a JSON 4xx', async (t) => {
  const { api } = await setup(t);
  const body = '{"theta_deg":1,"phi_deg":1}';
  await expectErrors(t, api, [
    { what: 'unknown charset', path: '/move', raw: body, headers: { 'content-type': 'application/json; charset=klingon' }, status: 415, code: 'API_ERR_INVALID_BODY' },
    { what: 'unknown Content-Encoding', path: '/move', raw: body, headers: { 'content-encoding': 'zstd-ish' }, status: 415, code: 'API_ERR_INVALID_BODY' },
    { what: 'gzip that is not gzip', path: '/move', raw: body, headers: { 'content-encoding': 'gzip' }, status: 400, code: 'API_ERR_INVALID_BODY' },
  ]);
});
