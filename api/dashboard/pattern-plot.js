/*
 * Radiation-pattern math for the dashboard's scan plots: plain JavaScript with
 * no DOM, loaded by the page (window.PatternPlot) and by the unit tests in
 * Node (module.exports), so what the tests check is what the page draws.
 *
 * Values are received power in dB (the sim source's unit; GET /scan/results).
 * - normalise: dB relative to the strongest point (its peak is 0 dB);
 * - cuts: the samples of one fixed phi (theta swept; the phi + 180 half is
 *   mirrored to negative theta, so a cut through the boresight reads -180..180
 *   as in a chamber's E/H-plane plot) or of one fixed theta (phi swept);
 * - half-power (-3 dB) beamwidth: the angles left and right of the peak where
 *   the cut falls 3 dB below it, interpolated linearly in dB between samples;
 * - heat map: samples binned on the scan's theta/phi grid, one cell per bin
 *   (the mean of its samples in dB), coloured on a dB scale down to a floor.
 * Angles in degrees throughout.
 */
'use strict';

(function (root, factory) {
  const api = factory();
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.PatternPlot = api;
})(typeof self !== 'undefined' ? self : this, function () {
  /** Angles closer than this are the same grid angle (microstep rounding of targets). */
  const ANGLE_EPS_DEG = 1e-3;
  /** Default lowest level shown, dB below the peak. */
  const DEFAULT_FLOOR_DB = -40;

  const sameAngle = (a, b) => Math.abs(a - b) < ANGLE_EPS_DEG;
  /** The same azimuth: 359.99999 and 0 are one phi. */
  const samePhi = (a, b) => {
    const d = Math.abs(mod360(a) - mod360(b));
    return Math.min(d, 360 - d) < ANGLE_EPS_DEG;
  };
  const finite = (v) => typeof v === 'number' && Number.isFinite(v);
  /** The first value of a sample (value_1 of several), or null when it failed or has none. */
  const valueOf = (s) => (s && !s.error && Array.isArray(s.values) && finite(s.values[0]) ? s.values[0] : null);
  const mod360 = (a) => ((a % 360) + 360) % 360;

  /** The largest finite value, or null. */
  function peakOf(values) {
    let max = null;
    for (const v of values) if (finite(v) && (max === null || v > max)) max = v;
    return max;
  }

  /** dB values relative to their maximum (the peak reads 0); non-numbers stay null. */
  function normaliseDb(values) {
    const max = peakOf(values);
    return values.map((v) => (finite(v) && max !== null ? v - max : null));
  }

  /**
   * The points of one cut, sorted by angle, each the mean (dB) of the samples there:
   * `{ axis: 'phi', fixedDeg }` takes the samples at phi = fixedDeg (angle = theta) and at
   * phi = fixedDeg + 180 (angle = -theta); `{ axis: 'theta', fixedDeg }` those at that theta
   * (angle = phi).
   */
  function cut(samples, { axis, fixedDeg }) {
    const sums = new Map();
    const add = (angle, v) => {
      const key = Math.round(angle * 1000) / 1000;
      const e = sums.get(key) || { sum: 0, n: 0 };
      e.sum += v;
      e.n += 1;
      sums.set(key, e);
    };
    for (const s of samples) {
      const v = valueOf(s);
      if (v === null) continue;
      if (axis === 'theta') {
        if (sameAngle(s.theta_deg, fixedDeg)) add(s.phi_deg, v);
      } else if (samePhi(s.phi_deg, fixedDeg)) {
        add(s.theta_deg, v);
      } else if (samePhi(s.phi_deg, fixedDeg + 180) && s.theta_deg > ANGLE_EPS_DEG) {
        add(-s.theta_deg, v);
      }
    }
    return [...sums.entries()].map(([angleDeg, e]) => ({ angleDeg, db: e.sum / e.n })).sort((a, b) => a.angleDeg - b.angleDeg);
  }

  /** The distinct fixed angles a set of samples offers for cuts along `axis` ('phi': its phi values). */
  function cutAngles(samples, axis) {
    const key = axis === 'theta' ? 'theta_deg' : 'phi_deg';
    const seen = [];
    const same = axis === 'theta' ? sameAngle : samePhi;
    for (const s of samples) {
      const a = axis === 'theta' ? s[key] : mod360(s[key]);
      if (finite(a) && !seen.some((b) => same(a, b))) seen.push(a);
    }
    return seen.sort((a, b) => a - b);
  }

  /** The phi cut through the strongest sample (the main beam), or null with no values. */
  function strongestPhi(samples) {
    let best = null;
    for (const s of samples) {
      const v = valueOf(s);
      if (v !== null && (best === null || v > best.v)) best = { v, phi: mod360(s.phi_deg) };
    }
    return best && best.phi;
  }

  /** Where a straight line in dB from (a0, d0) to (a1, d1) crosses `level`. */
  const crossing = (a0, d0, a1, d1, level) => a0 + ((level - d0) * (a1 - a0)) / (d1 - d0);

  /**
   * The -3 dB (half-power) beamwidth of a cut (points sorted by angle, any dB reference):
   * `{ peakDeg, peakDb, leftDeg, rightDeg, widthDeg }`; leftDeg/rightDeg (and widthDeg) are
   * null when the cut does not fall 3 dB below the peak on that side.
   */
  function halfPowerBeamwidth(points, dropDb = 3, opts = {}) {
    if (!points || points.length === 0) return null;
    if (opts.circular) return circularBeamwidth(points, dropDb);
    let p = 0;
    for (let i = 1; i < points.length; i++) if (points[i].db > points[p].db) p = i;
    const peak = points[p];
    const level = peak.db - dropDb;
    let leftDeg = null;
    for (let i = p; i > 0; i--) {
      if (points[i - 1].db <= level) {
        leftDeg = crossing(points[i].angleDeg, points[i].db, points[i - 1].angleDeg, points[i - 1].db, level);
        break;
      }
    }
    let rightDeg = null;
    for (let i = p; i < points.length - 1; i++) {
      if (points[i + 1].db <= level) {
        rightDeg = crossing(points[i].angleDeg, points[i].db, points[i + 1].angleDeg, points[i + 1].db, level);
        break;
      }
    }
    return {
      peakDeg: peak.angleDeg,
      peakDb: peak.db,
      leftDeg,
      rightDeg,
      widthDeg: leftDeg !== null && rightDeg !== null ? rightDeg - leftDeg : null,
    };
  }

  /**
   * The same for a cut around the whole circle (a theta cut runs along phi, 0..360): the
   * angles are taken relative to the peak (-180..180), so a beam across phi 0 is one beam;
   * the edges are given back in 0..360.
   */
  function circularBeamwidth(points, dropDb) {
    let p = 0;
    for (let i = 1; i < points.length; i++) if (points[i].db > points[p].db) p = i;
    const peakDeg = points[p].angleDeg;
    const rel = points.map((q) => ({ angleDeg: ((((q.angleDeg - peakDeg + 180) % 360) + 360) % 360) - 180, db: q.db })).sort((a, b) => a.angleDeg - b.angleDeg);
    const bw = halfPowerBeamwidth(rel, dropDb);
    const back = (a) => (a === null ? null : mod360(a + peakDeg));
    return { peakDeg: mod360(peakDeg), peakDb: bw.peakDb, leftDeg: back(bw.leftDeg), rightDeg: back(bw.rightDeg), widthDeg: bw.widthDeg };
  }

  /**
   * Polar plot coordinates: angle 0 straight up, clockwise positive; radius from the floor
   * (centre) to 0 dB (rim). `db` is normalised (<= 0); below the floor it sits at the centre.
   */
  function polarXY(angleDeg, db, { cx, cy, radius, floorDb = DEFAULT_FLOOR_DB }) {
    const r = radius * Math.min(1, Math.max(0, (db - floorDb) / -floorDb));
    const a = (angleDeg * Math.PI) / 180;
    return { x: cx + r * Math.sin(a), y: cy - r * Math.cos(a) };
  }

  /**
   * Bins of one axis for the heat map: from the plan's RANGE when it has one
   * ({ start_deg, stop_deg, step_deg }), else the axis's whole travel in `fallbackStepDeg`.
   */
  function axisBins(range, minDeg, maxDeg, fallbackStepDeg) {
    const start = range ? Math.min(range.start_deg, range.stop_deg) : minDeg;
    const stop = range ? Math.max(range.start_deg, range.stop_deg) : maxDeg;
    const step = range && range.step_deg > 0 ? range.step_deg : fallbackStepDeg;
    const count = Math.max(1, Math.floor((stop - start) / step + ANGLE_EPS_DEG) + 1);
    return { startDeg: start, stepDeg: step, count };
  }

  /** The heat map's grid for a scan request (contract: plan.kind grid / phi_cuts / theta_cuts / points). */
  function gridFor(request) {
    const plan = (request && request.plan) || {};
    const theta = plan.theta || null;
    const phi = plan.phi || null;
    return {
      theta: axisBins(theta, 0, 180, theta ? theta.step_deg : 5),
      phi: axisBins(phi, 0, 355, phi ? phi.step_deg : 5),
    };
  }

  /** Index of the bin an angle falls in (nearest bin centre), or -1 outside the grid. */
  function binOf(bins, angleDeg) {
    const i = Math.round((angleDeg - bins.startDeg) / bins.stepDeg);
    return i >= 0 && i < bins.count ? i : -1;
  }

  /**
   * A heat map that fills in as samples arrive: `add(sample)` bins it (returns the cell key or
   * null); `cells()` gives every filled cell with its mean dB normalised to the current peak.
   */
  class HeatMap {
    constructor(grid) {
      this.grid = grid;
      this.sums = new Map();
    }
    /** The strongest cell's mean, dB (null while empty). */
    get peakDb() {
      let peak = null;
      for (const e of this.sums.values()) if (peak === null || e.sum / e.n > peak) peak = e.sum / e.n;
      return peak;
    }
    add(sample) {
      const v = valueOf(sample);
      if (v === null) return null;
      const ti = binOf(this.grid.theta, sample.theta_deg);
      const pi = binOf(this.grid.phi, sample.phi_deg);
      if (ti < 0 || pi < 0) return null;
      const key = `${ti},${pi}`;
      const e = this.sums.get(key) || { ti, pi, sum: 0, n: 0 };
      e.sum += v;
      e.n += 1;
      this.sums.set(key, e);
      return key;
    }
    get size() {
      return this.sums.size;
    }
    cells() {
      const out = [];
      const peak = this.peakDb;
      for (const [key, e] of this.sums) {
        out.push({
          key,
          thetaIndex: e.ti,
          phiIndex: e.pi,
          thetaDeg: this.grid.theta.startDeg + e.ti * this.grid.theta.stepDeg,
          phiDeg: this.grid.phi.startDeg + e.pi * this.grid.phi.stepDeg,
          db: e.sum / e.n - peak,
        });
      }
      return out;
    }
  }

  // A perceptual dark-blue -> teal -> yellow ramp (viridis-like), 0 = floor, 1 = peak.
  const RAMP = [
    [0.0, [68, 1, 84]],
    [0.25, [59, 82, 139]],
    [0.5, [33, 145, 140]],
    [0.75, [94, 201, 98]],
    [1.0, [253, 231, 37]],
  ];
  /** The colour of a normalised dB value on the ramp from `floorDb` (dark) to 0 dB (bright). */
  function colourFor(db, floorDb = DEFAULT_FLOOR_DB) {
    const f = Math.min(1, Math.max(0, (db - floorDb) / -floorDb));
    for (let i = 1; i < RAMP.length; i++) {
      const [f1, c1] = RAMP[i];
      const [f0, c0] = RAMP[i - 1];
      if (f <= f1) {
        const k = (f - f0) / (f1 - f0);
        const c = c0.map((v, j) => Math.round(v + k * (c1[j] - v)));
        return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
      }
    }
    return 'rgb(253, 231, 37)';
  }

  /** "1 h 02 min", "3 min 05 s", "12 s" for a duration in seconds; "–" when unknown. */
  function formatDuration(sec) {
    if (!finite(sec) || sec < 0) return '–';
    const s = Math.round(sec);
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
    return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
  }

  /** "0:180:5" -> { start_deg, stop_deg, step_deg }, or an Error naming the field. */
  function parseRange(text, name) {
    const parts = String(text).trim().split(':');
    const nums = parts.map((p) => (p.trim() === '' ? NaN : Number(p)));
    if (parts.length !== 3 || nums.some((n) => !Number.isFinite(n))) return new Error(`${name} must be start:stop:step in degrees, e.g. 0:180:5`);
    if (!(nums[2] > 0)) return new Error(`${name}: the step must be more than 0`);
    return { start_deg: nums[0], stop_deg: nums[1], step_deg: nums[2] };
  }

  /** "0, 90" -> [0, 90], or an Error naming the field. */
  function parseAngles(text, name) {
    const parts = String(text).split(/[\s,]+/).filter(Boolean);
    const nums = parts.map(Number);
    if (parts.length === 0 || nums.some((n) => !Number.isFinite(n))) return new Error(`${name} must be one or more angles in degrees, e.g. 0, 90`);
    return nums;
  }

  return {
    DEFAULT_FLOOR_DB,
    normaliseDb,
    peakOf,
    cut,
    cutAngles,
    strongestPhi,
    halfPowerBeamwidth,
    polarXY,
    gridFor,
    binOf,
    HeatMap,
    colourFor,
    formatDuration,
    parseRange,
    parseAngles,
  };
});
