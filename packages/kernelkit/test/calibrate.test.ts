import { afterEach, describe, expect, it, vi } from 'vitest';
import { scanBytes, type Backend, type BackendName, type ScanArgs } from '@kernelkit/ops';
import { calibrate, OUTCLASSED_FACTOR, type CalibrationTarget } from '../src/router/calibrate.js';

/** A clock only the fake backends move, so every measured time is exactly what their model says. */
let clock = 0;

/** Every fake call as `name work`, in order. */
let calls: string[] = [];

/** A backend whose scan takes `ms(work)` on the fake clock. */
function timedTarget(name: BackendName, ms: (work: number) => number, software = false, adapter?: object): CalibrationTarget & { readonly works: number[] } {
  const works: number[] = [];
  const backend = {
    name,
    info: { name, description: name, software, capabilities: { f64: false }, ...(adapter === undefined ? {} : { adapter }) },
    variants: () => ['model'],
    async scan(args: ScanArgs) {
      const work = scanBytes(args.input.length, 'u32');
      works.push(work);
      calls.push(`${name} ${work}`);
      clock += ms(work);
      return { data: args.input };
    },
  } as unknown as Backend;
  return { name, key: name, backend, startMs: 0, works };
}

afterEach(() => {
  vi.restoreAllMocks();
  calls = [];
});

/** The targets in the order they were first called at each size. */
const orderBySize = (): string[][] => {
  const works = [...new Set(calls.map((c) => Number(c.split(' ')[1])))].sort((a, b) => a - b);
  return works.map((w) => [...new Set(calls.filter((c) => Number(c.split(' ')[1]) === w).map((c) => c.split(' ')[0]!))]);
};

describe('calibration order', () => {
  it('at each size the target that has taken the least time so far goes first', async () => {
    vi.spyOn(performance, 'now').mockImplementation(() => clock);
    const slow = timedTarget('piscina', (w) => 5 + 5e-7 * w);
    const fast = timedTarget('cpu', (w) => 1 + 1e-7 * w);
    await calibrate([slow, fast], { ops: ['scan'], transfers: false });
    expect(orderBySize()).toEqual([['piscina', 'cpu'], ['cpu', 'piscina'], ['cpu', 'piscina']]);
  });

  it('a software adapter goes last before anything is timed, so a budget it spends leaves the others measured', async () => {
    vi.spyOn(performance, 'now').mockImplementation(() => clock);
    // A first call that compiles and tunes for seconds, as llvmpipe's does.
    const software = timedTarget('webgpu', () => 3000, true);
    const cpu = timedTarget('cpu', (w) => 1 + 1e-7 * w);
    const run = await calibrate([software, cpu], { ops: ['scan'], transfers: false, budgetMs: 4000 });
    expect(orderBySize()[0]).toEqual(['cpu', 'webgpu']);
    expect(run.results.get('cpu')!.ops.scan).toBeDefined();
    expect(run.skipped.every((s) => s.endsWith('over the time budget'))).toBe(true);
  });
});

describe('calibration sizes', () => {
  it(`skips a target's larger size when its growing terms alone predict over ${OUTCLASSED_FACTOR}× the fastest, and keeps its smaller samples`, async () => {
    vi.spyOn(performance, 'now').mockImplementation(() => clock);
    const fast = timedTarget('cpu', (w) => 1 + 1e-7 * w);
    // A software adapter: a real per-call cost and a throughput 50× lower.
    const slow = timedTarget('webgpu', (w) => 2 + 5e-6 * w);
    // A GPU: a large fixed cost, so slower at the small sizes, and a throughput that wins later.
    const gpuLike = timedTarget('gpujs', (w) => 20 + 1e-8 * w);
    const run = await calibrate([slow, fast, gpuLike], { ops: ['scan'], transfers: false });

    const sizes = (t: { works: number[] }) => new Set(t.works).size;
    expect(sizes(fast)).toBe(3);
    expect(sizes(gpuLike)).toBe(3);
    expect(sizes(slow)).toBe(2);
    expect(run.skipped).toHaveLength(1);
    expect(run.skipped[0]).toMatch(/^webgpu scan #3: predicted at least [\d.]+ ms, over 8× cpu's [\d.]+ ms/);
    const fit = run.results.get('webgpu')!.ops.scan!.model!;
    expect(fit.samples).toHaveLength(2);
    expect(fit.fit.fixedMs).toBeCloseTo(2, 6);
    expect(fit.fit.msPerWork).toBeCloseTo(5e-6, 12);
  });

  it('records the bytes each call moves for a backend with a GPU adapter (so its fit may take a bytes term), not for one in host memory', async () => {
    vi.spyOn(performance, 'now').mockImplementation(() => clock);
    const host = timedTarget('cpu', (w) => 1 + 1e-7 * w);
    const gpu = timedTarget('webgpu', (w) => 2 + 1e-8 * w, false, { vendor: 'test' });
    const run = await calibrate([host, gpu], { ops: ['scan'], transfers: false });
    const samples = (name: BackendName) => run.results.get(name)!.ops.scan!.model!.samples;
    expect(samples('cpu').every((x) => x.bytes === undefined)).toBe(true);
    // A u32 scan reads and writes 4 bytes per element: its bytes are its work (scanBytes counts both).
    expect(samples('webgpu').map((x) => x.bytes)).toEqual(samples('webgpu').map((x) => x.work));
    // In proportion to the work, so no bytes term.
    expect(run.results.get('webgpu')!.ops.scan!.model!.fit.msPerByte).toBeUndefined();
  });

  it('measures every target at its second size: one size cannot tell its fixed cost from its rate', async () => {
    vi.spyOn(performance, 'now').mockImplementation(() => clock);
    const fast = timedTarget('cpu', (w) => 1 + 1e-7 * w);
    const slow = timedTarget('webgpu', (w) => 2 + 5e-6 * w);
    const run = await calibrate([fast, slow], { ops: ['scan'], transfers: false });
    expect(new Set(slow.works).size).toBe(2);
    expect(run.skipped.map((s) => s.split(':')[0])).toEqual(['webgpu scan #3']);
  });
});
