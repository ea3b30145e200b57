import type { ScanArray, ScanDtype } from './types.js';

export function scanDtype(a: ScanArray): ScanDtype {
  if (a instanceof Uint32Array) return 'u32';
  if (a instanceof Int32Array) return 'i32';
  if (a instanceof Float32Array) return 'f32';
  return 'f64';
}

export function allocScanOutput<T extends ScanArray>(input: T, length = input.length): T {
  return new (input.constructor as new (n: number) => T)(length);
}

/** Bytes moved by an ideal scan of `n` elements (read once + write once): the course reports' GB/s. */
export const scanBytes = (n: number, dtype: ScanDtype): number => 2 * n * (dtype === 'f64' ? 8 : 4);
