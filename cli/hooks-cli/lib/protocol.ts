/**
 * The two input shapes a hook accepts, normalised into one, and how answers
 * go back in each.
 *
 * - "seed" shape (the spec): `{tool, parameters, success, error,
 *   execution_time}` or `{prompt}` or `{}`; answers are `{allow, message}` on
 *   stdout, and the validator blocks with exit 1.
 * - "host" shape (Claude Code): `hook_event_name`, `session_id`,
 *   `transcript_path`, `cwd`, `tool_name`, `tool_input`, `tool_response`,
 *   `error`, `prompt`, `trigger`...; the host blocks only on exit 2 (reason on
 *   stderr) or a JSON `permissionDecision: "deny"`, and reads context for the
 *   model from `hookSpecificOutput.additionalContext`.
 */
import fs from 'node:fs';
import { isObject } from './store';

export type Protocol = 'seed' | 'host';

export interface HookInput {
  protocol: Protocol;
  event: string;
  sessionId: string | null;
  transcriptPath: string | null;
  cwd: string | null;
  tool: string | null;
  toolInput: Record<string, unknown>;
  toolResponse: unknown;
  /** null when the input does not say (a UserPromptSubmit, a Stop). */
  success: boolean | null;
  error: string | null;
  executionTimeMs: number | null;
  prompt: string | null;
  trigger: string | null;
  stopHookActive: boolean;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export class InputError extends Error {
  readonly code = 'HOOKS_ERR_INPUT';
}

/** Parses stdin text (empty means `{}`) into a HookInput; `defaultEvent` is the event the seed shape implies for this hook. */
export function parseHookInput(text: string, defaultEvent: string): HookInput {
  let raw: unknown = {};
  if (text.trim() !== '') {
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new InputError(`hook input is not JSON (${(err as Error).message})`);
    }
  }
  if (!isObject(raw)) throw new InputError('hook input must be a JSON object');
  const host = typeof raw.hook_event_name === 'string';
  const event = host ? (raw.hook_event_name as string) : defaultEvent;
  const toolInput = host ? raw.tool_input : raw.parameters;
  let success: boolean | null = null;
  let error = str(raw.error);
  if (host) {
    if (event === 'PostToolUseFailure') success = false;
    else if (event === 'PostToolUse') {
      // Some tools report failure inside a delivered response.
      const resp = raw.tool_response;
      success = !(isObject(resp) && (resp.success === false || resp.is_error === true || typeof resp.error === 'string'));
      if (!success && isObject(resp)) error = error ?? str(resp.error) ?? str(resp.stderr);
    }
  } else if (typeof raw.success === 'boolean') success = raw.success;
  else if ('tool' in raw) success = error === null || error === '';
  const time = raw.execution_time ?? raw.duration_ms;
  return {
    protocol: host ? 'host' : 'seed',
    event,
    sessionId: str(raw.session_id),
    transcriptPath: str(raw.transcript_path),
    cwd: str(raw.cwd),
    tool: str(host ? raw.tool_name : raw.tool),
    toolInput: isObject(toolInput) ? toolInput : {},
    toolResponse: raw.tool_response,
    success,
    error: error === '' ? null : error,
    executionTimeMs: typeof time === 'number' && Number.isFinite(time) ? time : null,
    prompt: str(raw.prompt),
    trigger: str(raw.trigger),
    stopHookActive: raw.stop_hook_active === true,
  };
}

export interface HookAnswer {
  exitCode: number;
  stdout?: string;
  stderr?: string;
}

/** Seed-shape answer: `{allow, message}`. */
export function seedAnswer(allow: boolean, message: string, exitCode = allow ? 0 : 1): HookAnswer {
  return { exitCode, stdout: JSON.stringify({ allow, message }) + '\n' };
}

/** Host answer carrying text for the model (UserPromptSubmit, PreToolUse, PostToolUse read additionalContext) and for the user (systemMessage). */
export function hostContextAnswer(event: string, context: string, toUser = false): HookAnswer {
  if (!context) return { exitCode: 0 };
  const out: Record<string, unknown> = { hookSpecificOutput: { hookEventName: event, additionalContext: context } };
  if (toUser) out.systemMessage = context;
  return { exitCode: 0, stdout: JSON.stringify(out) + '\n' };
}

/** Host block: exit 2, the reason on stderr (shown to the model; the tool call does not run). */
export function hostBlockAnswer(reason: string): HookAnswer {
  return { exitCode: 2, stderr: reason + '\n' };
}

/**
 * Reads all of stdin (nothing when it is a terminal), without ever making
 * the process unable to exit: the caller's deadline must be able to end a
 * hook whose stdin never closes. Returns the text itself when the whole input
 * could be read without waiting, which is the usual case: a host writes the
 * input and closes stdin as it starts the hook, long before Node has started.
 * The caller then answers at once, with no deadline timer to arm (the first
 * `setTimeout` of a process compiles Node's timers: 1.3M instructions) and no
 * turn of the event loop. A Promise when the input is not all there yet.
 *
 * - A socket (what Node-based hosts such as Claude Code give a child):
 *   opened as a libuv pipe handle (Node's own `pipe_wrap` binding, as
 *   `net.Socket` uses it), which makes the descriptor non-blocking, then read
 *   with fs.readSync until EOF; at EAGAIN (input still coming) the handle
 *   reads the rest in the event loop (`stream_wrap`). This skips loading net
 *   and streams (about 5% of a hook's start-up); process.stdin when those
 *   bindings are not there. Never a blocking read: on the main thread it
 *   would stop the deadline, on the thread pool it would keep process.exit()
 *   from returning.
 * - A pipe (FIFO, as in `echo '{}' | node hook.js`): reopened through
 *   /proc/self/fd/0 with O_NONBLOCK and read the same way, polled while
 *   empty. Cheaper than process.stdin, whose net/stream machinery costs a
 *   hook start-up about 10-25 ms.
 * - A file or /dev/null: read at once.
 *
 * Which of these stdin is, is read from its /proc link (`socket:[…]`,
 * `pipe:[…]`): fs.fstatSync builds a Stats object, whose code Node compiles
 * on first use (1.3M instructions, as much as the whole read). Any other
 * link, or no /proc, goes through fs.fstatSync.
 */
export function readStdin(): string | Promise<string> {
  let link = '';
  try {
    link = fs.readlinkSync('/proc/self/fd/0');
  } catch {
    /* no /proc (or no stdin): fstat below */
  }
  if (link.startsWith('socket:[')) return readSocket();
  if (link.startsWith('pipe:[')) return readFifo() ?? viaProcessStdin();
  let st: fs.Stats | null = null;
  try {
    st = fs.fstatSync(0);
  } catch {
    return ''; // no stdin at all
  }
  // A terminal: no input is coming. (Not tty.isatty: loading node:tty loads net and streams.)
  if (st.isCharacterDevice() && !isNullDevice()) return '';
  if (st.isFile() || st.isCharacterDevice()) {
    try {
      return fs.readFileSync(0, 'utf8');
    } catch {
      return '';
    }
  }
  if (st.isFIFO()) return readFifo() ?? viaProcessStdin();
  if (st.isSocket()) return readSocket();
  return viaProcessStdin();
}

function viaProcessStdin(): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const finish = () => resolve(Buffer.concat(chunks).toString('utf8'));
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', finish);
    process.stdin.on('error', finish);
  });
}

const CHUNK_BYTES = 64 * 1024;

/** What has been read so far: whole buffers, and the byte count of each. */
interface Chunks {
  bufs: Buffer[];
  lens: number[];
}

function chunksText(c: Chunks): string {
  if (c.bufs.length === 0) return '';
  // One read (the usual input is a few hundred bytes): decoded in place; more: joined first, so a character split
  // between two reads is decoded whole.
  // (utf8Slice is what toString('utf8', …) calls; called directly, Node does not compile its encoding lookup: 0.4M
  // instructions.)
  if (c.bufs.length === 1) {
    const b = c.bufs[0] as Buffer & { utf8Slice?: (start: number, end: number) => string };
    return typeof b.utf8Slice === 'function' ? b.utf8Slice(0, c.lens[0]) : b.toString('utf8', 0, c.lens[0]);
  }
  return Buffer.concat(c.bufs.map((b, i) => b.subarray(0, c.lens[i]))).toString('utf8');
}

/**
 * Reads the non-blocking `fd` into `c` until EOF (true) or until nothing more is there yet (false, EAGAIN);
 * any other error ends the input as EOF does.
 */
function drainNonBlocking(fd: number, c: Chunks): boolean {
  for (;;) {
    const buf = Buffer.allocUnsafe(CHUNK_BYTES);
    let n: number;
    try {
      n = fs.readSync(fd, buf, 0, CHUNK_BYTES, null);
    } catch (err) {
      return (err as NodeJS.ErrnoException).code !== 'EAGAIN';
    }
    if (n === 0) return true;
    c.bufs.push(buf);
    c.lens.push(n);
  }
}

interface PipeHandle {
  open(fd: number): number;
  readStart(): number;
  readStop(): number;
  close(): void;
  /** Must always be a function (Node asserts it). */
  onread: (buf: ArrayBuffer | undefined) => void;
}

/**
 * Reads fd 0, a socket, through a libuv pipe handle: what net.Socket does
 * underneath (Node's lib/net.js `Socket` with `new Pipe(PipeConstants.SOCKET)`
 * and lib/internal/stream_base_commons.js `onStreamRead`, where the byte count
 * of each read is in `streamBaseState[kReadBytesOrError]`, negative at EOF or
 * on error). Opening the handle makes fd 0 non-blocking (libuv's
 * uv_pipe_open), so what is already there is read at once with fs.readSync;
 * the handle reads the rest, if any. process.stdin when the bindings are not
 * there (another Node).
 */
function readSocket(): string | Promise<string> {
  let handle: PipeHandle;
  try {
    const pipe = (process as unknown as { binding(name: string): unknown }).binding('pipe_wrap') as { Pipe: new (type: number) => PipeHandle; constants: { SOCKET: number } };
    handle = new pipe.Pipe(pipe.constants.SOCKET);
    if (handle.open(0) !== 0) return viaProcessStdin();
  } catch {
    return viaProcessStdin();
  }
  const c: Chunks = { bufs: [], lens: [] };
  if (drainNonBlocking(0, c)) return chunksText(c);
  let sw: { streamBaseState: Int32Array; kReadBytesOrError: number; kArrayBufferOffset: number };
  try {
    sw = (process as unknown as { binding(name: string): unknown }).binding('stream_wrap') as typeof sw;
  } catch {
    return viaProcessStdin();
  }
  if (!sw.streamBaseState || typeof sw.kReadBytesOrError !== 'number' || typeof sw.kArrayBufferOffset !== 'number') return viaProcessStdin();
  return new Promise((resolve) => {
    handle.onread = (buf) => {
      const n = sw.streamBaseState[sw.kReadBytesOrError];
      if (n > 0 && buf) {
        c.bufs.push(Buffer.from(Buffer.from(buf, sw.streamBaseState[sw.kArrayBufferOffset], n))); // copy: the buffer is reused
        c.lens.push(n);
        return;
      }
      if (n < 0) {
        handle.readStop();
        handle.onread = () => undefined;
        resolve(chunksText(c));
      }
    };
    if (handle.readStart() !== 0) {
      handle.onread = () => undefined;
      resolve(chunksText(c));
    }
  });
}

function isNullDevice(): boolean {
  try {
    return fs.readlinkSync('/proc/self/fd/0') === '/dev/null';
  } catch {
    return false; // no /proc: take it for a terminal and read nothing
  }
}

/** A FIFO on fd 0, reopened non-blocking and read; null when it cannot be reopened (no /proc). */
function readFifo(): string | Promise<string> | null {
  let fd: number;
  try {
    fd = fs.openSync('/proc/self/fd/0', fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  const c: Chunks = { bufs: [], lens: [] };
  if (drainNonBlocking(fd, c)) {
    fs.closeSync(fd);
    return chunksText(c);
  }
  return new Promise((resolve) => {
    let idle = 0;
    const poll = () => {
      if (drainNonBlocking(fd, c)) {
        fs.closeSync(fd);
        resolve(chunksText(c));
      } else setTimeout(poll, Math.min(++idle, 5)); // nothing yet: try again shortly (the deadline timer can still fire)
    };
    setTimeout(poll, Math.min(++idle, 5));
  });
}

/** Writes the answer synchronously (stdout may be a pipe the host closes right after exit) and exits. */
export function deliver(answer: HookAnswer): never {
  if (answer.stdout) fs.writeSync(1, answer.stdout);
  if (answer.stderr) fs.writeSync(2, answer.stderr);
  process.exit(answer.exitCode);
}
