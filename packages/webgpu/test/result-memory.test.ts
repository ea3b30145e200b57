/**
 * Outputs of RESULT_MIN_BYTES and more reuse the memory of results the caller dropped
 * (GpuDevice.output), on the software adapter: a reused output holds the new call's result, the
 * memory of a failed call is never reused, a caller's `out` is never taken, and dispose drops
 * what is kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceError, RESULT_MIN_BYTES } from '@kernelkit/core';
import { verifyResult, type Backend } from '@kernelkit/ops';
import { collectUntil, scanCase } from '@kernelkit/ops/testing';
import { createWebGpuBackend } from '../src/index.js';
import { failPass, keptResultBytes, replaceResultMemory, resultMemoryStats } from '../src/testing.js';

const N = RESULT_MIN_BYTES / 4 + 1000;
const BYTES = N * 4;
let b: Backend;
beforeAll(async () => {
  b = await createWebGpuBackend({ adapter: 'software' });
});
afterAll(async () => {
  await b?.dispose();
});

/** A scan whose result the caller drops at once; resolves to whether it was right. */
const droppedScan = (seed: number): Promise<string | undefined> => droppedScanOn(b, seed);

/** The same on `backend`. */
const droppedScanOn = async (backend: Backend, seed: number): Promise<string | undefined> => {
  const args = scanCase('u32', N, seed);
  const r = await backend.scan(args);
  expect(r.data.buffer).toBeInstanceOf(SharedArrayBuffer);
  return verifyResult('scan', args, r.data);
};

describe('WebGPU result memory', () => {
  it("serves the next result of its size once the caller's array is collected, and that result is the new call's", async () => {
    expect(await droppedScan(1)).toBeUndefined();
    expect(await collectUntil(() => keptResultBytes(b) === BYTES)).toBe(true);
    // Reused memory still holds the first scan: the second must overwrite all of it.
    expect(await droppedScan(2)).toBeUndefined();
    expect(keptResultBytes(b)).toBe(0);
    expect(await collectUntil(() => keptResultBytes(b) === BYTES)).toBe(true);
  });

  it('never reuses the output of a failed call', async () => {
    expect(await collectUntil(() => keptResultBytes(b) === BYTES)).toBe(true);
    // The failing call takes the kept memory; it must not come back.
    failPass(b);
    await expect(b.scan(scanCase('u32', N, 3))).rejects.toBeInstanceOf(DeviceError);
    expect(await collectUntil(() => keptResultBytes(b) > 0)).toBe(false);
  });

  it("neither takes nor keeps a caller's out, nor small outputs", async () => {
    const out = new Uint32Array(N);
    const args = scanCase('u32', N, 4);
    const r = await b.scan(args, { out });
    expect(r.data).toBe(out);
    expect(verifyResult('scan', args, out)).toBeUndefined();
    const small = await b.scan(scanCase('u32', 1000, 5));
    expect(small.data.buffer).toBeInstanceOf(ArrayBuffer);
    expect(await collectUntil(() => keptResultBytes(b) > 0)).toBe(false);
  });

  it('counts the results it takes and reuses; a replaced result memory starts empty and still gives right results', async () => {
    const own = await createWebGpuBackend({ adapter: 'software' });
    try {
      expect(await droppedScanOn(own, 7)).toBeUndefined();
      expect(await collectUntil(() => keptResultBytes(own) === BYTES)).toBe(true);
      expect(await droppedScanOn(own, 8)).toBeUndefined();
      expect(resultMemoryStats(own)).toMatchObject({ takes: 2, reused: 1, keptBytes: 0 });
      expect(await collectUntil(() => keptResultBytes(own) === BYTES)).toBe(true);
      replaceResultMemory(own);
      expect(resultMemoryStats(own)).toEqual({ takes: 0, reused: 0, prompts: 0, keptBytes: 0, outstandingBytes: 0 });
      expect(await droppedScanOn(own, 9)).toBeUndefined();
      expect(resultMemoryStats(own)).toMatchObject({ takes: 1, reused: 0 });
    } finally {
      await own.dispose();
    }
  });

  it('keeps nothing once disposed', async () => {
    const own = await createWebGpuBackend({ adapter: 'software' });
    await (async () => void (await own.scan(scanCase('u32', N, 6))))();
    expect(await collectUntil(() => keptResultBytes(own) === BYTES)).toBe(true);
    await own.dispose();
    expect(keptResultBytes(own)).toBe(0);
  });
});
