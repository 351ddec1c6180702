/**
 * `positioner serve`: the firmware on a wall clock with the simulated
 * hardware, serving the REST API until SIGINT/SIGTERM.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RotctldServer } from '../api/rotctld';
import { createApiServer } from '../api/server';
import { WallClock } from '../sim/wall-clock';
import { createSimulatedPositioner, type SimulatedPositioner } from './assemble';
import { loadConfig } from './config-file';

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
  announce?: (url: string) => void;
  /** Also serve the Hamlib rotctld protocol on this TCP port (same host; 0 picks a free one). */
  rotctldPort?: number;
  /** Called with host:port once the rotctld server listens. */
  announceRotctld?: (address: string) => void;
}

export interface RunningServer extends SimulatedPositioner {
  url: string;
  server: http.Server;
  /** The rotctld server's TCP port, when one was asked for. */
  rotctldPort?: number;
  close(): Promise<void>;
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const { config, sim } = loadConfig(opts.configPath);
  const clock = new WallClock(opts.timeScale ?? 1);
  const machine = createSimulatedPositioner(clock, config, sim);
  const api = createApiServer({ positioner: machine.positioner });
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
  opts.announce?.(url);
  let rotctld: RotctldServer | undefined;
  let rotctldPort: number | undefined;
  if (opts.rotctldPort !== undefined) {
    rotctld = new RotctldServer(machine.positioner, { log: opts.log });
    try {
      rotctldPort = (await rotctld.listen(opts.rotctldPort, opts.host)).port;
    } catch (error) {
      await api.close();
      throw error;
    }
    opts.announceRotctld?.(`${host}:${rotctldPort}`);
  }
  if (opts.home) machine.positioner.home('both');
  return {
    ...machine,
    url,
    server,
    rotctldPort,
    close: async () => {
      machine.positioner.stop();
      await Promise.all([api.close(), rotctld?.close()]);
    },
  };
}

/** One line each time the positioner changes state, with where it is. */
function logTransitions({ positioner }: SimulatedPositioner, log: (line: string) => void): void {
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
