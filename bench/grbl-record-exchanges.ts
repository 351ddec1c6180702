/**
 * Records the scripted exchanges of sim/grbl-exchanges.ts against the real grbl 1.1h firmware (a board
 * started by ../shared/grbl-real/board.sh, fresh: its power-on position and the documented settings) and
 * writes what the firmware answered as test/fixtures/grbl-real-exchanges.json.
 *
 *   d=$(mktemp -d); ../shared/grbl-real/board.sh $d
 *   npx tsc -p . && node dist/bench/grbl-record-exchanges.js $d/tty [test/fixtures/grbl-real-exchanges.json]
 */
import fs from 'node:fs';
import { SerialPort } from 'serialport';
import { GRBL_EXCHANGES, LineCollector, runExchange, type ExchangeIo, type Transcript } from '../sim/grbl-exchanges';

/** The exchanges over a real serial port, in real time. */
export async function openRealIo(path: string): Promise<ExchangeIo & { close(): Promise<void> }> {
  const port = new SerialPort({ path, baudRate: 115200, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(e) : resolve())));
  const collector = new LineCollector(() => performance.now());
  port.on('data', (d: Buffer) => collector.push(d));
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  return {
    write: (bytes) => void port.write(bytes),
    wait: (ms) => sleep(ms),
    async waitUntil(pred, limitMs, what) {
      const deadline = Date.now() + limitMs;
      while (!pred()) {
        if (Date.now() > deadline) throw new Error(`${what} not seen within ${limitMs} ms; got ${JSON.stringify(collector.lines.slice(-5))}`);
        await sleep(5);
      }
    },
    lines: () => collector.lines,
    times: () => collector.times,
    nowMs: () => performance.now(),
    close: () => new Promise<void>((resolve) => port.close(() => resolve())),
  };
}

async function main(): Promise<void> {
  const [path, out = 'test/fixtures/grbl-real-exchanges.json'] = process.argv.slice(2);
  if (!path) {
    process.stderr.write('usage: node dist/bench/grbl-record-exchanges.js PTY [OUT.json]\n');
    process.exit(2);
  }
  const io = await openRealIo(path);
  const transcripts: Transcript[] = [];
  for (const exchange of GRBL_EXCHANGES) {
    const t0 = Date.now();
    transcripts.push(await runExchange(exchange, io));
    process.stdout.write(`${exchange.name}: ${transcripts[transcripts.length - 1].lines.length} lines in ${Date.now() - t0} ms\n`);
  }
  await io.close();
  const fixture = {
    firmware: 'grbl 1.1h (gnea/grbl v1.1h.20190825, HOMING_CYCLE_0 = X|Y, HOMING_SINGLE_AXIS_COMMANDS) on a simulated ATmega328P, ../shared/grbl-real',
    recordedWith: 'node dist/bench/grbl-record-exchanges.js <pty of a fresh ../shared/grbl-real/board.sh>',
    transcripts,
  };
  fs.writeFileSync(out, `${JSON.stringify(fixture, null, 1)}\n`);
  process.stdout.write(`wrote ${out}\n`);
}

if (require.main === module) void main();
