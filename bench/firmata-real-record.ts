/**
 * Records what the real ConfigurableFirmata 3.3.0 (../shared/firmata-real:
 * the sketch on a simulated ATmega328P) answers to a few scripted exchanges,
 * into test/fixtures/firmata-real-exchanges.json. test/sim/firmata-board.test.ts
 * replays the same host bytes, at the same times, against the simulated board
 * and compares. Raw bytes, no driver: what the firmware does, not what our
 * driver makes of it.
 *
 * Scenarios (each starts from SYSTEM_RESET and configures two step/dir
 * steppers on D2/D5 and D3/D6):
 *   handshake   version, firmware name, capabilities, analog mapping;
 *   stop        both at 8,000 steps/s, 4,000 steps/s^2; ACCELSTEPPER_STOP each;
 *               then TO back: AccelStepper runs on in the old direction first;
 *   stop-zero   the same, with ZERO after the STOPs: the move back starts from rest;
 *   multi-stop  MULTISTEPPER_STOP on a group whose steppers run on their own (TO);
 *   rates       both asked for 20,000 steps/s, then one stopped: the loop's ceiling;
 *   leak        CONFIG again and again without SYSTEM_RESET: when it stops answering.
 * The bridge's log lines (STOP-PROBE, MOVE-END) of each scenario are kept too.
 *
 * Run (board at 57600 baud, `board.sh DIR` started first):
 *   npx tsc -p . && node dist/bench/firmata-real-record.js DIR [57600]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { SerialPort } from 'serialport';
import { ACCEL, encodeCustomFloat, encodeInt32, FIRMATA } from '../hal/firmata-protocol';

const dir = process.argv[2];
const baudRate = Number(process.argv[3] ?? 57600);
if (!dir) {
  console.error('usage: node dist/bench/firmata-real-record.js DIR [baud]   (DIR: where board.sh runs the real firmware)');
  process.exit(2);
}

export interface RecordedStep {
  /** Milliseconds after the scenario started. */
  atMs: number;
  sent: string;
}

export interface RecordedScenario {
  name: string;
  steps: RecordedStep[];
  /** Everything the board said, split at each step: replies[i] came after steps[i] and before steps[i + 1]. */
  replies: string[];
  bridge: string[];
}

const sx = (...data: number[]) => [FIRMATA.START_SYSEX, FIRMATA.ACCELSTEPPER, ...data, FIRMATA.END_SYSEX];
const CONFIG = [...sx(ACCEL.CONFIG, 0, 0x10, 2, 5, 0), ...sx(ACCEL.CONFIG, 1, 0x10, 3, 6, 0)];
const speed = (dev: number, v: number) => sx(ACCEL.SET_SPEED, dev, ...encodeCustomFloat(v));
const accel = (dev: number, a: number) => sx(ACCEL.SET_ACCELERATION, dev, ...encodeCustomFloat(a));
const to = (dev: number, steps: number) => sx(ACCEL.TO, dev, ...encodeInt32(steps));
const report = (dev: number) => sx(ACCEL.REPORT_POSITION, dev);
const stop = (dev: number) => sx(ACCEL.STOP, dev);
const zero = (dev: number) => sx(ACCEL.ZERO, dev);
const both = (f: (dev: number) => number[]) => [...f(0), ...f(1)];

/** Each scenario: a list of [wait ms before, bytes]. */
const SCENARIOS: Record<string, [number, number[]][]> = {
  handshake: [
    [0, [FIRMATA.SYSTEM_RESET]],
    [100, [FIRMATA.REPORT_VERSION]],
    [300, [FIRMATA.START_SYSEX, FIRMATA.QUERY_FIRMWARE, FIRMATA.END_SYSEX]],
    [300, [FIRMATA.START_SYSEX, FIRMATA.CAPABILITY_QUERY, FIRMATA.END_SYSEX]],
    [300, [FIRMATA.START_SYSEX, FIRMATA.ANALOG_MAPPING_QUERY, FIRMATA.END_SYSEX]],
    [300, []],
  ],
  stop: [
    [0, [FIRMATA.SYSTEM_RESET, ...CONFIG]],
    [100, [...speed(0, 8000), ...accel(0, 4000), ...to(0, 100000), ...speed(1, 8000), ...accel(1, 4000), ...to(1, 100000)]],
    [1500, [...stop(0), ...stop(1)]],
    [400, both(report)],
    [100, [...speed(0, 2000), ...to(0, -50), ...speed(1, 2000), ...to(1, -50)]],
    [300, both(report)],
    [6000, both(report)],
  ],
  'stop-zero': [
    [0, [FIRMATA.SYSTEM_RESET, ...CONFIG]],
    [100, [...speed(0, 8000), ...accel(0, 4000), ...to(0, 100000), ...speed(1, 8000), ...accel(1, 4000), ...to(1, 100000)]],
    [1500, [...stop(0), ...stop(1), ...zero(0), ...zero(1), ...both(report)]],
    [400, [...speed(0, 2000), ...to(0, -50), ...speed(1, 2000), ...to(1, -50)]],
    [300, both(report)],
    [300, both(report)],
  ],
  'multi-stop': [
    [0, [FIRMATA.SYSTEM_RESET, ...CONFIG, ...sx(ACCEL.MULTI_CONFIG, 0, 0, 1)]],
    [100, [...speed(0, 1000), ...to(0, 100000), ...speed(1, 1000), ...to(1, 100000)]],
    [1000, sx(ACCEL.MULTI_STOP, 0)],
    [500, both(report)],
    [500, [...stop(0), ...stop(1)]],
    [300, []],
  ],
  rates: [
    [0, [FIRMATA.SYSTEM_RESET, ...CONFIG]],
    [100, [...speed(0, 20000), ...accel(0, 20000), ...to(0, 1000000), ...speed(1, 20000), ...accel(1, 20000), ...to(1, 1000000)]],
    [1000, both(report)],
    [1000, both(report)],
    [0, stop(0)],
    [1000, both(report)],
    [0, stop(1)],
    [300, []],
  ],
  leak: [
    [0, [FIRMATA.SYSTEM_RESET, ...CONFIG, ...both(report)]],
    ...Array.from({ length: 9 }, (): [number, number[]] => [200, [...CONFIG, ...both(report)]]),
    [300, []],
  ],
};

async function main(): Promise<void> {
  const port = new SerialPort({ path: `${dir}/tty`, baudRate, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(e) : resolve())));
  let rx: number[] = [];
  port.on('data', (d: Buffer) => rx.push(...d));
  await sleep(300);
  const out: RecordedScenario[] = [];
  for (const [name, script] of Object.entries(SCENARIOS)) {
    const logStart = readFileSync(`${dir}/bridge.log`, 'utf8').length;
    await sleep(300);
    rx = [];
    const t0 = Date.now();
    const scenario: RecordedScenario = { name, steps: [], replies: [], bridge: [] };
    for (const [waitMs, bytes] of script) {
      await sleep(waitMs);
      if (scenario.steps.length > 0) scenario.replies.push(Buffer.from(rx.splice(0)).toString('hex'));
      scenario.steps.push({ atMs: Date.now() - t0, sent: Buffer.from(bytes).toString('hex') });
      if (bytes.length > 0) port.write(Buffer.from(bytes));
    }
    await sleep(200);
    scenario.replies.push(Buffer.from(rx.splice(0)).toString('hex'));
    scenario.bridge = readFileSync(`${dir}/bridge.log`, 'utf8')
      .slice(logStart)
      .split('\n')
      .filter((l) => /STOP-PROBE|MOVE-END|CTL|LAG/.test(l))
      .map((l) => l.replace(/^\[wall [0-9.]+ /, '['));
    out.push(scenario);
    console.log(`${name}: ${scenario.steps.length} steps, ${scenario.replies.join('').length / 2} bytes back`);
  }
  await new Promise<void>((resolve) => port.close(() => resolve()));
  const fixture = { firmware: 'ConfigurableFirmata 3.3.0 + AccelStepperFirmata (AccelStepper 1.57), Uno on simavr (../shared/firmata-real)', baudRate, recordedAt: new Date().toISOString(), scenarios: out };
  writeFileSync('test/fixtures/firmata-real-exchanges.json', `${JSON.stringify(fixture, null, 1)}\n`);
  console.log('wrote test/fixtures/firmata-real-exchanges.json');
}

void main();
