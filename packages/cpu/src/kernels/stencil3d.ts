import type { StencilBoundary } from '@kernelkit/ops';

type Grid = Float32Array | Float64Array;

/**
 * One Jacobi step of the 7-point stencil over z-planes [zStart, zEnd): reads `src`, writes
 * `dst`. Interior x runs are branch-free; boundary cells are written by the policy.
 */
export function stencilStep(
  src: Grid,
  dst: Grid,
  nx: number,
  ny: number,
  nz: number,
  c0: number,
  c1: number,
  boundary: StencilBoundary,
  zStart: number,
  zEnd: number,
): void {
  const plane = nx * ny;
  const copy = boundary === 'copy';
  for (let z = zStart; z < zEnd; z++) {
    const zOff = z * plane;
    if (z === 0 || z === nz - 1 || ny < 3 || nx < 3) {
      if (copy) dst.set(src.subarray(zOff, zOff + plane), zOff);
      else dst.fill(0, zOff, zOff + plane);
      continue;
    }
    // Rows y = 0 and y = ny-1 are boundary.
    for (const y of [0, ny - 1]) {
      const o = zOff + y * nx;
      if (copy) dst.set(src.subarray(o, o + nx), o);
      else dst.fill(0, o, o + nx);
    }
    for (let y = 1; y < ny - 1; y++) {
      const row = zOff + y * nx;
      dst[row] = copy ? src[row]! : 0;
      dst[row + nx - 1] = copy ? src[row + nx - 1]! : 0;
      for (let i = row + 1, end = row + nx - 1; i < end; i++) {
        dst[i] = c0 * src[i]! + c1 * (src[i - 1]! + src[i + 1]! + src[i - nx]! + src[i + nx]! + src[i - plane]! + src[i + plane]!);
      }
    }
  }
}
