/**
 * The network's CPU-side layers (pooling, fully connected, softmax), plain TypeScript. They are
 * small next to the two conv layers, which run on a kernelkit backend (src/network.ts).
 */

/**
 * Max pooling with a `p×p` window and stride `p`, ceil mode: the last window along an axis may
 * hang over the edge and then covers only the pixels that exist (34 → 9 for p = 4, the last
 * window holding rows 32..33). `input` is `[planes][h][w]`.
 */
export function maxPoolCeil(input: Float32Array, planes: number, h: number, w: number, p: number): Float32Array {
  const oh = Math.ceil(h / p);
  const ow = Math.ceil(w / p);
  const out = new Float32Array(planes * oh * ow);
  for (let n = 0; n < planes; n++) {
    const src = n * h * w;
    for (let y = 0; y < oh; y++) {
      const y1 = Math.min(y * p + p, h);
      for (let x = 0; x < ow; x++) {
        const x1 = Math.min(x * p + p, w);
        let m = -Infinity;
        for (let yy = y * p; yy < y1; yy++) {
          for (let xx = x * p; xx < x1; xx++) {
            const v = input[src + yy * w + xx] ?? -Infinity;
            if (v > m) m = v;
          }
        }
        out[(n * oh + y) * ow + x] = m;
      }
    }
  }
  return out;
}

/** Output side of `maxPoolCeil`. */
export const pooledSize = (n: number, p: number): number => Math.ceil(n / p);

/**
 * Fully connected: `out[b][o] = bias[o] + Σ_i in[b][i] · wt[o][i]`, optional ReLU. Accumulates in
 * f64 so the result does not depend on summation order beyond one final rounding.
 */
export function dense(input: Float32Array, batch: number, inputs: number, weights: Float32Array, bias: Float32Array, outputs: number, relu: boolean): Float32Array {
  const out = new Float32Array(batch * outputs);
  for (let b = 0; b < batch; b++) {
    const row = b * inputs;
    for (let o = 0; o < outputs; o++) {
      const wrow = o * inputs;
      let s = bias[o] ?? 0;
      for (let i = 0; i < inputs; i++) s += (input[row + i] ?? 0) * (weights[wrow + i] ?? 0);
      out[b * outputs + o] = relu && !(s > 0) ? 0 : s;
    }
  }
  return out;
}

/** Index of the largest logit per row (first one on ties; softmax is monotone, so it is not needed to pick a class). */
export function argmaxRows(logits: Float32Array, batch: number, classes: number): Uint8Array {
  const out = new Uint8Array(batch);
  for (let b = 0; b < batch; b++) {
    let best = 0;
    let bestV = -Infinity;
    for (let c = 0; c < classes; c++) {
      const v = logits[b * classes + c] ?? -Infinity;
      if (v > bestV) {
        bestV = v;
        best = c;
      }
    }
    out[b] = best;
  }
  return out;
}

/** Row-wise softmax, for callers that want probabilities rather than labels. */
export function softmaxRows(logits: Float32Array, batch: number, classes: number): Float32Array {
  const out = new Float32Array(logits.length);
  for (let b = 0; b < batch; b++) {
    let max = -Infinity;
    for (let c = 0; c < classes; c++) max = Math.max(max, logits[b * classes + c] ?? -Infinity);
    let sum = 0;
    for (let c = 0; c < classes; c++) sum += Math.exp((logits[b * classes + c] ?? 0) - max);
    for (let c = 0; c < classes; c++) out[b * classes + c] = Math.exp((logits[b * classes + c] ?? 0) - max) / sum;
  }
  return out;
}
