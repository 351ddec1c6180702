/**
 * A Hamlib `rotctld`-compatible TCP server, so that satellite-tracking
 * software (Gpredict, `rotctl -m 2 -r host:port`, anything using Hamlib's
 * NET rotctl backend) drives the positioner as an az/el rotator.
 *
 * Geometry: azimuth = phi (0..360), elevation = 90 - theta (theta 0..180
 * gives elevation 90..-90). `\dump_state` advertises exactly those limits,
 * so Hamlib clients refuse out-of-range targets before sending them; the
 * server checks again.
 *
 * Protocol (text lines, `\n` or `\r\n`; several commands may share a line,
 * `p p`): short commands `P az el`, `p`, `S`, `K`, `_`, `q`, their long forms
 * (`\set_pos`, `\get_pos`, `\stop`, `\park`, `\get_info`, `\quit`) and
 * `\dump_state`. A leading `+` asks for the extended reply (labelled lines
 * ending `RPRT n`); `;`, `|` or `,` do the same with that character between
 * the lines, as rotctld does. Replies are byte for byte those of Hamlib 4.5's
 * rotctld, checked against `rotctld -m 1`, except where rotctld 4.5 answers
 * nothing at all (an unknown command), which hangs a client: we answer.
 *
 * Result codes (Hamlib's rig_errcode_e, negated as rotctld sends them):
 * - `RPRT 0`   done;
 * - `RPRT -1`  RIG_EINVAL: a target out of range, or a missing or non-numeric argument;
 * - `RPRT -4`  RIG_ENIMPL: a command this server does not implement;
 * - `RPRT -9`  RIG_ERJCTED: refused by the positioner: it is homing, or in its
 *              error state (home it to clear the fault).
 *
 * Behaviour a tracking program relies on:
 * - `P` while a move is running does not stop it (the firmware has no
 *   on-the-fly replanning, and halting a slew every second as a tracker
 *   re-sends its target would jerk the mechanics): the new target is kept and
 *   the positioner goes there as soon as the running move completes. The
 *   latest `P` from any client wins.
 * - `S` (or a stop from anywhere: HTTP, the dashboard) halts at once and drops
 *   any kept target.
 * - `K` parks: an absolute move to az 0, el 90 (theta 0, phi 0: pointing at
 *   the zenith with the cable unwound).
 * - A client that disconnects without `q` (a crashed or unplugged tracker)
 *   while the motion it commanded is still running or pending stops the
 *   positioner; after `q` (rotctl's one-shot commands end that way) its
 *   running move completes, as with rotctld.
 */
import net from 'node:net';
import { PositionerError } from '../firmware/errors';
import type { Positioner } from '../firmware/positioner';

export const ROTCTLD_DEFAULT_PORT = 4533;

/** Hamlib result codes used here (as rotctld prints them). */
export const RPRT = { OK: 0, EINVAL: -1, ENIMPL: -4, ERJCTED: -9 } as const;

const AZ = { min: 0, max: 360 };
const EL = { min: -90, max: 90 };
const INFO = 'Positioner theta/phi (az = phi, el = 90 - theta)';
const MAX_LINE_BYTES = 4096;

export interface RotctldOptions {
  /** One line per client connect/disconnect and per refused command. */
  log?: (line: string) => void;
}

interface Session {
  socket: net.Socket;
  name: string;
  quit: boolean;
}

interface Reply {
  /** Long name for the extended header (`get_pos:`). */
  name: string;
  /** The extended header's argument echo (`set_pos: 10 20`). */
  echo?: string;
  /** Plain reply lines (without RPRT), for normal mode. */
  lines: string[];
  /** Labelled lines for the extended mode; defaults to `lines`. */
  extended?: string[];
  code: number | null;
}

type Command = { name: string; args: number; run: (s: Session, args: string[]) => Omit<Reply, 'name' | 'echo'> };

export class RotctldServer {
  private readonly server: net.Server;
  private readonly sessions = new Set<Session>();
  private pending: { thetaDeg: number; phiDeg: number } | null = null;
  /** The client whose move is running or pending, until that motion ends. */
  private owner: Session | null = null;
  private readonly unsubscribe: () => void;
  private readonly commands: Record<string, Command>;
  private readonly log: (line: string) => void;

  constructor(
    private readonly positioner: Positioner,
    opts: RotctldOptions = {},
  ) {
    this.log = opts.log ?? (() => undefined);
    this.server = net.createServer((socket) => this.accept(socket));
    this.unsubscribe = positioner.onChange(() => this.onPositionerChange());
    const setPos: Command = { name: 'set_pos', args: 2, run: (s, a) => this.setPos(s, a) };
    const getPos: Command = { name: 'get_pos', args: 0, run: () => this.getPos() };
    const stop: Command = { name: 'stop', args: 0, run: () => this.stop() };
    const park: Command = { name: 'park', args: 0, run: (s) => this.park(s) };
    const info: Command = { name: 'get_info', args: 0, run: () => ({ lines: [INFO], extended: [`Info: ${INFO}`], code: null }) };
    const dump: Command = { name: 'dump_state', args: 0, run: () => this.dumpState() };
    this.commands = {
      P: setPos, '\\set_pos': setPos,
      p: getPos, '\\get_pos': getPos,
      S: stop, '\\stop': stop,
      K: park, '\\park': park,
      _: info, '\\get_info': info,
      '\\dump_state': dump,
    };
  }

  get clientCount(): number {
    return this.sessions.size;
  }

  listen(port: number, host: string): Promise<net.AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve(this.server.address() as net.AddressInfo);
      });
    });
  }

  close(): Promise<void> {
    this.unsubscribe();
    for (const s of this.sessions) s.socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    const session: Session = { socket, name: `${socket.remoteAddress}:${socket.remotePort}`, quit: false };
    this.sessions.add(session);
    this.log(`rotctld: ${session.name} connected (${this.sessions.size} client${this.sessions.size === 1 ? '' : 's'})`);
    socket.setNoDelay(true);
    socket.setEncoding('latin1');
    let buffer = '';
    let skipping = false;
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while (!session.quit && (nl = buffer.indexOf('\n')) >= 0) {
        if (skipping) {
          skipping = false;
          buffer = buffer.slice(nl + 1);
          continue;
        }
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line.length > MAX_LINE_BYTES) socket.write(`RPRT ${RPRT.EINVAL}\n`);
        else this.handleLine(session, line);
      }
      if (buffer.length > MAX_LINE_BYTES && !buffer.includes('\n')) {
        // No line end in sight: refuse once and skip to the next line end.
        if (!skipping) socket.write(`RPRT ${RPRT.EINVAL}\n`);
        skipping = true;
        buffer = '';
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.leave(session));
  }

  private leave(session: Session): void {
    this.sessions.delete(session);
    if (this.owner !== session) {
      this.log(`rotctld: ${session.name} disconnected`);
      return;
    }
    this.owner = null;
    this.pending = null; // never start a motion for a client that is gone
    if (!session.quit && this.positioner.status().state === 'moving') {
      this.positioner.stop();
      this.log(`rotctld: ${session.name} dropped without quitting while its move ran; positioner stopped`);
    } else {
      this.log(`rotctld: ${session.name} disconnected`);
    }
  }

  /** Runs every command on one line, in order, each answered before the next. */
  private handleLine(session: Session, line: string): void {
    const tokens = line.trim().split(/\s+/).filter((w) => w.length > 0);
    let i = 0;
    while (i < tokens.length && !session.quit) {
      let word = tokens[i++];
      let sep: string | null = null;
      if (word.length > 1 && '+;|,'.includes(word[0])) {
        sep = word[0] === '+' ? '\n' : word[0];
        word = word.slice(1);
      }
      if (word === 'q' || word === 'Q' || word === '\\quit') {
        session.quit = true;
        session.socket.end();
        return;
      }
      const command = this.commands[word];
      if (!command) {
        this.log(`rotctld: ${session.name}: unknown command '${word}'`);
        this.write(session, sep, { name: word.replace(/^\\/, ''), lines: [], code: RPRT.ENIMPL });
        continue;
      }
      const args = tokens.slice(i, i + command.args);
      i += args.length;
      const reply = args.length < command.args ? { lines: [], code: RPRT.EINVAL } : command.run(session, args);
      this.write(session, sep, { name: command.name, echo: args.length > 0 ? args.join(' ') : undefined, ...reply });
    }
  }

  private write(session: Session, sep: string | null, r: Reply): void {
    if (sep === null) {
      // Normal mode: data lines, or RPRT for commands that return none (and for every error).
      const out = r.code === null ? r.lines : r.code === RPRT.OK && r.lines.length > 0 ? r.lines : [`RPRT ${r.code}`];
      session.socket.write(out.map((l) => `${l}\n`).join(''));
      return;
    }
    const header = r.echo !== undefined ? `${r.name}: ${r.echo}` : `${r.name}:`;
    const body = r.code === RPRT.OK || r.code === null ? (r.extended ?? r.lines) : [];
    session.socket.write([header, ...body, `RPRT ${r.code ?? RPRT.OK}`].join(sep) + '\n');
  }

  private dumpState(): Omit<Reply, 'name'> {
    const f = (v: number) => v.toFixed(6);
    return {
      lines: ['1', '1', `min_az=${f(AZ.min)}`, `max_az=${f(AZ.max)}`, `min_el=${f(EL.min)}`, `max_el=${f(EL.max)}`, 'south_zero=0', 'rot_type=AzEl', 'done'],
      extended: [
        'rotctld Protocol Ver: 1',
        'Rotor Model: 1',
        `Minimum Azimuth: ${f(AZ.min)}`,
        `Maximum Azimuth: ${f(AZ.max)}`,
        `Minimum Elevation: ${f(EL.min)}`,
        `Maximum Elevation: ${f(EL.max)}`,
        'South Zero: 0',
        'rot_type=AzEl',
        'done',
      ],
      code: RPRT.OK,
    };
  }

  private getPos(): Omit<Reply, 'name'> {
    const s = this.positioner.status();
    const az = s.phiDeg.toFixed(2);
    const el = (90 - s.thetaDeg).toFixed(2);
    return { lines: [az, el], extended: [`Azimuth: ${az}`, `Elevation: ${el}`], code: RPRT.OK };
  }

  private setPos(session: Session, [azText, elText]: string[]): Omit<Reply, 'name'> {
    const az = Number(azText);
    const el = Number(elText);
    if (!Number.isFinite(az) || !Number.isFinite(el) || azText.trim() === '' || elText.trim() === '') return { lines: [], code: RPRT.EINVAL };
    if (az < AZ.min || az > AZ.max || el < EL.min || el > EL.max) {
      this.log(`rotctld: ${session.name}: P ${azText} ${elText} is out of range (az ${AZ.min}..${AZ.max}, el ${EL.min}..${EL.max})`);
      return { lines: [], code: RPRT.EINVAL };
    }
    return this.goTo(session, 90 - el, az);
  }

  private park(session: Session): Omit<Reply, 'name'> {
    return this.goTo(session, 0, 0);
  }

  /** Starts the move, or keeps the target for when the running move completes. */
  private goTo(session: Session, thetaDeg: number, phiDeg: number): Omit<Reply, 'name'> {
    // A scan holds the positioner: refuse now rather than keep a target that could never start (and a
    // tracker that owned it would stop the scan by disconnecting).
    const holder = this.positioner.heldBy();
    if (holder) {
      this.log(`rotctld: ${session.name}: move refused: a ${holder} is running; pause it (POST /scan/pause) or stop it first`);
      return { lines: [], code: RPRT.ERJCTED };
    }
    const state = this.positioner.status().state;
    if (state === 'moving') {
      this.pending = { thetaDeg, phiDeg };
      this.claim(session);
      return { lines: [], code: RPRT.OK };
    }
    try {
      this.pending = null;
      this.positioner.moveTo(thetaDeg, phiDeg);
      this.claim(session);
      return { lines: [], code: RPRT.OK };
    } catch (error) {
      if (!(error instanceof PositionerError)) throw error;
      this.log(`rotctld: ${session.name}: move refused: ${error.message}`);
      return { lines: [], code: error.code === 'POS_ERR_OUT_OF_RANGE' ? RPRT.EINVAL : RPRT.ERJCTED };
    }
  }

  private claim(session: Session): void {
    this.owner = session;
  }

  private stop(): Omit<Reply, 'name'> {
    this.pending = null;
    this.positioner.stop();
    return { lines: [], code: RPRT.OK };
  }

  /**
   * A kept target starts when the running move completes (on the next turn of
   * the event loop, so every listener sees the arrival first); a stop or a
   * fault drops it. When the motion ends with nothing kept, no client owns it.
   */
  private onPositionerChange(): void {
    const state = this.positioner.status().state;
    if (state === 'moving' || state === 'homing') return;
    if (!this.pending || state !== 'idle') {
      this.pending = null;
      this.owner = null;
      return;
    }
    setImmediate(() => this.startPending());
  }

  private startPending(): void {
    const target = this.pending;
    if (!target || this.positioner.status().state !== 'idle') return;
    this.pending = null;
    try {
      this.positioner.moveTo(target.thetaDeg, target.phiDeg);
    } catch (error) {
      this.owner = null;
      this.log(`rotctld: kept target theta ${target.thetaDeg} phi ${target.phiDeg} not started: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
