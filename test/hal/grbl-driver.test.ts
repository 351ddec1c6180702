/**
 * The grbl driver against the simulated grbl board over a real socat pty
 * pair, on wall time (the board's machine runs 20x faster than real time so
 * moves take a fraction of a second). Faults: the board's process killed
 * mid-move, the line dropped and reopened, garbage on the line, an alarm
 * raised by the board, stop during homing, a board set up differently from
 * the config, a command refused with error:N, and flow control.
 */
import t, { type Test } from 'tap';
import { createGrblPositioner, createSimGrblBoard, defaultSimSettings, type SimGrblBoard } from '../../cli/assemble';
import { defaultConfig, type PositionerConfig } from '../../firmware/config';
import type { Positioner } from '../../firmware/positioner';
import type { GrblDriver } from '../../hal/grbl-driver';
import { PtyPair } from '../../sim/pty-pair';
import { attachBoard, type SerialPeer } from '../../sim/serial-peer';
import { WallClock } from '../../sim/wall-clock';
import { buildCli, spawnCli, until as untilWithin, type CliRun } from '../helpers/cli';
import { assertError, serveApi } from '../helpers/http-server';

const BOARD_TIME_SCALE = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A wall-clock wait on the driver, polled every 10 ms. */
const until = (what: string, check: () => boolean, timeoutMs = 15_000) => untilWithin(what, check, timeoutMs, 10);

interface Rig {
  pty: PtyPair;
  positioner: Positioner;
  driver: GrblDriver;
  config: PositionerConfig;
  /** The board on the far end of the line (in this process). */
  peer: (SerialPeer & { board: SimGrblBoard }) | null;
  attachPeer(settings?: Record<number, number>): Promise<SerialPeer & { board: SimGrblBoard }>;
}

async function rig(t: Test, opts: { peer?: boolean; settings?: Record<number, number> } = {}): Promise<Rig> {
  const pty = await new PtyPair().open();
  const config = defaultConfig();
  const { positioner, controller: driver } = createGrblPositioner(new WallClock(), config, { path: pty.hostPath, baudRate: 115200 }, { answerTimeoutMs: 1500, retryMs: 100, pollMovingMs: 20 });
  const r: Rig = {
    pty,
    positioner,
    driver,
    config,
    peer: null,
    async attachPeer(settings = {}) {
      const peer = await attachBoard(pty.devicePath, 115200, (send) => createSimGrblBoard(new WallClock(BOARD_TIME_SCALE), config, defaultSimSettings(), send));
      for (const [id, value] of Object.entries(settings)) peer.board.board.settings.set(Number(id), value);
      peer.board.board.powerUp();
      r.peer = peer;
      return peer;
    },
  };
  t.teardown(async () => {
    positioner.stop();
    await driver.close();
    await r.peer?.close();
    await pty.dispose();
  });
  if (opts.peer !== false) await r.attachPeer(opts.settings);
  driver.start();
  await driver.settle();
  return r;
}

async function homeAndWait(r: Rig): Promise<void> {
  r.positioner.home('both');
  await until('homing to end', () => r.positioner.status().state !== 'homing');
}

t.test('connects, homes onto the switches and moves both axes to arrive together at the target', async (t) => {
  const r = await rig(t);
  t.equal(r.driver.connectionPhase(), 'ready');
  await homeAndWait(r);
  let s = r.positioner.status();
  t.equal(s.state, 'idle');
  t.equal(s.homed, true);
  t.strictSame([s.thetaDeg, s.phiDeg], [0, 0], 'a homed axis rests at 0');
  const sim = r.peer!.board.sim;
  t.equal(sim.theta.truePositionSteps, 0, 'theta really on its switch point');
  t.equal(sim.phi.truePositionSteps, 0, 'phi really on its switch point');

  r.positioner.moveTo(30, 90);
  let sawBothMoving = false;
  await until('the move to end', () => {
    const now = r.positioner.status();
    if (now.axes.theta.velocityDegS > 0 && now.axes.phi.velocityDegS > 0) {
      sawBothMoving = true;
      // A straight line in (theta, phi): phi runs 3x as fast as theta throughout.
      t.ok(Math.abs(now.axes.phi.velocityDegS - 3 * now.axes.theta.velocityDegS) < 1e-6, `velocities in proportion: ${now.axes.theta.velocityDegS}, ${now.axes.phi.velocityDegS}`);
    }
    return now.state !== 'moving';
  });
  t.ok(sawBothMoving, 'status showed both axes moving');
  s = r.positioner.status();
  t.equal(s.state, 'idle');
  t.strictSame([s.thetaDeg, s.phiDeg], [30, 90]);
  t.equal(sim.theta.truePositionSteps, 30 * 320);
  t.equal(sim.phi.truePositionSteps, 90 * 800);
  t.match(r.peer!.board.board.linesReceived, ['$$', '$X', 'G21', '$H', /^G91 G1 X-2\.000 Y-2\.000 F600/, 'G90 G4 P0', /^G53 G1 X30\.000000 Y90\.000000 F\d/, 'G4 P0'], 'the lines grbl received, in order');
});

t.test('the board killed mid-move: error state with a clear API error, then it comes back and must be homed again', async (t) => {
  const pty = await new PtyPair().open();
  t.teardown(() => pty.dispose());
  const cli = buildCli(t, 'sim-board');
  const startBoard = (): CliRun => spawnCli(t, cli, ['grbl', '--serial', pty.devicePath, '--time-scale', '10', '--json'], { timeoutMs: 60_000 });
  let board = startBoard();
  await until(`the board process to listen (stderr: ${board.stderr()})`, () => board.stdout().includes('"listening"'));
  const { positioner, controller: driver } = createGrblPositioner(new WallClock(), defaultConfig(), { path: pty.hostPath, baudRate: 115200 }, { answerTimeoutMs: 1500, retryMs: 100 });
  t.teardown(() => driver.close());
  driver.start();
  await driver.settle();
  const api = await serveApi(t, positioner);

  t.equal((await api.post('/move', { theta_deg: 180, phi_deg: 360 })).status, 200);
  await until('moving', () => positioner.status().axes.phi.positionSteps > 800);
  board.child.kill('SIGKILL');
  await board.done;
  await until('the error state', () => positioner.status().state === 'error');
  const s = (await api.get('/status')).body as Record<string, any>;
  t.equal(s.state, 'error');
  t.equal(s.moving, false);
  t.equal(s.fault.code, 'POS_ERR_DISCONNECTED');
  t.match(s.fault.message, /stopped answering/);
  assertError(t, await api.post('/move', { theta_deg: 1, phi_deg: 1 }), 503, 'POS_ERR_FAULT', 'move while the board is gone');
  assertError(t, await api.post('/home'), 503, 'POS_ERR_DISCONNECTED', 'home while the board is gone');

  board = startBoard();
  await until('the driver to reconnect', () => positioner.status().fault?.code === 'POS_ERR_NOT_HOMED');
  t.equal(driver.stats.reconnects, 1);
  t.equal(positioner.status().state, 'error', 'still in error: positions are not trusted');
  t.equal(positioner.status().homed, false);
  assertError(t, await api.post('/move', { theta_deg: 1, phi_deg: 1 }), 503, 'POS_ERR_FAULT', 'move before homing again');
  t.equal((await api.post('/home')).status, 200, 'homing is accepted');
  await until('homing to end', () => positioner.status().state !== 'homing', 30_000);
  t.equal(positioner.status().state, 'idle');
  t.equal(positioner.status().fault, null, 'homing cleared the fault');
  t.equal((await api.post('/move', { theta_deg: 1, phi_deg: 2 })).status, 200, 'moves again');
  await until('the move to end', () => positioner.status().state !== 'moving');
  t.strictSame([positioner.status().thetaDeg, positioner.status().phiDeg], [1, 2]);
  board.child.kill('SIGTERM');
  await board.done;
});

t.test('the line dropped while idle and reopened: error, reconnect, homing required', async (t) => {
  const r = await rig(t);
  await r.pty.close();
  await until('the drop to be seen', () => r.positioner.status().state === 'error');
  t.equal(r.positioner.status().fault?.code, 'POS_ERR_DISCONNECTED');
  t.match(r.positioner.status().fault?.message ?? '', /dropped/);
  t.throws(() => r.positioner.home('both'), { code: 'POS_ERR_DISCONNECTED' }, 'home refused while the line is down');
  await r.peer!.close();
  await r.pty.open();
  await r.attachPeer();
  await until('the reconnection', () => r.positioner.status().fault?.code === 'POS_ERR_NOT_HOMED');
  t.equal(r.driver.connectionPhase(), 'ready');
  await homeAndWait(r);
  t.equal(r.positioner.status().state, 'idle');
  t.equal(r.positioner.status().homed, true);
});

t.test('garbage and half lines on the wire are counted and ignored; the move still completes', async (t) => {
  const r = await rig(t);
  r.positioner.moveTo(20, 40);
  const noise = ['\u0000\u00ff\u00fe<<>>$%^\r\n', '<Idle|MPos:abc,def>\r\n', 'error:xyz\r\n', '[MSG\r\n', '<Run|MPos:1.0', '\r\n', 'Grbl\r\n', 'x'.repeat(400) + '\r\n', '\u0007\u0008'];
  for (let i = 0; i < 30 && r.positioner.status().state === 'moving'; i++) {
    r.peer!.send(noise[i % noise.length]);
    await sleep(15);
  }
  await until('the move to end', () => r.positioner.status().state !== 'moving');
  const s = r.positioner.status();
  t.equal(s.state, 'idle', `ended idle (fault: ${JSON.stringify(s.fault)})`);
  t.strictSame([s.thetaDeg, s.phiDeg], [20, 40]);
  t.ok(r.driver.stats.garbageLines >= 5, `garbage counted: ${r.driver.stats.garbageLines}`);
  t.equal(r.peer!.board.sim.theta.truePositionSteps - 37.5 * 320, 20 * 320, 'theta really at the target');
});

t.test('an alarm raised by the board fails the move with a clear fault; homing clears it', async (t) => {
  const r = await rig(t);
  const api = await serveApi(t, r.positioner);
  r.positioner.moveTo(90, 180);
  await until('moving', () => r.positioner.status().axes.phi.positionSteps > 800);
  r.peer!.board.board.raiseAlarm(1, 'emergency stop input');
  await until('the error state', () => r.positioner.status().state === 'error');
  const s = (await api.get('/status')).body as Record<string, any>;
  t.equal(s.fault.code, 'POS_ERR_HARDWARE');
  t.match(s.fault.message, /ALARM:1/);
  t.match(s.fault.message, /hard limit/);
  t.match(s.fault.message, /emergency stop input/, 'the board message that came with the alarm');
  assertError(t, await api.post('/move', { theta_deg: 1, phi_deg: 1 }), 503, 'POS_ERR_FAULT', 'move after the alarm');
  const stepsAfterAlarm = r.peer!.board.sim.phi.stepsReceived;
  await sleep(100);
  t.equal(r.peer!.board.sim.phi.stepsReceived, stepsAfterAlarm, 'the board stopped stepping');
  t.equal((await api.post('/home')).status, 200);
  await until('homing to end', () => r.positioner.status().state !== 'homing');
  t.equal(r.positioner.status().state, 'idle');
  t.equal(r.positioner.status().fault, null);
});

t.test('stop during homing halts at once, leaves the axes unhomed, and homing works again', async (t) => {
  const r = await rig(t);
  r.positioner.home('both');
  await until('seeking', () => r.positioner.status().axes.theta.positionSteps < -320);
  const resets: string[] = [];
  r.peer!.board.board.onEvent((e) => e.type === 'reset' && resets.push(e.detail));
  r.positioner.stop();
  t.equal(r.positioner.status().state, 'stopped');
  t.equal(r.positioner.status().homed, false);
  await r.driver.settle();
  const sim = r.peer!.board.sim;
  const steps = sim.theta.stepsReceived + sim.phi.stepsReceived;
  await sleep(150);
  t.equal(sim.theta.stepsReceived + sim.phi.stepsReceived, steps, 'no step after the stop was processed');
  t.strictSame(resets, ['soft reset, ALARM:6'], 'the board saw the reset during homing (ALARM:6)');
  t.equal(r.peer!.board.board.currentState(), 'Idle', 'and the driver unlocked it');
  await homeAndWait(r);
  t.equal(r.positioner.status().state, 'idle');
  t.equal(r.positioner.status().homed, true);
});

t.test('a board set up differently from the config is refused with the settings to send', async (t) => {
  const r = await rig(t, { settings: { 100: 250, 22: 0 } });
  t.equal(r.driver.connectionPhase(), 'misconfigured');
  const s = r.positioner.status();
  t.equal(s.state, 'error');
  t.match(s.fault?.message ?? '', /\$100=250/);
  t.match(s.fault?.message ?? '', /send \$100=320/);
  t.match(s.fault?.message ?? '', /send \$22=1/);
  t.throws(() => r.positioner.home('both'), { code: 'POS_ERR_HARDWARE', message: /\$100/ });
});

t.test('a command grbl refuses (error:N) fails the motion with its meaning', async (t) => {
  const r = await rig(t);
  r.peer!.board.board.settings.set(22, 0); // homing switched off behind the driver's back
  r.positioner.home('theta');
  await until('homing to end', () => r.positioner.status().state !== 'homing');
  const s = r.positioner.status();
  t.equal(s.state, 'error');
  t.equal(s.fault?.code, 'POS_ERR_CONTROLLER_REJECTED');
  t.match(s.fault?.message ?? '', /error:5/);
  t.match(s.fault?.message ?? '', /homing is disabled/);
});

t.test('flow control never overfills grbl 128-byte receive buffer, and a new accel is written before the move', async (t) => {
  const r = await rig(t);
  for (let i = 0; i < 12; i++) {
    r.positioner.updateSettings({ accelDegS2: 100 + i, speedDegS: 20 + i });
    r.positioner.moveTo(1 + (i % 3), 2 + i);
    await until('the move to end', () => r.positioner.status().state !== 'moving');
    t.equal(r.positioner.status().state, 'idle');
  }
  t.equal(r.peer!.board.board.rxOverflows, 0, 'no byte lost to an overfull receive buffer');
  t.ok(r.driver.stats.maxInFlightBytes <= 127, `at most 127 bytes in flight (${r.driver.stats.maxInFlightBytes})`);
  t.equal(r.peer!.board.board.settings.get(120), 111);
  t.equal(r.peer!.board.board.settings.get(121), 111);
  t.strictSame([r.positioner.status().thetaDeg, r.positioner.status().phiDeg], [3, 13]);
});

t.test('an ok swallowed by noise does not stall the move: grbl idle with the line long sent counts as answered', async (t) => {
  const r = await rig(t);
  r.positioner.moveTo(2, 4);
  // A half line right before grbl's answer: "<Run|MPos:1.0" + "ok" arrive as one unreadable line.
  const board = r.peer!.board.board;
  const unsubscribe = board.onEvent((e) => {
    if (e.type === 'line' && e.detail === 'G4 P0') r.peer!.send('<Run|MPos:1.0');
  });
  await until('the move to end', () => r.positioner.status().state !== 'moving');
  unsubscribe();
  t.equal(r.positioner.status().state, 'idle');
  t.strictSame([r.positioner.status().thetaDeg, r.positioner.status().phiDeg], [2, 4]);
  t.equal(r.driver.stats.lostAnswers, 1, 'one answer was taken as lost');
  r.positioner.moveTo(3, 5);
  await until('the next move to end', () => r.positioner.status().state !== 'moving');
  t.strictSame([r.positioner.status().thetaDeg, r.positioner.status().phiDeg], [3, 5], 'streaming goes on in step');
});
