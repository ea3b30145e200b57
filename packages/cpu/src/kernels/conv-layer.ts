import { copyInto } from '@kernelkit/core';
import { BAND_BYTES, type WasmKernels } from '../wasm/runtime.js';

export interface ConvLayerDims {
  readonly channels: number;
  readonly height: number;
  readonly width: number;
  readonly maps: number;
  readonly k: number;
  readonly outHeight: number;
  readonly outWidth: number;
}

/**
 * Conv layer for output planes [planeStart, planeEnd) of the flattened (batch·maps) space.
 * Each plane accumulates in f64 (`acc`, length >= outHeight·outWidth, caller-owned): per
 * weight, a contiguous axpy over each output row, so the weight is loaded once per row.
 */
export function convLayerPlanes(
  input: Float32Array,
  weights: Float32Array,
  bias: Float32Array | undefined,
  relu: boolean,
  out: Float32Array,
  d: ConvLayerDims,
  planeStart: number,
  planeEnd: number,
  acc: Float64Array,
): void {
  const { channels: C, height: H, width: W, maps: M, k: K, outHeight: OH, outWidth: OW } = d;
  const planeLen = OH * OW;
  for (let plane = planeStart; plane < planeEnd; plane++) {
    const b = (plane / M) | 0;
    const m = plane - b * M;
    acc.fill(0, 0, planeLen);
    for (let c = 0; c < C; c++) {
      const inPlane = (b * C + c) * H * W;
      const wBase = (m * C + c) * K * K;
      for (let p = 0; p < K; p++) {
        for (let q = 0; q < K; q++) {
          const wv = weights[wBase + p * K + q]!;
          for (let h = 0; h < OH; h++) {
            const inOff = inPlane + (h + p) * W + q;
            const aOff = h * OW;
            for (let w = 0; w < OW; w++) acc[aOff + w]! += input[inOff + w]! * wv;
          }
        }
      }
    }
    const bv = bias === undefined ? 0 : bias[m]!;
    const o = plane * planeLen;
    for (let i = 0; i < planeLen; i++) {
      const v = acc[i]! + bv;
      // `v < 0 || v === 0` keeps NaN as NaN, like the reference.
      out[o + i] = relu && (v < 0 || v === 0) ? 0 : v;
    }
  }
}

/** Taps per packed row of weights, as the wasm kernel's `tapsPerRow`: up to 8 padded to 8. */
const tapsPerRow = (k: number): number => (k <= 8 ? 8 : k);

/** Floats of packed weights for `maps` maps (see packWeights). */
export const packedLength = (maps: number, channels: number, k: number): number => Math.ceil(maps / 4) * channels * k * tapsPerRow(k) * 16;

/**
 * The weights of maps [m0, m1) as the wasm kernel reads them: [ceil(n/4)][C][K][tapsPerRow(K)][4 maps][4 lanes],
 * each weight repeated across a vector's 4 lanes, zeros for maps past m1 and taps past K.
 */
export function packWeights(dst: Float32Array, at: number, weights: Float32Array, channels: number, k: number, m0: number, m1: number): void {
  const row = tapsPerRow(k);
  const block = channels * k * row * 16;
  dst.fill(0, at, at + packedLength(m1 - m0, channels, k));
  for (let m = m0; m < m1; m++) {
    const base = at + ((m - m0) >> 2) * block + ((m - m0) & 3) * 4;
    let src = m * channels * k * k;
    for (let r = 0; r < channels * k; r++) {
      for (let x = 0; x < k; x++) {
        const v = weights[src++]!;
        const o = base + (r * row + x) * 16;
        dst[o] = v;
        dst[o + 1] = v;
        dst[o + 2] = v;
        dst[o + 3] = v;
      }
    }
  }
}

/**
 * `convLayerPlanes` on the WebAssembly SIMD kernel (register tiles of 4 maps × 8 or 4 pixels of a row,
 * f32 sums, bias and ReLU fused). Whole images are copied in at once, in bands of at most
 * `bandBytes` of linear memory (one image at least), and each image's planes are copied out as
 * soon as the kernel wrote them, while they are still in cache: one copy in, one copy out.
 */
export function convLayerPlanesSimd(
  w: WasmKernels,
  input: Float32Array,
  weights: Float32Array,
  bias: Float32Array | undefined,
  relu: boolean,
  out: Float32Array,
  d: ConvLayerDims,
  planeStart: number,
  planeEnd: number,
  bandBytes = BAND_BYTES,
): void {
  const { channels: C, height: H, width: W, maps: M, k: K, outHeight: OH, outWidth: OW } = d;
  const image = C * H * W;
  const planeLen = OH * OW;
  const packedLen = packedLength(M, C, K);
  const biasLen = Math.ceil(M / 4) * 4 + 4;
  // The last tile of a row reads up to 8 + K floats past the row.
  const slack = 8 + K;
  // One image's planes (and a float for alignment) after the band's images.
  const fixed = packedLen + biasLen + slack + M * planeLen + 1;
  const bandImages = Math.max(1, Math.floor((bandBytes / 4 - fixed) / image));
  const wOff = 0;
  const bOff = packedLen;
  const inOff = bOff + biasLen;
  let packedFrom = -1;
  for (let plane = planeStart; plane < planeEnd; ) {
    const b0 = (plane / M) | 0;
    const b1 = Math.min(Math.floor((planeEnd - 1) / M) + 1, b0 + bandImages);
    const bandEnd = Math.min(planeEnd, b1 * M);
    // V8 copies between a SharedArrayBuffer and module memory several times slower when the two
    // addresses differ by 4 mod 8 bytes: the images and the planes sit one float later where that
    // lines them up with the shared arrays.
    const at = inOff + ((inOff - input.byteOffset / 4 - b0 * image) & 1);
    const outAt = at + (b1 - b0) * image + slack;
    w.reserve((outAt + 1 + M * planeLen) * 4 + 16);
    const m = w.f32;
    copyInto(m, input.subarray(b0 * image, b1 * image), at);
    m.fill(0, at + (b1 - b0) * image, outAt + 1);
    for (let b = b0; b < b1; b++) {
      const q0 = Math.max(plane, b * M);
      const q1 = Math.min(bandEnd, (b + 1) * M);
      const m0 = q0 - b * M;
      // Packed for maps from m0 on; a full image (m0 = 0) reuses the packing of the last one.
      if (m0 !== packedFrom) {
        packWeights(m, wOff, weights, C, K, m0, M);
        m.fill(0, bOff, bOff + biasLen);
        if (bias !== undefined) m.set(bias.subarray(m0), bOff);
        packedFrom = m0;
      }
      const outOff = outAt + ((outAt - out.byteOffset / 4 - q0 * planeLen) & 1);
      w.k.convLayer((at + (b - b0) * image) * 4, C, H, W, wOff * 4, q1 - q0, K, bOff * 4, relu ? 1 : 0, outOff * 4);
      copyInto(out, m.subarray(outOff, outOff + (q1 - q0) * planeLen), q0 * planeLen);
    }
    plane = bandEnd;
  }
}
