import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '@kernelkit/cpu';
import type { Backend, BackendName } from '@kernelkit/ops';
import type { BackendLoaders } from 'kernelkit';
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
    expect(by('piscina').length).toBe(3);
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
