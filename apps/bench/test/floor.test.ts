import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '@kernelkit/cpu';
import type { BackendLoaders } from 'kernelkit';
import { parseBenchArgs } from '../src/args.js';
import { FLOOR_PROBE_BYTES, floorMs, measureFloor, vsFloor, type MemoryFloor } from '../src/floor.js';
import { mergeReports } from '../src/merge.js';
import { formatMarkdown } from '../src/output/markdown.js';
import { formatTable } from '../src/output/table.js';
import { runBench } from '../src/run.js';
import type { BenchOptions, BenchReport, Row } from '../src/types.js';

const RESULTS = fileURLToPath(new URL('../../../benchmarks/results/', import.meta.url));

const unused = async (): Promise<never> => {
  throw new Error('only the cpu backend runs in these tests');
};
const loaders: BackendLoaders = { cpu: async () => createCpuBackend(), piscina: unused, webgpu: unused, gpujs: unused };
const base: BenchOptions = { workload: 'tiny', ops: ['scan'], backends: ['cpu'], cases: ['scan-10k-u32'], progress: false };

// 4 GB/s on all threads: 4 MB of output take 1 ms to write.
const FLOOR: MemoryFloor = { bytes: 8 << 20, threads: 4, samples: 3, copyGBps: 10, freshWriteGBps: 1.5, freshWriteAllThreadsGBps: 4 };

const okRow = (medianMs: number, outputBytes: number | undefined): Row => ({
  op: 'convLayer', caseId: 'c', label: 'case c', backend: 'cpu', variant: 'v', status: 'ok', software: false, firstCallMs: medianMs,
  stats: { samples: 3, medianMs, meanMs: medianMs, p75Ms: medianMs, p99Ms: medianMs, minMs: medianMs, maxMs: medianMs },
  throughput: { value: 1, unit: 'GFLOP/s' }, check: 'f64', ...(outputBytes === undefined ? {} : { outputBytes }),
});

const report = (rows: readonly Row[], floor?: MemoryFloor): BenchReport => ({
  schema: 'kernelkit-bench/1', date: '2026-01-01T00:00:00.000Z', workload: 'tiny',
  machine: { cpu: 'test cpu', cores: 4, memoryGiB: 8, os: 'linux', node: 'v20', hostname: 'h' },
  backends: [{ backend: 'cpu', status: 'ok', startMs: 1 }], rows, wallMs: 10, checkPolicy: 'checked.',
  ...(floor ? { floor } : {}),
});

describe('memory floor', () => {
  it('the probe returns positive speeds and records its size and threads', async () => {
    const f = await measureFloor(1 << 20, 2);
    expect(f).toMatchObject({ bytes: 1 << 20, threads: 2, samples: 3 });
    for (const v of [f.copyGBps, f.freshWriteGBps, f.freshWriteAllThreadsGBps]) {
      expect(Number.isFinite(v)).toBe(true);
      expect(v).toBeGreaterThan(0.01);
      // Over 10 TB/s would mean the probe timed nothing.
      expect(v).toBeLessThan(10_000);
    }
  });

  it('probe sizes: 256 MiB on seed, 32 MiB on small, 8 MiB on tiny', () => {
    expect(FLOOR_PROBE_BYTES).toEqual({ seed: 256 << 20, small: 32 << 20, tiny: 8 << 20 });
  });

  it('vs floor is the median over the output written at the faster fresh-write speed', () => {
    expect(floorMs(4e6, FLOOR)).toBeCloseTo(1, 12);
    expect(vsFloor(3.2, 4e6, FLOOR)).toBeCloseTo(3.2, 12);
    // One thread faster than all of them (a busy machine): the floor is the faster one.
    expect(floorMs(4e6, { ...FLOOR, freshWriteGBps: 8 })).toBeCloseTo(0.5, 12);
  });

  it('markdown and stdout tables get a "vs floor" column and the probe paragraph', () => {
    const r = report([okRow(3.2, 4e6), okRow(25, 4e6), okRow(5, undefined)], FLOOR);
    const md = formatMarkdown(r);
    expect(md).toContain('Memory floor (measured once in this run');
    expect(md).toContain('| case | backend | variant | median | vs floor | p75 / p99 |');
    expect(md).toContain('| case c | cpu | v | 3.200 ms | 3.2× |');
    expect(md).toContain('| case c | cpu | v | 25.0 ms | 25× |');
    // No output array (grid search): an empty cell.
    expect(md).toContain('| case c | cpu | v | 5.000 ms |  |');
    const table = formatTable(r);
    expect(table).toMatch(/median\s+vs floor/);
    expect(table).toContain('3.2×');
    expect(table).toContain('Memory floor (8 MiB)');
  });

  it('reports without a floor keep their layout', () => {
    const md = formatMarkdown(report([okRow(3.2, 4e6)]));
    expect(md).not.toContain('vs floor');
    expect(md).not.toContain('Memory floor');
    expect(md).toContain('| case | backend | variant | median | p75 / p99 |');
    expect(formatTable(report([okRow(3.2, 4e6)]))).not.toContain('floor');
  });

  it('the committed bench reports regenerate to their committed markdown', () => {
    const files = readdirSync(RESULTS).filter((f) => f.endsWith('.json') && !/^(webgpu|piscina|gpujs)-/.test(f));
    let compared = 0;
    for (const f of files) {
      const r = JSON.parse(readFileSync(join(RESULTS, f), 'utf8')) as BenchReport;
      if (r.schema !== 'kernelkit-bench/1') continue;
      expect(formatMarkdown(r), f).toBe(readFileSync(join(RESULTS, f.replace(/\.json$/, '.md')), 'utf8'));
      compared++;
    }
    expect(compared).toBeGreaterThan(0);
  });

  it('merge keeps the floor of the last part that has one', () => {
    const later = { ...FLOOR, copyGBps: 20 };
    const parts = (reports: BenchReport[]) => reports.map((r, i) => ({ name: `p${i}`, report: r }));
    expect(mergeReports(parts([report([], FLOOR), report([], later)])).floor).toEqual(later);
    expect(mergeReports(parts([report([], FLOOR), report([])])).floor).toEqual(FLOOR);
    expect(mergeReports(parts([report([]), report([])]))).not.toHaveProperty('floor');
  });

  it('--no-floor skips the probe; by default runBench measures it and rows carry their output bytes', async () => {
    expect(parseBenchArgs([], false).floor).toBe(true);
    expect(parseBenchArgs(['--no-floor'], false).floor).toBe(false);
    const without = await runBench({ ...base, floor: false }, { loaders });
    expect(without).not.toHaveProperty('floor');
    const r = await runBench({ ...base, threads: 2 }, { loaders });
    expect(r.floor).toMatchObject({ bytes: 8 << 20, threads: 2, computeCeiling: { threads: 2 } });
    const row = r.rows[0]!;
    // scan-10k-u32: 10 000 u32 out.
    expect(row.status === 'ok' && row.outputBytes).toBe(40_000);
  });
});
