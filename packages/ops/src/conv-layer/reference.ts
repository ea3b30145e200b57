import type { ConvLayerProblem } from './types.js';

/** The f64 definition. `abs: true` gives Σ|terms| (+|bias|) to scale the rounding tolerance. */
export function convLayerReference(p: ConvLayerProblem, abs = false): Float64Array {
  const { batch, channels: C, height: H, width: W, maps: M, k: K, outHeight: OH, outWidth: OW, input, weights, bias } = p;
  const out = new Float64Array(batch * M * OH * OW);
  for (let b = 0; b < batch; b++) {
    for (let m = 0; m < M; m++) {
      for (let h = 0; h < OH; h++) {
        for (let w = 0; w < OW; w++) {
          let s = 0;
          for (let c = 0; c < C; c++) {
            for (let pp = 0; pp < K; pp++) {
              for (let q = 0; q < K; q++) {
                const t = input[((b * C + c) * H + h + pp) * W + w + q]! * weights[((m * C + c) * K + pp) * K + q]!;
                s += abs ? Math.abs(t) : t;
              }
            }
          }
          if (bias !== undefined) s += abs ? Math.abs(bias[m]!) : bias[m]!;
          // ReLU is monotone and 1-Lipschitz, so the abs bound still holds after it.
          if (p.relu && !abs) s = s > 0 ? s : s < 0 || s === 0 ? 0 : s;
          out[((b * M + m) * OH + h) * OW + w] = s;
        }
      }
    }
  }
  return out;
}
