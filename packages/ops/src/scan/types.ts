export type ScanArray = Uint32Array | Int32Array | Float32Array | Float64Array;
export type ScanDtype = 'u32' | 'i32' | 'f32' | 'f64';

/**
 * Prefix sum. Integers wrap modulo 2^32 (bit-exact on every backend); floats follow each
 * backend's stated tolerance. f64 only where `info.capabilities.f64` is true.
 */
export interface ScanArgs<T extends ScanArray = ScanArray> {
  readonly input: T;
  /** Exclusive scan (out[0] = initial); default false (inclusive). */
  readonly exclusive?: boolean;
  /** Carry-in added to every output; default 0. Lets a long array be scanned in chunks. */
  readonly initial?: number;
}

export interface ScanProblem<T extends ScanArray = ScanArray> {
  readonly input: T;
  readonly dtype: ScanDtype;
  readonly exclusive: boolean;
  readonly initial: number;
}
