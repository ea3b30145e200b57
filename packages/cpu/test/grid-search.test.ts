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

  it('refuses more than maxPoints results with LimitExceededError', async () => {
    await using cpu = createCpuBackend();
    const args = { dims: [{ lower: 0, upper: 100, step: 1 }], coefficients: [], targets: [], tolerances: [], maxPoints: 10 };
    await expect(cpu.gridSearch(args)).rejects.toBeInstanceOf(LimitExceededError);
  });
});
