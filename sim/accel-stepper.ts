/**
 * One AccelStepper (Mike McCauley's Arduino library, version 1.57, as
 * ConfigurableFirmata 3.3.0 carries it in src/utility/AccelStepper.cpp), as a
 * state machine with no clock of its own: the simulated Firmata board
 * (sim/firmata-board.ts) calls `run(nowUs)` whenever its main loop would, and
 * sends a step pulse when it returns with `stepped` set.
 *
 * What the driver can observe, and where it comes from:
 * - the speed profile is David Austin's: the first interval after rest is
 *   c0 = 0.676 * sqrt(2 / a) s, then c_n = c_{n-1} - 2 c_{n-1} / (4n + 1),
 *   never below c_min = 1 / maxSpeed (computeNewSpeed(), setAcceleration());
 *   the first step from rest is issued at once (runSpeed() compares with the
 *   time of the last step, long ago);
 * - a step is due `stepInterval` microseconds after the moment the previous
 *   step was *checked*, not after it was due (runSpeed(): `_lastStepTime =
 *   time`), so every late loop lengthens the move: this, and the time
 *   computeNewSpeed() takes on a 16 MHz AVR, is the board's speed ceiling;
 * - stop() does not stop: it moves the target to "speed^2 / 2a + 1" steps
 *   ahead, a deceleration (stop());
 * - after a stop the speed, n and the direction survive; only
 *   setCurrentPosition() (Firmata's ACCELSTEPPER_ZERO) clears them, so the
 *   next moveTo() starts at the old speed and decelerates in the old
 *   direction before it reverses (computeNewSpeed()'s `_n > 0` branches).
 * The AVR computes in 32-bit floats (avr-gcc's double is a float too):
 * every float result is rounded to single precision here.
 */

const f32 = Math.fround;

/** DIRECTION_CW (+1, the DIR pin high) and DIRECTION_CCW (-1, low; the constructor's default). */
export type StepDirection = 1 | -1;

export class AccelStepperModel {
  currentPos = 0;
  targetPos = 0;
  /** Signed speed, steps/s, as computeNewSpeed() last set it. */
  speedStepsS = 0;
  maxSpeedStepsS = 1;
  accelStepsS2 = 0;
  /** Microseconds between steps; 0 = not stepping (an unsigned long on the AVR). */
  stepIntervalUs = 0;
  lastStepUs = 0;
  /** Step counter of the ramp: > 0 accelerating or cruising, < 0 decelerating. */
  n = 0;
  c0Us = 0;
  cnUs = 0;
  cminUs = 1;
  direction: StepDirection = -1;

  constructor() {
    // AccelStepper::AccelStepper(): "some reasonable default".
    this.setAcceleration(1);
  }

  distanceToGo(): number {
    return this.targetPos - this.currentPos;
  }

  /** moveTo(): a new target recomputes the speed at once (the next step's interval). */
  moveTo(absolute: number): void {
    if (this.targetPos === absolute) return;
    this.targetPos = absolute;
    this.computeNewSpeed();
  }

  /** move(): relative to the current position. */
  move(relative: number): void {
    this.moveTo(this.currentPos + relative);
  }

  /** setCurrentPosition(): the only call that forgets the speed and the ramp. */
  setCurrentPosition(position: number): void {
    this.targetPos = this.currentPos = position;
    this.n = 0;
    this.stepIntervalUs = 0;
    this.speedStepsS = 0;
  }

  /** setMaxSpeed(): a change mid-ramp re-derives n from the current speed (Equation 16). */
  setMaxSpeed(speedStepsS: number): void {
    const speed = f32(Math.abs(speedStepsS));
    if (this.maxSpeedStepsS === speed) return;
    this.maxSpeedStepsS = speed;
    this.cminUs = f32(1e6 / speed);
    if (this.n > 0) {
      this.n = Math.trunc(f32((this.speedStepsS * this.speedStepsS) / f32(2 * this.accelStepsS2)));
      this.computeNewSpeed();
    }
  }

  /** setAcceleration(): 0 is ignored; a change rescales n (Equation 17) and c0 (Equation 15). */
  setAcceleration(accelStepsS2: number): void {
    if (accelStepsS2 === 0) return;
    const accel = f32(Math.abs(accelStepsS2));
    if (this.accelStepsS2 === accel) return;
    this.n = Math.trunc(f32(this.n * f32(this.accelStepsS2 / accel)));
    this.c0Us = f32(0.676 * Math.sqrt(f32(2 / accel)) * 1e6);
    this.accelStepsS2 = accel;
    this.computeNewSpeed();
  }

  /** stop(): sets a target just far enough ahead to decelerate to rest; does not stop by itself. */
  stop(): void {
    if (this.speedStepsS === 0) return;
    const stepsToStop = Math.trunc(f32((this.speedStepsS * this.speedStepsS) / f32(2 * this.accelStepsS2))) + 1;
    this.move(this.speedStepsS > 0 ? stepsToStop : -stepsToStop);
  }

  /** setSpeed() (MultiStepper::moveTo()): a constant speed, clamped to maxSpeed; its sign sets the direction. */
  setConstantSpeed(speedStepsS: number): void {
    const speed = f32(Math.max(-this.maxSpeedStepsS, Math.min(this.maxSpeedStepsS, speedStepsS)));
    if (speed === this.speedStepsS) return;
    if (speed === 0) {
      this.stepIntervalUs = 0;
    } else {
      this.stepIntervalUs = Math.trunc(Math.abs(f32(1e6 / speed)));
      this.direction = speed > 0 ? 1 : -1;
    }
    this.speedStepsS = speed;
  }

  /** runSpeed() alone (MultiStepper::run()): a step if one is due at the constant speed; returns its direction or 0. */
  runConstantSpeed(nowUs: number): 0 | StepDirection {
    if (this.stepIntervalUs === 0 || nowUs - this.lastStepUs < this.stepIntervalUs) return 0;
    this.currentPos += this.direction;
    this.lastStepUs = nowUs;
    return this.direction;
  }

  /** When runSpeed() would next step (the interval counts from the last check that stepped), or null. */
  nextDueUs(): number | null {
    return this.stepIntervalUs === 0 ? null : this.lastStepUs + this.stepIntervalUs;
  }

  /**
   * run(): steps if one is due at `nowUs` (then computes the next interval) and
   * says whether the motor is still running. `stepped` is the direction of the
   * pulse sent, or 0.
   */
  run(nowUs: number): { stepped: 0 | StepDirection; running: boolean } {
    // runSpeed(): position first, then the pulse (step1(): DIR set before STEP rises); then the next interval.
    const stepped = this.runConstantSpeed(nowUs);
    if (stepped !== 0) this.computeNewSpeed();
    return { stepped, running: this.speedStepsS !== 0 || this.distanceToGo() !== 0 };
  }

  /** computeNewSpeed(): the next interval of the ramp toward the target. */
  private computeNewSpeed(): void {
    const distanceTo = this.distanceToGo();
    const stepsToStop = Math.trunc(f32((this.speedStepsS * this.speedStepsS) / f32(2 * this.accelStepsS2)));
    if (distanceTo === 0 && stepsToStop <= 1) {
      // At the target and slow enough: at rest.
      this.stepIntervalUs = 0;
      this.speedStepsS = 0;
      this.n = 0;
      return;
    }
    if (distanceTo > 0) {
      // Target ahead (clockwise): decelerate if too close or running the wrong way; accelerate again if decelerating needlessly.
      if (this.n > 0) {
        if (stepsToStop >= distanceTo || this.direction === -1) this.n = -stepsToStop;
      } else if (this.n < 0) {
        if (stepsToStop < distanceTo && this.direction === 1) this.n = -this.n;
      }
    } else if (distanceTo < 0) {
      if (this.n > 0) {
        if (stepsToStop >= -distanceTo || this.direction === 1) this.n = -stepsToStop;
      } else if (this.n < 0) {
        if (stepsToStop < -distanceTo && this.direction === -1) this.n = -this.n;
      }
    }
    if (this.n === 0) {
      // First step from rest: c0, and the direction of the target.
      this.cnUs = this.c0Us;
      this.direction = distanceTo > 0 ? 1 : -1;
    } else {
      // Equation 13, for acceleration (n > 0) and deceleration (n < 0) alike.
      this.cnUs = f32(this.cnUs - f32(f32(2 * this.cnUs) / f32(4 * this.n + 1)));
      this.cnUs = Math.max(this.cnUs, this.cminUs);
    }
    this.n++;
    this.stepIntervalUs = Math.trunc(this.cnUs);
    this.speedStepsS = f32(1e6 / this.cnUs);
    if (this.direction === -1) this.speedStepsS = -this.speedStepsS;
  }
}
