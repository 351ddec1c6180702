/**
 * Motion planner: acceleration-limited, coordinated two-axis moves.
 *
 * A move is planned along one path coordinate x, in degrees of the axis that
 * travels furthest (the dominant axis). Its velocity over time:
 *
 *     dx/dt
 *       ^
 *     v +          ______________________
 *       |         /:                    :\
 *       |        / :                    : \          trapezoid: accelerate at a,
 *       |       /  :                    :  \         cruise at v, decelerate at a
 *       |      /   :                    :   \
 *       |     /    :                    :    \
 *       +----+-----+--------------------+-----+----> t
 *            0     tA                tA+tC    T
 *
 *       ^
 *  vPeak+            /\                    triangle (short move, D < v^2/a):
 *       |           /  \                   v is never reached; vPeak = sqrt(a*D),
 *       |          /    \                  tA = sqrt(D/a), T = 2*tA
 *       +---------+------+---> t
 *                 0  tA  T
 *
 * Invariants (checked by the property tests in test/firmware/planner.test.ts):
 * 1. x runs from 0 at t = 0 to D at t = T, where D is the largest axis move in
 *    degrees. Axis i is at start_i + dir_i * N_i * x(t)/D microsteps, so every
 *    axis starts at t = 0 and arrives at t = T: the move is a straight line in
 *    (theta, phi) and both axes arrive together.
 * 2. 0 <= dx/dt <= v and |d2x/dt2| <= a. Axis i moves Δdeg_i <= D degrees, so
 *    its own speed and acceleration are bounded by v and a as well.
 * 3. Microstep k (1..N_i) of axis i happens at the exact time x(t) = D*k/N_i,
 *    computed in closed form from the profile (no integration, no drift); the
 *    last step of every axis is at exactly T.
 * 4. Pure: no clock, no I/O, no state. Times are seconds from the move start.
 *
 * Units: positions in microsteps (integers), angles in degrees, tSec in
 * seconds, speedDegS in deg/s, accelDegS2 in deg/s^2.
 */
import type { Direction } from '../hal/stepper-axis';

export interface AxisMoveInput {
  startSteps: number;
  targetSteps: number;
  stepsPerDeg: number;
}

export interface AxisPlan {
  /** Microsteps to issue (>= 0). */
  steps: number;
  direction: Direction;
  /** Degrees this axis travels (>= 0). */
  distanceDeg: number;
}

export interface MovePlan {
  readonly axes: readonly AxisPlan[];
  /** Path length in degrees of the dominant axis. */
  readonly distanceDeg: number;
  readonly durationSec: number;
  /** Peak path speed reached (== speed for a trapezoid). */
  readonly peakSpeedDegS: number;
  readonly accelDegS2: number;
  /** Time the acceleration (and the deceleration) phase lasts. */
  readonly accelTimeSec: number;
  /** Time spent cruising at peak speed (0 for a triangle). */
  readonly cruiseTimeSec: number;
  readonly shape: 'trapezoid' | 'triangle' | 'none';
  /** Exact time of microstep `k` (1-based) of axis `axisIndex`. */
  stepTimeSec(axisIndex: number, k: number): number;
  /** Path position (degrees of the dominant axis) at time tSec. */
  pathDegAt(tSec: number): number;
  /** Path speed (deg/s) at time tSec. */
  pathSpeedAt(tSec: number): number;
}

export class PlanError extends Error {
  readonly code = 'PLAN_INVALID';
  override readonly name = 'PlanError';
}

export function planMove(axes: readonly AxisMoveInput[], speedDegS: number, accelDegS2: number): MovePlan {
  if (!(speedDegS > 0) || !Number.isFinite(speedDegS)) throw new PlanError(`speed must be a positive number of deg/s, got ${speedDegS}`);
  if (!(accelDegS2 > 0) || !Number.isFinite(accelDegS2)) throw new PlanError(`accel must be a positive number of deg/s^2, got ${accelDegS2}`);
  const axisPlans: AxisPlan[] = axes.map((a) => {
    if (!Number.isInteger(a.startSteps) || !Number.isInteger(a.targetSteps)) {
      throw new PlanError('start and target must be whole microsteps');
    }
    if (!(a.stepsPerDeg > 0) || !Number.isFinite(a.stepsPerDeg)) throw new PlanError('steps per degree must be a positive finite number');
    const delta = a.targetSteps - a.startSteps;
    return { steps: Math.abs(delta), direction: delta < 0 ? -1 : 1, distanceDeg: Math.abs(delta) / a.stepsPerDeg };
  });
  const distanceDeg = axisPlans.reduce((max, a) => Math.max(max, a.distanceDeg), 0);
  return new TrapezoidPlan(axisPlans, distanceDeg, speedDegS, accelDegS2);
}

class TrapezoidPlan implements MovePlan {
  readonly durationSec: number;
  readonly peakSpeedDegS: number;
  readonly accelTimeSec: number;
  readonly cruiseTimeSec: number;
  readonly shape: 'trapezoid' | 'triangle' | 'none';
  /** Path distance covered while accelerating (and again while decelerating). */
  private readonly accelDistDeg: number;
  /** Per axis: degrees of path per microstep (D / N_i). */
  private readonly pathDegPerStep: number[];

  constructor(
    readonly axes: readonly AxisPlan[],
    readonly distanceDeg: number,
    speedDegS: number,
    readonly accelDegS2: number,
  ) {
    const d = distanceDeg;
    const a = accelDegS2;
    this.pathDegPerStep = axes.map((ax) => (ax.steps > 0 ? d / ax.steps : 0));
    if (d === 0) {
      this.shape = 'none';
      this.peakSpeedDegS = 0;
      this.accelTimeSec = 0;
      this.cruiseTimeSec = 0;
      this.accelDistDeg = 0;
      this.durationSec = 0;
    } else if (d < (speedDegS * speedDegS) / a) {
      this.shape = 'triangle';
      this.peakSpeedDegS = Math.sqrt(a * d);
      this.accelTimeSec = Math.sqrt(d / a);
      this.cruiseTimeSec = 0;
      this.accelDistDeg = d / 2;
      this.durationSec = 2 * this.accelTimeSec;
    } else {
      this.shape = 'trapezoid';
      this.peakSpeedDegS = speedDegS;
      this.accelTimeSec = speedDegS / a;
      this.accelDistDeg = (speedDegS * speedDegS) / (2 * a);
      this.cruiseTimeSec = (d - 2 * this.accelDistDeg) / speedDegS;
      this.durationSec = 2 * this.accelTimeSec + this.cruiseTimeSec;
    }
  }

  stepTimeSec(axisIndex: number, k: number): number {
    const steps = this.axes[axisIndex].steps;
    // The last step lands on T exactly, whatever rounding D*k/N would give.
    if (k >= steps) return this.durationSec;
    return this.timeAtPathDeg(this.pathDegPerStep[axisIndex] * k);
  }

  /** Inverse of the profile: the time at which the path reaches xDeg. */
  private timeAtPathDeg(xDeg: number): number {
    if (xDeg <= this.accelDistDeg) return Math.sqrt((2 * xDeg) / this.accelDegS2);
    const decelStartDeg = this.distanceDeg - this.accelDistDeg;
    if (xDeg <= decelStartDeg) return this.accelTimeSec + (xDeg - this.accelDistDeg) / this.peakSpeedDegS;
    return this.durationSec - Math.sqrt((2 * (this.distanceDeg - xDeg)) / this.accelDegS2);
  }

  pathDegAt(tSec: number): number {
    const a = this.accelDegS2;
    if (tSec <= 0) return 0;
    if (tSec >= this.durationSec) return this.distanceDeg;
    if (tSec <= this.accelTimeSec) return 0.5 * a * tSec * tSec;
    const decelStartSec = this.accelTimeSec + this.cruiseTimeSec;
    if (tSec <= decelStartSec) return this.accelDistDeg + this.peakSpeedDegS * (tSec - this.accelTimeSec);
    const left = this.durationSec - tSec;
    return this.distanceDeg - 0.5 * a * left * left;
  }

  pathSpeedAt(tSec: number): number {
    if (tSec <= 0 || tSec >= this.durationSec) return 0;
    if (tSec <= this.accelTimeSec) return this.accelDegS2 * tSec;
    if (tSec <= this.accelTimeSec + this.cruiseTimeSec) return this.peakSpeedDegS;
    return this.accelDegS2 * (this.durationSec - tSec);
  }
}
