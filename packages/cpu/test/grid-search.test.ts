import { describe, expect, it } from 'vitest';
import { CS610_DISP_PATH, CS610_GRID_PATH, compareGridPoints, formatCs610Results, readCs610Problem, reduceGrid } from '@kernelkit/ops';
import { LimitExceededError } from '@kernelkit/core';
import { createCpuBackend } from '../src/index.js';

describe('CS610 grid search on the CPU backend', () => {
  it('brute force, pruned and wasm-simd agree point for point on 8 steps per dimension (8^10 ≈ 1.07e9 points)', async () => {
    await using cpu = createCpuBackend();
    const args = reduceGrid(await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH), 8);
    const naive = await cpu.gridSearch(args, { variant: 'naive' });
    for (const variant of ['pruned', 'wasm-simd']) {
      const pruned = await cpu.gridSearch(args, { variant });
      expect(pruned.variant).toBe(variant);
      expect(pruned.data.count).toBe(9316);
      expect(compareGridPoints(pruned.data, naive.data)).toBeUndefined();
      expect(formatCs610Results(pruned.data)).toBe(formatCs610Results(naive.data));
    }
  }, 600_000);

  it('the full 13^10 search with pruning finds 11 608 points, the same on the JavaScript and the WebAssembly kernels', async () => {
    await using cpu = createCpuBackend();
    const problem = await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH);
    const res = await cpu.gridSearch(problem, { variant: 'wasm-simd' });
    expect(res.data.count).toBe(11608);
    const text = formatCs610Results(res.data);
    expect(text.split('\n')[0]).toMatch(/^(\d+\.\d{6}\t){9}\d+\.\d{6}$/);
    expect(compareGridPoints(res.data, (await cpu.gridSearch(problem, { variant: 'pruned' })).data)).toBeUndefined();
  }, 300_000);

  it('aborts a long search promptly', async () => {
    await using cpu = createCpuBackend();
    const ac = new AbortController();
    const run = cpu.gridSearch(await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH), { variant: 'naive', signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    await expect(run).rejects.toMatchObject({ code: 'ERR_KERNELKIT_ABORTED' });
  });

  it('aborts a long search on the WebAssembly kernels promptly, and reports progress in grid points until then', async () => {
    await using cpu = createCpuBackend();
    // Eight axes of 0..19 summing to 76.5 ± 0.1: no point passes, and the bounds prune little.
    const args = { dims: Array.from({ length: 8 }, () => ({ lower: 0, upper: 19, step: 1 })), coefficients: new Array(8).fill(1), targets: [76.5], tolerances: [0.1] };
    const ac = new AbortController();
    const seen: number[] = [];
    const run = cpu.gridSearch(args, { variant: 'wasm-simd', signal: ac.signal, onProgress: (p) => seen.push(p.done / p.total) });
    setTimeout(() => ac.abort(), 100);
    const t0 = performance.now();
    await expect(run).rejects.toMatchObject({ code: 'ERR_KERNELKIT_ABORTED' });
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(seen.length).toBeGreaterThan(1);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1]!);
    expect(seen.at(-1)).toBeGreaterThan(0);
    expect(seen.at(-1)).toBeLessThan(1);
  });

  it('refuses more than maxPoints results with LimitExceededError', async () => {
    await using cpu = createCpuBackend();
    const args = { dims: [{ lower: 0, upper: 100, step: 1 }], coefficients: [], targets: [], tolerances: [], maxPoints: 10 };
    await expect(cpu.gridSearch(args)).rejects.toBeInstanceOf(LimitExceededError);
  });
});
