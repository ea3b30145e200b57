import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortError } from '@kernelkit/core';
import { conv2dOutputLength, convLayerOutputLength, convLayerOutputShape, validateConv2d, verifyResult, type Backend, type ConvLayerArgs } from '@kernelkit/ops';
import { conv2dCase, convLayerCase } from '@kernelkit/ops/testing';
import { createWebGpuBackend } from '../src/index.js';
import { conv2dChunks } from '../src/ops/conv2d.js';
import { copyProgram, gpuDeviceOf, packParams, setPipelineChunkBytes, stagingBuffers, webgpuStats } from '../src/testing.js';
import { runChunked } from '../src/runtime/pipeline.js';
import { prefault, TOUCH_PIECE_BYTES, untilTouched } from '../src/runtime/fresh-output.js';

/**
 * The chunk pipeline (runtime/pipeline.ts) with a chunk size small enough that test-sized
 * calls run as several chunks: whole images with a ragged last chunk, row bands with halo rows
 * when one image is larger than a chunk, `out` given or not.
 */
let b: Backend;
beforeAll(async () => {
  b = await createWebGpuBackend({ adapter: 'software' });
});
afterAll(async () => {
  await b?.dispose();
});

const outstanding = (): number => {
  return webgpuStats(b).outBuffers;
};
const layerLength = (a: ConvLayerArgs): number => convLayerOutputLength({ ...a, ...convLayerOutputShape(a) });

describe('conv2dChunks', () => {
  it('whole images while one fits, the last chunk ragged', () => {
    const chunks = conv2dChunks({ batch: 5, height: 10, width: 8, k: 3 }, 2 * 10 * 8 * 4 + 4);
    expect(chunks.map((c) => [c.b0, c.n])).toEqual([
      [0, 2],
      [2, 2],
      [4, 1],
    ]);
    expect(chunks.every((c) => c.r0 === 0 && c.r1 === 10 && c.in0 === 0 && c.in1 === 10)).toBe(true);
  });

  it('row bands with R = (K−1)/2 halo rows inside the image, none past its edges, covering every row once', () => {
    // 12 input rows per chunk, K=5 (R=2): 8 output rows per band, 30 rows → 8+8+8+6.
    const chunks = conv2dChunks({ batch: 2, height: 30, width: 16, k: 5 }, 12 * 16 * 4);
    expect(chunks.filter((c) => c.b0 === 0).map((c) => [c.r0, c.r1, c.in0, c.in1])).toEqual([
      [0, 8, 0, 10],
      [8, 16, 6, 18],
      [16, 24, 14, 26],
      [24, 30, 22, 30],
    ]);
    expect(chunks.every((c) => c.n === 1 && (c.in1 - c.in0) * 16 * 4 <= 12 * 16 * 4)).toBe(true);
    expect(chunks.filter((c) => c.b0 === 1)).toHaveLength(4);
  });
});

describe('conv2d and convLayer through the chunk pipeline', () => {
  it('conv2d: whole-image chunks with a ragged last one, and row bands with halos, match the reference with and without out', async () => {
    // One image is 40×36×4 = 5760 bytes: 2 images per chunk (5 images: 3 chunks), then 13 rows per band.
    for (const [bytes, k] of [
      [2 * 40 * 36 * 4 + 100, 3],
      [13 * 36 * 4, 5],
      [11 * 36 * 4, 7],
    ] as const) {
      setPipelineChunkBytes(b, bytes);
      try {
        const args = conv2dCase([5, 40, 36, k], 100 + k);
        expect(conv2dChunks(validateConv2d(args), bytes).length).toBeGreaterThan(2);
        for (const variant of ['coalesced', 'tiled', 'naive']) {
          const r = await b.conv2d(args, { variant });
          expect(verifyResult('conv2d', args, r.data), `${variant}, ${bytes} bytes per chunk`).toBeUndefined();
          const out = new Float32Array(conv2dOutputLength(validateConv2d(args))).fill(-1);
          const withOut = await b.conv2d(args, { variant, out, timing: true });
          expect(withOut.data).toBe(out);
          expect(verifyResult('conv2d', args, out), `${variant} into out, ${bytes} bytes per chunk`).toBeUndefined();
          expect(withOut.timing?.kernelMs).toBeGreaterThanOrEqual(0);
        }
      } finally {
        setPipelineChunkBytes(b, undefined);
      }
    }
    expect(outstanding()).toBe(0);
  });

  it('convLayer: chunks sized by the pipeline (ragged last), host or device output, match the reference', async () => {
    const args = convLayerCase([7, 2, 10, 10, 3, 3], 7);
    // 2·10·10·4 = 800 input bytes per image: 3 images per chunk, 3 chunks.
    setPipelineChunkBytes(b, 2400);
    try {
      const r = await b.convLayer(args, { variant: 'gemm' });
      expect(verifyResult('convLayer', args, r.data)).toBeUndefined();
      expect(r.notes ?? []).toContainEqual(expect.stringMatching(/^3 chunks, upload and readback overlapped/));
      const out = new Float32Array(layerLength(args)).fill(-1);
      await b.convLayer(args, { variant: 'direct', out });
      expect(verifyResult('convLayer', args, out)).toBeUndefined();
      const dev = await b.convLayer(args, { variant: 'gemm', output: 'device' });
      const read = await dev.data.read();
      dev.data.dispose();
      expect(verifyResult('convLayer', args, read)).toBeUndefined();
    } finally {
      setPipelineChunkBytes(b, undefined);
    }
    // A handle's release queues behind earlier calls: any later call has seen it.
    await b.conv2d(conv2dCase([1, 4, 4, 1], 1));
    expect(outstanding()).toBe(0);
  });

  it('many chunked calls keep the staging rings and live buffers at their level after the first', async () => {
    setPipelineChunkBytes(b, 2 * 16 * 16 * 4);
    try {
      const args = conv2dCase([5, 16, 16, 3], 9);
      const out = new Float32Array(5 * 16 * 16);
      await b.conv2d(args, { variant: 'coalesced', out });
      const staging = stagingBuffers(b);
      const live = webgpuStats(b).liveBuffers;
      // 300 calls of 3 chunks each (900 chunks) stay under a few seconds on llvmpipe; the
      // pipeline takes its buffer sets from the pool each call, so any growth would show by then.
      for (let i = 0; i < 300; i++) await b.conv2d(args, { variant: 'coalesced', out });
      expect(stagingBuffers(b)).toBe(staging);
      expect(webgpuStats(b).liveBuffers).toBe(live);
      expect(verifyResult('conv2d', args, out)).toBeUndefined();
    } finally {
      setPipelineChunkBytes(b, undefined);
    }
  });

  it('an abort in the middle of a pipeline rejects with AbortError, leaves out untouched and hands every buffer back', async () => {
    // 64 images of 128² in chunks of 2: 32 chunks, each several ms on llvmpipe.
    setPipelineChunkBytes(b, 2 * 128 * 128 * 4);
    try {
      const args = conv2dCase([64, 128, 128, 7], 11);
      const out = new Float32Array(64 * 128 * 128).fill(-12345.5);
      const ac = new AbortController();
      const call = b.conv2d(args, { variant: 'naive', out, signal: ac.signal });
      setTimeout(() => ac.abort(new Error('stop')), 30);
      await expect(call).rejects.toBeInstanceOf(AbortError);
      expect(out.every((v) => v === -12345.5)).toBe(true);
      expect(outstanding()).toBe(0);
      // The backend goes on, into the same out.
      const small = conv2dCase([3, 20, 20, 3], 12);
      const o2 = new Float32Array(3 * 20 * 20);
      await b.conv2d(small, { variant: 'naive', out: o2 });
      expect(verifyResult('conv2d', small, o2)).toBeUndefined();
    } finally {
      setPipelineChunkBytes(b, undefined);
    }
  });
});

describe('runChunked', () => {
  it('two buffer sets: chunk i+1 is uploaded before chunk i is read back; one set: strictly after; every chunk lands where it belongs', async () => {
    const gpu = gpuDeviceOf(b);
    const chunk = 3000;
    const input = Float32Array.from({ length: 5 * chunk - 700 }, (_, i) => i * 0.5);
    for (const sets of [2, 1]) {
      const events: string[] = [];
      const out = new Float32Array(input.length).fill(-1);
      const count = Math.ceil(input.length / chunk);
      await gpu.exclusive(async () => {
        const pipeline = gpu.pipeline(copyProgram(false, 64));
        await runChunked(
          gpu,
          {
            chunks: count,
            sets,
            createSet: () => ({ src: gpu.storage(chunk * 4), dst: gpu.storage(chunk * 4) }),
            releaseSet: (s) => gpu.release(s.src, s.dst),
            chunk: (i) => {
              const n = Math.min(chunk, input.length - i * chunk);
              return {
                upload: (s, signal) => {
                  events.push(`up ${i}`);
                  return gpu.write(s.src, 0, input.subarray(i * chunk, i * chunk + n), signal);
                },
                work: (s) => ({
                  pipeline,
                  submits: [[{ offset: [0, 0, 0], workgroups: [Math.ceil(n / 64), 1, 1] }]],
                  bind: (_part, temps) => {
                    const params = gpu.uniform(packParams([['u32', n], ['u32', 0], ['u32', 0], ['u32', 0]]));
                    temps.push(params);
                    return gpu.bind(pipeline, [s.src, s.dst, params]);
                  },
                }),
                reads: (s) => [{ buffer: s.dst, offset: 0, size: n * 4, into: new Uint8Array(out.buffer, i * chunk * 4, n * 4) }],
                done: () => events.push(`done ${i}`),
              };
            },
          },
          { timing: false, signal: undefined },
        );
      });
      expect(out).toEqual(input);
      expect(events.filter((e) => e.startsWith('done'))).toEqual(Array.from({ length: count }, (_, i) => `done ${i}`));
      const overlapped = events.indexOf('up 1') < events.indexOf('done 0');
      expect(overlapped, `${sets} sets: ${events.join(', ')}`).toBe(sets === 2);
    }
    expect(outstanding()).toBe(0);
  });
});

describe('fresh outputs for chunked readbacks', () => {
  it('are faulted in piece by piece: a range is ready once the pieces it covers are, and what is copied there stays', async () => {
    const kept = new SharedArrayBuffer(3 * TOUCH_PIECE_BYTES + 4096);
    const out = new Uint8Array(kept);
    // The caller's handle on the same memory answers for it too.
    const alias = structuredClone(kept);
    prefault(kept, alias);
    expect(untilTouched(new ArrayBuffer(16))).toBeUndefined();
    // The first bytes of each piece are the first a worker writes (one byte per page).
    await untilTouched(out.buffer, 0, 4096);
    out[0] = 7;
    await untilTouched(out.buffer, 2 * TOUCH_PIECE_BYTES, 2 * TOUCH_PIECE_BYTES + 1);
    out[2 * TOUCH_PIECE_BYTES] = 9;
    await untilTouched(alias);
    expect([out[0], out[2 * TOUCH_PIECE_BYTES]]).toEqual([7, 9]);
  });
});
