/**
 * The live status WebSocket (/ws) on a real server, with real `ws` clients:
 * what a client gets on connect, the message rate while moving, silence at
 * rest, a message per change (including the error state, which the feed
 * learns of only through Positioner.onChange), reconnects, many clients at
 * once, and the read-only contract. Every message is checked against the
 * served OpenAPI document's StatusMessage / ConfigMessage schemas.
 *
 * Rates are judged by the median gap between messages, not by a count in a
 * window, so a loaded machine that stalls the event loop now and then does
 * not fail the test while a feed that really runs slower than 10 Hz does.
 */
import t, { type Test } from 'tap';
import Ajv2020 from 'ajv/dist/2020';
import WebSocket from 'ws';
import { openApiDocument } from '../../api/openapi';
import { defaultConfig } from '../../firmware/config';
import { createSimulatedPositioner } from '../../cli/assemble';
import { WallClock } from '../../sim/wall-clock';
import { serveApi, type ApiClient } from '../helpers/http-server';
import { simOnVirtualClock } from '../helpers/sim';

type Msg = Record<string, any> & { type: string; seq: number };

const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ $id: 'openapi.json', components: openApiDocument().components });
const validateStatus = ajv.getSchema('openapi.json#/components/schemas/StatusMessage')!;
const validateConfig = ajv.getSchema('openapi.json#/components/schemas/ConfigMessage')!;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client that records every message with its arrival time and checks it against the schema. */
class Recorder {
  readonly messages: Array<Msg & { at: number }> = [];
  readonly ws: WebSocket;
  readonly open: Promise<void>;
  readonly closed: Promise<void>;
  private waiters: Array<() => void> = [];
  invalid: string[] = [];

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.open = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.closed = new Promise((resolve) => this.ws.once('close', () => resolve()));
    this.ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as Msg;
      const validate = m.type === 'status' ? validateStatus : m.type === 'config' ? validateConfig : null;
      if (validate && !validate(m)) this.invalid.push(JSON.stringify(validate.errors));
      this.messages.push({ ...m, at: performance.now() });
      for (const w of this.waiters.splice(0)) w();
    });
  }

  statuses() {
    return this.messages.filter((m) => m.type === 'status');
  }

  /** Resolves once a message satisfies `pred` (looking at those already received too). */
  async until(pred: (m: Msg) => boolean, what: string, timeoutMs = 10_000): Promise<Msg> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(pred);
      if (found) return found;
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(this.messages.at(-1))}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  close() {
    this.ws.close();
    return this.closed;
  }
}

async function connect(t: Test, api: ApiClient): Promise<Recorder> {
  const r = new Recorder(api.wsUrl);
  t.teardown(() => r.ws.terminate());
  await r.open;
  await r.until((m) => m.type === 'status', 'the first status');
  return r;
}

function wallClockServer(t: Test, timeScale: number) {
  const machine = createSimulatedPositioner(new WallClock(timeScale), defaultConfig());
  t.teardown(() => machine.positioner.stop());
  return machine;
}

t.test('on connect a client gets the config, then the status as GET /status gives it', async (t) => {
  const { positioner } = simOnVirtualClock();
  const api = await serveApi(t, positioner);
  const r = await connect(t, api);
  const [config, status] = r.messages;
  t.equal(config.type, 'config');
  t.equal(config.seq, 1);
  t.equal(status.type, 'status');
  t.equal(status.seq, 2);
  const { type: _c, seq: _cs, at: _ca, ...configFields } = config;
  t.strictSame(configFields, (await api.get('/config')).body, 'config message = GET /config body');
  const { type: _t, seq: _s, at: _a, sent_at_ms, ...statusFields } = status;
  t.strictSame(statusFields, (await api.get('/status')).body, 'status message = GET /status body');
  t.ok(Math.abs(sent_at_ms - Date.now()) < 60_000, 'sent_at_ms is wall time in ms');
  t.same(r.invalid, [], 'every message matches the OpenAPI schemas');
  t.equal(api.live.clientCount, 1);
  await r.close();
  await sleep(50);
  t.equal(api.live.clientCount, 0, 'a closed client is forgotten');
});

t.test('while moving the feed pushes at least 10 status messages a second, then the arrival', async (t) => {
  const { positioner } = wallClockServer(t, 10);
  const api = await serveApi(t, positioner);
  const r = await connect(t, api);
  // 90 deg of phi at 10 deg/s with 20 deg/s^2 ramps: 9.5 s of machine time, 0.95 s of real time at 10x.
  t.equal((await api.post('/move', { theta_deg: 10, phi_deg: 90 })).status, 200);
  const arrived = await r.until((m) => m.type === 'status' && m.state === 'idle' && m.phi_deg === 90, 'arrival at phi 90');
  t.equal(arrived.moving, false);
  t.equal(arrived.theta_deg, 10);

  const moving = r.statuses().filter((m) => m.moving);
  t.ok(moving.length >= 5, `several moving messages: ${moving.length}`);
  const gaps = moving.slice(1).map((m, i) => m.at - moving[i].at).sort((a, b) => a - b);
  const median = gaps[Math.floor(gaps.length / 2)];
  t.ok(median <= 100, `median gap while moving ${median.toFixed(1)} ms <= 100 ms (>= 10 Hz)`);
  // The position in the messages advances monotonically toward the target.
  for (let i = 1; i < moving.length; i++) {
    if (moving[i].phi_deg < moving[i - 1].phi_deg) t.fail(`phi went backwards: ${moving[i - 1].phi_deg} -> ${moving[i].phi_deg}`);
  }
  t.ok(moving.some((m) => m.axes.phi.velocity_deg_s > 0), 'velocity is reported while moving');
  const seqs = r.messages.map((m) => m.seq);
  t.same(seqs, seqs.map((_, i) => i + 1), 'seq counts 1, 2, 3... with no gap');
  t.same(r.invalid, []);
});

t.test('at rest the feed is silent, and sends one message per change: stop, config, fault', async (t) => {
  const sim = simOnVirtualClock();
  const { positioner, clock } = sim;
  const api = await serveApi(t, positioner);
  const r = await connect(t, api);
  const before = r.messages.length;
  await sleep(300);
  t.equal(r.messages.length, before, 'nothing is sent while nothing changes');

  await api.post('/stop');
  const stopped = await r.until((m) => m.type === 'status' && m.state === 'stopped', 'the stopped state');
  t.equal(stopped.moving, false);
  await api.post('/stop');
  await sleep(150);
  t.equal(r.statuses().filter((m) => m.state === 'stopped').length, 1, 'a second stop changes nothing and sends nothing');

  await api.post('/config', { speed: 25 });
  const config = await r.until((m) => m.type === 'config' && m.speed === 25, 'the new config');
  t.equal(config.accel, 20);

  // A fault, as any new error state would: the feed hears of it through onChange only.
  sim.sim.theta.faults.driver = 'driver lost power';
  await api.post('/move', { theta_deg: 5, phi_deg: 0 });
  clock.runUntilIdle();
  const fault = await r.until((m) => m.type === 'status' && m.state === 'error', 'the error state');
  t.equal(fault.fault.code, 'POS_ERR_HARDWARE');
  t.match(fault.fault.message, /driver lost power/);
  t.same(r.invalid, []);
});

t.test('a client that reconnects gets the current state at once; a disconnect stops nothing', async (t) => {
  const { positioner } = wallClockServer(t, 10);
  const api = await serveApi(t, positioner);
  const first = await connect(t, api);
  await api.post('/move', { theta_deg: 0, phi_deg: 120 });
  await first.until((m) => m.type === 'status' && m.moving, 'moving');
  first.ws.terminate(); // as a dropped network connection
  await first.closed;

  const again = await connect(t, api);
  const s = again.statuses()[0];
  t.equal(s.moving, true, 'the reconnected client sees the move still running');
  t.equal(again.messages[0].seq, 1, 'seq starts again at 1 on the new connection');
  await again.until((m) => m.type === 'status' && m.state === 'idle', 'arrival', 20_000);
  t.equal(again.statuses().at(-1)!.phi_deg, 120, 'the move ran to its end');
  t.equal(api.live.clientCount, 1);
});

t.test('50 clients at once all follow a move to the same final status', async (t) => {
  const { positioner } = wallClockServer(t, 20);
  const api = await serveApi(t, positioner);
  const clients = await Promise.all(Array.from({ length: 50 }, () => connect(t, api)));
  t.equal(api.live.clientCount, 50);
  await api.post('/move', { theta_deg: 30, phi_deg: 60 });
  const finals = await Promise.all(clients.map((c) => c.until((m) => m.type === 'status' && m.state === 'idle' && m.phi_deg === 60, 'arrival')));
  t.ok(finals.every((f) => f.theta_deg === 30), 'every client saw the arrival');
  const movingCounts = clients.map((c) => c.statuses().filter((m) => m.moving).length);
  t.ok(Math.min(...movingCounts) >= 3, `every client got moving updates (fewest ${Math.min(...movingCounts)})`);
  t.ok(clients.every((c) => c.invalid.length === 0));
  await Promise.all(clients.map((c) => c.close()));
  await sleep(50);
  t.equal(api.live.clientCount, 0, 'all clients gone');
});

t.test('the feed is read-only, and only /ws takes WebSocket upgrades', async (t) => {
  const { positioner } = simOnVirtualClock();
  const api = await serveApi(t, positioner);
  const r = await connect(t, api);
  r.ws.send(JSON.stringify({ move: { theta_deg: 10 } }));
  const err = await r.until((m) => m.type === 'error', 'an error message');
  t.match(err.error, /read-only/);
  t.equal(positioner.status().state, 'idle', 'nothing moved');

  const wrong = new WebSocket(api.wsUrl.replace('/ws', '/status'));
  const status = await new Promise<number>((resolve) => {
    wrong.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    wrong.on('error', () => resolve(-1));
  });
  t.equal(status, 404, 'an upgrade on another path is refused with 404');
});
