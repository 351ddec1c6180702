/**
 * A simulated trigger output (hal/output-pin.ts): records every edge with its
 * time, so tests can check each pulse's length and when it came.
 */
import type { OutputPin } from '../hal/output-pin';

export interface TriggerPulse {
  startUs: number;
  endUs: number;
}

export class SimOutputPin implements OutputPin {
  readonly edges: { high: boolean; atUs: number }[] = [];
  high = false;
  /** Called on every edge (a test can look at the machine at that moment). */
  onEdge: ((high: boolean, atUs: number) => void) | null = null;

  write(high: boolean, atUs: number): void {
    this.high = high;
    this.edges.push({ high, atUs });
    this.onEdge?.(high, atUs);
  }

  /** Complete pulses (rising edge then falling edge), in order. */
  pulses(): TriggerPulse[] {
    const out: TriggerPulse[] = [];
    let start: number | null = null;
    for (const e of this.edges) {
      if (e.high && start === null) start = e.atUs;
      else if (!e.high && start !== null) {
        out.push({ startUs: start, endUs: e.atUs });
        start = null;
      }
    }
    return out;
  }
}
