/**
 * Test helpers: a positioner on a virtual clock.
 *
 * `POSITIONER_TEST_DRIVER` chooses what is under the firmware, so one test
 * suite (test/api) runs unchanged against every backend:
 *   sim (default)  the step controller on simulated axes, in-process;
 *   grbl           the real grbl driver on one end of a socat pty pair, and
 *                  the simulated grbl board (on the virtual clock) on the other;
 *   firmata        the real Firmata driver on a pty pair, and the simulated
 *                  ConfigurableFirmata board on a LockstepClock (below).
 * Over a serial line the answer to a command comes later than the call
 * returns; `driverRigs` holds, per positioner, a `settle()` that waits until
 * the board has processed everything sent and the driver has read what the
 * board said. test/helpers/http-server.ts calls it around every request, so
 * virtual time never passes while bytes are on the wire (the line is
 * infinitely fast compared with the machine), and tests stay deterministic.
 */
import { createFirmataPositioner, createGrblPositioner, createSimFirmataBoard, createSimGrblBoard, createSimulatedPositioner, DEFAULT_BAUD, defaultSimSettings, type SimSettings } from '../../cli/assemble';
import { ACCEL, FIRMATA } from '../../hal/firmata-protocol';
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

export function testDriver(): 'sim' | 'grbl' | 'firmata' {
  const driver = process.env.POSITIONER_TEST_DRIVER ?? 'sim';
  if (driver !== 'sim' && driver !== 'grbl' && driver !== 'firmata') throw new Error(`POSITIONER_TEST_DRIVER must be sim, grbl or firmata, got '${driver}'`);
  return driver;
}

export function simOnVirtualClock(configure?: (c: PositionerConfig, s: SimSettings) => void) {
  const config = defaultConfig();
  const simSettings = defaultSimSettings();
  configure?.(config, simSettings);
  if (testDriver() === 'firmata') return firmataOnVirtualClock(config, simSettings);
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

type ClockOp = { kind: 'to'; us: number } | { kind: 'by'; us: number; startUs?: number } | { kind: 'idle'; us: number; startUs?: number };

/**
 * The test's virtual clock for a board whose host must answer inside virtual
 * time (Firmata homing: the host stops the seek when the switch report
 * arrives). Each advance is queued and run timer by timer; when the rig calls
 * `pause()` (the board said something the host must react to), the run stops
 * at that instant and the rest stays owed. `catchUp` (from the rig's settle,
 * so before every request and answer) lets the host read the board's bytes
 * and its answer reach the board, then runs on, until nothing is owed. With
 * no pause an advance completes synchronously, exactly as a VirtualClock.
 */
export class LockstepClock extends VirtualClock {
  private readonly ops: ClockOp[] = [];
  private paused = false;
  private draining = false;

  /** True while the clock is running an advance (the board's timers are firing). */
  running(): boolean {
    return this.draining;
  }

  /** Stops the advance in progress after the timers of the current instant. */
  pause(): void {
    if (this.draining) this.paused = true;
  }

  owes(): boolean {
    return this.ops.length > 0;
  }

  override advanceTo(targetUs: number): void {
    this.enqueue({ kind: 'to', us: targetUs });
  }

  override advanceBy(deltaUs: number): void {
    this.enqueue({ kind: 'by', us: deltaUs });
  }

  override runUntilIdle(limitUs = 3600e6): number {
    this.enqueue({ kind: 'idle', us: limitUs });
    return this.nowUs();
  }

  /** Runs what is owed until the next pause (or to the end); the rig lets the line settle between calls. */
  resume(): void {
    this.paused = false;
    this.drain();
  }

  private enqueue(op: ClockOp): void {
    this.ops.push(op);
    if (this.ops.length === 1 && !this.paused) this.drain();
  }

  private drain(): void {
    this.draining = true;
    try {
      while (this.ops.length > 0 && !this.paused) {
        const op = this.ops[0];
        if (op.kind !== 'to') op.startUs ??= this.nowUs();
        const targetUs = op.kind === 'to' ? op.us : op.startUs! + op.us;
        if (targetUs < this.nowUs()) throw new RangeError(`cannot move a clock backwards (now ${this.nowUs()} us, asked for ${targetUs} us)`);
        for (;;) {
          const next = this.nextTimerUs();
          if (next === null || next > targetUs) {
            if (op.kind !== 'idle') super.advanceTo(targetUs);
            this.ops.shift();
            break;
          }
          super.advanceTo(next);
          if (this.paused) break;
        }
      }
    } finally {
      this.draining = false;
    }
  }
}

/**
 * The Firmata driver (wall time) against the simulated board on a
 * LockstepClock. Firmata has no homing of its own: the driver stops a seek
 * when the switch report comes. So while the positioner homes, every byte the
 * board sends pauses virtual time at that instant until the driver has read
 * it and whatever it sent back has reached the board: the line is infinitely
 * fast, the host answers at the very instant of the report. Outside homing the
 * board runs on at once (the host's reaction cannot change the motion), so a
 * test that advances the clock reads the axes synchronously, as with sim.
 */
function firmataOnVirtualClock(config: PositionerConfig, simSettings: SimSettings) {
  const clock = new LockstepClock();
  const pty = new PtyPair();
  const baudRate = DEFAULT_BAUD.firmata;
  const { positioner, controller } = createFirmataPositioner(new WallClock(), config, { path: pty.hostPath, baudRate }, { answerTimeoutMs: 10_000 });
  let peer: SerialPeer | null = null;
  /** The board said something other than a position reply since the last look. */
  let spoke = false;
  const machine = createSimFirmataBoard(clock, config, simSettings, (data) => {
    const positionReply = data[0] === FIRMATA.START_SYSEX && data[1] === FIRMATA.ACCELSTEPPER && data[2] === ACCEL.REPORT_POSITION;
    if (!positionReply) {
      spoke = true;
      if (clock.running() && positioner.status().state === 'homing') clock.pause();
    }
    peer?.send(data);
  });
  const ready = (async () => {
    await pty.open();
    peer = await attachBoard(pty.devicePath, baudRate, () => machine);
    machine.board.powerUp();
    controller.start();
    await controller.settle();
  })();
  ready.catch(() => undefined);
  /** Until the board has stopped talking: two position round trips each time (the first reads what the board said, the second carries the host's answer to it). */
  const settleLine = async () => {
    do {
      spoke = false;
      await controller.settle();
      await controller.settle();
    } while (spoke);
  };
  const catchUp = async () => {
    await settleLine();
    while (clock.owes()) {
      clock.resume();
      await settleLine();
    }
  };
  let inFlight: Promise<void> | null = null;
  driverRigs.set(positioner, {
    ready,
    settle: async () => {
      await ready;
      while (inFlight) await inFlight;
      inFlight = catchUp();
      try {
        await inFlight;
      } finally {
        inFlight = null;
      }
    },
    close: async () => {
      await controller.close();
      await (peer as SerialPeer | null)?.close();
      await pty.dispose();
    },
  });
  return { clock: clock as VirtualClock, config, positioner, controller, sim: machine.sim, board: machine.board };
}

export const SEC = 1e6;
