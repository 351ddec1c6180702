/**
 * Live status fan-out: N WebSocket clients receive status while a move runs.
 *
 * The server (createApiServer with a positioner on the wall clock, as
 * `positioner serve` builds it) runs in a child process of its own, so its
 * CPU time (process.cpuUsage, reported over IPC) is the server's alone; the
 * clients run here. Each scenario starts a 10.5 s move (phi 0 -> 100 deg at
 * 10 deg/s) and measures for 8 s in its middle:
 *
 * - server CPU, as % of one core, over the window;
 * - messages received per client per second;
 * - lag: arrival time here minus the message's sent_at_ms (same machine, same
 *   clock): what the server's send loop, the kernel and this process's event
 *   loop (shared by all N clients) add up to;
 * - messages the server skipped for slow clients.
 *
 * The baseline, in the same run: the same move with no client connected
 * (the cost of the simulation and the server alone).
 *
 *   npm run bench:ws     (node dist/bench/ws-fanout.js [clients=100])
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { createApiServer } from '../api/server';
import { createSimulatedPositioner } from '../cli/assemble';
import { defaultConfig } from '../firmware/config';
import { WallClock } from '../sim/wall-clock';
import { fmtMs, machineLine, percentile } from './bench-helpers';

const WINDOW_MS = 8000;

type Reply = { port?: number; cpuUs?: number; counters?: { sent: number; skipped: number }; moved?: boolean };

// ---- the server, in the child process -------------------------------------
async function serverMain(intervalMs: number): Promise<void> {
  const { positioner } = createSimulatedPositioner(new WallClock(1), defaultConfig());
  const api = createApiServer({ positioner }, { liveStatus: { intervalMs } });
  await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', () => resolve()));
  const send = (m: Reply) => process.send?.(m);
  send({ port: (api.server.address() as AddressInfo).port });
  process.on('message', (m: { cmd: string }) => {
    if (m.cmd === 'move') {
      positioner.moveTo(0, 100);
      send({ moved: true });
    } else if (m.cmd === 'cpu') {
      const u = process.cpuUsage();
      send({ cpuUs: u.user + u.system, counters: { ...api.live.counters } });
    } else if (m.cmd === 'exit') {
      positioner.stop();
      void api.close().then(() => process.exit(0));
    }
  });
}

// ---- the bench, in the parent ---------------------------------------------
function ask(child: ChildProcess, cmd: string, key: keyof Reply): Promise<Reply> {
  return new Promise((resolve) => {
    const on = (m: Reply) => {
      if (m[key] === undefined) return;
      child.off('message', on);
      resolve(m);
    };
    child.on('message', on);
    child.send({ cmd });
  });
}

interface Result {
  clients: number;
  intervalMs: number;
  cpuPct: number;
  perClientHz: number;
  lags: number[];
  skipped: number;
}

async function scenario(clients: number, intervalMs: number): Promise<Result> {
  const child = fork(__filename, ['--server', String(intervalMs)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise<Reply>((resolve) => child.once('message', (m: Reply) => resolve(m)));
  let counting = false;
  let received = 0;
  const lags: number[] = [];
  const sockets = await Promise.all(
    Array.from(
      { length: clients },
      () =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
          ws.on('message', (data) => {
            if (!counting) return;
            const m = JSON.parse(String(data)) as { type: string; sent_at_ms?: number; moving?: boolean };
            if (m.type !== 'status' || !m.moving) return;
            received += 1;
            lags.push(Date.now() - (m.sent_at_ms ?? NaN));
          });
          ws.once('open', () => resolve(ws));
          ws.once('error', reject);
        }),
    ),
  );
  await ask(child, 'move', 'moved');
  await new Promise((r) => setTimeout(r, 1000)); // past the acceleration ramp
  const before = await ask(child, 'cpu', 'cpuUs');
  counting = true;
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, WINDOW_MS));
  counting = false;
  const after = await ask(child, 'cpu', 'cpuUs');
  const elapsedMs = performance.now() - t0;
  for (const ws of sockets) ws.terminate();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send({ cmd: 'exit' });
  await exited;
  return {
    clients,
    intervalMs,
    cpuPct: ((after.cpuUs! - before.cpuUs!) / 1000 / elapsedMs) * 100,
    perClientHz: clients ? received / clients / (elapsedMs / 1000) : 0,
    lags,
    skipped: after.counters!.skipped - before.counters!.skipped,
  };
}

const signed = (v: number) => `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(1)}`;

function row(r: Result, baseline: Result): string {
  // Date.now() has 1 ms resolution: a p50 of 0-2 ms means "within a couple of milliseconds".
  const lag = r.lags.length ? `${fmtMs(percentile(r.lags, 50), 1)} / ${fmtMs(percentile(r.lags, 99), 1)} / ${fmtMs(Math.max(...r.lags), 1)}` : 'n/a';
  return `| ${r.clients} | ${1000 / r.intervalMs} Hz | ${r.cpuPct.toFixed(1)} % | ${signed(r.cpuPct - baseline.cpuPct)} % | ${r.clients ? r.perClientHz.toFixed(1) : 'n/a'} | ${lag} | ${r.skipped} |`;
}

async function main(): Promise<void> {
  const clients = Number(process.argv[2] ?? 100);
  console.log(`# live status fan-out: ${clients} WebSocket clients during a move (${WINDOW_MS / 1000} s window)`);
  console.log(`# ${machineLine()}`);
  const baseline = await scenario(0, 50);
  const runs = [await scenario(clients, 100), await scenario(clients, 50), await scenario(1, 50)];
  console.log('| clients | feed rate | server CPU (of one core) | over no clients | received per client | lag p50 / p99 / max | skipped |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  console.log(row(baseline, baseline));
  for (const r of runs) console.log(row(r, baseline));
  console.log(`# load average after: ${machineLine().split('load average (1 min) ')[1]}`);
}

if (process.argv[2] === '--server') void serverMain(Number(process.argv[3]));
else void main();
