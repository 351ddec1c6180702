/**
 * The composition root of scans: a Scanner (firmware/scan.ts) over a
 * positioner, its results in a SQLite file (api/scan-store.ts), its sources
 * (firmware/scan-sources.ts) with the simulated antenna under test
 * (sim/antenna.ts) as the `sim` source.
 */
import type { Clock } from '../hal/clock';
import type { Positioner } from '../firmware/positioner';
import { Scanner } from '../firmware/scan';
import { sourceFactory } from '../firmware/scan-sources';
import type { ScanStore } from '../firmware/scan-store';
import { LazySqliteScanStore } from '../api/scan-store';
import { defaultAntennaConfig, SimulatedAntenna, type AntennaModelConfig } from '../sim/antenna';

export interface ScannerSetup {
  positioner: Positioner;
  clock: Clock;
  /** A SQLite file, or a store of the caller's (tests, benchmarks: MemoryScanStore). */
  dbPath?: string;
  store?: ScanStore;
  antenna?: AntennaModelConfig;
  /** Wall time for the scan records' dates (default the system's). */
  now?: () => Date;
  /** False on real hardware: a scan must then name its source (the simulated antenna is still there when asked for). */
  simulated?: boolean;
}

export function createScanner(setup: ScannerSetup): { scanner: Scanner; store: ScanStore; close(): void } {
  const store = setup.store ?? new LazySqliteScanStore(setup.dbPath ?? ':memory:');
  const antenna = new SimulatedAntenna(setup.antenna ?? defaultAntennaConfig());
  const scanner = new Scanner({
    positioner: setup.positioner,
    clock: setup.clock,
    store,
    source: sourceFactory({ clock: setup.clock, positioner: setup.positioner, antenna }),
    now: setup.now ?? (() => new Date()),
    defaultSource: setup.simulated === false ? null : { kind: 'sim' },
  });
  return { scanner, store, close: () => store.close() };
}
