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
