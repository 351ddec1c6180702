/**
 * Positioner configuration: motion limits, drive trains and homing, with the
 * defaults the simulator and a typical build use.
 *
 * Units: speedDegS in deg/s (top speed of the axis that travels furthest in a
 * move), accelDegS2 in deg/s^2. Defaults give 320 microsteps/deg on theta
 * (200 full steps, 1/16 microstepping, 36:1 gearing) and 800 on phi (90:1),
 * the resolution of common antenna-measurement positioners.
 */
import type { AxisName, AxisPair } from '../hal/axes';
import type { DriveTrain } from './units';
import { stepsPerDeg } from './units';

export interface HomingConfig {
  /** Speed while seeking the switch, deg/s. */
  seekDegS: number;
  /** Slow re-approach speed that sets zero, deg/s. */
  feedDegS: number;
  /** Distance backed off the switch before the re-approach, deg. */
  pullOffDeg: number;
}

export interface AxisConfig extends DriveTrain {
  homing: HomingConfig;
}

export interface PositionerConfig {
  speedDegS: number;
  accelDegS2: number;
  /** Highest speed POST /config accepts (the step generator's ceiling, not the motor's). */
  maxSpeedDegS: number;
  maxAccelDegS2: number;
  microstepping: number;
  /** Home both axes at the same time (the homing takes as long as the slower axis); false: theta, then phi. */
  simultaneousHoming: boolean;
  axes: AxisPair<AxisConfig>;
}

/**
 * Lowest speed and accel POST /config accepts. Any positive double is not
 * enough: at 1e-320 deg/s every step time overflows to Infinity and a move
 * "completes" without a single step. At these floors phi's whole 360 deg still
 * takes a finite (if long) 100 h.
 */
export const MIN_SPEED_DEG_S = 0.001;
export const MIN_ACCEL_DEG_S2 = 0.001;

/** Travel of each axis, fixed by the positioner's geometry. */
export const AXIS_RANGE_DEG: AxisPair<{ min: number; max: number }> = {
  theta: { min: 0, max: 180 },
  phi: { min: 0, max: 360 },
};

export function defaultConfig(): PositionerConfig {
  return {
    speedDegS: 10,
    accelDegS2: 20,
    maxSpeedDegS: 60,
    maxAccelDegS2: 500,
    microstepping: 16,
    simultaneousHoming: true,
    axes: {
      theta: { fullStepsPerRev: 200, gearRatio: 36, homing: { seekDegS: 10, feedDegS: 1, pullOffDeg: 2 } },
      phi: { fullStepsPerRev: 200, gearRatio: 90, homing: { seekDegS: 10, feedDegS: 1, pullOffDeg: 2 } },
    },
  };
}

export function axisStepsPerDeg(config: PositionerConfig, axis: AxisName): number {
  return stepsPerDeg(config.axes[axis], config.microstepping);
}
