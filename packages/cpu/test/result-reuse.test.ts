/**
 * Results of RESULT_MIN_BYTES and more are shared memory the backend reuses once the caller's
 * array is collected (src/outputs.ts): every result is right although its memory held an earlier
 * one, and an aborted call's result is never handed out.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { AbortError } from '@kernelkit/core';
import { verifyResult } from '@kernelkit/ops';
import { convLayerCase, scanCase } from '@kernelkit/ops/testing';
import { createCpuBackend } from '../src/index.js';
import { RESULT_MIN_BYTES } from '../src/outputs.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const collect = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 5));
  }
};

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
