/**
 * The service's only source of time. Delivery rules, the scheduler, the
 * event cache and the log read the time through a Clock so tests can move it
 * (quiet hours, lead times, a daylight-saving change) without waiting.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until a test moves it. */
export class ManualClock implements Clock {
  private tMs: number;
  constructor(start: Date | string) {
    this.tMs = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.tMs);
  }
  set(t: Date | string): void {
    this.tMs = new Date(t).getTime();
  }
  advanceMinutes(min: number): void {
    this.tMs += min * 60_000;
  }
}

/** Waits `ms` milliseconds (injected where retries back off, so tests can shorten it). */
export type Sleep = (ms: number) => Promise<void>;
export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
