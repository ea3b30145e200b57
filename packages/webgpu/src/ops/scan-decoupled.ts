import type { GpuDevice } from '../runtime/device.js';
import { packParams } from '../runtime/params.js';
import { BUF } from '../runtime/usage.js';
import { type DecoupledConfig, tileElements } from './scan-decoupled.wgsl.js';

export type { DecoupledConfig } from './scan-decoupled.wgsl.js';
export { decoupledVecScan, tileElements } from './scan-decoupled.wgsl.js';

/**
 * The two forms the backend offers. 'wg': in-subgroup scans in workgroup memory over software
 * subgroups of 32 (what Dawn reports on NVIDIA), the default (variant decoupled), faster than the
 * subgroup form on the H100. 'subgroups': WGSL subgroup builtins when the device has the
 * 'subgroups' feature (variant decoupled-subgroups), else the 'wg' form.
 *
 * Tile: 256 invocations × 4 vec4 = 4096 elements (16 KiB in, 16 KiB out): on the H100 2 vec4
 * was slower and 8 no faster. Window 32: one look-back step sees 32 predecessors (8 measured
 * the same). Spin 1024 steps (each a few L2 round trips) before the fallback: far longer than a
 * running predecessor needs, so the fallback only runs for one that is not making progress.
 */
export function decoupledConfig(gpu: Pick<GpuDevice, 'subgroups'>, form: 'wg' | 'subgroups'): DecoupledConfig {
  return { vecs: 4, window: 32, spin: 1024, subgroups: form === 'subgroups' && gpu.subgroups ? 'native' : 32 };
}

/** Storage sizes: vec4 bindings need the buffer padded to 16 bytes. */
export const paddedBytes = (elements: number): number => Math.max(16, Math.ceil((elements * 4) / 16) * 16);

/** Look-back state: the tile ticket counter, then two atomics per tile. */
export const stateBytes = (tiles: number): number => Math.max(16, Math.ceil(((1 + 2 * tiles) * 4) / 16) * 16);

export const tilesFor = (n: number, cfg: DecoupledConfig): number => Math.ceil(n / tileElements(cfg));

/** The kernel's uniform block: n, n/4 rounded up, carry slots, inclusive flag, tile count. */
export function decoupledParams(n: number, cfg: DecoupledConfig, inSlot: number, outSlot: number, inclusive: boolean): ArrayBuffer {
  return packParams([
    ['u32', n],
    ['u32', Math.ceil(n / 4)],
    ['u32', inSlot],
    ['u32', outSlot],
    ['u32', inclusive ? 1 : 0],
    ['u32', tilesFor(n, cfg)],
    ['u32', 0],
    ['u32', 0],
  ]);
}

/** A 16-byte-padded pooled storage buffer holding `data` (the padding is whatever the pool left there: the kernels mask it). */
export function uploadPadded(gpu: GpuDevice, data: ArrayBufferView): GPUBuffer {
  const buf = gpu.pool.acquire(paddedBytes(data.byteLength / 4), BUF.STORAGE | BUF.COPY_DST | BUF.COPY_SRC);
  if (data.byteLength > 0) gpu.writeChunked(buf, 0, data);
  return buf;
}
