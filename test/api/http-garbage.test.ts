/**
 * Garbage never crashes the server: random bytes, random JSON values and
 * near-miss bodies (the right keys with random values) go to every POST
 * endpoint, with and without Content-Type. Every answer must be a 200 or a 4xx
 * with a JSON body, a 200 must have the endpoint's shape, and the machine must
 * stay inside its ranges. A 200 motion command is stopped at once, so no
 * answer is legitimately 503.
 */
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { simOnVirtualClock } from '../helpers/sim';
import { assertError, assertJson, serveApi, type ApiResponse } from '../helpers/http-server';

const ENDPOINTS = ['/move', '/move/relative', '/home', '/config', '/stop'] as const;
type Endpoint = (typeof ENDPOINTS)[number];

const CONTENT_TYPES = [
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'application/json; charset=utf-16le',
];

/** Numbers that stress a validator: edges, non-finite after parsing, huge and tiny. */
const nastyNumberText = fc.constantFrom('1e400', '-1e400', '1e-400', '-0', '0', '180', '180.0000001', '360', '360.5', '-1', '1e308', '5e-324', '9007199254740993', '0.1e1', '1E2');
const anyValue = fc.oneof(fc.jsonValue(), fc.constant(null), fc.double(), fc.string(), fc.array(fc.anything()));

/** A number in (or near) a field's range, or anything at all. */
const numberOrJunk = (min: number, max: number) =>
  fc.oneof(fc.constantFrom(min, max, (min + max) / 2, 0), fc.double({ min, max, noNaN: true }), fc.integer({ min: min - 10, max: max + 10 }), anyValue);

/** A JSON text: a random value, or an object with the API's own keys and random values. */
const jsonText = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc
    .record(
      {
        theta_deg: anyValue,
        phi_deg: anyValue,
        d_theta: anyValue,
        d_phi: anyValue,
        axis: fc.oneof(fc.constantFrom('theta', 'phi', 'both', 'THETA', ''), fc.string({ unit: 'grapheme' })),
        speed: anyValue,
        accel: anyValue,
        microstepping: anyValue,
        extra: anyValue,
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  // Field values spelled as raw number text, which JSON.stringify could never produce.
  fc
    .tuple(fc.constantFrom('theta_deg', 'phi_deg', 'd_theta', 'd_phi', 'speed', 'accel'), nastyNumberText, fc.constantFrom('theta_deg', 'phi_deg', 'd_theta', 'd_phi', 'speed', 'accel'), nastyNumberText)
    .map(([k1, v1, k2, v2]) => `{"${k1}":${v1},"${k2}":${v2}}`),
  // Deep nesting within the size limit.
  fc.integer({ min: 1, max: 8000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
  fc.integer({ min: 1, max: 2000 }).map((n) => '{"axis":'.repeat(n) + '"both"' + '}'.repeat(n)),
);

/** Near misses per endpoint: its own keys, often valid, sometimes wrong or out of range. */
const nearMiss: Record<Endpoint, fc.Arbitrary<string>> = {
  '/move': fc.record({ theta_deg: numberOrJunk(0, 180), phi_deg: numberOrJunk(0, 360) }).map((v) => JSON.stringify(v)),
  '/move/relative': fc.record({ d_theta: numberOrJunk(-10, 10), d_phi: numberOrJunk(-20, 20) }).map((v) => JSON.stringify(v)),
  '/home': fc.record({ axis: fc.oneof(fc.constantFrom('theta', 'phi', 'both'), anyValue) }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
  '/config': fc.record({ speed: numberOrJunk(0, 70), accel: numberOrJunk(0, 600) }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
  '/stop': jsonText,
};

/** A body: JSON text, unicode text, or random bytes. */
const body = fc.oneof(
  { weight: 3, arbitrary: jsonText },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }) },
  // Valid JSON broken at a random point.
  { weight: 1, arbitrary: fc.tuple(jsonText, fc.nat()).map(([s, cut]) => s.slice(0, cut % (s.length + 1))) },
);

const request = fc.constantFrom(...ENDPOINTS).chain((endpoint) =>
  fc.record({
    endpoint: fc.constant(endpoint),
    payload: fc.oneof({ weight: 2, arbitrary: body }, { weight: 1, arbitrary: nearMiss[endpoint] }),
    contentType: fc.constantFrom(...CONTENT_TYPES),
  }),
);

function checkOk(t: Test, endpoint: Endpoint, res: ApiResponse): void {
  const b = res.body as Record<string, any>;
  switch (endpoint) {
    case '/move':
    case '/move/relative':
      t.same(Object.keys(b), ['status', 'target_theta', 'target_phi']);
      t.equal(b.status, 'moving');
      t.ok(b.target_theta >= 0 && b.target_theta <= 180, `target_theta in range: ${b.target_theta}`);
      t.ok(b.target_phi >= 0 && b.target_phi <= 360, `target_phi in range: ${b.target_phi}`);
      break;
    case '/home':
      t.equal(b.status, 'homing');
      t.ok(['theta', 'phi', 'both'].includes(b.axis), `axis ${b.axis}`);
      break;
    case '/config':
      t.same(Object.keys(b), ['status', 'speed', 'accel', 'microstepping']);
      t.ok(b.speed > 0 && b.speed <= 60, `speed in range: ${b.speed}`);
      t.ok(b.accel > 0 && b.accel <= 500, `accel in range: ${b.accel}`);
      break;
    case '/stop':
      t.strictSame(b, { status: 'stopped' });
      break;
  }
}

t.test('random bodies to every POST endpoint get a 200 or a JSON 4xx, and the server lives on', async (t) => {
  const { positioner, clock } = simOnVirtualClock();
  const api = await serveApi(t, positioner);
  const seen = new Map<number, number>();
  const accepted = new Set<Endpoint>();
  let failures = 0;

  await fc.assert(
    fc.asyncProperty(request, async ({ endpoint, payload, contentType }) => {
      const res = await api.send('POST', endpoint, { raw: payload, headers: contentType ? { 'content-type': contentType } : {} });
      seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
      const good = res.status === 200 || (res.status >= 400 && res.status < 500);
      if (!good || res.body === undefined) failures++;
      if (!good) t.fail(`${endpoint} answered ${res.status} to ${JSON.stringify(String(payload)).slice(0, 200)}: ${res.text}`);
      if (res.status === 200) {
        accepted.add(endpoint);
        assertJson(t, res, endpoint);
        checkOk(t, endpoint, res);
      } else if (good) {
        assertError(t, res, res.status, res.headers.get('positioner-error-code') ?? '(missing)', `${endpoint} ${res.status}`);
        t.ok(res.headers.get('positioner-error-code'), 'error carries a code');
      }
      // Let an accepted move run a little (later relative moves start elsewhere), then stop it so
      // that a valid motion command is never (rightly) 503. Homing is stopped before its first
      // step: a homing cut short may legitimately leave a position below 0.
      if (res.status === 200 && (endpoint === '/move' || endpoint === '/move/relative')) await clock.run(50_000);
      positioner.stop();
      return good && res.body !== undefined;
    }),
    { numRuns: 600, seed: 20240601 },
  );

  t.equal(failures, 0, 'no 5xx and no non-JSON answer');
  t.ok((seen.get(400) ?? 0) > 100, `plenty of 400s were provoked: ${JSON.stringify(Object.fromEntries(seen))}`);
  t.strictSame([...accepted].sort(), [...ENDPOINTS].sort(), 'on every endpoint some random body was valid and accepted');

  const status = await api.get('/status');
  t.equal(status.status, 200, 'GET /status still answers');
  const s = status.body as Record<string, number>;
  t.ok(s.theta_deg >= 0 && s.theta_deg <= 180, `theta still in range: ${s.theta_deg}`);
  t.ok(s.phi_deg >= 0 && s.phi_deg <= 360, `phi still in range: ${s.phi_deg}`);
  const config = (await api.get('/config')).body as Record<string, number>;
  t.ok(config.speed >= 0.001 && config.speed <= 60, `speed still valid: ${config.speed}`);
  t.ok(config.accel >= 0.001 && config.accel <= 500, `accel still valid: ${config.accel}`);
});

t.test('random bodies on unknown paths and wrong methods get a JSON 404 or 405', async (t) => {
  const { positioner } = simOnVirtualClock();
  const api = await serveApi(t, positioner);
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('PUT', 'PATCH', 'DELETE', 'POST'),
      fc.constantFrom('/status', '/nothing', '/move/x', '/config/speed', '/%F0%9F%92%A9'),
      body,
      async (method, path, payload) => {
        const res = await api.send(method, path, { raw: payload });
        t.ok([404, 405].includes(res.status), `${method} ${path}: ${res.status}`);
        t.ok(res.body !== undefined && Object.keys(res.body as object).join() === 'error', 'JSON error body');
        return [404, 405].includes(res.status);
      },
    ),
    { numRuns: 100, seed: 7 },
  );
  t.equal((await api.get('/status')).status, 200);
});
