/**
 * `positioner serve --trace-serial`: every chunk the driver writes to the
 * board and reads from it, one line each on stderr, for finding out what a
 * real board does on the wire without a second program on the port (which
 * could not open it while the driver holds it).
 *
 *   serial   0.012 -> \x18
 *   serial   0.139 <- \r\nGrbl 1.1h ['$' for help]\r\n
 *   serial   2.501 -> f0 62 06 00 f7                       (a binary protocol: hex)
 */
import type { Clock } from '../hal/clock';
import type { SerialTrace } from '../hal/serial-link';

/** Text as text (control bytes escaped); a chunk that is mostly not text (Firmata's sysex) as hex. */
export function formatSerialBytes(data: Buffer): string {
  let printable = 0;
  for (const b of data) if ((b >= 0x20 && b < 0x7f) || b === 0x0a || b === 0x0d) printable++;
  if (data.length > 0 && printable / data.length < 0.75) return [...data].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  let out = '';
  for (const b of data) {
    if (b === 0x0a) out += '\\n';
    else if (b === 0x0d) out += '\\r';
    else if (b === 0x5c) out += '\\\\';
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += `\\x${b.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/** A SerialTrace that writes one line per chunk, stamped with seconds since it was made (on `clock`). */
export function serialTracer(write: (line: string) => void, clock: Clock): SerialTrace {
  const startUs = clock.nowUs();
  return (direction, data) => {
    const tSec = ((clock.nowUs() - startUs) / 1e6).toFixed(3).padStart(8);
    write(`serial ${tSec} ${direction === 'tx' ? '->' : '<-'} ${formatSerialBytes(data)}`);
  };
}
