/**
 * Test helpers: a positioner on a virtual clock.
 *
 * `POSITIONER_TEST_DRIVER` chooses what is under the firmware, so one test
 * suite (test/api) runs unchanged against every backend:
 *   sim (default)  the step controller on simulated axes, in-process;
 *   grbl           the real grbl driver on one end of a socat pty pair, and
 *                  the simulated grbl board (on the virtual clock) on the other.
 * Over a serial line the answer to a command comes later than the call
 * returns; `driverRigs` holds, per positioner, a `settle()` that waits until
 * the board has processed everything sent and the driver has read what the
 * board said. test/helpers/http-server.ts calls it around every request, so
 * virtual time never passes while bytes are on the wire (the line is
 * infinitely fast compared with the machine), and tests stay deterministic.
 */
import { createGrblPositioner, createSimGrblBoard, createSimulatedPositioner, defaultSimSettings, type SimSettings } from '../../cli/assemble';
import { defaultConfig, type PositionerConfig } from '../../firmware/config';
import type { Positioner } from '../../firmware/positioner';
import { PtyPair } from '../../sim/pty-pair';
import { attachBoard, type SerialPeer } from '../../sim/serial-peer';
import { VirtualClock } from '../../sim/virtual-clock';
import { WallClock } from '../../sim/wall-clock';

export interface DriverRig {
  /** Resolves once the line is up and the driver has finished its handshake. */
  ready: Promise<void>;
  settle(): Promise<void>;
  close(): Promise<void>;
}

export const driverRigs = new WeakMap<Positioner, DriverRig>();

export function testDriver(): 'sim' | 'grbl' {
  const driver = process.env.POSITIONER_TEST_DRIVER ?? 'sim';
  if (driver !== 'sim' && driver !== 'grbl') throw new Error(`POSITIONER_TEST_DRIVER must be sim or grbl, got '${driver}'`);
  return driver;
}

export function simOnVirtualClock(configure?: (c: PositionerConfig, s: SimSettings) => void) {
  const config = defaultConfig();
  const simSettings = defaultSimSettings();
  configure?.(config, simSettings);
  const clock = new VirtualClock();
  if (testDriver() === 'grbl') return grblOnVirtualClock(clock, config, simSettings);
  return { clock, config, ...createSimulatedPositioner(clock, config, simSettings) };
}

/** The grbl driver (on wall time: its polls must not fill the virtual clock) against the simulated board on the virtual clock. */
function grblOnVirtualClock(clock: VirtualClock, config: PositionerConfig, simSettings: SimSettings) {
  const pty = new PtyPair();
  // A loaded test machine can starve the event loop for a while: only a long silence means the board is gone.
  const { positioner, controller } = createGrblPositioner(new WallClock(), config, { path: pty.hostPath, baudRate: 115200 }, { answerTimeoutMs: 10_000 });
  let peer: SerialPeer | null = null;
  let send: (text: string) => void = () => undefined;
  const machine = createSimGrblBoard(clock, config, simSettings, (text) => send(text));
  const ready = (async () => {
    await pty.open();
    peer = await attachBoard(pty.devicePath, 115200, () => machine);
    send = (text) => peer!.send(text);
    machine.board.powerUp();
    controller.start();
    await controller.settle();
  })();
  ready.catch(() => undefined);
  driverRigs.set(positioner, {
    ready,
    settle: async () => {
      await ready;
      await controller.settle();
    },
    close: async () => {
      await controller.close();
      await (peer as SerialPeer | null)?.close();
      await pty.dispose();
    },
  });
  return { clock, config, positioner, controller, sim: machine.sim, board: machine.board };
}

export const SEC = 1e6;
