/**
 * A simulated antenna under test: the far-field power pattern a receiving
 * probe sees as the positioner turns the antenna, plus seeded measurement
 * noise. It is the `sim` measurement source of a scan (firmware/scan.ts), so
 * a scan in simulation draws a real-looking pattern: a main lobe on
 * boresight (theta 0), side lobes, nulls between them, and a low back lobe.
 *
 * Model: the open end of a pyramidal horn as a rectangular aperture a x b
 * (in wavelengths) on an infinite ground plane, carrying the TE10 mode:
 * cosine across the broad wall (x, the H-plane), uniform across the narrow
 * one (y, the E-plane). Its far field (Balanis, "Antenna Theory: Analysis
 * and Design", 3rd ed., section 12.5.3, "TE10-mode distribution on an
 * infinite ground plane", from the equivalent magnetic current of the aperture field) is,
 * up to a constant,
 *
 *   X = (k a / 2) sin(theta) cos(phi),   Y = (k b / 2) sin(theta) sin(phi)
 *   E_theta = -(pi/2) sin(phi)             * cos(X) / (X^2 - (pi/2)^2) * sin(Y) / Y
 *   E_phi   = -(pi/2) cos(theta) cos(phi)  * cos(X) / (X^2 - (pi/2)^2) * sin(Y) / Y
 *
 * with k = 2 pi / lambda. The H-plane (phi 0) has the cosine aperture's low
 * side lobes (-23 dB, about -25 dB with the cos(theta) of E_phi) and first
 * null at sin(theta) = 1.5 / a; the E-plane
 * (phi 90) the uniform aperture's -13.3 dB side lobes and nulls at
 * sin(theta) = n / b. The ground-plane model radiates nothing behind the
 * aperture (theta > 90); a real horn's back lobe is some 30-40 dB down, so
 * the power never falls below `floorDb` (and nulls stay finite).
 *
 * Power is in dB relative to the peak (0 dB on boresight) before noise.
 * Noise is Gaussian in dB with `noiseDb` standard deviation, drawn from a
 * generator seeded by (seed, point, sample): the same scan gives the same
 * numbers on every run, and a resumed scan the same as an unbroken one.
 */

export interface AntennaModelConfig {
  /** Aperture width (broad wall, H-plane), wavelengths. */
  apertureWidthWl: number;
  /** Aperture height (narrow wall, E-plane), wavelengths. */
  apertureHeightWl: number;
  /** Lowest power the model reports, dB below the peak (back lobe, depth of the nulls). */
  floorDb: number;
  /** Standard deviation of the measurement noise, dB (0: none). */
  noiseDb: number;
  /** Seed of the noise. */
  seed: number;
}

export function defaultAntennaConfig(): AntennaModelConfig {
  // A horn of a few wavelengths, like an X-band standard-gain horn at the low end: lobes every 20-30 deg.
  return { apertureWidthWl: 3, apertureHeightWl: 2.2, floorDb: -45, noiseDb: 0.15, seed: 1 };
}

const HALF_PI = Math.PI / 2;

/** sin(y)/y, 1 at 0. */
function sinc(y: number): number {
  return Math.abs(y) < 1e-9 ? 1 : Math.sin(y) / y;
}

/** cos(X)/(X^2 - (pi/2)^2), with its removable singularity at X = +-pi/2 filled in (value -1/pi). */
function cosineApertureFactor(x: number): number {
  const d = x * x - HALF_PI * HALF_PI;
  if (Math.abs(d) < 1e-9) return -1 / Math.PI;
  return Math.cos(x) / d;
}

/** |E|^2 on boresight, which normalises the pattern to 0 dB there: (pi/2)^2 * (4/pi^2)^2 = 4/pi^2. */
const PEAK_POWER = 4 / (Math.PI * Math.PI);

export class SimulatedAntenna {
  constructor(readonly config: AntennaModelConfig = defaultAntennaConfig()) {}

  /** Noise-free relative power, dB (0 at the peak, never below floorDb). */
  patternDb(thetaDeg: number, phiDeg: number): number {
    const theta = (thetaDeg * Math.PI) / 180;
    const phi = (phiDeg * Math.PI) / 180;
    const floor = this.config.floorDb;
    if (thetaDeg >= 90) return floor;
    const kaHalf = Math.PI * this.config.apertureWidthWl; // k a / 2 with a in wavelengths
    const kbHalf = Math.PI * this.config.apertureHeightWl;
    const x = kaHalf * Math.sin(theta) * Math.cos(phi);
    const y = kbHalf * Math.sin(theta) * Math.sin(phi);
    const common = HALF_PI * cosineApertureFactor(x) * sinc(y);
    const eTheta = Math.sin(phi) * common;
    const ePhi = Math.cos(theta) * Math.cos(phi) * common;
    const power = (eTheta * eTheta + ePhi * ePhi) / PEAK_POWER;
    const db = 10 * Math.log10(Math.max(power, 1e-30));
    return Math.max(db, floor);
  }

  /** One measurement: the pattern plus seeded Gaussian noise, dB, rounded to 0.001 dB (a meter's resolution). */
  measureDb(thetaDeg: number, phiDeg: number, pointIndex: number, sample = 0): number {
    const clean = this.patternDb(thetaDeg, phiDeg);
    const noise = this.config.noiseDb > 0 ? this.config.noiseDb * gaussian(this.config.seed, pointIndex, sample) : 0;
    return Math.round((clean + noise) * 1000) / 1000;
  }
}

/** A standard normal draw from a generator seeded by the three integers (mulberry32, then Box-Muller). */
function gaussian(seed: number, a: number, b: number): number {
  let state = (Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(a | 0, 0x85ebca6b) ^ Math.imul(b | 0, 0xc2b2ae35)) >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const u1 = Math.max(next(), 1e-12);
  const u2 = next();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}
