// One WebGPU case (seed workload unless named) timed in a process in a given state: alone; with an idle
// Piscina pool (pool-idle), an idle cpu backend (cpu-idle) or both (both-idle) that first ran 50
// calls beside it; with that pool disposed (pool-gone); each also with a reused `out` (-out); or
// the router settled on it (router). The calls run before are convLayer L1 B=100 for convLayer
// cases and the case itself otherwise.
// On the GPU host: . .gpu-host/on-host.sh && node benchmarks/scripts/webgpu-process-state.mjs SCENARIO [CASE] [VARIANT] [WORKLOAD]
// big-first: WebGPU alone, after one call of each large seed case (what they leave on the device is printed as `device`).
// KK_CACHE=FILE: the router's calibration cache (a second process finds its choice there and runs no trials).
// KK_EXPLORE_FACTOR=F: the router's explore factor (1.01: only the candidate predicted fastest gets a trial).
// KK_CALIBRATE_IN=process|child: where the router calibrates (default: a child process).
// big-first-noprefault: big-first with fresh outputs not faulted in by worker threads.
// big-first-fresh: big-first, then that backend disposed and the case timed on a new one (device state or process state?).
// big-first-newresults: big-first, then the same backend given a new, empty result memory (its result memory or the rest of its device?).
// Every line has `results`: results the device took during the timed calls, how many on reused memory, collections it prompted.
// make-first: the large cases' inputs made and dropped, no call run (what host memory alone leaves);
// make-before: the same before the backend is made; idle-first / spin-first: one call, then 6 s idle / busy on the main thread;
// idle-first-timed: idle-first, then KK_TIMED_BEFORE (10) calls with timing (each runs a GPU clock warm-up spin first).
// KK_WARM_CALLS (30) untimed calls before the KK_SAMPLES (80) timed ones.
// KK_BIG=id,id: the large cases big-first runs (default: one of each op's largest seed case).
// alloc-first / alloc-first-touched: KK_ALLOC_MIB (1600) of memory kept, untouched or written, once the backend exists;
// js-first: 4e8 iterations of an integer loop (no memory) once the backend exists; js-first-worker: the same in a worker thread.
// KK_GC_AFTER=1 (node --expose-gc): a full collection after the big-first / make-first stage.
// KK_PROFILE=N: also print the N functions with the most self time in a CPU profile of the timed calls.
import { benchCases } from '@kernelkit/bench';
import { createCpuBackend } from '@kernelkit/cpu';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { landingBytes, replaceResultMemory, resultMemoryStats, setOutputPrefault, stagingBuffers, webgpuStats } from '@kernelkit/webgpu/testing';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { createKernels } from 'kernelkit';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { Session } from 'node:inspector/promises';
const [scenario, caseId = 'convlayer-L2-b100', variant, workload = 'seed'] = process.argv.slice(2);
const cases = benchCases(workload);
const c = cases.find((x) => x.id === caseId);
/** KK_BIG's case ids, or `fallback`'s. */
const bigIds = (fallback) => (process.env.KK_BIG ?? fallback).split(',');
if (c === undefined) throw new Error(`unknown case ${caseId}`);
const op = c.op;
const args = await c.make();
const before = op === 'convLayer' && workload === 'seed' ? await cases.find((x) => x.id === 'convlayer-L1-b100').make() : args;
let gpu;
let route = '';
if (scenario === 'router') {
  gpu = await createKernels({ route: 'auto', calibrationCache: process.env.KK_CACHE ?? join(mkdtempSync(join(tmpdir(), 'kk-probe-')), 'c.json'), ...(process.env.KK_EXPLORE_FACTOR ? { explore: { factor: Number(process.env.KK_EXPLORE_FACTOR) } } : {}), ...(process.env.KK_CALIBRATE_IN ? { calibrateIn: process.env.KK_CALIBRATE_IN } : {}) });
  await gpu.calibrate();
  if (op === 'convLayer') for (let i = 0; i < 50; i++) await gpu.convLayer(before);
  for (let i = 0; i < 200; i++) { const r = (await gpu[op](args)).route; route = `${r.backend}/${r.variant}${r.settled ? '' : ' (unsettled)'}${r.reason.includes('cache') ? ' (from the cache)' : ''}`; if (r.settled && i >= 59) break; }
} else {
  if (scenario === 'make-before') for (const id of bigIds('scan-400M-f32')) await cases.find((x) => x.id === id).make();
  gpu = await createWebGpuBackend({ adapter: 'any' });
}
if (scenario.startsWith('idle-first') || scenario === 'spin-first') {
  await gpu[op](args);
  if (scenario.startsWith('idle-first')) await new Promise((r) => setTimeout(r, 6000));
  else for (const end = performance.now() + 6000; performance.now() < end;);
  if (scenario === 'idle-first-timed') for (let i = 0; i < Number(process.env.KK_TIMED_BEFORE ?? 10); i++) await gpu[op](args, { timing: true });
}
// big-first: the backend first runs one call of each large seed case (as a calibration would), to see whether what they leave on the device slows the case.
let deviceState = '';
if (scenario.startsWith('big-first')) {
  if (scenario === 'big-first-noprefault') setOutputPrefault(gpu, false);
  for (const id of bigIds('scan-400M-f32,conv2d-16x2048-k11,stencil-512-s10,convlayer-L1-b10000')) {
    const big = cases.find((x) => x.id === id);
    if (big !== undefined) await gpu[big.op](await big.make());
  }
  deviceState = JSON.stringify({ ...webgpuStats(gpu), landingMiB: Math.round(landingBytes(gpu) / 2 ** 20), staging: stagingBuffers(gpu) });
  if (scenario === 'big-first-fresh') { await gpu.dispose(); gpu = await createWebGpuBackend({ adapter: 'any' }); }
  if (scenario === 'big-first-newresults') replaceResultMemory(gpu);
}
if (scenario === 'make-first') for (const id of bigIds('scan-400M-f32')) { const a = await cases.find((x) => x.id === id).make(); deviceState = `made ${id}: ${Object.keys(a).length} fields`; }
if (scenario.startsWith('alloc-first')) { globalThis.kept = new Float32Array(Number(process.env.KK_ALLOC_MIB ?? 1600) * 2 ** 18); if (scenario === 'alloc-first-touched') globalThis.kept.fill(1); deviceState = `kept ${globalThis.kept.byteLength >> 20} MiB${scenario === 'alloc-first-touched' ? ', written' : ', untouched'}`; }
if (scenario === 'js-first-worker') { const { Worker } = await import('node:worker_threads'); await new Promise((resolve, reject) => new Worker('let x = 1; for (let i = 0; i < 4e8; i++) x = (x * 1103515245 + 12345) >>> 0;', { eval: true }).on('exit', resolve).on('error', reject)); deviceState = 'spun in a worker'; }
if (scenario === 'js-first') { let x = 1; for (let i = 0; i < 4e8; i++) x = (x * 1103515245 + 12345) >>> 0; deviceState = `spun ${x & 1}`; }
if (process.env.KK_GC_AFTER === '1') { if (typeof globalThis.gc !== 'function') throw new Error('KK_GC_AFTER needs node --expose-gc'); globalThis.gc(); await new Promise((r) => setTimeout(r, 200)); deviceState += ' (collected after)'; }
const others = [];
if (scenario.startsWith('pool') || scenario.startsWith('both')) others.push(await createPiscinaBackend());
if (scenario.startsWith('cpu') || scenario.startsWith('both')) others.push(await createCpuBackend());
for (const b of others) for (let i = 0; i < 50; i++) await b[op](before);
if (scenario.startsWith('pool-gone')) { await others[0].dispose(); others.length = 0; }
const useOut = scenario.endsWith('-out');
const first = useOut ? (await gpu[op](args)).data : undefined;
const out = first ? new first.constructor(first.length) : undefined;
// VARIANT pins the direct backend's variant (the router keeps its own choice).
const opts = { ...(out ? { out } : {}), ...(variant && scenario !== 'router' ? { variant } : {}) };
const samples = Number(process.env.KK_SAMPLES ?? 80);
for (let i = 0; i < Number(process.env.KK_WARM_CALLS ?? 30); i++) await gpu[op](args, opts);
let gcMs = 0;
const obs = new PerformanceObserver((l) => { for (const e of l.getEntries()) gcMs += e.duration; });
obs.observe({ entryTypes: ['gc'] });
const profileTop = Number(process.env.KK_PROFILE ?? 0);
const session = profileTop > 0 ? new Session() : undefined;
if (session) { session.connect(); await session.post('Profiler.enable'); await session.post('Profiler.setSamplingInterval', { interval: 100 }); await session.post('Profiler.start'); }
const t = [];
const startEpochMs = Date.now();
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const results0 = scenario === 'router' ? undefined : resultMemoryStats(gpu);
for (let i = 0; i < samples; i++) { const s = performance.now(); await gpu[op](args, opts); t.push(performance.now() - s); }
const wall = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const endEpochMs = Date.now();
const results1 = results0 === undefined ? undefined : resultMemoryStats(gpu);
const results = results0 === undefined ? undefined : { taken: results1.takes - results0.takes, reused: results1.reused - results0.reused, prompts: results1.prompts - results0.prompts, keptMiB: Math.round(results1.keptBytes / 2 ** 20), outstandingMiB: Math.round(results1.outstandingBytes / 2 ** 20) };
obs.disconnect();
let profile = '';
if (session) {
  const { profile: p } = await session.post('Profiler.stop');
  session.disconnect();
  // Self time per function from the samples: native calls count under the JS function that made them.
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const dt = new Map();
  for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  const self = new Map();
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (id) => { const cf = byId.get(id).callFrame; return cf.url === '' && cf.functionName === '' && parent.has(id) ? `native in ${name(parent.get(id))}` : `${cf.functionName || '(anon)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}`; };
  for (const [id, us] of dt) { const k = name(id); self.set(k, (self.get(k) ?? 0) + us); }
  profile = [...self].sort((a, b) => b[1] - a[1]).slice(0, profileTop).map(([k, us]) => `${(us / 1000 / samples).toFixed(3)} ${k}`).join(' | ');
}
const status = readFileSync('/proc/self/status', 'utf8');
const field = (name) => status.match(new RegExp(`^${name}:\\s+(\\d+)`, 'm'))?.[1];
const tim = [];
for (let i = 0; i < 10; i++) tim.push((await gpu[op](args, { ...opts, timing: true })).timing);
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };
t.sort((a, b) => a - b);
const f = (x) => x.toFixed(2);
console.log(JSON.stringify({ scenario, caseId, route, startEpochMs, endEpochMs, ...(deviceState ? { device: deviceState } : {}), ...(results ? { results } : {}), median: f(med(t)), p25: f(t[samples >> 2]), p75: f(t[(3 * samples) >> 2]), min: f(t[0]), gcMsPerCall: f(gcMs / samples), heapMiB: Math.round(process.memoryUsage().heapUsed / 2 ** 20), cpuMsPerCall: f((cpu.user + cpu.system) / 1000 / samples), sysMsPerCall: f(cpu.system / 1000 / samples), threads: Number(field('Threads')), rssMiB: Math.round(Number(field('VmRSS')) / 1024), wallPerCall: f(wall / samples),
  upload: f(med(tim.map((x) => x.uploadMs ?? NaN))), kernel: f(med(tim.map((x) => x.kernelMs ?? NaN))), readback: f(med(tim.map((x) => x.readbackMs ?? NaN))), total: f(med(tim.map((x) => x.totalMs))), ...(profile ? { profileMsPerCall: profile } : {}) }));
await gpu.dispose();
for (const b of others) await b.dispose();
