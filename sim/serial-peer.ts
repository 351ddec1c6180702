/**
 * Puts a simulated board on a serial device (one end of a pty pair): opens
 * the port with serialport, feeds what arrives to the board and writes what
 * the board says. This is the "far end of the cable" for the simulated grbl
 * controller and the simulated Firmata board.
 */
import { SerialPort } from 'serialport';
import type { SerialTrace } from '../hal/serial-link';

export interface SimBoard {
  receive(data: Buffer): void;
}

export interface SerialPeer {
  port: SerialPort;
  /** Writes bytes as the board (the board's `send`). */
  send(data: string | Buffer): void;
  close(): Promise<void>;
}

/**
 * Opens `path` and wires it to the board made by `makeBoard(send)`; resolves once the port is open.
 * `trace` sees every chunk the board writes (`tx`) and reads (`rx`), as hal/serial-link.ts's trace does on the host side.
 */
export async function attachBoard<B extends SimBoard>(
  path: string,
  baudRate: number,
  makeBoard: (send: (data: string | Buffer) => void) => B,
  trace?: SerialTrace,
): Promise<SerialPeer & { board: B }> {
  const port = new SerialPort({ path, baudRate, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  const send = (data: string | Buffer) => {
    if (!port.isOpen) return;
    const bytes = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
    port.write(bytes);
    trace?.('tx', bytes);
  };
  const board = makeBoard(send);
  port.on('data', (chunk: Buffer) => {
    trace?.('rx', chunk);
    board.receive(chunk);
  });
  // A dropped line is the host's problem to notice; the board just stops hearing it.
  port.on('error', () => undefined);
  return {
    port,
    board,
    send,
    close: () => new Promise<void>((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve())),
  };
}
