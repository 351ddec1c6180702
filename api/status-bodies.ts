/**
 * The JSON bodies of GET /status and GET /config, shared by the REST routes
 * and the live feed so both say exactly the same thing.
 */
import type { Positioner, PositionerStatus } from '../firmware/positioner';

/** Status body: the seed's four fields first, then additions that break nothing. */
export function statusBody(s: PositionerStatus) {
  const axis = (a: PositionerStatus['axes']['theta']) => ({
    homed: a.homed,
    position_deg: a.positionDeg,
    position_steps: a.positionSteps,
    velocity_deg_s: a.velocityDegS,
    homing_error_steps: a.homingErrorSteps,
    homing_phase: a.homingPhase,
  });
  return {
    theta_deg: s.thetaDeg,
    phi_deg: s.phiDeg,
    moving: s.moving,
    homed: s.homed,
    state: s.state,
    fault: s.fault,
    target: s.target && { theta_deg: s.target.thetaDeg, phi_deg: s.target.phiDeg },
    axes: { theta: axis(s.axes.theta), phi: axis(s.axes.phi) },
  };
}

export function configBody(positioner: Positioner) {
  const s = positioner.settings();
  return {
    speed: s.speedDegS,
    accel: s.accelDegS2,
    microstepping: s.microstepping,
    theta_steps_per_deg: s.stepsPerDeg.theta,
    phi_steps_per_deg: s.stepsPerDeg.phi,
    max_speed: s.maxSpeedDegS,
    max_accel: s.maxAccelDegS2,
  };
}
