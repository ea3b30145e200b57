// Which part of the router's process slows WebGPU's grid search (issue 16, grid search 8 steps/dim)?
// One mode per process: node benchmarks/scripts/router-grid-probe.mjs MODE [case] [workload]
//   direct     the WebGPU backend alone
//   pool-idle  the WebGPU backend, a Piscina backend started beside it and never called
//   pool-used  the same, one Piscina grid search before the WebGPU calls
//   pool-many  the same, eight
//   pool-gone  the same, the pool disposed before the WebGPU calls (as the router releases a
//              backend no settled key runs on)
//   fixed      createKernels({ backend: 'webgpu', route: 'fixed' })
//   auto       createKernels({ route: 'auto' }) after calibrate(), calls as routed
//              (cache file $KK_CACHE, else a fresh one; KK_CALIBRATE_IN=process calibrates in
//              this process; KK_SETTLE_MS waits that long after calibrating)
//   pool, cpu  a Piscina or CPU backend alone (KK_VARIANT, else its default variant)
//   calibrate  createKernels({ route: 'auto' }).calibrate() into $KK_CACHE, no calls (an auto
//              process after it explores without calibrating)
//   pool-mid   the WebGPU backend and a Piscina pool: calls 6-8 go to the pool (the router's
//              first trials' order), the rest to WebGPU
//   cal-pool-mid  the same after a `calibrate` child process ran a fresh calibration while the
//              WebGPU device was open (as the facade's fallback device is during its calibration)
//   cal-wait-pool-mid  the same, KK_SETTLE_MS (default 3000) after the child exited
//   child      the WebGPU backend started, then a child process running `direct` on the GPU
//              (as the calibration child does beside the facade's fallback device), then the calls
// Any seed case runs (KK_VARIANT: the WebGPU variant, default pruned for the grid search and
// decoupled-subgroups for the scan); KK_TIMING=1 asks for timestamps and prints each call's kernel,
// upload and readback ms.
// Prints one JSON line: the mode, the backend each call ran on, every call's ms, its slices
// (progress reports: one per GPU slice), the ms of garbage collection during it and the heap in
// use, the resident set and the external (ArrayBuffer) memory at the end.
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { benchCases } from '@kernelkit/bench';
import { createKernels } from 'kernelkit';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { createCpuBackend } from '@kernelkit/cpu';

const [mode = 'direct', id = 'grid-cs610-8', workload = 'seed'] = process.argv.slice(2);
const calls = Number(process.env.KK_CALLS ?? 30);
const c = benchCases(workload).find((x) => x.id === id);
if (c === undefined) throw new Error(`no case ${id} in ${workload}`);
const args = await c.make();
const owned = [];
/** A fresh calibration (this script's `calibrate` mode) in a child process, into a cache of its own. */
async function calibrateInChild() {
  const cache = join(await mkdtemp(join(os.tmpdir(), 'kk-probe-')), 'calibration.json');
  execFileSync(process.execPath, [fileURLToPath(import.meta.url), 'calibrate'], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, KK_CACHE: cache } });
}
const variant = process.env.KK_VARIANT ?? (c.op === 'scan' ? 'decoupled-subgroups' : c.op === 'gridSearch' ? 'pruned' : undefined);
const timing = process.env.KK_TIMING === '1';
const run = (b, o) => b[c.op](args, { ...(timing ? { timing: true } : {}), ...o });
let call;
if (mode === 'pool-mid' || mode === 'cal-pool-mid' || mode === 'cal-wait-pool-mid') {
  const gpu = await createWebGpuBackend({ adapter: 'any' });
  owned.push(gpu);
  if (mode !== 'pool-mid') {
    await calibrateInChild();
    if (mode === 'cal-wait-pool-mid') await new Promise((r) => setTimeout(r, Number(process.env.KK_SETTLE_MS ?? 3000)));
  }
  const pool = await createPiscinaBackend();
  owned.push(pool);
  let i = 0;
  call = (o) => (++i >= 6 && i <= 8 ? run(pool, o) : run(gpu, { variant, ...o }));
} else if (['direct', 'pool-idle', 'pool-used', 'pool-many', 'pool-gone', 'child'].includes(mode)) {
  const gpu = await createWebGpuBackend({ adapter: 'any' });
  owned.push(gpu);
  if (mode === 'child') execFileSync(process.execPath, [fileURLToPath(import.meta.url), 'direct', id, workload], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (mode !== 'direct') {
    const pool = await createPiscinaBackend();
    owned.push(pool);
    for (let i = 0; i < (mode === 'pool-used' ? 1 : mode === 'pool-many' || mode === 'pool-gone' ? 8 : 0); i++) await run(pool, {});
    if (mode === 'pool-gone') await owned.pop().dispose();
  }
  call = (o) => run(gpu, { variant, ...o });
} else if (mode === 'pool' || mode === 'cpu') {
  const b = mode === 'pool' ? await createPiscinaBackend() : await createCpuBackend();
  owned.push(b);
  const own = process.env.KK_VARIANT;
  call = (o) => run(b, { ...(own === undefined ? {} : { variant: own }), ...o });
} else if (mode === 'calibrate') {
  const k = await createKernels({ route: 'auto', calibrationCache: process.env.KK_CACHE ?? '' });
  const t = performance.now();
  await k.calibrate();
  console.log(JSON.stringify({ mode, calibrateMs: Math.round(performance.now() - t) }));
  await k.dispose();
  process.exit(0);
} else if (mode === 'fixed' || mode === 'auto') {
  const cache = process.env.KK_CACHE ?? join(await mkdtemp(join(os.tmpdir(), 'kk-probe-')), 'calibration.json');
  const calibrateIn = process.env.KK_CALIBRATE_IN ?? 'child';
  const k = await createKernels(mode === 'fixed' ? { backend: 'webgpu', adapter: 'any', route: 'fixed' } : { route: 'auto', calibrationCache: cache, calibrateIn });
  owned.push(k);
  if (mode === 'auto') {
    await k.calibrate();
    if (process.env.KK_SETTLE_MS !== undefined) await new Promise((r) => setTimeout(r, Number(process.env.KK_SETTLE_MS)));
  }
  call = (o) => run(k, o);
} else throw new Error(`unknown mode ${mode}`);
// KK_BEFORE, in the direct modes (direct, pool, cpu), after the backend started: 'calibrate' a
// fresh calibration in a child process; 'burst' every core busy for KK_BURST_MS (default 6000) in
// child processes (as hot as a calibration, without a GPU or a kernelkit import).
if (process.env.KK_BEFORE === 'calibrate') {
  await calibrateInChild();
} else if (process.env.KK_BEFORE === 'burst') {
  const spin = `const end = Date.now() + ${Number(process.env.KK_BURST_MS ?? 6000)}; let x = 0; while (Date.now() < end) x += Math.sqrt(x + 1);`;
  await Promise.all(Array.from({ length: os.availableParallelism() }, () => new Promise((r) => execFile(process.execPath, ['-e', spin], r))));
}
const ms = [];
const ran = [];
const slices = [];
const gcMs = [];
const kernelMs = [];
const uploadMs = [];
const readbackMs = [];
/** A timing part in ms to two decimals, null where the backend gave none. */
const rounded = (v) => (v === undefined ? null : +v.toFixed(2));
let gc = 0;
const gcWatch = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gc += e.duration;
});
gcWatch.observe({ entryTypes: ['gc'] });
for (let i = 0; i < calls; i++) {
  let n = 0;
  await new Promise((r) => setImmediate(r)); // let the last call's gc entries arrive
  const gc0 = gc;
  const t = performance.now();
  const r = await call({ onProgress: () => void n++ });
  ms.push(+(performance.now() - t).toFixed(2));
  await new Promise((r) => setImmediate(r));
  gcMs.push(+(gc - gc0).toFixed(2));
  slices.push(n);
  ran.push(`${r.backend}/${r.variant}`);
  if (timing) {
    kernelMs.push(rounded(r.timing?.kernelMs));
    uploadMs.push(rounded(r.timing?.uploadMs));
    readbackMs.push(rounded(r.timing?.readbackMs));
  }
}
gcWatch.disconnect();
const route = mode === 'auto' ? (await call()).notes?.[0] : undefined;
const memory = process.memoryUsage();
const later = ms.slice(calls / 2).sort((a, b) => a - b);
console.log(JSON.stringify({ mode, id, laterMedian: later[Math.floor(later.length / 2)], heapMiB: +(getHeapStatistics().used_heap_size / 2 ** 20).toFixed(1), rssMiB: Math.round(memory.rss / 2 ** 20), externalMiB: Math.round(memory.external / 2 ** 20), ran: [...new Set(ran)], on: ran.map((r) => [...new Set(ran)].indexOf(r)).join(''), ms, slices, gcMs, ...(timing ? { kernelMs, uploadMs, readbackMs } : {}), ...(route ? { route } : {}) }));
for (const o of owned) await o.dispose();
