/**
 * Stop latency on the real firmware: the Firmata driver (in this process, on
 * the wall clock) against ConfigurableFirmata 3.3.0 on a simulated Uno
 * (../shared/firmata-real, 115200 baud). Each trial starts a long
 * two-axis move, waits a random 300-1500 ms (seeded), calls
 * positioner.stop() (what POST /stop calls) and reads the bridge's
 * STOP-PROBE for that stop: the step pulses that followed the stop command on
 * each axis, and when the last one came. Reported: the time from stop() to
 * the last pulse (the bridge's log stamps are on the same host clock), and
 * the pulses after the command reached the board.
 *
 * Run: npx tsc -p . && node dist/bench/firmata-real-stop.js   Env: TRIALS (10), SEED (1)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createFirmataPositioner } from '../cli/assemble';
import { defaultConfig } from '../firmware/config';
import { firmataRealDir, firmataRealPresent, startRealBoard } from '../sim/firmata-real-bridge';
import { WallClock } from '../sim/wall-clock';
import { machineLine, percentile, random } from './bench-helpers';

const TRIALS = Number(process.env.TRIALS ?? 10);
const SEED = Number(process.env.SEED ?? 1);

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(20);
  }
}

async function main(): Promise<void> {
  if (!firmataRealPresent()) {
    console.log(`no real-firmware peer at ${firmataRealDir()}: nothing to measure`);
    return;
  }
  const board = await startRealBoard({ firmware: 'firmata-pos115.elf' });
  const { positioner, controller } = createFirmataPositioner(new WallClock(), defaultConfig(), { path: board.tty, baudRate: 115200 });
  try {
    controller.start();
    await until(() => controller.connectionPhase() === 'ready', 10_000);
    const rand = random(SEED);
    const lastMs: number[] = [];
    const pulses: number[] = [];
    for (let i = 0; i < TRIALS; i++) {
      if (i % 2 === 0) positioner.moveTo(130, 300);
      else positioner.moveTo(5, 5);
      await sleep(300 + rand() * 1200);
      const t0 = Date.now() / 1000;
      positioner.stop();
      await until(() => board.stopProbes().some((p) => p.commandWallS > t0), 5000);
      const probe = board.stopProbes().at(-1)!;
      const ms = Math.max(...(['theta', 'phi'] as const).map((a) => (probe.commandWallS - t0) * 1000 + probe.axes[a].lastPulseMs));
      lastMs.push(ms);
      pulses.push(probe.axes.theta.pulses + probe.axes.phi.pulses);
      console.log(`trial ${i + 1}: last pulse ${ms.toFixed(1)} ms after stop(), ${probe.axes.theta.pulses} + ${probe.axes.phi.pulses} pulses after the last STOP reached the board`);
    }
    console.log(machineLine());
    console.log(`| trials | stop() to last pulse: median | p95 | max | pulses after the stop command (max, both axes) |`);
    console.log(`| ${TRIALS} | ${percentile(lastMs, 50).toFixed(1)} ms | ${percentile(lastMs, 95).toFixed(1)} ms | ${Math.max(...lastMs).toFixed(1)} ms | ${Math.max(...pulses)} |`);
  } finally {
    positioner.stop();
    await controller.close();
    board.kill();
  }
}

void main();
