/**
 * The step-rate arithmetic of hal/firmata-step-rate.ts: moves scaled to fit
 * the board's loop, keeping the axes' ratio, and the rates the board makes.
 */
import fc from 'fast-check';
import t from 'tap';
import { loopTimingFor, madeIntervalUs, madeStepRate, stepRateScale, UNO_LOOP } from '../../hal/firmata-step-rate';

t.test('the Uno: one axis alone ~3,600 steps/s, two together ~2,000 each (the measured ceilings)', (t) => {
  t.ok(Math.abs(madeStepRate(1e6, 0, UNO_LOOP) - 3623) < 5, `lone ${madeStepRate(1e6, 0, UNO_LOOP).toFixed(0)}`);
  t.equal(madeIntervalUs(1, 0, UNO_LOOP), UNO_LOOP.passUs + UNO_LOOP.stepUs);
  // Both at full speed, each step's pass is held by the other's step: 500 us.
  t.ok(stepRateScale(2000, 2000, UNO_LOOP, 1) <= 1.0 && stepRateScale(2100, 2100, UNO_LOOP, 1) < 1, 'two at 2,000 fit, 2,100 do not');
  t.end();
});

t.test('scaling keeps the ratio and fits the budget; a move that fits is left alone', (t) => {
  fc.assert(
    fc.property(fc.double({ min: 1, max: 50_000, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1000, max: 20_000 }), (fast, share, lone) => {
      const timing = loopTimingFor(lone);
      const k = stepRateScale(fast, fast * share, timing);
      const load = (fast * k * (timing.passUs + timing.stepUs) + fast * share * k * timing.stepUs) / 1e6;
      return k > 0 && k <= 1 && load <= 0.9 + 1e-9 && (k === 1 || Math.abs(load - 0.9) < 1e-9);
    }),
  );
  t.equal(stepRateScale(100, 50, UNO_LOOP), 1);
  t.end();
});

t.test('an axis alone is made on the loop grid: rounded up to the next pass', (t) => {
  // 2,846 steps/s asked: 351 us, made at 276 + 2 x 52 = 380 us.
  t.equal(madeIntervalUs(351, 0, UNO_LOOP), 380);
  t.equal(madeIntervalUs(380, 0, UNO_LOOP), 380);
  t.ok(madeIntervalUs(2000, 3000, UNO_LOOP) > 2000, 'a partner stepping often makes it later still');
  t.end();
});
