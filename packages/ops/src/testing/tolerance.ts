import type { OpName, OpProblem } from '../backend.js';
/**
 * Float tolerances, all in one place. Each is a rigorous forward-error bound of the form
 * `|got − ref| ≤ factor · u · mag + tiny`, where `ref` is the f64 reference, `mag` is the same
 * computation on absolute values (so cancellation cannot hide an error, and a wrong term — which
 * costs about one |term| — is far above the bound), `u` is the unit roundoff of the output
 * type (2^-24 for f32, 2^-53 for f64) and `factor` counts the roundings a valid evaluation
 * order can make. `tiny` covers flush-to-zero of subnormals on GPUs.
 */
export interface Tolerance {
  /** Multiplies `u · mag`. */
  readonly factor: number;
  readonly u: number;
  readonly tiny: number;
  /** Human-readable statement of the bound (printed in failures and the README). */
  readonly statement: string;
}

/** The error `tol` allows for an output whose magnitude (the reference on absolute values) is `mag`. */
export const allowedError = (tol: Tolerance, mag: number): number => tol.factor * tol.u * mag + tol.tiny;

export const U32F = 2 ** -24;
export const U64F = 2 ** -53;
const TINY_F32 = 2 ** -120;

/** conv2d: k² products summed in any order, then one rounding to f32 (plus one for FMA-free products). */
export function conv2dTolerance(k: number): Tolerance {
  return { factor: k * k + 2, u: U32F, tiny: TINY_F32 * k * k, statement: `|err| ≤ (k²+2)·2⁻²⁴·Σ|in·f| (k=${k})` };
}

/** convLayer: C·K² products (+ bias) summed in any order. */
export function convLayerTolerance(channels: number, k: number): Tolerance {
  const n = channels * k * k + 1;
  return { factor: n + 2, u: U32F, tiny: TINY_F32 * n, statement: `|err| ≤ (C·K²+3)·2⁻²⁴·(Σ|in·w| + |bias|) (C=${channels}, K=${k})` };
}

/**
 * stencil3d: per step 7 products, 6 additions and the rounding of c0, c1 to the output type;
 * errors from earlier steps are carried forward with weights |c0| + 6|c1|, which `mag`
 * (the reference run on |u|, |c|) already accounts for.
 */
export function stencil3dTolerance(steps: number, dtype: 'f32' | 'f64'): Tolerance {
  return {
    factor: 10 * Math.max(1, steps) + 2,
    u: dtype === 'f32' ? U32F : U64F,
    tiny: dtype === 'f32' ? TINY_F32 * 8 * Math.max(1, steps) : 0,
    statement: `|err| ≤ (10·steps+2)·u·mag, mag = stencil on |u| with |c0|,|c1| (steps=${steps})`,
  };
}

/**
 * Float scan: a tree over each block (log2 n roundings) plus a sequential chain of block
 * carries (n/64 roundings is generous for blocks of >= 64 elements), plus the initial carry.
 */
export function scanTolerance(n: number, dtype: 'f32' | 'f64'): Tolerance {
  return {
    factor: Math.ceil(Math.log2(n + 1)) + Math.ceil(n / 64) + 4,
    u: dtype === 'f32' ? U32F : U64F,
    tiny: dtype === 'f32' ? TINY_F32 : 0,
    statement: `|err| ≤ (⌈log2(n+1)⌉+⌈n/64⌉+4)·u·Σ_{j≤i}|x_j| (n=${n})`,
  };
}

/** The per-op statements, for docs and the bench's header. */
export const TOLERANCE_SUMMARY = {
  conv2d: '(k²+2)·2⁻²⁴·Σ|in·f| per output',
  convLayer: '(C·K²+3)·2⁻²⁴·(Σ|in·w|+|bias|) per output',
  stencil3d: '(10·steps+2)·u·(stencil on |u|, |c|) per cell; u = 2⁻²⁴ (f32) or 2⁻⁵³ (f64)',
  scan: 'integers bit-exact (mod 2³²); floats (⌈log2(n+1)⌉+⌈n/64⌉+4)·u·Σ|x| prefix',
  gridSearch: 'exact: identical point list (same points, same order, same f64 values) as the f64 brute force',
} as const;

/**
 * The tolerance of a validated problem's output; undefined where results must be exact
 * (integer scans, grid search).
 */
export function opTolerance<O extends OpName>(op: O, problem: OpProblem<O>): Tolerance | undefined {
  switch (op) {
    case 'conv2d':
      return conv2dTolerance((problem as OpProblem<'conv2d'>).k);
    case 'convLayer': {
      const p = problem as OpProblem<'convLayer'>;
      return convLayerTolerance(p.channels, p.k);
    }
    case 'stencil3d': {
      const p = problem as OpProblem<'stencil3d'>;
      return stencil3dTolerance(p.steps, p.input instanceof Float64Array ? 'f64' : 'f32');
    }
    case 'scan': {
      const p = problem as OpProblem<'scan'>;
      return p.dtype === 'f32' || p.dtype === 'f64' ? scanTolerance(p.input.length, p.dtype) : undefined;
    }
  }
  return undefined;
}
