/**
 * GET /status under load: throughput (requests/s) and p50/p99 latency of
 *   (a) the real app from buildApp() (express, with GET /status answered before it), and
 *   (b) the baseline: a bare node:http server returning the same JSON body
 *       (statusBody(positioner.status()) computed per request, same headers),
 * both on a simulated positioner driven by a WallClock, measured in the same
 * run with the same load (autocannon: CONNECTIONS keep-alive connections,
 * WARMUP_SEC discarded, then DURATION_SEC measured). Each server runs in a
 * child process of its own (this file, forked with `serve`), so the load
 * generator never shares its event loop; a fresh child serves each run.
 *
 * Two scenarios: the positioner idle, and moving (full-range moves back and
 * forth, the step executor issuing ~8,000 steps/s on the same event loop as
 * the server). Runs alternate bare/express and express/bare over ROUNDS
 * rounds so that drift in the machine's load does not favour either.
 * Prints each server's CPU use and CPU time per request: a server near 100%
 * of one core is server-bound, which is what this benchmark means to measure;
 * one well below it is held back by the load generator or by other processes
 * (on 2 cores, autocannon alone cannot saturate the bare server), and then
 * the CPU time per request is the fairer comparison.
 *
 * Run: npm run bench:status   (node dist/bench/status-throughput.js after npm run build)
 * Env: CONNECTIONS (50), DURATION_SEC (10), WARMUP_SEC (3), ROUNDS (2)
 */
import autocannon from 'autocannon';
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { buildApp, statusBody } from '../api/app';
import { createSimulatedPositioner, defaultSimSettings } from '../cli/assemble';
import { defaultConfig } from '../firmware/config';
import type { Positioner } from '../firmware/positioner';
import { WallClock } from '../sim/wall-clock';
import { fmtInt, fmtMs, machineLine, percentile } from './bench-helpers';

type ServerKind = 'bare' | 'express';
type Scenario = 'idle' | 'moving';

const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const DURATION_SEC = Number(process.env.DURATION_SEC ?? 10);
const WARMUP_SEC = Number(process.env.WARMUP_SEC ?? 3);
const ROUNDS = Number(process.env.ROUNDS ?? 2);

/** What a server child reports about itself. */
interface ChildReport {
  type: 'report';
  steps: number;
  cpuUs: number;
  state: string;
}

type ParentMessage = { type: 'report' };
type ChildMessage = { type: 'ready'; port: number } | ChildReport;

// ---- server child ------------------------------------------------------------

/** The baseline: node:http alone, the same body and headers as the express app's res.json(). */
function bareHandler(positioner: Positioner): http.RequestListener {
  return (req, res) => {
    if (req.method === 'GET' && req.url === '/status') {
      const body = JSON.stringify(statusBody(positioner.status()));
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    } else {
      res.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8' });
      res.end('{"error":"not found"}');
    }
  };
}

function serve(kind: ServerKind, scenario: Scenario): void {
  const send = (m: ChildMessage): void => {
    process.send?.(m);
  };
  const clock = new WallClock();
  const { positioner, sim } = createSimulatedPositioner(clock, defaultConfig(), defaultSimSettings());
  const server = http.createServer(kind === 'express' ? buildApp({ positioner }) : bareHandler(positioner));
  server.keepAliveTimeout = 5000; // as cli/serve.ts
  if (scenario === 'moving') {
    // Back and forth over the full range for as long as the child lives.
    let far = false;
    const next = (): void => {
      far = !far;
      positioner.moveTo(far ? 180 : 0, far ? 360 : 0);
    };
    positioner.onChange(() => {
      if (positioner.status().state === 'idle') setImmediate(next);
    });
    next();
  }
  process.on('message', (m: ParentMessage) => {
    if (m.type === 'report') {
      const cpu = process.cpuUsage();
      send({ type: 'report', steps: sim.theta.stepsReceived + sim.phi.stepsReceived, cpuUs: cpu.user + cpu.system, state: positioner.status().state });
    }
  });
  process.on('disconnect', () => process.exit(0));
  server.listen(0, '127.0.0.1', () => send({ type: 'ready', port: (server.address() as AddressInfo).port }));
}

// ---- load generator (parent) -------------------------------------------------

interface RunResult {
  requests: number;
  durationSec: number;
  latenciesMs: number[];
  serverCpuSec: number;
  loadCpuSec: number;
  stepsPerSec: number;
  bodyBytes: number;
}

function nextMessage<T extends ChildMessage['type']>(child: ChildProcess, type: T): Promise<Extract<ChildMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: ChildMessage): void => {
      if (m.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m as Extract<ChildMessage, { type: T }>);
    };
    const onExit = (code: number | null): void => reject(new Error(`server child exited (${code}) before sending '${type}'`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

async function report(child: ChildProcess): Promise<ChildReport> {
  const reply = nextMessage(child, 'report');
  child.send({ type: 'report' } satisfies ParentMessage);
  return reply;
}

/** One autocannon run; latencies are collected from each response (sub-millisecond, unlike autocannon's own histogram). */
async function load(url: string, durationSec: number): Promise<{ requests: number; durationSec: number; latenciesMs: number[] }> {
  const latenciesMs: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ url, connections: CONNECTIONS, duration: durationSec, pipelining: 1 }, (err, r) => (err ? reject(err) : resolve(r)));
    instance.on('response', (_client, statusCode, _bytes, ms) => {
      if (statusCode === 200) latenciesMs.push(ms);
    });
  });
  if (result.errors > 0 || result.non2xx > 0 || result.timeouts > 0) {
    throw new Error(`load run against ${url} had ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx answers`);
  }
  return { requests: latenciesMs.length, durationSec: result.duration, latenciesMs };
}

async function measure(kind: ServerKind, scenario: Scenario): Promise<RunResult> {
  const child = fork(__filename, ['serve', kind, scenario], { stdio: 'inherit' });
  try {
    const { port } = await nextMessage(child, 'ready');
    const url = `http://127.0.0.1:${port}/status`;
    const probe = await fetch(url);
    const text = await probe.text();
    const body = JSON.parse(text) as { moving: boolean };
    if (probe.status !== 200 || body.moving !== (scenario === 'moving')) {
      throw new Error(`${kind} server answered ${probe.status} ${text} in the ${scenario} scenario`);
    }
    await load(url, WARMUP_SEC);
    const before = await report(child);
    const cpu0 = process.cpuUsage();
    const run = await load(url, DURATION_SEC);
    const cpu1 = process.cpuUsage(cpu0);
    const after = await report(child);
    if (scenario === 'moving' && after.state !== 'moving') throw new Error(`positioner stopped moving during the ${kind} run (${after.state})`);
    return {
      ...run,
      serverCpuSec: (after.cpuUs - before.cpuUs) / 1e6,
      loadCpuSec: (cpu1.user + cpu1.system) / 1e6,
      stepsPerSec: (after.steps - before.steps) / run.durationSec,
      bodyBytes: Buffer.byteLength(text),
    };
  } finally {
    child.disconnect();
    if (child.exitCode === null) await once(child, 'exit');
  }
}

/** Runs pooled over rounds: total requests over total time, latency percentiles over every response. */
function pool(runs: RunResult[]) {
  const durationSec = runs.reduce((s, r) => s + r.durationSec, 0);
  const latencies = runs.flatMap((r) => r.latenciesMs);
  return {
    reqPerSec: runs.reduce((s, r) => s + r.requests, 0) / durationSec,
    cpuUsPerReq: (runs.reduce((s, r) => s + r.serverCpuSec, 0) * 1e6) / runs.reduce((s, r) => s + r.requests, 0),
    perRound: runs.map((r) => r.requests / r.durationSec),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    serverCpu: runs.reduce((s, r) => s + r.serverCpuSec, 0) / durationSec,
    loadCpu: runs.reduce((s, r) => s + r.loadCpuSec, 0) / durationSec,
    stepsPerSec: runs.reduce((s, r) => s + r.stepsPerSec * r.durationSec, 0) / durationSec,
    bodyBytes: runs[0].bodyBytes,
  };
}

async function main(): Promise<void> {
  console.log(`machine: ${machineLine()}`);
  console.log(`load: autocannon, ${CONNECTIONS} connections, pipelining 1, ${WARMUP_SEC} s warm-up then ${DURATION_SEC} s measured, ${ROUNDS} round(s) per server, each server in its own child process`);
  for (const scenario of ['idle', 'moving'] as const) {
    const runs: Record<ServerKind, RunResult[]> = { bare: [], express: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order: ServerKind[] = round % 2 === 0 ? ['bare', 'express'] : ['express', 'bare'];
      for (const kind of order) runs[kind].push(await measure(kind, scenario));
    }
    const bare = pool(runs.bare);
    const expr = pool(runs.express);
    console.log(`\nGET /status, positioner ${scenario}${scenario === 'moving' ? ' (full-range moves, step executor on the server loop)' : ''}, body ${bare.bodyBytes} bytes:`);
    for (const [name, r] of [['baseline (bare node:http)', bare], ['app (buildApp)', expr]] as const) {
      const steps = scenario === 'moving' ? `, ${fmtInt(r.stepsPerSec)} steps/s issued` : '';
      console.log(
        `  ${name.padEnd(26)} ${fmtInt(r.reqPerSec).padStart(7)} req/s  p50 ${fmtMs(r.p50)}  p99 ${fmtMs(r.p99)}  ` +
          `(rounds: ${r.perRound.map(fmtInt).join(', ')} req/s; server CPU ${(r.serverCpu * 100).toFixed(0)}% = ${r.cpuUsPerReq.toFixed(1)} us/request, load generator CPU ${(r.loadCpu * 100).toFixed(0)}%${steps})`,
      );
    }
    console.log(`  buildApp / bare throughput: ${(expr.reqPerSec / bare.reqPerSec).toFixed(2)} (aim >= 0.6); p99 latency buildApp / bare: ${(expr.p99 / bare.p99).toFixed(2)}`);
    console.log(`  server CPU per request bare / express: ${(bare.cpuUsPerReq / expr.cpuUsPerReq).toFixed(2)} (the throughput ratio if both servers were CPU-bound)`);
  }
}

if (process.argv[2] === 'serve') {
  serve(process.argv[3] as ServerKind, process.argv[4] as Scenario);
} else {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
