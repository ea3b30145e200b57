import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '@kernelkit/core';
import {
  conv2dReference,
  convLayerReference,
  opTolerance,
  allowedError,
  Rng,
  sampledReference,
  sampleIndices,
  scanReference,
  stencil3dReference,
  validateConv2d,
  validateConvLayer,
  validateScan,
  validateStencil3d,
  verifySampled,
  type OpArgs,
  type SampledOp,
} from '../src/index.js';
import { conv2dCase, convLayerCase, scanCase, stencilCase } from '../src/testing/data.js';

/** Full reference and its magnitude (the reference on absolute values), as verifyResult computes them. */
function full<O extends SampledOp>(op: O, args: OpArgs<O>): { want: Float64Array; mag: Float64Array; exact: boolean; bound: (mag: number) => number } {
  switch (op) {
    case 'conv2d': {
      const p = validateConv2d(args as OpArgs<'conv2d'>);
      return { want: conv2dReference(p), mag: conv2dReference(p, true), exact: false, bound: (m) => allowedError(opTolerance('conv2d', p)!, m) };
    }
    case 'convLayer': {
      const p = validateConvLayer(args as OpArgs<'convLayer'>);
      return { want: convLayerReference(p), mag: convLayerReference(p, true), exact: false, bound: (m) => allowedError(opTolerance('convLayer', p)!, m) };
    }
    case 'stencil3d': {
      const p = validateStencil3d(args as OpArgs<'stencil3d'>);
      return { want: stencil3dReference(p), mag: stencil3dReference(p, true), exact: false, bound: (m) => allowedError(opTolerance('stencil3d', p)!, m) };
    }
    default: {
      const p = validateScan(args as OpArgs<'scan'>);
      const tol = opTolerance('scan', p);
      return { want: scanReference(p), mag: scanReference(p, true), exact: tol === undefined, bound: (m) => (tol === undefined ? 0 : allowedError(tol, m)) };
    }
  }
}

/** The sampled reference at random indices equals the full reference there, value and bound. */
function expectMatchesFull<O extends SampledOp>(op: O, args: OpArgs<O>, seed: number): void {
  const f = full(op, args);
  const rng = new Rng(seed);
  const indices = [0, f.want.length - 1, ...Array.from({ length: 40 }, () => rng.int(0, f.want.length - 1))];
  const got = sampledReference(op, args, indices);
  expect(got.map((s) => s.index)).toEqual(indices);
  for (const s of got) {
    // Same terms in the same order as the full reference: equal to the last bit.
    expect(s.value, `${op} value at ${s.index}`).toBe(f.want[s.index]);
    expect(s.bound, `${op} bound at ${s.index}`).toBe(f.bound(f.mag[s.index]!));
    if (f.exact) expect(s.bound).toBe(0);
  }
}

describe('sampledReference agrees with the full f64 reference at random indices', () => {
  it('conv2d', () => {
    for (const [i, c] of ([[1, 9, 7, 3], [2, 5, 8, 5], [1, 4, 4, 7], [3, 6, 1, 1]] as const).entries()) expectMatchesFull('conv2d', conv2dCase(c, 20 + i), i);
  });
  it('convLayer, with and without bias and ReLU', () => {
    expectMatchesFull('convLayer', convLayerCase([2, 3, 9, 8, 4, 3], 31), 1);
    expectMatchesFull('convLayer', convLayerCase([1, 2, 7, 7, 3, 7], 32, { bias: true }), 2);
    expectMatchesFull('convLayer', convLayerCase([3, 1, 6, 5, 2, 1], 33, { bias: true, relu: true }), 3);
  });
  it('stencil3d: both boundaries, 0 to 4 steps, non-cubic grids, f32 and f64', () => {
    expectMatchesFull('stencil3d', stencilCase([9, 7, 6, 3, 'copy'], 41), 1);
    expectMatchesFull('stencil3d', stencilCase([8, 8, 8, 4, 'zero'], 42), 2);
    expectMatchesFull('stencil3d', stencilCase([5, 6, 7, 0, 'zero'], 43), 3);
    expectMatchesFull('stencil3d', stencilCase([12, 3, 4, 2, 'copy'], 44, 'f64'), 4);
    expectMatchesFull('stencil3d', stencilCase([2, 2, 2, 5, 'zero'], 45), 5);
  });
  it('scan: every dtype, inclusive and exclusive, with a carry-in', () => {
    expectMatchesFull('scan', scanCase('u32', 3001, 51, false, 4_000_000_000), 1);
    expectMatchesFull('scan', scanCase('i32', 2000, 52, true, -5), 2);
    expectMatchesFull('scan', scanCase('f32', 5000, 53, false, 2.5), 3);
    expectMatchesFull('scan', scanCase('f64', 777, 54, true, -1.25), 4);
  });
});

describe('verifySampled', () => {
  it('passes the reference rounded to f32 and names a corrupted sample', () => {
    const args = convLayerCase([2, 3, 10, 10, 4, 3], 61, { bias: true });
    const out = Float32Array.from(convLayerReference(validateConvLayer(args)));
    expect(verifySampled('convLayer', args, out, 500)).toBeUndefined();
    const bad = sampleIndices(out.length, 500)[7]!;
    out[bad] = out[bad]! + 0.01;
    expect(verifySampled('convLayer', args, out, 500)).toMatch(new RegExp(`^\\[${bad}\\] got`));
  });
  it('integer scans are bit-exact; a wrong length is reported', () => {
    const args = scanCase('u32', 1000, 62);
    const out = Uint32Array.from(scanReference(validateScan(args)));
    expect(verifySampled('scan', args, out)).toBeUndefined();
    out[999] = out[999]! + 1;
    expect(verifySampled('scan', args, out)).toMatch(/\[999\].*bit-exact/);
    expect(verifySampled('scan', args, out.subarray(1))).toMatch(/length 999, expected 1000/);
  });
  it('stencil3d: a wrong boundary rule is caught', () => {
    const args = stencilCase([10, 9, 8, 2, 'copy'], 63);
    const out = Float32Array.from(stencil3dReference(validateStencil3d(args)));
    expect(verifySampled('stencil3d', args, out)).toBeUndefined();
    const zero = Float32Array.from(stencil3dReference(validateStencil3d({ ...args, boundary: 'zero' })));
    expect(verifySampled('stencil3d', args, zero)).toBeDefined();
  });
});

describe('sampleIndices and bad input', () => {
  it('is deterministic, sorted, unique, and keeps the first and last index', () => {
    const a = sampleIndices(1000, 50, 3);
    expect(a).toEqual(sampleIndices(1000, 50, 3));
    expect(a[0]).toBe(0);
    expect(a.at(-1)).toBe(999);
    expect(a.every((v, i) => i === 0 || v > a[i - 1]!)).toBe(true);
  });
  it('refuses an index outside the output, naming it', () => {
    const args = conv2dCase([1, 4, 4, 3], 1);
    expect(() => sampledReference('conv2d', args, [0, 16])).toThrow(InvalidArgumentError);
    expect(() => sampledReference('conv2d', args, [0, 16])).toThrow(/indices\[1\]/);
    expect(() => sampledReference('gridSearch' as SampledOp, args as never, [0])).toThrow(/op/);
  });
});
