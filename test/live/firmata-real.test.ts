/**
 * The Firmata driver against the real ConfigurableFirmata 3.3.0 (with
 * AccelStepperFirmata) on a simulated Uno (../shared/firmata-real), in real
 * time: the same points as test/hal/firmata-driver.test.ts checks on the
 * simulated board, judged by the bridge's own counts (phys.json, STOP-PROBE).
 * Skipped, with the reason, where that folder is absent. About 2 minutes.
 */
import t from 'tap';
import { createFirmataPositioner } from '../../cli/assemble';
import { defaultConfig } from '../../firmware/config';
import { firmataRealDir, firmataRealPresent, startRealBoard, type RealBoard } from '../../sim/firmata-real-bridge';
import { WallClock } from '../../sim/wall-clock';
import { until } from '../helpers/cli';

// Real time: two homings of ~45 s each, the moves and a reset.
t.setTimeout(600_000);

const skip = firmataRealPresent() ? false : `no real-firmware peer at ${firmataRealDir()} (../shared/firmata-real; or set FIRMATA_REAL_DIR)`;
t.test('against the real firmware', { skip }, async (t) => {
  let board: RealBoard | null = await startRealBoard({ firmware: 'firmata-pos115.elf', bridgeArgs: ['--dtr-reset'] });
  const config = defaultConfig();
  /** Wall time (s) of the last write that carried an ACCELSTEPPER_STOP. */
  let stopWrittenS = 0;
  const trace = (direction: 'tx' | 'rx', data: Buffer) => {
    if (direction === 'tx' && data.includes(Buffer.from([0xf0, 0x62, 0x05]))) stopWrittenS = Date.now() / 1000;
  };
  const { positioner, controller: driver } = createFirmataPositioner(new WallClock(), config, { path: board.tty, baudRate: 115200, trace });
  t.teardown(async () => {
    positioner.stop();
    await driver.close();
    board?.kill();
    board = null;
  });
  const b = board;
  const status = () => positioner.status();
  const physSteps = (axis: 'theta' | 'phi') => b.phys()[`${axis}_steps`];

  await t.test('connecting until configured (the Uno resets as the port opens), then idle', async (t) => {
    t.equal(status().state, 'connecting');
    driver.start();
    await until('configured', () => driver.connectionPhase() === 'ready', 10_000, 50);
    t.equal(status().state, 'idle');
    t.equal(status().fault, null);
  });

  await t.test('homing finds the switches within a few microsteps', async (t) => {
    positioner.home('both');
    await until('homed', () => status().state !== 'homing', 120_000, 100);
    t.equal(status().state, 'idle', JSON.stringify(status().fault));
    await until('phys.json fresh', () => b.phys().theta_moving === 0 && b.phys().phi_moving === 0, 2000, 50);
    t.ok(Math.abs(physSteps('theta')) <= 3, `theta zero ${physSteps('theta')} microsteps from its switch`);
    t.ok(Math.abs(physSteps('phi')) <= 3, `phi zero ${physSteps('phi')} microsteps from its switch`);
    t.strictSame([status().thetaDeg, status().phiDeg], [0, 0]);
  });

  await t.test('a move: both axes arrive together, where the status says', async (t) => {
    const zero = { theta: physSteps('theta'), phi: physSteps('phi') };
    b.ctl('mark live-move');
    positioner.moveTo(20, 60);
    await until('arrived', () => status().state !== 'moving', 60_000, 100);
    const log = b.log().slice(b.log().lastIndexOf('live-move'));
    const done = [...log.matchAll(/\[wall ([0-9.]+) [^\]]*\] B> ACCEL MOVE_COMPLETE dev (\d)/g)].map((m) => Number(m[1]));
    t.equal(done.length, 2, 'two MOVE_COMPLETEs');
    t.ok(Math.abs(done[0] - done[1]) < 0.1, `arrivals ${((done[1] - done[0]) * 1000).toFixed(1)} ms apart`);
    await until('phys.json fresh', () => b.phys().phi_moving === 0, 2000, 50);
    t.equal(physSteps('theta') - zero.theta, 20 * 320);
    t.equal(physSteps('phi') - zero.phi, 60 * 800);
  });

  await t.test('stop: the pulses cease within 20 ms, and the status has the halted position', async (t) => {
    const zero = { theta: physSteps('theta') - status().axes.theta.positionSteps, phi: physSteps('phi') - status().axes.phi.positionSteps };
    positioner.moveTo(90, 180);
    await new Promise((r) => setTimeout(r, 2000));
    const t0 = Date.now() / 1000;
    positioner.stop();
    await until('the probe', () => b.stopProbes().some((p) => p.commandWallS > t0), 3000, 50);
    const probe = b.stopProbes().at(-1)!;
    // stop() -> the bytes written (the driver) + written -> on the board (the pty, and the simulated MCU, which
    // lags real time on a loaded machine: not the driver's or the firmware's) + on the board -> last pulse.
    const writtenMs = (stopWrittenS - t0) * 1000;
    const lineMs = (probe.commandWallS - stopWrittenS) * 1000;
    t.ok(writtenMs < 5, `the STOPs written ${writtenMs.toFixed(1)} ms after stop()`);
    for (const axis of ['theta', 'phi'] as const) {
      t.ok(probe.axes[axis].pulses <= 2, `${axis}: ${probe.axes[axis].pulses} pulses after the stop`);
      t.ok(writtenMs + probe.axes[axis].lastPulseMs < 20, `${axis}: last pulse ${(writtenMs + probe.axes[axis].lastPulseMs).toFixed(1)} ms after stop(), not counting ${lineMs.toFixed(1)} ms on the pty and in the bridge`);
    }
    await until('phys.json fresh', () => b.phys().phi_moving === 0, 2000, 50);
    t.equal(status().axes.theta.positionSteps, physSteps('theta') - zero.theta, 'theta status = halted position');
    t.equal(status().axes.phi.positionSteps, physSteps('phi') - zero.phi, 'phi status = halted position');
  });

  await t.test('nFAULT on phi mid-move stops both axes and latches a hardware fault', async (t) => {
    positioner.moveTo(20, 60);
    await new Promise((r) => setTimeout(r, 1500));
    const t0 = Date.now() / 1000;
    b.ctl('fault phi on');
    await until('the fault', () => status().state === 'error', 2000, 20);
    t.equal(status().fault?.code, 'POS_ERR_HARDWARE');
    await until('the probe', () => b.stopProbes().some((p) => p.commandWallS > t0), 3000, 50);
    const probe = b.stopProbes().at(-1)!;
    t.ok(probe.axes.theta.pulses <= 2, `theta (healthy): ${probe.axes.theta.pulses} pulses after the stop`);
    // From the board's report of the fault pin to the stop reaching the board: the driver's reaction and the pty.
    // The time before that (the bridge reading its control FIFO, the simulated MCU sampling the pin) is the
    // bridge's, and grows with the machine's load (the simulated MCU lags real time): reported, not bounded.
    const reports = b
      .log()
      .split('\n')
      .map((l) => /^\[wall ([0-9.]+) sim[^\]]*\] B> (.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null && /digital/i.test(m[2]))
      .map((m) => Number(m[1]))
      .filter((w) => w >= t0 && w <= probe.commandWallS);
    const reportWallS = reports.length > 0 ? reports[reports.length - 1] : t0;
    t.ok((probe.commandWallS - reportWallS) * 1000 < 50, `stop reached the board ${((probe.commandWallS - reportWallS) * 1000).toFixed(1)} ms after the board reported the fault (${((reportWallS - t0) * 1000).toFixed(1)} ms from the fault to that report, in the bridge)`);
    b.ctl('fault phi off');
  });

  await t.test('a board reset: the board is configured again and asks for homing', async (t) => {
    positioner.home('both');
    await until('homed', () => status().state !== 'homing', 120_000, 100);
    positioner.moveTo(10, 10);
    await new Promise((r) => setTimeout(r, 500));
    b.ctl('reset');
    await until('back', () => status().fault?.code === 'POS_ERR_NOT_HOMED', 10_000, 50);
    t.equal(driver.stats.boardResets, 1);
    positioner.home('both');
    await until('homed', () => status().state !== 'homing', 120_000, 100);
    t.equal(status().state, 'idle');
  });
});
