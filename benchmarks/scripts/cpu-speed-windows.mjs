// Does one process's speed change while it runs? One small-workload case on the cpu backend in
// WINDOWS windows of CALLS calls, each window's median printed beside the time of a fixed integer
// loop run right after it (no memory traffic: if that moves with the calls, the machine's share
// of a core moved, not the kernel or its data).
//   node benchmarks/scripts/cpu-speed-windows.mjs [CASE=convlayer-L1-b100] [WINDOWS=10] [CALLS=40]
import { benchCases } from '@kernelkit/bench';
import { createCpuBackend } from '@kernelkit/cpu';
const [caseId = 'convlayer-L1-b100', windows = '10', calls = '40'] = process.argv.slice(2);
const c = benchCases('small').find((x) => x.id === caseId);
if (c === undefined) throw new Error(`unknown case ${caseId}`);
const args = await c.make();
const cpu = createCpuBackend();
const med = (t) => [...t].sort((a, b) => a - b)[t.length >> 1];
const spin = () => { const t0 = performance.now(); let x = 1; for (let i = 0; i < 2e7; i++) x = (x * 1103515245 + 12345) >>> 0; return [performance.now() - t0, x]; };
const rows = [];
for (let k = 0; k < Number(windows); k++) {
  const t = [];
  for (let i = 0; i < Number(calls); i++) { const t0 = performance.now(); await cpu[c.op](args); t.push(performance.now() - t0); }
  rows.push(`${med(t).toFixed(1)}/${spin()[0].toFixed(1)}`);
}
console.log(`${caseId}: window median ms / integer loop ms: ${rows.join(' ')}`);
await cpu.dispose();
