/**
 * POST /stop: how fast the motors halt, and whether any step follows the
 * acknowledgement. A real HTTP server on a free port of 127.0.0.1 serves the
 * app from buildApp() on a simulated positioner driven by a WallClock,
 * in this process (the benchmark must see the simulated motors). Each trial
 * starts a long coordinated move (toward theta 180, phi 360), waits a random
 * 100-500 ms (seeded, SEED), then POSTs /stop, and measures from the moment
 * the request reaches the server (the http server's 'request' event, hooked
 * before express):
 *   - dispatch: until positioner.stop() is called by the route handler;
 *   - halted:   until positioner.stop() returns (no step can follow that);
 *   - acked:    until the response has been handed to the socket ('finish');
 * and counts the steps the simulated motors receive in the 300 ms after the
 * acknowledgement (aim: 0).
 *
 * Baseline, in the same run and on the same server under the same motion: the
 * time from request arrival to the handler of a trivial no-op POST route,
 * mounted in front of the real app (the bare cost of express dispatch), sent
 * during each trial's move just before the stop.
 *
 * The first WARMUP_TRIALS trials (JIT warm-up) are run but not counted.
 *
 * Run: npm run bench:stop   (node dist/bench/stop-latency.js after npm run build)
 * Env: TRIALS (50), SEED (1)
 */
import express from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildApp } from '../api/app';
import { createSimulatedPositioner, defaultSimSettings } from '../cli/assemble';
import { defaultConfig } from '../firmware/config';
import { WallClock } from '../sim/wall-clock';
import { fmtInt, machineLine, ms, now, percentile, random } from './bench-helpers';

const TRIALS = Number(process.env.TRIALS ?? 50);
const SEED = Number(process.env.SEED ?? 1);
const WARMUP_TRIALS = 3;
const AFTER_ACK_MS = 300;


async function main(): Promise<void> {
  console.log(`machine: ${machineLine()}`);
  const { positioner, sim } = createSimulatedPositioner(new WallClock(), defaultConfig(), defaultSimSettings());
  const steps = (): number => sim.theta.stepsReceived + sim.phi.stepsReceived;

  // Times of the request in flight (one at a time).
  let arrivedAt = 0n;
  let handlerAt = 0n;
  let stopCalledAt = 0n;
  let stopReturnedAt = 0n;
  let stepsAtHalt = 0;
  const originalStop = positioner.stop.bind(positioner);
  positioner.stop = () => {
    stopCalledAt = now();
    const result = originalStop();
    stopReturnedAt = now();
    stepsAtHalt = steps();
    return result;
  };

  const outer = express();
  outer.post('/bench/noop', (_req, res) => {
    handlerAt = now();
    res.json({ ok: true });
  });
  outer.use(buildApp({ positioner }));

  const server = http.createServer();
  // Registered before the app, so it runs first: the moment the request arrives.
  server.on('request', () => {
    arrivedAt = now();
  });
  server.on('request', outer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** POSTs with no body; resolves with the time the server's response finished and the motors' step count then. */
  const post = async (path: string): Promise<{ status: number; body: unknown; finishedAt: bigint; stepsAtFinish: number }> => {
    let finishedAt = 0n;
    let stepsAtFinish = 0;
    const onRequest = (_req: http.IncomingMessage, res: http.ServerResponse): void => {
      res.once('finish', () => {
        finishedAt = now();
        stepsAtFinish = steps();
      });
    };
    server.on('request', onRequest);
    try {
      const r = await fetch(base + path, { method: 'POST' });
      return { status: r.status, body: await r.json(), finishedAt, stepsAtFinish };
    } finally {
      server.off('request', onRequest);
    }
  };

  const rand = random(SEED);
  const dispatchMs: number[] = [];
  const haltMs: number[] = [];
  const totalMs: number[] = [];
  const ackMs: number[] = [];
  const noopMs: number[] = [];
  let stepsAfterAck = 0;
  let stepsAfterHalt = 0;
  let trialsWithStepsAfterAck = 0;
  let stepsBeforeStop = 0;

  for (let trial = -WARMUP_TRIALS; trial < TRIALS; trial++) {
    // Each trial stops a few degrees on, far short of the end: the move is always still running at the stop.
    positioner.moveTo(180, 360);
    const startSteps = steps();
    const waitMs = 100 + 400 * rand();
    await sleep(waitMs / 2);

    const noop = await post('/bench/noop');
    if (noop.status !== 200) throw new Error(`no-op route answered ${noop.status}`);
    const noopDispatchMs = ms(arrivedAt, handlerAt);

    await sleep(waitMs / 2);
    if (positioner.status().state !== 'moving') throw new Error(`trial ${trial}: the move ended before the stop; use a longer move`);
    stopCalledAt = 0n;
    const stop = await post('/stop');
    if (stop.status !== 200 || (stop.body as { status?: string }).status !== 'stopped') throw new Error(`POST /stop answered ${stop.status} ${JSON.stringify(stop.body)}`);
    if (stopCalledAt === 0n) throw new Error('POST /stop did not call positioner.stop()');
    await sleep(AFTER_ACK_MS);
    const late = steps() - stop.stepsAtFinish;
    if (trial < 0) continue;

    noopMs.push(noopDispatchMs);
    dispatchMs.push(ms(arrivedAt, stopCalledAt));
    haltMs.push(ms(stopCalledAt, stopReturnedAt));
    totalMs.push(ms(arrivedAt, stopReturnedAt));
    ackMs.push(ms(arrivedAt, stop.finishedAt));
    stepsBeforeStop += stepsAtHalt - startSteps;
    stepsAfterAck += late;
    stepsAfterHalt += steps() - stepsAtHalt;
    if (late > 0) trialsWithStepsAfterAck++;
  }
  server.closeAllConnections();
  server.close();

  const row = (name: string, values: number[]): string =>
    `  ${name.padEnd(44)} min ${values.length ? Math.min(...values).toFixed(3) : '-'}  median ${percentile(values, 50).toFixed(3)}  p99 ${percentile(values, 99).toFixed(3)}  max ${values.length ? Math.max(...values).toFixed(3) : '-'} ms`;
  const median = (v: number[]): number => percentile(v, 50);
  console.log(`${TRIALS} trials (after ${WARMUP_TRIALS} uncounted): a coordinated move toward (180, 360) at the default 10 deg/s, 20 deg/s^2; POST /stop after a random 100-500 ms (seed ${SEED})`);
  console.log('times from the request arriving at the server (http "request" event):');
  console.log(row('baseline: no-op POST route reaches handler', noopMs));
  console.log(row('POST /stop reaches positioner.stop()', dispatchMs));
  console.log(row('positioner.stop() runs (halt itself)', haltMs));
  console.log(row('POST /stop: motors halted (stop() returned)', totalMs));
  console.log(row('POST /stop: response finished (acknowledged)', ackMs));
  console.log(`  median stop-to-halted / no-op dispatch: ${(median(totalMs) / median(noopMs)).toFixed(2)}x`);
  console.log(`steps issued before the stops (all trials): ${fmtInt(stepsBeforeStop)} (the motors were moving)`);
  console.log(`steps received by the simulated motors in the ${AFTER_ACK_MS} ms after each acknowledgement: ${stepsAfterAck} in total, in ${trialsWithStepsAfterAck} of ${TRIALS} trials (aim: 0); after stop() returned: ${stepsAfterHalt}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
