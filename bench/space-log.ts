/**
 * GET /api/notifications with LOG_ENTRIES (100,000) entries in the log: p50
 * and p99 latency under load (autocannon, CONNECTIONS keep-alive
 * connections, WARMUP_SEC discarded, DURATION_SEC measured), for the first
 * page (the default limit of 50), the largest page (limit=200) and a deep
 * page (offset=99,000).
 *
 * Baseline in the same run: a bare node:http server in the same child
 * process answering the same first-page bytes, precomputed, so the ratio
 * shows what the query, the row mapping and express add. The servers run
 * in a child process (this file forked with `serve`) so that the load
 * generator does not share their event loop.
 *
 * Run: npm run bench:space-log   (node dist/bench/space-log.js after npm run build)
 * Env: LOG_ENTRIES (100000), CONNECTIONS (10), DURATION_SEC (8), WARMUP_SEC (2)
 */
import autocannon from 'autocannon';
import { fork } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../api/space/clock';
import { configFromEnv } from '../api/space/config';
import { startSpaceService } from '../api/space/serve';
import { fmtInt, fmtMs, machineLine } from './bench-helpers';

const LOG_ENTRIES = Number(process.env.LOG_ENTRIES ?? 100_000);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10);
const DURATION_SEC = Number(process.env.DURATION_SEC ?? 8);
const WARMUP_SEC = Number(process.env.WARMUP_SEC ?? 2);

async function serveChild(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'space-bench-log-'));
  const config = configFromEnv({ PORT: '0', DATABASE_PATH: path.join(dir, 'space.db'), SOCRATES_URL: 'http://127.0.0.1:9/', NEOWS_URL: 'http://127.0.0.1:9/', LL2_ASTRONAUTS_URL: 'http://127.0.0.1:9/', OPEN_NOTIFY_URL: 'http://127.0.0.1:9/' });
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const service = await startSpaceService(config, { clock, timers: false });
  await service.initialRefresh;
  const categories = ['conjunction', 'neo_approach', 'launch', 'satellite_pass', 'daily_digest'];
  const t0 = performance.now();
  service.db.transaction(() => {
    for (let i = 0; i < LOG_ENTRIES; i++) {
      clock.advanceMinutes(5);
      const e = service.store.logNotification(
        { category: categories[i % categories.length], title: `Notification ${i}`, body: 'Closest approach 0.412 km at 2026-11-22T03:14:15Z, relative speed 13.52 km/s.', data: { i, lead_minutes: 60 }, location_id: i % 3 === 0 ? 7 : null },
        i % 2 === 0,
        clock.now(),
      );
      if (i % 4 === 0) service.store.markRead(e.id, clock.now());
    }
  })();
  const fillMs = performance.now() - t0;
  const firstPage = Buffer.from(JSON.stringify(service.store.listNotifications(50, 0)));
  const bare = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': firstPage.length, 'Cache-Control': 'no-store' });
    res.end(firstPage);
  });
  bare.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', () => resolve()));
  process.send?.({ service: service.url, bare: `http://127.0.0.1:${(bare.address() as AddressInfo).port}`, fillMs });
  process.on('disconnect', () => {
    void service.close().then(() => {
      fs.rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

async function load(url: string, durationSec: number): Promise<autocannon.Result> {
  return autocannon({ url, connections: CONNECTIONS, duration: durationSec });
}

async function main(): Promise<void> {
  process.stdout.write(`${machineLine()}\nfilling the log with ${fmtInt(LOG_ENTRIES)} entries...\n`);
  const child = fork(__filename, ['serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const urls = await new Promise<{ service: string; bare: string; fillMs: number }>((resolve) => child.once('message', (m) => resolve(m as { service: string; bare: string; fillMs: number })));
  process.stdout.write(`filled in ${urls.fillMs.toFixed(0)} ms\n`);
  const targets: Array<[string, string]> = [
    ['baseline: bare node:http, same first-page bytes', urls.bare],
    ['GET /api/notifications (limit 50)', `${urls.service}/api/notifications`],
    ['GET /api/notifications?limit=200', `${urls.service}/api/notifications?limit=200`],
    ['GET /api/notifications?offset=99000', `${urls.service}/api/notifications?offset=99000`],
  ];
  const rows: string[] = [];
  let baseP99 = NaN;
  for (const [label, url] of targets) {
    await load(url, WARMUP_SEC);
    const r = await load(url, DURATION_SEC);
    if (label.startsWith('baseline')) baseP99 = r.latency.p99;
    const errors = r.errors + r.non2xx;
    rows.push(`| ${label} | ${fmtInt(r.requests.average)} req/s | ${fmtMs(r.latency.p50)} | **${fmtMs(r.latency.p99)}** | ${(r.latency.p99 / baseP99).toFixed(2)} | ${errors} |`);
  }
  process.stdout.write(`\n| endpoint (${fmtInt(LOG_ENTRIES)} entries, ${CONNECTIONS} connections, ${DURATION_SEC} s) | throughput | p50 | p99 | p99 / baseline | errors |\n| --- | --- | --- | --- | --- | --- |\n${rows.join('\n')}\n${machineLine()}\n`);
  child.disconnect();
}

if (process.argv[2] === 'serve') void serveChild();
else
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  });
