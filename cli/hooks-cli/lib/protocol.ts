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
 * hook whose stdin never closes.
 *
 * - A pipe (FIFO, as in `echo '{}' | node hook.js`): reopened through
 *   /proc/self/fd/0 with O_NONBLOCK and polled. Cheaper than process.stdin,
 *   whose net/stream machinery costs a hook start-up about 10-25 ms.
 * - A socket (what Node-based hosts such as Claude Code give a child): read
 *   through libuv's pipe handle directly (Node's own `pipe_wrap` and
 *   `stream_wrap` bindings, as `net.Socket` uses them), which skips loading
 *   net and streams (about 5% of a hook's start-up); process.stdin when those
 *   bindings are not there. Never a blocking fs.read: it would park a
 *   thread-pool thread that process.exit() then waits for forever.
 * - A file or /dev/null: read at once.
 */
export function readStdin(): Promise<string> {
  let st: fs.Stats | null = null;
  try {
    st = fs.fstatSync(0);
  } catch {
    return Promise.resolve(''); // no stdin at all
  }
  // A terminal: no input is coming. (Not tty.isatty: loading node:tty loads net and streams.)
  if (st.isCharacterDevice() && !isNullDevice()) return Promise.resolve('');
  if (st.isFile() || st.isCharacterDevice()) {
    try {
      return Promise.resolve(fs.readFileSync(0, 'utf8'));
    } catch {
      return Promise.resolve('');
    }
  }
  if (st.isFIFO()) {
    let fd: number | null = null;
    try {
      fd = fs.openSync('/proc/self/fd/0', fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    } catch {
      fd = null;
    }
    if (fd !== null) return pollRead(fd);
  }
  if (st.isSocket()) {
    const viaHandle = socketRead();
    if (viaHandle) return viaHandle;
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const finish = () => resolve(Buffer.concat(chunks).toString('utf8'));
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', finish);
    process.stdin.on('error', finish);
  });
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
 * on error). null when the bindings are not available (another Node), so the
 * caller falls back to process.stdin.
 */
function socketRead(): Promise<string> | null {
  let pipe: { Pipe: new (type: number) => PipeHandle; constants: { SOCKET: number } };
  let sw: { streamBaseState: Int32Array; kReadBytesOrError: number; kArrayBufferOffset: number };
  let handle: PipeHandle;
  try {
    const binding = (process as unknown as { binding(name: string): unknown }).binding;
    pipe = binding('pipe_wrap') as typeof pipe;
    sw = binding('stream_wrap') as typeof sw;
    if (!sw.streamBaseState || typeof sw.kReadBytesOrError !== 'number' || typeof sw.kArrayBufferOffset !== 'number') return null;
    handle = new pipe.Pipe(pipe.constants.SOCKET);
    if (handle.open(0) !== 0) return null;
  } catch {
    return null;
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    handle.onread = (buf) => {
      const n = sw.streamBaseState[sw.kReadBytesOrError];
      if (n > 0 && buf) {
        chunks.push(Buffer.from(Buffer.from(buf, sw.streamBaseState[sw.kArrayBufferOffset], n))); // copy: the buffer is reused
        return;
      }
      if (n < 0) {
        handle.readStop();
        handle.onread = () => undefined;
        resolve(Buffer.concat(chunks).toString('utf8'));
      }
    };
    if (handle.readStart() !== 0) {
      handle.onread = () => undefined;
      resolve(Buffer.concat(chunks).toString('utf8'));
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

function pollRead(fd: number): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const buf = Buffer.alloc(64 * 1024);
    let idle = 0;
    for (;;) {
      let n: number;
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
          // Nothing yet: try again shortly (the deadline timer can still fire).
          setTimeout(() => pollRead(fd).then((rest) => resolve(Buffer.concat(chunks).toString('utf8') + rest)), Math.min(++idle, 5));
          return;
        }
        break;
      }
      if (n === 0) break;
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
    fs.closeSync(fd);
    resolve(Buffer.concat(chunks).toString('utf8'));
  });
}

/** Writes the answer synchronously (stdout may be a pipe the host closes right after exit) and exits. */
export function deliver(answer: HookAnswer): never {
  if (answer.stdout) fs.writeSync(1, answer.stdout);
  if (answer.stderr) fs.writeSync(2, answer.stderr);
  process.exit(answer.exitCode);
}
