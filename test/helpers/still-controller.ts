/**
 * A MotionController that never moves anything: position and velocity zero,
 * nothing homed, never busy. Firmware tests extend it with the `move` and
 * `home` behaviour they need (refusing, ending at once, waiting for a link)
 * and emit controller events through `listener`.
 */
import type { ControllerEvent, MotionController, MotionEnd } from '../../hal/motion-controller';

export abstract class StillController implements MotionController {
  listener: ((e: ControllerEvent) => void) | null = null;
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
  abstract move(request: unknown, onEnd: (e: MotionEnd) => void): void;
  abstract home(axes: unknown, onEnd: (e: MotionEnd) => void): void;
  stop() {}
  subscribe(listener: (e: ControllerEvent) => void) {
    this.listener = listener;
    return () => (this.listener = null);
  }
}
