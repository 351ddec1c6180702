/**
 * Golden test: a fixed command script runs through the firmware and the
 * simulated machine on the virtual clock, and the recorded step trace (every
 * step the motors received: time in us, axis, direction, moved or lost) with
 * a status line after each command must equal test/fixtures/golden-trace.txt.
 *
 * Any change to planning, step timing, homing or the state machine shows up
 * here as a changed line. If the change is intended, regenerate the file with
 *
 *     UPDATE_GOLDEN=1 npx tap test/firmware/golden.test.ts
 *
 * and review `git diff test/fixtures/golden-trace.txt` before committing it.
 *
 * A coarse machine keeps the file small: microstepping 1 gives theta 20 and
 * phi 50 steps/deg; the motors are fast enough never to stall.
 */
import path from 'node:path';
import t from 'tap';
import { matchGoldenFile, StepTraceReader } from '../helpers/golden-trace';
import { SEC, simOnVirtualClock } from '../helpers/sim';

const GOLDEN_FILE = path.resolve(__dirname, '..', 'fixtures', 'golden-trace.txt');

function buildRig() {
  return simOnVirtualClock((config, sim) => {
    config.microstepping = 1;
    sim.axes.theta.powerOnDeg = 3;
    sim.axes.phi.powerOnDeg = 4;
    sim.axes.theta.maxFullStepRateHz = 10_000;
    sim.axes.phi.maxFullStepRateHz = 10_000;
  });
}

type Rig = ReturnType<typeof buildRig>;

function statusLine(r: Rig): string {
  const s = r.positioner.status();
  const axis = (name: 'theta' | 'phi') =>
    `${name}=${s.axes[name].positionDeg}deg/${s.axes[name].positionSteps}steps true=${r.sim[name].truePositionSteps} homed=${s.axes[name].homed} homingError=${s.axes[name].homingErrorSteps}`;
  return `= t=${r.clock.nowUs()}us state=${s.state} moving=${s.moving} fault=${s.fault?.code ?? 'none'} ${axis('theta')} ${axis('phi')}`;
}

/** Runs the script and returns the trace text. */
function runScript(): string {
  const r = buildRig();
  const reader = new StepTraceReader([
    { name: 'theta', sim: r.sim.theta },
    { name: 'phi', sim: r.sim.phi },
  ]);
  const lines: string[] = [
    '# golden trace: see test/firmware/golden.test.ts',
    `# machine: theta ${r.positioner.settings().stepsPerDeg.theta} steps/deg, phi ${r.positioner.settings().stepsPerDeg.phi} steps/deg; power-on theta 3 deg, phi 4 deg`,
    '# step lines: <time us> <axis> <direction> <moved|lost>',
    statusLine(r),
  ];
  const command = (label: string, run: () => unknown, settle: () => void) => {
    lines.push(`> ${label} -> ${JSON.stringify(run())}`);
    settle();
    lines.push(...reader.drain());
    lines.push(statusLine(r));
  };
  const toIdle = () => r.clock.runUntilIdle();

  command('home both', () => r.positioner.home('both'), toIdle);
  command('move theta 5 phi 8', () => r.positioner.moveTo(5, 8), toIdle);
  command('move-rel theta +2 phi -3', () => r.positioner.moveBy(2, -3), toIdle);
  command('move theta 0 phi 20', () => r.positioner.moveTo(0, 20), () => r.clock.advanceBy(0.8 * SEC));
  command('stop', () => r.positioner.stop(), () => r.clock.advanceBy(10 * SEC));
  command('config speed 20 accel 50', () => r.positioner.updateSettings({ speedDegS: 20, accelDegS2: 50 }), toIdle);
  command('move theta 1 phi 2', () => r.positioner.moveTo(1, 2), toIdle);
  return lines.join('\n') + '\n';
}

t.test('the command script produces the checked-in step trace', async (t) => {
  const trace = runScript();
  t.equal(runScript(), trace, 'the simulation is deterministic');
  // Checks that hold whatever the file says, so a regenerated file cannot hide a broken trace.
  const stepTimes = trace.split('\n').filter((l) => /^\d/.test(l)).map((l) => Number(l.split(' ')[0]));
  t.ok(stepTimes.length > 1000, `${stepTimes.length} steps`);
  t.ok(stepTimes.every((tUs, i) => i === 0 || tUs >= stepTimes[i - 1]), 'steps are in time order');
  t.notMatch(trace, / lost$/m, 'no step is lost on this machine');
  matchGoldenFile(t, GOLDEN_FILE, trace);
});
