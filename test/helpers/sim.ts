/**
 * Test helpers: a positioner on a virtual clock.
 *
 * `POSITIONER_TEST_DRIVER` chooses what is under the firmware, so one test
 * suite (test/api) runs unchanged against every backend:
 *   sim (default)  the step controller on simulated axes, in-process;
 *   grbl           the real grbl driver on one end of a socat pty pair, and
 *                  the simulated grbl board on the other;
 *   firmata        the real Firmata driver and the simulated
 *                  ConfigurableFirmata board, the same way.
 * Driver and board share one LineClock (test/helpers/line-clock.ts): virtual
 * time never passes while bytes are on the wire (the line is infinitely fast
 * compared with the machine). Over a serial line the answer to a command comes
 * later than the call returns; `driverRigs` holds, per positioner, a `settle()`
 * that waits until everything queued on the clock has run and the line is
 * quiet. test/helpers/http-server.ts calls it around every request, so tests
 * stay deterministic.
 */
import { createFirmataPositioner, createGrblPositioner, createSimFirmataBoard, createSimGrblBoard, createSimulatedPositioner, DEFAULT_BAUD, defaultSimSettings, type SimSettings } from '../../cli/assemble';
import { defaultConfig, type PositionerConfig } from '../../firmware/config';
import type { Positioner } from '../../firmware/positioner';
import { firmataLoopFor } from '../../sim/firmata-board';
import { VirtualClock } from '../../sim/virtual-clock';
import { createLine, LineClock } from './line-clock';

export interface DriverRig {
  /** Resolves once the line is up and the driver has finished its handshake. */
  ready: Promise<void>;
  settle(): Promise<void>;
  close(): Promise<void>;
}

export const driverRigs = new WeakMap<Positioner, DriverRig>();

export function testDriver(): 'sim' | 'grbl' | 'firmata' {
  const driver = process.env.POSITIONER_TEST_DRIVER ?? 'sim';
  if (driver !== 'sim' && driver !== 'grbl' && driver !== 'firmata') throw new Error(`POSITIONER_TEST_DRIVER must be sim, grbl or firmata, got '${driver}'`);
  return driver;
}

export function simOnVirtualClock(configure?: (c: PositionerConfig, s: SimSettings) => void) {
  const config = defaultConfig();
  const simSettings = defaultSimSettings();
  configure?.(config, simSettings);
  const driver = testDriver();
  if (driver !== 'sim') return driverOnLineClock(driver, config, simSettings);
  const clock = new VirtualClock();
  return { clock, config, ...createSimulatedPositioner(clock, config, simSettings) };
}

/**
 * The grbl or Firmata driver on one end of a real pty pair and the simulated
 * board on the other, both on one LineClock (test/helpers/line-clock.ts):
 * time stands still while bytes are on the line, so the driver's polls and
 * timeouts, the board's motion and the switch reports all follow one virtual
 * time line, whatever the load on the test machine. `runUntilIdle()` runs
 * until the positioner has no motion in progress (the driver's polls and the
 * board's sampling never let the timers run out).
 */
function driverOnLineClock(kind: 'grbl' | 'firmata', config: PositionerConfig, simSettings: SimSettings) {
  const clock = new LineClock();
  const baudRate = DEFAULT_BAUD[kind];
  const line = createLine(clock, baudRate);
  const serial = { path: line.hostPath, baudRate, trace: line.trace };
  const driverClock = clock.background();
  // The suite checks the API's timing (speeds, arrivals), so the Firmata board is one fast enough
  // not to be the limit; the Uno's ceiling is tested in test/hal/firmata-driver.test.ts.
  const { positioner, controller } =
    kind === 'grbl' ? createGrblPositioner(driverClock, config, serial) : createFirmataPositioner(driverClock, config, serial, { maxStepRateStepsS: FAST_FIRMATA_STEPS_S });
  let send: (data: string | Buffer) => void = () => undefined;
  const machine =
    kind === 'grbl'
      ? createSimGrblBoard(clock, config, simSettings, (text) => send(text))
      : createSimFirmataBoard(clock.uncounted(), config, simSettings, (data) => send(data), firmataLoopFor(FAST_FIRMATA_STEPS_S));
  clock.setIdleCondition(() => !positioner.status().moving && positioner.status().state !== 'homing');
  const ready = (async () => {
    await line.restore();
    const peer = await line.attachBoard(() => machine);
    send = (data) => peer.send(data);
    controller.start();
    // The board powers up once the host holds its end open (an Uno resets when the port opens).
    await line.hostWrote();
    machine.board.powerUp();
    await clock.runUntil(`the ${kind} driver connected`, () => controller.connectionPhase() === 'ready', 30 * SEC);
  })();
  ready.catch(() => undefined);
  driverRigs.set(positioner, {
    ready,
    // What the machine did by now, as the driver has read it: the line quiet, then one fresh position report.
    settle: async () => {
      await ready;
      await clock.whenSettled();
      await controller.settle();
      await clock.whenSettled();
    },
    close: async () => {
      await controller.close();
      await line.dispose();
    },
  });
  return { clock: clock as VirtualClock, config, positioner, controller, sim: machine.sim, board: machine.board, trigger: machine.trigger };
}

export const SEC = 1e6;

/** A board running ConfigurableFirmata ~55 times faster than an Uno (a 32-bit MCU): 200,000 steps/s for a lone axis. */
const FAST_FIRMATA_STEPS_S = 200_000;
