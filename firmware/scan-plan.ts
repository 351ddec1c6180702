/**
 * Scan planning: which (theta, phi) points a radiation-pattern scan visits, in
 * what order, grouped in lines (a cut swept in one go by a continuous scan).
 *
 *   grid, serpentine (outer phi, inner theta; every other line reversed):
 *
 *     phi ▲  line 2  ●──►──●──►──●
 *         │                      │
 *         │  line 1  ●──◄──●──◄──●       consecutive lines start where the
 *         │          │                   previous one ended: theta never
 *         │  line 0  ●──►──●──►──●       flies back across its range
 *         └──────────────────────► theta
 *
 * Invariants (test/firmware/scan-plan.test.ts checks them with fast-check):
 * 1. a grid visits every (theta, phi) of its two ranges exactly once;
 * 2. serpentine: line n+1 runs the opposite way to line n; raster: all the same way;
 * 3. every point lies within the axis ranges (theta 0..180, phi 0..360) and
 *    within its plan's start..stop;
 * 4. a range is start, start + step, ... up to stop; stop is included when it
 *    is on the grid (within 1e-9 deg of a step).
 * Plans are pure data: validated here with errors naming the field, planned
 * by pure functions.
 */
import type { AxisName } from '../hal/axes';
import { AXIS_RANGE_DEG } from './config';

export interface ScanRange {
  startDeg: number;
  stopDeg: number;
  stepDeg: number;
}

export type ScanPlan =
  | { kind: 'grid'; theta: ScanRange; phi: ScanRange; order: 'serpentine' | 'raster' }
  /** theta swept at each fixed phi */
  | { kind: 'phi_cuts'; phiDeg: number[]; theta: ScanRange }
  /** phi swept at each fixed theta */
  | { kind: 'theta_cuts'; thetaDeg: number[]; phi: ScanRange }
  | { kind: 'points'; points: { thetaDeg: number; phiDeg: number }[] };

export interface ScanPoint {
  /** Position in the scan's order, from 0. */
  index: number;
  thetaDeg: number;
  phiDeg: number;
  /** The line (cut) the point belongs to; a continuous scan sweeps one line per motion. */
  line: number;
}

/** Finer than this is below any positioner's resolution (a microstep is 1/320 deg on theta): refused. */
export const MIN_STEP_DEG = 0.001;

/** More points than this is a typo (a step of 0.001), not a measurement: refused. */
export const MAX_SCAN_POINTS = 200_000;

/** A plan that cannot run; `field` is the request field at fault (`plan.theta.step_deg`). */
export class ScanPlanError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field} ${message}`);
    this.name = 'ScanPlanError';
  }
}

const EPS_DEG = 1e-9;

/** Rounds away float noise (0.1 * 3 = 0.30000000000000004) so values print and compare cleanly. */
function clean(deg: number): number {
  return Math.round(deg * 1e9) / 1e9;
}

/** The values of a range, in ascending order. `field` names it in errors (`plan.theta`). */
export function rangeValues(range: ScanRange, axis: AxisName, field: string): number[] {
  checkRange(range, axis, field);
  const n = Math.floor((range.stopDeg - range.startDeg) / range.stepDeg + EPS_DEG);
  const values: number[] = [];
  for (let i = 0; i <= n; i++) values.push(clean(range.startDeg + i * range.stepDeg));
  return values;
}

function checkRange(range: ScanRange, axis: AxisName, field: string): void {
  const { min, max } = AXIS_RANGE_DEG[axis];
  if (!(range.stepDeg > 0)) throw new ScanPlanError(`${field}.step_deg`, `must be > 0 (got ${range.stepDeg})`);
  if (range.stepDeg < MIN_STEP_DEG) throw new ScanPlanError(`${field}.step_deg`, `must be at least ${MIN_STEP_DEG} deg, finer than the positioner can resolve (got ${range.stepDeg})`);
  checkAngle(range.startDeg, axis, `${field}.start_deg`);
  checkAngle(range.stopDeg, axis, `${field}.stop_deg`);
  if (range.stopDeg < range.startDeg) throw new ScanPlanError(`${field}.stop_deg`, `must be >= start_deg (${range.startDeg}); got ${range.stopDeg}`);
  const count = Math.floor((range.stopDeg - range.startDeg) / range.stepDeg + EPS_DEG) + 1;
  if (count > MAX_SCAN_POINTS) throw new ScanPlanError(`${field}.step_deg`, `gives ${count} points between ${min} and ${max}; use a coarser step`);
}

function checkAngle(deg: number, axis: AxisName, field: string): void {
  const { min, max } = AXIS_RANGE_DEG[axis];
  if (!Number.isFinite(deg) || deg < min || deg > max) throw new ScanPlanError(field, `must be between ${min} and ${max} deg (${axis}'s range); got ${deg}`);
}

/**
 * Every point of `plan` in scan order, with its index and line. Throws
 * ScanPlanError naming the field for a plan that cannot run.
 */
export function planScan(plan: ScanPlan): ScanPoint[] {
  const lines: { thetaDeg: number; phiDeg: number }[][] = [];
  switch (plan.kind) {
    case 'grid': {
      const thetas = rangeValues(plan.theta, 'theta', 'plan.theta');
      const phis = rangeValues(plan.phi, 'phi', 'plan.phi');
      checkCount(thetas.length * phis.length);
      phis.forEach((phiDeg, n) => {
        const row = plan.order === 'serpentine' && n % 2 === 1 ? [...thetas].reverse() : thetas;
        lines.push(row.map((thetaDeg) => ({ thetaDeg, phiDeg })));
      });
      break;
    }
    case 'phi_cuts':
      lines.push(...cutLines('phi', plan.phiDeg, plan.theta));
      break;
    case 'theta_cuts':
      lines.push(...cutLines('theta', plan.thetaDeg, plan.phi));
      break;
    case 'points': {
      if (plan.points.length === 0) throw new ScanPlanError('plan.points', 'must list at least one point');
      checkCount(plan.points.length);
      plan.points.forEach((p, i) => {
        checkAngle(p.thetaDeg, 'theta', `plan.points[${i}].theta_deg`);
        checkAngle(p.phiDeg, 'phi', `plan.points[${i}].phi_deg`);
      });
      // Each explicit point is its own line: a continuous scan moves point to point.
      for (const p of plan.points) lines.push([{ thetaDeg: p.thetaDeg, phiDeg: p.phiDeg }]);
      break;
    }
  }
  const points: ScanPoint[] = [];
  lines.forEach((line, lineIndex) => {
    for (const p of line) points.push({ index: points.length, thetaDeg: p.thetaDeg, phiDeg: p.phiDeg, line: lineIndex });
  });
  return points;
}

/**
 * Cuts: the other axis swept over `range` at each angle of `fixed` on `fixedAxis`,
 * alternating direction so that each cut starts where the last one ended.
 */
function cutLines(fixedAxis: AxisName, fixed: number[], range: ScanRange): { thetaDeg: number; phiDeg: number }[][] {
  const sweptAxis: AxisName = fixedAxis === 'phi' ? 'theta' : 'phi';
  const field = `plan.${fixedAxis}_deg`;
  if (fixed.length === 0) throw new ScanPlanError(field, `must list at least one ${fixedAxis} angle`);
  fixed.forEach((deg, i) => checkAngle(deg, fixedAxis, `${field}[${i}]`));
  const values = rangeValues(range, sweptAxis, `plan.${sweptAxis}`);
  checkCount(values.length * fixed.length);
  return fixed.map((at, n) =>
    (n % 2 === 1 ? [...values].reverse() : values).map((v) => (fixedAxis === 'phi' ? { thetaDeg: v, phiDeg: at } : { thetaDeg: at, phiDeg: v })),
  );
}

function checkCount(count: number): void {
  if (count > MAX_SCAN_POINTS) throw new ScanPlanError('plan', `has ${count} points, more than the ${MAX_SCAN_POINTS} a scan may have; use coarser steps or fewer cuts`);
}

/** Total travel of each axis along the points in order, degrees (what serpentine order saves). */
export function travelDeg(points: readonly ScanPoint[]): Record<AxisName, number> {
  const travel = { theta: 0, phi: 0 };
  for (let i = 1; i < points.length; i++) {
    travel.theta += Math.abs(points[i].thetaDeg - points[i - 1].thetaDeg);
    travel.phi += Math.abs(points[i].phiDeg - points[i - 1].phiDeg);
  }
  return travel;
}
