/**
 * The simulated antenna under test (sim/antenna.ts), the scans' `sim`
 * source, against the closed-form facts of its model (Balanis, TE10
 * aperture on a ground plane): 0 dB on boresight, the E-plane's nulls at
 * sin(theta) = n / b and first side lobe at -13.3 dB (uniform), the
 * H-plane's first null at sin(theta) = 1.5 / a and side lobe near -25 dB
 * (cosine), nothing behind the aperture but the floor; and noise that is
 * seeded, repeatable and of the configured size.
 */
import t from 'tap';
import { SimulatedAntenna, defaultAntennaConfig } from '../../sim/antenna';

const quiet = new SimulatedAntenna({ ...defaultAntennaConfig(), noiseDb: 0, floorDb: -200 });
const { apertureWidthWl: a, apertureHeightWl: b } = defaultAntennaConfig();
const deg = (rad: number) => (rad * 180) / Math.PI;

/** The cut's pattern on a fine theta grid (0..90), and its local minima and maxima. */
function cut(phiDeg: number) {
  const thetas = Array.from({ length: 9001 }, (_, i) => i * 0.01);
  const db = thetas.map((th) => quiet.patternDb(th, phiDeg));
  const minima: number[] = [];
  const maxima: { theta: number; db: number }[] = [];
  for (let i = 1; i < db.length - 1; i++) {
    if (db[i] < db[i - 1] && db[i] <= db[i + 1]) minima.push(thetas[i]);
    if (db[i] > db[i - 1] && db[i] >= db[i + 1]) maxima.push({ theta: thetas[i], db: db[i] });
  }
  return { db, minima, maxima };
}

t.test('the peak is 0 dB on boresight, whatever phi', async (t) => {
  for (const phi of [0, 45, 90, 200]) t.ok(Math.abs(quiet.patternDb(0, phi)) < 1e-9, `phi ${phi}`);
  t.ok(quiet.patternDb(10, 0) < 0 && quiet.patternDb(10, 90) < 0, 'below 0 off boresight');
});

t.test('E-plane (phi 90): nulls at sin(theta) = n / b, first side lobe -13.3 dB', async (t) => {
  const { minima, maxima } = cut(90);
  const expected = [1, 2].map((n) => deg(Math.asin(n / b)));
  t.ok(Math.abs(minima[0] - expected[0]) < 0.05, `first null at ${minima[0]} deg, expected ${expected[0].toFixed(2)}`);
  t.ok(Math.abs(minima[1] - expected[1]) < 0.05, `second null at ${minima[1]} deg, expected ${expected[1].toFixed(2)}`);
  const sidelobe = maxima.find((m) => m.theta > minima[0])!;
  // The uniform aperture's -13.26 dB, raised a little by the element factor toward the side.
  t.ok(sidelobe.db > -14 && sidelobe.db < -12, `first side lobe ${sidelobe.db.toFixed(2)} dB`);
});

t.test('H-plane (phi 0): first null at sin(theta) = 1.5 / a, side lobe near -25 dB', async (t) => {
  const { minima, maxima } = cut(0);
  const expected = deg(Math.asin(1.5 / a));
  t.ok(Math.abs(minima[0] - expected) < 0.05, `first null at ${minima[0]} deg, expected ${expected.toFixed(2)}`);
  const sidelobe = maxima.find((m) => m.theta > minima[0])!;
  t.ok(sidelobe.db > -26 && sidelobe.db < -20, `first side lobe ${sidelobe.db.toFixed(2)} dB`);
});

t.test('behind the aperture and in the nulls: the floor', async (t) => {
  const antenna = new SimulatedAntenna({ ...defaultAntennaConfig(), noiseDb: 0 });
  t.equal(antenna.patternDb(120, 30), defaultAntennaConfig().floorDb);
  t.equal(antenna.patternDb(180, 0), defaultAntennaConfig().floorDb);
  const nullTheta = deg(Math.asin(1 / b));
  t.ok(antenna.patternDb(nullTheta, 90) >= defaultAntennaConfig().floorDb, 'a null never goes below the floor');
});

t.test('noise: seeded and repeatable per point and sample, Gaussian of the configured size', async (t) => {
  const one = new SimulatedAntenna({ ...defaultAntennaConfig(), noiseDb: 0.5, seed: 7 });
  const two = new SimulatedAntenna({ ...defaultAntennaConfig(), noiseDb: 0.5, seed: 7 });
  const other = new SimulatedAntenna({ ...defaultAntennaConfig(), noiseDb: 0.5, seed: 8 });
  t.equal(one.measureDb(10, 20, 5, 0), two.measureDb(10, 20, 5, 0), 'same seed, point and sample: same value');
  t.not(one.measureDb(10, 20, 5, 0), one.measureDb(10, 20, 5, 1), 'another sample: another draw');
  t.not(one.measureDb(10, 20, 5, 0), other.measureDb(10, 20, 5, 0), 'another seed: another draw');
  const errors = Array.from({ length: 4000 }, (_, i) => one.measureDb(0, 0, i, 0) - one.patternDb(0, 0));
  const mean = errors.reduce((s, e) => s + e, 0) / errors.length;
  const sd = Math.sqrt(errors.reduce((s, e) => s + (e - mean) ** 2, 0) / errors.length);
  t.ok(Math.abs(mean) < 0.03, `mean error ${mean.toFixed(4)} dB`);
  t.ok(Math.abs(sd - 0.5) < 0.03, `standard deviation ${sd.toFixed(4)} dB`);
});
