import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '@kernelkit/cpu';
import type { Backend, BackendName } from '@kernelkit/ops';
import type { BackendLoaders } from 'kernelkit';
import { UsageError } from 'kernelkit/cli-kit';
import { formatMarkdown } from '../src/output/markdown.js';
import { renderCharts } from '../src/output/svg.js';
import { formatTable } from '../src/output/table.js';
import { runBench } from '../src/run.js';
import type { BenchOptions } from '../src/types.js';

/** A CPU backend under another name whose ops can be made to throw or to return wrong data. */
function rigged(name: BackendName, mode: 'throws' | 'wrong' | 'ok'): Backend {
  const cpu = createCpuBackend();
  const wrap = (op: 'scan' | 'conv2d') => async (a: never, o: never) => {
    if (mode === 'throws') throw new Error(`${name} exploded`);
    const r = await (cpu[op] as (a: never, o: never) => Promise<{ data: Float32Array | Uint32Array }>)(a, o);
    if (mode === 'wrong') r.data[r.data.length - 1]! += 1;
    return { ...r, backend: name };
  };
  return Object.assign(Object.create(cpu) as Backend, { name, info: { ...cpu.info, name }, scan: wrap('scan'), conv2d: wrap('conv2d') });
}

const options: BenchOptions = { workload: 'tiny', ops: ['scan', 'conv2d'], backends: ['cpu', 'piscina', 'gpujs', 'webgpu'], progress: false };

describe('row tagging', () => {
  it('a throwing backend gives errored rows, a wrong result is errored, a missing backend is skipped, others continue', async () => {
    const loaders: BackendLoaders = {
      cpu: async () => createCpuBackend(),
      piscina: async () => rigged('piscina', 'throws'),
      gpujs: async () => rigged('gpujs', 'wrong'),
      webgpu: async () => {
        throw new Error('no adapter');
      },
    };
    const r = await runBench(options, { loaders });
    const by = (b: string) => r.rows.filter((x) => x.backend === b);
    expect(by('cpu').every((x) => x.status === 'ok')).toBe(true);
    // The rigged backends wrap the CPU backend, so they plan the same rows.
    expect(by('piscina').length).toBe(by('cpu').length);
    for (const x of by('piscina')) expect(x.status === 'errored' && x.message).toContain('piscina exploded');
    for (const x of by('gpujs')) {
      expect(x.status).toBe('errored');
      expect(x.status === 'errored' && x.message).toMatch(/^wrong result/);
    }
    for (const x of by('webgpu')) expect(x.status === 'skipped' && x.reason).toContain('no adapter');
    expect(r.backends.find((b) => b.backend === 'webgpu')?.status).toBe('skipped');
  });
});

describe('streaming rows', () => {
  it('hands every measured row to onRow as it lands, in report order', async () => {
    const seen: string[] = [];
    const r = await runBench({ workload: 'tiny', ops: ['scan'], backends: ['cpu'], progress: false }, { onRow: (row) => seen.push(`${row.caseId}/${row.variant}/${row.status}`) });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen).toEqual(r.rows.map((row) => `${row.caseId}/${row.variant}/${row.status}`));
  });
});

describe('planning', () => {
  it('onTotal announces exactly the rows the run produces, unavailable backends included', async () => {
    let total = -1;
    const seen: string[] = [];
    const loaders: BackendLoaders = {
      cpu: async () => createCpuBackend(),
      piscina: async () => rigged('piscina', 'ok'),
      gpujs: async () => rigged('gpujs', 'ok'),
      webgpu: async () => {
        throw new Error('no adapter');
      },
    };
    const r = await runBench({ ...options, ops: ['scan'] }, { loaders, onTotal: (n) => (total = n), onRow: (row) => seen.push(row.backend) });
    expect(total).toBe(r.rows.length);
    expect(seen).toHaveLength(r.rows.length);
    expect(r.rows.filter((row) => row.backend === 'webgpu')).toHaveLength(2);
  });

  it('a --variant no started backend has is a usage error listing the variants, and every backend is disposed', async () => {
    const opened: Backend[] = [];
    const loaders: BackendLoaders = {
      cpu: async () => {
        const b = createCpuBackend();
        opened.push(b);
        return b;
      },
      piscina: async () => {
        throw new Error('no pool');
      },
      gpujs: async () => {
        throw new Error('no gpu.js');
      },
      webgpu: async () => {
        throw new Error('no adapter');
      },
    };
    const run = runBench({ ...options, ops: ['scan'], variants: ['nope'] }, { loaders });
    await expect(run).rejects.toThrow(UsageError);
    await expect(run).rejects.toThrow(/--variant: unknown variant nope for --op scan \(cpu: wasm-simd, sequential; piscina, gpujs, webgpu did not start/);
    expect(opened.every((b) => b.disposed)).toBe(true);
  });
});

describe('row notes in the reports', () => {
  it('every note is marked on its rows and written out under the stdout table, the markdown table and the chart', async () => {
    const NOTE = "this adapter has no 'subgroups' feature: ran the workgroup-memory form of the same kernel";
    const cpu = createCpuBackend();
    const noted: Backend = Object.assign(Object.create(cpu) as Backend, {
      name: 'webgpu',
      info: { ...cpu.info, name: 'webgpu' },
      scan: async (a: never, o: never) => ({ ...(await (cpu.scan as (a: never, o: never) => Promise<object>)(a, o)), backend: 'webgpu', notes: [NOTE] }),
    });
    const loaders: BackendLoaders = { cpu: async () => createCpuBackend(), webgpu: async () => noted, piscina: async () => rigged('piscina', 'ok'), gpujs: async () => rigged('gpujs', 'ok') };
    const r = await runBench({ workload: 'tiny', ops: ['scan'], backends: ['cpu', 'webgpu'], cases: ['scan-10k-u32'], progress: false }, { loaders });
    const row = r.rows.find((x) => x.backend === 'webgpu');
    // A CPU backend under the name webgpu holds its DeviceArrays in host memory: the resident column says so in a second note.
    expect(row?.status === 'ok' && row.notes).toEqual([NOTE, expect.stringMatching(/^resident not measured: .*host memory/)]);
    const variant = row!.variant;

    const table = formatTable(r);
    expect(table).toMatch(new RegExp(`webgpu +${variant} \\[1,2\\]`));
    expect(table).toContain(`[1] ${NOTE}`);
    expect(table).not.toMatch(/cpu +sequential \[/);

    const md = formatMarkdown(r);
    expect(md).toContain(`| webgpu | ${variant} [1,2] |`);
    expect(md).toContain(`1. ${NOTE}`);

    const svg = (await renderCharts(r)).get('scan')!;
    expect(svg).toContain(`webgpu / ${variant} [1,2]`);
    expect(svg).toMatch(/>\[1\] this adapter has no .subgroups. feature: ran the workgroup-memory form of the same kernel</);
  });

  it('chart labels are never cut, so long variant names stay distinct', async () => {
    const cpu = createCpuBackend();
    const long = (variant: string): string => `${variant}-with-a-name-longer-than-any-axis-label-limit`;
    const named: Backend = Object.assign(Object.create(cpu) as Backend, {
      name: 'piscina',
      info: { ...cpu.info, name: 'piscina' },
      variants: (op: string) => (op === 'scan' ? [long('a'), long('b')] : cpu.variants(op as 'scan')),
      scan: async (a: never, o: { variant?: string }) => ({ ...(await (cpu.scan as (a: never, o: object) => Promise<object>)(a, { ...o, variant: 'sequential' })), backend: 'piscina', variant: o.variant }),
    });
    const loaders: BackendLoaders = { cpu: async () => createCpuBackend(), piscina: async () => named, gpujs: async () => rigged('gpujs', 'ok'), webgpu: async () => rigged('webgpu', 'ok') };
    const r = await runBench({ workload: 'tiny', ops: ['scan'], backends: ['piscina'], cases: ['scan-10k-u32'], progress: false }, { loaders });
    expect(r.rows.map((x) => x.status)).toEqual(['ok', 'ok']);
    const svg = (await renderCharts(r)).get('scan')!;
    expect(svg).toContain(`piscina / ${long('a')}`);
    expect(svg).toContain(`piscina / ${long('b')}`);
    expect(svg).not.toContain('…');
  });
});
