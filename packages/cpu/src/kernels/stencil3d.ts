import { copyInto } from '@kernelkit/core';
import type { StencilBoundary } from '@kernelkit/ops';
import { BAND_BYTES, type WasmKernels } from '../wasm/runtime.js';

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

const sameKind = (a: Grid, b: Grid): boolean => a instanceof Float32Array === b instanceof Float32Array;

/**
 * `stencilStep` on the WebAssembly SIMD kernel (f32x4 or f64x2 along x): planes
 * [zStart − 1, zEnd + 1) are copied in, planes [zStart, zEnd) computed and copied out, in bands
 * of at most `bandBytes` of linear memory (one plane at least). One copy in (plus two halo planes per band) and one
 * copy out per step; `stencilRunSimd` keeps the grid in linear memory across steps instead.
 */
export function stencilStepSimd(
  w: WasmKernels,
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
  bandBytes = BAND_BYTES,
): void {
  if (!sameKind(src, dst)) throw new TypeError('stencilStepSimd: src and dst must have one element type');
  const plane = nx * ny;
  const bytes = src.BYTES_PER_ELEMENT;
  const bandPlanes = Math.max(1, Math.floor(bandBytes / bytes / plane / 2) - 2);
  for (let z0 = zStart; z0 < zEnd; ) {
    const z1 = Math.min(zEnd, z0 + bandPlanes);
    const lo = Math.max(0, z0 - 1);
    const hi = Math.min(nz, z1 + 1);
    const cells = (hi - lo) * plane;
    w.reserve(2 * cells * bytes);
    const m = bytes === 4 ? w.f32 : w.f64;
    copyInto(m, src.subarray(lo * plane, hi * plane));
    // Addresses as if the grid started `lo` planes earlier, so the kernel's z is the grid's z
    // (its boundary planes stay where they are); wasm address arithmetic wraps mod 2^32.
    const shift = lo * plane * bytes;
    const kernel = bytes === 4 ? w.k.stencilF32 : w.k.stencilF64;
    kernel(0 - shift, cells * bytes - shift, nx, ny, nz, c0, c1, boundary === 'copy' ? 1 : 0, z0, z1);
    copyInto(dst, m.subarray(cells + (z0 - lo) * plane, cells + (z1 - lo) * plane), z0 * plane);
    z0 = z1;
  }
}

/**
 * All `steps` of the stencil with both ping-pong grids held in linear memory: one copy in, one
 * copy out. Returns false (and does nothing) when the two grids would not fit in 4 · `BAND_BYTES`
 * of memory; callers then step with `stencilStepSimd`. `pause`, called between steps, may return
 * a promise to wait for (the caller's chance to yield and check for an abort).
 */
export async function stencilRunSimd(
  w: WasmKernels,
  input: Grid,
  out: Grid,
  p: { readonly nx: number; readonly ny: number; readonly nz: number; readonly steps: number; readonly c0: number; readonly c1: number; readonly boundary: StencilBoundary },
  pause?: () => Promise<void> | undefined,
): Promise<boolean> {
  const cells = p.nx * p.ny * p.nz;
  const bytes = input.BYTES_PER_ELEMENT;
  if (2 * cells * bytes > 4 * BAND_BYTES) return false;
  w.reserve(2 * cells * bytes);
  copyInto(bytes === 4 ? w.f32 : w.f64, input);
  const kernel = bytes === 4 ? w.k.stencilF32 : w.k.stencilF64;
  const copy = p.boundary === 'copy' ? 1 : 0;
  for (let t = 0; t < p.steps; t++) {
    kernel((t % 2) * cells * bytes, ((t + 1) % 2) * cells * bytes, p.nx, p.ny, p.nz, p.c0, p.c1, copy, 0, p.nz);
    const wait = pause?.();
    if (wait !== undefined) await wait;
  }
  const at = (p.steps % 2) * cells;
  copyInto(out, (bytes === 4 ? w.f32 : w.f64).subarray(at, at + cells));
  return true;
}
