/**
 * Unit conversion between degrees and microsteps, in one place.
 *
 * stepsPerDeg = fullStepsPerRev * microstepping * gearRatio / 360
 * (motor full steps per motor revolution, microsteps per full step, motor
 * revolutions per axis revolution). Positions are whole microsteps; a degree
 * value is rounded to the nearest microstep when it becomes a target.
 */
export interface DriveTrain {
  fullStepsPerRev: number;
  gearRatio: number;
}

export function stepsPerDeg(drive: DriveTrain, microstepping: number): number {
  return (drive.fullStepsPerRev * microstepping * drive.gearRatio) / 360;
}

export function degToSteps(deg: number, perDeg: number): number {
  return Math.round(deg * perDeg);
}

export function stepsToDeg(steps: number, perDeg: number): number {
  return steps / perDeg;
}
