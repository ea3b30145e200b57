// Is a process's speed set when it starts? One backend, one small-workload case: 40 untimed calls,
// then N timed ones; prints the median of each quarter of them and the fastest call. Run it in
// several processes one after another: quarters that agree within a process while processes
// differ put the spread between processes, which only more processes average out.
//   node benchmarks/scripts/process-quarters.mjs CASE [BACKEND=cpu] [N=200]
import { benchCases } from '@kernelkit/bench';
import { median as med } from '@kernelkit/core';
import { defaultLoaders } from 'kernelkit';
const [id, backend = 'cpu', n = '200'] = process.argv.slice(2);
const c = benchCases('small').find((c) => c.id === id);
const b = await defaultLoaders[backend]({});
const args = await c.make();
const ms = [];
for (let i = 0; i < 40; i++) await b[c.op](args);
for (let i = 0; i < Number(n); i++) { const t0 = performance.now(); await b[c.op](args); ms.push(performance.now() - t0); }
const q = Number(n) / 4;
console.log(id, backend, [0, 1, 2, 3].map((k) => med(ms.slice(k * q, (k + 1) * q)).toFixed(2)).join(' '), 'min', Math.min(...ms).toFixed(2));
await b.dispose();
