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
import { benchCases } from '@kernelkit/bench';
import { createCpuBackend } from '@kernelkit/cpu';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { landingBytes, stagingBuffers, webgpuStats } from '@kernelkit/webgpu/testing';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { createKernels } from 'kernelkit';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
const [scenario, caseId = 'convlayer-L2-b100', variant, workload = 'seed'] = process.argv.slice(2);
const cases = benchCases(workload);
const c = cases.find((x) => x.id === caseId);
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
} else gpu = await createWebGpuBackend({ adapter: 'any' });
// big-first: the backend first runs one call of each large seed case (as a calibration would), to see whether what they leave on the device slows the case.
let deviceState = '';
if (scenario.startsWith('big-first')) {
  for (const id of ['scan-400M-f32', 'conv2d-16x2048-k11', 'stencil-512-s10', 'convlayer-L1-b10000']) {
    const big = cases.find((x) => x.id === id);
    if (big !== undefined) await gpu[big.op](await big.make());
  }
  deviceState = JSON.stringify({ ...webgpuStats(gpu), landingMiB: Math.round(landingBytes(gpu) / 2 ** 20), staging: stagingBuffers(gpu) });
}
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
for (let i = 0; i < 30; i++) await gpu[op](args, opts);
let gcMs = 0;
const obs = new PerformanceObserver((l) => { for (const e of l.getEntries()) gcMs += e.duration; });
obs.observe({ entryTypes: ['gc'] });
const t = [];
const t0 = performance.now();
const cpu0 = process.cpuUsage();
for (let i = 0; i < 80; i++) { const s = performance.now(); await gpu[op](args, opts); t.push(performance.now() - s); }
const wall = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
obs.disconnect();
const tim = [];
for (let i = 0; i < 10; i++) tim.push((await gpu[op](args, { ...opts, timing: true })).timing);
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };
t.sort((a, b) => a - b);
const f = (x) => x.toFixed(2);
console.log(JSON.stringify({ scenario, caseId, route, ...(deviceState ? { device: deviceState } : {}), median: f(med(t)), p25: f(t[20]), p75: f(t[60]), min: f(t[0]), gcMsPerCall: f(gcMs / 80), heapMiB: Math.round(process.memoryUsage().heapUsed / 2 ** 20), cpuMsPerCall: f((cpu.user + cpu.system) / 1000 / 80), wallPerCall: f(wall / 80),
  upload: f(med(tim.map((x) => x.uploadMs ?? NaN))), kernel: f(med(tim.map((x) => x.kernelMs ?? NaN))), readback: f(med(tim.map((x) => x.readbackMs ?? NaN))), total: f(med(tim.map((x) => x.totalMs))) }));
await gpu.dispose();
for (const b of others) await b.dispose();
