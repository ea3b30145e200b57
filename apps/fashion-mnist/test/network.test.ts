/**
 * The forward pass (conv layers on kernelkit's cpu backend, f32) against a plain f64 reference of
 * the whole network built from @kernelkit/ops's convLayerReference.
 */
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '@kernelkit/cpu';
import { convLayerReference, type ConvLayerProblem } from '@kernelkit/ops';
import { forward, CLASSES, HIDDEN } from '../src/network.js';
import { INPUT_SIZE, resizeBilinear } from '../src/resize.js';
import type { ModelWeights } from '../src/model-format.js';
import { committed } from './helpers.js';

function conv(input: Float64Array, w: Float32Array, bias: Float32Array, batch: number, channels: number, size: number, maps: number): Float64Array {
  const k = 7;
  // convLayerReference only indexes `input`, so an f64 array keeps the whole reference in f64.
  const p: ConvLayerProblem = { input: input as unknown as Float32Array, weights: w, bias, relu: true, batch, channels, height: size, width: size, maps, k, outHeight: size - k + 1, outWidth: size - k + 1 };
  return convLayerReference(p);
}

function pool(x: Float64Array, planes: number, size: number, p: number): Float64Array {
  const o = Math.ceil(size / p);
  const out = new Float64Array(planes * o * o).fill(-Infinity);
  for (let n = 0; n < planes; n++) for (let y = 0; y < size; y++) for (let xx = 0; xx < size; xx++) {
    const i = (n * o + Math.floor(y / p)) * o + Math.floor(xx / p);
    out[i] = Math.max(out[i]!, x[(n * size + y) * size + xx]!);
  }
  return out;
}

function fc(x: Float64Array, batch: number, inputs: number, w: Float32Array, b: Float32Array, outputs: number, relu: boolean): Float64Array {
  const out = new Float64Array(batch * outputs);
  for (let n = 0; n < batch; n++) for (let o = 0; o < outputs; o++) {
    let s = b[o]!;
    for (let i = 0; i < inputs; i++) s += x[n * inputs + i]! * w[o * inputs + i]!;
    out[n * outputs + o] = relu ? Math.max(0, s) : s;
  }
  return out;
}

function referenceLogits(w: ModelWeights, input: Float32Array, batch: number): Float64Array {
  const c1 = conv(Float64Array.from(input), w['conv1.weight'], w['conv1.bias'], batch, 1, 86, 4);
  const c2 = conv(pool(c1, batch * 4, 80, 2), w['conv2.weight'], w['conv2.bias'], batch, 4, 40, 16);
  const h = fc(pool(c2, batch * 16, 34, 4), batch, 1296, w['fc1.weight'], w['fc1.bias'], HIDDEN, true);
  return fc(h, batch, HIDDEN, w['fc2.weight'], w['fc2.bias'], CLASSES, false);
}

describe('forward pass', () => {
  it('matches the f64 reference network on 4 test images', async () => {
    const { test, weights } = await committed();
    const start = 17;
    const batch = 4;
    const input = resizeBilinear({ pixels: test.pixels, start, count: batch, inH: 28, inW: 28, outH: INPUT_SIZE, outW: INPUT_SIZE });
    const backend = createCpuBackend();
    try {
      const got = await forward(backend, weights, input, batch);
      const ref = referenceLogits(weights, input, batch);
      expect(got.logits.length).toBe(batch * CLASSES);
      const scale = Math.max(1, ...Array.from(ref, Math.abs));
      for (let i = 0; i < ref.length; i++) expect(Math.abs(got.logits[i]! - ref[i]!)).toBeLessThan(1e-4 * scale);
      for (let n = 0; n < batch; n++) {
        const row = Array.from(ref.subarray(n * CLASSES, (n + 1) * CLASSES));
        expect(got.labels[n]).toBe(row.indexOf(Math.max(...row)));
      }
      expect(got.backend).toBe('cpu');
    } finally {
      await backend.dispose();
    }
  });
});
