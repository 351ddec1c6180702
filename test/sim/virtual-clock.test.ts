import t from 'tap';
import { VirtualClock } from '../../sim/virtual-clock';

t.test('timers fire in time order, ties in the order they were set, each seeing its own time', (t) => {
  const clock = new VirtualClock();
  const seen: string[] = [];
  clock.setTimerAt(300, () => seen.push(`c@${clock.nowUs()}`));
  clock.setTimerAt(100, () => seen.push(`a@${clock.nowUs()}`));
  clock.setTimerAt(200, () => seen.push(`b1@${clock.nowUs()}`));
  clock.setTimerAt(200, () => seen.push(`b2@${clock.nowUs()}`));
  clock.advanceTo(250);
  t.same(seen, ['a@100', 'b1@200', 'b2@200']);
  t.equal(clock.nowUs(), 250);
  clock.advanceBy(100);
  t.same(seen, ['a@100', 'b1@200', 'b2@200', 'c@300']);
  t.end();
});

t.test('a timer set inside a callback for a time within the advance still fires in it', (t) => {
  const clock = new VirtualClock();
  const seen: number[] = [];
  clock.setTimerAt(10, () => {
    seen.push(clock.nowUs());
    clock.setTimerAt(20, () => seen.push(clock.nowUs()));
  });
  clock.advanceTo(30);
  t.same(seen, [10, 20]);
  t.end();
});

t.test('a timer in the past fires on the next advance, never inside setTimerAt', (t) => {
  const clock = new VirtualClock(1000);
  let fired = false;
  clock.setTimerAt(5, () => (fired = true));
  t.equal(fired, false);
  clock.advanceBy(0);
  t.equal(fired, true);
  t.end();
});

t.test('cancelled timers never fire and are not counted as pending', (t) => {
  const clock = new VirtualClock();
  let fired = 0;
  const h = clock.setTimerAt(10, () => fired++);
  clock.setTimerAt(20, () => fired++);
  h.cancel();
  t.equal(clock.pendingTimers(), 1);
  t.equal(clock.nextTimerUs(), 20);
  clock.advanceTo(100);
  t.equal(fired, 1);
  t.equal(clock.nextTimerUs(), null);
  t.end();
});

t.test('the clock refuses to go backwards', (t) => {
  const clock = new VirtualClock(500);
  t.throws(() => clock.advanceTo(499), RangeError);
  t.end();
});

t.test('runUntilIdle stops at the last timer, and at its limit for code that re-arms forever', (t) => {
  const clock = new VirtualClock();
  clock.setTimerAt(40, () => undefined);
  t.equal(clock.runUntilIdle(), 40);
  const again = (): void => void clock.setTimerAt(clock.nowUs() + 1000, again);
  again();
  const reached = clock.runUntilIdle(1e6);
  t.ok(reached <= 40 + 1e6 && reached > 40 + 1e6 - 1000, `stopped near the limit (${reached})`);
  t.end();
});

t.test('the horizon is the next pending timer or the end of the advance in progress', (t) => {
  const clock = new VirtualClock();
  const horizons: number[] = [];
  clock.setTimerAt(100, () => horizons.push(clock.horizonUs()));
  clock.setTimerAt(400, () => horizons.push(clock.horizonUs()));
  clock.advanceTo(1000);
  t.same(horizons, [400, 1000]);
  t.ok(clock.horizonUs() <= clock.nowUs(), 'outside an advance nothing may run ahead of now');
  t.end();
});
