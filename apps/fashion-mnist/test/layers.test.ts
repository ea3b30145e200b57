import { describe, expect, it } from 'vitest';
import { argmaxRows, dense, maxPoolCeil } from '../src/layers.js';
import { resizeBilinear } from '../src/resize.js';

describe('resizeBilinear (align corners)', () => {
  it('keeps the corners, scales to 0..1 and interpolates linearly in between', () => {
    // 2×2 source → 3×3: the centre is the mean of the four, edge midpoints the mean of two.
    const out = resizeBilinear({ pixels: Uint8Array.from([0, 255, 51, 102]), start: 0, count: 1, inH: 2, inW: 2, outH: 3, outW: 3 });
    expect(Array.from(out, (v) => Math.round(v * 255 * 4) / 4)).toEqual([0, 127.5, 255, 25.5, 102, 178.5, 51, 76.5, 102]);
  });

  it('resizes the requested image of a batch', () => {
    const px = Uint8Array.from([...new Array<number>(4).fill(10), ...new Array<number>(4).fill(200)]);
    const out = resizeBilinear({ pixels: px, start: 1, count: 1, inH: 2, inW: 2, outH: 5, outW: 5 });
    for (const v of out) expect(v).toBeCloseTo(200 / 255, 6);
  });
});

describe('maxPoolCeil', () => {
  it('pools 34 → 9 with the last window covering only rows and columns 32..33', () => {
    const h = 34;
    const input = new Float32Array(h * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < h; x++) input[y * h + x] = y * 100 + x;
    const out = maxPoolCeil(input, 1, h, h, 4);
    expect(out.length).toBe(81);
    expect(out[0]).toBe(303); // rows 0..3, cols 0..3
    expect(out[8]).toBe(333); // rows 0..3, cols 32..33
    expect(out[80]).toBe(3333); // rows 32..33, cols 32..33
    expect(out[9 * 7 + 2]).toBe(3111); // rows 28..31, cols 8..11
  });

  it('pools 2×2 over several planes', () => {
    expect(Array.from(maxPoolCeil(Float32Array.from([1, 5, 2, 3, -1, -2, -3, -4]), 2, 2, 2, 2))).toEqual([5, -1]);
  });
});

describe('dense and argmax', () => {
  it('computes bias + W·x with optional ReLU, weights [out][in]', () => {
    const x = Float32Array.from([1, 2, 3, -1, 0, 1]);
    const w = Float32Array.from([1, 0, 0, 0, 1, -1]);
    const b = Float32Array.from([0.5, 0]);
    expect(Array.from(dense(x, 2, 3, w, b, 2, false))).toEqual([1.5, -1, -0.5, -1]);
    expect(Array.from(dense(x, 2, 3, w, b, 2, true))).toEqual([1.5, 0, 0, 0]);
    expect(Array.from(argmaxRows(Float32Array.from([0, 3, 1, 7, 2, 2]), 2, 3))).toEqual([1, 0]);
  });
});
