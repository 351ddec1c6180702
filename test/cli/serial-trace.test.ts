/**
 * `positioner serve --trace-serial`: the bytes shown as text with control
 * bytes escaped, binary chunks as hex; a server on a grbl board over a pty
 * shows the reset it sends and the banner the board answers; the simulation
 * refuses the flag.
 */
import t from 'tap';
import { createSimGrblBoard, defaultSimSettings } from '../../cli/assemble';
import { startServer } from '../../cli/serve';
import { formatSerialBytes } from '../../cli/serial-trace';
import { defaultConfig } from '../../firmware/config';
import { PtyPair } from '../../sim/pty-pair';
import { attachBoard } from '../../sim/serial-peer';
import { WallClock } from '../../sim/wall-clock';
import { until } from '../helpers/cli';

t.test('text stays text with \\r, \\n, \\\\ and control bytes escaped; mostly-binary chunks are hex', async (t) => {
  t.equal(formatSerialBytes(Buffer.from("ok\r\nGrbl 1.1h ['$' for help]\r\n", 'latin1')), "ok\\r\\nGrbl 1.1h ['$' for help]\\r\\n");
  t.equal(formatSerialBytes(Buffer.from([0x18])), '18', 'a lone soft reset is not text');
  t.equal(formatSerialBytes(Buffer.from('$H\n\x18?', 'latin1')), '$H\\n\\x18?', 'a control byte inside text is escaped');
  t.equal(formatSerialBytes(Buffer.from('a\\b', 'latin1')), 'a\\\\b', 'a backslash is doubled, so escapes stay unambiguous');
  t.equal(formatSerialBytes(Buffer.from([0xf0, 0x62, 0x06, 0x00, 0xf7])), 'f0 62 06 00 f7', 'Firmata sysex as hex');
  t.equal(formatSerialBytes(Buffer.alloc(0)), '');
});

t.test('serve --trace-serial on a grbl board: what the driver sends and what the board answers, one line a chunk', async (t) => {
  const pty = await new PtyPair().open();
  const peer = await attachBoard(pty.devicePath, 115200, (send) => createSimGrblBoard(new WallClock(20), defaultConfig(), defaultSimSettings(), send));
  const lines: string[] = [];
  const running = await startServer({ port: 0, host: '127.0.0.1', driver: 'grbl', serial: pty.hostPath, traceSerial: (line) => lines.push(line) });
  peer.board.board.powerUp();
  t.teardown(async () => {
    await running.close();
    await peer.close();
    await pty.dispose();
  });
  await until('the banner in the trace', () => lines.some((l) => / <- .*Grbl 1\.1/.test(l)), 20_000);
  t.ok(lines.every((l) => /^serial +\d+\.\d{3} (->|<-) /.test(l)), `every line is stamped and directed: ${lines.slice(0, 3).join(' | ')}`);
  t.ok(lines.some((l) => / -> /.test(l)), 'what the driver wrote is there');
});

t.test('serve --trace-serial with the simulation is a usage error that says what it is for', async (t) => {
  await t.rejects(startServer({ port: 0, host: '127.0.0.1', traceSerial: () => undefined }), { code: 'CLI_ERR_CONFIG_FILE' }, 'a config error: exit 2 from the CLI');
  await t.rejects(startServer({ port: 0, host: '127.0.0.1', traceSerial: () => undefined }), /use it with --driver grbl or --driver firmata/);
});
