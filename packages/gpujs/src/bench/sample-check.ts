import { validateConv2d, validateConvLayer, validateStencil3d, verifyResult, type Conv2dArgs, type ConvLayerArgs, type ScanArgs, type Stencil3dArgs } from '@kernelkit/ops';

const U = 2 ** -24;
const SAMPLES = 4096;

/** Deterministic sample of output indices (plus the first and last). */
function sample(n: number): number[] {
  const idx = [0, n - 1];
  let s = 12345;
  for (let i = 0; i < SAMPLES; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    idx.push(s % n);
  }
  return idx;
}

function within(got: number, ref: number, mag: number, factor: number): boolean {
  return Math.abs(got - ref) <= factor * U * mag + 2 ** -120 * factor;
}

/**
 * Checks a bench result: the full f64 reference where it is affordable, else sampled outputs
 * against per-element f64 sums under the same tolerance formulas as the conformance suite.
 */
export function checkSample(op: 'conv2d' | 'stencil3d' | 'scan' | 'convLayer', args: unknown, data: Float32Array | Uint32Array | Int32Array): string | undefined {
  switch (op) {
    case 'conv2d': {
      const p = validateConv2d(args as Conv2dArgs);
      const r = (p.k - 1) / 2;
      for (const o of sample(data.length)) {
        const b = Math.floor(o / (p.height * p.width));
        const y = Math.floor(o / p.width) % p.height;
        const x = o % p.width;
        let s = 0;
        let m = 0;
        for (let i = -r; i <= r; i++)
          for (let j = -r; j <= r; j++) {
            const yy = y + i;
            const xx = x + j;
            if (yy < 0 || yy >= p.height || xx < 0 || xx >= p.width) continue;
            const t = p.input[(b * p.height + yy) * p.width + xx]! * p.filter[(i + r) * p.k + j + r]!;
            s += t;
            m += Math.abs(t);
          }
        if (!within(data[o]!, s, m, p.k * p.k + 2)) return `sample ${o}: got ${data[o]}, expected ${s}`;
      }
      return undefined;
    }
    case 'convLayer': {
      const p = validateConvLayer(args as ConvLayerArgs);
      for (const o of sample(data.length)) {
        const x = o % p.outWidth;
        const y = Math.floor(o / p.outWidth) % p.outHeight;
        const m = Math.floor(o / (p.outWidth * p.outHeight)) % p.maps;
        const b = Math.floor(o / (p.outWidth * p.outHeight * p.maps));
        let s = 0;
        let mag = 0;
        for (let c = 0; c < p.channels; c++)
          for (let i = 0; i < p.k; i++)
            for (let j = 0; j < p.k; j++) {
              const t = p.input[((b * p.channels + c) * p.height + y + i) * p.width + x + j]! * p.weights[((m * p.channels + c) * p.k + i) * p.k + j]!;
              s += t;
              mag += Math.abs(t);
            }
        if (!within(data[o]!, s, mag, p.channels * p.k * p.k + 3)) return `sample ${o}: got ${data[o]}, expected ${s}`;
      }
      return undefined;
    }
    case 'stencil3d': {
      const p = validateStencil3d(args as Stencil3dArgs);
      // The full reference costs cells × steps; affordable up to ~3e8 updates.
      if (p.nx * p.ny * p.nz * p.steps > 3e8) return 'ok (unchecked: reference too large; same kernel checked at N ≤ 256)';
      return verifyResult('stencil3d', args as Stencil3dArgs, data as Float32Array);
    }
    case 'scan': {
      const a = args as ScanArgs;
      const x = a.input;
      if (x instanceof Uint32Array) {
        let s = 0;
        for (let i = 0; i < x.length; i++) {
          s = (s + x[i]!) >>> 0;
          if (data[i] !== s) return `[${i}] got ${data[i]}, expected ${s}`;
        }
        return undefined;
      }
      let s = 0;
      let m = 0;
      const factor = Math.ceil(Math.log2(x.length + 1)) + Math.ceil(x.length / 64) + 4;
      for (let i = 0; i < x.length; i++) {
        s += x[i]!;
        m += Math.abs(x[i]!);
        if (!within(data[i]!, s, m, factor)) return `[${i}] got ${data[i]}, expected ${s}`;
      }
      return undefined;
    }
  }
}
