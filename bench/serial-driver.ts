/**
 * The grbl and Firmata drivers over a real serial line (a socat pty pair):
 * how fast POST /stop halts the board, and how old the position in
 * GET /status can be while moving.
 *
 * One process holds everything, so one monotonic clock times both ends:
 * the HTTP server with the firmware and the driver on the pty's host end,
 * and the simulated board (grbl or ConfigurableFirmata, real time) on its
 * device end, which reports the instant it halts ('halt' event).
 *
 * Stop latency: each trial starts a long coordinated move (toward theta 180,
 * phi 360 at 10 deg/s), waits a random 100-500 ms (seeded, SEED), POSTs
 * /stop, and measures from the request's arrival at the server (the http
 * 'request' event, hooked before the app) to
 *   - written: the driver has written feed hold + reset to the line;
 *   - halted:  the board has stopped stepping (its 'halt' event);
 *   - acked:   the response has been handed to the socket.
 * Baseline, same run and same line: a status round trip (grbl `?`, Firmata
 * position reports; host -> board -> host), what the serial line itself costs.
 *
 * Status freshness: during a long move, GET /status every ~10 ms; for each
 * answer, the age of its position = (where the board really is when the
 * answer arrives - what the answer says) / the axis speed. Run for the
 * driver's default poll period (40 ms while moving) and for 10 ms.
 *
 * Run: npm run bench:serial   (node dist/bench/serial-driver.js after npm run build)
 * Env: TRIALS (30), SEED (1), FRESHNESS_S (3)
 */
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApiServer } from '../api/server';
import { createFirmataPositioner, createGrblPositioner, createSimFirmataBoard, createSimGrblBoard, defaultSimSettings } from '../cli/assemble';
import { defaultConfig } from '../firmware/config';
import { PtyPair } from '../sim/pty-pair';
import { attachBoard } from '../sim/serial-peer';
import { WallClock } from '../sim/wall-clock';
import { machineLine, ms, now, percentile, random } from './bench-helpers';

const TRIALS = Number(process.env.TRIALS ?? 30);
const SEED = Number(process.env.SEED ?? 1);
const FRESHNESS_S = Number(process.env.FRESHNESS_S ?? 3);
const WARMUP_TRIALS = 3;


type Kind = 'grbl' | 'firmata';

async function rig(kind: Kind, pollMovingMs: number) {
  const pty = await new PtyPair().open();
  const config = defaultConfig();
  const baudRate = kind === 'grbl' ? 115200 : 57600;
  const peer = await attachBoard(pty.devicePath, baudRate, (send) =>
    kind === 'grbl' ? createSimGrblBoard(new WallClock(), config, defaultSimSettings(), send) : createSimFirmataBoard(new WallClock(), config, defaultSimSettings(), send),
  );
  const board = peer.board.board as { powerUp(): void; powerOff?(): void; onEvent(l: (e: { type: string }) => void): unknown };
  board.powerUp();
  const serial = { path: pty.hostPath, baudRate };
  const { positioner, controller } = kind === 'grbl' ? createGrblPositioner(new WallClock(), config, serial, { pollMovingMs }) : createFirmataPositioner(new WallClock(), config, serial, { pollMovingMs });
  controller.start();
  await controller.settle();
  const api = createApiServer({ positioner });
  let arrivedAt = 0n;
  api.server.prependListener('request', () => {
    arrivedAt = now();
  });
  await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  return {
    pty,
    peer,
    board,
    positioner,
    controller,
    base,
    arrivedAt: () => arrivedAt,
    close: async () => {
      positioner.stop();
      await api.close();
      await controller.close();
      // The simulated Firmata board samples its inputs forever on the wall clock: power it off.
      board.powerOff?.();
      await peer.close();
      await pty.dispose();
    },
  };
}

const row = (name: string, values: number[]): string =>
  `  ${name.padEnd(46)} min ${Math.min(...values).toFixed(2)}  median ${percentile(values, 50).toFixed(2)}  p95 ${percentile(values, 95).toFixed(2)}  max ${Math.max(...values).toFixed(2)} ms`;

async function stopLatency(kind: Kind): Promise<void> {
  const r = await rig(kind, 40);
  const driver = r.controller;
  let haltedAt = 0n;
  r.board.onEvent((e) => {
    if (e.type === 'halt') haltedAt = now();
  });
  let writtenAt = 0n;
  const originalStop = driver.stop.bind(driver);
  driver.stop = () => {
    originalStop();
    writtenAt = now();
  };
  const rand = random(SEED);
  const written: number[] = [];
  const halted: number[] = [];
  const acked: number[] = [];
  const roundTrip: number[] = [];
  for (let trial = -WARMUP_TRIALS; trial < TRIALS; trial++) {
    r.positioner.moveTo(180, 360);
    await sleep(100 + 400 * rand());
    const rtStart = now();
    await driver.settle();
    const rt = ms(rtStart, now());
    if (r.positioner.status().state !== 'moving') throw new Error(`trial ${trial}: the move ended before the stop`);
    haltedAt = 0n;
    const res = await fetch(`${r.base}/stop`, { method: 'POST' });
    const ackedAt = now();
    await res.text();
    await driver.settle();
    if (haltedAt === 0n) throw new Error(`trial ${trial}: the board never halted`);
    // Back to the start for the next trial, so every stop interrupts a long move.
    r.positioner.moveTo(0, 0);
    while (r.positioner.status().state === 'moving') await sleep(20);
    if (trial < 0) continue;
    roundTrip.push(rt);
    written.push(ms(r.arrivedAt(), writtenAt));
    halted.push(ms(r.arrivedAt(), haltedAt));
    acked.push(ms(r.arrivedAt(), ackedAt));
  }
  await r.close();
  console.log(`stop latency, ${kind} over a pty: ${TRIALS} trials (after ${WARMUP_TRIALS} uncounted), a coordinated move toward (180, 360) at 10 deg/s; POST /stop after a random 100-500 ms (seed ${SEED})`);
  console.log(row('baseline: status round trip over the line', roundTrip));
  console.log(row(`POST /stop: ${kind === 'grbl' ? 'feed hold + reset' : 'STOP + ZERO per stepper'} written`, written));
  console.log(row('POST /stop: board halted (aim < 20 ms)', halted));
  console.log(row('POST /stop: response finished', acked));
  console.log(`  median halted / status round trip: ${(percentile(halted, 50) / percentile(roundTrip, 50)).toFixed(2)}x`);
}

async function freshness(kind: Kind, pollMovingMs: number): Promise<void> {
  const r = await rig(kind, pollMovingMs);
  const sim = r.peer.board.sim.phi;
  const startSteps = sim.truePositionSteps; // the firmware's 0 is where phi was when the driver connected
  r.positioner.moveTo(0, 360);
  const perDeg = 800;
  const ages: number[] = [];
  const until = Date.now() + FRESHNESS_S * 1000;
  await sleep(1500); // past the acceleration ramp: phi cruises at 10 deg/s
  while (Date.now() < until + 1500) {
    const res = await fetch(`${r.base}/status`);
    const body = (await res.json()) as { axes: { phi: { position_steps: number } } };
    const trueSteps = sim.truePositionSteps - startSteps;
    ages.push(((trueSteps - body.axes.phi.position_steps) / (10 * perDeg)) * 1000);
    await sleep(10);
  }
  await r.close();
  console.log(`status freshness, ${kind} over a pty, driver polls every ${pollMovingMs} ms while moving: ${ages.length} GET /status during a 10 deg/s cruise`);
  console.log(row(`age of the reported position (poll ${pollMovingMs} ms)`, ages));
}

async function main(): Promise<void> {
  console.log(`machine: ${machineLine()}`);
  for (const kind of ['grbl', 'firmata'] as const) {
    await stopLatency(kind);
    await freshness(kind, 40);
    await freshness(kind, 10);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
