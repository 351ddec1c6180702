/**
 * The dashboard tests' server: the API on a free port as `positioner serve`
 * runs it, with scans (a Scanner on the same clock, results in memory), so
 * the page's scan card finds GET /scan there as it does in real use.
 */
import type { Test } from 'tap';
import { createScanner } from '../../cli/assemble-scan';
import type { Positioner } from '../../firmware/positioner';
import { MemoryScanStore } from '../../firmware/scan-store';
import type { Clock } from '../../hal/clock';
import { serveApi, type ApiClient } from './http-server';

export function serveDashboard(t: Test, positioner: Positioner, clock: Clock): Promise<ApiClient> {
  const { scanner } = createScanner({ positioner, clock, store: new MemoryScanStore() });
  return serveApi(t, positioner, undefined, { scanner });
}
