/**
 * Registry server throughput: GET /api/v1/device/{id} (the full device record
 * of bench/registry-codec.ts) answered as ProtoJSON and as binary protobuf,
 * measured in the same run against the same server (a child process of its
 * own, forked from this file with `serve`, on a SQLite file in a temporary
 * folder, with a real API key checked on every request).
 *
 * autocannon: CONNECTIONS keep-alive connections; per round a WARMUP_SEC
 * warm-up then DURATION_SEC measured per encoding, in the order json/binary
 * then binary/json over ROUNDS rounds so drift in the machine's load favours
 * neither. Every answer must be 200 (non-2xx are counted and printed).
 * The load generator shares the machine's cores with the server, so figures
 * are the pair's, not the server's alone; the ratio is the point, and the
 * server's CPU time per request (from the child's process.cpuUsage()) is the
 * comparison that does not depend on how the cores were shared.
 *
 * Run: npm run bench:registry-server   (node dist/bench/registry-server.js after npm run build)
 * Env: CONNECTIONS (20), DURATION_SEC (8), WARMUP_SEC (2), ROUNDS (2)
 */
import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { fmtInt, fmtMs, machineLine } from './bench-helpers';
import { forkRegistryServer, serveRegistryChild } from './registry-bench-server';

const CONNECTIONS = Number(process.env.CONNECTIONS ?? 20);
const DURATION_SEC = Number(process.env.DURATION_SEC ?? 8);
const WARMUP_SEC = Number(process.env.WARMUP_SEC ?? 2);
const ROUNDS = Number(process.env.ROUNDS ?? 2);

type Encoding = 'json' | 'binary';
const ACCEPT: Record<Encoding, string> = { json: 'application/json', binary: 'application/x-protobuf' };

/** The server child: the shared registry child, which also answers any message with its CPU time so far. */
async function serveChild(dbFile: string): Promise<void> {
  process.on('message', () => {
    const { user, system } = process.cpuUsage();
    process.send?.({ cpuUs: user + system });
  });
  await serveRegistryChild(dbFile);
}

/** The server child's CPU time so far (user + system, microseconds). */
async function childCpuUs(child: ChildProcess): Promise<number> {
  child.send('cpu');
  const [{ cpuUs }] = (await once(child, 'message')) as [{ cpuUs: number }];
  return cpuUs;
}

async function measure(child: ChildProcess, url: string, key: string, encoding: Encoding, seconds: number) {
  const cpuBefore = await childCpuUs(child);
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers: { accept: ACCEPT[encoding], authorization: `Bearer ${key}` } });
  const cpuUs = (await childCpuUs(child)) - cpuBefore;
  const total = Math.max(1, result.requests.total);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors,
    bytes: result.throughput.total / total,
    cpuUsPerRequest: cpuUs / total,
  };
}

async function main(): Promise<void> {
  const server = await forkRegistryServer(__filename, 'registry-bench-');
  const { child, port, key } = server;
  const url = `http://127.0.0.1:${port}/api/v1/device/27`;
  try {
    console.log(`registry server benchmark: ${machineLine()}`);
    console.log(`GET /api/v1/device/27, ${CONNECTIONS} connections, ${WARMUP_SEC} s warm-up + ${DURATION_SEC} s per encoding, ${ROUNDS} rounds\n`);
    const runs: Record<Encoding, Awaited<ReturnType<typeof measure>>[]> = { json: [], binary: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order: Encoding[] = round % 2 === 0 ? ['json', 'binary'] : ['binary', 'json'];
      for (const encoding of order) {
        await measure(child, url, key, encoding, WARMUP_SEC);
        const r = await measure(child, url, key, encoding, DURATION_SEC);
        runs[encoding].push(r);
        console.log(`round ${round + 1} ${encoding.padEnd(6)}: ${fmtInt(r.rps)} req/s  p50 ${fmtMs(r.p50)}  p99 ${fmtMs(r.p99)}  ${Math.round(r.bytes)} bytes/response  server CPU ${r.cpuUsPerRequest.toFixed(0)} µs/request  non-2xx/errors ${r.non2xx}`);
      }
    }
    const mean = (e: Encoding) => runs[e].reduce((s, r) => s + r.rps, 0) / runs[e].length;
    const cpu = (e: Encoding) => runs[e].reduce((s, r) => s + r.cpuUsPerRequest, 0) / runs[e].length;
    console.log(`\nmean: json ${fmtInt(mean('json'))} req/s, binary ${fmtInt(mean('binary'))} req/s; binary / json = ${(mean('binary') / mean('json')).toFixed(2)}x`);
    console.log(`server CPU per request: json ${cpu('json').toFixed(0)} µs, binary ${cpu('binary').toFixed(0)} µs; json / binary = ${(cpu('json') / cpu('binary')).toFixed(2)}x (independent of the load generator's share of the cores)`);
    console.log(`load average (1 min) at the end: ${os.loadavg()[0].toFixed(2)}`);
  } finally {
    await server.close();
  }
}

if (process.argv[2] === 'serve') void serveChild(process.argv[3]);
else
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
