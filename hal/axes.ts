/** The two axes of the positioner and a typed pair of per-axis values. */
export const AXES = ['theta', 'phi'] as const;
export type AxisName = (typeof AXES)[number];
export type AxisPair<T> = { theta: T; phi: T };

export function mapAxes<T, U>(pair: AxisPair<T>, fn: (value: T, axis: AxisName) => U): AxisPair<U> {
  return { theta: fn(pair.theta, 'theta'), phi: fn(pair.phi, 'phi') };
}
