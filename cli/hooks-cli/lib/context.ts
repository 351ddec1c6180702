/**
 * Context usage: the spec's estimate (characters times tokens_per_char plus
 * per-tool and system overheads) and, when the host gives a transcript, the
 * real figure: the last main-thread assistant entry's usage (input +
 * cache creation + cache read + output tokens), which is what the next
 * request will carry, or after a compaction the size it left. Only the
 * transcript's tail is read.
 */
import fs from 'node:fs';
import { isObject } from './store';

const TAIL_BYTES = 512 * 1024;

export interface TranscriptContext {
  /** The context size now: the last usage, or the size left by a compaction that came after it; null when unknown. */
  tokens: number | null;
  /** The id (uuid, else timestamp) of the last compaction in the tail, or null. */
  compaction: string | null;
}

/**
 * Reads the transcript's tail, newest entry first. A `compact_boundary`
 * system entry (Claude Code writes one when it compacts, with
 * `compactMetadata: {trigger, preTokens, postTokens}`) newer than any usage
 * means the context was just compacted: its `postTokens` is the size now
 * (null when the entry has none; the next answer's usage will say).
 */
export function transcriptContext(file: string): TranscriptContext | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const size = fs.fstatSync(fd).size;
    // The last usage is nearly always in the last few KB: read 64 KiB first, the whole tail only if needed.
    for (const tail of [Math.min(TAIL_BYTES, 64 * 1024), TAIL_BYTES]) {
      const len = Math.min(size, tail);
      const buf = Buffer.alloc(len);
      fs.readSync(fd, buf, 0, len, size - len);
      const found = scanTail(buf.toString('utf8'), len < size);
      if (found || len === size || tail === TAIL_BYTES) return found;
    }
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

function scanTail(text: string, cut: boolean): TranscriptContext | null {
  const lines = text.split('\n');
  if (cut) lines.shift(); // first line is cut
  let tokens: number | null = null;
  let compaction: string | null = null;
  let found = false;
  for (let i = lines.length - 1; i >= 0 && (!found || compaction === null); i--) {
    const line = lines[i];
    const boundary = line.includes('"compact_boundary"');
    if (!boundary && (found || !line.includes('"usage"'))) continue;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isObject(entry) || entry.isSidechain === true) continue;
    if (boundary && entry.type === 'system' && entry.subtype === 'compact_boundary') {
      compaction = typeof entry.uuid === 'string' ? entry.uuid : typeof entry.timestamp === 'string' ? entry.timestamp : `line-${lines.length - i}`;
      if (!found) {
        const meta = isObject(entry.compactMetadata) ? entry.compactMetadata : {};
        const post = meta.postTokens ?? meta.post_tokens;
        tokens = typeof post === 'number' && Number.isFinite(post) ? post : null;
        found = true;
      }
      continue;
    }
    if (found || entry.type !== 'assistant') continue;
    const usage = isObject(entry.message) ? entry.message.usage : undefined;
    if (!isObject(usage)) continue;
    const n = (k: string) => (typeof usage[k] === 'number' ? (usage[k] as number) : 0);
    tokens = n('input_tokens') + n('cache_creation_input_tokens') + n('cache_read_input_tokens') + n('output_tokens');
    found = true;
  }
  return found || compaction !== null ? { tokens, compaction } : null;
}

/** The context size from the transcript (see transcriptContext), or null. */
export function transcriptTokens(file: string): number | null {
  return transcriptContext(file)?.tokens ?? null;
}

export function formatPercent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}
