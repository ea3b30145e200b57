/**
 * GPU-resident chaining on the software adapter: convLayer → (pool →) convLayer and stencil →
 * stencil with the intermediate as a DeviceArray equal the unchained results; handle semantics
 * (read twice, double dispose, dispose right after a call, dispose of the backend); buffers back
 * in the pool; chunked conv layers (forced small chunks) overlapped and sequential; `auto`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceError, DisposedError, InvalidArgumentError } from '@kernelkit/core';
import { createCpuBackend } from '@kernelkit/cpu';
import { createBackend, verifyResult, type Backend, type ConvLayerArgs, type Progress } from '@kernelkit/ops';
import { convLayerCase, stencilCase } from '@kernelkit/ops/testing';
import { createWebGpuBackend } from '../src/index.js';
import { conv2dOp } from '../src/ops/conv2d.js';
import { convLayerOp, type ConvLayerChunking } from '../src/ops/conv-layer.js';
import { gridSearchOp } from '../src/ops/grid-search.js';
import { maxPoolDevice } from '../src/ops/max-pool.js';
import { scanOp } from '../src/ops/scan.js';
import { stencil3dOp } from '../src/ops/stencil3d.js';
import { openAdapter } from '../src/runtime/adapter.js';
import { bufferOf } from '../src/runtime/device-array.js';
import { GpuDevice } from '../src/runtime/device.js';
import { webgpuStats } from '../src/testing.js';

/** Plain CPU max pool, ceil mode (the fashion-mnist app's). */
function hostPool(input: Float32Array, planes: number, h: number, w: number, p: number): Float32Array {
  const oh = Math.ceil(h / p);
  const ow = Math.ceil(w / p);
  const out = new Float32Array(planes * oh * ow).fill(-Infinity);
  for (let n = 0; n < planes; n++)
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const o = (n * oh + Math.floor(y / p)) * ow + Math.floor(x / p);
        const v = input[(n * h + y) * w + x]!;
        if (v > out[o]!) out[o] = v;
      }
  return out;
}

/** Buffers handed out and not back in the pool (idle) or runtime-owned: 0 when no call and no handle holds one. */
const outstanding = (b: Backend | GpuDevice): number => {
  return (b instanceof GpuDevice ? b.stats() : webgpuStats(b)).outBuffers;
};

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

// Layer 1 (86→80 in the app; smaller here), then layer 2 on its output, bias and ReLU fused.
const L1 = convLayerCase([2, 1, 20, 20, 4, 5], 11, { bias: true, relu: true });
const l2Args = (input: Float32Array, h: number): ConvLayerArgs => {
  const c = convLayerCase([2, 4, h, h, 3, 3], 12, { bias: true, relu: true });
  return { ...c, input };
};

describe('webgpu DeviceArray chaining (software adapter)', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await createWebGpuBackend({ adapter: 'software' });
  });
  afterAll(() => b?.dispose());

  it('convLayer → convLayer on the GPU equals the unchained result, for every variant', async () => {
    for (const variant of ['direct', 'tiled', 'gemm']) {
      const c1 = await b.convLayer(L1, { variant });
      const want = await b.convLayer(l2Args(c1.data, 16), { variant });
      const h1 = await b.convLayer(L1, { variant, output: 'device' });
      expect(h1.data).toMatchObject({ kind: 'device-array', backend: 'webgpu', dtype: 'f32', location: 'device', length: c1.data.length });
      const got = await b.convLayer({ ...l2Args(c1.data, 16), input: h1.data }, { variant });
      expect(got.notes ?? []).not.toContainEqual(expect.stringMatching(/read back/));
      expect(got.data).toEqual(want.data);
      expect(verifyResult('convLayer', l2Args(c1.data, 16), got.data)).toBeUndefined();
      h1.data.dispose();
    }
  });

  it('convLayer → GPU max pool → convLayer equals pooling on the host', async () => {
    const c1 = await b.convLayer(L1);
    const pooled = hostPool(c1.data, 2 * 4, 16, 16, 2);
    const want = await b.convLayer(l2Args(pooled, 8));
    const h1 = (await b.convLayer(L1, { output: 'device' })).data;
    const p1 = await maxPoolDevice(h1, { planes: 8, height: 16, width: 16, window: 2 });
    h1.dispose();
    expect(await p1.read()).toEqual(pooled);
    const h2 = (await b.convLayer({ ...l2Args(pooled, 8), input: p1 }, { output: 'device' })).data;
    p1.dispose();
    expect(await h2.read()).toEqual(want.data);
    // Ceil mode: 6 → 2 with a 4-wide window, the last window covering 2 pixels.
    const p2 = await maxPoolDevice(h2, { planes: 2 * 3, height: 6, width: 6, window: 4 });
    expect(await p2.read()).toEqual(hostPool(want.data, 6, 6, 6, 4));
    h2.dispose();
    p2.dispose();
    await expect(maxPoolDevice(p2, { planes: 6, height: 2, width: 2, window: 1 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('stencil → stencil on the GPU equals the unchained steps', async () => {
    for (const variant of b.variants('stencil3d')) {
      const args = stencilCase([17, 9, 6, 3, 'copy'], 5);
      const want = await b.stencil3d(args, { variant });
      const s1 = (await b.stencil3d({ ...args, steps: 1 }, { variant, output: 'device' })).data;
      const s2 = (await b.stencil3d({ ...args, input: s1, steps: 2 }, { variant, output: 'device' })).data;
      expect(await s2.read()).toEqual(want.data);
      // A resident input is never written: chaining from s1 again gives the same grid.
      const again = await b.stencil3d({ ...args, input: s1, steps: 2 }, { variant });
      expect(again.data).toEqual(want.data);
      // steps 0: a copy, on the device and back.
      const s0 = (await b.stencil3d({ ...args, input: s1, steps: 0 }, { variant, output: 'device' })).data;
      expect(await s0.read()).toEqual(await s1.read());
      expect((await b.stencil3d({ ...args, input: s1, steps: 0 }, { variant })).data).toEqual(await s1.read());
      for (const h of [s0, s1, s2]) h.dispose();
    }
  });

  it('read twice, dispose twice, dispose right after the call, disposed handles refused naming the parameter', async () => {
    const h = (await b.convLayer(L1, { output: 'device' })).data;
    const a = await h.read();
    const c = await h.read();
    expect(a).not.toBe(c);
    expect(a).toEqual(c);
    // The call takes the handle when made: disposing it before the call runs is safe.
    const pending = b.convLayer({ ...l2Args(a, 16), input: h });
    h.dispose();
    h.dispose();
    expect((await pending).data).toEqual((await b.convLayer(l2Args(a, 16))).data);
    const e = await rejection(b.convLayer({ ...l2Args(a, 16), input: h }));
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as InvalidArgumentError).parameter).toBe('input');
    expect(await rejection(h.read())).toBeInstanceOf(DisposedError);
  });

  it('conv2d takes a webgpu handle as it is and keeps its output on the device; other backends read it back and say so', async () => {
    const img = new Float32Array(64).map((_, i) => i % 7);
    // A 1×1, one-map conv layer is the identity: a device handle holding `img`.
    const h = (await b.convLayer({ input: img, weights: new Float32Array([1]), batch: 1, channels: 1, height: 8, width: 8, maps: 1, k: 1 }, { output: 'device' })).data;
    expect(h.location).toBe('device');
    const r = await b.conv2d({ input: h, height: 8, width: 8, filter: new Float32Array([2]), k: 1 });
    expect(Array.from(r.data)).toEqual(Array.from(img, (v) => 2 * v));
    expect(r.notes ?? []).not.toContainEqual(expect.stringMatching(/read back|copied/));
    const c = (await b.conv2d({ input: h, height: 8, width: 8, filter: new Float32Array([1]), k: 1 }, { output: 'device' })).data;
    expect(c.location).toBe('device');
    const again = await b.conv2d({ input: c, height: 8, width: 8, filter: new Float32Array([3]), k: 1 });
    expect(again.notes ?? []).not.toContainEqual(expect.stringMatching(/read back|copied/));
    expect(Array.from(again.data)).toEqual(Array.from(img, (v) => 3 * v));
    c.dispose();
    await using cpu = createCpuBackend();
    const onCpu = await cpu.conv2d({ input: h, height: 8, width: 8, filter: new Float32Array([3]), k: 1 });
    expect(Array.from(onCpu.data)).toEqual(Array.from(img, (v) => 3 * v));
    expect(onCpu.notes).toContain('input read back from webgpu device memory (a DeviceArray of the webgpu backend)');
    h.dispose();
    const fromCpu = (await cpu.convLayer(L1, { output: 'device' })).data;
    const viaCpu = await b.convLayer({ ...l2Args(await fromCpu.read(), 16), input: fromCpu });
    expect(viaCpu.notes).toContain('input copied from a host-held DeviceArray of the cpu backend');
    expect(viaCpu.data).toEqual((await b.convLayer(l2Args(await fromCpu.read(), 16))).data);
  });

  it('disposed handles give their buffers back to the pool', async () => {
    await b.convLayer(L1); // warm pool and pipelines
    const before = outstanding(b);
    const h1 = (await b.convLayer(L1, { output: 'device' })).data;
    const s1 = (await b.stencil3d(stencilCase([9, 9, 9, 2, 'zero'], 3), { output: 'device' })).data;
    expect(outstanding(b)).toBe(before + 2);
    const buf = bufferOf(h1);
    expect(buf).toBeDefined();
    h1.dispose();
    s1.dispose();
    // Releases queue behind earlier calls; any later call has seen them.
    const h2 = (await b.convLayer(L1, { output: 'device' })).data;
    expect(bufferOf(h2)).toBe(buf);
    h2.dispose();
    await b.stencil3d(stencilCase([2, 2, 2, 1, 'zero'], 1));
    expect(outstanding(b)).toBe(before);
  });

  it("the backend's dispose invalidates its live handles and frees their buffers", async () => {
    const b2 = await createWebGpuBackend({ adapter: 'software' });
    const h = (await b2.convLayer(L1, { output: 'device' })).data;
    const s = (await b2.stencil3d(stencilCase([5, 5, 5, 1, 'zero'], 2), { output: 'device' })).data;
    expect(webgpuStats(b2).liveBuffers).toBeGreaterThan(0);
    await b2.dispose();
    expect(h.disposed).toBe(true);
    expect(s.disposed).toBe(true);
    const e = await rejection(h.read());
    expect(e).toBeInstanceOf(DisposedError);
    expect((e as Error).message).toMatch(/webgpu backend has been disposed/);
    h.dispose();
    expect(webgpuStats(b2).liveBuffers).toBe(0);
    // A handle of a disposed backend is refused by others, naming the parameter.
    const e2 = await rejection(b.stencil3d({ input: s, nx: 5 }));
    expect((e2 as InvalidArgumentError).parameter).toBe('input');
  });

  it('auto picks a tuned config once, then answers from the cache, both correct', async () => {
    const args = convLayerCase([2, 4, 40, 40, 16, 7], 21, { bias: true, relu: true });
    const first = await b.convLayer(args, { variant: 'auto' });
    expect(verifyResult('convLayer', args, first.data)).toBeUndefined();
    expect(first.notes?.[0]).toMatch(/^auto: (direct|tiled|gemm, (4|8|16) maps( × [24] pixels)? per thread) \(tuned now: swept 11 candidates in \d+ ms, wall clock on 1 of 2 images, for convLayer k=7 c=4 m=16/);
    const h = (await b.convLayer(args, { variant: 'auto', output: 'device' })).data;
    const second = await b.convLayer({ ...args, input: new Float32Array(args.input.length).fill(0.5) }, { variant: 'auto' });
    expect(second.notes?.[0]).toMatch(/\(tuned earlier; cached in memory for convLayer k=7/);
    expect(second.notes?.[0]?.split(' (')[0]).toBe(first.notes?.[0]?.split(' (')[0]);
    expect(await h.read()).toEqual(first.data);
    h.dispose();
    const small = await b.convLayer(L1, { variant: 'auto' });
    expect(small.notes?.[0]).toMatch(/not tuned: the default below/);
    expect(verifyResult('convLayer', L1, small.data)).toBeUndefined();
  });
});

describe('chunked conv layers (2 images per chunk), overlapped and sequential', () => {
  let gpu: GpuDevice;
  const backends = new Map<string, Backend>();
  const make = (chunking: ConvLayerChunking): Backend =>
    createBackend({
      name: 'webgpu',
      info: { name: 'webgpu', description: 'test', software: true, capabilities: { f64: false } },
      ops: { conv2d: conv2dOp(gpu), stencil3d: stencil3dOp(gpu), scan: scanOp(gpu), gridSearch: gridSearchOp(gpu), convLayer: convLayerOp(gpu, undefined, chunking) },
      release: () => {},
    });
  beforeAll(async () => {
    const opened = await openAdapter('software');
    if ('reasons' in opened) throw new Error(opened.reasons.join('; '));
    gpu = await GpuDevice.open(opened);
    backends.set('overlap', make({ chunkItems: 2 }));
    backends.set('sequential', make({ chunkItems: 2, overlap: false }));
    backends.set('one pass', make({}));
  });
  afterAll(async () => {
    for (const x of backends.values()) await x.dispose();
    await gpu?.close();
  });

  const args = convLayerCase([5, 3, 13, 11, 6, 3], 31, { bias: true, relu: true });

  it('host input and output: every path equals one pass and the reference', async () => {
    const one = await backends.get('one pass')!.convLayer(args, { timing: true });
    expect(verifyResult('convLayer', args, one.data)).toBeUndefined();
    for (const [name, note] of [['overlap', '3 chunks, upload and readback overlapped with compute'], ['sequential', '3 chunks, sequential']] as const) {
      for (const variant of ['direct', 'tiled', 'gemm']) {
        const seen: number[] = [];
        const r = await backends.get(name)!.convLayer(args, { variant, timing: true, onProgress: (p: Progress) => seen.push(p.done) });
        expect(r.notes).toContain(note);
        expect(verifyResult('convLayer', args, r.data)).toBeUndefined();
        if (variant === 'gemm') expect(r.data).toEqual(one.data);
        expect(seen).toEqual([2, 4, 5]);
        expect(r.timing?.totalMs).toBeGreaterThan(0);
      }
    }
  });

  it('resident input and device output through the chunked paths', async () => {
    const want = (await backends.get('one pass')!.convLayer(args)).data;
    for (const name of ['overlap', 'sequential']) {
      const x = backends.get(name)!;
      const before = outstanding(gpu);
      const inH = (await x.stencil3d({ input: args.input, nx: args.input.length, ny: 1, nz: 1, steps: 0 }, { output: 'device' })).data;
      const out = (await x.convLayer({ ...args, input: inH }, { output: 'device' })).data;
      expect(out.length).toBe(want.length);
      expect(await out.read()).toEqual(want);
      const host = await x.convLayer({ ...args, input: inH });
      expect(host.data).toEqual(want);
      inH.dispose();
      out.dispose();
      await x.stencil3d(stencilCase([2, 2, 2, 1, 'zero'], 1));
      expect(outstanding(gpu)).toBe(before);
    }
  });

  it('a lost device makes its handles unusable with a DeviceError, not a Dawn crash', async () => {
    const x = backends.get('one pass')!;
    const h = (await x.stencil3d({ input: args.input, nx: args.input.length, ny: 1, nz: 1, steps: 0 }, { output: 'device' })).data;
    await gpu.loseDevice();
    await expect(h.read()).rejects.toBeInstanceOf(DeviceError);
    const e = await rejection(x.convLayer({ ...args, input: h }));
    expect(e).toBeInstanceOf(DeviceError);
    // The device is recreated for the next call; host inputs work again.
    expect(verifyResult('convLayer', args, (await x.convLayer(args)).data)).toBeUndefined();
    h.dispose();
  });
});
