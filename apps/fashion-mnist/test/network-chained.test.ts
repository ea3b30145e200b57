/**
 * The forward pass chained on the GPU (conv1 → pool → conv2 → pool as WebGPU DeviceArrays, one
 * readback) against the same backend with every conv output read back and pooled on the CPU,
 * on the software adapter. `maxPoolDevice` comes from the built package by path: its entry
 * does not export the pool yet (it resolves to the same module copy as the backend, which
 * matters: a handle is only known to the copy of the package that made it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuBackend } from '@kernelkit/cpu';
import type { Backend } from '@kernelkit/ops';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { webgpuStats } from '@kernelkit/webgpu/testing';
import { maxPoolDevice } from '../../../packages/webgpu/dist/ops/max-pool.js';
import { forward } from '../src/network.js';
import { INPUT_SIZE, resizeBilinear } from '../src/resize.js';
import { committed } from './helpers.js';

const outstanding = (b: Backend): number => {
  return webgpuStats(b).outBuffers;
};

describe('forward pass chained on the GPU', () => {
  let gpu: Backend;
  const batch = 3;
  let input: Float32Array;
  beforeAll(async () => {
    gpu = await createWebGpuBackend({ adapter: 'software' });
    const { test } = await committed();
    input = resizeBilinear({ pixels: test.pixels, start: 40, count: batch, inH: 28, inW: 28, outH: INPUT_SIZE, outW: INPUT_SIZE });
  });
  afterAll(() => gpu?.dispose());

  it('equals the unchained pass on the same backend, reads back once and frees every handle', async () => {
    const { weights } = await committed();
    const plain = await forward(gpu, weights, input, batch, undefined, { devicePool: false });
    expect(plain.gpuChain).toBeUndefined();
    expect(plain.chain).toMatch(/^not chained \(turned off\)/);
    const before = outstanding(gpu);
    const chained = await forward(gpu, weights, input, batch, undefined, { devicePool: maxPoolDevice });
    expect(chained.chain).toMatch(/^chained on the GPU/);
    expect(chained.gpuChain?.poolMs).toBeGreaterThan(0);
    expect(chained.gpuChain?.readbackMs).toBeGreaterThan(0);
    expect(chained.conv1.ms).toBeGreaterThan(0);
    expect(chained.conv2.ms).toBeGreaterThan(0);
    // Same kernels, exact pooling, FC on the CPU either way: identical logits.
    expect(chained.logits).toEqual(plain.logits);
    expect(chained.labels).toEqual(plain.labels);
    await gpu.stencil3d({ input: new Float32Array(8), nx: 2 }); // releases queue behind calls
    expect(outstanding(gpu)).toBe(before);
  });

  it('a failing step disposes every handle made so far', async () => {
    const { weights } = await committed();
    const before = outstanding(gpu);
    let pools = 0;
    const failing: typeof maxPoolDevice = async (h, shape) => {
      if (++pools === 2) throw new Error('pool 2 failed');
      return maxPoolDevice(h, shape);
    };
    await expect(forward(gpu, weights, input, batch, undefined, { devicePool: failing })).rejects.toThrow('pool 2 failed');
    await gpu.stencil3d({ input: new Float32Array(8), nx: 2 });
    expect(outstanding(gpu)).toBe(before);
  });

  it('backends without device memory are not chained, and say why', async () => {
    const { weights } = await committed();
    await using cpu = createCpuBackend();
    const r = await forward(cpu, weights, input.subarray(0, INPUT_SIZE * INPUT_SIZE), 1);
    expect(r.chain).toBe('not chained: cpu has no device memory; pools on the CPU');
    expect(r.gpuChain).toBeUndefined();
  });
});
