import { Bench } from 'tinybench';
import { median } from '@kernelkit/core';
import type { Stats } from './types.js';

export interface Measured {
  readonly stats: Stats;
  readonly kernelMedianMs?: number;
}

/**
 * Times `fn` with tinybench, scaling the budget to one run's cost `estMs`: cheap tasks get many
 * samples in ~`budgetMs`, multi-second tasks get 3 (or 1 beyond `singleShotMs`, so the course
 * reports' sizes on a CPU do not take an hour), and warm-up is skipped when one run is already long.
 * A cheap task warms up for a quarter of the budget: its first calls run slower (fresh result memory
 * until dropped results come back for reuse, code not yet optimised), and a row timed after a few
 * calls would rank by how many calls its process happened to make before.
 */
export async function measure(fn: () => Promise<number | undefined>, estMs: number, budgetMs: number, singleShotMs = 30_000): Promise<Measured> {
  const iterations = estMs > singleShotMs ? 1 : Math.max(3, Math.min(50, Math.ceil(budgetMs / Math.max(estMs, 0.01))));
  const kernel: number[] = [];
  const bench = new Bench({
    iterations,
    time: 0,
    warmup: estMs < 1000,
    warmupIterations: 1,
    warmupTime: budgetMs / 4,
    throws: true,
    retainSamples: false,
  });
  let warm = estMs < 1000;
  bench.add('task', async () => {
    const k = await fn();
    // Warm-up calls' kernel times are not samples.
    if (!warm && k !== undefined) kernel.push(k);
  });
  const task = bench.tasks[0];
  task?.addEventListener('start', () => (warm = false));
  await bench.run();
  const r = task?.result;
  if (!r || (r.state !== 'completed' && r.state !== 'aborted-with-statistics')) {
    throw r?.state === 'errored' ? r.error : new Error(`tinybench task ended in state ${r?.state ?? 'unknown'}`);
  }
  const l = r.latency;
  const stats: Stats = { samples: l.samplesCount, medianMs: l.p50, meanMs: l.mean, p75Ms: l.p75, p99Ms: l.p99, minMs: l.min, maxMs: l.max };
  return kernel.length ? { stats, kernelMedianMs: median(kernel) } : { stats };
}

/** One already-timed run as the row's only sample (multi-second rows; see runRow). */
export function singleSample(ms: number, kernelMs: number | undefined): Measured {
  const stats: Stats = { samples: 1, medianMs: ms, meanMs: ms, p75Ms: ms, p99Ms: ms, minMs: ms, maxMs: ms };
  return kernelMs === undefined ? { stats } : { stats, kernelMedianMs: kernelMs };
}
