// One WebGPU convLayer case (seed workload) timed in a process in a given state: alone, with an
// idle Piscina pool that ran 50 calls beside it (pool-idle), with that pool disposed (pool-gone),
// each also with a reused `out` (-out); or the router settled on it (router).
// On the GPU host: . .gpu-host/on-host.sh && node benchmarks/scripts/webgpu-process-state.mjs SCENARIO [case id]
import { benchCases } from '@kernelkit/bench';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { createKernels } from 'kernelkit';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
const [scenario, caseId = 'convlayer-L2-b100'] = process.argv.slice(2);
const cases = benchCases('seed');
const c = cases.find((x) => x.id === caseId);
const args = await c.make();
// What the process ran before: 50 calls of convLayer L1 B=100 (on Piscina, or wherever the router sends them).
const l1 = await cases.find((x) => x.id === 'convlayer-L1-b100').make();
let gpu;
let route = '';
if (scenario === 'router') {
  gpu = await createKernels({ route: 'auto', calibrationCache: join(mkdtempSync(join(tmpdir(), 'kk-probe-')), 'c.json') });
  await gpu.calibrate();
  for (let i = 0; i < 50; i++) await gpu.convLayer(l1);
  for (let i = 0; i < 60; i++) { const r = (await gpu.convLayer(args)).route; route = `${r.backend}/${r.variant}${r.settled ? '' : ' (unsettled)'}`; }
} else gpu = await createWebGpuBackend({ adapter: 'any' });
let pis;
if (scenario.startsWith('pool')) {
  pis = await createPiscinaBackend();
  for (let i = 0; i < 50; i++) await pis.convLayer(l1);
  if (scenario.startsWith('pool-gone')) { await pis.dispose(); pis = undefined; }
}
const useOut = scenario.endsWith('-out');
const out = useOut ? new Float32Array((await gpu.convLayer(args)).data.length) : undefined;
const opts = out ? { out } : {};
for (let i = 0; i < 30; i++) await gpu.convLayer(args, opts);
let gcMs = 0;
const obs = new PerformanceObserver((l) => { for (const e of l.getEntries()) gcMs += e.duration; });
obs.observe({ entryTypes: ['gc'] });
const t = [];
const t0 = performance.now();
const cpu0 = process.cpuUsage();
for (let i = 0; i < 80; i++) { const s = performance.now(); await gpu.convLayer(args, opts); t.push(performance.now() - s); }
const wall = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
obs.disconnect();
const tim = [];
for (let i = 0; i < 10; i++) tim.push((await gpu.convLayer(args, { ...opts, timing: true })).timing);
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };
t.sort((a, b) => a - b);
const f = (x) => x.toFixed(2);
console.log(JSON.stringify({ scenario, caseId, route, median: f(med(t)), p25: f(t[20]), p75: f(t[60]), min: f(t[0]), gcMsPerCall: f(gcMs / 80), cpuMsPerCall: f((cpu.user + cpu.system) / 1000 / 80), wallPerCall: f(wall / 80),
  upload: f(med(tim.map((x) => x.uploadMs ?? NaN))), kernel: f(med(tim.map((x) => x.kernelMs ?? NaN))), readback: f(med(tim.map((x) => x.readbackMs ?? NaN))), total: f(med(tim.map((x) => x.totalMs))) }));
await gpu.dispose();
if (pis) await pis.dispose();
