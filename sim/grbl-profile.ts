/**
 * The velocity profile of one grbl planner block, as pure math: accelerate
 * at `accel` from `v0` toward `vmax`, cruise, decelerate to rest at the end
 * of `lengthMm` (a trapezoid, or a triangle when the block is short), as
 * grbl's planner plans a lone block (planner.c plan_buffer_line(), stepper.c
 * st_prep_buffer() ramps). A feed hold replaces the rest of a profile by a
 * deceleration to rest from the current speed (stepper.c,
 * STEP_CONTROL_EXECUTE_HOLD).
 *
 *   v ^      ______ vmax
 *     |     /      \
 *  v0 |    /        \
 *     +---+----------+---> t
 *
 * Units: mm (grbl's unit: a degree for the positioner), mm/s, mm/s^2, s.
 */

interface Piece {
  /** Duration of the piece, s. */
  durS: number;
  v0: number;
  a: number;
}

export class Profile {
  readonly pieces: Piece[];
  readonly lengthMm: number;

  private constructor(pieces: Piece[]) {
    this.pieces = pieces.filter((p) => p.durS > 0);
    this.lengthMm = this.pieces.reduce((s, p) => s + p.v0 * p.durS + 0.5 * p.a * p.durS * p.durS, 0);
  }

  /** From speed `v0` to rest over `lengthMm`, never above `vmax`. */
  static block(lengthMm: number, v0: number, vmax: number, accel: number): Profile {
    if (lengthMm <= 0) return new Profile([]);
    const top = Math.min(vmax, Math.sqrt(accel * lengthMm + (v0 * v0) / 2));
    const v1 = Math.max(top, v0);
    const upS = Math.max(0, (v1 - v0) / accel);
    const downS = v1 / accel;
    const upMm = v0 * upS + 0.5 * accel * upS * upS;
    const downMm = (v1 * v1) / (2 * accel);
    const cruiseMm = Math.max(0, lengthMm - upMm - downMm);
    if (v0 > top && downMm > lengthMm) {
      // Arrives too fast to stop in the distance: decelerate over it (grbl plans for this never to happen).
      const a = (v0 * v0) / (2 * lengthMm);
      return new Profile([{ durS: v0 / a, v0, a: -a }]);
    }
    return new Profile([
      { durS: upS, v0, a: accel },
      { durS: v1 > 0 ? cruiseMm / v1 : 0, v0: v1, a: 0 },
      { durS: downS, v0: v1, a: -accel },
    ]);
  }

  /** A stop from `v0` at `accel`. */
  static stop(v0: number, accel: number): Profile {
    return new Profile([{ durS: v0 / accel, v0, a: -accel }]);
  }

  /** `first` up to `atS`, then `then` (a feed hold: the rest of a block replaced by a stop). */
  static compose(first: Profile, atS: number, then: Profile): Profile {
    const pieces: Piece[] = [];
    let left = atS;
    for (const p of first.pieces) {
      if (left <= 0) break;
      pieces.push({ ...p, durS: Math.min(p.durS, left) });
      left -= p.durS;
    }
    return new Profile([...pieces, ...then.pieces]);
  }

  get durationS(): number {
    return this.pieces.reduce((s, p) => s + p.durS, 0);
  }

  /** Distance covered after `tS`. */
  distanceAt(tS: number): number {
    let s = 0;
    let t = tS;
    for (const p of this.pieces) {
      const d = Math.min(Math.max(t, 0), p.durS);
      s += p.v0 * d + 0.5 * p.a * d * d;
      t -= p.durS;
      if (t <= 0) break;
    }
    return s;
  }

  speedAt(tS: number): number {
    let t = tS;
    for (const p of this.pieces) {
      if (t <= p.durS) return Math.max(0, p.v0 + p.a * Math.max(t, 0));
      t -= p.durS;
    }
    return 0;
  }

  /** When the distance `s` is reached (Infinity beyond the end). */
  timeAtDistance(s: number): number {
    let t0 = 0;
    let s0 = 0;
    for (const p of this.pieces) {
      const ds = p.v0 * p.durS + 0.5 * p.a * p.durS * p.durS;
      if (s <= s0 + ds + 1e-12) {
        const rest = s - s0;
        if (p.a === 0) return t0 + (p.v0 > 0 ? rest / p.v0 : 0);
        const disc = Math.max(0, p.v0 * p.v0 + 2 * p.a * rest);
        return t0 + Math.min(p.durS, Math.max(0, (-p.v0 + Math.sqrt(disc)) / p.a));
      }
      t0 += p.durS;
      s0 += ds;
    }
    return Infinity;
  }
}
