/**
 * `positioner grbl-setup` against the simulated grbl board on a real pty pair:
 * reads `$$` against the config, writes the differing settings one at a time
 * (the board models the EEPROM write time and the bytes a streamed write
 * loses), and reads them back. The CLI runs on wall time, as it does for a
 * user; every wait in it is on the board's answer.
 */
import t, { type Test } from 'tap';
import { createSimGrblBoard, defaultSimSettings } from '../../cli/assemble';
import { exitCodeOf, formatReport, grblSetup } from '../../cli/grbl-setup';
import { defaultConfig } from '../../firmware/config';
import { STOCK_BUILD, XY_BUILD } from '../../sim/grbl-controller';
import { PtyPair } from '../../sim/pty-pair';
import { attachBoard } from '../../sim/serial-peer';
import { WallClock } from '../../sim/wall-clock';

async function boardOnPty(t: Test, settings: Record<number, number>, build = XY_BUILD) {
  const pty = await new PtyPair().open();
  const config = { ...defaultConfig(), maxSpeedDegS: 30 };
  const peer = await attachBoard(pty.devicePath, 115200, (send) => createSimGrblBoard(new WallClock(1), config, defaultSimSettings(), send, { settings, build }));
  peer.board.board.powerUp();
  t.teardown(async () => {
    await peer.close();
    await pty.dispose();
  });
  return { pty, config, board: peer.board.board };
}

t.test('reads the board against the config, writes what differs send-response, and verifies', async (t) => {
  const { pty, config, board } = await boardOnPty(t, { 111: 1000, 27: 1, 23: 0 });
  const clock = new WallClock(1);
  const read = await grblSetup({ path: pty.hostPath, baudRate: 115200, config, write: false, clock });
  t.strictSame(read.settings.filter((r) => !r.ok).map((r) => [r.id, r.have, r.want]), [[23, 0, 3], [27, 1, 2], [111, 1000, 1800]]);
  t.equal(exitCodeOf(read), 1, 'exit 1: the board is not set up');
  t.match(formatReport(read), /to fix: positioner grbl-setup --serial .* --write +\(sends \$23=3 \$27=2 \$111=1800\)/);
  const written = await grblSetup({ path: pty.hostPath, baudRate: 115200, config, write: true, clock });
  t.strictSame(written.written, [{ id: 23, value: 3, answer: 'ok' }, { id: 27, value: 2, answer: 'ok' }, { id: 111, value: 1800, answer: 'ok' }]);
  t.equal(written.verified, true);
  t.equal(exitCodeOf(written), 0);
  t.equal(board.rxOverruns, 0, 'no byte lost while the EEPROM was written');
  t.equal(board.settings.get(111), 1800);
});

t.test('a build without single-axis homing and a config above 30 kHz are problems with what to change', async (t) => {
  const { pty } = await boardOnPty(t, {}, STOCK_BUILD);
  const report = await grblSetup({ path: pty.hostPath, baudRate: 115200, config: defaultConfig(), write: false, clock: new WallClock(1) });
  t.equal(exitCodeOf(report), 1);
  t.match(report.problems.join('\n'), /HOMING_SINGLE_AXIS_COMMANDS/);
  t.match(report.problems.join('\n'), /48000 steps\/s on phi.*at most 37\.5 deg\/s/);
});

t.test('no grbl on the port: exit 3 with what to check', async (t) => {
  const pty = await new PtyPair().open();
  t.teardown(() => pty.dispose());
  await t.rejects(grblSetup({ path: pty.hostPath, baudRate: 115200, config: defaultConfig(), write: false, clock: new WallClock(1), answerTimeoutMs: 300 }), { exitCode: 3, message: /no grbl banner/ });
  await t.rejects(grblSetup({ path: '/nonexistent/tty', baudRate: 115200, config: defaultConfig(), write: false, clock: new WallClock(1) }), { exitCode: 3, message: /cannot open/ });
});
