import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '@kernelkit/core';
import { conv2dReference, gridSearchReference, scanReference, stencil3dReference, validateConv2d, validateGridSearch, validateScan, validateStencil3d } from '../src/index.js';

describe('references', () => {
  it('conv2d: a centred delta filter copies the image; ghost cells are zero', () => {
    const input = Float32Array.from({ length: 12 }, (_, i) => i + 1);
    const delta = new Float32Array(9);
    delta[4] = 1;
    expect(Array.from(conv2dReference(validateConv2d({ input, filter: delta, height: 3, width: 4, k: 3 })))).toEqual(Array.from(input));
    const shiftLeft = new Float32Array(9);
    shiftLeft[5] = 1; // f[0][+1]: out[y][x] = in[y][x+1]
    expect(Array.from(conv2dReference(validateConv2d({ input, filter: shiftLeft, height: 3, width: 4, k: 3 })))).toEqual([2, 3, 4, 0, 6, 7, 8, 0, 10, 11, 12, 0]);
  });
  it('stencil3d: zero policy zeroes the boundary; copy keeps it', () => {
    const input = new Float64Array(27).fill(1);
    const zero = stencil3dReference(validateStencil3d({ input, nx: 3 }));
    expect(zero[13]).toBeCloseTo(6 * 0.8, 12);
    expect(zero.filter((v) => v === 0)).toHaveLength(26);
    const copy = stencil3dReference(validateStencil3d({ input, nx: 3, boundary: 'copy' }));
    expect(Array.from(copy).every((v) => Math.abs(v - 1) < 1e-15)).toBe(true);
  });
  it('scan: u32 wraps modulo 2^32, i32 wraps two’s complement, exclusive shifts', () => {
    expect(Array.from(scanReference(validateScan({ input: new Uint32Array([0xffffffff, 2, 3]) })))).toEqual([0xffffffff, 1, 4]);
    expect(Array.from(scanReference(validateScan({ input: new Int32Array([0x7fffffff, 1]) })))).toEqual([0x7fffffff, -0x80000000]);
    expect(Array.from(scanReference(validateScan({ input: new Int32Array([1, 2, 3]), exclusive: true, initial: 10 })))).toEqual([10, 11, 13]);
  });
  it('gridSearch: lexicographic order, x1 slowest, bounds inclusive', () => {
    const r = gridSearchReference(validateGridSearch({ dims: [{ lower: 0, upper: 3, step: 1 }, { lower: 0, upper: 3, step: 1 }], coefficients: [1, 1], targets: [2], tolerances: [0] }));
    expect(r.count).toBe(3);
    expect(Array.from(r.points)).toEqual([0, 2, 1, 1, 2, 0]);
  });
  it('gridSearch: count = floor((upper - lower)/step)', () => {
    const p = validateGridSearch({ dims: [{ lower: 0.5, upper: 7, step: 0.5 }], coefficients: [], targets: [], tolerances: [] });
    expect(p.counts).toEqual([13]);
    expect(p.axes[0]![12]).toBe(6.5);
  });
});

describe('validation messages name the parameter', () => {
  it.each([
    [() => validateConv2d({ input: new Float32Array(4), filter: new Float32Array(4), height: 2, width: 2, k: 2 }), 'k', /must be odd/],
    [() => validateConv2d({ input: new Float32Array(3), filter: new Float32Array(1), height: 2, width: 2, k: 1 }), 'input', /expected length 4 \(batch\*height\*width\), got 3/],
    [() => validateStencil3d({ input: new Float32Array(8), nx: 2, steps: 1.5 }), 'steps', /expected an integer, got 1.5/],
    [() => validateScan({ input: new Uint32Array(2), initial: 2 ** 32 }), 'initial', /must be <= 4294967295/],
    [() => validateGridSearch({ dims: [{ lower: 0, upper: 1, step: 0 }], coefficients: [], targets: [], tolerances: [] }), 'dims[0].step', /must be > 0/],
  ])('%#', (fn, parameter, message) => {
    try {
      fn();
      expect.fail('should throw');
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect((e as InvalidArgumentError).parameter).toBe(parameter);
      expect((e as Error).message).toMatch(message);
    }
  });
});
