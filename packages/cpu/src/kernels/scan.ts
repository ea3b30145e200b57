import { copyInto } from '@kernelkit/core';
import type { ScanArray, ScanDtype } from '@kernelkit/ops';
import { BAND_BYTES, type KernelExports, type WasmKernels } from '../wasm/runtime.js';

/**
 * Sequential scan of input[start, end) into out[start, end) starting from `carry`; returns the
 * carry after the range. In-place safe (each element is read before it is written).
 * Integers wrap mod 2^32; f32 accumulates in f64 and rounds once per element.
 */
export function scanRange(input: ScanArray, out: ScanArray, start: number, end: number, carry: number, exclusive: boolean, dtype: ScanDtype): number {
  let acc = carry;
  if (dtype === 'u32') {
    acc >>>= 0;
    if (exclusive) for (let i = start; i < end; i++) { const v = input[i]!; out[i] = acc; acc = (acc + v) >>> 0; }
    else for (let i = start; i < end; i++) { acc = (acc + input[i]!) >>> 0; out[i] = acc; }
  } else if (dtype === 'i32') {
    acc |= 0;
    if (exclusive) for (let i = start; i < end; i++) { const v = input[i]!; out[i] = acc; acc = (acc + v) | 0; }
    else for (let i = start; i < end; i++) { acc = (acc + input[i]!) | 0; out[i] = acc; }
  } else if (exclusive) {
    for (let i = start; i < end; i++) { const v = input[i]!; out[i] = acc; acc += v; }
  } else {
    for (let i = start; i < end; i++) { acc += input[i]!; out[i] = acc; }
  }
  return acc;
}

/** Sum of input[start, end) (wrapped for integers): the first pass of a two-pass parallel scan. */
export function sumRange(input: ScanArray, start: number, end: number, dtype: ScanDtype): number {
  let acc = 0;
  if (dtype === 'u32') for (let i = start; i < end; i++) acc = (acc + input[i]!) >>> 0;
  else if (dtype === 'i32') for (let i = start; i < end; i++) acc = (acc + input[i]!) | 0;
  else for (let i = start; i < end; i++) acc += input[i]!;
  return acc;
}

/** Combines two carries of `dtype`. */
export function addCarry(a: number, b: number, dtype: ScanDtype): number {
  return dtype === 'u32' ? (a + b) >>> 0 : dtype === 'i32' ? (a + b) | 0 : a + b;
}

/** A view of `w`'s memory of `input`'s element type, `n` elements from byte `at`. */
function memoryView(w: WasmKernels, input: ScanArray, at: number, n: number): ScanArray {
  const ctor = input.constructor as new (buffer: ArrayBufferLike, byteOffset: number, length: number) => ScanArray;
  return new ctor(w.buffer, at, n);
}

/**
 * Scans the `n` elements at byte `at` of the kernels' memory in place, starting from `carry`;
 * returns the carry after them (the same numbers as `scanRange`'s).
 */
export function scanInMemory(k: KernelExports, at: number, n: number, carry: number, exclusive: boolean, dtype: ScanDtype): number {
  if (dtype === 'f64') return k.scanF64(at, n, carry, exclusive ? 1 : 0);
  if (dtype === 'f32') return k.scanF32(at, n, carry, exclusive ? 1 : 0);
  const c = k.scanI32(at, n, carry | 0, exclusive ? 1 : 0);
  return dtype === 'u32' ? c >>> 0 : c;
}

/** Sum of the `n` elements at byte `at` of the kernels' memory: `sumRange` on the WebAssembly SIMD kernels. */
export function sumInMemory(k: KernelExports, at: number, n: number, dtype: ScanDtype): number {
  if (dtype === 'f64') return k.sumF64(at, n);
  if (dtype === 'f32') return k.sumF32(at, n);
  const s = k.sumI32(at, n);
  return dtype === 'u32' ? s >>> 0 : s;
}

/**
 * `scanRange` on the WebAssembly SIMD kernels: each band of at most `bandBytes` is copied into
 * the module's memory, scanned there in place and copied out (two copies). Same results as
 * `scanRange` for integers; floats within the scan tolerance (sums in f64, rounded once per element for f32).
 */
export function scanRangeSimd(
  w: WasmKernels,
  input: ScanArray,
  out: ScanArray,
  start: number,
  end: number,
  carry: number,
  exclusive: boolean,
  dtype: ScanDtype,
  bandBytes = BAND_BYTES,
): number {
  const size = input.BYTES_PER_ELEMENT;
  const band = Math.max(1, Math.floor(bandBytes / size));
  // Lined up with the input mod 16 bytes: V8 copies between arrays whose addresses differ by 4 mod 8 several times slower.
  const at = input.byteOffset % 16;
  w.reserve(at + Math.min(band, end - start) * size);
  let acc = carry;
  for (let a = start; a < end; a += band) {
    const n = Math.min(band, end - a);
    const m = memoryView(w, input, at, n);
    copyInto(m, input.subarray(a, a + n));
    acc = scanInMemory(w.k, at, n, acc, exclusive, dtype);
    copyInto(out, m, a);
  }
  return acc;
}
