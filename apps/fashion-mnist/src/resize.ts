/**
 * The one image filter the app uses, shared by training (src/train.ts) and inference
 * (src/network.ts), so the model sees exactly the pixels at test time it saw while learning.
 *
 * Filter: bilinear interpolation with align-corners semantics — output pixel (y, x) samples the
 * source at (y·(inH−1)/(outH−1), x·(inW−1)/(outW−1)), so the four corner pixels map onto each
 * other exactly and no sample reads outside the source image. Pixels are scaled from 0..255 to
 * 0..1 in the same pass.
 */

/** The ECE408 network's input side: the 28×28 images are upsampled to 86×86. */
export const INPUT_SIZE = 86;
/** The Fashion-MNIST image side the model was trained on; data of another size is refused, not resized to it. */
export const IMAGE_SIZE = 28;
/** readIdxPair's `imageSize` for data the model can classify. */
export const MODEL_IMAGE = { rows: IMAGE_SIZE, cols: IMAGE_SIZE } as const;

interface AxisTable {
  readonly lo: Int32Array;
  readonly hi: Int32Array;
  readonly frac: Float32Array;
}

/** Per output coordinate: the two source coordinates it blends and the weight of the upper one. */
function axisTable(inSize: number, outSize: number): AxisTable {
  const lo = new Int32Array(outSize);
  const hi = new Int32Array(outSize);
  const frac = new Float32Array(outSize);
  const scale = outSize > 1 ? (inSize - 1) / (outSize - 1) : 0;
  for (let i = 0; i < outSize; i++) {
    const s = i * scale;
    const l = Math.min(Math.floor(s), inSize - 1);
    lo[i] = l;
    hi[i] = Math.min(l + 1, inSize - 1);
    frac[i] = s - l;
  }
  return { lo, hi, frac };
}

export interface ResizeArgs {
  /** `count` images of `inH × inW` bytes, row-major. */
  readonly pixels: Uint8Array;
  /** First image to resize. */
  readonly start: number;
  readonly count: number;
  readonly inH: number;
  readonly inW: number;
  readonly outH: number;
  readonly outW: number;
}

/**
 * Resizes `count` images starting at `start` into `out` (`count × outH × outW` f32, values 0..1).
 * With one channel the result is both NCHW (kernelkit) and NHWC (tfjs) layout.
 */
export function resizeBilinear(args: ResizeArgs, out?: Float32Array): Float32Array {
  const { pixels, start, count, inH, inW, outH, outW } = args;
  const dst = out ?? new Float32Array(count * outH * outW);
  if (dst.length < count * outH * outW) throw new RangeError(`resizeBilinear: out holds ${dst.length} values, needs ${count * outH * outW}`);
  if ((start + count) * inH * inW > pixels.length) throw new RangeError(`resizeBilinear: images ${start}..${start + count - 1} exceed the ${pixels.length}-byte pixel buffer`);
  const ty = axisTable(inH, outH);
  const tx = axisTable(inW, outW);
  const inv = 1 / 255;
  for (let n = 0; n < count; n++) {
    const src = (start + n) * inH * inW;
    const base = n * outH * outW;
    for (let y = 0; y < outH; y++) {
      const r0 = src + (ty.lo[y] ?? 0) * inW;
      const r1 = src + (ty.hi[y] ?? 0) * inW;
      const fy = ty.frac[y] ?? 0;
      for (let x = 0; x < outW; x++) {
        const c0 = tx.lo[x] ?? 0;
        const c1 = tx.hi[x] ?? 0;
        const fx = tx.frac[x] ?? 0;
        const top = (pixels[r0 + c0] ?? 0) * (1 - fx) + (pixels[r0 + c1] ?? 0) * fx;
        const bottom = (pixels[r1 + c0] ?? 0) * (1 - fx) + (pixels[r1 + c1] ?? 0) * fx;
        dst[base + y * outW + x] = (top * (1 - fy) + bottom * fy) * inv;
      }
    }
  }
  return dst;
}
