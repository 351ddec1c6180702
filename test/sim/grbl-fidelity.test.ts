/**
 * The simulated grbl board against the real grbl 1.1h firmware: the scripted
 * exchanges of sim/grbl-exchanges.ts (homing, G4 P0, a settings write, stop
 * mid-move, feed hold, stop during homing, a homing alarm) replayed on the
 * simulated board in virtual time, and its answers compared line by line
 * with what the real firmware answered (test/fixtures/grbl-real-exchanges.json,
 * recorded by bench/grbl-record-exchanges.ts on ../shared/grbl-real).
 * Normalised only where a number depends on the millisecond a byte arrived
 * (positions and feed while moving, positions after a stop mid-move): see
 * normalise() in sim/grbl-exchanges.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildSimAxes, defaultSimSettings, grblSettingsFor } from '../../cli/assemble';
import { defaultConfig } from '../../firmware/config';
import { SimGrblController } from '../../sim/grbl-controller';
import { GRBL_EXCHANGES, LineCollector, normalise, runExchange, type ExchangeIo, type Transcript } from '../../sim/grbl-exchanges';
import { VirtualClock } from '../../sim/virtual-clock';

const fixture = JSON.parse(fs.readFileSync(path.join(__dirname, '../fixtures/grbl-real-exchanges.json'), 'utf8')) as { transcripts: Transcript[] };

/** The simulated board as ../shared/grbl-real/board.sh leaves the real one: powered up with homing off, then configured. */
function simBoard() {
  const clock = new VirtualClock();
  const config = defaultConfig();
  const settings = defaultSimSettings();
  const axes = buildSimAxes(config, settings);
  const collector = new LineCollector(() => clock.nowUs() / 1000);
  const board = new SimGrblController({ clock, axes, settings: { ...grblSettingsFor(config), 22: 0 }, send: (text) => collector.push(text) });
  board.powerUp();
  board.settings.set(22, 1);
  collector.lines.length = 0;
  const io: ExchangeIo = {
    write: (bytes) => board.receive(bytes),
    wait: async (ms) => clock.advanceBy(ms * 1000),
    async waitUntil(pred, limitMs, what) {
      for (let ms = 0; !pred(); ms++) {
        if (ms > limitMs) throw new Error(`${what} not seen within ${limitMs} ms of virtual time; got ${JSON.stringify(collector.lines.slice(-5))}`);
        clock.advanceBy(1000);
      }
    },
    lines: () => collector.lines,
    times: () => collector.times,
    nowMs: () => clock.nowUs() / 1000,
  };
  return { clock, board, axes, io };
}

t.test('the simulated board answers the scripted exchanges as the real grbl 1.1h firmware does', async (t) => {
  const sim = simBoard();
  for (const exchange of GRBL_EXCHANGES) {
    const real = fixture.transcripts.find((x) => x.name === exchange.name);
    if (!real) {
      t.fail(`no recording of ${exchange.name} in the fixture`);
      continue;
    }
    const ours = await runExchange(exchange, sim.io);
    t.strictSame(normalise(ours, exchange), normalise(real, exchange), `${exchange.name}: ${exchange.about}`);
    t.comment(`${exchange.name} real ms ${JSON.stringify(real.atMs)} sim ms ${JSON.stringify(ours.atMs)}`);
  }
});

t.test('after homing the machine position is -max_travel + pull-off, and the axes rest $27 off their switches', async (t) => {
  const sim = simBoard();
  await runExchange(GRBL_EXCHANGES[0], sim.io);
  t.strictSame(sim.board.countedSteps(), [-190 * 320, -370 * 800, 0], 'back onto the switch points after the pull-back');
  t.equal(sim.axes.theta.truePositionSteps, 0, 'theta on its switch point');
  t.equal(sim.axes.phi.truePositionSteps, 0, 'phi on its switch point');
});
