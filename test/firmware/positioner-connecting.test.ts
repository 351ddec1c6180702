/**
 * The `connecting` state: a controller behind a link that is not configured
 * yet (a Firmata or grbl board still booting) shows `connecting`, not an
 * idle positioner whose commands fail; its first connection makes it idle,
 * and a fault while connecting is an error that the connection clears.
 */
import t from 'tap';
import { HalError } from '../../hal/errors';
import type { MotionController, MotionEnd } from '../../hal/motion-controller';
import { StillController } from '../helpers/still-controller';
import { defaultConfig } from '../../firmware/config';
import { Positioner } from '../../firmware/positioner';

class LinkedController extends StillController {
  up = false;
  connecting() {
    return !this.up;
  }
  move(_r: unknown, onEnd: (e: MotionEnd) => void) {
    if (!this.up) throw new HalError('DISCONNECTED', 'the board is still connecting; try again in a few seconds');
    onEnd({ outcome: 'completed' });
  }
  home(_a: unknown, onEnd: (e: MotionEnd) => void) {
    this.move(null, onEnd);
  }
  connect() {
    this.up = true;
    this.listener?.({ type: 'connected', message: 'configured' });
  }
}

t.test('connecting until the first connection; commands say so; then idle', (t) => {
  const c = new LinkedController();
  const p = new Positioner(c, defaultConfig());
  t.equal(p.status().state, 'connecting');
  t.equal(p.status().fault, null);
  t.throws(() => p.home('both'), { code: 'POS_ERR_DISCONNECTED', message: /still connecting/ });
  t.equal(p.status().state, 'connecting', 'a refused command leaves it connecting');
  p.stop();
  t.equal(p.status().state, 'connecting', 'stop does not pretend it stopped something');
  c.connect();
  t.equal(p.status().state, 'idle');
  p.home('both');
  t.equal(p.status().state, 'idle');
  t.end();
});

t.test('a fault while connecting (a wrong baud rate) is an error; the first connection clears it', (t) => {
  const c = new LinkedController();
  const p = new Positioner(c, defaultConfig());
  c.listener?.({ type: 'fault', fault: { code: 'POS_ERR_DISCONNECTED', message: 'answers garbage at 115200 baud' } });
  t.equal(p.status().state, 'error');
  c.connect();
  t.equal(p.status().state, 'idle');
  t.equal(p.status().fault, null);
  t.end();
});

t.test('a controller without connecting() starts idle, as before', (t) => {
  const zero = () => ({ theta: 0, phi: 0 });
  const plain: MotionController = { positionSteps: zero, velocityDegS: zero, homed: () => ({ theta: false, phi: false }), busy: () => false, move: () => undefined, home: () => undefined, stop: () => undefined, subscribe: () => () => undefined };
  t.equal(new Positioner(plain, defaultConfig()).status().state, 'idle');
  t.end();
});
