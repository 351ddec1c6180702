/**
 * What step rates a ConfigurableFirmata board really makes, and the speeds to
 * ask of it so that two axes still arrive together: pure functions, used by
 * hal/firmata-driver.ts.
 *
 * The board steps from its main loop (AccelStepperFirmata::update() ->
 * AccelStepper::run()): a stepper steps at the first pass of loop() at or
 * after its due time, and its next due time counts from that pass
 * (runSpeed(): `_lastStepTime = time`). On an Uno a pass with nothing to step
 * takes ~52 us and a step adds ~224 us (computeNewSpeed() in soft float),
 * measured on the real firmware: one axis alone tops out near 3,620 steps/s,
 * two together near 2,000 each. So:
 *
 *   - an axis alone steps on a grid: after a step, passes come every
 *     `passUs` from `stepUs + passUs` on, and a commanded interval is rounded
 *     up to that grid (2,846 steps/s asked, 2,564 made);
 *   - an axis whose partner steps often finds the grid moved at random:
 *     half a pass late on average;
 *   - a partner's step that is being made when this axis falls due holds it
 *     back by half a step on average.
 *
 *   interval made ~ grid(asked) or asked + pass/2, + (partner rate x step) x step/2
 *
 * The grid depends on how long each pass really takes (serial input, input
 * sampling), so the driver does not rely on it to keep two axes in step: it
 * scales moves to fit (`stepRateScale`), predicts the rates for its first
 * velocity estimate (`madeStepRate`), then measures both axes' progress and
 * trims the slower axis's speed to the faster one's (hal/firmata-driver.ts).
 * Everything scales with the board's measured lone-axis ceiling.
 */

export interface BoardLoopTiming {
  /** One pass of loop() with no step, us. */
  passUs: number;
  /** What one step adds to its pass, us. */
  stepUs: number;
}

/** Measured on an Uno (ATmega328P, 16 MHz) with ConfigurableFirmata 3.3.0: a lone axis steps every ~276 us, two together every ~500 us. */
export const UNO_LOOP: BoardLoopTiming = { passUs: 52, stepUs: 224 };

/** The loop timing of a board whose lone axis makes `maxStepRateStepsS`, in the Uno's proportions. */
export function loopTimingFor(maxStepRateStepsS: number): BoardLoopTiming {
  const loneUs = 1e6 / maxStepRateStepsS;
  const unoLoneUs = UNO_LOOP.passUs + UNO_LOOP.stepUs;
  return { passUs: (loneUs * UNO_LOOP.passUs) / unoLoneUs, stepUs: (loneUs * UNO_LOOP.stepUs) / unoLoneUs };
}

/** The interval (us) an axis asked for `askedUs` really steps at while its partner makes `partnerStepsS`. */
export function madeIntervalUs(askedUs: number, partnerStepsS: number, t: BoardLoopTiming): number {
  const loneUs = t.stepUs + t.passUs;
  const partnerBusy = (partnerStepsS * t.stepUs) / 1e6;
  // The partner steps less than every other interval of ours: our own step sets the phase of the passes.
  const ownGrid = (partnerStepsS * askedUs) / 1e6 < 0.5;
  let base: number;
  if (askedUs <= loneUs) base = loneUs;
  else if (ownGrid) base = loneUs + Math.ceil((askedUs - loneUs) / t.passUs - 1e-9) * t.passUs;
  else base = askedUs + t.passUs / 2;
  return base + (partnerBusy * t.stepUs) / 2;
}

/**
 * The factor (<= 1) that brings two axes wanted at `aStepsS` and `bStepsS` within `budget` of
 * the board's CPU: every step of the faster axis needs a pass of its own, the slower axis's steps
 * mostly share one. With the Uno's numbers and the default 0.9, two equal axes get ~1,800 each.
 */
export function stepRateScale(aStepsS: number, bStepsS: number, t: BoardLoopTiming, budget = 0.9): number {
  const fast = Math.max(aStepsS, bStepsS);
  const slow = Math.min(aStepsS, bStepsS);
  const load = (fast * (t.stepUs + t.passUs) + slow * t.stepUs) / 1e6;
  return load > budget ? budget / load : 1;
}

/** The rate (steps/s) an axis asked for `askedStepsS` makes while its partner makes `partnerStepsS`. */
export function madeStepRate(askedStepsS: number, partnerStepsS: number, t: BoardLoopTiming): number {
  return askedStepsS > 0 ? 1e6 / madeIntervalUs(1e6 / askedStepsS, partnerStepsS, t) : 0;
}

/**
 * The speed to ask (steps/s) so that an axis makes `madeStepsS` while its partner makes
 * `partnerStepsS`: the inverse of madeStepRate, for the slower axis of a move. Never above
 * what is wanted of the partner's ratio; 0 stays 0.
 */
export function askedForMade(madeStepsS: number, partnerStepsS: number, t: BoardLoopTiming): number {
  if (!(madeStepsS > 0)) return 0;
  const wantUs = 1e6 / madeStepsS;
  let lo = 1;
  let hi = wantUs;
  if (madeIntervalUs(hi, partnerStepsS, t) <= wantUs) return madeStepsS;
  for (let i = 0; i < 50; i++) {
    const mid = (lo + hi) / 2;
    if (madeIntervalUs(mid, partnerStepsS, t) > wantUs) hi = mid;
    else lo = mid;
  }
  return 1e6 / lo;
}
