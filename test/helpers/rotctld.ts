/**
 * Test helpers for the rotctld server: our server on a free port, a raw TCP
 * client that reads whole replies, the real Hamlib `rotctl` client run as a
 * child process, and the real `rotctld -m 1` (Hamlib's dummy rotator) to
 * compare replies with.
 */
import { execFile, spawn } from 'node:child_process';
import net from 'node:net';
import type { Test } from 'tap';
import { RotctldServer } from '../../api/rotctld';
import type { Positioner } from '../../firmware/positioner';
import { freePort } from './cli';

export async function serveRotctld(t: Test, positioner: Positioner): Promise<{ server: RotctldServer; port: number; log: string[] }> {
  const log: string[] = [];
  const server = new RotctldServer(positioner, { log: (l) => log.push(l) });
  const { port } = await server.listen(0, '127.0.0.1');
  t.teardown(() => server.close());
  return { server, port, log };
}

/** A raw protocol client: `ask` sends a line and resolves with the reply once `complete` says it is whole. */
export class RawClient {
  readonly socket: net.Socket;
  private buffer = '';
  private notify: (() => void) | null = null;
  readonly closed: Promise<void>;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.setEncoding('latin1');
    this.socket.on('data', (d: string) => {
      this.buffer += d;
      this.notify?.();
    });
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
  }

  static async open(t: Test, port: number): Promise<RawClient> {
    const c = new RawClient(port);
    t.teardown(() => c.socket.destroy());
    await new Promise<void>((resolve, reject) => {
      c.socket.once('connect', () => resolve());
      c.socket.once('error', reject);
    });
    return c;
  }

  /** Sends `line` + `\n`; the reply is complete after `lines` newlines, or at an `RPRT n` line when `lines` is 'rprt'. */
  async ask(line: string, lines: number | 'rprt', timeoutMs = 5000): Promise<string> {
    this.socket.write(`${line}\n`);
    const complete = () => (lines === 'rprt' ? /RPRT -?\d+\n$/.test(this.buffer) : (this.buffer.match(/\n/g)?.length ?? 0) >= lines);
    const deadline = Date.now() + timeoutMs;
    while (!complete()) {
      if (Date.now() > deadline) throw new Error(`no complete reply to ${JSON.stringify(line)} within ${timeoutMs} ms; got ${JSON.stringify(this.buffer)}`);
      await new Promise<void>((resolve) => {
        this.notify = resolve;
        setTimeout(resolve, 50);
      });
    }
    const reply = this.buffer;
    this.buffer = '';
    return reply;
  }
}

export interface RotctlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real Hamlib client: `rotctl -m 2 -r 127.0.0.1:PORT ...commands`. */
export function rotctl(port: number, commands: string[]): Promise<RotctlResult> {
  return new Promise((resolve) => {
    execFile('rotctl', ['-m', '2', '-r', `127.0.0.1:${port}`, ...commands], { timeout: 20_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Hamlib's own rotctld with its dummy rotator (model 1) on a free port, stopped when the test ends. */
export async function realRotctld(t: Test): Promise<number> {
  const port = await freePort();
  const child = spawn('rotctld', ['-m', '1', '-T', '127.0.0.1', '-t', String(port)], { stdio: 'ignore' });
  t.teardown(() => {
    child.kill();
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.end();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return port;
    if (Date.now() > deadline) throw new Error('rotctld -m 1 did not start listening');
    await new Promise((r) => setTimeout(r, 50));
  }
}
