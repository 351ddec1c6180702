/**
 * A home (reference) switch at an axis minimum. Reading it is cheap and may be
 * done after every step during homing. Throws HalError when it cannot be read.
 */
export interface HomeSwitch {
  /** True while the switch is closed (the axis is at or beyond its home point). */
  isTriggered(): boolean;
}
