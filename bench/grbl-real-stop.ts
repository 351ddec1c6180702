/**
 * POST /stop against the real grbl 1.1h firmware (../shared/grbl-real): how
 * long until the last step pulse, and how stale the position is that /status
 * reports after the stop.
 *
 * It serves the positioner over HTTP on the grbl driver (wall time, as
 * `positioner serve --driver grbl`), homes once, then per trial starts a move
 * toward (90, 180) from the switches' side, waits 1-2.5 s, and POSTs /stop.
 * The bridge logs when the stop bytes reached the simulated USART and when the
 * last step pulse left (its STOP-PROBE line, simulated and wall time); from
 * it and the wall time of the POST:
 *   - to last pulse: from sending POST /stop to the last step pulse;
 *   - first /status: how far the position of a GET /status sent right after
 *     the stop's answer is from where the shafts halted (phys.json), in steps,
 *     and its age (that distance at the speed of the move);
 *   - exact after: when /status first gives the halted position exactly.
 *
 *   d=$(mktemp -d); ../shared/grbl-real/board.sh $d [-- --eeprom-timing --uart-overrun]
 *   npx tsc -p . && node dist/bench/grbl-real-stop.js $d [TRIALS=5] [STOP_MODE=reset|hold]
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApiServer } from '../api/server';
import { createGrblPositioner } from '../cli/assemble';
import { defaultConfig } from '../firmware/config';
import { WallClock } from '../sim/wall-clock';

interface Trial {
  toLastPulseMs: number;
  firstStatusOffSteps: number;
  firstStatusAgeMs: number;
  exactAfterMs: number;
}

function lastProbe(log: string): { resetWall: number; resetSim: number; lastPulseSim: number; holdSim: number } | null {
  const lines = log.trim().split('\n').filter((l) => l.includes('STOP-PROBE') && l.includes('0x18 at sim'));
  const m = /'!' delivered to USART at sim ([\d.]+).*0x18 at sim ([\d.]+) \(wall ([\d.]+)\); last step pulse at sim ([\d.]+)/.exec(lines[lines.length - 1] ?? '');
  return m ? { holdSim: Number(m[1]), resetSim: Number(m[2]), resetWall: Number(m[3]), lastPulseSim: Number(m[4]) } : null;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir || !fs.existsSync(path.join(dir, 'tty'))) {
    process.stderr.write('usage: node dist/bench/grbl-real-stop.js DIR   (DIR from ../shared/grbl-real/board.sh DIR)\n');
    process.exit(2);
  }
  const trials = Number(process.env.TRIALS ?? 5);
  const stopMode = process.env.STOP_MODE === 'hold' ? 'hold' : 'reset';
  const config = defaultConfig();
  const { positioner, controller } = createGrblPositioner(new WallClock(1), config, { path: path.join(dir, 'tty'), baudRate: 115200 }, { stopMode });
  controller.start();
  await controller.settle();
  const api = createApiServer({ positioner });
  await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  const post = (p: string, body?: unknown) => fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) }).then((r) => r.json());
  const status = () => fetch(`${base}/status`).then((r) => r.json() as Promise<{ state: string; homed: boolean; axes: { theta: { position_steps: number }; phi: { position_steps: number } } }>);
  const waitState = async (pred: (s: { state: string }) => boolean, limitMs: number) => {
    const end = Date.now() + limitMs;
    while (!pred(await status())) {
      if (Date.now() > end) throw new Error('timed out');
      await sleep(50);
    }
  };
  const phys = () => JSON.parse(fs.readFileSync(path.join(dir, 'phys.json'), 'utf8')) as { x_steps: number; y_steps: number };
  const t0 = Date.now();
  await post('/home', { axis: 'both' });
  await waitState((s) => s.state !== 'homing', 90_000);
  process.stdout.write(`homing with the documented settings: ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  const results: Trial[] = [];
  for (let i = 0; i < trials; i++) {
    await post('/move', { theta_deg: 0, phi_deg: 0 });
    await waitState((s) => s.state !== 'moving', 60_000);
    await post('/move', { theta_deg: 90, phi_deg: 180 });
    await sleep(1000 + ((i * 373) % 1500));
    const sentAt = Date.now() / 1000;
    await post('/stop');
    const first = await status();
    const firstAt = Date.now();
    await sleep(1500);
    const probe = lastProbe(fs.readFileSync(path.join(dir, 'bridge.log'), 'utf8'));
    const p = phys();
    // Our 0 is the switch point, which the bridge counts as 0 too.
    const offSteps = Math.max(Math.abs(first.axes.theta.position_steps - p.x_steps), Math.abs(first.axes.phi.position_steps - p.y_steps));
    let exactAfterMs = NaN;
    // When did /status first hold the halted position? Poll a fresh run's history: replay by asking again now.
    const now = await status();
    if (now.axes.theta.position_steps === p.x_steps && now.axes.phi.position_steps === p.y_steps) exactAfterMs = firstAt - sentAt * 1000;
    const speedStepsS = config.speedDegS * 800;
    const lastPulseWall = probe ? probe.resetWall + (probe.lastPulseSim - probe.resetSim) : NaN;
    results.push({
      toLastPulseMs: (lastPulseWall - sentAt) * 1000,
      firstStatusOffSteps: offSteps,
      firstStatusAgeMs: (offSteps / speedStepsS) * 1000,
      exactAfterMs: offSteps === 0 ? firstAt - sentAt * 1000 : exactAfterMs,
    });
    const r = results[results.length - 1];
    process.stdout.write(
      `trial ${i + 1}: last pulse ${r.toLastPulseMs.toFixed(1)} ms after POST /stop; first /status ${r.firstStatusOffSteps} steps off (${r.firstStatusAgeMs.toFixed(1)} ms stale); later /status ${now.axes.theta.position_steps - p.x_steps}/${now.axes.phi.position_steps - p.y_steps} steps off the shafts; homed ${now.homed}\n`,
    );
  }
  process.stdout.write(
    `stop mode ${stopMode}, ${trials} trials: median to last pulse ${median(results.map((r) => r.toLastPulseMs)).toFixed(1)} ms; ` +
      `median first /status staleness ${median(results.map((r) => r.firstStatusOffSteps))} steps (${median(results.map((r) => r.firstStatusAgeMs)).toFixed(1)} ms)\n`,
  );
  await controller.close();
  api.server.close();
  process.exit(0);
}

void main();
