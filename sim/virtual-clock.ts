/**
 * A virtual clock for tests and simulation: time stands still until the test
 * advances it, and timers fire in time order (ties in the order they were
 * set), each with the clock reading exactly its own time.
 */
import type { Clock, TimerHandle } from '../hal/clock';

class Timer implements TimerHandle {
  constructor(
    readonly atUs: number,
    readonly seq: number,
    public callback: (() => void) | null,
  ) {}

  cancel(): void {
    this.callback = null;
  }
}

export class VirtualClock implements Clock {
  private now: number;
  private seq = 0;
  /** Binary min-heap on (atUs, seq). */
  private readonly heap: Timer[] = [];
  /** While advanceTo runs: the time it is advancing to. */
  private targetUs: number;

  constructor(startUs = 0) {
    this.now = startUs;
    this.targetUs = startUs;
  }

  /**
   * Exclusive: nothing else can run before the next pending timer, nor before
   * the end of the advance in progress (outside an advance, the horizon is now).
   */
  horizonUs(): number {
    this.dropCancelled();
    const next = this.heap.length > 0 ? this.heap[0].atUs : Infinity;
    return Math.min(next, this.targetUs);
  }

  nowUs(): number {
    return this.now;
  }

  setTimerAt(atUs: number, callback: () => void): TimerHandle {
    const timer = new Timer(Math.max(atUs, this.now), this.seq++, callback);
    this.push(timer);
    return timer;
  }

  /** Number of timers still waiting (cancelled ones excluded). */
  pendingTimers(): number {
    return this.heap.filter((t) => t.callback !== null).length;
  }

  /** True while `handle` (from this clock's setTimerAt) has neither fired nor been cancelled. */
  isPending(handle: TimerHandle): boolean {
    return handle instanceof Timer && handle.callback !== null;
  }

  /**
   * `advanceBy` for tests that run unchanged on clocks whose time waits on
   * outside I/O (test/helpers/line-clock.ts): resolves once the time is
   * reached. Here that is at once.
   */
  async run(deltaUs: number): Promise<void> {
    this.advanceBy(deltaUs);
  }

  /** `runUntilIdle`, resolving once idle (see `run`). */
  async runIdle(limitUs?: number): Promise<number> {
    return this.runUntilIdle(limitUs);
  }

  /** Time of the next live timer, or null when none is waiting. */
  nextTimerUs(): number | null {
    this.dropCancelled();
    return this.heap.length > 0 ? this.heap[0].atUs : null;
  }

  /** Runs every timer due up to `targetUs`, then leaves the clock at `targetUs`. */
  advanceTo(targetUs: number): void {
    if (targetUs < this.now) throw new RangeError(`cannot move a clock backwards (now ${this.now} us, asked for ${targetUs} us)`);
    this.runTimers(targetUs);
    this.now = targetUs;
  }

  advanceBy(deltaUs: number): void {
    this.advanceTo(this.now + deltaUs);
  }

  /**
   * Runs timers until none is left (or `limitUs` of virtual time has passed,
   * a guard against code that re-arms forever). The clock stays at the last
   * timer's time, which it returns.
   */
  runUntilIdle(limitUs = 3600e6): number {
    this.runTimers(this.now + limitUs);
    return this.now;
  }

  private runTimers(targetUs: number): void {
    const heap = this.heap;
    this.targetUs = targetUs;
    try {
      while (heap.length > 0 && heap[0].atUs <= targetUs) {
        const timer = this.pop();
        const callback = timer.callback;
        if (callback === null) continue;
        timer.callback = null;
        this.now = timer.atUs;
        callback();
      }
    } finally {
      this.targetUs = this.now;
    }
  }

  private dropCancelled(): void {
    while (this.heap.length > 0 && this.heap[0].callback === null) this.pop();
  }

  private push(timer: Timer): void {
    const heap = this.heap;
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(timer, heap[parent])) break;
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = timer;
  }

  private pop(): Timer {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop() as Timer;
    if (heap.length > 0) {
      let i = 0;
      const n = heap.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const child = r < n && before(heap[r], heap[l]) ? r : l;
        if (!before(heap[child], last)) break;
        heap[i] = heap[child];
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }
}

function before(a: Timer, b: Timer): boolean {
  return a.atUs < b.atUs || (a.atUs === b.atUs && a.seq < b.seq);
}
