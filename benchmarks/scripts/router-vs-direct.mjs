// The router's settled calls against a direct WebGPU backend in the same process, timed
// alternately (80 pairs), then the router's calls back to back; GC ms over each set.
// On the GPU host: . .gpu-host/on-host.sh && node benchmarks/scripts/router-vs-direct.mjs [case id]
import { benchCases } from '@kernelkit/bench';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { createKernels } from 'kernelkit';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
const caseId = process.argv[2] ?? 'convlayer-L2-b100';
const cases = benchCases('seed');
const k = await createKernels({ route: 'auto', calibrationCache: join(mkdtempSync(join(tmpdir(), 'kk-probe-')), 'c.json') });
await k.calibrate();
const settle = async (args) => { let r; for (let i = 0; i < 600; i++) { r = (await k.convLayer(args)).route; if (r.settled) break; } return r; };
const l1 = await cases.find((x) => x.id === 'convlayer-L1-b100').make();
const r1 = await settle(l1);
const args = await cases.find((x) => x.id === caseId).make();
const r2 = await settle(args);
const gpu = await createWebGpuBackend({ adapter: 'any' });
for (let i = 0; i < 30; i++) await gpu.convLayer(args, { variant: r2.variant });
let gc = 0; new PerformanceObserver((l) => { for (const e of l.getEntries()) gc += e.duration; }).observe({ entryTypes: ['gc'] });
const d = [], r = [], dg = [], rg = [];
const timeIt = async (f, t, g) => { const g0 = gc; const s = performance.now(); await f(); t.push(performance.now() - s); g.push(gc - g0); };
for (let i = 0; i < 80; i++) {
  if (i % 2) { await timeIt(() => gpu.convLayer(args, { variant: r2.variant }), d, dg); await timeIt(() => k.convLayer(args), r, rg); }
  else { await timeIt(() => k.convLayer(args), r, rg); await timeIt(() => gpu.convLayer(args, { variant: r2.variant }), d, dg); }
}
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1].toFixed(2); };
const sum = (xs) => xs.reduce((a, b) => a + b, 0).toFixed(1);
// Then the router alone, back to back, as tinybench would.
const alone = [], ag = [];
for (let i = 0; i < 80; i++) await timeIt(() => k.convLayer(args), alone, ag);
console.log(JSON.stringify({ caseId, l1: `${r1.backend}/${r1.variant}`, route: `${r2.backend}/${r2.variant} settled=${r2.settled}`, direct: med(d), routed: med(r), routedAlone: med(alone), gcDirect: sum(dg), gcRouted: sum(rg), gcAlone: sum(ag) }));
await gpu.dispose(); await k.dispose();
