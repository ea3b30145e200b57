/**
 * The ECE408 network's forward pass: 86×86 input → Conv(1→4, K=7) + bias + ReLU → MaxPool 2×2
 * → Conv(4→16, K=7) + bias + ReLU → MaxPool 4×4 ceil (34→9) → FC 1296→32 + ReLU → FC 32→10.
 * Both conv layers go through kernelkit's `convLayer` on the given backend, with bias and ReLU
 * fused; everything else runs here on the CPU and is timed separately.
 */
import type { Backend } from '@kernelkit/ops';
import { now } from '@kernelkit/core';
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

/** Only the part of a backend the network needs, so tests can pass anything with a `convLayer`. */
export type ConvLayerBackend = Pick<Backend, 'convLayer'>;

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
  /** Pooling + FC + argmax on the CPU. */
  readonly cpuMs: number;
  readonly variant: string;
  readonly backend: string;
}

function layerTime(t: { totalMs: number; kernelMs?: number } | undefined, fallbackMs: number): LayerTime {
  if (t?.kernelMs !== undefined) return { ms: t.kernelMs, kind: 'kernel' };
  return { ms: t?.totalMs ?? fallbackMs, kind: 'end-to-end' };
}

/** Runs the network on `batch` preprocessed images (`[batch][86][86]`, from `resizeBilinear`). */
export async function forward(backend: ConvLayerBackend, w: ModelWeights, input: Float32Array, batch: number, variant?: string): Promise<ForwardResult> {
  const opts = variant === undefined ? { timing: true } : { timing: true, variant };
  let t0 = now();
  const c1 = await backend.convLayer(
    { input, weights: w['conv1.weight'], bias: w['conv1.bias'], relu: true, batch, channels: 1, height: INPUT_SIZE, width: INPUT_SIZE, maps: CONV1_MAPS, k: K },
    opts,
  );
  const conv1 = layerTime(c1.timing, now() - t0);

  t0 = now();
  const p1 = maxPoolCeil(c1.data, batch * CONV1_MAPS, CONV1_OUT, CONV1_OUT, POOL1);
  let cpuMs = now() - t0;

  t0 = now();
  const c2 = await backend.convLayer(
    { input: p1, weights: w['conv2.weight'], bias: w['conv2.bias'], relu: true, batch, channels: CONV1_MAPS, height: POOL1_OUT, width: POOL1_OUT, maps: CONV2_MAPS, k: K },
    opts,
  );
  const conv2 = layerTime(c2.timing, now() - t0);

  t0 = now();
  // [b][16][9][9] flattened in exactly this order is fc1's input index c·81 + y·9 + x.
  const p2 = maxPoolCeil(c2.data, batch * CONV2_MAPS, CONV2_OUT, CONV2_OUT, POOL2);
  const h = dense(p2, batch, FLAT, w['fc1.weight'], w['fc1.bias'], HIDDEN, true);
  const logits = dense(h, batch, HIDDEN, w['fc2.weight'], w['fc2.bias'], CLASSES, false);
  const labels = argmaxRows(logits, batch, CLASSES);
  cpuMs += now() - t0;

  return { logits, labels, conv1, conv2, cpuMs, variant: c2.variant, backend: c2.backend };
}
