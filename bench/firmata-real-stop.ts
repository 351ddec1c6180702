/**
 * Stop latency on the real firmware: the Firmata driver (in this process, on
 * the wall clock) against ConfigurableFirmata 3.3.0 on a simulated Uno
 * (../shared/firmata-real, 115200 baud). Each trial starts a long
 * two-axis move, waits a random 300-1500 ms (seeded), calls
 * positioner.stop() (what POST /stop calls) and reads the bridge's
 * STOP-PROBE for that stop: the step pulses that followed the stop command on
 * each axis, and when the last one came. Reported: the time from stop() to
 * the last pulse (the bridge's log stamps are on the same host clock), split
 * into stop() to the write (the driver), the write to the board (the pty and
 * the bridge, which falls behind real time when the machine is loaded) and
 * the board to the last pulse; and the pulses after the command reached the board.
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
  /** Wall time (s) of the last write that carried an ACCELSTEPPER_STOP. */
  let stopWrittenS = 0;
  const trace = (direction: 'tx' | 'rx', data: Buffer) => {
    if (direction === 'tx' && data.includes(Buffer.from([0xf0, 0x62, 0x05]))) stopWrittenS = Date.now() / 1000;
  };
  const { positioner, controller } = createFirmataPositioner(new WallClock(), defaultConfig(), { path: board.tty, baudRate: 115200, trace });
  try {
    controller.start();
    await until(() => controller.connectionPhase() === 'ready', 10_000);
    const rand = random(SEED);
    const lastMs: number[] = [];
    const writeMs: number[] = [];
    const boardMs: number[] = [];
    const pulses: number[] = [];
    for (let i = 0; i < TRIALS; i++) {
      // Always a long way to go: toward the far end of both ranges from wherever the last trial stopped.
      const s = positioner.status();
      positioner.moveTo(s.thetaDeg < 90 ? 170 : 5, s.phiDeg < 180 ? 355 : 5);
      await sleep(300 + rand() * 1200);
      const t0 = Date.now() / 1000;
      positioner.stop();
      await until(() => board.stopProbes().some((p) => p.commandWallS > t0), 5000);
      const probe = board.stopProbes().at(-1)!;
      const after = (['theta', 'phi'] as const).map((a) => probe.axes[a].lastPulseMs);
      const ms = (probe.commandWallS - t0) * 1000 + Math.max(...after);
      lastMs.push(ms);
      writeMs.push((stopWrittenS - t0) * 1000);
      boardMs.push((probe.commandWallS - stopWrittenS) * 1000);
      pulses.push(probe.axes.theta.pulses + probe.axes.phi.pulses);
      console.log(
        `trial ${i + 1}: last pulse ${ms.toFixed(1)} ms after stop() (written after ${writeMs.at(-1)!.toFixed(1)} ms, on the board ${boardMs.at(-1)!.toFixed(1)} ms later, last pulse ${Math.max(...after).toFixed(1)} ms after that); ${probe.axes.theta.pulses} + ${probe.axes.phi.pulses} pulses after the last STOP`,
      );
    }
    const row = (v: number[]) => `${percentile(v, 50).toFixed(1)} / ${percentile(v, 95).toFixed(1)} / ${Math.max(...v).toFixed(1)} ms`;
    console.log(machineLine());
    console.log('| trials | stop() to last pulse | stop() to the write | write to the board (pty, bridge lag) | pulses after the last STOP (max, both axes) |');
    console.log('| --- | --- | --- | --- | --- |');
    console.log(`| ${TRIALS} | ${row(lastMs)} | ${row(writeMs)} | ${row(boardMs)} | ${Math.max(...pulses)} |`);
    console.log('(median / p95 / max)');
  } finally {
    positioner.stop();
    await controller.close();
    board.kill();
  }
}

void main();
