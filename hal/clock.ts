/**
 * The clock the firmware runs on: the only source of time and timers.
 *
 * Time is a monotonic count of microseconds (`tUs`) from an arbitrary epoch
 * chosen by the clock. Nothing in the firmware reads `Date.now()`,
 * `performance.now()` or calls `setTimeout` directly; it asks a Clock, so the
 * same code runs on wall time (the server) and on a virtual clock (tests).
 */
export interface TimerHandle {
  /** Cancels the timer; cancelling a fired or cancelled timer does nothing. */
  cancel(): void;
}

export interface Clock {
  /** Current time in microseconds; never decreases. */
  nowUs(): number;
  /**
   * Calls `callback` once, as soon as possible at or after `atUs`. A time in
   * the past fires on the next turn, never synchronously inside this call.
   */
  setTimerAt(atUs: number, callback: () => void): TimerHandle;
  /**
   * Optional, for discrete-event clocks: the time up to which nothing else can
   * run (no other timer is due and no outside code gets a turn). A timer
   * callback may do the work due before this time in one go, as if it had
   * woken at each instant. Real-time clocks leave it out: their horizon is now.
   */
  horizonUs?(): number;
}
