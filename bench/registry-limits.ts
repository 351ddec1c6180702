/**
 * GET latency of the registry server while large bodies are being processed
 * (issue 14: "a GET's p99 stays under 20 ms while four maximal bodies are
 * being processed").
 *
 * The server runs in a child process of its own (forked from this file with
 * `serve`) on a SQLite file in a temporary folder, with a real API key; the
 * posting clients run in another (`post`). One keep-alive connection from
 * this process sends GET /api/v2/device/27 back to back for DURATION_SEC and
 * records each answer's latency, in three phases (each after a 1 s warm-up):
 *
 *   idle        nothing else
 *   maximal     four connections each POST, back to back, the largest body
 *               the server accepts: 1000 routes (the per-device limit) of the
 *               longest IPv6 prefix form, about 46 KB of JSON
 *   oversized   four connections each POST 1 MB bodies, which the server
 *               refuses (413) once 64 KB have arrived
 *
 * Latency is wall-clock on a shared machine: the load generator, the four
 * posting clients and the server share its cores, so the figures are the
 * whole system's; the idle phase is the baseline measured in the same run.
 *
 * Run: npm run bench:registry-limits   (node dist/bench/registry-limits.js after npm run build)
 * Env: DURATION_SEC (5), POSTERS (4)
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import os from 'node:os';
import { MAX_ROUTES_PER_DEVICE } from '../registry-proto/server/routes';
import { fmtInt, fmtMs, machineLine } from './bench-helpers';
import { forkRegistryServer, serveRegistryChild } from './registry-bench-server';

const DURATION_SEC = Number(process.env.DURATION_SEC ?? 5);
const POSTERS = Number(process.env.POSTERS ?? 4);
const P99_TARGET_MS = 20;

function request(agent: http.Agent, port: number, method: string, p: string, key: string, body?: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: p, agent, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json', 'content-length': body.length } : {}) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE' ? resolve(413) : reject(err)));
    req.end(body);
  });
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/** Child process: POSTERS connections posting `kind` bodies back to back until `untilMs` (epoch ms). */
async function postChild(port: number, key: string, kind: 'maximal' | 'oversized', untilMs: number): Promise<void> {
  const body = kind === 'maximal' ? maximalBody() : Buffer.alloc(1 << 20, 0x20);
  let posts = 0;
  const statuses = new Set<number>();
  process.send?.({ ready: true });
  await Promise.all(
    Array.from({ length: POSTERS }, async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      while (Date.now() < untilMs) {
        statuses.add(await request(agent, port, 'POST', '/api/v2/device/27/routes', key, body));
        posts++;
      }
      agent.destroy();
    }),
  );
  process.send?.({ posts, statuses: [...statuses] });
  process.disconnect();
}

function maximalBody(): Buffer {
  return Buffer.from(JSON.stringify({ routes: Array.from({ length: MAX_ROUTES_PER_DEVICE }, (_, i) => `fd7a:115c:a1e0:ab12:4843:cd96:${(0x1000 + i).toString(16)}:ffff/128`) }));
}

/**
 * One phase: GETs back to back from this process while (unless idle) a
 * child process of its own posts the bodies, so the posting clients' work
 * (writing megabytes) does not delay this process's GETs.
 */
async function phase(port: number, key: string, kind: 'idle' | 'maximal' | 'oversized', seconds: number): Promise<{ latenciesMs: number[]; posts: number; statuses: number[] }> {
  const untilMs = Date.now() + seconds * 1000;
  let posters: ReturnType<typeof fork> | undefined;
  let done: Promise<unknown> = Promise.resolve([{ posts: 0, statuses: [] }]);
  if (kind !== 'idle') {
    posters = fork(__filename, ['post', String(port), key, kind, String(untilMs)], { stdio: 'inherit' });
    await once(posters, 'message'); // ready
    done = once(posters, 'message');
  }
  const getAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latenciesMs: number[] = [];
  while (Date.now() < untilMs) {
    const start = performance.now();
    const status = await request(getAgent, port, 'GET', '/api/v2/device/27', key);
    if (status !== 200) throw new Error(`GET answered ${status}`);
    latenciesMs.push(performance.now() - start);
  }
  getAgent.destroy();
  const [{ posts, statuses }] = (await done) as [{ posts: number; statuses: number[] }];
  if (posters) await once(posters, 'exit');
  return { latenciesMs: latenciesMs.sort((a, b) => a - b), posts, statuses };
}

async function main(): Promise<void> {
  const server = await forkRegistryServer(__filename, 'registry-limits-bench-');
  const { port, key } = server;
  try {
    console.log(`registry limits benchmark: ${machineLine()}`);
    console.log(`GET /api/v2/device/27 back to back on one connection for ${DURATION_SEC} s per phase; ${POSTERS} connections posting bodies in the loaded phases\n`);
    console.log('| phase | body per POST | POSTs answered | GETs | GET p50 | GET p99 | GET max |');
    console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |');
    let loadedP99 = 0;
    for (const name of ['idle', 'maximal', 'oversized'] as const) {
      await phase(port, key, name, 1); // warm-up
      const r = await phase(port, key, name, DURATION_SEC);
      const p99 = quantile(r.latenciesMs, 0.99);
      if (name === 'maximal') loadedP99 = p99;
      const bodyText = name === 'idle' ? '-' : `${fmtInt(name === 'maximal' ? maximalBody().length : 1 << 20)} bytes (answered ${r.statuses.join(', ')})`;
      console.log(`| ${name} | ${bodyText} | ${fmtInt(r.posts)} | ${fmtInt(r.latenciesMs.length)} | ${fmtMs(quantile(r.latenciesMs, 0.5))} | ${fmtMs(p99)} | ${fmtMs(r.latenciesMs[r.latenciesMs.length - 1])} |`);
    }
    console.log(`\nGET p99 while ${POSTERS} maximal bodies are processed: ${fmtMs(loadedP99)} (target < ${P99_TARGET_MS} ms: ${loadedP99 < P99_TARGET_MS ? 'met' : 'NOT met'})`);
    console.log(`load average (1 min) at the end: ${os.loadavg()[0].toFixed(2)}`);
  } finally {
    await server.close();
  }
}

if (process.argv[2] === 'serve') void serveRegistryChild(process.argv[3]);
else if (process.argv[2] === 'post') void postChild(Number(process.argv[3]), process.argv[4], process.argv[5] as 'maximal' | 'oversized', Number(process.argv[6]));
else
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
