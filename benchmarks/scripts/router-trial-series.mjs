// Per-call times of one case in a fresh process: the router from an empty cache (each call's
// route, choice and trials), or one backend alone. Shows how many calls a backend takes to
// settle at a size and what the router's trials saw meanwhile.
// On the GPU host: . .gpu-host/on-host.sh && node benchmarks/scripts/router-trial-series.mjs MODE CASE [CALLS]
//   MODE: router | webgpu | piscina
import { benchCases } from '@kernelkit/bench';
import { createKernels } from 'kernelkit';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const [mode = 'router', caseId = 'convlayer-L2-b10000', callsArg = '30'] = process.argv.slice(2);
const calls = Number(callsArg);
const c = benchCases('seed').find((x) => x.id === caseId);
if (c === undefined) throw new Error(`unknown case ${caseId}`);
const args = await c.make();
const dir = mkdtempSync(join(tmpdir(), 'kk-series-'));
const k = await createKernels(mode === 'router' ? { route: 'auto', calibrationCache: join(dir, 'c.json') } : { backend: mode });
if (mode === 'router') await k.calibrate();
const run = (a) => k[c.op](a);
const series = [];
for (let i = 0; i < calls; i++) {
  const t0 = performance.now();
  const r = await run(args);
  const ms = performance.now() - t0;
  const route = r.route;
  series.push(mode === 'router' ? [Number(ms.toFixed(1)), `${route.backend}/${route.variant}`, route.choice, route.settled ? 'S' : '', route.trials ?? ''] : [Number(ms.toFixed(1)), `${r.backend ?? ''}/${r.variant ?? ''}`]);
}
console.log(JSON.stringify({ mode, caseId, series }));
await k.dispose();
rmSync(dir, { recursive: true, force: true });
