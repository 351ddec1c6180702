/**
 * Scan planning (firmware/scan-plan.ts): the invariants in its header, as
 * fast-check properties over random ranges and plans, plus the errors that
 * name the field at fault.
 */
import fc from 'fast-check';
import t from 'tap';
import { AXIS_RANGE_DEG } from '../../firmware/config';
import { planScan, rangeValues, ScanPlanError, travelDeg, type ScanPlan, type ScanRange } from '../../firmware/scan-plan';

/** A range inside an axis's travel with at most ~60 values (grids stay small enough to check exhaustively). */
function rangeArb(axis: 'theta' | 'phi'): fc.Arbitrary<ScanRange> {
  const { min, max } = AXIS_RANGE_DEG[axis];
  // Angles in millidegrees, as a user types them.
  return fc
    .tuple(fc.integer({ min: min * 1000, max: max * 1000 }), fc.integer({ min: min * 1000, max: max * 1000 }), fc.integer({ min: 1, max: 60 }), fc.boolean())
    .map(([a, b, n, onGrid]) => {
      const startDeg = Math.min(a, b) / 1000;
      const stopDeg = Math.max(a, b) / 1000;
      // Either a step that lands on stop, or one that does not, never below the 0.001 deg floor.
      const span = stopDeg - startDeg;
      const stepDeg = span > 0 ? Math.max(0.001, Math.round((onGrid ? span / n : span / (n + 0.37)) * 1000) / 1000) : 1;
      return { startDeg, stopDeg, stepDeg };
    });
}

const key = (theta: number, phi: number) => `${theta}|${phi}`;

t.test('a range runs from start by step up to stop, stop included when on the grid', async (t) => {
  t.same(rangeValues({ startDeg: 0, stopDeg: 180, stepDeg: 5 }, 'theta', 'plan.theta').length, 37);
  t.same(rangeValues({ startDeg: 0, stopDeg: 355, stepDeg: 5 }, 'phi', 'plan.phi').length, 72);
  t.same(rangeValues({ startDeg: 0, stopDeg: 0.3, stepDeg: 0.1 }, 'theta', 'x'), [0, 0.1, 0.2, 0.3], 'float noise does not drop the stop (0.1 * 3)');
  t.same(rangeValues({ startDeg: 10, stopDeg: 20, stepDeg: 3 }, 'theta', 'x'), [10, 13, 16, 19], 'a stop off the grid is not added');
  fc.assert(
    fc.property(rangeArb('phi'), (r) => {
      const v = rangeValues(r, 'phi', 'plan.phi');
      if (v[0] !== Math.round(r.startDeg * 1e9) / 1e9) return false;
      for (let i = 1; i < v.length; i++) if (Math.abs(v[i] - v[i - 1] - r.stepDeg) > 1e-6) return false;
      // The next value would pass stop; the last is not past it.
      return v[v.length - 1] <= r.stopDeg + 1e-6 && v[v.length - 1] + r.stepDeg > r.stopDeg + 1e-9 - 1e-6;
    }),
  );
});

t.test('a grid visits every (theta, phi) of its ranges exactly once, within bounds', async (t) => {
  fc.assert(
    fc.property(rangeArb('theta'), rangeArb('phi'), fc.constantFrom<'serpentine' | 'raster'>('serpentine', 'raster'), (theta, phi, order) => {
      const points = planScan({ kind: 'grid', theta, phi, order });
      const thetas = rangeValues(theta, 'theta', 'plan.theta');
      const phis = rangeValues(phi, 'phi', 'plan.phi');
      if (points.length !== thetas.length * phis.length) return false;
      const seen = new Set(points.map((p) => key(p.thetaDeg, p.phiDeg)));
      if (seen.size !== points.length) return false;
      for (const th of thetas) for (const ph of phis) if (!seen.has(key(th, ph))) return false;
      return points.every(
        (p, i) =>
          p.index === i &&
          p.thetaDeg >= Math.max(0, theta.startDeg - 1e-9) && p.thetaDeg <= Math.min(180, theta.stopDeg + 1e-9) &&
          p.phiDeg >= Math.max(0, phi.startDeg - 1e-9) && p.phiDeg <= Math.min(360, phi.stopDeg + 1e-9),
      );
    }),
  );
});

t.test('serpentine reverses every other line and starts each line where the last ended; raster runs every line the same way', async (t) => {
  fc.assert(
    fc.property(rangeArb('theta'), rangeArb('phi'), (theta, phi) => {
      const serp = planScan({ kind: 'grid', theta, phi, order: 'serpentine' });
      const raster = planScan({ kind: 'grid', theta, phi, order: 'raster' });
      const lines = new Map<number, number[]>();
      for (const p of serp) lines.set(p.line, [...(lines.get(p.line) ?? []), p.thetaDeg]);
      const rows = [...lines.values()];
      for (let n = 0; n < rows.length; n++) {
        const ascending = rows[n].every((v, i) => i === 0 || v > rows[n][i - 1]);
        const descending = rows[n].every((v, i) => i === 0 || v < rows[n][i - 1]);
        if (rows[n].length > 1 && (n % 2 === 0 ? !ascending : !descending)) return false;
        if (n > 0 && rows[n][0] !== rows[n - 1][rows[n - 1].length - 1]) return false;
      }
      // phi is constant along a line and rises line by line.
      for (let i = 1; i < serp.length; i++) if (serp[i].line === serp[i - 1].line ? serp[i].phiDeg !== serp[i - 1].phiDeg : serp[i].phiDeg <= serp[i - 1].phiDeg) return false;
      // Serpentine never travels further on theta than raster, and the same on phi.
      const ts = travelDeg(serp);
      const tr = travelDeg(raster);
      return ts.theta <= tr.theta + 1e-6 && Math.abs(ts.phi - tr.phi) < 1e-6 && raster.every((p, i) => i === 0 || p.line !== raster[i - 1].line || p.thetaDeg > raster[i - 1].thetaDeg);
    }),
  );
  const full = planScan({ kind: 'grid', theta: { startDeg: 0, stopDeg: 180, stepDeg: 5 }, phi: { startDeg: 0, stopDeg: 355, stepDeg: 5 }, order: 'serpentine' });
  t.equal(full.length, 37 * 72, 'the full 37 x 72 grid');
  t.equal(travelDeg(full).theta, 71 * 0 + 72 * 180 - 180 + 180, 'theta sweeps 180 deg per line and never flies back');
});

t.test('cuts: each cut at its fixed angle, swept along the range, alternating direction; points in the order given', async (t) => {
  const phiCuts = planScan({ kind: 'phi_cuts', phiDeg: [0, 90], theta: { startDeg: 0, stopDeg: 90, stepDeg: 30 } });
  t.same(phiCuts.map((p) => [p.thetaDeg, p.phiDeg, p.line]), [[0, 0, 0], [30, 0, 0], [60, 0, 0], [90, 0, 0], [90, 90, 1], [60, 90, 1], [30, 90, 1], [0, 90, 1]]);
  const thetaCuts = planScan({ kind: 'theta_cuts', thetaDeg: [90], phi: { startDeg: 0, stopDeg: 360, stepDeg: 120 } });
  t.same(thetaCuts.map((p) => [p.thetaDeg, p.phiDeg]), [[90, 0], [90, 120], [90, 240], [90, 360]]);
  const list = planScan({ kind: 'points', points: [{ thetaDeg: 10, phiDeg: 20 }, { thetaDeg: 0, phiDeg: 0 }] });
  t.same(list.map((p) => [p.index, p.thetaDeg, p.phiDeg, p.line]), [[0, 10, 20, 0], [1, 0, 0, 1]]);
});

t.test('a plan that cannot run is refused naming the field', async (t) => {
  const refuse = (plan: ScanPlan, field: string) => {
    let caught: unknown = null;
    try {
      planScan(plan);
    } catch (e) {
      caught = e;
    }
    t.ok(caught instanceof ScanPlanError, `refused with a ScanPlanError: ${String(caught)}`);
    t.equal((caught as ScanPlanError).field, field, `the error names ${field}: ${(caught as Error).message}`);
  };
  const r = (startDeg: number, stopDeg: number, stepDeg: number) => ({ startDeg, stopDeg, stepDeg });
  refuse({ kind: 'grid', theta: r(0, 180, 0), phi: r(0, 10, 5), order: 'serpentine' }, 'plan.theta.step_deg');
  refuse({ kind: 'grid', theta: r(0, 180, 5), phi: r(0, 10, -5), order: 'serpentine' }, 'plan.phi.step_deg');
  refuse({ kind: 'grid', theta: r(0, 190, 5), phi: r(0, 10, 5), order: 'serpentine' }, 'plan.theta.stop_deg');
  refuse({ kind: 'grid', theta: r(-1, 10, 5), phi: r(0, 10, 5), order: 'serpentine' }, 'plan.theta.start_deg');
  refuse({ kind: 'grid', theta: r(20, 10, 5), phi: r(0, 10, 5), order: 'serpentine' }, 'plan.theta.stop_deg');
  refuse({ kind: 'grid', theta: r(0, 180, 0.0001), phi: r(0, 360, 1), order: 'serpentine' }, 'plan.theta.step_deg');
  refuse({ kind: 'grid', theta: r(0, 180, 1), phi: r(0, 360, 0.001), order: 'serpentine' }, 'plan.phi.step_deg');
  refuse({ kind: 'grid', theta: r(0, 180, 0.1), phi: r(0, 360, 0.1), order: 'serpentine' }, 'plan');
  refuse({ kind: 'phi_cuts', phiDeg: [0, 400], theta: r(0, 10, 5) }, 'plan.phi_deg[1]');
  refuse({ kind: 'theta_cuts', thetaDeg: [], phi: r(0, 10, 5) }, 'plan.theta_deg');
  refuse({ kind: 'points', points: [{ thetaDeg: 0, phiDeg: 0 }, { thetaDeg: 181, phiDeg: 0 }] }, 'plan.points[1].theta_deg');
  refuse({ kind: 'points', points: [{ thetaDeg: Number.NaN, phiDeg: 0 }] }, 'plan.points[0].theta_deg');
});
