import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '@kernelkit/cpu';
import type { Backend, DeviceData } from '@kernelkit/ops';
import type { BackendLoaders } from 'kernelkit';
import { mergeReports } from '../src/merge.js';
import { formatMarkdown } from '../src/output/markdown.js';
import { formatTable } from '../src/output/table.js';
import { runBench } from '../src/run.js';
import type { BenchOptions, BenchReport, Row } from '../src/types.js';

const UPLOAD_MS = 0.5;
const READBACK_MS = 0.25;

/**
 * The CPU backend dressed as a backend with device memory: `output: 'device'` returns a handle
 * that says `location: 'device'`, such handles are taken as inputs, and timed calls report
 * fixed upload and readback times. `deviceOps` limits which ops take a handle as it is; the others
 * read it back and say so, as the backend kit does.
 */
function deviceBackend(deviceOps: readonly string[]): Backend {
  const cpu = createCpuBackend();
  const held = new WeakMap<object, DeviceData>();
  const handle = (data: DeviceData) => {
    const h = {
      kind: 'device-array' as const,
      backend: 'webgpu' as const,
      dtype: data instanceof Float32Array ? 'f32' : data instanceof Uint32Array ? 'u32' : 'i32',
      length: data.length,
      location: 'device' as const,
      disposed: false,
      read: async () => data.slice(),
      dispose() {
        h.disposed = true;
      },
      [Symbol.dispose]() {
        h.dispose();
      },
    };
    held.set(h, data);
    return h;
  };
  const wrap = (op: 'conv2d' | 'scan' | 'stencil3d') => async (args: { input: unknown }, o: { output?: string; timing?: boolean } = {}) => {
    const input = held.get(args.input as object);
    const notes = input !== undefined && !deviceOps.includes(op) ? ['input read back from webgpu device memory (a DeviceArray of this backend)'] : [];
    const { output, ...rest } = o;
    const r = await (cpu[op] as (a: unknown, o: unknown) => Promise<{ data: DeviceData; notes?: readonly string[] }>)({ ...args, input: input ?? args.input }, rest);
    return {
      ...r,
      backend: 'webgpu',
      data: output === 'device' ? handle(r.data) : r.data,
      ...(o.timing ? { timing: { totalMs: 1, kernelMs: 0.1, uploadMs: UPLOAD_MS, readbackMs: READBACK_MS } } : {}),
      ...(notes.length ? { notes } : {}),
    };
  };
  return Object.assign(Object.create(cpu) as Backend, { name: 'webgpu', info: { ...cpu.info, name: 'webgpu' }, conv2d: wrap('conv2d'), scan: wrap('scan'), stencil3d: wrap('stencil3d') });
}

const unused = async (): Promise<never> => {
  throw new Error('not in this test');
};
const loaders = (webgpu: () => Promise<Backend>): BackendLoaders => ({ cpu: async () => createCpuBackend(), piscina: unused, gpujs: unused, webgpu });
// No floor probe: these tests read the transfer columns by position (floor.test.ts covers the floor's column).
const options: BenchOptions = { workload: 'tiny', ops: ['conv2d', 'scan'], backends: ['cpu', 'webgpu'], progress: false, floor: false };

const ok = (rows: readonly Row[], backend: string) => rows.filter((r): r is Extract<Row, { status: 'ok' }> => r.status === 'ok' && r.backend === backend);

describe('resident, upload and readback columns', () => {
  let report: BenchReport;

  it('a backend with device memory gets resident, upload and readback times; one without gets none', async () => {
    report = await runBench(options, { loaders: loaders(async () => deviceBackend(['conv2d', 'scan', 'stencil3d'])) });
    const gpu = ok(report.rows, 'webgpu');
    expect(gpu.length).toBeGreaterThan(0);
    for (const r of gpu) {
      expect(r.residentMedianMs).toBeGreaterThan(0);
      expect(r.residentThroughput?.unit).toBe(r.throughput.unit);
      expect(r.uploadMedianMs).toBe(UPLOAD_MS);
      expect(r.readbackMedianMs).toBe(READBACK_MS);
      expect(r.notes ?? []).toEqual([]);
    }
    for (const r of ok(report.rows, 'cpu')) {
      expect(r.residentMedianMs).toBeUndefined();
      expect(r.uploadMedianMs).toBeUndefined();
    }
    const md = formatMarkdown(report);
    expect(md).toContain('| case | backend | variant | median | resident | kernel | upload | readback |');
    const conv = gpu.find((r) => r.op === 'conv2d')!;
    const line = md.split('\n').find((l) => l.startsWith(`| ${conv.label} | webgpu | ${conv.variant} |`))!;
    const cells = line.split('|').map((c) => c.trim());
    expect(cells[5]).toMatch(/^\d+\.\d+ ms \(/); // resident, its throughput in brackets
    expect(cells[6]).toMatch(/^0\.100 ms \(/); // kernel
    expect(cells.slice(7, 9)).toEqual(['0.500 ms', '0.250 ms']);
    // A CPU row has the same number of cells, the device ones empty.
    const cpuLine = md.split('\n').find((l) => l.includes('| cpu | direct |'))!;
    expect(cpuLine.split('|').length).toBe(line.split('|').length);
    expect(cpuLine.split('|').map((c) => c.trim()).slice(5, 9)).toEqual(['', '', '', '']);
    expect(formatTable(report).split('\n')[0]).toMatch(/median +resident +kernel +upload +readback/);
  });

  it('an op that reads a device input back gets a note instead of a resident time', async () => {
    const r = await runBench({ ...options, ops: ['scan'], backends: ['webgpu'] }, { loaders: loaders(async () => deviceBackend(['stencil3d'])) });
    for (const row of ok(r.rows, 'webgpu')) {
      expect(row.residentMedianMs).toBeUndefined();
      expect(row.uploadMedianMs).toBe(UPLOAD_MS);
      expect(row.notes?.join(' ')).toMatch(/resident not measured: webgpu scan takes host arrays/);
    }
  });

  it('a backend whose DeviceArrays live in host memory gets a note, not a resident time', async () => {
    const cpuAsGpu = async (): Promise<Backend> => {
      const cpu = createCpuBackend();
      return Object.assign(Object.create(cpu) as Backend, { name: 'webgpu', info: { ...cpu.info, name: 'webgpu' } });
    };
    const r = await runBench({ ...options, ops: ['conv2d'], backends: ['webgpu'] }, { loaders: loaders(cpuAsGpu) });
    const rows = ok(r.rows, 'webgpu');
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.residentMedianMs).toBeUndefined();
      expect(row.notes?.join(' ')).toMatch(/resident not measured: .*host memory/);
    }
  });

  it('reports without the new fields keep the narrower table and merge with new ones', () => {
    const old: BenchReport = {
      ...report,
      rows: report.rows.map((r) => {
        if (r.status !== 'ok') return r;
        const { residentMedianMs: _r, residentThroughput: _t, uploadMedianMs: _u, readbackMedianMs: _b, ...rest } = r;
        return rest as Row;
      }),
    };
    const md = formatMarkdown(old);
    // The layout such reports were written with, so regenerating them changes nothing.
    expect(md).toContain('| case | backend | variant | median | p75 / p99 | first call | throughput | kernel | vs sequential | vs previous variant |');
    expect(md).not.toContain('| resident |');
    expect(md).not.toContain('the tables also show');
    expect(formatMarkdown(report)).toContain('the tables also show "resident"');
    expect(formatTable(old).split('\n')[0]).not.toContain('resident');
    const scanOnly = { ...old, rows: old.rows.filter((r) => r.op === 'scan') };
    const convNew = { ...report, rows: report.rows.filter((r) => r.op === 'conv2d') };
    const m = mergeReports([
      { name: 'old.json', report: scanOnly },
      { name: 'new.json', report: convNew },
    ]);
    expect(ok(m.rows, 'webgpu').filter((r) => r.op === 'conv2d').every((r) => r.residentMedianMs !== undefined)).toBe(true);
    expect(ok(m.rows, 'webgpu').filter((r) => r.op === 'scan').every((r) => r.residentMedianMs === undefined)).toBe(true);
    const merged = formatMarkdown(m);
    // Each op's table decides on its own: conv2d has the columns, the old scan rows do not.
    expect(merged.split('## Prefix sum')[0]).toContain('| resident |');
    expect(merged.split('## Prefix sum')[1]).not.toContain('| resident |');
  });
});
