import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortError } from '@kernelkit/core';
import { conv2dOutputLength, validateConv2d, type Backend, type GridSearchArgs, type OpName } from '@kernelkit/ops';
import { conv2dCase, convLayerCase, scanCase, stencilCase } from '@kernelkit/ops/testing';
import { createWebGpuBackend } from '../src/index.js';
import { webgpuStats } from '../src/testing.js';

/**
 * Calls that run for seconds on the software adapter, aborted ~100 ms in: each must reject with
 * AbortError soon after the abort (the work runs as short submits with an abort check between
 * them), hand every buffer back, and leave `out` as it was. The bound is generous: the test
 * machine is slow and shared; the submits themselves are sized for about 20 ms.
 */
const ABORT_AFTER_MS = 100;
const BOUND_MS = 1500;

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

interface LongCall {
  readonly args: object;
  readonly out?: Float32Array | Uint32Array;
}

const axis = { lower: 0, upper: 0.99, step: 0.01 };
const CASES: Record<OpName, () => LongCall> = {
  // The case: a small grid over many steps.
  stencil3d: () => ({ args: stencilCase([16, 16, 16, 500_000, 'copy'], 1), out: new Float32Array(16 ** 3).fill(-12345.5) }),
  // 10^8 prefixes of four 100-point axes, each with a 200 001-point last axis that no point passes.
  gridSearch: (): LongCall => {
    const args: GridSearchArgs = { dims: [axis, axis, axis, axis, { lower: -100, upper: 100, step: 0.001 }], coefficients: [1, 1, 1, 1, 1], targets: [0.0003], tolerances: [0] };
    return { args };
  },
  convLayer: () => {
    const args = convLayerCase([16, 32, 128, 128, 32, 7], 2, { bias: true });
    return { args, out: new Float32Array(16 * 32 * 122 * 122).fill(-12345.5) };
  },
  // A large batch: many images, each cheap.
  conv2d: () => {
    const args = conv2dCase([64, 512, 512, 7], 3);
    return { args, out: new Float32Array(conv2dOutputLength(validateConv2d(args))).fill(-12345.5) };
  },
  scan: () => ({ args: scanCase('u32', 2 ** 25, 4), out: new Uint32Array(2 ** 25).fill(0xdeadbeef) }),
};

type AnyCall = (args: unknown, options?: unknown) => Promise<unknown>;

describe(`every op and variant, aborted ${ABORT_AFTER_MS} ms into a call of seconds, rejects with AbortError within ${BOUND_MS} ms`, () => {
  for (const op of ['stencil3d', 'gridSearch', 'convLayer', 'conv2d', 'scan'] as const) {
    it(op, { timeout: 120_000 }, async () => {
      const c = CASES[op]();
      const sentinel = c.out?.[0];
      for (const variant of b.variants(op)) {
        const ac = new AbortController();
        const timer = setTimeout(() => ac.abort(), ABORT_AFTER_MS);
        const t0 = performance.now();
        let outcome: unknown = 'resolved';
        try {
          await (b[op] as AnyCall).call(b, c.args, { variant, signal: ac.signal, ...(c.out === undefined ? {} : { out: c.out }) });
        } catch (e) {
          outcome = e;
        } finally {
          clearTimeout(timer);
        }
        const latency = performance.now() - (t0 + ABORT_AFTER_MS);
        expect(outcome, `${op}/${variant}: finished before the abort (the case is too small)`).not.toBe('resolved');
        expect(outcome, `${op}/${variant}`).toBeInstanceOf(AbortError);
        expect(latency, `${op}/${variant}: ms from the abort to the rejection`).toBeLessThanOrEqual(BOUND_MS);
        expect(outstanding(), `${op}/${variant}: buffers not handed back`).toBe(0);
        if (c.out !== undefined) expect(c.out.every((v) => v === sentinel), `${op}/${variant}: out written`).toBe(true);
      }
    });
  }
});
