/**
 * Context usage: the spec's estimate (characters times tokens_per_char plus
 * per-tool and system overheads) and, when the host gives a transcript, the
 * real figure: the last main-thread assistant entry's usage (input +
 * cache creation + cache read + output tokens), which is what the next
 * request will carry. Only the transcript's tail is read.
 */
import fs from 'node:fs';
import { isObject } from './store';

const TAIL_BYTES = 512 * 1024;

export function transcriptTokens(file: string): number | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const len = Math.min(size, TAIL_BYTES);
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, size - len);
    const lines = buf.toString('utf8').split('\n');
    if (len < size) lines.shift(); // first line is cut
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i];
      if (!line.includes('"usage"')) continue;
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (!isObject(entry) || entry.type !== 'assistant' || entry.isSidechain === true) continue;
      const usage = isObject(entry.message) ? entry.message.usage : undefined;
      if (!isObject(usage)) continue;
      const n = (k: string) => (typeof usage[k] === 'number' ? (usage[k] as number) : 0);
      return n('input_tokens') + n('cache_creation_input_tokens') + n('cache_read_input_tokens') + n('output_tokens');
    }
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

export function formatPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}
