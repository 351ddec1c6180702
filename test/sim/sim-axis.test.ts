import t from 'tap';
import { HalError } from '../../hal/errors';
import { SimAxis } from '../../sim/sim-axis';

const linear = (over: Partial<ConstructorParameters<typeof SimAxis>[0]> = {}) =>
  new SimAxis({ powerOnSteps: 100, maxStepRateHz: 1000, hysteresisSteps: 5, ...over });

/** Steps `n` times at `rateHz`, starting at `fromUs`; returns the time after the last step. */
function run(axis: SimAxis, n: number, dir: 1 | -1, rateHz: number, fromUs = 0): number {
  let tUs = fromUs;
  for (let i = 0; i < n; i++) {
    tUs += 1e6 / rateHz;
    axis.stepper.step(dir, tUs);
  }
  return tUs;
}

t.test('steps below the top rate move the shaft one microstep each', (t) => {
  const axis = linear();
  run(axis, 50, 1, 500);
  t.equal(axis.truePositionSteps, 150);
  run(axis, 20, -1, 500, 1e6);
  t.equal(axis.truePositionSteps, 130);
  t.equal(axis.lostSteps, 0);
  t.equal(axis.stepsReceived, 70);
  t.end();
});

t.test('stepping faster than the top rate stalls the motor, which loses steps until it is slowed to the pull-in rate', (t) => {
  const axis = linear({ pullInRateHz: 200 });
  let tUs = run(axis, 10, 1, 800); // fine
  tUs = run(axis, 30, 1, 2000, tUs); // too fast: stalls at once
  t.ok(axis.stalled, 'stalled');
  t.equal(axis.truePositionSteps, 110, 'no step past the stall moved the shaft');
  tUs = run(axis, 10, 1, 500, tUs); // still above pull-in: still lost
  t.ok(axis.stalled);
  t.equal(axis.truePositionSteps, 110);
  run(axis, 5, 1, 100, tUs); // slow enough to pull in again
  t.notOk(axis.stalled);
  t.equal(axis.truePositionSteps, 115, 'the first step slow enough to pull in moves the shaft again');
  t.equal(axis.lostSteps, 40);
  t.end();
});

t.test('the home switch closes at the home point and needs the hysteresis travel to open again', (t) => {
  const axis = linear({ powerOnSteps: 3 });
  t.notOk(axis.homeSwitch.isTriggered());
  let tUs = run(axis, 3, -1, 100);
  t.equal(axis.truePositionSteps, 0);
  t.ok(axis.homeSwitch.isTriggered(), 'closed at 0');
  tUs = run(axis, 5, 1, 100, tUs);
  t.ok(axis.homeSwitch.isTriggered(), 'still closed within the hysteresis');
  run(axis, 1, 1, 100, tUs);
  t.notOk(axis.homeSwitch.isTriggered(), 'open beyond it');
  t.end();
});

t.test('a rotary axis finds its home point once per revolution, on a cam a few steps wide', (t) => {
  const rotary = (powerOnSteps: number) => new SimAxis({ powerOnSteps, maxStepRateHz: 1e6, hysteresisSteps: 1, switchWidthSteps: 10, revolutionSteps: 1000 });
  const axis = rotary(1003);
  t.notOk(axis.homeSwitch.isTriggered(), 'open three steps past the home point of the second revolution');
  run(axis, 3, -1, 1000);
  t.equal(axis.truePositionSteps, 1000);
  t.ok(axis.homeSwitch.isTriggered(), 'closes on reaching the home point a revolution on');
  t.ok(rotary(995).homeSwitch.isTriggered(), 'closed on the cam, just below the home point');
  t.notOk(rotary(985).homeSwitch.isTriggered(), 'open past the cam');
  t.notOk(rotary(500).homeSwitch.isTriggered(), 'open half a turn away');
  t.ok(rotary(-2000).homeSwitch.isTriggered(), 'negative whole revolutions are home points too');
  t.end();
});

t.test('faults: stuck switch, forced stall, driver failure', (t) => {
  const axis = linear({ powerOnSteps: 0 });
  t.ok(axis.homeSwitch.isTriggered());
  axis.faults.switch = 'stuck-open';
  t.notOk(axis.homeSwitch.isTriggered());
  axis.faults.switch = 'stuck-closed';
  run(axis, 50, 1, 100);
  t.ok(axis.homeSwitch.isTriggered());
  axis.faults.switch = 'none';
  t.notOk(axis.homeSwitch.isTriggered());

  axis.faults.stall = true;
  run(axis, 10, 1, 100, 1e6);
  t.equal(axis.truePositionSteps, 50, 'a forced stall loses every step');
  t.equal(axis.lostSteps, 10);
  axis.faults.stall = false;

  axis.faults.driver = 'over-temperature';
  let thrown: unknown;
  try {
    axis.stepper.step(1, 3e6);
  } catch (e) {
    thrown = e;
  }
  t.ok(thrown instanceof HalError, 'a HalError');
  t.equal((thrown as HalError).kind, 'DRIVER_FAULT');
  t.match((thrown as HalError).message, /over-temperature/);
  t.equal(axis.truePositionSteps, 50, 'the failed step did not move the shaft');
  t.end();
});

t.test('a disabled motor does not move; recording keeps every step with its time and fate', (t) => {
  const axis = linear();
  axis.startRecording();
  axis.stepper.step(1, 10);
  axis.stepper.setEnabled(false);
  axis.stepper.step(1, 20000);
  t.equal(axis.truePositionSteps, 101);
  t.same(axis.records, [
    { tUs: 10, direction: 1, moved: true },
    { tUs: 20000, direction: 1, moved: false },
  ]);
  t.end();
});
