/**
 * A step/dir stepper axis: the lowest level the firmware drives.
 *
 * The firmware plans every microstep's time and hands each step to the axis
 * with the time it was scheduled for. A driver that times pulses itself (a
 * step-queue MCU, the simulator's physics) uses `atUs`; a driver that pulses
 * immediately may ignore it. Node.js cannot time pulses to the microsecond, so
 * passing the intended time keeps step timing exact even when the host wakes
 * late and issues several due steps at once.
 */
export type Direction = 1 | -1;

export interface StepperAxis {
  /**
   * Issues one microstep in `direction` (+1 increases the angle), scheduled
   * for `atUs` on the firmware clock. Throws HalError when the driver fails.
   */
  step(direction: Direction, atUs: number): void;
  /** Energises (true) or releases (false) the motor; releasing loses holding torque. */
  setEnabled(enabled: boolean): void;
}
