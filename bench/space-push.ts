/**
 * POST /api/notifications/test to SUBSCRIPTIONS (1,000) subscriptions on a
 * real local push service (web-push-testing, which checks each VAPID JWT and
 * decrypts each payload), in pushes per second, end to end: the request in,
 * every push encrypted, signed, sent and accepted, the answer out.
 *
 * The push service runs in a child process (this file forked with
 * `push-service`), so its decryption does not share the service's event loop.
 * Measured in the same run:
 *   - the ceiling: the push service alone, fed the same 1,000 pushes ready
 *     made (encrypted and signed before the clock starts) over as many
 *     kept-alive connections by a client that does nothing else: no sender
 *     can deliver faster than the push service accepts;
 *   - the same POST encrypting on the event loop (PUSH_ENCRYPT_THREADS=0),
 *     and with concurrency 1 (one push at a time);
 *   - encryption alone (ours, and web-push's generateRequestDetails for
 *     comparison), no network.
 * Also printed: CPU time of the service process and of the push-service child
 * per push, to show which side a figure is bound by on a shared machine.
 * SERVER_NODE_ARGS is not needed here: run `node --cpu-prof dist/bench/space-push.js`
 * to profile the sending side (it runs in this process).
 *
 * Run: npm run bench:space-push   (node dist/bench/space-push.js after npm run build)
 * Env: SUBSCRIPTIONS (1000), ROUNDS (3)
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import webpush from 'web-push';
import { ManualClock } from '../api/space/clock';
import { configFromEnv } from '../api/space/config';
import { generateVapidKeys } from '../api/space/push';
import { clientKeys, encryptPayload } from '../api/space/push-crypto';
import { startSpaceService } from '../api/space/serve';
import { launchPushService, type PushSubscriptionJson } from '../test/helpers/space';
import { fmtInt, machineLine } from './bench-helpers';

const SUBSCRIPTIONS = Number(process.env.SUBSCRIPTIONS ?? 1000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);

async function pushServiceChild(): Promise<void> {
  const svc = await launchPushService();
  process.send?.({ url: svc.url });
  process.on('message', () => {
    const c = process.cpuUsage();
    process.send?.({ cpuUs: c.user + c.system });
  });
  process.on('disconnect', () => process.exit(0));
}

async function main(): Promise<void> {
  const child = fork(__filename, ['push-service'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const { url } = await new Promise<{ url: string }>((resolve) => child.once('message', (m) => resolve(m as { url: string })));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'space-bench-push-'));
  const vapid = { ...generateVapidKeys(), subject: 'mailto:bench@example.org' };
  const config = configFromEnv({ PORT: '0', DATABASE_PATH: path.join(dir, 'space.db'), SOCRATES_URL: 'http://127.0.0.1:9/', NEOWS_URL: 'http://127.0.0.1:9/', LL2_ASTRONAUTS_URL: 'http://127.0.0.1:9/', OPEN_NOTIFY_URL: 'http://127.0.0.1:9/' });
  config.vapid = vapid;
  const service = await startSpaceService(config, { clock: new ManualClock('2026-11-21T12:00:00Z'), timers: false });
  await service.initialRefresh;

  process.stdout.write(`${machineLine()}\nsubscribing ${fmtInt(SUBSCRIPTIONS)} clients to the local push service...\n`);
  const subs: PushSubscriptionJson[] = [];
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    const res = await fetch(`${url}/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ applicationServerKey: vapid.publicKey, userVisibleOnly: 'true' }) });
    const sub = ((await res.json()) as { data: PushSubscriptionJson }).data;
    subs.push(sub);
    await fetch(`${service.url}/api/notifications/subscribe`, { method: 'POST', body: JSON.stringify({ endpoint: sub.endpoint, keys: sub.keys }) });
  }

  const childCpuUs = () =>
    new Promise<number>((resolve) => {
      child.once('message', (m) => resolve((m as { cpuUs: number }).cpuUs));
      child.send('cpu');
    });
  const sendTest = async (): Promise<{ ms: number; sent: number; ownCpuMs: number; pushServiceCpuMs: number }> => {
    const c0 = process.cpuUsage();
    const p0 = await childCpuUs();
    const t0 = performance.now();
    const r = (await (await fetch(`${service.url}/api/notifications/test`, { method: 'POST' })).json()) as { sent_count: number };
    const ms = performance.now() - t0;
    const c = process.cpuUsage(c0);
    return { ms, sent: r.sent_count, ownCpuMs: (c.user + c.system) / 1000, pushServiceCpuMs: ((await childCpuUs()) - p0) / 1000 };
  };
  const sender = service.notifier['push'];
  const pushOptions = sender.options;
  const concurrency = pushOptions.concurrency;
  await sendTest(); // warm-up: JIT, connection pool

  // The ceiling: the push service alone, fed the same number of ready-made requests (encrypted and signed
  // before the clock starts) over CONCURRENCY kept-alive connections by a client that does nothing else.
  const payload = Buffer.from(JSON.stringify({ notification_id: 1, category: 'test', title: 'Test notification', body: 'Push notifications from the space service reach this device.', location_id: null, sent_at: new Date().toISOString(), data: { test: true } }));
  const authorization = webpush.getVapidHeaders(new URL(url).origin, vapid.subject, vapid.publicKey, vapid.privateKey, 'aes128gcm').Authorization;
  const pushServiceAlone = async (): Promise<{ ms: number; accepted: number; pushServiceCpuMs: number }> => {
    const ready = subs.map((s) => ({ url: new URL(s.endpoint), body: encryptPayload(payload, clientKeys(s.keys.p256dh, s.keys.auth)) }));
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    let next = 0;
    let accepted = 0;
    const p0 = await childCpuUs();
    const t0 = performance.now();
    const worker = async () => {
      while (next < ready.length) {
        const r = ready[next++];
        await new Promise<void>((resolve, reject) => {
          const req = http.request(r.url, { method: 'POST', agent, headers: { TTL: '60', 'Content-Encoding': 'aes128gcm', 'Content-Type': 'application/octet-stream', 'Content-Length': String(r.body.length), Authorization: authorization } }, (res) => {
            if (res.statusCode === 201) accepted++;
            res.resume();
            res.on('end', resolve);
          });
          req.on('error', reject);
          req.end(r.body);
        });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const ms = performance.now() - t0;
    agent.destroy();
    return { ms, accepted, pushServiceCpuMs: ((await childCpuUs()) - p0) / 1000 };
  };
  await pushServiceAlone(); // warm-up

  const rows: string[] = [];
  const rate = (n: number, ms: number) => (n / ms) * 1000;
  for (let round = 1; round <= ROUNDS; round++) {
    pushOptions.concurrency = concurrency;
    const par = await sendTest();
    const threads = pushOptions.encryptThreads;
    pushOptions.encryptThreads = 0;
    const inline = await sendTest();
    pushOptions.encryptThreads = threads;
    const alone = await pushServiceAlone();
    pushOptions.concurrency = 1;
    const seq = await sendTest();
    pushOptions.concurrency = concurrency;
    const keys = subs.map((s) => clientKeys(s.keys.p256dh, s.keys.auth));
    const t0 = performance.now();
    for (const k of keys) encryptPayload(payload, k);
    const encMs = performance.now() - t0;
    const t1 = performance.now();
    for (const s of subs) webpush.generateRequestDetails(s, payload.toString(), { headers: { Authorization: authorization }, TTL: 60, contentEncoding: 'aes128gcm' });
    const webpushMs = performance.now() - t1;
    rows.push(
      `| ${round} | ${par.sent} | **${fmtInt(rate(par.sent, par.ms))} pushes/s** (${par.ms.toFixed(0)} ms) | ${fmtInt(rate(alone.accepted, alone.ms))} pushes/s | **${(rate(par.sent, par.ms) / rate(alone.accepted, alone.ms)).toFixed(2)}** | ${fmtInt(rate(inline.sent, inline.ms))} pushes/s | ${fmtInt(rate(seq.sent, seq.ms))} pushes/s | ${fmtInt(rate(SUBSCRIPTIONS, encMs))} /s (web-push: ${fmtInt(rate(SUBSCRIPTIONS, webpushMs))} /s) | ${((par.ownCpuMs / par.sent) * 1000).toFixed(0)} µs / ${((par.pushServiceCpuMs / par.sent) * 1000).toFixed(0)} µs (alone: ${((alone.pushServiceCpuMs / alone.accepted) * 1000).toFixed(0)} µs) |`,
    );
    if (par.sent !== SUBSCRIPTIONS || inline.sent !== SUBSCRIPTIONS || seq.sent !== SUBSCRIPTIONS || alone.accepted !== SUBSCRIPTIONS) process.stdout.write(`warning: round ${round} delivered ${par.sent}/${alone.accepted}/${seq.sent} of ${SUBSCRIPTIONS}\n`);
  }
  process.stdout.write(
    `\n| round | delivered | POST /test, concurrency ${concurrency}, ${pushOptions.encryptThreads} encryption thread(s) | push service alone (ceiling) | POST /test / ceiling | the same, encrypting on the event loop | concurrency 1 | encryption alone | CPU per push: service / push service |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n${rows.join('\n')}\n`,
  );
  process.stdout.write(`${machineLine()}\n`);
  await service.close();
  child.disconnect();
  fs.rmSync(dir, { recursive: true, force: true });
}

if (process.argv[2] === 'push-service') void pushServiceChild();
else
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  });
