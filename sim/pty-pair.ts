/**
 * A pair of linked pseudo-terminals made by `socat`: a real serial line with
 * no hardware. Whatever is written to one end comes out of the other, and
 * both ends are real ttys (termios, baud rates, EIO when the other side goes
 * away), so a driver opens one end exactly as it opens /dev/ttyUSB0 and a
 * simulated board listens on the other.
 *
 * The ends are stable symlinks in a directory of our own, so a test can kill
 * the pair (the line drops) and make it again under the same names (the line
 * comes back), as a USB cable unplugged and plugged in again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export class PtyPair {
  /** The end a driver opens (as it would open /dev/ttyUSB0). */
  readonly hostPath: string;
  /** The end the simulated board listens on. */
  readonly devicePath: string;
  private child: ChildProcess | null = null;

  constructor(readonly dir: string = fs.mkdtempSync(path.join(os.tmpdir(), 'positioner-pty-'))) {
    this.hostPath = path.join(dir, 'host');
    this.devicePath = path.join(dir, 'device');
  }

  /** Starts socat and resolves once both ends exist. */
  async open(timeoutMs = 5000): Promise<this> {
    if (this.child) throw new Error('pty pair already open');
    const child = spawn('socat', [`pty,raw,echo=0,link=${this.hostPath}`, `pty,raw,echo=0,link=${this.devicePath}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    live.add(child);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<never>((_, reject) => {
      child.once('error', (e) => reject(new Error(`cannot run socat (install it: apt-get install socat): ${e.message}`)));
      child.once('exit', (code, signal) => {
        live.delete(child);
        if (this.child === child) this.child = null;
        reject(new Error(`socat exited (code ${code}, signal ${signal}) ${stderr.trim()}`));
      });
    });
    exited.catch(() => undefined);
    const deadline = Date.now() + timeoutMs;
    while (!(fs.existsSync(this.hostPath) && fs.existsSync(this.devicePath))) {
      if (Date.now() > deadline) {
        this.close();
        throw new Error(`socat made no pty pair within ${timeoutMs} ms: ${stderr.trim()}`);
      }
      await Promise.race([new Promise((r) => setTimeout(r, 10)), exited]);
    }
    return this;
  }

  get isOpen(): boolean {
    return this.child !== null;
  }

  /** Kills socat: both ends see the line drop (and their symlinks go away). Resolves when it has exited. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    const gone = new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
    child.kill('SIGTERM');
    await gone;
    live.delete(child);
    for (const p of [this.hostPath, this.devicePath]) fs.rmSync(p, { force: true });
  }

  /** Closes the pair and removes its directory. */
  async dispose(): Promise<void> {
    await this.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
