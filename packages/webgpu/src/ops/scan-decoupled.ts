import type { GpuDevice } from '../runtime/device.js';
import { packParams } from '../runtime/params.js';
import { BUF } from '../runtime/usage.js';
import { type DecoupledConfig, tileElements } from './scan-decoupled.wgsl.js';

export type { DecoupledConfig } from './scan-decoupled.wgsl.js';
export { decoupledVecScan, tileElements } from './scan-decoupled.wgsl.js';

/**
 * The two forms the backend offers, each the fastest of its kind in a steady-state sweep on the
 * H100 (400M f32 resident; benchmarks/results/webgpu-steady-h100-2026-11-22.md and
 * webgpu-steady-sweep-h100-2026-11-22.log):
 * - 'wg' (variant decoupled): in-subgroup scans in workgroup memory over software subgroups of
 *   32 (what Dawn reports on NVIDIA), 256 invocations × 4 vec4 (tile 4096), tiles by ticket.
 * - 'subgroups' (variant decoupled-subgroups): WGSL subgroup builtins, 512 invocations × 4 vec4
 *   (tile 8192), tiles by workgroup id. Without the 'subgroups' feature, the 'wg' form.
 * Window 32: one look-back step sees 32 predecessors (a window of 8 did no better). Spin 1024 steps (each
 * a few L2 round trips) before the fallback: far longer than a running predecessor needs, so the
 * fallback only runs for one that is not making progress.
 */
export function decoupledConfig(gpu: Pick<GpuDevice, 'subgroups'>, form: 'wg' | 'subgroups'): DecoupledConfig {
  if (form === 'subgroups' && gpu.subgroups) return { vecs: 4, wg: 512, window: 32, spin: 1024, subgroups: 'native', ticket: false };
  return { vecs: 4, window: 32, spin: 1024, subgroups: 32 };
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
export async function uploadPadded(gpu: GpuDevice, data: ArrayBufferView, signal?: AbortSignal): Promise<GPUBuffer> {
  const buf = gpu.pool.acquire(paddedBytes(data.byteLength / 4), BUF.STORAGE | BUF.COPY_DST | BUF.COPY_SRC);
  try {
    await gpu.write(buf, 0, data, signal);
  } catch (e) {
    gpu.release(buf);
    throw e;
  }
  return buf;
}
