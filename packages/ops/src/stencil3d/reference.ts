import type { Stencil3dProblem } from './types.js';

/**
 * The f64 definition of the stencil. `abs: true` runs it on |u| with |c0|, |c1|, giving the
 * magnitude the conformance suite scales its rounding tolerance by.
 */
export function stencil3dReference(p: Stencil3dProblem, abs = false): Float64Array {
  const { nx, ny, nz, steps, boundary } = p;
  const c0 = abs ? Math.abs(p.c0) : p.c0;
  const c1 = abs ? Math.abs(p.c1) : p.c1;
  let cur = Float64Array.from(p.input, (v) => (abs ? Math.abs(v) : v));
  let next = new Float64Array(cur.length);
  const at = (a: Float64Array, x: number, y: number, z: number): number => a[(z * ny + y) * nx + x]!;
  for (let s = 0; s < steps; s++) {
    for (let z = 0; z < nz; z++) {
      for (let y = 0; y < ny; y++) {
        for (let x = 0; x < nx; x++) {
          const i = (z * ny + y) * nx + x;
          const interior = x > 0 && x < nx - 1 && y > 0 && y < ny - 1 && z > 0 && z < nz - 1;
          if (!interior) {
            next[i] = boundary === 'zero' ? 0 : cur[i]!;
            continue;
          }
          const nb =
            at(cur, x - 1, y, z) + at(cur, x + 1, y, z) + at(cur, x, y - 1, z) + at(cur, x, y + 1, z) + at(cur, x, y, z - 1) + at(cur, x, y, z + 1);
          next[i] = c0 * cur[i]! + c1 * nb;
        }
      }
    }
    [cur, next] = [next, cur];
  }
  return cur;
}
