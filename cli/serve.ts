/**
 * `positioner serve`: the firmware on a wall clock, on the simulated hardware
 * or on a board over a serial line (`driver`), serving the REST API until
 * SIGINT/SIGTERM.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RotctldServer } from '../api/rotctld';
import { createApiServer } from '../api/server';
import { WallClock } from '../sim/wall-clock';
import type { MotionController } from '../hal/motion-controller';
import type { AxisPair } from '../hal/axes';
import type { Positioner } from '../firmware/positioner';
import type { SimAxis } from '../sim/sim-axis';
import { createFirmataPositioner, createGrblPositioner, createSimulatedPositioner, DEFAULT_BAUD, type DriverKind } from './assemble';
import { ConfigFileError, loadConfig } from './config-file';
import { serialTracer } from './serial-trace';
import type { Clock } from '../hal/clock';
import { DEFAULT_SCAN_DB } from '../api/scan-store';
import { createScanner } from './assemble-scan';

export interface ServeOptions {
  host: string;
  port: number;
  configPath?: string;
  /** Simulated time runs this many times faster than real time (1 = real time). */
  timeScale?: number;
  /** Home both axes as the server starts. */
  home?: boolean;
  /** Receives one line per state change (moving, arrived, stopped, fault). */
  log?: (line: string) => void;
  /** Called with the URL once listening, before anything moves (so it is the first thing said). */
  announce?: (url: string, hardware: string) => void;
  /** Hardware: the simulation (default) or a board on a serial line; overrides the config file's `driver`. */
  driver?: DriverKind;
  serial?: string;
  baud?: number;
  /** Receives one line per chunk on the serial line (`--trace-serial`); boards only. */
  traceSerial?: (line: string) => void;
  /** Also serve the Hamlib rotctld protocol on this TCP port (same host; 0 picks a free one). */
  rotctldPort?: number;
  /** SQLite file for scans and their results (default POSITIONER_SCAN_DB or ./positioner-scans.db). */
  scanDb?: string;
  /** Called with host:port once the rotctld server listens. */
  announceRotctld?: (address: string) => void;
}

export interface RunningServer {
  positioner: Positioner;
  controller: MotionController;
  /** The simulated axes, with --driver sim only. */
  sim?: AxisPair<SimAxis>;
  /** What the positioner runs on, for the start-up line: "simulated positioner" or "grbl on /dev/ttyUSB0". */
  hardware: string;
  url: string;
  server: http.Server;
  /** The rotctld server's TCP port, when one was asked for. */
  rotctldPort?: number;
  close(): Promise<void>;
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const { config, sim, driver: fromFile, antenna } = loadConfig(opts.configPath);
  const kind = opts.driver ?? fromFile.type ?? 'sim';
  const serialPath = opts.serial ?? fromFile.serial;
  const baudRate = opts.baud ?? fromFile.baud ?? (kind === 'sim' ? 0 : DEFAULT_BAUD[kind]);
  if (kind !== 'sim' && !serialPath) throw new ConfigFileError(`--driver ${kind} needs the serial device: --serial /dev/ttyUSB0 (or "driver": {"serial": ...} in the config file)`);
  if (kind !== 'sim' && (opts.timeScale ?? 1) !== 1) throw new ConfigFileError('--time-scale applies to the simulation only; a real board runs in real time');
  if (kind === 'sim' && opts.traceSerial) throw new ConfigFileError('--trace-serial shows the bytes to and from a board: use it with --driver grbl or --driver firmata');
  let machine: Omit<RunningServer, 'url' | 'server' | 'close'>;
  let release = async () => undefined as void;
  // A board plans and times its own steps: wall time, never sped up.
  const boardClock = new WallClock(1);
  // Scans wait (settle, dwell, timeouts) on the clock the machine runs on.
  let scanClock: Clock = boardClock;
  const trace = opts.traceSerial ? serialTracer(opts.traceSerial, boardClock) : undefined;
  if (kind === 'grbl') {
    const grbl = createGrblPositioner(boardClock, config, { path: serialPath!, baudRate, trace });
    grbl.controller.start();
    release = () => grbl.controller.close();
    machine = { ...grbl, hardware: `grbl on ${serialPath} at ${baudRate} baud` };
  } else if (kind === 'firmata') {
    const firmata = createFirmataPositioner(boardClock, config, { path: serialPath!, baudRate, trace }, { maxStepRateStepsS: fromFile.max_step_rate, triggerPin: fromFile.trigger_pin });
    firmata.controller.start();
    release = () => firmata.controller.close();
    machine = { ...firmata, hardware: `Firmata board on ${serialPath} at ${baudRate} baud` };
  } else {
    scanClock = new WallClock(opts.timeScale ?? 1);
    const simulated = createSimulatedPositioner(scanClock, config, sim);
    machine = { ...simulated, hardware: 'simulated positioner' };
  }
  const scans = createScanner({ positioner: machine.positioner, clock: scanClock, dbPath: opts.scanDb ?? process.env.POSITIONER_SCAN_DB ?? DEFAULT_SCAN_DB, antenna, simulated: kind === 'sim' });
  const api = createApiServer({ positioner: machine.positioner, scanner: scans.scanner });
  const { server } = api;
  if (opts.log) logTransitions(machine, opts.log);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  opts.announce?.(url, machine.hardware);
  let rotctld: RotctldServer | undefined;
  let rotctldPort: number | undefined;
  if (opts.rotctldPort !== undefined) {
    rotctld = new RotctldServer(machine.positioner, { log: opts.log });
    try {
      rotctldPort = (await rotctld.listen(opts.rotctldPort, opts.host)).port;
    } catch (error) {
      await api.close();
      scans.close();
      await release();
      throw error;
    }
    opts.announceRotctld?.(`${host}:${rotctldPort}`);
  }
  if (opts.home) {
    if (kind !== 'sim') await (machine.controller as unknown as { settle(): Promise<void> }).settle();
    try {
      machine.positioner.home('both');
    } catch (e) {
      // The board may not be there yet: the server still serves, and says why it did not home.
      opts.log?.(`cannot home at start-up: ${(e as Error).message}`);
    }
  }
  return {
    ...machine,
    url,
    server,
    rotctldPort,
    close: async () => {
      machine.positioner.stop();
      await Promise.all([api.close(), rotctld?.close()]);
      scans.close();
      await release();
    },
  };
}

/** One line each time the positioner changes state, with where it is. */
function logTransitions({ positioner }: { positioner: Positioner }, log: (line: string) => void): void {
  let last = positioner.status().state;
  positioner.onChange(() => {
    const s = positioner.status();
    if (s.state === last) return;
    const at = `theta ${s.thetaDeg.toFixed(3)} phi ${s.phiDeg.toFixed(3)}`;
    const fault = s.fault ? `: ${s.fault.code} ${s.fault.message}` : '';
    log(`${last} -> ${s.state} at ${at}${s.homed ? ' (homed)' : ''}${fault}`);
    last = s.state;
  });
}
