/**
 * Against the real grbl 1.1h firmware on a simulated ATmega328P
 * (../shared/grbl-real, started fresh here with its board.sh), in real time:
 *   - the scripted exchanges of sim/grbl-exchanges.ts give the bytes recorded
 *     in test/fixtures/grbl-real-exchanges.json (the same comparison the
 *     simulated board passes in test/sim/grbl-fidelity.test.ts);
 *   - `positioner grbl-setup` reads the documented settings as set up;
 *   - the driver homes, moves and stops there.
 * Skipped, with the reason, where ../shared/grbl-real does not exist.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { openRealIo } from '../../bench/grbl-record-exchanges';
import { createGrblPositioner } from '../../cli/assemble';
import { grblSetup } from '../../cli/grbl-setup';
import { defaultConfig } from '../../firmware/config';
import { GRBL_EXCHANGES, normalise, runExchange, type Transcript } from '../../sim/grbl-exchanges';
import { WallClock } from '../../sim/wall-clock';

const shared = path.resolve(__dirname, '../../../shared/grbl-real');
const skip = fs.existsSync(path.join(shared, 'board.sh')) ? false : `the real firmware is not here (${shared} is absent)`;
const fixture = JSON.parse(fs.readFileSync(path.join(__dirname, '../fixtures/grbl-real-exchanges.json'), 'utf8')) as { transcripts: Transcript[] };

/** A fresh real board: power-on position, the documented settings (board.sh). */
function startBoard(t: Test, extra: string[] = []): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'grbl-real-'));
  execFileSync(path.join(shared, 'board.sh'), [dir, ...(extra.length ? ['--', ...extra] : [])], { cwd: path.resolve(__dirname, '../..'), stdio: 'ignore' });
  t.teardown(() => {
    try {
      process.kill(Number(fs.readFileSync(path.join(dir, 'bridge.pid'), 'utf8')));
    } catch {
      // already gone
    }
  });
  return dir;
}

t.test('the real firmware answers the scripted exchanges as recorded (and as the simulated board does)', { skip }, async (t) => {
  const dir = startBoard(t);
  const io = await openRealIo(path.join(dir, 'tty'));
  t.teardown(() => io.close());
  for (const exchange of GRBL_EXCHANGES) {
    const recorded = fixture.transcripts.find((x) => x.name === exchange.name)!;
    const now = await runExchange(exchange, io);
    t.strictSame(normalise(now, exchange), normalise(recorded, exchange), `${exchange.name}: ${exchange.about}`);
  }
});

t.test('grbl-setup and the driver on the real firmware (EEPROM timing and USART overrun on): settings, homing, move, stop', { skip }, async (t) => {
  const dir = startBoard(t, ['--eeprom-timing', '--uart-overrun']);
  const tty = path.join(dir, 'tty');
  const config = { ...defaultConfig(), maxSpeedDegS: 30 };
  const setup = await grblSetup({ path: tty, baudRate: 115200, config, write: false, clock: new WallClock(1) });
  t.strictSame(setup.settings.filter((r) => !r.ok), [], 'the documented settings are all there');
  t.equal(setup.options, 'VH');

  const { positioner, controller } = createGrblPositioner(new WallClock(1), config, { path: tty, baudRate: 115200 });
  t.teardown(() => controller.close());
  controller.start();
  await controller.settle();
  const until = async (what: string, pred: () => boolean, limitMs: number) => {
    const end = Date.now() + limitMs;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`${what} not within ${limitMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  positioner.home('both');
  await until('homing to end', () => positioner.status().state !== 'homing', 60_000);
  t.equal(positioner.status().state, 'idle', `homed (fault: ${JSON.stringify(positioner.status().fault)})`);
  positioner.updateSettings({ accelDegS2: 50 });
  positioner.moveTo(20, 40);
  await until('the move to end', () => positioner.status().state !== 'moving', 30_000);
  t.strictSame([positioner.status().thetaDeg, positioner.status().phiDeg], [20, 40]);
  const phys = JSON.parse(fs.readFileSync(path.join(dir, 'phys.json'), 'utf8')) as { x_steps: number; y_steps: number };
  t.strictSame([phys.x_steps, phys.y_steps], [20 * 320, 40 * 800], 'the shafts are there');
  positioner.moveTo(90, 180);
  await new Promise((r) => setTimeout(r, 1500));
  positioner.stop();
  await new Promise((r) => setTimeout(r, 1500));
  const halted = JSON.parse(fs.readFileSync(path.join(dir, 'phys.json'), 'utf8')) as { x_steps: number; y_steps: number };
  const s = positioner.status();
  t.equal(s.state, 'stopped');
  t.ok(Math.abs(s.axes.theta.positionSteps - halted.x_steps) <= 2 && Math.abs(s.axes.phi.positionSteps - halted.y_steps) <= 2, `the reported stop position is where the shafts halted: ${s.axes.theta.positionSteps}/${s.axes.phi.positionSteps} against ${halted.x_steps}/${halted.y_steps}`);
  const overruns = (fs.readFileSync(path.join(dir, 'bridge.log'), 'utf8').match(/UART OVERRUN/g) ?? []).length;
  t.equal(overruns, 0, 'no byte lost in the USART');
});
