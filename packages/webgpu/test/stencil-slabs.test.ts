/**
 * stencil3d over z-slabs on the software adapter, with a small storage binding forced through
 * setStencilBindingBytes: every variant equals its one-binding result and the f64 reference over
 * several steps, for every slab size (slab boundaries at every plane, counts that do not divide
 * nz); a DeviceArray input and device output through slabs; an abort or a refused pass between
 * steps leaves `out` untouched; timing has its three parts; too small a binding is refused.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { LimitExceededError } from '@kernelkit/core';
import { verifyResult, type DeviceArray, type Stencil3dArgs } from '@kernelkit/ops';
import { stencilCase } from '@kernelkit/ops/testing';
import { createWebGpuBackend } from '../src/index.js';
import { slabsOf } from '../src/ops/stencil3d.js';
import { setPassHook } from '../src/runtime/device.js';
import { deviceOf } from '../src/runtime/registry.js';
import { failPass, setStencilBindingBytes, webgpuStats } from '../src/testing.js';

const backendP = createWebGpuBackend({ adapter: 'software' });
afterAll(async () => (await backendP).dispose());
afterEach(async () => setStencilBindingBytes(await backendP, undefined));

const VARIANTS = ['naive', 'tiled', 'streamed'] as const;
const [NX, NY, NZ] = [9, 7, 11];
const PLANE_BYTES = NX * NY * 4;

/** Handle releases run on the device's queue: a call after them sees the pool settled. */
async function outstanding(): Promise<number> {
  const b = await backendP;
  await b.stencil3d({ input: new Float32Array(1), nx: 1, ny: 1, nz: 1, steps: 1 });
  return webgpuStats(b).outBuffers;
}

describe('stencil3d z-slabs', () => {
  it('cuts nz into the fewest slabs that fit, sizes within one plane, halos included', () => {
    for (let nz = 1; nz <= 20; nz++) {
      for (let per = 3; per <= nz + 2; per++) {
        const slabs = slabsOf(nz, per);
        expect(slabs.length).toBe(Math.ceil(nz / (per - 2)));
        let z = 0;
        for (const [i, s] of slabs.entries()) {
          expect(s.z0).toBe(z);
          expect(s.planes).toBeLessThanOrEqual(per);
          expect(s.lo).toBe(i === 0 ? 0 : 1);
          expect(s.planes - s.hi).toBe(i === slabs.length - 1 ? 0 : 1);
          expect(s.hi - s.lo).toBe(s.z1 - s.z0);
          z = s.z1;
        }
        expect(z).toBe(nz);
        const sizes = slabs.map((s) => s.z1 - s.z0);
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      }
    }
  });

  for (const variant of VARIANTS) {
    it(`${variant}: every slab size equals the one-binding result and the reference`, async () => {
      const b = await backendP;
      for (const [steps, boundary] of [
        [1, 'copy'],
        [2, 'zero'],
        [3, 'copy'],
      ] as const) {
        const args = stencilCase([NX, NY, NZ, steps, boundary], 5 + steps);
        const whole = (await b.stencil3d(args, { variant })).data as Float32Array;
        expect(verifyResult('stencil3d', args, whole)).toBeUndefined();
        // 3 planes per binding: slabs of one plane (a boundary at every z) … 10: two slabs.
        for (let planes = 3; planes <= NZ - 1; planes++) {
          setStencilBindingBytes(b, planes * PLANE_BYTES);
          const r = await b.stencil3d(args, { variant });
          expect(r.data, `steps=${steps} ${planes} planes per binding`).toEqual(whole);
        }
      }
    });
  }

  it('a DeviceArray input and a device output run through slabs, with timing', async () => {
    const b = await backendP;
    const args = stencilCase([NX, NY, NZ, 4, 'zero'], 21);
    const whole = (await b.stencil3d(args)).data as Float32Array;
    const input = (await b.stencil3d({ ...args, steps: 0 }, { output: 'device' })).data as unknown as DeviceArray;
    setStencilBindingBytes(b, 4 * PLANE_BYTES);
    const dev = await b.stencil3d({ ...args, input } as unknown as Stencil3dArgs, { output: 'device', timing: true });
    expect((dev.notes ?? []).filter((n) => n.startsWith('input '))).toEqual([]);
    const h = dev.data as unknown as DeviceArray;
    expect(h.location).toBe('device');
    expect(await h.read()).toEqual(whole);
    expect(dev.timing?.kernelMs).toBeGreaterThan(0);
    const host = await b.stencil3d(args, { timing: true });
    expect(host.data).toEqual(whole);
    expect(host.timing?.uploadMs).toBeGreaterThan(0);
    expect(host.timing?.readbackMs).toBeGreaterThan(0);
    expect(host.timing?.kernelMs).toBeGreaterThan(0);
    h.dispose();
    input.dispose();
    expect(await outstanding()).toBe(0);
  });

  it('an abort between steps and a refused pass leave `out` untouched', async () => {
    const b = await backendP;
    const gpu = deviceOf(b);
    const args = stencilCase([NX, NY, NZ, 3, 'copy'], 8);
    setStencilBindingBytes(b, 5 * PLANE_BYTES);
    const out = new Float32Array(NX * NY * NZ).fill(7);
    const ac = new AbortController();
    let passes = 0;
    // Aborts while the second step's pass is encoded: the call stops before the third.
    setPassHook(gpu, (d) => {
      if (++passes === 2) ac.abort();
      return d;
    });
    try {
      await expect(b.stencil3d(args, { out, signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      setPassHook(gpu, undefined);
    }
    expect(passes).toBe(2);
    failPass(b, 2);
    await expect(b.stencil3d(args, { out })).rejects.toMatchObject({ name: 'DeviceError' });
    expect(out.every((v) => v === 7)).toBe(true);
    // The backend goes on working after both.
    const ok = await b.stencil3d(args, { out });
    expect(verifyResult('stencil3d', args, ok.data as Float32Array)).toBeUndefined();
    expect(await outstanding()).toBe(0);
  });

  it('refuses a binding that cannot hold three planes, naming the input', async () => {
    const b = await backendP;
    setStencilBindingBytes(b, 2 * PLANE_BYTES + 4);
    const err = await b.stencil3d(stencilCase([NX, NY, NZ, 1, 'copy'], 1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LimitExceededError);
    expect((err as Error).message).toMatch(/input/);
  });
});
