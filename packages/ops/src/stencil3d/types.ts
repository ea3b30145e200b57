export type StencilBoundary = 'zero' | 'copy';

/**
 * 7-point stencil on an `[nz][ny][nx]` grid (x fastest), `steps` Jacobi iterations.
 * Interior cells: `out = c0·u + c1·(sum of the six face neighbours)`.
 * Boundary cells: `'zero'` writes 0 (CS610 A4), `'copy'` keeps the input value (Dirichlet).
 */
export interface Stencil3dArgs {
  /** f32 everywhere; f64 only on backends whose `info.capabilities.f64` is true. */
  readonly input: Float32Array | Float64Array;
  readonly nx: number;
  /** Default `nx`. */
  readonly ny?: number;
  /** Default `nx`. */
  readonly nz?: number;
  /** Iterations; default 1; 0 returns a copy of the input. */
  readonly steps?: number;
  /** Default `'zero'`. */
  readonly boundary?: StencilBoundary;
  /** Default 0 for `'zero'`, 1/7 for `'copy'`. */
  readonly c0?: number;
  /** Default 0.8 for `'zero'`, 1/7 for `'copy'`. */
  readonly c1?: number;
}

export interface Stencil3dProblem {
  readonly input: Float32Array | Float64Array;
  readonly nx: number;
  readonly ny: number;
  readonly nz: number;
  readonly steps: number;
  readonly boundary: StencilBoundary;
  readonly c0: number;
  readonly c1: number;
}
