/**
 * A serial line that keeps itself open: opens a device with serialport,
 * reports every drop (the cable pulled, the board's USB gone, the pty's
 * other end closed), and tries again every `retryMs` until the device is
 * back. The drivers (grbl, Firmata) build on it and never see a SerialPort
 * that is half dead.
 *
 * Timing goes through the injected Clock, so retries follow the same time
 * line as everything else.
 */
import { SerialPort } from 'serialport';
import type { Clock, TimerHandle } from './clock';

export interface SerialLinkHandlers {
  /** The port is open (first time or again after a drop). */
  onOpen(): void;
  onData(chunk: Buffer): void;
  /** The port closed or failed; `reason` says why. Not called for close(). */
  onDown(reason: string): void;
  /** An attempt to open the device failed (it is retried). */
  onOpenFailed?(reason: string): void;
}

/** Sees every chunk the link writes (`tx`) and reads (`rx`), as it happens: for logging the wire, and for test rigs that must know when the line is quiet. */
export type SerialTrace = (direction: 'tx' | 'rx', data: Buffer) => void;

export interface SerialLinkOptions {
  path: string;
  baudRate: number;
  clock: Clock;
  /** Pause between attempts to open the device, ms. */
  retryMs?: number;
  trace?: SerialTrace;
}

export class SerialLink {
  private port: SerialPort | null = null;
  private retry: TimerHandle | null = null;
  private closed = false;
  private up = false;
  /** Reason of the last failed open, so a device that stays absent is reported once, not every retry. */
  lastError: string | null = null;

  constructor(
    private readonly opts: SerialLinkOptions,
    private readonly handlers: SerialLinkHandlers,
  ) {}

  get isUp(): boolean {
    return this.up;
  }

  get path(): string {
    return this.opts.path;
  }

  start(): void {
    this.closed = false;
    this.tryOpen();
  }

  /** Writes bytes; returns false (and writes nothing) while the line is down. */
  write(data: Buffer | string): boolean {
    if (!this.up || !this.port) return false;
    const bytes = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
    this.port.write(bytes);
    this.opts.trace?.('tx', bytes);
    return true;
  }

  /** Closes the port for good (no more retries). */
  close(): Promise<void> {
    this.closed = true;
    this.retry?.cancel();
    this.retry = null;
    this.up = false;
    const port = this.port;
    this.port = null;
    if (!port || !port.isOpen) return Promise.resolve();
    return new Promise((resolve) => port.close(() => resolve()));
  }

  private tryOpen(): void {
    if (this.closed) return;
    const port = new SerialPort({ path: this.opts.path, baudRate: this.opts.baudRate, autoOpen: false });
    port.open((err) => {
      if (this.closed) {
        if (!err) port.close();
        return;
      }
      if (err) {
        this.lastError = err.message;
        this.scheduleRetry();
        this.handlers.onOpenFailed?.(err.message);
        return;
      }
      this.lastError = null;
      this.port = port;
      this.up = true;
      port.on('data', (chunk: Buffer) => {
        if (this.port !== port) return;
        this.opts.trace?.('rx', chunk);
        this.handlers.onData(chunk);
      });
      const down = (reason: string) => {
        if (this.port !== port) return;
        this.port = null;
        this.up = false;
        if (port.isOpen) port.close(() => undefined);
        if (this.closed) return;
        this.handlers.onDown(reason);
        this.scheduleRetry();
      };
      port.on('error', (e: Error) => down(e.message));
      port.on('close', (e: (Error & { disconnected?: boolean }) | null) => down(e?.message ?? 'port closed'));
      this.handlers.onOpen();
    });
  }

  private scheduleRetry(): void {
    if (this.closed || this.retry) return;
    this.retry = this.opts.clock.setTimerAt(this.opts.clock.nowUs() + (this.opts.retryMs ?? 500) * 1000, () => {
      this.retry = null;
      this.tryOpen();
    });
  }
}
