// The bench's conv cases (seed workload) run in one process as its rows would, then one case timed
// back to back: with Piscina alone in the process (piscina), with a WebGPU backend beside it that
// ran every case too (both: Piscina's calls, then WebGPU's), or through the router (router).
// Says whether a backend's calls at that case are slower in a process that ran the other.
// On the GPU host: . .gpu-host/on-host.sh && node benchmarks/scripts/pool-after-gpu.mjs MODE [CASE] [CALLS]
import { benchCases } from '@kernelkit/bench';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { keptResultBytes } from '@kernelkit/webgpu/testing';
import { createKernels } from 'kernelkit';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const [mode = 'both', caseId = 'convlayer-L1-b10000', callsArg = '12'] = process.argv.slice(2);
const calls = Number(callsArg);
const cases = benchCases(process.env.KK_WORKLOAD ?? 'seed').filter((c) => c.op === 'conv2d' || c.op === 'convLayer');
const target = cases.find((c) => c.id === caseId);
if (target === undefined) throw new Error(`unknown case ${caseId}`);
const backends = {};
if (mode === 'router') {
  backends.router = await createKernels({ route: 'auto', calibrationCache: join(mkdtempSync(join(tmpdir(), 'kk-probe-')), 'c.json') });
  await backends.router.calibrate();
} else {
  backends.piscina = await createPiscinaBackend();
  if (mode === 'both') backends.webgpu = await createWebGpuBackend({ adapter: 'any' });
}
const time = async (b, c, args, n) => {
  const t = [];
  for (let i = 0; i < n; i++) { const s = performance.now(); await b[c.op](args); t.push(Number((performance.now() - s).toFixed(1))); }
  return t;
};
// The rows before the case, as the bench runs them: every case up to it, each backend in turn.
for (const c of cases) {
  if (c === target) break;
  const args = await c.make();
  for (const b of Object.values(backends)) {
    if (mode === 'router') { for (let i = 0; i < 400 && !(await b[c.op](args)).route.settled; i++); }
    await time(b, c, args, 6);
  }
}
const args = await target.make();
const out = { mode, caseId };
if (mode === 'router') {
  let r;
  for (let i = 0; i < 400; i++) { r = await backends.router[target.op](args); if (r.route.settled) break; }
  out.route = r.notes[0];
  out.router = await time(backends.router, target, args, calls);
} else {
  for (const b of Object.values(backends)) await time(b, target, args, 3);
  out.piscina = await time(backends.piscina, target, args, calls);
  if (backends.webgpu) {
    out.webgpu = await time(backends.webgpu, target, args, calls);
    out.piscinaAgain = await time(backends.piscina, target, args, calls);
    out.webgpuKeptMiB = Math.round(keptResultBytes(backends.webgpu) / 2 ** 20);
  }
}
out.rssMiB = Math.round(process.memoryUsage().rss / 2 ** 20);
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (const k of ['piscina', 'webgpu', 'piscinaAgain', 'router']) if (out[k]) out[`${k}Median`] = med(out[k]);
console.log(JSON.stringify(out));
for (const b of Object.values(backends)) await b.dispose();
