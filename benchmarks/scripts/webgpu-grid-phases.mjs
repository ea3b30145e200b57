// Where one WebGPU grid search call's time goes on the host: the awaited uploads, the head
// execute (kernel + count readback), the body readback, and the rest (the f64 re-check, sorting,
// buffer creation), per call, by wrapping GpuDevice's methods in this process only.
//   node benchmarks/scripts/webgpu-grid-phases.mjs [case] [workload]   (KK_CALLS, default 30)
// KK_CALIBRATE_FIRST=1: a fresh router calibration runs in a child process (router-grid-probe.mjs
// calibrate) while this process's device is open, before the calls.
import { benchCases } from '@kernelkit/bench';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GpuDevice } from '../../packages/webgpu/dist/runtime/device.js';

const [id = 'grid-cs610-8', workload = 'seed'] = process.argv.slice(2);
const calls = Number(process.env.KK_CALLS ?? 30);
const phase = { upload: 0, head: 0, body: 0, uploads: 0 };
const wrap = (name, f) => {
  const orig = GpuDevice.prototype[name];
  GpuDevice.prototype[name] = async function (...a) {
    const t = performance.now();
    try {
      return await orig.apply(this, a);
    } finally {
      f(performance.now() - t, a);
    }
  };
};
wrap('upload', (ms) => { phase.upload += ms; phase.uploads++; });
wrap('execute', (ms, a) => { if (a[0].length > 0) phase.head += ms; else phase.body += ms; });
const c = benchCases(workload).find((x) => x.id === id);
const args = await c.make();
const gpu = await createWebGpuBackend({ adapter: 'any' });
if (process.env.KK_CALIBRATE_FIRST === '1') {
  const probe = fileURLToPath(new URL('./router-grid-probe.mjs', import.meta.url));
  execFileSync(process.execPath, [probe, 'calibrate'], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, KK_CACHE: join(mkdtempSync(join(os.tmpdir(), 'kk-phases-')), 'calibration.json') } });
}
const rows = [];
for (let i = 0; i < calls; i++) {
  Object.assign(phase, { upload: 0, head: 0, body: 0, uploads: 0 });
  const t = performance.now();
  await gpu.gridSearch(args, { variant: 'pruned' });
  const total = performance.now() - t;
  rows.push({ total, ...phase, rest: total - phase.upload - phase.head - phase.body });
}
await gpu.dispose();
const later = rows.slice(calls / 2);
const med = (k) => { const v = later.map((r) => r[k]).sort((a, b) => a - b); return +v[Math.floor(v.length / 2)].toFixed(2); };
console.log(JSON.stringify({ id, later: Object.fromEntries(['total', 'upload', 'uploads', 'head', 'body', 'rest'].map((k) => [k, med(k)])), totals: rows.map((r) => +r.total.toFixed(1)), heads: rows.map((r) => +r.head.toFixed(1)), rests: rows.map((r) => +r.rest.toFixed(1)) }));
