/**
 * One virtual time for a serial driver under test and the simulated board on
 * the other end of a real pty pair.
 *
 * The driver and the board both run on a LineClock. Advancing it fires their
 * timers instant by instant, in time order, exactly as a VirtualClock does;
 * but whenever a byte is on the line (written by one side, not yet read by the
 * other) time stands still, and it moves on by itself once the line is quiet
 * again: every byte counted both ways, then two turns of the event loop so
 * that whatever the reader does with the bytes (and writes back) has
 * happened. The line is infinitely fast against the machine, and nothing
 * depends on how busy the test machine is: a driver's 2 s answer timeout
 * fires only after 2 s of virtual time without an answer, never because the
 * event loop was late.
 *
 *   const clock = new LineClock();
 *   const line = await openLine(clock, 115200);
 *   ... driver with { path: line.hostPath, trace: line.trace, clock } ...
 *   await line.attachBoard((send) => makeBoard(clock, send));
 *   await clock.runUntil('homed', () => positioner.status().homed, 60e6);
 *
 * `advanceBy` / `advanceTo` / `runUntilIdle` queue their advance and return
 * at once; `whenSettled()` resolves once everything queued has run and the
 * line is quiet (`run(us)` and `runIdle()` do both). After an instant in which
 * a driver timer fired (the driver takes a `background()` view of the clock),
 * the event loop gets a turn, so work a driver defers to a promise or a
 * microtask happens at the instant that caused it; a simulated board writes
 * synchronously, so its instants (a step each) run back to back. A byte that never arrives (a side closed its port without telling
 * the rig) would stop time for good: after `stuckMs` of wall time without
 * progress the clock rejects its waiters with the byte counts, instead of
 * hanging the test.
 */
import type { Clock, TimerHandle } from '../../hal/clock';
import type { SerialTrace } from '../../hal/serial-link';
import { PtyPair } from '../../sim/pty-pair';
import { attachBoard, type SerialPeer, type SimBoard } from '../../sim/serial-peer';
import { VirtualClock } from '../../sim/virtual-clock';

type ClockOp =
  | { kind: 'to'; us: number }
  | { kind: 'by'; us: number; startUs?: number }
  | { kind: 'idle'; us: number; startUs?: number }
  | { kind: 'until'; us: number; pred: () => boolean };

type Direction = 'toBoard' | 'toHost';

interface Waiter {
  resolve: () => void;
  reject: (e: Error) => void;
}

export class LineClock extends VirtualClock {
  private readonly ops: ClockOp[] = [];
  private readonly inFlight: Record<Direction, number> = { toBoard: 0, toHost: 0 };
  private waiters: Waiter[] = [];
  private draining = false;
  private checkPending = false;
  private watchdog: NodeJS.Timeout | null = null;
  private progressMark = 0;
  private progress = 0;
  /** A failure (bytes stuck on the line, a callback that threw) waiting for the next `whenSettled`. */
  private failure: Error | null = null;
  private readonly backgroundTimers = new Set<TimerHandle>();
  /** A background (driver) timer has fired since the event loop last had a turn. */
  private backgroundFired = false;
  private quietInstants = 0;
  /** What `runUntilIdle` waits for; without it, until no timer is left (as VirtualClock). */
  private idleCondition: (() => boolean) | null = null;

  constructor(
    startUs = 0,
    private readonly stuckMs = 10_000,
  ) {
    super(startUs);
  }

  /** Bytes written toward `direction`'s reader. */
  sent(direction: Direction, bytes: number): void {
    this.inFlight[direction] += bytes;
    this.progress++;
    this.armWatchdog();
  }

  /** Bytes read at `direction`'s end. More than was counted (bytes left in a pty from before) count as none. */
  received(direction: Direction, bytes: number): void {
    this.inFlight[direction] = Math.max(0, this.inFlight[direction] - bytes);
    this.progress++;
    this.scheduleCheck();
  }

  /** Forgets bytes that will never be read (a side's port closed, the pty killed). */
  discardInFlight(direction?: Direction): void {
    if (direction) this.inFlight[direction] = 0;
    else this.inFlight.toBoard = this.inFlight.toHost = 0;
    this.scheduleCheck();
  }

  /** True while a byte is on the line. */
  lineBusy(): boolean {
    return this.inFlight.toBoard > 0 || this.inFlight.toHost > 0;
  }

  /**
   * Makes `runUntilIdle` run until `pred()` holds instead of until no timer is
   * left: a driver polls its board forever and a faithful board samples its
   * inputs forever, so "no timer left" never comes; the rig says what idle
   * means (no motion in progress).
   */
  setIdleCondition(pred: () => boolean): void {
    this.idleCondition = pred;
  }

  /** True while advances are queued (time is owed). */
  owes(): boolean {
    return this.ops.length > 0;
  }

  override advanceTo(targetUs: number): void {
    this.enqueue({ kind: 'to', us: targetUs });
  }

  override advanceBy(deltaUs: number): void {
    this.enqueue({ kind: 'by', us: deltaUs });
  }

  override runUntilIdle(limitUs = 3600e6): number {
    if (this.idleCondition) this.enqueue({ kind: 'until', us: this.nowUs() + limitUs, pred: this.idleCondition });
    else this.enqueue({ kind: 'idle', us: limitUs });
    return this.nowUs();
  }

  /** Resolves once every queued advance has run and the line is quiet. */
  whenSettled(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.scheduleCheck();
    });
  }

  /** Advances by `us` and waits until that time has been reached with the line quiet. */
  override async run(us: number): Promise<void> {
    this.advanceBy(us);
    await this.whenSettled();
  }

  /** runUntilIdle, then waits until the line is quiet; resolves to the time reached. */
  override async runIdle(limitUs?: number): Promise<number> {
    this.runUntilIdle(limitUs);
    await this.whenSettled();
    return this.nowUs();
  }

  /**
   * The same time line for a party whose timers never end (a driver polling
   * its board): they fire as any other, but `pendingTimers()` does not count
   * them, so "nothing left scheduled" still means no motion is scheduled.
   */
  background(): Clock {
    return this.view(true);
  }

  /**
   * The same time line for a simulated board whose loop never ends (a
   * Firmata board samples its inputs forever, as the real one does): its
   * timers are not counted by `pendingTimers()`, and, as a board writes
   * synchronously, its instants need no event-loop turn.
   */
  uncounted(): Clock {
    return this.view(false);
  }

  private view(driverCode: boolean): Clock {
    return {
      nowUs: () => this.nowUs(),
      setTimerAt: (atUs, callback) => {
        const handle = this.setTimerAt(
          atUs,
          driverCode
            ? () => {
                this.backgroundFired = true;
                callback();
              }
            : callback,
        );
        this.backgroundTimers.add(handle);
        return handle;
      },
    };
  }

  override pendingTimers(): number {
    for (const h of this.backgroundTimers) if (!this.isPending(h)) this.backgroundTimers.delete(h);
    return super.pendingTimers() - this.backgroundTimers.size;
  }

  /**
   * Advances instant by instant until `pred()` holds (checked after every
   * instant and once the line is quiet), at most `limitUs` of virtual time.
   */
  async runUntil(what: string, pred: () => boolean, limitUs: number): Promise<void> {
    await this.whenSettled();
    const endUs = this.nowUs() + limitUs;
    while (!pred()) {
      if (this.nowUs() >= endUs) throw new Error(`${what} not reached within ${limitUs / 1e6} s of virtual time (now ${(this.nowUs() / 1e6).toFixed(3)} s)`);
      this.enqueue({ kind: 'until', us: endUs, pred });
      await this.whenSettled();
    }
  }

  private enqueue(op: ClockOp): void {
    this.ops.push(op);
    void this.drain();
  }

  /**
   * Runs what is owed, instant by instant, until a byte is on the line or
   * nothing is owed. After each instant it gives the event loop a turn, so
   * that work the timers deferred (promise continuations, writes coalesced in
   * a microtask) has happened, and is on the line, before time moves on.
   */
  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.ops.length > 0 && !this.lineBusy() && !this.failure) {
        const op = this.ops[0];
        if (op.kind === 'by' || op.kind === 'idle') op.startUs ??= this.nowUs();
        const targetUs = op.kind === 'to' || op.kind === 'until' ? op.us : op.startUs! + op.us;
        if (op.kind === 'until' && op.pred()) {
          this.ops.shift();
          continue;
        }
        if (targetUs < this.nowUs()) {
          this.ops.shift();
          throw new RangeError(`cannot move a clock backwards (now ${this.nowUs()} us, asked for ${targetUs} us)`);
        }
        const next = this.nextTimerUs();
        if (next === null || next > targetUs) {
          if (op.kind !== 'idle') super.advanceTo(targetUs);
          this.ops.shift();
          continue;
        }
        super.advanceTo(next);
        // Driver code ran (one of its timers fired): let what it deferred (promise continuations,
        // a write coalesced in a microtask) happen before time moves on. The board writes at once,
        // so its instants need no turn; every 256 instants the event loop gets one anyway.
        if (this.backgroundFired || ++this.quietInstants >= 256) {
          this.backgroundFired = false;
          this.quietInstants = 0;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
    } catch (e) {
      this.failure ??= e instanceof Error ? e : new Error(String(e));
    } finally {
      this.draining = false;
    }
    this.scheduleCheck();
  }

  /** After two event-loop turns (readers have read and answered): go on, or tell the waiters the line is quiet. */
  private scheduleCheck(): void {
    if (this.checkPending) return;
    this.checkPending = true;
    setImmediate(() =>
      setImmediate(() => {
        this.checkPending = false;
        if (this.lineBusy()) return;
        if (this.draining) return;
        if (this.ops.length > 0 && !this.failure) {
          void this.drain();
          return;
        }
        this.disarmWatchdog();
        const waiters = this.waiters;
        this.waiters = [];
        const failure = this.failure;
        this.failure = null;
        for (const w of waiters) (failure ? w.reject(failure) : w.resolve());
        if (failure && waiters.length === 0) this.failure = failure;
      }),
    );
  }

  private armWatchdog(): void {
    if (this.watchdog) return;
    this.progressMark = this.progress;
    this.watchdog = setInterval(() => {
      if (!this.lineBusy()) return this.disarmWatchdog();
      if (this.progress !== this.progressMark) {
        this.progressMark = this.progress;
        return;
      }
      const stuck = new Error(`bytes stuck on the line for ${this.stuckMs} ms of wall time (host->board ${this.inFlight.toBoard}, board->host ${this.inFlight.toHost}): a side closed its port or stopped reading`);
      this.disarmWatchdog();
      this.inFlight.toBoard = this.inFlight.toHost = 0;
      this.ops.length = 0;
      const waiters = this.waiters;
      this.waiters = [];
      if (waiters.length === 0) this.failure = stuck;
      for (const w of waiters) w.reject(stuck);
    }, this.stuckMs);
    this.watchdog.unref();
  }

  private disarmWatchdog(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
  }
}

export interface Line<B extends SimBoard = SimBoard> {
  readonly pty: PtyPair;
  /** The end the driver opens. */
  readonly hostPath: string;
  /** Pass as the driver's `trace` option: counts the host's bytes. */
  readonly trace: SerialTrace;
  /** Resolves once the host has written its first bytes (its end is open); a board powered up before that talks to nobody. */
  hostWrote(): Promise<void>;
  /** The board on the far end, once attached. */
  peer: (SerialPeer & { board: B }) | null;
  /** Opens the far end and wires the board made by `makeBoard(send)` to it, counting its bytes. */
  attachBoard<T extends B>(makeBoard: (send: (data: string | Buffer) => void) => T): Promise<SerialPeer & { board: T }>;
  /** Closes the board's end (the board is gone: unplugged, crashed); bytes toward it are lost. */
  detachBoard(): Promise<void>;
  /** Kills the pty pair (the cable pulled); `restore()` makes it (again) under the same names. */
  drop(): Promise<void>;
  restore(): Promise<void>;
  dispose(): Promise<void>;
}

/** A pty pair whose bytes both ways are counted by `clock`. */
export async function openLine<B extends SimBoard = SimBoard>(clock: LineClock, baudRate: number): Promise<Line<B>> {
  const line = createLine<B>(clock, baudRate);
  await line.restore();
  return line;
}

/** As openLine, but the pair is made (`restore()`) later: its paths are known at once. */
export function createLine<B extends SimBoard = SimBoard>(clock: LineClock, baudRate: number): Line<B> {
  const pty = new PtyPair();
  let boardPresent = false;
  /** The host has opened its end (it has written): before that, what the board says is lost, as on a real port nobody holds open. */
  let hostActive = false;
  let hostWaiters: (() => void)[] = [];
  const line: Line<B> = {
    pty,
    hostPath: pty.hostPath,
    trace: (direction, data) => {
      if (!hostActive) {
        hostActive = true;
        for (const w of hostWaiters) w();
        hostWaiters = [];
      }
      if (direction === 'rx') clock.received('toHost', data.length);
      else if (boardPresent && pty.isOpen) clock.sent('toBoard', data.length);
    },
    hostWrote: () => (hostActive ? Promise.resolve() : new Promise<void>((resolve) => hostWaiters.push(resolve))),
    peer: null,
    async attachBoard<T extends B>(makeBoard: (send: (data: string | Buffer) => void) => T) {
      const peer = await attachBoard(pty.devicePath, baudRate, makeBoard, (direction, data) => {
        if (direction === 'rx') clock.received('toBoard', data.length);
        else if (pty.isOpen && hostActive) clock.sent('toHost', data.length);
      });
      boardPresent = true;
      line.peer = peer;
      return peer;
    },
    async detachBoard() {
      boardPresent = false;
      const peer = line.peer;
      line.peer = null;
      await peer?.close();
      clock.discardInFlight();
    },
    async drop() {
      hostActive = false;
      await line.detachBoard();
      await pty.close();
      clock.discardInFlight();
    },
    async restore() {
      await pty.open();
    },
    async dispose() {
      await line.detachBoard();
      await pty.dispose();
    },
  };
  return line;
}
