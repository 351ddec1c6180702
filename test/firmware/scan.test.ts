/**
 * Scans in the firmware (firmware/scan.ts) on the simulated positioner and
 * a virtual clock: a grid measured from the simulated antenna, the claim
 * that keeps other commands out, stop, pause and resume, a resume after a
 * restart from a real SQLite file, sweeps stamped with the position at the
 * sample time, and an exec source that fails or hangs on some points.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { createSimulatedPositioner } from '../../cli/assemble';
import { createScanner } from '../../cli/assemble-scan';
import { SqliteScanStore } from '../../api/scan-store';
import { defaultConfig } from '../../firmware/config';
import { defaultScanSettings, type ScanSettings } from '../../firmware/scan';
import { MemoryScanStore, type ScanStore } from '../../firmware/scan-store';
import { planScan } from '../../firmware/scan-plan';
import { SimulatedAntenna, defaultAntennaConfig } from '../../sim/antenna';
import { VirtualClock } from '../../sim/virtual-clock';
import { runScan } from '../helpers/scan';

const NOW = () => new Date('2026-11-24T05:00:00Z');

function rig(store: ScanStore = new MemoryScanStore()) {
  const clock = new VirtualClock();
  const { positioner, sim } = createSimulatedPositioner(clock, defaultConfig());
  const { scanner } = createScanner({ positioner, clock, store, now: NOW });
  return { clock, positioner, sim, scanner, store };
}

function settings(over: Partial<ScanSettings> = {}): ScanSettings {
  return defaultScanSettings({ kind: 'grid', theta: { startDeg: 0, stopDeg: 20, stepDeg: 10 }, phi: { startDeg: 0, stopDeg: 20, stepDeg: 10 }, order: 'serpentine' }, over);
}

function tmpDb(t: Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scan-test-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'scans.db');
}

t.test('a grid scan visits every point in serpentine order, settles, and records the antenna pattern at each', async (t) => {
  const { clock, positioner, sim, scanner, store } = rig();
  const visited: { theta: number; phi: number }[] = [];
  // Where the shaft really is each time a sample is recorded (the simulated axes, not the firmware's belief).
  scanner.onEvent((e) => {
    if (e.type === 'sample') visited.push({ theta: sim.theta.truePositionSteps / 320, phi: sim.phi.truePositionSteps / 800 });
  });
  const powerOn = { theta: sim.theta.truePositionSteps, phi: sim.phi.truePositionSteps };
  const info = scanner.start(settings(), { any: 'request' });
  t.equal(info.state, 'running');
  t.equal(info.pointsTotal, 9);
  t.equal(info.id, '2026-11-24T05:00:00Z-1');
  await runScan(clock, scanner, { sync: true });
  const done = scanner.current()!;
  t.equal(done.state, 'done', `done: ${done.error}`);
  t.equal(done.pointsDone, 9);
  t.equal(done.remainingS, 0);
  const samples = store.samples(done.id);
  const plan = planScan(settings().plan);
  t.same(samples.map((s) => [s.index, s.thetaDeg, s.phiDeg]), plan.map((p) => [p.index, p.thetaDeg, p.phiDeg]), 'one row per point, in plan order');
  t.same(samples.map((s) => [s.thetaDeg, s.phiDeg]).slice(3, 6), [[20, 10], [10, 10], [0, 10]], 'the second line runs backwards');
  const antenna = new SimulatedAntenna(defaultAntennaConfig());
  for (const s of samples) t.same(s.values, [antenna.measureDb(s.thetaDeg, s.phiDeg, s.index, 0)], `point ${s.index}: the simulated antenna's value`);
  t.equal(samples[0].values[0] > -1, true, `boresight is near 0 dB: ${samples[0].values[0]}`);
  // The machine was at each point (power-on offset: the firmware counts from where it woke up).
  visited.forEach((v, i) => {
    t.ok(Math.abs(v.theta - powerOn.theta / 320 - samples[i].thetaDeg) < 1e-9, `theta at point ${i}`);
    t.ok(Math.abs(v.phi - powerOn.phi / 800 - samples[i].phiDeg) < 1e-9, `phi at point ${i}`);
  });
  for (let i = 1; i < samples.length; i++) t.ok(samples[i].timeS >= samples[i - 1].timeS + 0.2, `settle of 0.2 s between point ${i - 1} and ${i}`);
  t.equal(positioner.status().state, 'idle');
  t.doesNotThrow(() => positioner.moveTo(5, 5), 'the positioner is free once the scan is done');
});

t.test('while a scan runs, other motion commands and a second scan get POS_ERR_BUSY; stop aborts it and keeps the samples; resume finishes it', async (t) => {
  const { clock, positioner, scanner, store } = rig();
  scanner.start(settings(), {});
  clock.advanceBy(3e6);
  const busy = (fn: () => unknown, what: string) => t.throws(fn, { code: 'POS_ERR_BUSY' }, `${what} refused while scanning`);
  busy(() => positioner.moveTo(90, 90), 'a move');
  busy(() => positioner.home('both'), 'a homing');
  busy(() => positioner.claimMotion('scan', () => undefined), 'another claim');
  busy(() => scanner.start(settings(), {}), 'a second scan');
  // Let it measure a few points, then stop.
  while (scanner.current()!.pointsDone < 4) clock.advanceBy(0.1e6);
  positioner.stop();
  const aborted = scanner.current()!;
  t.equal(aborted.state, 'aborted');
  t.match(aborted.error, /stop/);
  const kept = store.samples(aborted.id);
  t.equal(kept.length, 4, 'the samples so far are kept');
  clock.runUntilIdle();
  t.equal(store.samples(aborted.id).length, 4, 'nothing is measured after the stop');
  t.doesNotThrow(() => positioner.moveTo(1, 1), 'the positioner is free after the stop');
  clock.runUntilIdle();
  const resumed = scanner.resume();
  t.equal(resumed.state, 'running');
  await runScan(clock, scanner, { sync: true });
  t.equal(scanner.current()!.state, 'done');
  t.same(store.samples(aborted.id).map((s) => s.index), [0, 1, 2, 3, 4, 5, 6, 7, 8], 'every point once: resumed at the first point not done');
  t.throws(() => scanner.resume(), { code: 'SCAN_ERR_STATE' }, 'a done scan cannot be resumed');
});

t.test('pause waits for the point in progress, frees the positioner, and resume goes on where it paused', async (t) => {
  const { clock, positioner, scanner, store } = rig();
  scanner.start(settings(), {});
  clock.advanceBy(1e6);
  const paused = scanner.pause();
  t.equal(paused.state, 'running', 'still running until the point in progress is measured');
  clock.runUntilIdle();
  const p = scanner.current()!;
  t.equal(p.state, 'paused');
  const doneAtPause = p.pointsDone;
  t.ok(doneAtPause >= 1 && doneAtPause < 9, `paused after ${doneAtPause} points`);
  t.doesNotThrow(() => positioner.moveTo(40, 40), 'a paused scan leaves the positioner free');
  clock.runUntilIdle();
  t.equal(scanner.current()!.elapsedS, p.elapsedS, 'elapsed time does not run while paused');
  scanner.resume();
  await runScan(clock, scanner, { sync: true });
  t.equal(scanner.current()!.state, 'done');
  t.same(store.samples(p.id).map((s) => s.index), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  t.throws(() => scanner.pause(), { code: 'SCAN_ERR_STATE' }, 'nothing to pause');
});

t.test('a scan stopped mid-way and a server restart: the new server finds it aborted in the SQLite file and resumes it to the end', async (t) => {
  const file = tmpDb(t);
  const first = rig(new SqliteScanStore(file));
  first.scanner.start(settings({ plan: { kind: 'phi_cuts', phiDeg: [0, 90], theta: { startDeg: 0, stopDeg: 40, stepDeg: 10 } } }), { plan: 'as sent' });
  while (first.scanner.current()!.pointsDone < 3) first.clock.advanceBy(0.1e6);
  const id = first.scanner.current()!.id;
  // The process dies: no stop, no clean end; the store is closed as the OS would drop the file handle.
  first.store.close();

  const second = rig(new SqliteScanStore(file));
  t.teardown(() => second.store.close());
  const found = second.scanner.current()!;
  t.equal(found.id, id);
  t.equal(found.state, 'aborted', 'a scan interrupted by a restart is aborted');
  t.match(found.error, /resume/);
  t.equal(found.pointsDone, 3);
  t.same(found.request, { plan: 'as sent' }, 'the request is kept');
  second.scanner.resume();
  await runScan(second.clock, second.scanner, { sync: true });
  const end = second.scanner.current()!;
  t.equal(end.state, 'done');
  t.equal(end.pointsDone, 10);
  const samples = second.store.samples(id);
  t.same(samples.map((s) => s.index), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'every point once across the restart');
  t.ok(samples[3].timeS > samples[2].timeS, 'scan time goes on after the restart');
  const antenna = new SimulatedAntenna(defaultAntennaConfig());
  t.same(samples[5].values, [antenna.measureDb(samples[5].thetaDeg, samples[5].phiDeg, 5, 0)], 'the same values as an unbroken scan');
});

t.test('samples per point are averaged; dwell comes before each sample', async (t) => {
  const { clock, scanner, store } = rig();
  const one = settings({ plan: { kind: 'points', points: [{ thetaDeg: 0, phiDeg: 0 }] }, samples: 4, dwellS: 0.5, settleS: 0 });
  scanner.start(one, {});
  await runScan(clock, scanner, { sync: true });
  const [row] = store.samples(scanner.current()!.id);
  const antenna = new SimulatedAntenna(defaultAntennaConfig());
  const mean = [0, 1, 2, 3].map((k) => antenna.measureDb(0, 0, 0, k)).reduce((a, b) => a + b, 0) / 4;
  t.ok(Math.abs(row.values[0] - mean) < 1e-6, `the mean of the 4 samples: ${row.values[0]} vs ${mean}`);
  t.equal(row.timeS, 2, 'four dwells of 0.5 s (the move from 0, 0 takes no time)');
});

t.test('sweep: continuous motion along each line, each sample stamped with the position at its time', async (t) => {
  const { clock, scanner, store } = rig();
  scanner.start(settings({ mode: 'sweep', plan: { kind: 'phi_cuts', phiDeg: [0, 30], theta: { startDeg: 0, stopDeg: 40, stepDeg: 10 } }, sampleIntervalS: 0.25, settleS: 0.1 }), {});
  await runScan(clock, scanner, { sync: true });
  const info = scanner.current()!;
  t.equal(info.state, 'done', String(info.error));
  t.equal(info.pointsDone, 10);
  const samples = store.samples(info.id);
  t.ok(samples.length > 20, `many samples along two 40 deg sweeps: ${samples.length}`);
  const line0 = samples.filter((s) => s.phiDeg === 0);
  const line1 = samples.filter((s) => s.phiDeg === 30);
  t.ok(line0.length > 5 && line1.length > 5, 'samples on both cuts');
  const rising = line0.every((s, i) => i === 0 || s.thetaDeg >= line0[i - 1].thetaDeg);
  const falling = line1.every((s, i) => i === 0 || s.thetaDeg <= line1[i - 1].thetaDeg);
  t.ok(rising && falling, 'theta rises along the first cut and falls along the second');
  t.ok(line0.some((s) => s.thetaDeg > 0 && s.thetaDeg < 40 && s.thetaDeg % 10 !== 0), 'samples between the grid points: taken while moving');
  t.same(samples.map((s) => s.index), samples.map((_, i) => i), 'sample numbers in order');
  const antenna = new SimulatedAntenna(defaultAntennaConfig());
  const s = line0[3];
  t.same(s.values, [antenna.measureDb(s.thetaDeg, s.phiDeg, s.index, 0)], 'the value at the stamped position');
});

t.test('exec source: the point in the environment and as arguments, numbers from stdout; failing points marked, the scan goes on', async (t) => {
  const { clock, scanner, store } = rig();
  // Fails on every third point, prints three numbers on the others.
  const command = 'test $((POINT_INDEX % 3)) -ne 1 || { echo "no lock on point $3" >&2; exit 3; }; echo "theta=$THETA_DEG phi=$2 level -12.5 dB"';
  scanner.start(settings({ source: { kind: 'exec', command, timeoutS: 10 } }), {});
  await runScan(clock, scanner);
  const info = scanner.current()!;
  t.equal(info.state, 'done');
  t.equal(info.pointsDone, 9);
  t.equal(info.pointsFailed, 3);
  const samples = store.samples(info.id);
  for (const s of samples) {
    if (s.index % 3 === 1) {
      t.same(s.values, [], `point ${s.index} has no value`);
      t.match(s.error, new RegExp(`exited with status 3: no lock on point ${s.index}`), `point ${s.index}: the error says why`);
    } else {
      t.same(s.values, [s.thetaDeg, s.phiDeg, -12.5], `point ${s.index}: every number printed`);
      t.equal(s.error, null);
    }
  }
});

t.test('exec source with on_error stop: the first failing point ends the scan failed, the samples before it kept', async (t) => {
  const { clock, positioner, scanner, store } = rig();
  scanner.start(settings({ source: { kind: 'exec', command: 'test "$POINT_INDEX" -lt 2 && echo 1.5', timeoutS: 10 }, onError: 'stop' }), {});
  await runScan(clock, scanner);
  const info = scanner.current()!;
  t.equal(info.state, 'failed');
  t.match(info.error, /point 2 .*failed.*on_error/);
  t.same(store.samples(info.id).map((s) => [s.index, s.values]), [[0, [1.5]], [1, [1.5]], [2, []]]);
  t.doesNotThrow(() => positioner.moveTo(3, 3), 'the positioner is free');
});

t.test('exec source that hangs: the timeout (a clock timer) kills it and marks the point', async (t) => {
  const { clock, scanner, store } = rig();
  // Not `exec sleep`: the shell stays, with its child, and the timeout must kill both (the pipe closes only then).
  const command = 'if [ "$POINT_INDEX" = 1 ]; then sleep 30; echo 1; fi; echo -3';
  scanner.start(settings({ plan: { kind: 'points', points: [{ thetaDeg: 0, phiDeg: 0 }, { thetaDeg: 1, phiDeg: 0 }, { thetaDeg: 2, phiDeg: 0 }] }, source: { kind: 'exec', command, timeoutS: 5 } }), {});
  // Run until point 1's command is running, then let 5 s of scan time pass.
  while (store.samples(scanner.current()!.id).length < 1 || !scanner.pendingMeasurement()) {
    const p = scanner.pendingMeasurement();
    if (p && store.samples(scanner.current()!.id).length < 1) {
      await p;
      continue;
    }
    clock.advanceTo(clock.nextTimerUs()!);
  }
  const hung = scanner.pendingMeasurement()!;
  clock.advanceBy(5e6);
  await hung;
  await runScan(clock, scanner);
  const samples = store.samples(scanner.current()!.id);
  t.same(samples.map((s) => s.values), [[-3], [], [-3]]);
  t.match(samples[1].error, /no answer within 5 s/);
  t.equal(scanner.current()!.state, 'done');
});

t.test('a positioner fault during a scan ends it failed, with the fault in words', async (t) => {
  const { clock, sim, scanner, store } = rig();
  scanner.start(settings(), {});
  while (scanner.current()!.pointsDone < 2) clock.advanceBy(0.1e6);
  sim.phi.faults.driver = 'overcurrent (simulated)';
  clock.runUntilIdle();
  const info = scanner.current()!;
  t.equal(info.state, 'failed');
  t.match(info.error, /faulted: .*overcurrent/);
  const kept = store.samples(info.id).length;
  t.ok(kept >= 2 && kept < 9, `the samples before the fault are kept: ${kept}`);
});

t.test('http source: the point POSTed as JSON, the numbers of the JSON answer recorded; an error answer or a non-JSON body marks the point', async (t) => {
  const seen: unknown[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const point = JSON.parse(body) as { index: number; theta_deg: number; phi_deg: number };
      seen.push(point);
      if (point.index === 1) return void res.writeHead(500).end('{"error":"VNA not ready"}');
      if (point.index === 2) return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(point.index === 0 ? { s21_db: -20.5, phase_deg: 45 } : { values: [point.theta_deg, -3] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => server.close());
  const { port } = server.address() as AddressInfo;
  const { clock, scanner, store } = rig();
  const points = [0, 1, 2, 3].map((i) => ({ thetaDeg: i, phiDeg: 0 }));
  scanner.start(settings({ plan: { kind: 'points', points }, source: { kind: 'http', url: `http://127.0.0.1:${port}/measure`, timeoutS: 5 } }), {});
  await runScan(clock, scanner);
  const samples = store.samples(scanner.current()!.id);
  t.same(seen[0], { theta_deg: 0, phi_deg: 0, index: 0, sample: 0 }, 'the point as JSON');
  t.same(samples.map((s) => s.values), [[-20.5, 45], [], [], [3, -3]]);
  t.match(samples[1].error, /answered HTTP 500: .*VNA not ready/);
  t.match(samples[2].error, /not JSON/);
  t.equal(scanner.current()!.pointsFailed, 2);
});

t.test('trigger source on the simulated backend: a pulse on the trigger output at each point, after the motion has ended', async (t) => {
  const clock = new VirtualClock();
  const machine = createSimulatedPositioner(clock, defaultConfig());
  const { scanner, store } = createScanner({ positioner: machine.positioner, clock, store: new MemoryScanStore(), now: NOW });
  const busyAtEdge: boolean[] = [];
  machine.trigger.onEdge = () => busyAtEdge.push(machine.controller.busy());
  scanner.start(settings({ plan: { kind: 'points', points: [{ thetaDeg: 0, phiDeg: 0 }, { thetaDeg: 5, phiDeg: 5 }] }, source: { kind: 'trigger', pulseMs: 10, then: null } }), {});
  await runScan(clock, scanner, { clockDriven: true });
  t.equal(scanner.current()!.state, 'done');
  const pulses = machine.trigger.pulses();
  t.equal(pulses.length, 2, 'one pulse per point');
  for (const p of pulses) t.equal(p.endUs - p.startUs, 10_000, 'a 10 ms pulse');
  t.same(busyAtEdge, [false, false, false, false], 'every edge while no motion runs');
  t.equal(machine.trigger.high, false, 'the output ends low');
  t.same(store.samples(scanner.current()!.id).map((s) => [s.values, s.error]), [[[], null], [[], null]], 'a bare trigger leaves the value empty, with no error');
});

t.test('a stop while paused aborts the scan; it can still be resumed', async (t) => {
  const { clock, positioner, scanner, store } = rig();
  scanner.start(settings(), {});
  while (scanner.current()!.pointsDone < 2) clock.advanceBy(0.1e6);
  scanner.pause();
  clock.runUntilIdle();
  t.equal(scanner.current()!.state, 'paused');
  positioner.stop();
  const aborted = scanner.current()!;
  t.equal(aborted.state, 'aborted');
  t.match(aborted.error, /while paused/);
  scanner.resume();
  await runScan(clock, scanner, { sync: true });
  t.same(store.samples(aborted.id).map((s) => s.index), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
});

t.test('a store that fails (disk full) ends the scan failed with the reason; nothing escapes into the clock', async (t) => {
  class FullDisk extends MemoryScanStore {
    override addSample(record: Parameters<MemoryScanStore['addSample']>[0], sample: Parameters<MemoryScanStore['addSample']>[1]): void {
      if (this.samples(record.id).length >= 3) throw new Error('SQLITE_FULL: database or disk is full');
      super.addSample(record, sample);
    }
  }
  const { clock, positioner, scanner, store } = rig(new FullDisk());
  scanner.start(settings(), {});
  t.doesNotThrow(() => clock.runUntilIdle(), 'the clock runs on');
  const info = scanner.current()!;
  t.equal(info.state, 'failed');
  t.match(info.error, /internal error: SQLITE_FULL/);
  t.equal(store.samples(info.id).length, 3, 'the samples saved before are there');
  t.doesNotThrow(() => positioner.moveTo(1, 1), 'the positioner is free');
});

t.test('an exec sweep: measurements answered later are recorded in order, and the scan ends', async (t) => {
  const { clock, scanner, store } = rig();
  scanner.start(settings({ mode: 'sweep', plan: { kind: 'theta_cuts', thetaDeg: [10], phi: { startDeg: 0, stopDeg: 4, stepDeg: 2 } }, sampleIntervalS: 0.2, source: { kind: 'exec', command: 'echo "$PHI_DEG"', timeoutS: 5 } }), {});
  await runScan(clock, scanner);
  const info = scanner.current()!;
  t.equal(info.state, 'done', String(info.error));
  const samples = store.samples(info.id);
  t.ok(samples.length >= 3, `samples: ${samples.length}`);
  for (const s of samples) t.same(s.values, [s.phiDeg], `sample ${s.index}: the command saw its stamped position`);
});

t.test('trigger then exec: the pulse first, then the command reads the value', async (t) => {
  const clock = new VirtualClock();
  const machine = createSimulatedPositioner(clock, defaultConfig());
  const { scanner, store } = createScanner({ positioner: machine.positioner, clock, store: new MemoryScanStore(), now: NOW });
  const plan = { kind: 'points' as const, points: [{ thetaDeg: 3, phiDeg: 0 }, { thetaDeg: 6, phiDeg: 0 }] };
  scanner.start(settings({ plan, source: { kind: 'trigger', pulseMs: 20, then: { kind: 'exec', command: 'echo "-7.5"', timeoutS: 5 } } }), {});
  // The pulse ends on the clock; the command then runs outside it: drive both.
  while (scanner.active()) {
    const pending = scanner.pendingMeasurement();
    if (pending) await Promise.race([pending, new Promise((r) => setTimeout(r, 5))]);
    const next = clock.nextTimerUs();
    if (next !== null && (!scanner.pendingMeasurement() || machine.trigger.high)) clock.advanceTo(next);
  }
  t.equal(scanner.current()!.state, 'done');
  t.equal(machine.trigger.pulses().length, 2);
  t.same(store.samples(scanner.current()!.id).map((s) => s.values), [[-7.5], [-7.5]]);
});
