/**
 * The claimed-units loop and the shared-memory conv tasks, as a worker runs them and as the
 * calling thread runs its own share of a call (`Units.runSharing`): the same code on every thread.
 * Imports only what a worker imports, so a worker starts as soon.
 */
import { copyInto } from '@kernelkit/core';
import { packedLength, type KernelExports } from '@kernelkit/cpu/range-kernels';
import { epochMs, STOPPED_MESSAGE, UNIT_NEXT, UNIT_STAGED, UNIT_STOP, UNIT_WAITING, type ClaimedUnits, type Conv2dModuleTask, type ConvLayerModuleTask, type Ref, type TaskTimes } from './protocol.js';

const f32 = (r: Ref): Float32Array => new Float32Array(r.buf, r.off, r.len);

/**
 * Claims units from the shared counter until none is left, running `run(start, end)` on each once
 * its input is staged, and marks each done (the main thread may copy its output at once).
 * `run` returns the part of its time spent copying output; the rest counts as kernel time.
 */
export function eachClaimedUnit(t: ClaimedUnits, run: (start: number, end: number, unit: number) => number | void): TaskTimes {
  const startedAt = epochMs();
  let units = 0;
  let waitMs = 0;
  let kernelMs = 0;
  let copyMs = 0;
  const ctrl = new Int32Array(t.ctrl);
  const count = t.bounds.length - 1;
  for (let u = Atomics.add(ctrl, UNIT_NEXT, 1); u < count; u = Atomics.add(ctrl, UNIT_NEXT, 1)) {
    if (Atomics.load(ctrl, UNIT_STAGED) <= u) {
      const w0 = performance.now();
      // Counted before the last look at UNIT_STAGED, so the main thread either sees us waiting
      // (and wakes us) or has already staged what that look finds.
      Atomics.add(ctrl, UNIT_WAITING, 1);
      for (let staged = Atomics.load(ctrl, UNIT_STAGED); staged <= u; staged = Atomics.load(ctrl, UNIT_STAGED)) {
        if (Atomics.load(ctrl, UNIT_STOP) !== 0) throw new Error(STOPPED_MESSAGE);
        Atomics.wait(ctrl, UNIT_STAGED, staged, 50);
      }
      Atomics.sub(ctrl, UNIT_WAITING, 1);
      waitMs += performance.now() - w0;
    }
    const r0 = performance.now();
    const copied = run(t.bounds[u]!, t.bounds[u + 1]!, u) ?? 0;
    kernelMs += performance.now() - r0 - copied;
    copyMs += copied;
    units++;
  }
  return { startedAt, endedAt: epochMs(), units, waitMs, kernelMs, copyMs };
}

/** Runs `copy` and returns how long it took. */
export function timedCopy(copy: () => void): number {
  const t0 = performance.now();
  copy();
  return performance.now() - t0;
}

/** A conv2d task on the shared-memory kernels: claims row bands and runs them on `k`, the instance over `t.memory`. */
export function conv2dModuleUnits(t: Conv2dModuleTask, k: KernelExports): TaskTimes {
  const m = new Float32Array(t.memory.memory.buffer);
  const out = t.out && f32(t.out);
  const { height: h, width: w } = t;
  return eachClaimedUnit(t, (r0, r1) => {
    for (let row = r0; row < r1; ) {
      const img = (row / h) | 0;
      const y = row - img * h;
      const n = Math.min(r1 - row, h - y);
      k.conv2d((t.images[img]! + y * t.stride) * 4, t.stride, t.filterAt * 4, t.k, (t.outAt + row * w) * 4, n, w);
      row += n;
    }
    return out === undefined ? 0 : timedCopy(() => copyInto(out, m.subarray(t.outAt + r0 * w, t.outAt + r1 * w), r0 * w));
  });
}

/**
 * Floats of output a convLayer module task computes before copying them into the result: few
 * enough that they are still in this core's cache when copied, as the cpu backend copies each
 * image's planes; enough that each copy is one memcpy (see `copyInto`).
 */
const COPY_CHUNK_FLOATS = 64 * 1024;

/** A convLayer task on the shared-memory kernels: claims blocks of planes and runs them on `k`, the instance over `t.memory`. */
export function convLayerModuleUnits(t: ConvLayerModuleTask, k: KernelExports): TaskTimes {
  const m = new Float32Array(t.memory.memory.buffer);
  const out = t.out && f32(t.out);
  const { channels: c, height: h, width: w, maps, k: taps, outHeight, outWidth } = t.dims;
  const image = c * h * w;
  const planeLen = outHeight * outWidth;
  const block = packedLength(4, c, taps);
  const chunkPlanes = Math.max(1, Math.floor(COPY_CHUNK_FLOATS / planeLen));
  return eachClaimedUnit(t, (q0, q1) => {
    let copyMs = 0;
    // Planes [from, q) are computed and not yet copied.
    let from = q0;
    for (let q = q0; q < q1; ) {
      const img = (q / maps) | 0;
      const m0 = q - img * maps;
      const n = Math.min(q1 - q, maps - m0);
      // Units start at multiples of 4 maps, where the packed weights of maps m0… begin.
      k.convLayer((t.inputAt + img * image) * 4, c, h, w, (t.weightsAt + (m0 / 4) * block) * 4, n, taps, (t.biasAt + m0) * 4, t.relu ? 1 : 0, (t.outAt + q * planeLen) * 4);
      q += n;
      if (out !== undefined && (q - from >= chunkPlanes || q === q1)) {
        const start = from;
        copyMs += timedCopy(() => copyInto(out, m.subarray(t.outAt + start * planeLen, t.outAt + q * planeLen), start * planeLen));
        from = q;
      }
    }
    return copyMs;
  });
}
