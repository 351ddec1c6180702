/**
 * The trigger outputs of the simulated boards, fed bytes directly on a
 * virtual clock, as their firmware's source does it: grbl's M8/M9 wait for
 * the motion queued before them (coolant_sync()), its dwell runs in 50 ms
 * steps (delay_sec()), a reset turns the coolant off (mc_reset()); Firmata's
 * SET_DIGITAL_PIN_VALUE writes only a pin in OUTPUT mode
 * (DigitalOutputFirmata handleSetPinValueCallback()).
 */
import t from 'tap';
import { createSimFirmataBoard, createSimGrblBoard, defaultSimSettings } from '../../cli/assemble';
import { defaultConfig } from '../../firmware/config';
import { firmataCommand as cmd, PIN_MODE } from '../../hal/firmata-protocol';
import { VirtualClock } from '../../sim/virtual-clock';

function grbl() {
  const clock = new VirtualClock();
  let out = '';
  const machine = createSimGrblBoard(clock, defaultConfig(), defaultSimSettings(), (text) => (out += text));
  machine.board.powerUp();
  const send = (text: string) => machine.receive(Buffer.from(text, 'latin1'));
  const take = () => {
    const lines = out.split('\r\n').filter((l) => l !== '');
    out = '';
    return lines;
  };
  send('$X\n');
  take();
  return { clock, machine, send, take };
}

t.test('grbl: M8 after a move switches the coolant output only once the move has ended; its ok comes then', async (t) => {
  const b = grbl();
  b.send('G53 G1 X2.000 F600\nM8\n');
  t.strictSame(b.take(), ['ok'], 'the move is queued; M8 waits for it');
  t.equal(b.machine.trigger.high, false, 'not on while the axis moves');
  b.clock.runUntilIdle();
  t.strictSame(b.take(), ['ok'], 'M8 answered once the motion is done');
  t.equal(b.machine.trigger.high, true);
  const [edge] = b.machine.trigger.edges;
  t.equal(b.machine.sim.theta.truePositionSteps - 37.5 * 320, 2 * 320, 'the axis had arrived');
  t.ok(edge.atUs >= 200_000, `switched on at ${edge.atUs} us, after the 0.2 s move`);
  // The report's accessory field shows F with the overrides (report.c); ask until it comes.
  let report = '';
  for (let i = 0; i < 12 && !report.includes('|Ov:'); i++) {
    b.send('?');
    report = b.take()[0];
  }
  t.match(report, /\|Ov:100,100,100\|A:F>$/, 'flood coolant in the status report');
  b.send('M8\n');
  t.strictSame(b.take(), ['ok'], 'M8 again changes nothing and answers at once');
  b.send('M9\n');
  b.clock.runUntilIdle();
  t.strictSame(b.take(), ['ok']);
  t.equal(b.machine.trigger.high, false, 'M9 switches it off');
});

t.test('grbl: a dwell lasts whole 50 ms steps, so M8 G4 P0.01 M9 is a 50 ms pulse', async (t) => {
  const b = grbl();
  b.send('M8\nG4P0.010\nM9\n');
  b.clock.runUntilIdle();
  t.strictSame(b.take(), ['ok', 'ok', 'ok']);
  t.same(b.machine.trigger.pulses().map((p) => p.endUs - p.startUs), [50_000]);
  b.send('M8\nG4P0.120\nM9\n');
  b.clock.runUntilIdle();
  t.same(b.machine.trigger.pulses().map((p) => p.endUs - p.startUs), [50_000, 150_000], '0.12 s rounds up to three steps');
});

t.test('grbl: a reset turns the coolant output off', async (t) => {
  const b = grbl();
  b.send('M8\n');
  b.clock.runUntilIdle();
  t.equal(b.machine.trigger.high, true);
  b.machine.receive(Buffer.from([0x18]));
  t.equal(b.machine.trigger.high, false, 'mc_reset(): coolant_stop()');
});

t.test('Firmata: SET_DIGITAL_PIN_VALUE drives the trigger pin once it is an OUTPUT; SET_PIN_MODE OUTPUT starts it low', async (t) => {
  const clock = new VirtualClock();
  const machine = createSimFirmataBoard(clock, defaultConfig(), defaultSimSettings(), () => undefined);
  machine.board.powerUp();
  clock.advanceBy(2e6);
  const send = (bytes: number[]) => {
    machine.receive(Buffer.from(bytes));
    clock.advanceBy(10_000);
  };
  send(cmd.setPinMode(17, PIN_MODE.PULLUP));
  send(cmd.setDigitalPinValue(17, true));
  t.equal(machine.trigger.high, false, 'a pin that is not an OUTPUT is not written');
  send(cmd.setPinMode(17, PIN_MODE.OUTPUT));
  send(cmd.setDigitalPinValue(17, true));
  t.equal(machine.trigger.high, true);
  t.equal(machine.board.pinLevel(17), true);
  send(cmd.setDigitalPinValue(17, false));
  t.equal(machine.trigger.high, false);
  t.equal(machine.trigger.pulses().length, 1);
});
