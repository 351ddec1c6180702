/**
 * The state machine against a controller that refuses to start: whatever a
 * driver throws, the positioner must not be left busy for good.
 */
import t from 'tap';
import type { MotionController, MotionEnd } from '../../hal/motion-controller';
import { defaultConfig } from '../../firmware/config';
import { Positioner } from '../../firmware/positioner';

class RefusingController implements MotionController {
  refuse = true;
  started: string[] = [];
  positionSteps() {
    return { theta: 0, phi: 0 };
  }
  velocityDegS() {
    return { theta: 0, phi: 0 };
  }
  homed() {
    return { theta: false, phi: false };
  }
  busy() {
    return false;
  }
  move(_r: unknown, onEnd: (e: MotionEnd) => void) {
    if (this.refuse) throw new Error('link down');
    this.started.push('move');
    onEnd({ outcome: 'completed' }); // a controller may end at once
  }
  home(_a: unknown, onEnd: (e: MotionEnd) => void) {
    if (this.refuse) throw new Error('link down');
    this.started.push('home');
    onEnd({ outcome: 'completed' });
  }
  stop() {}
}

t.test('a controller that throws on start leaves the positioner where it was, not busy', (t) => {
  const controller = new RefusingController();
  const p = new Positioner(controller, defaultConfig());
  t.throws(() => p.moveTo(10, 10), { message: 'link down' });
  t.equal(p.status().state, 'idle');
  t.throws(() => p.home('both'), { message: 'link down' });
  t.equal(p.status().state, 'idle');
  controller.refuse = false;
  p.moveTo(10, 10);
  t.equal(p.status().state, 'idle', 'a motion that ends inside the call is not overwritten by moving');
  p.home('theta');
  t.equal(p.status().state, 'idle');
  t.same(controller.started, ['move', 'home']);
  t.end();
});
