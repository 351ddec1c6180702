/**
 * The state machine against a controller that refuses to start: whatever a
 * driver throws, the positioner must not be left busy for good.
 */
import t from 'tap';
import { HalError } from '../../hal/errors';
import type { MotionEnd } from '../../hal/motion-controller';
import { StillController } from '../helpers/still-controller';
import { defaultConfig } from '../../firmware/config';
import { Positioner } from '../../firmware/positioner';

class RefusingController extends StillController {
  refuse = true;
  refusal: Error = new Error('link down');
  started: string[] = [];
  move(_r: unknown, onEnd: (e: MotionEnd) => void) {
    if (this.refuse) throw this.refusal;
    this.started.push('move');
    onEnd({ outcome: 'completed' }); // a controller may end at once
  }
  home(_a: unknown, onEnd: (e: MotionEnd) => void) {
    if (this.refuse) throw this.refusal;
    this.started.push('home');
    onEnd({ outcome: 'completed' });
  }
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

t.test('a HalError on start becomes a stable positioner error: DISCONNECTED -> POS_ERR_DISCONNECTED, others POS_ERR_HARDWARE', (t) => {
  const controller = new RefusingController();
  const p = new Positioner(controller, defaultConfig());
  controller.refusal = new HalError('DISCONNECTED', 'serial line /dev/ttyUSB0 is closed');
  t.throws(() => p.home('both'), { code: 'POS_ERR_DISCONNECTED', message: /ttyUSB0/ });
  controller.refusal = new HalError('PROTOCOL', 'garbled');
  t.throws(() => p.moveTo(1, 1), { code: 'POS_ERR_HARDWARE' });
  t.equal(p.status().state, 'idle');
  t.end();
});

t.test('a fault outside a motion latches the error state; a reconnection asks for homing; homing clears it', (t) => {
  const controller = new RefusingController();
  const p = new Positioner(controller, defaultConfig());
  t.ok(controller.listener, 'the positioner subscribed to the controller');
  let changes = 0;
  p.onChange(() => changes++);
  controller.listener!({ type: 'fault', fault: { code: 'POS_ERR_DISCONNECTED', message: 'line dropped' } });
  t.equal(p.status().state, 'error');
  t.strictSame(p.status().fault, { code: 'POS_ERR_DISCONNECTED', message: 'line dropped' });
  t.equal(changes, 1, 'listeners hear about it');
  controller.listener!({ type: 'reconnected', message: 'controller is back; home it' });
  t.equal(p.status().state, 'error');
  t.equal(p.status().fault?.code, 'POS_ERR_NOT_HOMED');
  controller.refuse = false;
  t.throws(() => p.moveTo(1, 1), { code: 'POS_ERR_FAULT' }, 'moves stay refused until homed');
  p.stop();
  t.equal(p.status().state, 'error', 'stop does not clear it');
  p.home('both');
  t.equal(p.status().state, 'idle');
  t.equal(p.status().fault, null, 'a completed homing clears it');
  t.end();
});
