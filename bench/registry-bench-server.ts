/**
 * The registry server the registry benchmarks measure, in a child process of
 * its own (so its event loop and CPU time are its own): a fresh SQLite file
 * with one sample device ("27") and one API key.
 *
 *   parent: const server = await forkRegistryServer(__filename, 'registry-bench-');  ... await server.close();
 *   child:  if (process.argv[2] === 'serve') void serveRegistryChild(process.argv[3]);
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRegistryServer } from '../registry-proto/server/server';
import { RegistryStore } from '../registry-proto/server/store';
import { sampleDevice } from '../test/helpers/registry';

export interface BenchRegistry {
  child: ChildProcess;
  port: number;
  /** The API key to send as "Authorization: Bearer <key>". */
  key: string;
  /** Ends the child and removes its database. */
  close(): Promise<void>;
}

/** Makes the database and runs `script serve <db>` (which calls serveRegistryChild); resolves once it listens. */
export async function forkRegistryServer(script: string, tmpPrefix: string): Promise<BenchRegistry> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
  const dbFile = path.join(dir, 'registry.db');
  const store = new RegistryStore(dbFile);
  store.importDevices([sampleDevice('27')]);
  const { key } = store.createApiKey({ description: 'benchmark' });
  store.close();
  const child = fork(script, ['serve', dbFile], { stdio: 'inherit' });
  const [{ port }] = (await once(child, 'message')) as [{ port: number }];
  return {
    child,
    port,
    key,
    close: async () => {
      child.disconnect();
      await once(child, 'exit');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The child's side: serves `dbFile` on a free port, tells the parent the port, and ends when the parent disconnects. */
export async function serveRegistryChild(dbFile: string): Promise<void> {
  const registry = await startRegistryServer({ dbFile, host: '127.0.0.1', port: 0 });
  process.send?.({ port: Number(new URL(registry.url).port) });
  process.on('disconnect', () => void registry.close().then(() => process.exit(0)));
}
