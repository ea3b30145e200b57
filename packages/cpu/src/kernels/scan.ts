import type { ScanArray, ScanDtype } from '@kernelkit/ops';

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
