/** Test helpers: a simulated positioner on a virtual clock. */
import { defaultConfig, type PositionerConfig } from '../../firmware/config';
import { createSimulatedPositioner, defaultSimSettings, type SimSettings } from '../../cli/assemble';
import { VirtualClock } from '../../sim/virtual-clock';

export function simOnVirtualClock(configure?: (c: PositionerConfig, s: SimSettings) => void) {
  const config = defaultConfig();
  const sim = defaultSimSettings();
  configure?.(config, sim);
  const clock = new VirtualClock();
  return { clock, config, ...createSimulatedPositioner(clock, config, sim) };
}

export const SEC = 1e6;
