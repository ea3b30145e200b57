import { describe, expect, it } from 'vitest';
import { nomineePoints } from '../src/ops/grid-search.js';

describe('grid search nominees', () => {
  it('orders (prefix, offset) pairs as the grid does, whatever order the kernel recorded them in', () => {
    const inner = 2 ** 24;
    const pairs: [number, number][] = [];
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let i = 0; i < 5000; i++) pairs.push([rand(8200), rand(inner)]);
    pairs.push([8199, inner - 1], [0, 0], [3, 5], [3, 4]);
    const recs = new Uint32Array(pairs.flat());
    const expected = [...pairs].sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([pre, off]) => pre * inner + off);
    expect(Array.from(nomineePoints(recs, pairs.length, inner))).toEqual(expected);
  });

});
