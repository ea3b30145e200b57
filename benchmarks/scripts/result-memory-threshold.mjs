// Per-call cost of kept result memory (ResultArrays: SharedArrayBuffers reused once dropped, with
// prompted collections) against plain typed arrays, for one result size and one JavaScript heap size.
//   node benchmarks/scripts/result-memory-threshold.mjs kept|plain SIZE_MIB HEAP_MIB [CALLS]
// Each call takes a result, fills it from a source array, hands it over and yields one turn of the
// event loop (finalizers that give dropped results back run as tasks), as a backend's calls do.
// Prints one JSON line: mean, median and p90 ms per call over the calls after the first 100, GC ms per call.
import { ResultArrays, KEEP_BYTES, copyInto } from '@kernelkit/core';
import { PerformanceObserver } from 'node:perf_hooks';

const [mode, sizeMiB, heapMiB, calls = '1500'] = process.argv.slice(2);
if ((mode !== 'kept' && mode !== 'plain') || !(Number(sizeMiB) > 0) || !(Number(heapMiB) >= 0)) {
  console.error('usage: result-memory-threshold.mjs kept|plain SIZE_MIB HEAP_MIB [CALLS]');
  process.exit(2);
}
// An application's heap: small objects, about 128 bytes each, alive throughout.
const heap = Array.from({ length: Number(heapMiB) * 8192 }, (_, i) => ({ a: i, b: [i, i + 1], c: `x${i}` }));
const n = (Number(sizeMiB) * 2 ** 20) / 4;
const source = new Float32Array(n).fill(1.5);
const results = new ResultArrays(mode === 'kept' ? 1 << 20 : Infinity, KEEP_BYTES);
let gcMs = 0;
const observer = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
});
observer.observe({ entryTypes: ['gc'] });
const times = [];
let checksum = 0;
for (let i = 0; i < Number(calls); i++) {
  await new Promise((r) => setImmediate(r));
  const start = performance.now();
  const a = results.array(Float32Array, n);
  if (a.buffer instanceof SharedArrayBuffer) copyInto(a, source, 0);
  else a.set(source);
  results.handOver(a);
  results.collectIfDue();
  checksum += a[n - 1];
  times.push(performance.now() - start);
}
observer.disconnect();
const kept = times.slice(100).sort((x, y) => x - y);
const mean = kept.reduce((x, y) => x + y, 0) / kept.length;
const round = (x) => Number(x.toFixed(3));
console.log(
  JSON.stringify({
    mode,
    sizeMiB: Number(sizeMiB),
    heapMiB: Number(heapMiB),
    heapObjects: heap.length,
    meanMs: round(mean),
    medianMs: round(kept[kept.length >> 1]),
    p90Ms: round(kept[Math.floor(kept.length * 0.9)]),
    gcMsPerCall: round(gcMs / Number(calls)),
    checksum,
  }),
);
