// How often a loop of calls returning fresh-sized results still gets fresh memory once a
// ResultMemory is in steady use: CALLS results of SIZE_MIB each (written once, as a kernel would),
// the caller keeping only the latest, one event-loop turn before each (as the cpu backend yields
// for its finalizers). Counts, over the calls after the first WARM, results on fresh memory,
// prompted collections, the mean ms per result, and the calling thread's collections by kind.
//   node benchmarks/scripts/result-memory-loop.mjs [SIZE_MIB=4] [CALLS=240] [WARM=40]
import { PerformanceObserver } from 'node:perf_hooks';
import { KEEP_BYTES, ResultMemory } from '@kernelkit/core';
import { machineInfo } from '@kernelkit/bench';

const [sizeArg = '4', callsArg = '240', warmArg = '40'] = process.argv.slice(2);
const bytes = Number(sizeArg) * 2 ** 20;
const calls = Number(callsArg);
const warm = Number(warmArg);
const kinds = {};
const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) kinds[e.detail?.kind] = (kinds[e.detail?.kind] ?? 0) + 1; });
observer.observe({ entryTypes: ['gc'] });
const memory = new ResultMemory(KEEP_BYTES);
let fresh = 0;
let prompts = 0;
let totalMs = 0;
let held;
for (let i = 0; i < calls; i++) {
  if (memory.outstandingBytes > 0) await new Promise((r) => setImmediate(r));
  const before = memory.stats.prompts;
  const t = performance.now();
  const r = memory.take(bytes);
  memory.collectIfDue();
  new Float32Array(r.kept).fill(i);
  memory.handOver(r.forCaller, r.kept);
  held = r.forCaller;
  if (i >= warm) {
    totalMs += performance.now() - t;
    if (!r.reused) fresh++;
    if (memory.stats.prompts > before) prompts++;
  }
}
await new Promise((r) => setTimeout(r, 20));
observer.disconnect();
const m = machineInfo();
console.log(JSON.stringify({ machine: `${m.cpu}, ${m.cores} cores, Node ${m.node}`, resultMiB: Number(sizeArg), calls: calls - warm, fresh, prompts, meanMs: +(totalMs / (calls - warm)).toFixed(2), gcKinds: kinds, lastResultBytes: held.byteLength }));
