/** One axis of the grid: values `lower + r·step`, r = 0 … floor((upper − lower)/step) − 1. */
export interface GridDim {
  readonly lower: number;
  readonly upper: number;
  readonly step: number;
}

/**
 * Constrained grid search (CS610): every grid point x passes when, for every constraint i,
 * `|Σ_j C[i][j]·x[j] − d[i]| ≤ e[i]`, evaluated in f64 left to right (as the CS610 reference C code).
 */
export interface GridSearchArgs {
  readonly dims: readonly GridDim[];
  /** m×D row-major. */
  readonly coefficients: Float64Array | readonly number[];
  /** d, length m. */
  readonly targets: Float64Array | readonly number[];
  /** e, length m, each >= 0 (CS610: e = kk·ey). */
  readonly tolerances: Float64Array | readonly number[];
  /** Refuse to return more points than this (each costs 8·D bytes); default 10 000 000. */
  readonly maxPoints?: number;
}

export interface GridSearchProblem {
  readonly dims: readonly GridDim[];
  readonly d: number;
  readonly m: number;
  /** Points per axis. */
  readonly counts: readonly number[];
  /** Product of counts. */
  readonly total: number;
  /** Axis values, one Float64Array per dimension, computed as `lower + r·step`. */
  readonly axes: readonly Float64Array[];
  readonly coefficients: Float64Array;
  readonly targets: Float64Array;
  readonly tolerances: Float64Array;
  readonly maxPoints: number;
}

/** Passing points in lexicographic order of (x1 … xD), x1 slowest. */
export interface GridPoints {
  readonly count: number;
  readonly dims: number;
  /** count×dims row-major. */
  readonly points: Float64Array;
}
