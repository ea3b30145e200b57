/**
 * The staging rings (runtime/transfer.ts): transfers larger than a slice stream through it
 * exactly, ordinary inputs up to the direct-write size skip it, it never grows, failures leave the caller's `out` alone, and every op reports its
 * kernel, upload and readback times.
 */
import { describe, expect, it } from 'vitest';
import { AbortError, DeviceError } from '@kernelkit/core';
import { verifyResult, type Backend } from '@kernelkit/ops';
import { conv2dCase, convLayerCase, GRID_CASES, scanCase, stencilCase } from '@kernelkit/ops/testing';
import { createWebGpuBackend, webgpuScanStream } from '../src/index.js';
import { landingBytes, liveGpuBuffers, loseDevice, setOutputPrefault, setPipelineChunkBytes, setStagingShape, setUploadLanding, stagingBuffers, webgpuStats } from '../src/testing.js';

/** A software backend whose staging rings have `slices` slices of `sliceBytes`. */
async function staged(slices: number, sliceBytes: number, options: Parameters<typeof createWebGpuBackend>[0] = {}): Promise<Backend> {
  const b = await createWebGpuBackend({ adapter: 'software', ...options });
  await setStagingShape(b, slices, sliceBytes);
  return b;
}

const outstanding = (b: Backend): number => {
  return webgpuStats(b).outBuffers;
};

describe('transfers larger than one staging slice', () => {
  // 3 slices of 16 KiB: every array below (> 64 KiB, so uploads are staged too) takes many pieces, the last one ragged.
  it('conv2d, stencil3d, scan and convLayer are exact, with and without `out`', async () => {
    await using b = await staged(3, 16 << 10);
    const conv = conv2dCase([2, 131, 97, 5], 1);
    for (const variant of ['coalesced', 'tiled']) {
      expect(verifyResult('conv2d', conv, (await b.conv2d(conv, { variant })).data), variant).toBeUndefined();
      const out = new Float32Array(2 * 131 * 97);
      const r = await b.conv2d(conv, { variant, out });
      expect(r.data).toBe(out);
      expect(verifyResult('conv2d', conv, out), `${variant} into out`).toBeUndefined();
    }
    const stencil = stencilCase([41, 37, 29, 3, 'copy'], 2);
    expect(verifyResult('stencil3d', stencil, (await b.stencil3d(stencil)).data)).toBeUndefined();
    const stencilOut = new Float32Array(41 * 37 * 29);
    await b.stencil3d(stencil, { out: stencilOut });
    expect(verifyResult('stencil3d', stencil, stencilOut)).toBeUndefined();
    for (const dtype of ['u32', 'i32', 'f32'] as const) {
      const scan = scanCase(dtype, 100_003, 3, true, dtype === 'f32' ? 1.5 : 7);
      for (const variant of ['decoupled', 'blelloch']) expect(verifyResult('scan', scan, (await b.scan(scan, { variant })).data), `${variant} ${dtype}`).toBeUndefined();
    }
    const layer = convLayerCase([9, 3, 30, 26, 5, 3], 4, { bias: true, relu: true });
    expect(verifyResult('convLayer', layer, (await b.convLayer(layer)).data)).toBeUndefined();
    const layerOut = new Float32Array(9 * 5 * 28 * 24);
    await b.convLayer(layer, { out: layerOut });
    expect(verifyResult('convLayer', layer, layerOut)).toBeUndefined();
    expect(outstanding(b)).toBe(0);
    expect(stagingBuffers(b)).toBeLessThanOrEqual(6);
  });

  it('convLayer in chunks (overlapped and sequential) shares the ring between the chunks in flight', async () => {
    for (const overlap of [true, false]) {
      await using b = await staged(2, 16 << 10, { convLayerChunkItems: 3, convLayerOverlap: overlap });
      const layer = convLayerCase([10, 2, 33, 31, 4, 5], 5, { bias: true });
      const r = await b.convLayer(layer);
      expect(r.notes ?? []).toContainEqual(expect.stringMatching(/4 chunks/));
      expect(verifyResult('convLayer', layer, r.data), `overlap ${overlap}`).toBeUndefined();
      expect(outstanding(b)).toBe(0);
    }
  });

  it('device outputs read back through the ring, and device inputs feed the next op', async () => {
    await using b = await staged(2, 16 << 10);
    const stencil = stencilCase([40, 30, 20, 2, 'zero'], 6);
    const r = await b.stencil3d(stencil, { output: 'device' });
    const data = await r.data.read();
    expect(verifyResult('stencil3d', stencil, data)).toBeUndefined();
    const again = await b.stencil3d({ ...stencil, input: r.data, steps: 0 });
    expect(again.data).toEqual(data);
    r.data.dispose();
  });

  it('the streaming scan reads each piece straight into its chunk through the ring', async () => {
    await using b = await staged(2, 16 << 10);
    const chunks = [scanCase('u32', 70_001, 7).input as Uint32Array, scanCase('u32', 5, 8).input as Uint32Array, scanCase('u32', 40_000, 9).input as Uint32Array];
    const got: number[] = [];
    for await (const c of webgpuScanStream(b, chunks)) got.push(...c);
    let acc = 0;
    const want = chunks.flatMap((c) => Array.from(c, (v) => (acc = (acc + v) >>> 0)));
    expect(got).toEqual(want);
  });
});

describe('large outputs faulted in by worker threads', () => {
  it('scan and conv2d outputs of 16 MiB+ are shared memory and exact', async () => {
    await using b = await staged(2, 1 << 20);
    setOutputPrefault(b, true);
    const scan = scanCase('u32', 4_500_000, 31);
    const r = await b.scan(scan, { variant: 'decoupled' });
    expect(r.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(verifyResult('scan', scan, r.data)).toBeUndefined();
    const conv = conv2dCase([1, 2100, 2100, 3], 32);
    const c = await b.conv2d(conv, { variant: 'coalesced' });
    expect(c.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(verifyResult('conv2d', conv, c.data)).toBeUndefined();
    // The kit copies into a caller's `out` when a signal is given: it stays the caller's plain array.
    const out = new Float32Array(2100 * 2100);
    const o = await b.conv2d(conv, { variant: 'coalesced', out, signal: new AbortController().signal });
    expect(o.data).toBe(out);
    expect(verifyResult('conv2d', conv, out)).toBeUndefined();
    // Without the workers' touching, a result is still on the device's result memory.
    setOutputPrefault(b, false);
    const again = await b.scan(scan, { variant: 'decoupled' });
    expect(again.data.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(verifyResult('scan', scan, again.data)).toBeUndefined();
  });
});

describe('the staging pool does not grow', () => {
  it('1000 calls of every transfer shape keep staging, landing and live buffers at their level after the first round', async () => {
    await using b = await staged(2, 32 << 10);
    // conv2d in row bands of 16 KiB: its input goes through the upload landing buffer (as every host input does with the hook on), its chunks into out through the read one.
    setPipelineChunkBytes(b, 16 << 10);
    setUploadLanding(b, true);
    const calls: (() => Promise<string | undefined>)[] = [
      async () => { const a = scanCase('u32', 30_000, 1); return verifyResult('scan', a, (await b.scan(a, { variant: 'decoupled' })).data); },
      async () => { const a = conv2dCase([1, 90, 100, 3], 2); return verifyResult('conv2d', a, (await b.conv2d(a, { variant: 'coalesced', out: new Float32Array(9000) })).data); },
      async () => { const a = stencilCase([30, 30, 20, 1, 'copy'], 3); const r = await b.stencil3d(a, { output: 'device' }); const d = await r.data.read(); r.data.dispose(); return verifyResult('stencil3d', a, d); },
      async () => { const a = scanCase('f32', 3, 4); return verifyResult('scan', a, (await b.scan(a)).data); },
    ];
    const live: number[] = [];
    const staging: number[] = [];
    const landing: number[] = [];
    for (let i = 0; i < 1000; i++) {
      const msg = await calls[i % calls.length]!();
      if (msg !== undefined) expect(msg, `call ${i}`).toBeUndefined();
      live.push(liveGpuBuffers(b));
      staging.push(stagingBuffers(b));
      landing.push(landingBytes(b));
    }
    expect(Math.max(...staging)).toBeLessThanOrEqual(4);
    // Page-rounded: the upload landing buffer holds the largest recent host input (the u32 scan's 120 000 bytes), the read one conv2d's 36 000-byte output.
    expect(Math.max(...landing)).toBe(122_880 + 36_864);
    const settled = live[2 * calls.length - 1]!;
    expect(Math.max(...live.slice(2 * calls.length)), 'live buffers after the first two rounds').toBeLessThanOrEqual(settled);
    expect(outstanding(b)).toBe(0);
  }, 300_000);
});

describe('failures leave `out` untouched and return the staging buffers', () => {
  const SENTINEL = -12345;

  it('abort while a long upload streams: AbortError, `out` untouched, nothing outstanding, the next call works', async () => {
    await using b = await staged(2, 1024);
    const args = conv2dCase([4, 256, 256, 3], 11);
    const out = new Float32Array(4 * 256 * 256).fill(SENTINEL);
    const ac = new AbortController();
    const call = b.conv2d(args, { variant: 'coalesced', out, signal: ac.signal });
    setTimeout(() => ac.abort(new Error('stop')), 5);
    await expect(call).rejects.toBeInstanceOf(AbortError);
    expect(out.every((v) => v === SENTINEL)).toBe(true);
    expect(outstanding(b)).toBe(0);
    const small = conv2dCase([1, 50, 60, 3], 12);
    expect(verifyResult('conv2d', small, (await b.conv2d(small)).data)).toBeUndefined();
  });

  it('device loss while a long upload streams: DeviceError, `out` untouched, staging destroyed with the device, the next call recreates it', async () => {
    await using b = await staged(2, 1024);
    const args = conv2dCase([4, 256, 256, 3], 13);
    const out = new Float32Array(4 * 256 * 256).fill(SENTINEL);
    const call = b.conv2d(args, { variant: 'coalesced', out });
    // 1 KiB slices: the 1 MiB upload takes a thousand map round trips, far longer than this timer.
    setTimeout(() => void loseDevice(b), 5);
    await expect(call).rejects.toBeInstanceOf(DeviceError);
    expect(out.every((v) => v === SENTINEL)).toBe(true);
    expect(stagingBuffers(b)).toBe(0);
    expect(outstanding(b)).toBe(0);
    const next = conv2dCase([1, 200, 180, 3], 14);
    const r = await b.conv2d(next, { variant: 'coalesced' });
    expect(verifyResult('conv2d', next, r.data)).toBeUndefined();
    expect(r.notes ?? []).toContainEqual(expect.stringMatching(/recreated/));
    expect(stagingBuffers(b)).toBeLessThanOrEqual(4);
  });

  it('calls that move one piece each way keep to one staging slice per direction', async () => {
    await using b = await staged(4, 1 << 20);
    const stencil = stencilCase([40, 40, 40, 2, 'copy'], 3); // 256 KB: one piece each way
    for (let i = 0; i < 6; i++) expect(verifyResult('stencil3d', stencil, (await b.stencil3d(stencil)).data)).toBeUndefined();
    expect(stagingBuffers(b)).toBe(2);
  });

  it('dispose destroys the staging buffers with everything else', async () => {
    const b = await staged(2, 16 << 10);
    const a = conv2dCase([1, 200, 180, 3], 15);
    await b.conv2d(a);
    expect(stagingBuffers(b)).toBeGreaterThan(0);
    await b.dispose();
    expect(liveGpuBuffers(b)).toBe(0);
  });
});

describe('uploads through queue.writeBuffer', () => {
  it('an ordinary input up to the direct-write size skips the upload ring; a shared one of that size takes it', async () => {
    await using b = await createWebGpuBackend({ adapter: 'software' });
    const stencil = stencilCase([40, 40, 40, 2, 'copy'], 3); // 256 KB each way
    expect(verifyResult('stencil3d', stencil, (await b.stencil3d(stencil)).data)).toBeUndefined();
    expect(stagingBuffers(b)).toBe(1); // the readback's slice
    const input = new Float32Array(new SharedArrayBuffer(stencil.input.byteLength));
    input.set(stencil.input);
    expect(verifyResult('stencil3d', stencil, (await b.stencil3d({ ...stencil, input })).data)).toBeUndefined();
    expect(stagingBuffers(b)).toBe(2);
  });
});

describe('timing on every op', () => {
  const fields = (t: { kernelMs?: number; uploadMs?: number; readbackMs?: number } | undefined, what: string): void => {
    for (const k of ['kernelMs', 'uploadMs', 'readbackMs'] as const) {
      expect(t?.[k], `${what}: ${k}`).toBeTypeOf('number');
      expect(t![k]!, `${what}: ${k}`).toBeGreaterThanOrEqual(0);
    }
  };

  it('kernelMs, uploadMs and readbackMs are present and non-negative', async () => {
    await using b = await staged(2, 16 << 10);
    const conv = conv2dCase([2, 100, 90, 3], 21);
    for (const variant of b.variants('conv2d')) fields((await b.conv2d(conv, { variant, timing: true })).timing, `conv2d ${variant}`);
    const stencil = stencilCase([30, 20, 10, 2, 'copy'], 22);
    for (const variant of b.variants('stencil3d')) fields((await b.stencil3d(stencil, { variant, timing: true })).timing, `stencil3d ${variant}`);
    fields((await b.stencil3d({ ...stencil, steps: 0 }, { timing: true })).timing, 'stencil3d steps 0');
    const scan = scanCase('f32', 50_000, 23);
    for (const variant of b.variants('scan')) fields((await b.scan(scan, { variant, timing: true })).timing, `scan ${variant}`);
    fields((await b.scan(scanCase('u32', 0, 1), { timing: true })).timing, 'scan of nothing');
    const grid = GRID_CASES[0]!.args;
    for (const variant of b.variants('gridSearch')) fields((await b.gridSearch(grid, { variant, timing: true })).timing, `gridSearch ${variant}`);
    const layer = convLayerCase([4, 2, 20, 18, 3, 3], 24);
    for (const variant of b.variants('convLayer')) fields((await b.convLayer(layer, { variant, timing: true })).timing, `convLayer ${variant}`);
    const dev = await b.convLayer(layer, { output: 'device', timing: true });
    fields(dev.timing, 'convLayer to the device');
    const next = convLayerCase([4, 3, 18, 16, 2, 3], 26);
    fields((await b.convLayer({ ...next, input: dev.data }, { timing: true })).timing, 'convLayer from the device');
    dev.data.dispose();
  });

  it('a big transfer shows up in uploadMs and readbackMs', async () => {
    await using b = await staged(2, 64 << 10);
    const scan = scanCase('u32', 2_000_000, 25);
    const r = await b.scan(scan, { variant: 'decoupled', timing: true });
    expect(r.timing!.uploadMs!).toBeGreaterThan(0);
    expect(r.timing!.readbackMs!).toBeGreaterThan(0);
    expect(r.timing!.uploadMs! + r.timing!.readbackMs! + r.timing!.kernelMs!).toBeLessThanOrEqual(r.timing!.totalMs * 1.05 + 1);
  });
});
