import { afterEach, describe, expect, it, vi } from 'vitest';
import { scanBytes, type Backend, type BackendName, type ScanArgs } from '@kernelkit/ops';
import { calibrate, OUTCLASSED_FACTOR, type CalibrationTarget } from '../src/router/calibrate.js';

/** A clock only the fake backends move, so every measured time is exactly what their model says. */
let clock = 0;

/** A backend whose scan takes `ms(work)` on the fake clock. */
function timedTarget(name: BackendName, ms: (work: number) => number): CalibrationTarget & { readonly works: number[] } {
  const works: number[] = [];
  const backend = {
    name,
    variants: () => ['model'],
    async scan(args: ScanArgs) {
      const work = scanBytes(args.input.length, 'u32');
      works.push(work);
      clock += ms(work);
      return { data: args.input };
    },
  } as unknown as Backend;
  return { name, key: name, backend, startMs: 0, works };
}

afterEach(() => vi.restoreAllMocks());

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

  it('measures every target at its second size: one size cannot tell its fixed cost from its rate', async () => {
    vi.spyOn(performance, 'now').mockImplementation(() => clock);
    const fast = timedTarget('cpu', (w) => 1 + 1e-7 * w);
    const slow = timedTarget('webgpu', (w) => 2 + 5e-6 * w);
    const run = await calibrate([fast, slow], { ops: ['scan'], transfers: false });
    expect(new Set(slow.works).size).toBe(2);
    expect(run.skipped.map((s) => s.split(':')[0])).toEqual(['webgpu scan #3']);
  });
});
