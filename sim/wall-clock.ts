/**
 * The clock of a running server: real time from the process's monotonic
 * clock, optionally sped up (`timeScale` > 1 runs the simulated machine faster
 * than real time, for demos and end-to-end tests of long moves).
 *
 * Node timers wake with millisecond granularity; the step executor issues
 * every step that fell due since its last wake-up, each with its exact
 * scheduled time, so step timing seen by the simulated hardware stays exact.
 */
import type { Clock, TimerHandle } from '../hal/clock';

export class WallClock implements Clock {
  private readonly originNs = process.hrtime.bigint();

  constructor(private readonly timeScale = 1) {
    if (!(timeScale > 0) || !Number.isFinite(timeScale)) throw new RangeError(`time scale must be a positive number, got ${timeScale}`);
  }

  nowUs(): number {
    return (Number(process.hrtime.bigint() - this.originNs) / 1000) * this.timeScale;
  }

  setTimerAt(atUs: number, callback: () => void): TimerHandle {
    const delayMs = Math.max(0, (atUs - this.nowUs()) / 1000 / this.timeScale);
    const fire = (): void => {
      // setTimeout may wake a little early; wait out the rest rather than fire before atUs.
      const leftMs = (atUs - this.nowUs()) / 1000 / this.timeScale;
      if (leftMs > 0) handle = setTimeout(fire, Math.ceil(leftMs));
      else callback();
    };
    let handle = setTimeout(fire, delayMs);
    return { cancel: () => clearTimeout(handle) };
  }
}
