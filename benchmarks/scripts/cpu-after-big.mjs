// Small calls after large ones on the cpu backend (the WebGPU backend runs them slower after large calls:
// webgpu-process-state.mjs big-first). SCENARIO alone | big (three scans of BIG_MIB, BIG_MIB/4, BIG_MIB/2 first) |
// fresh (those, then a new backend):  node benchmarks/scripts/cpu-after-big.mjs SCENARIO [SMALL_MIB=1] [BIG_MIB=1600]
import { createCpuBackend } from '@kernelkit/cpu';
import { PerformanceObserver } from 'node:perf_hooks';
const [scenario, smallMiB = '1', bigMiB = '1600'] = process.argv.slice(2);
let b = await createCpuBackend();
const big = (Number(bigMiB) * 2 ** 20) / 4;
if (scenario !== 'alone') {
  for (const n of [big, big / 4, big / 2]) { const input = new Float32Array(n).fill(1); await b.scan({ input }); }
  if (scenario === 'fresh') { await b.dispose(); b = await createCpuBackend(); }
}
const input = new Float32Array((Number(smallMiB) * 2 ** 20) / 4).fill(0.5);
for (let i = 0; i < 50; i++) await b.scan({ input });
let gcMs = 0;
const obs = new PerformanceObserver((l) => { for (const e of l.getEntries()) gcMs += e.duration; });
obs.observe({ entryTypes: ['gc'] });
const t = [];
const cpu0 = process.cpuUsage();
for (let i = 0; i < 400; i++) { const s = performance.now(); await b.scan({ input }); t.push(performance.now() - s); }
const cpu = process.cpuUsage(cpu0);
obs.disconnect();
t.sort((x, y) => x - y);
console.log(scenario, 'median', t[200].toFixed(3), 'p25', t[100].toFixed(3), 'p75', t[300].toFixed(3), 'gc/call', (gcMs / 400).toFixed(3), 'cpu/call', ((cpu.user + cpu.system) / 1000 / 400).toFixed(3), 'rss', Math.round(process.memoryUsage().rss / 2 ** 20));
await b.dispose();
