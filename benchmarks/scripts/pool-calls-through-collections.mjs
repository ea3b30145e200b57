// How a backend's back-to-back calls fare while the calling thread runs a major garbage collection
// (the ones the result memory prompts to get dropped results back, and any other). One process per
// contender; CALLS calls of one small-workload case, the first 50 untimed; each later call counts
// as "in a collection" when it overlaps the span from an incremental marking's start to the end of
// the major collection that finishes it (the calling thread's `gc` performance entries).
// Prints one JSON line per contender: medians in and out of collections and the share of calls in
// them; for the pool also the calls' phases (lastCallStats) as means, which add up to the mean call:
// until its workers' tasks started, until the last unit ended, until the call heard back, and the
// rest of the call outside those (before the call's record begins, after it ends); and a worker's
// kernel ms per unit (median).
//   node benchmarks/scripts/pool-calls-through-collections.mjs [CASE=conv2d-1x1024-k5] [CALLS=250]
import { spawnSync } from 'node:child_process';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { benchCases, machineInfo } from '@kernelkit/bench';
import { median } from '@kernelkit/core';
import { createCpuBackend } from '@kernelkit/cpu';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { lastCallStats } from '@kernelkit/piscina/testing';

const [id = 'conv2d-1x1024-k5', callsArg = '250', contender] = process.argv.slice(2);
const CONTENDERS = ['piscina', 'piscina-no-caller-share', 'cpu'];

if (contender === undefined) {
  const m = machineInfo();
  console.log(`# ${m.cpu}, ${m.cores} cores, Node ${m.node}; case ${id}, ${callsArg} calls per contender, one process each`);
  for (const c of CONTENDERS) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), id, callsArg, c], { encoding: 'utf8' });
    process.stdout.write(r.stdout.split('\n').filter((l) => l.startsWith('{')).join('\n') + '\n');
  }
} else {
  const c = benchCases('small').find((x) => x.id === id);
  if (c === undefined) throw new Error(`unknown case ${id}`);
  const args = await c.make();
  const backend = contender === 'cpu' ? await createCpuBackend() : await createPiscinaBackend({ callerShare: contender === 'piscina' });
  const gcs = [];
  const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) gcs.push({ start: e.startTime, end: e.startTime + e.duration, kind: e.detail?.kind }); });
  observer.observe({ entryTypes: ['gc'] });
  const calls = [];
  for (let i = 0; i < Number(callsArg); i++) {
    const t = performance.now();
    await backend[c.op](args);
    const end = performance.now();
    if (i >= 50) calls.push({ start: t, end, phases: contender === 'cpu' ? undefined : lastCallStats(backend)?.phases });
  }
  await new Promise((r) => setTimeout(r, 20));
  observer.disconnect();
  // Spans from an incremental marking's start to the major collection that ends it.
  const spans = [];
  let open;
  for (const g of gcs) {
    if (g.kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) open ??= g.start;
    if (g.kind === constants.NODE_PERFORMANCE_GC_MAJOR) { spans.push([open ?? g.start, g.end]); open = undefined; }
  }
  const inSpan = (x) => spans.some(([s, e]) => x.start < e && x.end > s);
  const ms = (xs) => xs.map((x) => x.end - x.start);
  const during = calls.filter(inSpan);
  const outside = calls.filter((x) => !inSpan(x));
  const r2 = (v) => (v === undefined || Number.isNaN(v) ? null : +v.toFixed(2));
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const phasesOf = (xs) => {
    const timed = xs.filter((x) => x.phases !== undefined);
    if (timed.length === 0) return undefined;
    const firstStart = (p) => Math.min(...p.tasks.filter((t) => t.caller !== true).map((t) => t.startMs));
    const lastEnd = (p) => Math.max(...p.tasks.map((t) => t.endMs));
    const workers = timed.flatMap((x) => x.phases.tasks.filter((t) => t.caller !== true));
    return {
      calls: timed.length,
      meanMs: r2(mean(timed.map((x) => x.end - x.start))),
      untilWorkersStartMs: r2(mean(timed.map((x) => firstStart(x.phases)))),
      untilLastUnitEndsMs: r2(mean(timed.map((x) => lastEnd(x.phases) - firstStart(x.phases)))),
      untilHeardBackMs: r2(mean(timed.map((x) => x.phases.doneMs - lastEnd(x.phases)))),
      restMs: r2(mean(timed.map((x) => x.end - x.start - x.phases.doneMs))),
      workerKernelMsPerUnit: r2(median(workers.map((t) => t.kernelMs / Math.max(1, t.units)))),
    };
  };
  console.log(JSON.stringify({
    contender, case: id, calls: calls.length, majorCollections: spans.length,
    medianMs: r2(median(ms(calls))), meanMs: r2(mean(ms(calls))),
    inCollections: { share: r2(during.length / calls.length), medianMs: during.length ? r2(median(ms(during))) : null, phases: phasesOf(during) },
    outside: { medianMs: outside.length ? r2(median(ms(outside))) : null, phases: phasesOf(outside) },
  }));
  await backend.dispose();
}
