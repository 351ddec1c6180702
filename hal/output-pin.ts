/**
 * A digital output: the trigger line a hardware-triggered instrument (a VNA's
 * external trigger input, a power meter's) listens to. `atUs` is the clock
 * time the edge is meant for, as StepperAxis.step carries its step's time.
 */
export interface OutputPin {
  /** Drives the output high or low; may throw HalError. */
  write(high: boolean, atUs: number): void;
}
