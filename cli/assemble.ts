/**
 * The composition root: wires a positioner from a clock, a motion controller
 * and its hardware. The firmware never imports a driver or the simulator;
 * this file is where they meet.
 */
import type { AxisPair } from '../hal/axes';
import { mapAxes } from '../hal/axes';
import type { Clock } from '../hal/clock';
import type { PositionerConfig } from '../firmware/config';
import { AXIS_RANGE_DEG, axisStepsPerDeg } from '../firmware/config';
import { Positioner } from '../firmware/positioner';
import { StepMotionController } from '../firmware/step-controller';
import { degToSteps } from '../firmware/units';
import { SimAxis } from '../sim/sim-axis';

/** How the simulated machine is built, in user units. */
export interface SimAxisSettings {
  /** Where the shaft really is at power-on, degrees from the home switch (the firmware does not know). */
  powerOnDeg: number;
  /** Motor pull-out rate in full steps per second; faster stepping stalls the motor. */
  maxFullStepRateHz: number;
  /** Switch hysteresis, degrees. */
  switchHysteresisDeg: number;
}

export interface SimSettings {
  axes: AxisPair<SimAxisSettings>;
}

export function defaultSimSettings(): SimSettings {
  return {
    axes: {
      theta: { powerOnDeg: 37.5, maxFullStepRateHz: 1000, switchHysteresisDeg: 0.05 },
      phi: { powerOnDeg: 123.25, maxFullStepRateHz: 1000, switchHysteresisDeg: 0.05 },
    },
  };
}

export interface SimulatedPositioner {
  positioner: Positioner;
  controller: StepMotionController;
  /** The simulated hardware, for tests and diagnostics: true positions, lost steps, faults. */
  sim: AxisPair<SimAxis>;
}

export function createSimulatedPositioner(clock: Clock, config: PositionerConfig, simSettings: SimSettings = defaultSimSettings()): SimulatedPositioner {
  const perDeg = { theta: axisStepsPerDeg(config, 'theta'), phi: axisStepsPerDeg(config, 'phi') };
  const sim = mapAxes(simSettings.axes, (s, axis) => {
    const revolution = axis === 'phi' ? degToSteps(360, perDeg.phi) : undefined;
    return new SimAxis({
      powerOnSteps: degToSteps(s.powerOnDeg, perDeg[axis]),
      maxStepRateHz: s.maxFullStepRateHz * config.microstepping,
      hysteresisSteps: Math.max(1, degToSteps(s.switchHysteresisDeg, perDeg[axis])),
      // The phi switch is a cam closed over a few degrees once per revolution; theta's is closed all the way below 0.
      switchWidthSteps: revolution === undefined ? undefined : degToSteps(5, perDeg.phi),
      revolutionSteps: revolution,
    });
  });
  let positioner: Positioner | null = null;
  const controller = new StepMotionController({
    clock,
    hardware: mapAxes(sim, (a) => ({ stepper: a.stepper, homeSwitch: a.homeSwitch })),
    stepsPerDeg: perDeg,
    homing: mapAxes(config.axes, (a) => a.homing),
    travelDeg: mapAxes(AXIS_RANGE_DEG, (r) => r.max - r.min),
    // Homing accelerates at the accel currently set (POST /config changes it).
    homingAccelDegS2: () => positioner?.settings().accelDegS2 ?? config.accelDegS2,
  });
  positioner = new Positioner(controller, config);
  return { positioner, controller, sim };
}
