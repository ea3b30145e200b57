/**
 * The ECE408 network's forward pass: 86×86 input → Conv(1→4, K=7) + bias + ReLU → MaxPool 2×2
 * → Conv(4→16, K=7) + bias + ReLU → MaxPool 4×4 ceil (34→9) → FC 1296→32 + ReLU → FC 32→10.
 * Both conv layers go through kernelkit's `convLayer` on the given backend, with bias and ReLU
 * fused. On WebGPU (when @kernelkit/webgpu exports `maxPoolDevice`) the layers are chained on
 * the GPU: conv1's output stays there as DeviceArrays through pool 1, conv2 and pool 2, and
 * only the pooled 16×9×9 per image is read back. Otherwise both pools run here on the CPU. The
 * FC layers and argmax always run here; everything outside the conv layers is timed separately.
 */
import type { Backend, DeviceArray } from '@kernelkit/ops';
import { now } from '@kernelkit/core';
import { loadDevicePool, type DevicePool } from './backends.js';
import { argmaxRows, dense, maxPoolCeil, pooledSize } from './layers.js';
import type { ModelWeights } from './model-format.js';
import { INPUT_SIZE } from './resize.js';

export const K = 7;
export const CONV1_MAPS = 4;
export const CONV2_MAPS = 16;
export const POOL1 = 2;
export const POOL2 = 4;
/** 86 − 6 = 80 → pool 2 → 40 → −6 = 34 → pool 4 ceil → 9. */
export const CONV1_OUT = INPUT_SIZE - K + 1;
export const POOL1_OUT = CONV1_OUT / POOL1;
export const CONV2_OUT = POOL1_OUT - K + 1;
export const POOL2_OUT = pooledSize(CONV2_OUT, POOL2);
export const FLAT = CONV2_MAPS * POOL2_OUT * POOL2_OUT;
export const HIDDEN = 32;
export const CLASSES = 10;

/** Only the part of a backend the network needs, so tests can pass anything with a `convLayer` (`name` picks the GPU chain). */
export type ConvLayerBackend = Pick<Backend, 'convLayer'> & { readonly name?: string };

export interface LayerTime {
  readonly ms: number;
  /** `kernel` when the backend reported `kernelMs`, else the call's end-to-end `totalMs`. */
  readonly kind: 'kernel' | 'end-to-end';
}

export interface ForwardResult {
  /** `[batch][10]` pre-softmax scores. */
  readonly logits: Float32Array;
  readonly labels: Uint8Array;
  readonly conv1: LayerTime;
  readonly conv2: LayerTime;
  /** Pooling + FC + argmax on the CPU; FC + argmax only when the layers were chained on the GPU. */
  readonly cpuMs: number;
  /** Present when the layers were chained on the GPU: both pools there and the one readback, end-to-end ms. */
  readonly gpuChain?: { readonly poolMs: number; readonly readbackMs: number };
  /** How the layers were connected, for the report (what read back, and why). */
  readonly chain: string;
  readonly variant: string;
  readonly backend: string;
}

export interface ForwardOptions {
  /**
   * Max pooling on the device for chaining: default (undefined) `maxPoolDevice` of
   * @kernelkit/webgpu when the backend is webgpu and the package exports it; `false`: pool on
   * the CPU (every conv output read back).
   */
  readonly devicePool?: DevicePool | false;
}

function layerTime(t: { totalMs: number; kernelMs?: number } | undefined, fallbackMs: number): LayerTime {
  if (t?.kernelMs !== undefined) return { ms: t.kernelMs, kind: 'kernel' };
  return { ms: t?.totalMs ?? fallbackMs, kind: 'end-to-end' };
}

/** Why the layers cannot be chained on this backend, or the pool to chain them with. */
async function pickPool(backend: ConvLayerBackend, o: ForwardOptions): Promise<DevicePool | string> {
  if (o.devicePool === false) return 'not chained (turned off): both conv outputs read back, pools on the CPU';
  if (o.devicePool !== undefined) return o.devicePool;
  if (backend.name !== 'webgpu') return `not chained: ${backend.name ?? 'this backend'} has no device memory; pools on the CPU`;
  const pool = await loadDevicePool();
  return pool ?? 'not chained: @kernelkit/webgpu does not export maxPoolDevice; both conv outputs read back, pools on the CPU';
}

/** Runs the network on `batch` preprocessed images (`[batch][86][86]`, from `resizeBilinear`). */
export async function forward(backend: ConvLayerBackend, w: ModelWeights, input: Float32Array, batch: number, variant?: string, options: ForwardOptions = {}): Promise<ForwardResult> {
  const pool = await pickPool(backend, options);
  if (typeof pool !== 'string') return forwardChained(backend, w, input, batch, variant, pool);
  const opts = variant === undefined ? { timing: true } : { timing: true, variant };
  let t0 = now();
  const c1 = await backend.convLayer(conv1Args(w, input, batch), opts);
  const conv1 = layerTime(c1.timing, now() - t0);

  t0 = now();
  const p1 = maxPoolCeil(c1.data, batch * CONV1_MAPS, CONV1_OUT, CONV1_OUT, POOL1);
  let cpuMs = now() - t0;

  t0 = now();
  const c2 = await backend.convLayer(conv2Args(w, p1, batch), opts);
  const conv2 = layerTime(c2.timing, now() - t0);

  t0 = now();
  const p2 = maxPoolCeil(c2.data, batch * CONV2_MAPS, CONV2_OUT, CONV2_OUT, POOL2);
  const { logits, labels } = classify(w, p2, batch);
  cpuMs += now() - t0;

  return { logits, labels, conv1, conv2, cpuMs, chain: pool, variant: c2.variant, backend: c2.backend };
}

const conv1Args = (w: ModelWeights, input: Float32Array | DeviceArray<Float32Array>, batch: number) =>
  ({ input, weights: w['conv1.weight'], bias: w['conv1.bias'], relu: true, batch, channels: 1, height: INPUT_SIZE, width: INPUT_SIZE, maps: CONV1_MAPS, k: K }) as const;

const conv2Args = (w: ModelWeights, input: Float32Array | DeviceArray<Float32Array>, batch: number) =>
  ({ input, weights: w['conv2.weight'], bias: w['conv2.bias'], relu: true, batch, channels: CONV1_MAPS, height: POOL1_OUT, width: POOL1_OUT, maps: CONV2_MAPS, k: K }) as const;

/** FC → ReLU → FC → argmax on the CPU. */
function classify(w: ModelWeights, p2: Float32Array, batch: number): { logits: Float32Array; labels: Uint8Array } {
  // [b][16][9][9] flattened in exactly this order is fc1's input index c·81 + y·9 + x.
  const h = dense(p2, batch, FLAT, w['fc1.weight'], w['fc1.bias'], HIDDEN, true);
  const logits = dense(h, batch, HIDDEN, w['fc2.weight'], w['fc2.bias'], CLASSES, false);
  return { logits, labels: argmaxRows(logits, batch, CLASSES) };
}

/**
 * conv1 → pool 1 → conv2 → pool 2 as DeviceArrays, one readback at the end. Each handle is
 * disposed as soon as the next step has taken it (a call takes its input when made), and all of
 * them on any failure.
 */
async function forwardChained(backend: ConvLayerBackend, w: ModelWeights, input: Float32Array, batch: number, variant: string | undefined, pool: DevicePool): Promise<ForwardResult> {
  const opts = variant === undefined ? { timing: true, output: 'device' as const } : { timing: true, output: 'device' as const, variant };
  const live = new Set<DeviceArray<Float32Array>>();
  const keep = (h: DeviceArray<Float32Array>): DeviceArray<Float32Array> => (live.add(h), h);
  const drop = (h: DeviceArray<Float32Array>): void => {
    live.delete(h);
    h.dispose();
  };
  try {
    let t0 = now();
    const c1 = await backend.convLayer(conv1Args(w, input, batch), opts);
    const h1 = keep(c1.data);
    const conv1 = layerTime(c1.timing, now() - t0);

    t0 = now();
    const p1 = keep(await pool(h1, { planes: batch * CONV1_MAPS, height: CONV1_OUT, width: CONV1_OUT, window: POOL1 }));
    drop(h1);
    let poolMs = now() - t0;

    t0 = now();
    const c2 = await backend.convLayer(conv2Args(w, p1, batch), opts);
    const h2 = keep(c2.data);
    drop(p1);
    const conv2 = layerTime(c2.timing, now() - t0);

    t0 = now();
    const p2 = keep(await pool(h2, { planes: batch * CONV2_MAPS, height: CONV2_OUT, width: CONV2_OUT, window: POOL2 }));
    drop(h2);
    poolMs += now() - t0;

    t0 = now();
    const pooled = await p2.read();
    drop(p2);
    const readbackMs = now() - t0;

    t0 = now();
    const { logits, labels } = classify(w, pooled, batch);
    const cpuMs = now() - t0;
    const chain = `chained on the GPU: conv1 → pool → conv2 → pool as DeviceArrays; read back ${CONV2_MAPS}×${POOL2_OUT}×${POOL2_OUT} per image`;
    return { logits, labels, conv1, conv2, cpuMs, gpuChain: { poolMs, readbackMs }, chain, variant: c2.variant, backend: c2.backend };
  } finally {
    for (const h of live) h.dispose();
  }
}
