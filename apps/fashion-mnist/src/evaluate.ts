/**
 * Runs the network over the first `count` images of a data set, `chunk` images per forward pass
 * (a 10 000-image pass in one go would need ~1 GiB for conv1's output alone, more than a GPU
 * storage binding allows on the software adapters), and sums the per-layer times.
 */
import { InvalidArgumentError, now } from '@kernelkit/core';
import type { LabelledImages } from './idx.js';
import type { ModelWeights } from './model-format.js';
import { forward, type ConvLayerBackend, type LayerTime } from './network.js';
import { IMAGE_SIZE, INPUT_SIZE, resizeBilinear } from './resize.js';

export interface EvaluateOptions {
  readonly count: number;
  readonly chunk: number;
  readonly variant?: string;
}

export interface Evaluation {
  readonly count: number;
  readonly predictions: Uint8Array;
  readonly correct: number;
  readonly accuracy: number;
  readonly conv1: LayerTime;
  readonly conv2: LayerTime;
  readonly cpuMs: number;
  /** Present when the layers were chained on the GPU: both pools there and the one readback, summed over chunks. */
  readonly gpuChain?: { readonly poolMs: number; readonly readbackMs: number };
  /** How the layers were connected (chained on the device, or what read back and why). */
  readonly chain: string;
  /** Resizing 28×28 → 86×86, outside the op times. */
  readonly preprocessMs: number;
  /** Wall time of the whole evaluation. */
  readonly totalMs: number;
  readonly backend: string;
  readonly variant: string;
}

const addTime = (a: LayerTime | undefined, b: LayerTime): LayerTime =>
  a === undefined ? b : { ms: a.ms + b.ms, kind: a.kind === 'kernel' && b.kind === 'kernel' ? 'kernel' : 'end-to-end' };

export async function evaluate(backend: ConvLayerBackend, weights: ModelWeights, data: LabelledImages, o: EvaluateOptions): Promise<Evaluation> {
  // The filter would stretch any size to 86×86, but the model only knows 28×28 Fashion-MNIST images.
  if (data.rows !== IMAGE_SIZE || data.cols !== IMAGE_SIZE) throw new InvalidArgumentError('data', `images are ${data.rows}×${data.cols}; the model takes ${IMAGE_SIZE}×${IMAGE_SIZE}`);
  if (!Number.isSafeInteger(o.count) || o.count < 0 || o.count > data.count) throw new InvalidArgumentError('count', `expected 0..${data.count} (the images in the data), got ${o.count}`);
  if (!Number.isSafeInteger(o.chunk) || o.chunk < 1) throw new InvalidArgumentError('chunk', `expected an integer >= 1, got ${o.chunk}`);
  const start = now();
  const predictions = new Uint8Array(o.count);
  let conv1: LayerTime | undefined;
  let conv2: LayerTime | undefined;
  let cpuMs = 0;
  let preprocessMs = 0;
  let ran = { backend: 'none', variant: 'none' };
  let chain = 'no images';
  let gpuChain: { poolMs: number; readbackMs: number } | undefined;
  for (let first = 0; first < o.count; first += o.chunk) {
    const n = Math.min(o.chunk, o.count - first);
    const t0 = now();
    const input = resizeBilinear({ pixels: data.pixels, start: first, count: n, inH: data.rows, inW: data.cols, outH: INPUT_SIZE, outW: INPUT_SIZE });
    preprocessMs += now() - t0;
    const r = await forward(backend, weights, input, n, o.variant);
    predictions.set(r.labels, first);
    conv1 = addTime(conv1, r.conv1);
    conv2 = addTime(conv2, r.conv2);
    cpuMs += r.cpuMs;
    chain = r.chain;
    if (r.gpuChain) gpuChain = { poolMs: (gpuChain?.poolMs ?? 0) + r.gpuChain.poolMs, readbackMs: (gpuChain?.readbackMs ?? 0) + r.gpuChain.readbackMs };
    ran = { backend: r.backend, variant: r.variant };
  }
  let correct = 0;
  for (let i = 0; i < o.count; i++) if (predictions[i] === data.labels[i]) correct++;
  return {
    count: o.count,
    predictions,
    correct,
    accuracy: o.count === 0 ? 0 : correct / o.count,
    conv1: conv1 ?? { ms: 0, kind: 'end-to-end' },
    conv2: conv2 ?? { ms: 0, kind: 'end-to-end' },
    cpuMs,
    chain,
    ...(gpuChain ? { gpuChain } : {}),
    preprocessMs,
    totalMs: now() - start,
    ...ran,
  };
}
