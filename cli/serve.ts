/**
 * `positioner serve`: the firmware on a wall clock with the simulated
 * hardware, serving the REST API until SIGINT/SIGTERM.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../api/app';
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
}

export interface RunningServer extends SimulatedPositioner {
  url: string;
  server: http.Server;
  close(): Promise<void>;
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const { config, sim } = loadConfig(opts.configPath);
  const clock = new WallClock(opts.timeScale ?? 1);
  const machine = createSimulatedPositioner(clock, config, sim);
  const server = http.createServer(buildApp({ positioner: machine.positioner }));
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  if (opts.home) machine.positioner.home('both');
  return {
    ...machine,
    url: `http://${host}:${address.port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        machine.positioner.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
