import { describe, expect, it } from 'vitest';
import { AbortError } from '@kernelkit/core';
import { createBackend, type OpTable } from '../src/backend-kit.js';
import { GRID_AXIS_VALUES_LIMIT, validateGridSearch } from '../src/grid-search/validate.js';

const hugeAxis = { dims: [{ lower: 0, upper: GRID_AXIS_VALUES_LIMIT, step: 1 }], coefficients: [1], targets: [-1], tolerances: [0] };
const arrayBytes = (): number => process.memoryUsage().arrayBuffers;

describe('nothing proportional to the grid before the work starts', () => {
  it('validating a grid with the largest axis allocates no axis values until problem.axes is read', () => {
    const before = arrayBytes();
    const p = validateGridSearch(hugeAxis);
    expect(p.counts).toEqual([GRID_AXIS_VALUES_LIMIT]);
    expect(arrayBytes() - before).toBeLessThan(2 ** 20);
  });

  it('an already-aborted call rejects with AbortError before any runner or large allocation', async () => {
    const never = () => {
      throw new Error('the runner must not be reached');
    };
    const ops = Object.fromEntries(['conv2d', 'stencil3d', 'scan', 'gridSearch', 'convLayer'].map((op) => [op, { defaultVariant: 'only', variants: { only: never } }])) as unknown as OpTable;
    const backend = createBackend({ name: 'cpu', info: { name: 'cpu', description: 'test', software: true, capabilities: { f64: true } }, ops, release: () => {} });
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    const before = arrayBytes();
    await expect(backend.gridSearch(hugeAxis, { signal: ac.signal })).rejects.toBeInstanceOf(AbortError);
    expect(arrayBytes() - before).toBeLessThan(2 ** 20);
    await backend.dispose();
  });
});
