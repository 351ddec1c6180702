/**
 * Simulation speed: 100 full-range coordinated moves (theta 0<->180 and
 * phi 0<->360 together) at the default resolution (320 and 800 microsteps/deg),
 * run on the virtual clock. Prints steps per second and simulated time over
 * wall time, against a baseline measured in the same run: the bare cost of
 * computing the same step times with the planner alone (no executor, no clock,
 * no simulated motor), which bounds what the simulation could reach.
 *
 * Run: npm run bench:sim   (node dist/bench/sim-speed.js after npm run build)
 */
import { createSimulatedPositioner, defaultSimSettings } from '../cli/assemble';
import { defaultConfig } from '../firmware/config';
import { planMove } from '../firmware/planner';
import { VirtualClock } from '../sim/virtual-clock';

const MOVES = Number(process.env.MOVES ?? 100);

function runSimulation(): { steps: number; simSec: number; wallSec: number; lost: number } {
  const clock = new VirtualClock();
  const config = defaultConfig();
  const { positioner, sim } = createSimulatedPositioner(clock, config, defaultSimSettings());
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < MOVES; i++) {
    const far = i % 2 === 0;
    positioner.moveTo(far ? 180 : 0, far ? 360 : 0);
    clock.runUntilIdle();
  }
  const wallSec = Number(process.hrtime.bigint() - t0) / 1e9;
  return {
    steps: sim.theta.stepsReceived + sim.phi.stepsReceived,
    simSec: clock.nowUs() / 1e6,
    wallSec,
    lost: sim.theta.lostSteps + sim.phi.lostSteps,
  };
}

function runPlannerOnly(): { steps: number; wallSec: number; checksum: number } {
  const t0 = process.hrtime.bigint();
  let steps = 0;
  let checksum = 0;
  for (let i = 0; i < MOVES; i++) {
    const far = i % 2 === 0;
    const plan = planMove(
      [
        { startSteps: far ? 0 : 57600, targetSteps: far ? 57600 : 0, stepsPerDeg: 320 },
        { startSteps: far ? 0 : 288000, targetSteps: far ? 288000 : 0, stepsPerDeg: 800 },
      ],
      10,
      20,
    );
    for (let a = 0; a < 2; a++) {
      const n = plan.axes[a].steps;
      for (let k = 1; k <= n; k++) checksum += Math.round(plan.stepTimeSec(a, k) * 1e6) & 1;
      steps += n;
    }
  }
  return { steps, wallSec: Number(process.hrtime.bigint() - t0) / 1e9, checksum };
}

const base = runPlannerOnly();
const sim = runSimulation();
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
console.log(`moves: ${MOVES} full-range coordinated moves (theta 180 deg + phi 360 deg), 320/800 microsteps per deg`);
console.log(`baseline (planner step times only): ${fmt(base.steps / base.wallSec)} steps/s  (${base.wallSec.toFixed(2)} s wall)`);
console.log(`simulation (executor + virtual clock + simulated motors): ${fmt(sim.steps / sim.wallSec)} steps/s  (${sim.wallSec.toFixed(2)} s wall, ${fmt(sim.steps)} steps, ${sim.lost} lost)`);
console.log(`simulated time: ${sim.simSec.toFixed(1)} s; simulated/wall: ${fmt(sim.simSec / sim.wallSec)}x real time (aim >= 1000x)`);
console.log(`simulation / baseline step rate: ${(sim.steps / sim.wallSec / (base.steps / base.wallSec)).toFixed(2)}`);
