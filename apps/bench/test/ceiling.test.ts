import { describe, expect, it } from 'vitest';
import { aluProbeModuleBytes, ceilingLine, measureComputeCeiling, oneThreadGflops, type ComputeCeiling } from '../src/ceiling.js';
import { formatMarkdown } from '../src/output/markdown.js';
import { formatTable } from '../src/output/table.js';
import type { BenchReport } from '../src/types.js';

/** The parts of the WebAssembly API the test uses (the project's TypeScript libs do not declare it). */
const WebAssembly = (globalThis as unknown as { WebAssembly: { validate(b: Uint8Array): boolean; Module: new (b: Uint8Array) => object; Instance: new (m: object, i: object) => { exports: unknown } } }).WebAssembly;

const CEILING: ComputeCeiling = { threads: 2, samples: 5, iterations: 1000, oneThreadMs: 40, allThreadsMs: 41.45, speedup: (2 * 40) / 41.45 };

describe('compute ceiling', () => {
  it('the probe module validates and runs its chains: each converges to c / (1 − m) = 1, so 12 chains sum to 12', () => {
    const bytes = aluProbeModuleBytes();
    expect(WebAssembly.validate(bytes)).toBe(true);
    const { alu } = new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports as { alu: (n: number) => number };
    // One step from the start values 1 + i/16 (i = 1..12): Σ (0.999·(1 + i/16) + 0.001).
    let one = 0;
    for (let i = 1; i <= 12; i++) one += Math.fround(Math.fround(Math.fround(0.999) * Math.fround(1 + i / 16)) + Math.fround(0.001));
    expect(alu(1)).toBeCloseTo(one, 4);
    expect(alu(100_000)).toBeCloseTo(12, 2);
  });

  it('measures one thread and all threads at once, the same iterations each', async () => {
    const c = (await measureComputeCeiling(2, 3))!;
    expect(c).toMatchObject({ threads: 2, samples: 5 });
    expect(c.iterations).toBeGreaterThanOrEqual(200_000);
    for (const v of [c.oneThreadMs, c.allThreadsMs]) expect(v).toBeGreaterThan(0);
    expect(c.speedup).toBeCloseTo((2 * c.oneThreadMs) / c.allThreadsMs, 12);
  });

  it('the report header prints it beside the memory floor; reports without it have no line', () => {
    expect(ceilingLine(CEILING)).toMatch(/^2-thread compute ceiling: 1\.93× in this run \(.*40\.0 ms on one thread, 41\.5 ms with each of 2 threads/);
    // 1000 iterations × 12 chains × 4 lanes × 2 flops in 40 ms.
    expect(oneThreadGflops(CEILING)).toBeCloseTo(0.0024, 10);
    // The 2-core dev VM's probe of 2026-11-29: 9 803 081 iterations in 19.016 ms.
    const vm = { ...CEILING, iterations: 9_803_081, oneThreadMs: 19.016 };
    expect(ceilingLine(vm)).toContain("One thread's 128-bit multiply-then-add peak: 49.5 GFLOP/s");
    const floor = { bytes: 8 << 20, threads: 2, samples: 3, copyGBps: 10, freshWriteGBps: 1.5, freshWriteAllThreadsGBps: 4 };
    const report = (withCeiling: boolean): BenchReport => ({
      schema: 'kernelkit-bench/1', date: '2026-01-01T00:00:00.000Z', workload: 'tiny',
      machine: { cpu: 'test cpu', cores: 2, memoryGiB: 8, os: 'linux', node: 'v20', hostname: 'h' },
      backends: [], rows: [], wallMs: 10, checkPolicy: 'checked.',
      floor: withCeiling ? { ...floor, computeCeiling: CEILING } : floor,
    });
    expect(formatMarkdown(report(true))).toContain('\n2-thread compute ceiling: 1.93× in this run');
    expect(formatTable(report(true))).toContain('\n2-thread compute ceiling: 1.93× in this run');
    expect(formatMarkdown(report(false))).not.toContain('compute ceiling');
    expect(formatTable(report(false))).not.toContain('compute ceiling');
  });
});
