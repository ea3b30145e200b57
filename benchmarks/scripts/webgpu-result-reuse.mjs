// Whether each call of one case on the WebGPU backend found a dropped result's memory to reuse
// (kept bytes at least the output's size just before the call), and the call times of each kind.
// On the GPU host: . .gpu-host/on-host.sh && node benchmarks/scripts/webgpu-result-reuse.mjs [CASE] [CALLS]
import { benchCases } from '@kernelkit/bench';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { keptResultBytes } from '@kernelkit/webgpu/testing';
const [caseId = 'scan-40M-u32', callsArg = '60'] = process.argv.slice(2);
const c = benchCases(process.env.KK_WORKLOAD ?? 'seed').find((x) => x.id === caseId);
const args = await c.make();
const b = await createWebGpuBackend({ adapter: 'any' });
let bytes = 0;
for (let i = 0; i < 10; i++) bytes = (await b[c.op](args)).data.byteLength;
const t = { reused: [], fresh: [] };
const seq = [];
for (let i = 0; i < Number(callsArg); i++) {
  const kind = keptResultBytes(b) >= bytes ? 'reused' : 'fresh';
  const s = performance.now();
  await b[c.op](args);
  t[kind].push(performance.now() - s);
  seq.push(kind[0]);
}
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return xs.length ? s[s.length >> 1].toFixed(2) : ''; };
console.log(JSON.stringify({ caseId, bytes, reused: t.reused.length, reusedMedian: med(t.reused), fresh: t.fresh.length, freshMedian: med(t.fresh), seq: seq.join('') }));
await b.dispose();
