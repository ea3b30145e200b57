/**
 * Results of RESULT_MIN_BYTES and more are shared memory the backend reuses once the caller's
 * array is collected (src/outputs.ts): every result is right although its memory held an earlier
 * one, and an aborted call's result is never handed out.
 */
import { describe, expect, it } from 'vitest';
import { AbortError, RESULT_MIN_BYTES } from '@kernelkit/core';
import { verifyResult } from '@kernelkit/ops';
import { collectUntil, convLayerCase, scanCase } from '@kernelkit/ops/testing';
import { createCpuBackend } from '../src/index.js';

// Collection decides when a dropped result's memory comes back: a few rounds before each next call.
const collect = (): Promise<boolean> => collectUntil(() => false, 3);

describe('cpu result memory', () => {
  it('gives right results on reused memory, for each op and variant that makes one', async () => {
    const b = createCpuBackend();
    // A conv layer whose output is just over RESULT_MIN_BYTES (2 images × 8 maps × 128²).
    const layer = (seed: number) => convLayerCase([2, 1, 130, 130, 8, 3], seed, { bias: true });
    expect(2 * 8 * 128 * 128 * 4).toBeGreaterThanOrEqual(RESULT_MIN_BYTES);
    for (const variant of b.variants('convLayer')) {
      for (let seed = 1; seed <= 3; seed++) {
        const args = layer(seed);
        const r = await b.convLayer(args, { variant });
        expect(r.data.buffer).toBeInstanceOf(SharedArrayBuffer);
        expect(verifyResult('convLayer', args, r.data)).toBeUndefined();
        await collect();
      }
    }
    for (const variant of b.variants('scan')) {
      for (let seed = 1; seed <= 3; seed++) {
        const args = scanCase('u32', RESULT_MIN_BYTES / 4, seed);
        expect(verifyResult('scan', args, (await b.scan(args, { variant })).data)).toBeUndefined();
        await collect();
      }
    }
    await b.dispose();
  });

  it('an aborted call hands out nothing, and the next result is right', async () => {
    const b = createCpuBackend();
    const big = scanCase('u32', 2 ** 24, 5);
    const ac = new AbortController();
    const call = b.scan(big, { signal: ac.signal });
    ac.abort();
    await expect(call).rejects.toBeInstanceOf(AbortError);
    await collect();
    const args = scanCase('u32', 2 ** 24, 6);
    expect(verifyResult('scan', args, (await b.scan(args)).data)).toBeUndefined();
    await b.dispose();
  });
});
