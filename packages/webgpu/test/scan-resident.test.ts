/**
 * Scan with a DeviceArray input and `output: 'device'` on the software adapter: the input is
 * bound where it is (never read back), the result stays on the device, integer scans are
 * bit-exact and f32 within the op's tolerance, over one chunk and many (carry across chunks,
 * ragged last chunk, lengths that are not a multiple of 4), for every variant.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { scanReference, validateScan, verifyResult, type DeviceArray, type ScanArray } from '@kernelkit/ops';
import { scanInput } from '@kernelkit/ops/testing';
import { createWebGpuBackend } from '../src/index.js';
import { webgpuStats } from '../src/testing.js';

// Chunks of two RTS tiles (4096 elements): lengths past that run several chunks.
const CHUNK = 4096;
const backendP = createWebGpuBackend({ adapter: 'software', scanChunkElements: CHUNK });
afterAll(async () => (await backendP).dispose());

const VARIANTS = ['decoupled', 'decoupled-subgroups', 'blelloch', 'reduce-then-scan'] as const;
const LENGTHS = [1, 7, CHUNK, CHUNK + 3, 3 * CHUNK + 4097];

/** The kit's notes that an input was read back to the host first (what the resident path must avoid). */
const readBack = (notes: readonly string[] | undefined): string[] => (notes ?? []).filter((n) => n.startsWith('input '));

/** Handle releases run on the device's queue: a call after them sees the pool settled. */
async function settled(): Promise<number> {
  const b = await backendP;
  await b.scan({ input: new Uint32Array(1) });
  return webgpuStats(b).outBuffers;
}

/** The reference (f64 arithmetic, wrapped) in the scan's own element type. */
const as = (dtype: 'u32' | 'i32', ref: ArrayLike<number>): ScanArray => (dtype === 'u32' ? Uint32Array.from(ref) : Int32Array.from(ref));

/** A device-resident copy of an f32 array: a zero-step stencil over an n×1×1 grid returns its grid as a DeviceArray. */
async function f32OnDevice(input: Float32Array): Promise<DeviceArray> {
  const b = await backendP;
  return (await b.stencil3d({ input, nx: input.length, ny: 1, nz: 1, steps: 0 }, { output: 'device' })).data as unknown as DeviceArray;
}

describe('scan with device-resident input and output', () => {
  for (const variant of VARIANTS) {
    it(`${variant}: u32 and i32 scans of a scan's device output are bit-exact, nothing read back`, async () => {
      const b = await backendP;
      let seed = 11;
      for (const dtype of ['u32', 'i32'] as const) {
        for (const n of LENGTHS) {
          const x = scanInput(dtype, n, seed++);
          const exclusive = n % 2 === 1;
          const initial = dtype === 'u32' ? 4_000_000_000 : -123_456;
          const first = await b.scan({ input: x, exclusive, initial }, { variant, output: 'device' });
          const h = first.data as unknown as DeviceArray;
          expect(h.location).toBe('device');
          expect(h.dtype).toBe(dtype);
          const once = as(dtype, scanReference(validateScan({ input: x, exclusive, initial })));
          expect(await h.read()).toEqual(once);
          // Device in, device out; then device in, host out.
          const second = await b.scan({ input: h, initial: 5 }, { variant, output: 'device' });
          expect(readBack(second.notes)).toEqual([]);
          const h2 = second.data as unknown as DeviceArray;
          const twice = as(dtype, scanReference(validateScan({ input: once, initial: 5 })));
          expect(await h2.read(), `${dtype} n=${n}`).toEqual(twice);
          const third = await b.scan({ input: h, initial: 5 }, { variant });
          expect(readBack(third.notes)).toEqual([]);
          expect(third.data, `${dtype} n=${n} host output`).toEqual(twice);
          h.dispose();
          h2.dispose();
        }
      }
    });
  }

  it('f32 from a device array equals the reference within tolerance, with `out` and with timing', async () => {
    const b = await backendP;
    for (const n of LENGTHS) {
      const x = scanInput('f32', n, 100 + n) as Float32Array;
      const h = await f32OnDevice(x);
      const args = { input: x, exclusive: true, initial: 2.5 };
      const dev = await b.scan({ ...args, input: h }, { output: 'device', timing: true });
      expect(readBack(dev.notes)).toEqual([]);
      expect(dev.timing?.kernelMs).toBeGreaterThanOrEqual(0);
      const got = await (dev.data as unknown as DeviceArray).read();
      expect(verifyResult('scan', args, got as Float32Array), `n=${n}`).toBeUndefined();
      const out = new Float32Array(n);
      const host = await b.scan({ ...args, input: h }, { out });
      expect(host.data).toBe(out);
      expect(verifyResult('scan', args, out), `n=${n} into out`).toBeUndefined();
      (dev.data as unknown as DeviceArray).dispose();
      h.dispose();
    }
  });

  it('an input handle disposed right after the call is still what the call reads; buffers go back to the pool', async () => {
    const b = await backendP;
    const x = scanInput('u32', 3 * CHUNK + 5, 7);
    const h = (await b.scan({ input: x }, { output: 'device' })).data as unknown as DeviceArray;
    const call = b.scan({ input: h, exclusive: true });
    h.dispose();
    const r = await call;
    const once = as('u32', scanReference(validateScan({ input: x })));
    expect(r.data).toEqual(as('u32', scanReference(validateScan({ input: once, exclusive: true }))));
    expect(await settled()).toBe(0);
  });

  it('an abort between chunks of a device-output scan frees its output buffer', async () => {
    const b = await backendP;
    const x = scanInput('u32', 8 * CHUNK, 9);
    const ac = new AbortController();
    const call = b.scan({ input: x }, { output: 'device', signal: ac.signal, onProgress: () => ac.abort() });
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(await settled()).toBe(0);
  });
});
