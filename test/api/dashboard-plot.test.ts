/**
 * The dashboard's pattern math (api/dashboard/pattern-plot.js, the same file
 * the page loads): dB normalisation, cuts through the scan's samples, the
 * -3 dB beamwidth, the polar plot's geometry and the heat map's binning.
 */
import fc from 'fast-check';
import t from 'tap';

interface Sample {
  index?: number;
  theta_deg: number;
  phi_deg: number;
  values: number[];
  error?: string | null;
}
interface CutPoint {
  angleDeg: number;
  db: number;
}
interface Beamwidth {
  peakDeg: number;
  peakDb: number;
  leftDeg: number | null;
  rightDeg: number | null;
  widthDeg: number | null;
}
interface Bins {
  startDeg: number;
  stepDeg: number;
  count: number;
}
interface HeatCell {
  key: string;
  thetaDeg: number;
  phiDeg: number;
  db: number;
}
interface PatternPlot {
  DEFAULT_FLOOR_DB: number;
  normaliseDb(values: (number | null)[]): (number | null)[];
  cut(samples: Sample[], which: { axis: 'theta' | 'phi'; fixedDeg: number }): CutPoint[];
  cutAngles(samples: Sample[], axis: 'theta' | 'phi'): number[];
  strongestPhi(samples: Sample[]): number | null;
  halfPowerBeamwidth(points: CutPoint[], dropDb?: number, opts?: { circular?: boolean }): Beamwidth | null;
  polarXY(angleDeg: number, db: number, o: { cx: number; cy: number; radius: number; floorDb?: number }): { x: number; y: number };
  gridFor(request: unknown): { theta: Bins; phi: Bins };
  binOf(bins: Bins, angleDeg: number): number;
  HeatMap: new (grid: { theta: Bins; phi: Bins }) => { add(s: Sample): string | null; cells(): HeatCell[]; size: number; peakDb: number | null };
  colourFor(db: number, floorDb?: number): string;
  formatDuration(sec: number | null): string;
  parseRange(text: string, name: string): { start_deg: number; stop_deg: number; step_deg: number } | Error;
  parseAngles(text: string, name: string): number[] | Error;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const P = require('../../api/dashboard/pattern-plot.js') as PatternPlot;

/** A beam of half-power width `hpbwDeg` centred on `centreDeg`: -12 (x / hpbw)^2 dB, -3 dB at +-hpbw/2. */
const beamDb = (angleDeg: number, centreDeg: number, hpbwDeg: number, peakDb = -20) => peakDb - 12 * ((angleDeg - centreDeg) / hpbwDeg) ** 2;

function sweep(fromDeg: number, toDeg: number, stepDeg: number, db: (a: number) => number): CutPoint[] {
  const out: CutPoint[] = [];
  for (let a = fromDeg; a <= toDeg + 1e-9; a += stepDeg) out.push({ angleDeg: a, db: db(a) });
  return out;
}

t.test('normalising puts the peak at 0 dB and keeps the differences; missing values stay missing', async (t) => {
  t.same(P.normaliseDb([-10, -3, -20, null]), [-7, 0, -17, null]);
  t.same(P.normaliseDb([]), []);
  t.same(P.normaliseDb([null]), [null]);
});

t.test('the -3 dB beamwidth of a beam sampled on its half-power points is exact', async (t) => {
  const bw = P.halfPowerBeamwidth(sweep(-90, 90, 5, (a) => beamDb(a, 0, 30)))!;
  t.equal(bw.peakDeg, 0);
  t.equal(bw.peakDb, -20, 'any reference level: the drop is counted from the peak');
  t.equal(bw.leftDeg, -15);
  t.equal(bw.rightDeg, 15);
  t.equal(bw.widthDeg, 30);
});

t.test('beamwidth: an off-axis beam between samples is interpolated to within a tenth of the step', async (t) => {
  fc.assert(
    fc.property(fc.double({ min: -40, max: 40, noNaN: true }), fc.double({ min: 12, max: 80, noNaN: true }), fc.constantFrom(1, 2, 3), (centre, hpbw, step) => {
      const bw = P.halfPowerBeamwidth(sweep(-180, 180, step, (a) => beamDb(a, centre, hpbw)))!;
      return bw.widthDeg !== null && Math.abs(bw.widthDeg - hpbw) < 0.1 * step && Math.abs((bw.leftDeg! + bw.rightDeg!) / 2 - centre) < 0.6 * step;
    }),
  );
});

t.test('beamwidth: a side that never falls 3 dB is null, not a guess; no points, no beamwidth', async (t) => {
  const bw = P.halfPowerBeamwidth(sweep(0, 30, 5, (a) => beamDb(a, 0, 30)))!;
  t.equal(bw.peakDeg, 0);
  t.equal(bw.leftDeg, null);
  t.equal(bw.rightDeg, 15);
  t.equal(bw.widthDeg, null);
  t.equal(P.halfPowerBeamwidth([]), null);
});

t.test('beamwidth around the circle (a theta cut along phi): a beam across phi 0 is one beam', async (t) => {
  // Peak at phi 355, 30 deg wide: -3 dB at 340 and 10.
  const points = sweep(0, 355, 5, (a) => beamDb(((a - 355 + 540) % 360) - 180, 0, 30));
  const flat = P.halfPowerBeamwidth(points)!;
  t.equal(flat.widthDeg, null, 'read as a line from 0 to 355, the beam is cut in two');
  const round = P.halfPowerBeamwidth(points, 3, { circular: true })!;
  t.equal(round.peakDeg, 355);
  t.equal(round.leftDeg, 340);
  t.equal(round.rightDeg, 10);
  t.equal(round.widthDeg, 30);
});

const grid = (thetaStep: number, phiStep: number, db: (theta: number, phi: number) => number): Sample[] => {
  const out: Sample[] = [];
  for (let phi = 0; phi < 360; phi += phiStep) for (let theta = 0; theta <= 180; theta += thetaStep) out.push({ index: out.length, theta_deg: theta, phi_deg: phi, values: [db(theta, phi)] });
  return out;
};

t.test('a phi cut takes theta at that phi and mirrors phi + 180 to negative theta', async (t) => {
  const samples = grid(10, 90, (theta, phi) => -theta / 10 - phi / 100);
  const c = P.cut(samples, { axis: 'phi', fixedDeg: 0 });
  t.equal(c.length, 19 + 18, 'theta 0..180 at phi 0, and 10..180 at phi 180 (theta 0 once)');
  t.same(c[0], { angleDeg: -180, db: -18 - 1.8 });
  t.same(c.find((p) => p.angleDeg === 0), { angleDeg: 0, db: 0 });
  t.same(c.find((p) => p.angleDeg === -30), { angleDeg: -30, db: -3 - 1.8 });
  t.same(c[c.length - 1], { angleDeg: 180, db: -18 });
  const at270 = P.cut(samples, { axis: 'phi', fixedDeg: 270 });
  t.same(at270.find((p) => p.angleDeg === -20), { angleDeg: -20, db: -2 - 0.9 }, 'phi 270 pairs with phi 90');
  const thetaCut = P.cut(samples, { axis: 'theta', fixedDeg: 90 });
  t.same(thetaCut.map((p) => p.angleDeg), [0, 90, 180, 270], 'a theta cut runs along phi');
  t.same(P.cutAngles(samples, 'phi'), [0, 90, 180, 270]);
});

t.test('a cut averages repeated samples (dB), skips failed points, and matches microstep-rounded angles', async (t) => {
  const samples: Sample[] = [
    { theta_deg: 10, phi_deg: 0, values: [-4] },
    { theta_deg: 10, phi_deg: 0, values: [-6] },
    { theta_deg: 20.0003, phi_deg: 359.99999, values: [-9] },
    { theta_deg: 30, phi_deg: 0, values: [], error: 'exec: timed out' },
  ];
  t.same(P.cut(samples, { axis: 'phi', fixedDeg: 0 }), [
    { angleDeg: 10, db: -5 },
    { angleDeg: 20, db: -9 },
  ]);
  t.equal(P.strongestPhi([{ theta_deg: 5, phi_deg: 0, values: [-9] }, { theta_deg: 5, phi_deg: 90, values: [-1] }]), 90);
  t.equal(P.strongestPhi([]), null);
});

t.test('polar geometry: 0 dB on the rim, the floor at the centre, angle 0 up and 90 to the right', async (t) => {
  const o = { cx: 100, cy: 100, radius: 80, floorDb: -40 };
  const near = (a: { x: number; y: number }, b: { x: number; y: number }) => Math.abs(a.x - b.x) < 1e-9 && Math.abs(a.y - b.y) < 1e-9;
  t.ok(near(P.polarXY(0, 0, o), { x: 100, y: 20 }));
  t.ok(near(P.polarXY(90, 0, o), { x: 180, y: 100 }));
  t.ok(near(P.polarXY(-90, -20, o), { x: 60, y: 100 }), '-20 dB is half way out');
  t.ok(near(P.polarXY(45, -70, o), { x: 100, y: 100 }), 'below the floor: the centre');
});

t.test("the heat map bins on the scan's grid, normalises to the peak and fills in as samples arrive", async (t) => {
  const request = { plan: { kind: 'grid', theta: { start_deg: 0, stop_deg: 180, step_deg: 10 }, phi: { start_deg: 0, stop_deg: 350, step_deg: 10 } } };
  const g = P.gridFor(request);
  t.same(g.theta, { startDeg: 0, stepDeg: 10, count: 19 });
  t.same(g.phi, { startDeg: 0, stepDeg: 10, count: 36 });
  const map = new P.HeatMap(g);
  t.equal(map.add({ theta_deg: 9.99875, phi_deg: 20.00125, values: [-13] }), '1,2', 'microstep-rounded angles land in their bin');
  t.equal(map.cells()[0].db, 0, 'the only cell is the peak');
  map.add({ theta_deg: 0, phi_deg: 0, values: [-3] });
  map.add({ theta_deg: 0, phi_deg: 0, values: [-5] });
  t.equal(map.size, 2);
  const cells = Object.fromEntries(map.cells().map((c) => [c.key, c]));
  t.equal(cells['0,0'].db, 0, 'two samples in a bin: their mean is the new peak');
  t.equal(cells['1,2'].db, -9, 'the other cell is re-normalised to it');
  t.match(cells['1,2'], { thetaDeg: 10, phiDeg: 20 });
  t.equal(map.add({ theta_deg: 0, phi_deg: 360, values: [0] }), null, 'outside the grid: not binned');
  t.equal(map.add({ theta_deg: 10, phi_deg: 10, values: [], error: 'failed' }), null, 'a failed point: not binned');
  // Plans without a range on an axis (cuts, point lists) fall back to the whole travel.
  const cuts = P.gridFor({ plan: { kind: 'phi_cuts', phi_deg: [0, 90], theta: { start_deg: 0, stop_deg: 90, step_deg: 3 } } });
  t.same(cuts.theta, { startDeg: 0, stepDeg: 3, count: 31 });
  t.same(cuts.phi, { startDeg: 0, stepDeg: 5, count: 72 });
  t.equal(P.binOf(cuts.phi, 90), 18);
});

t.test('colours run from dark at the floor to bright at the peak, brighter for every dB up', async (t) => {
  const lum = (c: string) => {
    const [r, g, b] = c.match(/\d+/g)!.map(Number);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  t.equal(P.colourFor(-40), 'rgb(68, 1, 84)');
  t.equal(P.colourFor(-100), 'rgb(68, 1, 84)', 'below the floor: the floor colour');
  t.equal(P.colourFor(0), 'rgb(253, 231, 37)');
  let last = -1;
  for (let db = -40; db <= 0; db += 1) {
    const l = lum(P.colourFor(db));
    t.ok(l > last, `${db} dB brighter than ${db - 1} dB`);
    last = l;
  }
});

t.test('form parsing names the field; durations read as people say them', async (t) => {
  t.same(P.parseRange('0:180:5', 'theta'), { start_deg: 0, stop_deg: 180, step_deg: 5 });
  t.match((P.parseRange('0:180', 'theta') as Error).message, /theta must be start:stop:step in degrees/);
  t.match((P.parseRange('0:180:0', 'phi') as Error).message, /phi: the step must be more than 0/);
  t.same(P.parseAngles('0, 90 180', 'phi cuts'), [0, 90, 180]);
  t.match((P.parseAngles('north', 'phi cuts') as Error).message, /phi cuts must be one or more angles/);
  t.equal(P.formatDuration(12.4), '12 s');
  t.equal(P.formatDuration(185), '3 min 05 s');
  t.equal(P.formatDuration(3720), '1 h 02 min');
  t.equal(P.formatDuration(null), '–');
});
