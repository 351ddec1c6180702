/**
 * POST /api/notifications/test to SUBSCRIPTIONS (1,000) subscriptions on a
 * real local push service (web-push-testing, which checks each VAPID JWT and
 * decrypts each payload), in pushes per second, end to end: the request in,
 * every push encrypted, signed, sent and accepted, the answer out.
 *
 * The push service runs in a child process (this file forked with
 * `push-service`), so its decryption does not share the service's event loop.
 * Baselines measured in the same run:
 *   - the same sends with concurrency 1 (one push at a time): what the
 *     parallel sender buys;
 *   - encryption alone (web-push generateRequestDetails for each subscription
 *     with the VAPID header already signed, as the sender does; no network):
 *     the ceiling of the sender's own CPU work.
 * Also printed: CPU time of the service process and of the push-service child
 * per push, to show which side a figure is bound by on a shared machine.
 *
 * Run: npm run bench:space-push   (node dist/bench/space-push.js after npm run build)
 * Env: SUBSCRIPTIONS (1000), ROUNDS (3)
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import webpush from 'web-push';
import { ManualClock } from '../api/space/clock';
import { configFromEnv } from '../api/space/config';
import { generateVapidKeys } from '../api/space/push';
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
  const pushOptions = service.notifier['push'].options;
  const defaultConcurrency = pushOptions.concurrency;
  await sendTest(); // warm-up: JIT, connection pool

  const rows: string[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    pushOptions.concurrency = defaultConcurrency;
    const par = await sendTest();
    pushOptions.concurrency = 1;
    const seq = await sendTest();
    const payload = JSON.stringify({ title: 'Test notification', body: 'x'.repeat(60) });
    const t0 = performance.now();
    const authorization = webpush.getVapidHeaders(new URL(url).origin, vapid.subject, vapid.publicKey, vapid.privateKey, 'aes128gcm').Authorization;
    for (const s of subs) webpush.generateRequestDetails(s, payload, { headers: { Authorization: authorization }, TTL: 60, contentEncoding: 'aes128gcm' });
    const encMs = performance.now() - t0;
    const rate = (n: number, ms: number) => (n / ms) * 1000;
    rows.push(
      `| ${round} | ${par.sent} | ${fmtInt(rate(par.sent, par.ms))} pushes/s (${par.ms.toFixed(0)} ms) | ${fmtInt(rate(seq.sent, seq.ms))} pushes/s (${seq.ms.toFixed(0)} ms) | ${(seq.ms / par.ms).toFixed(2)}x | ${fmtInt(rate(SUBSCRIPTIONS, encMs))} /s | ${(rate(par.sent, par.ms) / rate(SUBSCRIPTIONS, encMs)).toFixed(2)} | ${((par.ownCpuMs / par.sent) * 1000).toFixed(0)} µs / ${((par.pushServiceCpuMs / par.sent) * 1000).toFixed(0)} µs |`,
    );
    if (par.sent !== SUBSCRIPTIONS || seq.sent !== SUBSCRIPTIONS) process.stdout.write(`warning: round ${round} delivered ${par.sent}/${seq.sent} of ${SUBSCRIPTIONS}\n`);
  }
  process.stdout.write(
    `\n| round | delivered | POST /test, concurrency ${defaultConcurrency} | concurrency 1 (baseline) | speed-up | encryption alone | end-to-end / encryption | CPU per push: service / push service |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n${rows.join('\n')}\n`,
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
