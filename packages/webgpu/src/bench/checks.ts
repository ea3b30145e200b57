import {
  conv2dTolerance,
  convLayerTolerance,
  stencil3dTolerance,
} from '@kernelkit/ops/testing/data';
import type { Conv2dArgs, ConvLayerArgs, Stencil3dArgs } from '@kernelkit/ops';
import { Rng } from '@kernelkit/ops';

/**
 * Sampled checks for the bench's huge outputs: a few thousand outputs recomputed in f64 and held
 * to the conformance suite's tolerances. Returns undefined when all samples conform.
 */
export function checkConv2dSampled(a: Conv2dArgs, out: Float32Array, samples = 2000): string | undefined {
  const { height: h, width: w, k } = a;
  const batch = a.batch ?? 1;
  const r = (k - 1) / 2;
  const tol = conv2dTolerance(k);
  const rng = new Rng(99);
  for (let s = 0; s < samples; s++) {
    const b = rng.int(0, batch - 1), y = rng.int(0, h - 1), x = rng.int(0, w - 1);
    let v = 0, mag = 0;
    for (let i = -r; i <= r; i++) for (let j = -r; j <= r; j++) {
      const yy = y + i, xx = x + j;
      if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
      const t = a.input[(b * h + yy) * w + xx]! * a.filter[(i + r) * k + j + r]!;
      v += t; mag += Math.abs(t);
    }
    const got = out[(b * h + y) * w + x]!;
    if (!(Math.abs(got - v) <= tol.factor * tol.u * mag + tol.tiny)) return `conv2d [${b},${y},${x}] got ${got}, expected ${v}`;
  }
  return undefined;
}

export function checkConvLayerSampled(a: ConvLayerArgs, out: Float32Array, samples = 2000): string | undefined {
  const { batch, channels: C, height: H, width: W, maps: M, k: K } = a;
  const OH = H - K + 1, OW = W - K + 1;
  const tol = convLayerTolerance(C, K);
  const rng = new Rng(7);
  for (let s = 0; s < samples; s++) {
    const b = rng.int(0, batch - 1), m = rng.int(0, M - 1), y = rng.int(0, OH - 1), x = rng.int(0, OW - 1);
    let v = 0, mag = 0;
    for (let c = 0; c < C; c++) for (let p = 0; p < K; p++) for (let q = 0; q < K; q++) {
      const t = a.input[((b * C + c) * H + y + p) * W + x + q]! * a.weights[((m * C + c) * K + p) * K + q]!;
      v += t; mag += Math.abs(t);
    }
    const got = out[((b * M + m) * OH + y) * OW + x]!;
    if (!(Math.abs(got - v) <= tol.factor * tol.u * mag + tol.tiny)) return `convLayer [${b},${m},${y},${x}] got ${got}, expected ${v}`;
  }
  return undefined;
}

/**
 * A cell's value after s steps depends only on cells within distance s, so each sample reruns
 * the f64 stencil on the (2s+1)³ box around it, with the real grid's boundary rule.
 */
export function checkStencilSampled(a: Stencil3dArgs, c0: number, c1: number, out: Float32Array, samples = 6): string | undefined {
  const nx = a.nx, ny = a.ny ?? nx, nz = a.nz ?? nx, steps = a.steps ?? 1;
  const tol = stencil3dTolerance(steps, 'f32');
  const rng = new Rng(5);
  for (let s = 0; s < samples; s++) {
    const cx = rng.int(0, nx - 1), cy = rng.int(0, ny - 1), cz = rng.int(0, nz - 1);
    const lo = [Math.max(0, cx - steps), Math.max(0, cy - steps), Math.max(0, cz - steps)] as const;
    const hi = [Math.min(nx - 1, cx + steps), Math.min(ny - 1, cy + steps), Math.min(nz - 1, cz + steps)] as const;
    const bx = hi[0] - lo[0] + 1, by = hi[1] - lo[1] + 1, bz = hi[2] - lo[2] + 1;
    let cur = new Float64Array(bx * by * bz), mcur = new Float64Array(cur.length);
    for (let z = 0; z < bz; z++) for (let y = 0; y < by; y++) for (let x = 0; x < bx; x++) {
      const v = a.input[((z + lo[2]) * ny + y + lo[1]) * nx + x + lo[0]]!;
      cur[(z * by + y) * bx + x] = v; mcur[(z * by + y) * bx + x] = Math.abs(v);
    }
    for (let t = 0; t < steps; t++) {
      const next = cur.slice(), mnext = mcur.slice();
      for (let z = 0; z < bz; z++) for (let y = 0; y < by; y++) for (let x = 0; x < bx; x++) {
        const gx = x + lo[0], gy = y + lo[1], gz = z + lo[2];
        const i = (z * by + y) * bx + x;
        const interior = gx > 0 && gy > 0 && gz > 0 && gx < nx - 1 && gy < ny - 1 && gz < nz - 1;
        if (!interior) { if (a.boundary !== 'copy') { next[i] = 0; mnext[i] = 0; } continue; }
        // Interior cells on the box's own edge go stale; staleness moves one cell per step, so
        // after `steps` steps it has not reached the centre.
        if (x === 0 || y === 0 || z === 0 || x === bx - 1 || y === by - 1 || z === bz - 1) continue;
        const nb = cur[i - 1]! + cur[i + 1]! + cur[i - bx]! + cur[i + bx]! + cur[i - bx * by]! + cur[i + bx * by]!;
        const mb = mcur[i - 1]! + mcur[i + 1]! + mcur[i - bx]! + mcur[i + bx]! + mcur[i - bx * by]! + mcur[i + bx * by]!;
        next[i] = c0 * cur[i]! + c1 * nb; mnext[i] = Math.abs(c0) * mcur[i]! + Math.abs(c1) * mb;
      }
      cur = next; mcur = mnext;
    }
    const ci = ((cz - lo[2]) * by + cy - lo[1]) * bx + cx - lo[0];
    const want = cur[ci]!, got = out[(cz * ny + cy) * nx + cx]!;
    if (!(Math.abs(got - want) <= tol.factor * tol.u * mcur[ci]! + tol.tiny)) return `stencil [${cz},${cy},${cx}] got ${got}, expected ${want}`;
  }
  return undefined;
}
