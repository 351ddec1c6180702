/**
 * `registry-proto serve`: the registry API on a SQLite file until closed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildRegistryApp } from './app';
import { RegistryStore } from './store';

export interface RegistryServerOptions {
  dbFile: string;
  host: string;
  port: number;
  /** The tailnet name API v2 answers to besides `-` (see RegistryAppDeps). */
  tailnet?: string;
}

export interface RunningRegistry {
  url: string;
  server: http.Server;
  store: RegistryStore;
  close(): Promise<void>;
}

export async function startRegistryServer(opts: RegistryServerOptions): Promise<RunningRegistry> {
  const store = new RegistryStore(opts.dbFile);
  const server = http.createServer(buildRegistryApp({ store, tailnet: opts.tailnet }));
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
    const body = JSON.stringify({ message: `malformed HTTP request (${err.code ?? err.message})` });
    socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    store.close();
    throw err;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    server,
    store,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          store.close();
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
