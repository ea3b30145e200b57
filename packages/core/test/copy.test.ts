import { describe, expect, it } from 'vitest';
import { copyInto, NATIVE_COPY_MIN_BYTES } from '../src/index.js';

const big = NATIVE_COPY_MIN_BYTES / 4 + 37;
const filled = (a: Float32Array): Float32Array => {
  for (let i = 0; i < a.length; i++) a[i] = i * 0.5 - 3;
  return a;
};
const shared = (n: number): Float32Array => new Float32Array(new SharedArrayBuffer(n * 4));

describe('copyInto', () => {
  for (const [name, makeTarget, makeSource] of [
    ['ordinary → shared', shared, (n: number) => new Float32Array(n)],
    ['shared → ordinary', (n: number) => new Float32Array(n), shared],
    ['shared → shared', shared, shared],
    ['ordinary → ordinary', (n: number) => new Float32Array(n), (n: number) => new Float32Array(n)],
  ] as const) {
    it(`copies ${name} at an offset, large and small, and leaves the rest alone`, () => {
      for (const n of [big, 5]) {
        const source = filled(makeSource(n));
        const target = makeTarget(n + 11).fill(9);
        copyInto(target, source, 7);
        expect(Array.from(target.subarray(7, 7 + n))).toEqual(Array.from(source));
        expect(Array.from(target.subarray(0, 7))).toEqual(new Array(7).fill(9));
        expect(Array.from(target.subarray(7 + n))).toEqual(new Array(4).fill(9));
      }
    });
  }

  it('copies from a view into part of a shared buffer (byte offsets on both sides)', () => {
    const whole = filled(new Float32Array(big + 8));
    const target = new Float32Array(new SharedArrayBuffer((big + 16) * 4), 16, big + 8);
    copyInto(target, whole.subarray(3, 3 + big), 1);
    expect(target[1]).toBe(whole[3]);
    expect(target[big]).toBe(whole[big + 2]);
  });

  it('refuses a range past the end, as set does, and writes nothing', () => {
    const target = shared(big).fill(1);
    expect(() => copyInto(target, filled(new Float32Array(big)), 1)).toThrow(RangeError);
    expect(target.every((v) => v === 1)).toBe(true);
  });

  it('converts between element types as set does (no byte copy)', () => {
    const source = new Int32Array(new SharedArrayBuffer(big * 4)).fill(3);
    const target = new Float32Array(big);
    copyInto(target, source as unknown as Float32Array);
    expect(target[0]).toBe(3);
    expect(target[big - 1]).toBe(3);
  });
});
