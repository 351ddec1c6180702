/**
 * Scans and the Hamlib rotctld server: while a scan holds the positioner a
 * tracker's `P` is refused (RPRT -9) rather than kept, so neither a kept
 * target nor the tracker disconnecting can disturb the scan; `S` aborts it
 * as POST /stop does.
 */
import t from 'tap';
import { createSimulatedPositioner } from '../../cli/assemble';
import { createScanner } from '../../cli/assemble-scan';
import { defaultConfig } from '../../firmware/config';
import { defaultScanSettings } from '../../firmware/scan';
import { MemoryScanStore } from '../../firmware/scan-store';
import { VirtualClock } from '../../sim/virtual-clock';
import { RawClient, serveRotctld } from '../helpers/rotctld';

function rig() {
  const clock = new VirtualClock();
  const { positioner } = createSimulatedPositioner(clock, defaultConfig());
  const { scanner } = createScanner({ positioner, clock, store: new MemoryScanStore() });
  const settings = defaultScanSettings({ kind: 'grid', theta: { startDeg: 0, stopDeg: 20, stepDeg: 10 }, phi: { startDeg: 0, stopDeg: 20, stepDeg: 10 }, order: 'serpentine' });
  return { clock, positioner, scanner, settings };
}

t.test('P during a scan is refused with RPRT -9; the tracker disconnecting leaves the scan running', async (t) => {
  const { clock, positioner, scanner, settings } = rig();
  const { port, log } = await serveRotctld(t, positioner);
  const client = await RawClient.open(t, port);
  scanner.start(settings, {});
  clock.advanceBy(0.3e6);
  t.equal(positioner.status().state, 'moving', 'the scan is moving');
  t.equal(await client.ask('P 10 45', 'rprt'), 'RPRT -9\n');
  t.match(log.join('\n'), /move refused: a scan is running/);
  client.socket.destroy();
  await client.closed;
  await new Promise((r) => setImmediate(r));
  clock.runUntilIdle();
  const info = scanner.current()!;
  t.equal(info.state, 'done', `the scan finished: ${info.error}`);
  t.equal(info.pointsDone, 9);
});

t.test('S aborts a scan as POST /stop does', async (t) => {
  const { clock, positioner, scanner, settings } = rig();
  const { port } = await serveRotctld(t, positioner);
  const client = await RawClient.open(t, port);
  scanner.start(settings, {});
  clock.advanceBy(1e6);
  t.equal(await client.ask('S', 'rprt'), 'RPRT 0\n');
  t.equal(scanner.current()!.state, 'aborted');
  t.equal(await client.ask('P 10 45', 'rprt'), 'RPRT 0\n', 'the positioner takes moves again');
});
