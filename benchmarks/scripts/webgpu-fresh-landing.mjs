// Calls without `out` on the WebGPU backend, their output read back through the staging ring in
// slice-sized pieces or gathered in the landing buffer and copied out in one host copy
// (setFreshOutputLanding), the two ways alternated call by call in one process.
// On the GPU host: . .gpu-host/on-host.sh && node benchmarks/scripts/webgpu-fresh-landing.mjs [PAIRS] [CASE...]
// (KK_WORKLOAD=small or tiny for other sizes)
import { benchCases } from '@kernelkit/bench';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { setFreshOutputLanding } from '@kernelkit/webgpu/testing';
const [pairsArg = '20', ...ids] = process.argv.slice(2);
const pairs = Number(pairsArg);
const cases = benchCases(process.env.KK_WORKLOAD ?? 'seed').filter((c) => ids.length === 0 ? c.op !== 'gridSearch' : ids.includes(c.id));
const gpu = await createWebGpuBackend({ adapter: 'any' });
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };
const f = (x) => (x === undefined || Number.isNaN(x) ? '' : x.toFixed(2));
for (const c of cases) {
  const args = await c.make();
  const ways = { ring: false, landing: true };
  const t = { ring: [], landing: [] };
  const tim = { ring: [], landing: [] };
  let bytes = 0;
  for (let i = 0; i < 3; i++) for (const w of Object.keys(ways)) { setFreshOutputLanding(gpu, ways[w]); bytes = (await gpu[c.op](args)).data.byteLength; }
  for (let i = 0; i < pairs; i++) {
    const order = i % 2 ? ['ring', 'landing'] : ['landing', 'ring'];
    for (const w of order) { setFreshOutputLanding(gpu, ways[w]); const s = performance.now(); await gpu[c.op](args); t[w].push(performance.now() - s); }
  }
  for (let i = 0; i < 5; i++) for (const w of Object.keys(ways)) { setFreshOutputLanding(gpu, ways[w]); tim[w].push((await gpu[c.op](args, { timing: true })).timing); }
  const row = { caseId: c.id, outMiB: (bytes / 2 ** 20).toFixed(0) };
  for (const w of Object.keys(ways)) row[w] = { median: f(med(t[w])), min: f(Math.min(...t[w])), upload: f(med(tim[w].map((x) => x.uploadMs ?? NaN))), kernel: f(med(tim[w].map((x) => x.kernelMs ?? NaN))), readback: f(med(tim[w].map((x) => x.readbackMs ?? NaN))) };
  console.log(JSON.stringify(row));
}
setFreshOutputLanding(gpu, undefined);
await gpu.dispose();
