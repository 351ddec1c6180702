/**
 * Test helpers for scans: run a scan to its end on a virtual clock, waiting
 * for measurements that answer with a promise (a command, a webhook) before
 * time moves on, so their clock-timer timeouts fire only when a test
 * advances time on purpose.
 */
import type { Scanner } from '../../firmware/scan';
import type { VirtualClock } from '../../sim/virtual-clock';
import type { LineClock } from './line-clock';

/**
 * Runs the clock until the scan is no longer running (done, paused, aborted,
 * failed) or `limitUs` of virtual time has passed. With `sync` (a source
 * that answers at once, the simulated antenna) the whole scan runs in
 * runUntilIdle; otherwise timer instant by timer instant, awaiting each
 * measurement in flight before the clock moves, except with `clockDriven`
 * (a trigger pulse, which ends on a clock timer).
 */
export async function runScan(clock: VirtualClock, scanner: Scanner, opts: { sync?: boolean; limitUs?: number; clockDriven?: boolean } = {}): Promise<void> {
  const endUs = clock.nowUs() + (opts.limitUs ?? 3600e6);
  while (scanner.active()) {
    const pending = scanner.pendingMeasurement();
    if (pending && opts.clockDriven) {
      // A measurement that waits on the clock itself (a trigger pulse): let its promise chain run, then move time on.
      await Promise.race([pending, new Promise((r) => setImmediate(r))]);
      if (!scanner.pendingMeasurement()) continue;
    } else if (pending) {
      await pending;
      continue;
    }
    if (opts.sync) {
      clock.runUntilIdle(endUs - clock.nowUs());
      if (scanner.active() && !scanner.pendingMeasurement()) break;
      continue;
    }
    const next = clock.nextTimerUs();
    if (next === null || next > endUs) break;
    clock.advanceTo(next);
  }
}

/** The same over a serial line's LineClock: advances `sliceUs` at a time (the driver's polls never let the timers run out). */
export async function runScanOnLine(clock: LineClock, scanner: Scanner, opts: { sliceUs?: number; limitUs?: number; clockDriven?: boolean } = {}): Promise<void> {
  const sliceUs = opts.sliceUs ?? 200e3;
  const endUs = clock.nowUs() + (opts.limitUs ?? 3600e6);
  while (scanner.active() && clock.nowUs() < endUs) {
    const pending = scanner.pendingMeasurement();
    if (pending && !opts.clockDriven) {
      await pending;
      continue;
    }
    await clock.run(sliceUs);
  }
}
