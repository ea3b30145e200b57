import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceError } from '@kernelkit/core';
import { conv2dOutputLength, validateConv2d, verifyResult, type Backend, type Conv2dArgs, type DeviceArray } from '@kernelkit/ops';
import { conv2dCase } from '@kernelkit/ops/testing';
import { createWebGpuBackend } from '../src/index.js';
import { conv2dChunks } from '../src/ops/conv2d.js';
import { setPassHook } from '../src/runtime/device.js';
import { LANDING_RECENT_CALLS } from '../src/runtime/landing.js';
import { failPass, gpuDeviceOf, landingBytes, setFreshOutputLanding, setPipelineChunkBytes, setUploadLanding, stagingBuffers, webgpuStats } from '../src/testing.js';

/**
 * conv2d in several chunks: into the caller's `out` through the landing buffer
 * (runtime/landing.ts), and from a DeviceArray input copied band by band on the device.
 */
let b: Backend;
beforeAll(async () => {
  b = await createWebGpuBackend({ adapter: 'software' });
});
afterAll(async () => {
  await b?.dispose();
});

const outstanding = (): number => webgpuStats(b).outBuffers;
const lengthOf = (args: Conv2dArgs): number => conv2dOutputLength(validateConv2d(args));

/** Chunk targets for 40×36 images (5760 bytes each): two images per chunk (5 images: 3 chunks, the last ragged), then row bands of 13 and 11 input rows. */
const CHUNKINGS = [
  { bytes: 2 * 40 * 36 * 4 + 100, k: 3 },
  { bytes: 13 * 36 * 4, k: 5 },
  { bytes: 11 * 36 * 4, k: 7 },
] as const;

async function chunked<T>(bytes: number | undefined, fn: () => Promise<T>): Promise<T> {
  setPipelineChunkBytes(b, bytes);
  try {
    return await fn();
  } finally {
    setPipelineChunkBytes(b, undefined);
  }
}

/** An f32 DeviceArray holding `input` (a zero-step stencil returns its grid on the device). */
async function onDevice(input: Float32Array): Promise<DeviceArray<Float32Array>> {
  const r = await b.stencil3d({ input, nx: input.length, ny: 1, nz: 1, steps: 0 }, { output: 'device' });
  expect(r.data.location).toBe('device');
  return r.data;
}

describe('conv2d into out in several chunks (the landing buffer)', () => {
  it('equals the one-chunk result bit for bit: whole images with a ragged last chunk, row bands with halo rows', async () => {
    for (const { bytes, k } of CHUNKINGS) {
      const args = conv2dCase([5, 40, 36, k], 200 + k);
      expect(conv2dChunks(validateConv2d(args), bytes).length).toBeGreaterThan(2);
      for (const variant of ['coalesced', 'tiled']) {
        const one = (await b.conv2d(args, { variant })).data;
        const out = new Float32Array(lengthOf(args)).fill(-1);
        const r = await chunked(bytes, () => b.conv2d(args, { variant, out, timing: true }));
        expect(r.data).toBe(out);
        expect(out, `${variant}, ${bytes} bytes per chunk`).toEqual(one);
        expect(r.timing?.readbackMs).toBeGreaterThan(0);
      }
    }
    expect(landingBytes(b)).toBeGreaterThan(0);
    expect(outstanding()).toBe(0);
  });

  it('staging the input through the ring or the upload landing buffer gives the same result', async () => {
    for (const { bytes, k } of CHUNKINGS) {
      const args = conv2dCase([5, 40, 36, k], 250 + k);
      const out = new Float32Array(lengthOf(args));
      try {
        setUploadLanding(b, false);
        const ring = (await chunked(bytes, () => b.conv2d(args, { variant: 'coalesced' }))).data;
        setUploadLanding(b, true);
        const landed = await chunked(bytes, () => b.conv2d(args, { variant: 'coalesced', timing: true }));
        expect(landed.data, `${bytes} bytes per chunk`).toEqual(ring);
        expect(landed.timing?.uploadMs).toBeGreaterThan(0);
        await chunked(bytes, () => b.conv2d(args, { variant: 'tiled', out }));
        expect(verifyResult('conv2d', args, out)).toBeUndefined();
      } finally {
        setUploadLanding(b, undefined);
      }
    }
    expect(outstanding()).toBe(0);
  });

  it('with the study hook, calls without out gather their chunks the same way and return the same result', async () => {
    const { bytes, k } = CHUNKINGS[1];
    const args = conv2dCase([5, 40, 36, k], 205);
    const plain = (await chunked(bytes, () => b.conv2d(args, { variant: 'coalesced' }))).data;
    setFreshOutputLanding(b, true);
    try {
      const before = webgpuStats(b).calls;
      const r = await chunked(bytes, () => b.conv2d(args, { variant: 'coalesced', timing: true }));
      // One exclusive call: the landing path, not the fallback that would run a second one.
      expect(webgpuStats(b).calls).toBe(before + 1);
      expect(r.data).toEqual(plain);
      expect(r.data).not.toBe(plain);
    } finally {
      setFreshOutputLanding(b, undefined);
    }
  });

  it('a refused pass or a device lost in the middle of the pipeline leaves out untouched; the landing buffer goes with the lost device', async () => {
    const args = conv2dCase([5, 40, 36, 5], 211);
    const out = new Float32Array(lengthOf(args)).fill(-12345.5);
    const refused = (p: Promise<unknown>): Promise<unknown> => p.then(() => 'resolved', (e: unknown) => e);
    await chunked(13 * 36 * 4, async () => {
      failPass(b, 3);
      expect(await refused(b.conv2d(args, { variant: 'coalesced', out }))).toBeInstanceOf(DeviceError);
      expect(out.every((v) => v === -12345.5)).toBe(true);
      // The device is destroyed while the pipeline encodes its fourth chunk: earlier chunks are in the landing buffer, none in out.
      const gpu = gpuDeviceOf(b);
      let passes = 0;
      setPassHook(gpu, (dispatches) => {
        if (++passes === 4) {
          setPassHook(gpu, undefined);
          gpu.device.destroy();
        }
        return dispatches;
      });
      const lost = await refused(b.conv2d(args, { variant: 'coalesced', out }));
      expect(passes).toBe(4);
      expect(lost).toBeInstanceOf(DeviceError);
      expect((lost as Error).message).toMatch(/device was lost during this call/);
      expect(out.every((v) => v === -12345.5)).toBe(true);
      expect(landingBytes(b)).toBe(0);
      // The next call recreates the device and fills the same out.
      const r = await b.conv2d(args, { variant: 'coalesced', out });
      expect(r.notes ?? []).toContainEqual(expect.stringMatching(/recreated/));
      expect(verifyResult('conv2d', args, out)).toBeUndefined();
    });
    expect(outstanding()).toBe(0);
  });

  it('does not grow over many calls, and shrinks once no recent call needs its size', async () => {
    const big = conv2dCase([4, 96, 96, 3], 221);
    const small = conv2dCase([5, 16, 16, 3], 222);
    const bigOut = new Float32Array(lengthOf(big));
    const smallOut = new Float32Array(lengthOf(small));
    await chunked(2 * 16 * 16 * 4, async () => {
      await b.conv2d(big, { variant: 'coalesced', out: bigOut });
      const largest = landingBytes(b);
      expect(largest).toBeGreaterThanOrEqual(bigOut.byteLength);
      await b.conv2d(small, { variant: 'coalesced', out: smallOut });
      const staging = stagingBuffers(b);
      const live = webgpuStats(b).liveBuffers;
      // 200 calls of 3 chunks each: the landing buffer, the staging rings and the pool stay as they are.
      for (let i = 0; i < 200; i++) {
        await b.conv2d(small, { variant: 'coalesced', out: smallOut });
        expect(landingBytes(b)).toBeLessThanOrEqual(largest);
      }
      expect(stagingBuffers(b)).toBe(staging);
      expect(webgpuStats(b).liveBuffers).toBeLessThanOrEqual(live);
      // More than LANDING_RECENT_CALLS calls since the big one: the buffer is down to what the small calls need.
      expect(LANDING_RECENT_CALLS).toBeLessThan(200);
      expect(landingBytes(b)).toBeLessThan(largest);
      expect(landingBytes(b)).toBeGreaterThanOrEqual(smallOut.byteLength);
    });
    expect(verifyResult('conv2d', small, smallOut)).toBeUndefined();
    expect(outstanding()).toBe(0);
  });
});

describe('conv2d with a DeviceArray input', () => {
  it('equals the host-input result at chunk boundaries (halo rows, ragged last chunk), output on the device or the host', async () => {
    for (const { bytes, k } of [...CHUNKINGS, { bytes: undefined, k: 3 }]) {
      const args = conv2dCase([5, 40, 36, k], 230 + k);
      const handle = await onDevice(args.input as Float32Array);
      try {
        for (const variant of ['coalesced', 'tiled']) {
          const host = (await chunked(bytes, () => b.conv2d(args, { variant }))).data;
          expect(verifyResult('conv2d', args, host)).toBeUndefined();
          const dev = await chunked(bytes, () => b.conv2d({ ...args, input: handle }, { variant, output: 'device', timing: true }));
          expect(dev.data.location, `${variant}, ${bytes} bytes per chunk`).toBe('device');
          expect(dev.notes ?? []).not.toContainEqual(expect.stringMatching(/^input /));
          const read = await dev.data.read();
          dev.data.dispose();
          expect(read, `${variant}, ${bytes} bytes per chunk, device output`).toEqual(host);
          const out = new Float32Array(lengthOf(args)).fill(-1);
          const toHost = await chunked(bytes, () => b.conv2d({ ...args, input: handle }, { variant, out }));
          expect(toHost.notes ?? []).not.toContainEqual(expect.stringMatching(/^input /));
          expect(out, `${variant}, ${bytes} bytes per chunk, into out`).toEqual(host);
        }
      } finally {
        handle.dispose();
      }
    }
    // A handle's release queues behind earlier calls: any later call has seen it.
    await b.conv2d(conv2dCase([1, 4, 4, 1], 1));
    expect(outstanding()).toBe(0);
  });

  it('bound at each chunk\'s offset where the offsets are aligned: input bands with halo rows, whole-image output chunks', async () => {
    // 64-wide rows are 256 bytes: every band and image starts at an aligned offset.
    expect(256 % gpuDeviceOf(b).device.limits.minStorageBufferOffsetAlignment).toBe(0);
    for (const [shape, bytes] of [
      [[5, 32, 64, 3], 2 * 32 * 64 * 4 + 100],
      [[3, 40, 64, 5], 13 * 64 * 4],
      [[2, 30, 64, 7], 11 * 64 * 4],
    ] as const) {
      const args = conv2dCase([...shape], 260 + shape[3]);
      expect(conv2dChunks(validateConv2d(args), bytes).length).toBeGreaterThan(2);
      const handle = await onDevice(args.input as Float32Array);
      try {
        const host = (await chunked(bytes, () => b.conv2d(args, { variant: 'coalesced' }))).data;
        const dev = await chunked(bytes, () => b.conv2d({ ...args, input: handle }, { variant: 'coalesced', output: 'device' }));
        const read = await dev.data.read();
        dev.data.dispose();
        expect(read, `${shape.join('×')}, ${bytes} bytes per chunk`).toEqual(host);
        const out = new Float32Array(lengthOf(args)).fill(-1);
        await chunked(bytes, () => b.conv2d({ ...args, input: handle }, { variant: 'tiled', out }));
        expect(verifyResult('conv2d', args, out)).toBeUndefined();
      } finally {
        handle.dispose();
      }
    }
    await b.conv2d(conv2dCase([1, 4, 4, 1], 1));
    expect(outstanding()).toBe(0);
  });

  it('auto sweeps on a slice of the resident input and gives the host-input result', async () => {
    const args = conv2dCase([1, 256, 256, 3], 240);
    const handle = await onDevice(args.input as Float32Array);
    try {
      const r = await b.conv2d({ ...args, input: handle }, { variant: 'auto', output: 'device' });
      expect(r.notes?.[0]).toMatch(/^auto: /);
      const read = await r.data.read();
      r.data.dispose();
      expect(verifyResult('conv2d', args, read)).toBeUndefined();
    } finally {
      handle.dispose();
    }
    await b.conv2d(conv2dCase([1, 4, 4, 1], 1));
    expect(outstanding()).toBe(0);
  });
});
