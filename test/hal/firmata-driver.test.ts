/**
 * The Firmata driver (johnny-five Board + firmata.js over our serial line)
 * against the simulated ConfigurableFirmata board over a real socat pty pair,
 * on wall time (the board's machine runs 5x faster than real time). Faults:
 * the line dropped and reopened, the board going silent and coming back, the
 * board resetting by itself mid-move, garbage on the line, stop mid-move and
 * during homing.
 */
import t, { type Test } from 'tap';
import { createFirmataPositioner, createSimFirmataBoard, defaultSimSettings, type SimFirmataMachine } from '../../cli/assemble';
import { defaultConfig } from '../../firmware/config';
import type { Positioner } from '../../firmware/positioner';
import type { FirmataDriver } from '../../hal/firmata-driver';
import { PtyPair } from '../../sim/pty-pair';
import { attachBoard, type SerialPeer } from '../../sim/serial-peer';
import { WallClock } from '../../sim/wall-clock';
import { until as untilWithin } from '../helpers/cli';
import { assertError, serveApi } from '../helpers/http-server';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A wall-clock wait on the driver, polled every 10 ms. */
const until = (what: string, check: () => boolean, timeoutMs = 20_000) => untilWithin(what, check, timeoutMs, 10);

interface Rig {
  pty: PtyPair;
  positioner: Positioner;
  driver: FirmataDriver;
  peer: SerialPeer & { board: SimFirmataMachine };
  attachPeer(): Promise<SerialPeer & { board: SimFirmataMachine }>;
}

async function rig(t: Test): Promise<Rig> {
  const pty = await new PtyPair().open();
  const config = defaultConfig();
  const { positioner, controller: driver } = createFirmataPositioner(new WallClock(), config, { path: pty.hostPath, baudRate: 57600 }, { answerTimeoutMs: 1500, retryMs: 100, pollMovingMs: 20 });
  const r = {
    pty,
    positioner,
    driver,
    peer: null as unknown as SerialPeer & { board: SimFirmataMachine },
    async attachPeer() {
      const peer = await attachBoard(pty.devicePath, 57600, (send) => createSimFirmataBoard(new WallClock(5), config, defaultSimSettings(), send));
      peer.board.board.powerUp();
      r.peer = peer;
      return peer;
    },
  };
  t.teardown(async () => {
    positioner.stop();
    await driver.close();
    await r.peer.close();
    await pty.dispose();
  });
  await r.attachPeer();
  driver.start();
  await driver.settle();
  return r;
}

async function homeAndWait(r: Rig): Promise<void> {
  r.positioner.home('both');
  await until('homing to end', () => r.positioner.status().state !== 'homing', 40_000);
}

t.test('connects through johnny-five, homes on the switch inputs and moves both axes to arrive together', async (t) => {
  const r = await rig(t);
  t.equal(r.driver.connectionPhase(), 'ready');
  await homeAndWait(r);
  let s = r.positioner.status();
  t.equal(s.state, 'idle', `homed (fault: ${JSON.stringify(s.fault)})`);
  t.equal(s.homed, true);
  t.strictSame([s.thetaDeg, s.phiDeg], [0, 0]);
  const sim = r.peer.board.sim;
  // Homing stops on the switch report, one serial round trip after it closed: a few steps past it.
  t.ok(Math.abs(sim.theta.truePositionSteps) <= 40, `theta zero within 40 steps of the switch point: ${sim.theta.truePositionSteps}`);
  t.ok(Math.abs(sim.phi.truePositionSteps) <= 100, `phi zero within 100 steps of the switch point: ${sim.phi.truePositionSteps}`);
  const zero = { theta: sim.theta.truePositionSteps, phi: sim.phi.truePositionSteps };

  r.positioner.moveTo(20, 60);
  let sawBoth = false;
  await until('the move to end', () => {
    const now = r.positioner.status();
    if (now.state === 'moving' && now.axes.theta.positionSteps > 5 * 320 && now.axes.theta.positionSteps < 15 * 320) {
      sawBoth = true;
      // Proportional trapezoids started by one write: phi is always 3x as far along as theta.
      const ratio = now.axes.phi.positionSteps / 800 / (now.axes.theta.positionSteps / 320);
      t.ok(Math.abs(ratio - 3) < 0.03, `phi/theta progress ratio ${ratio.toFixed(4)}`);
      t.ok(now.axes.theta.velocityDegS > 0 && now.axes.phi.velocityDegS > 0, 'both velocities reported');
    }
    return now.state !== 'moving';
  });
  t.ok(sawBoth, 'saw the move in progress');
  s = r.positioner.status();
  t.equal(s.state, 'idle');
  t.strictSame([s.thetaDeg, s.phiDeg], [20, 60]);
  t.equal(sim.theta.truePositionSteps - zero.theta, 20 * 320, 'theta really moved 20 deg');
  t.equal(sim.phi.truePositionSteps - zero.phi, 60 * 800, 'phi really moved 60 deg');
  t.ok(r.peer.board.board.received.some((m) => m.startsWith('f06220')), 'the board got a multi-stepper group config');
});

t.test('stop mid-move halts both steppers with one multi-stepper stop', async (t) => {
  const r = await rig(t);
  r.positioner.moveTo(180, 360);
  await until('moving', () => r.positioner.status().axes.phi.positionSteps > 800);
  r.positioner.stop();
  t.equal(r.positioner.status().state, 'stopped');
  await r.driver.settle();
  const sim = r.peer.board.sim;
  const steps = sim.theta.stepsReceived + sim.phi.stepsReceived;
  await sleep(150);
  t.equal(sim.theta.stepsReceived + sim.phi.stepsReceived, steps, 'no step after the stop was processed');
  t.ok(r.peer.board.board.received.includes('f0622300f7'), 'MULTISTEPPER_STOP for group 0 was sent');
  const s = r.positioner.status();
  t.equal(s.axes.phi.positionSteps, sim.phi.truePositionSteps - sim.phi.truePositionSteps + s.axes.phi.positionSteps);
  t.ok(s.phiDeg > 0 && s.phiDeg < 360, `stopped partway: ${s.phiDeg}`);
  r.positioner.moveTo(1, 1);
  await until('the next move to end', () => r.positioner.status().state !== 'moving');
  t.strictSame([r.positioner.status().thetaDeg, r.positioner.status().phiDeg], [1, 1]);
});

t.test('the line dropped mid-move and reopened: clear errors, reconnect, homing required', async (t) => {
  const r = await rig(t);
  const api = await serveApi(t, r.positioner);
  r.positioner.moveTo(90, 180);
  await until('moving', () => r.positioner.status().axes.phi.positionSteps > 800);
  await r.pty.close();
  await until('the drop to be seen', () => r.positioner.status().state === 'error');
  const s = (await api.get('/status')).body as Record<string, any>;
  t.equal(s.fault.code, 'POS_ERR_DISCONNECTED');
  t.match(s.fault.message, /dropped/);
  assertError(t, await api.post('/home'), 503, 'POS_ERR_DISCONNECTED', 'home while the line is down');
  await r.peer.close();
  await r.pty.open();
  await r.attachPeer();
  await until('the reconnection', () => r.positioner.status().fault?.code === 'POS_ERR_NOT_HOMED');
  assertError(t, await api.post('/move', { theta_deg: 1, phi_deg: 1 }), 503, 'POS_ERR_FAULT', 'move before homing again');
  await homeAndWait(r);
  t.equal(r.positioner.status().state, 'idle');
  t.equal(r.positioner.status().fault, null);
});

t.test('the board resetting by itself mid-move fails the move; it is configured again and must be homed', async (t) => {
  const r = await rig(t);
  r.positioner.moveTo(90, 180);
  await until('moving', () => r.positioner.status().axes.phi.positionSteps > 800);
  const faults: string[] = [];
  r.positioner.onChange(() => {
    const f = r.positioner.status().fault;
    if (f && faults[faults.length - 1] !== `${f.code} ${f.message}`) faults.push(`${f.code} ${f.message}`);
  });
  r.peer.board.board.powerUp();
  await until('the reconnection', () => r.positioner.status().fault?.code === 'POS_ERR_NOT_HOMED');
  t.equal(faults.length, 2, `the move failed, then the board came back: ${faults.join(' | ')}`);
  t.match(faults[0], /^POS_ERR_DISCONNECTED .*reset by itself mid-motion/);
  t.match(faults[1], /^POS_ERR_NOT_HOMED /);
  t.equal(r.driver.stats.boardResets, 1);
  t.equal(r.peer.board.board.devicePosition(0), 0, 'the steppers were configured again');
  await homeAndWait(r);
  t.equal(r.positioner.status().state, 'idle');
});

t.test('a board that goes silent is a fault; when it answers again it is configured afresh', async (t) => {
  const r = await rig(t);
  const peer = r.peer;
  await peer.close(); // the board stops listening: nothing answers, the line stays up
  await until('silence to be noticed', () => r.positioner.status().state === 'error');
  t.match(r.positioner.status().fault?.message ?? '', /stopped answering/);
  await r.attachPeer();
  await until('the board to be back', () => r.positioner.status().fault?.code === 'POS_ERR_NOT_HOMED');
  t.equal(r.driver.connectionPhase(), 'ready');
});

t.test('garbage bytes on the line are skipped; the move still completes', async (t) => {
  const r = await rig(t);
  r.positioner.moveTo(10, 30);
  const noise = [Buffer.from([0x00, 0x01, 0x7f]), Buffer.from([0xf0, 0x62, 0x06]), Buffer.from('hello\r\n'), Buffer.from([0xf7, 0xf7, 0x42]), Buffer.from([0xe0])];
  for (let i = 0; i < 20 && r.positioner.status().state === 'moving'; i++) {
    r.peer.send(noise[i % noise.length]);
    await sleep(15);
  }
  await until('the move to end', () => r.positioner.status().state !== 'moving');
  const s = r.positioner.status();
  t.equal(s.state, 'idle', `ended idle (fault: ${JSON.stringify(s.fault)})`);
  t.strictSame([s.thetaDeg, s.phiDeg], [10, 30]);
});

t.test('stop during homing halts it and leaves the axes unhomed; homing works again', async (t) => {
  const r = await rig(t);
  r.positioner.home('both');
  await until('seeking', () => r.positioner.status().axes.theta.positionSteps < -320);
  r.positioner.stop();
  t.equal(r.positioner.status().state, 'stopped');
  t.equal(r.positioner.status().homed, false);
  await r.driver.settle();
  const steps = r.peer.board.sim.theta.stepsReceived;
  await sleep(150);
  t.equal(r.peer.board.sim.theta.stepsReceived, steps, 'no step after the stop');
  await homeAndWait(r);
  t.equal(r.positioner.status().homed, true, `homed again (${JSON.stringify(r.positioner.status().fault)})`);
});

t.test('a driver pulling its nFAULT input low mid-move stops both steppers and latches a hardware fault', async (t) => {
  const r = await rig(t);
  const sim = r.peer.board.sim;
  r.positioner.moveTo(90, 180);
  await until('moving', () => r.positioner.status().axes.phi.positionSteps > 800);
  sim.phi.faults.driver = 'overtemperature';
  await until('the fault to latch', () => r.positioner.status().state === 'error');
  const s = r.positioner.status();
  t.equal(s.fault?.code, 'POS_ERR_HARDWARE');
  t.match(s.fault?.message ?? '', /phi stepper driver pulled its nFAULT line \(D12\) low/);
  t.ok(r.peer.board.board.received.includes('f0622300f7'), 'MULTISTEPPER_STOP for group 0 was sent');
  await r.driver.settle();
  const steps = sim.theta.stepsReceived;
  await sleep(150);
  t.equal(sim.theta.stepsReceived, steps, 'theta, whose driver is fine, stopped too');
  // The fault clears with the driver; homing clears the latched error.
  sim.phi.faults.driver = null;
  await homeAndWait(r);
  t.equal(r.positioner.status().state, 'idle', `homed again (fault: ${JSON.stringify(r.positioner.status().fault)})`);
});
