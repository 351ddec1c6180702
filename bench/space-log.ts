/**
 * GET /api/notifications with LOG_ENTRIES (100,000) entries in the log: p50
 * and p99 latency under load (CONNECTIONS keep-alive connections, see
 * load(); WARMUP_SEC discarded, DURATION_SEC measured), for the first
 * page (the default limit of 50), keyset pages (`before_id`: a random page
 * anywhere in the log on every request, and one near the oldest entry), the
 * largest page (limit=200), the unread count, and the seed's deep offset
 * page (offset=99,000) for comparison.
 *
 * Baseline in the same run: a bare node:http server in the same child
 * process answering the same first-page bytes, precomputed, so the ratio
 * shows what the query, the row mapping and express add. The servers run
 * in a child process (this file forked with `serve`) so that the load
 * generator does not share their event loop.
 *
 * Run: npm run bench:space-log   (node dist/bench/space-log.js after npm run build)
 * Env: LOG_ENTRIES (100000), CONNECTIONS (10), DURATION_SEC (8), WARMUP_SEC (2),
 *      SERVER_NODE_ARGS (node flags for the server process, e.g. --cpu-prof),
 *      ONLY (just the rows whose label contains this text, and the baseline)
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fmtInt, fmtMs, machineLine, percentile } from './bench-helpers';

const LOG_ENTRIES = Number(process.env.LOG_ENTRIES ?? 100_000);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10);
const DURATION_SEC = Number(process.env.DURATION_SEC ?? 8);
const WARMUP_SEC = Number(process.env.WARMUP_SEC ?? 2);

async function serveChild(): Promise<void> {
  // Loaded here, in the server process only: the load generator (the parent) stays a lean node:http client. With the
  // service's modules loaded in it too, the client's own p99 rose from about 0.9 ms to 3.5-5.5 ms on this machine (a bare
  // server measured by the same client), which hid the servers' latency behind the client's.
  const { ManualClock } = require('../api/space/clock') as typeof import('../api/space/clock');
  const { configFromEnv } = require('../api/space/config') as typeof import('../api/space/config');
  const { startSpaceService } = require('../api/space/serve') as typeof import('../api/space/serve');
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
  service.maintain(); // what the maintenance timer does within five minutes: the fill's WAL checkpointed and truncated
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

interface LoadResult {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/**
 * CONNECTIONS keep-alive connections (node:http), each sending its next
 * request when the answer to the last has been read, for `durationSec`;
 * latency per request from hrtime, in microseconds (autocannon rounds to
 * whole milliseconds, which makes the baseline's p99 read 0).
 * `path` is called per request (a keyset page anywhere in the log).
 */
async function load(base: string, path: () => string, durationSec: number): Promise<LoadResult> {
  const u = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const latenciesUs: number[] = [];
  let errors = 0;
  const endAt = performance.now() + durationSec * 1000;
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = process.hrtime.bigint();
      const req = http.get({ host: u.hostname, port: u.port, path: path(), agent }, (res) => {
        res.on('data', () => {});
        res.on('end', () => {
          latenciesUs.push(Number(process.hrtime.bigint() - t0) / 1000);
          if (res.statusCode !== 200) errors++;
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
    });
  const connection = async () => {
    while (performance.now() < endAt) await one();
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, connection));
  const elapsedMs = performance.now() - t0;
  agent.destroy();
  return { requestsPerSec: (latenciesUs.length / elapsedMs) * 1000, p50Ms: percentile(latenciesUs, 50) / 1000, p99Ms: percentile(latenciesUs, 99) / 1000, errors };
}

async function main(): Promise<void> {
  process.stdout.write(`${machineLine()}\nfilling the log with ${fmtInt(LOG_ENTRIES)} entries...\n`);
  // SERVER_NODE_ARGS: node flags for the server process, e.g. "--cpu-prof --cpu-prof-dir=prof" to see where its time goes.
  const child = fork(__filename, ['serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: (process.env.SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean) });
  const urls = await new Promise<{ service: string; bare: string; fillMs: number }>((resolve) => child.once('message', (m) => resolve(m as { service: string; bare: string; fillMs: number })));
  process.stdout.write(`filled in ${urls.fillMs.toFixed(0)} ms\n`);
  const randomPage = () => `/api/notifications?before_id=${51 + Math.floor(Math.random() * (LOG_ENTRIES - 50))}`;
  const targets: Array<[string, string, () => string]> = [
    ['baseline: bare node:http, same first-page bytes', urls.bare, () => '/'],
    ['GET /api/notifications (first page, limit 50)', urls.service, () => '/api/notifications'],
    ['GET /api/notifications?before_id=<random> (keyset, any page)', urls.service, randomPage],
    ['GET /api/notifications?before_id=1000 (keyset, near the oldest)', urls.service, () => '/api/notifications?before_id=1000'],
    ['GET /api/notifications?limit=200', urls.service, () => '/api/notifications?limit=200'],
    ['GET /api/notifications/unread-count', urls.service, () => '/api/notifications/unread-count'],
    [`GET /api/notifications?offset=${LOG_ENTRIES - 1000} (seed paging, for comparison)`, urls.service, () => `/api/notifications?offset=${LOG_ENTRIES - 1000}`],
  ];
  const rows: string[] = [];
  let baseP99 = NaN;
  // ONLY=<text>: just the baseline and the rows whose label contains it (to profile one endpoint).
  const only = process.env.ONLY;
  for (const [label, base, path] of targets.filter(([label], i) => !only || i === 0 || label.includes(only))) {
    await load(base, path, WARMUP_SEC);
    const r = await load(base, path, DURATION_SEC);
    if (label.startsWith('baseline')) baseP99 = r.p99Ms;
    rows.push(`| ${label} | ${fmtInt(r.requestsPerSec)} req/s | ${fmtMs(r.p50Ms)} | **${fmtMs(r.p99Ms)}** | ${(r.p99Ms / baseP99).toFixed(2)} | ${r.errors} |`);
  }
  // Last, as it changes the log: one read-all over every unread entry (three in four of the log), timed alone
  // on a connection already open, beside an unread-count on the same connection.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const timed = (method: string, path: string) =>
    new Promise<{ ms: number; status: number; body: string }>((resolve, reject) => {
      const u = new URL(urls.service);
      const t0 = performance.now();
      const req = http.request({ host: u.hostname, port: u.port, method, path, agent }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c));
        res.on('end', () => resolve({ ms: performance.now() - t0, status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  // The first write after the maintenance checkpoint starts a new WAL file (a sync of its header): one single read
  // takes that first, so that the read-all's figure is its own.
  const firstWrite = await timed('POST', `/api/notifications/${LOG_ENTRIES}/read`);
  const before = await timed('GET', '/api/notifications/unread-count');
  const count = await timed('GET', '/api/notifications/unread-count');
  const readAll = await timed('POST', '/api/notifications/read-all');
  const after = await timed('GET', '/api/notifications/unread-count');
  agent.destroy();
  rows.push(
    `| POST /api/notifications/read-all over ${fmtInt((JSON.parse(before.body) as { count: number }).count)} unread (one request alone; unread after: ${(JSON.parse(after.body) as { count: number }).count}) | | ${fmtMs(readAll.ms)} (an unread-count on the same connection: ${fmtMs(count.ms)}; the first write after the checkpoint, one read: ${fmtMs(firstWrite.ms)}) | | | ${readAll.status === 200 && firstWrite.status === 200 ? 0 : 1} |`,
  );
  // Entries a read-all covered take their read_at from its mark, not from their stored text: the keyset row again.
  if (!only || 'GET /api/notifications?before_id=<random> (keyset, any page)'.includes(only)) {
    await load(urls.service, randomPage, WARMUP_SEC);
    const r = await load(urls.service, randomPage, DURATION_SEC);
    rows.push(`| the keyset row again, after the read-all (three in four entries read by its mark) | ${fmtInt(r.requestsPerSec)} req/s | ${fmtMs(r.p50Ms)} | **${fmtMs(r.p99Ms)}** | ${(r.p99Ms / baseP99).toFixed(2)} | ${r.errors} |`);
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
