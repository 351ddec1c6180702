/**
 * Progress display for `--wait`: a redrawn bar on a terminal, a line every
 * few seconds otherwise (logs, CI). Colour only on a TTY and never with NO_COLOR.
 */
export interface ProgressSink {
  update(fraction: number | null, detail: string): void;
  done(finalLine: string): void;
}

export function useColor(stream: NodeJS.WriteStream): boolean {
  // no-color.org: NO_COLOR set to any non-empty value turns colour off.
  return Boolean(stream.isTTY) && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
}

export function progressBar(stream: NodeJS.WriteStream, label: string, width = 30): ProgressSink {
  const tty = Boolean(stream.isTTY);
  let lastPrintMs = 0;
  let lastLine = '';
  let spinner = 0;
  const frames = ['|', '/', '-', '\\'];
  return {
    update(fraction, detail) {
      let line: string;
      if (fraction === null) {
        line = `${label} ${frames[spinner++ % frames.length]} ${detail}`;
      } else {
        const f = Math.min(1, Math.max(0, fraction));
        const filled = Math.round(f * width);
        line = `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(f * 100).toFixed(0).padStart(3)}%  ${detail}`;
      }
      if (tty) {
        stream.write(`\r${line}\x1b[K`);
      } else {
        const now = Date.now();
        if (now - lastPrintMs >= 2000 && line !== lastLine) {
          stream.write(`${line}\n`);
          lastPrintMs = now;
          lastLine = line;
        }
      }
    },
    done(finalLine) {
      stream.write(tty ? `\r${finalLine}\x1b[K\n` : `${finalLine}\n`);
    },
  };
}
