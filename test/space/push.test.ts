/**
 * Real Web Push: the service pushes to web-push-testing (a push service run
 * in this process that checks the VAPID signature and decrypts the payload),
 * directly or through a local proxy that answers 404, 410, 429 or 5xx first.
 * Also: the live WebSocket feed receives the test broadcast.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { WebSocket } from 'ws';
import { ManualClock } from '../../api/space/clock';
import crypto from 'node:crypto';
import { openDatabase } from '../../api/space/db';
import { PushSender, retryAfterMs } from '../../api/space/push';
import { Store } from '../../api/space/store';
import { FEED_PATH } from '../../api/space/ws-feed';
import { startPushService, startService, testVapid, type LocalPushService } from '../helpers/space';

function pushKeys() {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  return { p256dh: ecdh.getPublicKey().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') };
}

let pushService: LocalPushService;
t.before(async () => {
  pushService = await startPushService(t);
});

/** In front of the push service: answers each request with the next scripted status, then forwards. */
async function flakyProxy(t: Test, script: Array<{ status: number; headers?: Record<string, string> }>) {
  const seen: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const step = script.shift();
      if (step) {
        seen.push(step.status);
        res.writeHead(step.status, step.headers).end('scripted');
        return;
      }
      const fwd = http.request(`${pushService.url}${req.url}`, { method: req.method, headers: req.headers }, (up) => {
        seen.push(up.statusCode ?? 0);
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      fwd.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function subscribeVia(api: Awaited<ReturnType<typeof startService>>['api'], publicKey: string, endpointBase?: string) {
  const sub = await pushService.subscribe(publicKey);
  const endpoint = endpointBase ? sub.endpoint.replace(/^http:\/\/[^/]+/, endpointBase) : sub.endpoint;
  const r = await api.post('/api/notifications/subscribe', { endpoint, keys: sub.keys });
  if (r.status !== 200) throw new Error(`subscribe failed: ${r.text}`);
  return { ...sub, id: r.body.id as number };
}

t.test('POST /api/notifications/test: every active subscription decrypts the payload that was logged', async (t) => {
  const { api, service, config } = await startService(t);
  const key = config.vapid!.publicKey;
  const a = await subscribeVia(api, key);
  const b = await subscribeVia(api, key);
  const c = await subscribeVia(api, key);
  await api.del(`/api/notifications/subscribe/${c.id}`);

  const r = await api.post('/api/notifications/test');
  t.strictSame({ ok: r.body.ok, sent_count: r.body.sent_count }, { ok: true, sent_count: 2 }, 'only the two active ones');
  const [entry] = (await api.get('/api/notifications?limit=1')).body;
  t.equal(entry.push_sent, true);
  for (const s of [a, b]) {
    const got = await pushService.received(s.clientHash);
    t.equal(got.length, 1, 'one message');
    const payload = JSON.parse(got[0]);
    t.strictSame(payload, {
      notification_id: entry.id,
      category: 'test',
      title: entry.title,
      body: entry.body,
      location_id: null,
      sent_at: entry.sent_at,
      data: JSON.parse(entry.data_json),
      url: `./?notification=${entry.id}`,
      icon: './icon.png',
    });
  }
  t.strictSame(await pushService.received(c.clientHash), [], 'nothing to the deactivated subscription');
  t.type(service.store.subscriptionHealth(a.id)?.last_success_at, 'string');
});

t.test('a fan-out to 20 subscriptions is encrypted on worker threads and every one decrypts it; on the event loop the same', async (t) => {
  const { api, service, config } = await startService(t);
  const sender = service.notifier['push'];
  t.ok(sender.options.encryptThreads >= 1, 'at least one encryption thread by default');
  const subs = [];
  for (let i = 0; i < 20; i++) subs.push(await subscribeVia(api, config.vapid!.publicKey));
  for (const threads of [2, 0]) {
    sender.options.encryptThreads = threads;
    const r = await api.post('/api/notifications/test');
    t.equal(r.body.sent_count, 20, `${threads} threads: all accepted`);
    for (const s of subs) {
      const got = await pushService.received(s.clientHash);
      t.equal(JSON.parse(got[got.length - 1]).notification_id, r.body.notification_id, `${threads} threads: decrypted by the push service`);
    }
  }
});

t.test('410 from the push service deactivates the subscription and counts the failure', async (t) => {
  const { api, service, config } = await startService(t);
  const live = await subscribeVia(api, config.vapid!.publicKey);
  const gone = await subscribeVia(api, config.vapid!.publicKey);
  await pushService.expire(gone.clientHash);
  const r = await api.post('/api/notifications/test');
  t.equal(r.body.sent_count, 1);
  const h = service.store.subscriptionHealth(gone.id)!;
  t.equal(h.is_active, false, 'deactivated');
  t.equal(h.failure_count, 1);
  t.match(h.last_error, /410/);
  t.equal(service.store.subscriptionHealth(live.id)?.is_active, true);
  const r2 = await api.post('/api/notifications/test');
  t.equal(r2.body.sent_count, 1);
  t.equal((await pushService.received(live.clientHash)).length, 2);
  t.equal(service.store.subscriptionHealth(gone.id)?.failure_count, 1, 'not tried again');
});

t.test('404 deactivates; 429 honours Retry-After and 5xx is retried, then delivered', async (t) => {
  const { api, service, config, sleeps } = await startService(t);
  const key = config.vapid!.publicKey;
  service.notifier['push'].options.concurrency = 1; // one at a time, so the waits are in a known order
  const notFound = await flakyProxy(t, [{ status: 404 }]);
  const throttled = await flakyProxy(t, [{ status: 429, headers: { 'retry-after': '1' } }]);
  const broken = await flakyProxy(t, [{ status: 503 }, { status: 500 }]);
  const s404 = await subscribeVia(api, key, notFound.url);
  const s429 = await subscribeVia(api, key, throttled.url);
  const s5xx = await subscribeVia(api, key, broken.url);
  const r = await api.post('/api/notifications/test');
  t.equal(r.body.sent_count, 2);
  t.strictSame(notFound.seen, [404]);
  t.equal(service.store.subscriptionHealth(s404.id)?.is_active, false);
  t.strictSame(throttled.seen, [429, 201], 'retried after 429');
  t.strictSame(broken.seen, [503, 500, 201], 'retried twice after 5xx (3 attempts)');
  t.equal((await pushService.received(s429.clientHash)).length, 1);
  t.equal((await pushService.received(s5xx.clientHash)).length, 1);
  t.equal(service.store.subscriptionHealth(s5xx.id)?.failure_count, 0, 'a retry that succeeds is not a failure');
  t.equal(sleeps[0], 1000, 'waited the Retry-After of 1 s');
  t.ok(sleeps[1] >= 500 && sleeps[1] <= 1000, `first 5xx backoff within 0.5-1 s: ${sleeps[1]}`);
  t.ok(sleeps[2] >= 1000 && sleeps[2] <= 2000, `second 5xx backoff doubles to 1-2 s: ${sleeps[2]}`);
  t.equal(sleeps.length, 3);
});

t.test('Retry-After: seconds or an HTTP date', async (t) => {
  const now = new Date('2026-11-21T12:00:00Z');
  t.equal(retryAfterMs('120', now), 120_000);
  t.equal(retryAfterMs('Sat, 21 Nov 2026 12:00:30 GMT', now), 30_000);
  t.equal(retryAfterMs('Sat, 21 Nov 2026 11:00:00 GMT', now), 0, 'a date in the past means now');
  t.equal(retryAfterMs('soon', now), undefined);
  t.equal(retryAfterMs(null, now), undefined);
});

t.test('a push service that keeps failing: attempts bounded, failure counted, subscription kept', async (t) => {
  const { api, service, config } = await startService(t);
  const down = await flakyProxy(
    t,
    Array.from({ length: 6 }, () => ({ status: 502 })),
  );
  const s = await subscribeVia(api, config.vapid!.publicKey, down.url);
  t.equal((await api.post('/api/notifications/test')).body.sent_count, 0);
  t.strictSame(down.seen, [502, 502, 502], 'three attempts, no more');
  let h = service.store.subscriptionHealth(s.id)!;
  t.equal(h.failure_count, 1);
  t.equal(h.is_active, true, 'a failing service does not remove the subscription');
  t.match(h.last_error, /502/);
  const [entry] = (await api.get('/api/notifications?limit=1')).body;
  t.equal(entry.push_sent, false, 'logged although no push went out');
  await api.post('/api/notifications/test');
  h = service.store.subscriptionHealth(s.id)!;
  t.equal(h.failure_count, 2, 'counted per send');
  // 400 from the push service is not retried: the request itself is wrong.
  const bad = await flakyProxy(t, [{ status: 400 }]);
  const s400 = await subscribeVia(api, config.vapid!.publicKey, bad.url);
  await api.del(`/api/notifications/subscribe/${s.id}`);
  await api.post('/api/notifications/test');
  t.strictSame(bad.seen, [400]);
  t.equal(service.store.subscriptionHealth(s400.id)?.failure_count, 1);
});

t.test('a push service that never answers: the send times out and is counted', async (t) => {
  const { api, service, config } = await startService(t);
  service.notifier['push'].options.timeoutMs = 300;
  service.notifier['push'].options.maxAttempts = 2;
  const hang = http.createServer(() => {});
  await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => {
    hang.closeAllConnections();
    hang.close();
  });
  const s = await subscribeVia(api, config.vapid!.publicKey, `http://127.0.0.1:${(hang.address() as AddressInfo).port}`);
  const r = await api.post('/api/notifications/test');
  t.equal(r.body.sent_count, 0);
  t.match(service.store.subscriptionHealth(s.id)?.last_error, /no answer within 300 ms/);
});

t.test('sends run in parallel, never more than the bound at once', async (t) => {
  const { api, service, config } = await startService(t);
  service.notifier['push'].options.concurrency = 4;
  let inFlight = 0;
  let peak = 0;
  const slow = http.createServer((req, res) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    req.resume();
    setTimeout(() => {
      inFlight--;
      res.writeHead(201).end();
    }, 30);
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => slow.close(() => resolve())));
  const base = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
  for (let i = 0; i < 12; i++) await subscribeVia(api, config.vapid!.publicKey, base);
  const r = await api.post('/api/notifications/test');
  t.equal(r.body.sent_count, 12);
  t.equal(peak, 4, 'exactly the bound in flight at the busiest moment');
});

t.test('the live feed: a WebSocket client receives the test broadcast', async (t) => {
  const { api, service } = await startService(t);
  const ws = new WebSocket(`${service.url.replace('http', 'ws')}${FEED_PATH}`);
  t.teardown(() => ws.terminate());
  const messages: unknown[] = [];
  const hello = new Promise<void>((resolve) => ws.once('message', () => resolve()));
  ws.on('message', (d) => messages.push(JSON.parse(String(d))));
  await hello;
  t.strictSame(messages[0], { type: 'hello', unread_count: 0 });
  const gotOne = new Promise<void>((resolve) => ws.on('message', () => resolve()));
  const r = await api.post('/api/notifications/test');
  await gotOne;
  const [entry] = (await api.get('/api/notifications?limit=1')).body;
  t.strictSame(messages[1], { type: 'notification', notification: entry });
  t.equal(entry.id, r.body.notification_id);

  // Only the feed path upgrades.
  const other = new WebSocket(`${service.url.replace('http', 'ws')}/api/elsewhere`);
  const err = await new Promise<Error>((resolve) => other.once('error', resolve));
  t.match(err.message, /404/);
});

t.test('the VAPID JWT is signed once per push-service origin and renewed before it expires', async (t) => {
  // The JWT follows the push services' (real) time, so the sender gets a wall clock of its own here.
  const wall = new ManualClock(new Date(Math.floor(Date.now() / 1000) * 1000));
  const db = openDatabase(':memory:');
  t.teardown(() => db.close());
  const store = new Store(db);
  const vapid = testVapid();
  const sender = new PushSender(vapid, store, new ManualClock('2020-01-01T00:00:00Z'), {}, async () => {}, wall);
  const seen: string[] = [];
  const capture = http.createServer((req, res) => {
    seen.push(String(req.headers.authorization));
    req.resume();
    res.writeHead(201).end();
  });
  await new Promise<void>((resolve) => capture.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => capture.close(() => resolve())));
  const base = `http://127.0.0.1:${(capture.address() as AddressInfo).port}`;
  const targets = [0, 1].map((i) => {
    const sub = store.upsertSubscription({ endpoint: `${base}/s${i}`, ...pushKeys(), user_agent: null }, new Date());
    return store.activePushTargets().find((x) => x.id === sub.id)!;
  });
  t.equal((await sender.sendAll(targets, 'one')).sent, 2);
  wall.advanceMinutes(10 * 60);
  t.equal((await sender.sendAll(targets, 'two')).sent, 2);
  t.equal(seen.length, 4);
  t.equal(new Set(seen).size, 1, 'one JWT for four pushes over ten hours');
  const jwt = /^vapid t=([^,]+), k=/.exec(seen[0])?.[1] ?? '';
  const claims = JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()) as { aud: string; exp: number };
  t.equal(claims.aud, base, 'audience is the push service origin');
  t.equal(claims.exp, (wall.now().getTime() - 10 * 3600_000) / 1000 + 12 * 3600, 'valid 12 hours from signing, in real time');
  wall.advanceMinutes(61); // within the last hour of its life: a new one
  await sender.sendAll(targets, 'three');
  t.not(seen[4], seen[0]);
});
