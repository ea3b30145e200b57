// The router's settled calls against one backend alone, each in a process of its own (run the two
// modes alternately from a shell loop). For each small-workload case: untimed calls (routed: until
// 20 settled calls in a row), then CALLS timed ones; over their later half the median and fastest
// call, minor page faults per call, garbage collections (count, ms, full ones) and where the calls
// went. MODE: routed (createKernels, route 'auto', calibrated into a cache of its own) or a backend
// name (its wasm-simd variant).
//   node benchmarks/scripts/router-vs-direct-gc.mjs MODE case-id,case-id [CALLS=80]
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { benchCases } from '@kernelkit/bench';
import { median } from '@kernelkit/core';
import { createKernels, defaultLoaders } from 'kernelkit';
const [mode, casesArg, callsArg] = process.argv.slice(2);
const wanted = casesArg.split(',');
const calls = Number(callsArg ?? 80);
const gcs = [];
new PerformanceObserver((l) => { for (const e of l.getEntries()) gcs.push({ t: e.startTime, d: e.duration, kind: e.detail?.kind }); }).observe({ entryTypes: ['gc'] });
let k, direct, dir;
if (mode === 'routed') {
  dir = await mkdtemp(join(os.tmpdir(), 'gcprobe-'));
  k = await createKernels({ route: 'auto', calibrationCache: join(dir, 'c.json') });
  await k.calibrate();
} else {
  direct = await defaultLoaders[mode]({});
}
const out = [];
for (const c of benchCases('small').filter((c) => wanted.includes(c.id))) {
  const args = await c.make();
  const call = mode === 'routed' ? (a) => k[c.op](a) : (a) => direct[c.op](a, { variant: 'wasm-simd' });
  const ms = [];
  let to; const tos = {};
  let t0h, pf0, gcFrom;
  if (mode === 'routed') { let run = 0; for (let i = 0; i < 2000 && run < 20; i++) { const r = await call(args); run = r.route.choice === 'measured' ? run + 1 : 0; } }
  else for (let i = 0; i < 60; i++) await call(args);
  for (let i = 0; i < calls; i++) {
    if (i === calls / 2) { t0h = performance.now(); pf0 = process.resourceUsage().minorPageFault; gcFrom = gcs.length; }
    const t0 = performance.now();
    const r = await call(args);
    ms.push(performance.now() - t0);
    to = r.route ? `${r.route.backend}/${r.variant}:${r.route.choice}` : r.variant; if (i >= calls / 2) tos[to] = (tos[to] ?? 0) + 1;
  }
  await new Promise((r) => setTimeout(r, 50));
  const late = ms.slice(calls / 2);
  const g = gcs.slice(gcFrom).filter((e) => e.t >= t0h);
  out.push({ id: c.id, to: JSON.stringify(tos), med: median(late), min: Math.min(...late), pfPerCall: (process.resourceUsage().minorPageFault - pf0) / (calls / 2), gcN: g.length, gcMs: g.reduce((s, e) => s + e.d, 0), gcMajor: g.filter((e) => e.kind === 4).length, heapMB: getHeapStatistics().used_heap_size / 2 ** 20 });
}
console.log(JSON.stringify({ mode, out }));
if (k) await k.dispose(); else await direct.dispose();
if (dir) await rm(dir, { recursive: true, force: true });
