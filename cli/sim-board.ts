#!/usr/bin/env node
/**
 * `positioner-sim`: a simulated stepper controller on a serial line, for
 * anyone without the hardware. It opens a serial device (one end of a pty
 * pair) and behaves as the board would: the grbl 1.1 wire protocol, or
 * ConfigurableFirmata with AccelStepperFirmata, over the simulated axes of
 * `positioner serve`'s simulation.
 *
 *   positioner-sim grbl --pty          makes a socat pty pair and prints the end
 *                                      to give `positioner serve --serial`
 *   positioner-sim firmata --serial PATH  listens on an existing device
 *
 * Exit codes: 0 stopped by a signal; 1 the device could not be opened or
 * socat failed; 2 usage or config error.
 */
import yargs from 'yargs';
import { createSimFirmataBoard, createSimGrblBoard, DEFAULT_BAUD } from './assemble';
import { loadConfig } from './config-file';
import { PtyPair } from '../sim/pty-pair';
import { attachBoard } from '../sim/serial-peer';
import { WallClock } from '../sim/wall-clock';
import { STOCK_BUILD, XY_BUILD } from '../sim/grbl-controller';

const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

function fail(message: string, code: number): never {
  process.stderr.write(`positioner-sim: error: ${message}\n`);
  process.exit(code);
}

interface Args {
  board: 'grbl' | 'firmata';
  serial?: string;
  pty: boolean;
  baud?: number;
  config?: string;
  'time-scale': number;
  quiet: boolean;
  json: boolean;
  'grbl-build': 'xy' | 'stock';
}

async function run(argv: Args): Promise<void> {
  if (argv.serial && argv.pty) fail('give either --serial PATH or --pty, not both', EXIT.usage);
  if (!argv.serial && !argv.pty) fail('give --serial PATH (a device to listen on) or --pty (make a pty pair)', EXIT.usage);
  if (!(argv['time-scale'] > 0)) fail(`--time-scale must be a positive number, got ${argv['time-scale']}`, EXIT.usage);
  let loaded;
  try {
    loaded = loadConfig(argv.config);
  } catch (e) {
    fail((e as Error).message, EXIT.usage);
  }
  const baud = argv.baud ?? DEFAULT_BAUD[argv.board];
  let pty: PtyPair | null = null;
  let device = argv.serial;
  if (argv.pty) {
    try {
      pty = await new PtyPair().open();
    } catch (e) {
      fail((e as Error).message, EXIT.failed);
    }
    device = pty.devicePath;
  }
  const clock = new WallClock(argv['time-scale']);
  const say = (event: Record<string, unknown>, human: string) => {
    if (argv.quiet) return;
    process.stdout.write(argv.json ? `${JSON.stringify(event)}\n` : `positioner-sim: ${human}\n`);
  };
  let peer;
  try {
    peer = await attachBoard(device!, baud, (send) =>
      argv.board === 'grbl'
        ? createSimGrblBoard(clock, loaded.config, loaded.sim, send, { build: argv['grbl-build'] === 'stock' ? STOCK_BUILD : XY_BUILD })
        : createSimFirmataBoard(clock, loaded.config, loaded.sim, send),
    );
  } catch (e) {
    await pty?.dispose();
    fail(`cannot open ${device}: ${(e as Error).message}`, EXIT.failed);
  }
  const hostPath = pty ? pty.hostPath : null;
  say(
    { event: 'listening', board: argv.board, device, host: hostPath, baud },
    hostPath
      ? `simulated ${argv.board} board ready; connect with: positioner serve --driver ${argv.board} --serial ${hostPath}`
      : `simulated ${argv.board} board listening on ${device} at ${baud} baud`,
  );
  const onEvent = (e: { type: string; detail: string }) => {
    if (e.type === 'line' || e.type === 'realtime' || e.type === 'move') return;
    say({ event: e.type, detail: e.detail }, `${e.type}: ${e.detail}`);
  };
  // Both boards report resets, halts and alarms the same way.
  (peer.board.board as { onEvent(listener: typeof onEvent): unknown }).onEvent(onEvent);
  peer.board.board.powerUp();
  const shutdown = async (signal: string) => {
    say({ event: 'exit', signal }, `${signal}, closing`);
    await peer.close();
    await pty?.dispose();
    process.exit(EXIT.ok);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

export function main(args: string[]): Promise<unknown> {
  return yargs(args)
    .scriptName('positioner-sim')
    .usage('$0 <board> [options]\n\nA simulated stepper controller on a serial line, to run `positioner serve --driver <board>` without hardware.')
    .command(
      '$0 <board>',
      'run a simulated board',
      (y) =>
        y
          .positional('board', { choices: ['grbl', 'firmata'] as const, demandOption: true, describe: 'which controller to simulate: grbl 1.1, or ConfigurableFirmata with AccelStepperFirmata' })
          .option('serial', { type: 'string', describe: 'serial device to listen on (one end of a pty pair)' })
          .option('pty', { type: 'boolean', default: false, describe: 'make a socat pty pair and print the end to give positioner serve' })
          .option('baud', { type: 'number', describe: 'baud rate (default 115200 for both; ConfigurableFirmata 2.x builds use 57600)' })
          .option('config', { alias: 'c', type: 'string', describe: 'positioner JSON config file: the machine to simulate (see README)' })
          .option('time-scale', { type: 'number', default: 1, describe: 'run simulated time this many times faster than real time' })
          .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'print nothing but errors' })
          .option('json', { type: 'boolean', default: false, describe: 'print events as JSON lines' })
          .option('grbl-build', {
            choices: ['xy', 'stock'] as const,
            default: 'xy' as const,
            describe: 'grbl only: the build docs/hardware.md asks for (X|Y homing cycle, single-axis homing), or an unmodified config.h (homes Z first, no $HX/$HY)',
          }),
      (argv) => run(argv as unknown as Args),
    )
    .strict()
    .fail((msg, err, y) => {
      if (err) fail(err.message, EXIT.failed);
      process.stderr.write(`${y.help()}\n`);
      fail(msg, EXIT.usage);
    })
    .help()
    .alias('help', 'h')
    .version()
    .parseAsync();
}

if (require.main === module) {
  void main(process.argv.slice(2));
}
