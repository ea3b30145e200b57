import { assertIndices, type SampledValue } from '../common/sample.js';
import { allowedError, convLayerTolerance } from '../testing/tolerance.js';
import { convLayerOutputLength } from './shape.js';
import type { ConvLayerProblem } from './types.js';

/** convLayerReference at single outputs (`[b][m][h][w]` flat indices), summed in the same order. */
export function convLayerSample(p: ConvLayerProblem, indices: readonly number[]): SampledValue[] {
  assertIndices(indices, convLayerOutputLength(p));
  const { channels: C, height: H, width: W, maps: M, k: K, outHeight: OH, outWidth: OW, input, weights, bias } = p;
  const tol = convLayerTolerance(C, K);
  return indices.map((index) => {
    const w = index % OW;
    const h = Math.floor(index / OW) % OH;
    const m = Math.floor(index / (OW * OH)) % M;
    const b = Math.floor(index / (OW * OH * M));
    let value = 0;
    let mag = 0;
    for (let c = 0; c < C; c++) {
      for (let pp = 0; pp < K; pp++) {
        for (let q = 0; q < K; q++) {
          const t = input[((b * C + c) * H + h + pp) * W + w + q]! * weights[((m * C + c) * K + pp) * K + q]!;
          value += t;
          mag += Math.abs(t);
        }
      }
    }
    if (bias !== undefined) {
      value += bias[m]!;
      mag += Math.abs(bias[m]!);
    }
    // As in the reference: ReLU is monotone and 1-Lipschitz, so the bound on the sum still holds.
    if (p.relu) value = value > 0 ? value : value < 0 || value === 0 ? 0 : value;
    return { index, value, bound: allowedError(tol, mag) };
  });
}
