// Which part of the router's process slows WebGPU's grid search (issue 16, grid search 8 steps/dim)?
// One mode per process: node benchmarks/scripts/router-grid-probe.mjs MODE [case] [workload]
//   direct     the WebGPU backend alone
//   pool-idle  the WebGPU backend, a Piscina backend started beside it and never called
//   pool-used  the same, one Piscina grid search before the WebGPU calls
//   fixed      createKernels({ backend: 'webgpu', route: 'fixed' })
//   auto       createKernels({ route: 'auto' }) after calibrate(), calls as routed
//              (cache file $KK_CACHE, else a fresh one)
//   child      the WebGPU backend started, then a child process running `direct` on the GPU
//              (as the calibration child does beside the facade's fallback device), then the calls
// Prints one JSON line: the mode, the backend each call ran on, and every call's ms.
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { benchCases } from '@kernelkit/bench';
import { createKernels } from 'kernelkit';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { createPiscinaBackend } from '@kernelkit/piscina';

const [mode = 'direct', id = 'grid-cs610-8', workload = 'seed'] = process.argv.slice(2);
const calls = Number(process.env.KK_CALLS ?? 30);
const c = benchCases(workload).find((x) => x.id === id);
if (c === undefined) throw new Error(`no case ${id} in ${workload}`);
const args = await c.make();
const owned = [];
let call;
if (mode === 'direct' || mode === 'pool-idle' || mode === 'pool-used' || mode === 'child') {
  const gpu = await createWebGpuBackend({ adapter: 'any' });
  owned.push(gpu);
  if (mode === 'child') execFileSync(process.execPath, [fileURLToPath(import.meta.url), 'direct', id, workload], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (mode !== 'direct') {
    const pool = await createPiscinaBackend();
    owned.push(pool);
    if (mode === 'pool-used') await pool.gridSearch(args);
  }
  call = () => gpu.gridSearch(args, { variant: 'pruned' });
} else if (mode === 'fixed' || mode === 'auto') {
  const cache = process.env.KK_CACHE ?? join(await mkdtemp(join(os.tmpdir(), 'kk-probe-')), 'calibration.json');
  const k = await createKernels(mode === 'fixed' ? { backend: 'webgpu', adapter: 'any', route: 'fixed' } : { route: 'auto', calibrationCache: cache });
  owned.push(k);
  if (mode === 'auto') await k.calibrate();
  call = () => k.gridSearch(args);
} else throw new Error(`unknown mode ${mode}`);
const ms = [];
const ran = [];
for (let i = 0; i < calls; i++) {
  const t = performance.now();
  const r = await call();
  ms.push(+(performance.now() - t).toFixed(2));
  ran.push(`${r.backend}/${r.variant}`);
}
const route = mode === 'auto' ? (await call()).notes?.[0] : undefined;
const later = ms.slice(calls / 2).sort((a, b) => a - b);
console.log(JSON.stringify({ mode, id, laterMedian: later[Math.floor(later.length / 2)], ran: [...new Set(ran)], ms, ...(route ? { route } : {}) }));
for (const o of owned) await o.dispose();
