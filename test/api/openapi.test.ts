/**
 * /openapi.json: it validates as OpenAPI 3.1 (with a real validator, the
 * OpenAPI Initiative's JSON schema), its request schemas are the very ones
 * the server validates with, and every answer a real server gives, in every
 * state we can put it in, matches what the document says for that path,
 * method and status (body schema, content type, documented headers). Every
 * documented answer is produced at least once.
 */
import { createScanner } from '../../cli/assemble-scan';
import { MemoryScanStore } from '../../firmware/scan-store';
import t from 'tap';
import Ajv2020 from 'ajv/dist/2020';
import { configBodySchema, homeBodySchema, moveBodySchema, moveRelativeBodySchema } from '../../api/schemas';
import { SEC, simOnVirtualClock } from '../helpers/sim';
import { serveApi, type ApiResponse } from '../helpers/http-server';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }>; headers?: Record<string, unknown> }>; requestBody?: { content: Record<string, { schema: { $ref: string } }> } }>>;
  components: { schemas: Record<string, Record<string, unknown>> };
};

t.test('GET /openapi.json is a valid OpenAPI 3.1 document', async (t) => {
  const { positioner } = simOnVirtualClock();
  const api = await serveApi(t, positioner);
  const res = await api.get('/openapi.json');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  const doc = res.body as Doc;
  t.equal(doc.openapi, '3.1.0');
  const { Validator } = await import('@seriousme/openapi-schema-validator');
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>);
  t.same(result.errors, undefined, 'no validation errors');
  t.equal(result.valid, true, 'valid OpenAPI');
  t.equal(validator.version, '3.1', 'validated against the 3.1 schema');

  // The validator is not a rubber stamp: a broken document is refused.
  const broken = structuredClone(doc) as Record<string, any>;
  broken.paths['/move'].post.responses['200'] = { content: {} }; // a response without its required description
  t.equal((await new Validator().validate(broken)).valid, false, 'a response with no description is refused');
});

t.test('the request schemas in the document are the ones requests are validated with', async (t) => {
  const { positioner } = simOnVirtualClock();
  const api = await serveApi(t, positioner);
  const doc = (await api.get('/openapi.json')).body as Doc;
  for (const [path, schema] of [
    ['/move', moveBodySchema],
    ['/move/relative', moveRelativeBodySchema],
    ['/home', homeBodySchema],
    ['/config', configBodySchema],
  ] as const) {
    const ref = doc.paths[path].post.requestBody?.content['application/json'].schema.$ref ?? '';
    const name = ref.replace('#/components/schemas/', '');
    t.equal(name, schema.$id, `${path} refers to ${schema.$id}`);
    const { $id: _id, ...rest } = schema;
    t.same(doc.components.schemas[name], JSON.parse(JSON.stringify(rest)), `${name} is the validating schema`);
  }
});

t.test('every endpoint answers as the document says, in every state', async (t) => {
  const sim = simOnVirtualClock();
  const { positioner, clock } = sim;
  const { scanner } = createScanner({ positioner, clock, store: new MemoryScanStore() });
  const api = await serveApi(t, positioner, undefined, { scanner });
  const doc = (await api.get('/openapi.json')).body as Doc;

  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ $id: 'openapi.json', components: doc.components });
  const seen = new Set<string>();

  const check = (method: string, path: string, res: ApiResponse) => {
    path = path.split('?')[0];
    const key = `${method.toLowerCase()} ${path} ${res.status}`;
    seen.add(key);
    const op = doc.paths[path]?.[method.toLowerCase()];
    t.ok(op, `${method} ${path} is in the document`);
    const documented = op?.responses[String(res.status)];
    t.ok(documented, `${key} is a documented answer (body ${res.text.slice(0, 120)})`);
    if (!documented) return;
    const type = (res.headers.get('content-type') ?? '').split(';')[0];
    const media = documented.content?.[type];
    t.ok(media, `${key}: Content-Type ${type} is documented`);
    for (const header of Object.keys(documented.headers ?? {})) {
      if (header === 'Retry-After') continue; // documented as optional (busy only)
      t.ok(res.headers.get(header), `${key}: has header ${header}`);
    }
    if (!media) return;
    const schemaRef = (media.schema as { $ref?: string }).$ref;
    if (!schemaRef) return; // text/html or a free-form object: the Content-Type check above is the contract
    const validate = ajv.getSchema(`openapi.json${schemaRef}`);
    t.ok(validate, `${schemaRef} resolves`);
    const body = res.body;
    t.ok(validate?.(body), `${key}: body matches ${schemaRef} ${JSON.stringify(validate?.errors ?? null)}`);
  };
  const call = async (method: string, path: string, json?: unknown, raw?: string) => {
    const res = raw !== undefined ? await api.send(method, path, { raw }) : method === 'GET' ? await api.get(path) : await api.post(path, json);
    check(method, path, res);
    return res;
  };

  await call('GET', '/status');
  await call('GET', '/config');
  await call('GET', '/openapi.json');
  await call('GET', '/');
  await call('GET', '/ws');
  await call('POST', '/config', { speed: 20 });
  await call('POST', '/config', { speed: -1 });
  await call('POST', '/config', undefined, JSON.stringify({ speed: 1, pad: 'x'.repeat(20_000) }));
  await call('POST', '/move', { theta_deg: 200, phi_deg: 0 });
  await call('POST', '/move', undefined, '{"theta_deg": ');
  await call('POST', '/move', undefined, JSON.stringify({ theta_deg: 1, phi_deg: 1, pad: 'x'.repeat(20_000) }));
  await call('POST', '/move/relative', { d_theta: -5, d_phi: 0 });
  await call('POST', '/move/relative', undefined, JSON.stringify({ d_theta: 1, d_phi: 1, pad: 'x'.repeat(20_000) }));
  await call('POST', '/home', { axis: 'rho' });
  await call('POST', '/home', undefined, JSON.stringify({ axis: 'both', pad: 'x'.repeat(20_000) }));

  await call('POST', '/move', { theta_deg: 90, phi_deg: 180 });
  clock.advanceBy(SEC);
  await call('GET', '/status'); // moving, with velocities
  await call('POST', '/move', { theta_deg: 10, phi_deg: 10 });
  await call('POST', '/move/relative', { d_theta: 1, d_phi: 1 });
  await call('POST', '/home', { axis: 'both' });
  await call('POST', '/stop');
  clock.runUntilIdle();
  await call('POST', '/move/relative', { d_theta: 1, d_phi: -1 });
  clock.runUntilIdle();
  await call('POST', '/home', {});
  clock.advanceBy(SEC);
  await call('GET', '/status'); // homing
  clock.runUntilIdle();
  await call('GET', '/status'); // homed

  // Scans: none yet, one started, refused, paused, resumed, stopped, resumed while busy, done, results.
  const plan = { kind: 'grid', theta: { start_deg: 0, stop_deg: 10, step_deg: 5 }, phi: { start_deg: 0, stop_deg: 5, step_deg: 5 } };
  await call('GET', '/scan');
  await call('POST', '/scan', { plan: { ...plan, theta: { start_deg: 0, stop_deg: 10, step_deg: 0 } } });
  await call('POST', '/scan', undefined, JSON.stringify({ plan, name: 'x'.repeat(20_000) }));
  await call('POST', '/scan', { plan, settle_s: 0.1 });
  await call('POST', '/scan', { plan });
  await call('GET', '/scan');
  await call('POST', '/scan/pause');
  clock.runUntilIdle();
  await call('POST', '/scan/pause');
  await call('POST', '/scan/resume');
  clock.advanceBy(SEC / 2);
  await call('POST', '/stop');
  await call('POST', '/move', { theta_deg: 90, phi_deg: 90 });
  await call('POST', '/scan/resume');
  clock.runUntilIdle();
  await call('POST', '/scan/resume');
  clock.runUntilIdle();
  await call('POST', '/scan/resume');
  await call('GET', '/scan/results');
  await call('GET', '/scan/results?format=csv');
  await call('GET', '/scan/results?format=xml');
  await call('GET', '/scan/results?id=nope');

  // A driver fault: the error state with its latched fault.
  sim.sim.phi.faults.driver = 'driver over-temperature';
  await call('POST', '/move', { theta_deg: 20, phi_deg: 20 });
  clock.runUntilIdle();
  const faulted = await call('GET', '/status');
  t.equal((faulted.body as { state: string }).state, 'error', 'the fault put the positioner in its error state');
  await call('POST', '/move', { theta_deg: 30, phi_deg: 30 }); // 503 POS_ERR_FAULT

  // Every answer the document lists was produced and checked.
  const documented: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const status of Object.keys(op.responses)) if (status !== '101') documented.push(`${method} ${path} ${status}`);
    }
  }
  t.same(documented.filter((k) => !seen.has(k)), [], 'no documented answer went unchecked');
});
