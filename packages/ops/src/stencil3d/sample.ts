import { assertIndices, type SampledValue } from '../common/sample.js';
import { allowedError, stencil3dTolerance } from '../testing/tolerance.js';
import { stencil3dOutputLength } from './shape.js';
import type { Stencil3dProblem } from './types.js';

/**
 * stencil3dReference at single cells (`[z][y][x]` flat indices). A cell after s steps depends
 * only on cells within s of it, so each sample runs the f64 stencil on the box of radius `steps`
 * around it (clipped to the grid, with the grid's boundary rule): (2·steps+1)³ cells per step.
 */
export function stencil3dSample(p: Stencil3dProblem, indices: readonly number[]): SampledValue[] {
  assertIndices(indices, stencil3dOutputLength(p));
  const { nx, ny, nz, steps, boundary, c0, c1 } = p;
  const tol = stencil3dTolerance(steps, p.input instanceof Float64Array ? 'f64' : 'f32');
  const a0 = Math.abs(c0);
  const a1 = Math.abs(c1);
  return indices.map((index) => {
    const cx = index % nx;
    const cy = Math.floor(index / nx) % ny;
    const cz = Math.floor(index / (nx * ny));
    const lx = Math.max(0, cx - steps), ly = Math.max(0, cy - steps), lz = Math.max(0, cz - steps);
    const bx = Math.min(nx - 1, cx + steps) - lx + 1, by = Math.min(ny - 1, cy + steps) - ly + 1, bz = Math.min(nz - 1, cz + steps) - lz + 1;
    let cur = new Float64Array(bx * by * bz);
    let mcur = new Float64Array(cur.length);
    for (let z = 0; z < bz; z++) {
      for (let y = 0; y < by; y++) {
        for (let x = 0; x < bx; x++) {
          const v = p.input[((z + lz) * ny + y + ly) * nx + x + lx]!;
          cur[(z * by + y) * bx + x] = v;
          mcur[(z * by + y) * bx + x] = Math.abs(v);
        }
      }
    }
    let next = new Float64Array(cur.length);
    let mnext = new Float64Array(cur.length);
    const sx = 1, sy = bx, sz = bx * by;
    for (let s = 0; s < steps; s++) {
      for (let z = 0; z < bz; z++) {
        for (let y = 0; y < by; y++) {
          for (let x = 0; x < bx; x++) {
            const i = (z * by + y) * bx + x;
            const gx = x + lx, gy = y + ly, gz = z + lz;
            if (!(gx > 0 && gx < nx - 1 && gy > 0 && gy < ny - 1 && gz > 0 && gz < nz - 1)) {
              next[i] = boundary === 'zero' ? 0 : cur[i]!;
              mnext[i] = boundary === 'zero' ? 0 : mcur[i]!;
              continue;
            }
            // Interior cells on the box's own faces lack neighbours and go stale; staleness moves
            // one cell per step, so after `steps` steps it has not reached the centre.
            if (x === 0 || y === 0 || z === 0 || x === bx - 1 || y === by - 1 || z === bz - 1) {
              next[i] = cur[i]!;
              mnext[i] = mcur[i]!;
              continue;
            }
            const nb = cur[i - sx]! + cur[i + sx]! + cur[i - sy]! + cur[i + sy]! + cur[i - sz]! + cur[i + sz]!;
            const mb = mcur[i - sx]! + mcur[i + sx]! + mcur[i - sy]! + mcur[i + sy]! + mcur[i - sz]! + mcur[i + sz]!;
            next[i] = c0 * cur[i]! + c1 * nb;
            mnext[i] = a0 * mcur[i]! + a1 * mb;
          }
        }
      }
      [cur, next] = [next, cur];
      [mcur, mnext] = [mnext, mcur];
    }
    const centre = ((cz - lz) * by + cy - ly) * bx + cx - lx;
    return { index, value: cur[centre]!, bound: allowedError(tol, mcur[centre]!) };
  });
}
