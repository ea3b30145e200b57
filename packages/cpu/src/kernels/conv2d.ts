import { copyInto } from '@kernelkit/core';
import { BAND_BYTES, type WasmKernels } from '../wasm/runtime.js';

/**
 * Conv2d over output rows [rowStart, rowEnd) of the flattened (batch·height) row space.
 * Each output row is accumulated in f64 (`acc`, length >= width, owned by the caller so the
 * loop never allocates): for every filter tap the inner loop is a contiguous axpy over the
 * valid x range, which V8 compiles to tight code without per-pixel bounds checks.
 */
export function conv2dRows(
  input: Float32Array,
  filter: Float32Array,
  out: Float32Array,
  height: number,
  width: number,
  k: number,
  rowStart: number,
  rowEnd: number,
  acc: Float64Array,
): void {
  const r = (k - 1) >> 1;
  for (let row = rowStart; row < rowEnd; row++) {
    const b = (row / height) | 0;
    const y = row - b * height;
    acc.fill(0, 0, width);
    const iLo = Math.max(-r, -y);
    const iHi = Math.min(r, height - 1 - y);
    for (let i = iLo; i <= iHi; i++) {
      const inRow = (b * height + y + i) * width;
      const fRow = (i + r) * k + r;
      const jLo = Math.max(-r, -(width - 1));
      const jHi = Math.min(r, width - 1);
      for (let j = jLo; j <= jHi; j++) {
        const fv = filter[fRow + j]!;
        const xs = j < 0 ? -j : 0;
        const xe = j > 0 ? width - j : width;
        const base = inRow + j;
        for (let x = xs; x < xe; x++) acc[x]! += input[base + x]! * fv;
      }
    }
    const o = row * width;
    for (let x = 0; x < width; x++) out[o + x] = acc[x]!;
  }
}

/**
 * `conv2dRows` on the WebAssembly SIMD kernel. Per image, bands of output rows (at most
 * `bandBytes` of linear memory each) are copied in with their halo rows and zero padding around
 * them, computed (register tile 3 rows × 8 pixels, f32 sums), and copied out: one copy in, one
 * copy out. The padding makes every filter tap valid, so the filter must be finite (0 · Inf
 * would be NaN where the definition skips the tap): callers check with `allFinite`.
 */
export function conv2dRowsSimd(
  w: WasmKernels,
  input: Float32Array,
  filter: Float32Array,
  out: Float32Array,
  height: number,
  width: number,
  k: number,
  rowStart: number,
  rowEnd: number,
  bandBytes = BAND_BYTES,
): void {
  const r = (k - 1) >> 1;
  // Columns: r zeros, the row, then zeros up to 8 + r past it (the last tile's taps).
  const stride = width + 2 * r + 8;
  const filterLen = (k * k + 3) & ~3;
  // The kernel's tile is 3 rows: bands are multiples of 3 rows, padded to one below.
  const bandRows = Math.max(3, Math.floor((bandBytes / 4 - filterLen) / (stride + width) / 3) * 3);
  for (let row = rowStart; row < rowEnd; ) {
    const b = (row / height) | 0;
    const y0 = row - b * height;
    const n = Math.min(rowEnd - row, height - y0, bandRows);
    const padRows = Math.ceil(n / 3) * 3 + 2 * r;
    const image = b * height * width;
    // V8 copies between a SharedArrayBuffer and module memory several times slower when the two
    // addresses differ by 4 mod 8 bytes, so the band and the output sit one float later where
    // that lines them up with the shared arrays (the rows' offsets all share one parity: stride − width is even).
    const inOff = filterLen + ((filterLen + r - input.byteOffset / 4 - image - (y0 - r) * width) & 1);
    const outAt = inOff + padRows * stride;
    const outOff = outAt + ((outAt - out.byteOffset / 4 - row * width) & 1);
    w.reserve((outOff + n * width) * 4);
    const m = w.f32;
    m.set(filter, 0);
    for (let i = 0; i < padRows; i++) {
      const y = y0 - r + i;
      const o = inOff + i * stride;
      if (y < 0 || y >= height) {
        m.fill(0, o, o + stride);
        continue;
      }
      m.fill(0, o, o + r);
      m.set(input.subarray(image + y * width, image + (y + 1) * width), o + r);
      m.fill(0, o + r + width, o + stride);
    }
    w.k.conv2d(inOff * 4, stride, 0, k, outOff * 4, n, width);
    copyInto(out, m.subarray(outOff, outOff + n * width), row * width);
    row += n;
  }
}

/** True when no element is NaN or ±Infinity. */
export function allFinite(a: Float32Array): boolean {
  for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i]!)) return false;
  return true;
}
