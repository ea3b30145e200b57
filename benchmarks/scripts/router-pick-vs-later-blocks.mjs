// Does a router process's settled choice stay right for that process? One process per run: the
// router (route 'auto', a fresh cache) settles one bench case; 20 settled calls are timed; then
// the pool and the cpu backend are called directly in alternating back-to-back blocks (150 ms and
// 4 calls at least, the later half's median; six each). Prints the pick, the trials, the router's
// settled median and each direct backend's median of its block medians, one JSON line per process.
//   node benchmarks/scripts/router-pick-vs-later-blocks.mjs [CASE=stencil-64-s100] [WORKLOAD=small]
import { benchCases } from '@kernelkit/bench';
import { createCpuBackend } from '@kernelkit/cpu';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { createKernels } from 'kernelkit';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [id = 'stencil-64-s100', workload = 'small'] = process.argv.slice(2);
const c = benchCases(workload).find((x) => x.id === id);
if (c === undefined) {
  console.error(`unknown case ${id}; usage: router-pick-vs-later-blocks.mjs [CASE] [WORKLOAD]`);
  process.exit(2);
}
const args = await c.make();
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const k = await createKernels({ route: 'auto', calibrationCache: join(mkdtempSync(join(tmpdir(), 'kk-pick-')), 'c.json') });
await k.calibrate();
let route;
for (let i = 0; i < 800 && route?.settled !== true; i++) route = (await k[c.op](args)).route;
const trials = Object.fromEntries(Object.entries(route.trials ?? {}).map(([n, ms]) => [n, +ms.toFixed(2)]));
const settled = [];
for (let i = 0; i < 20; i++) {
  const t = performance.now();
  await k[c.op](args);
  settled.push(performance.now() - t);
}
await k.dispose();
const direct = { piscina: await createPiscinaBackend(), cpu: await createCpuBackend() };
const blocks = { piscina: [], cpu: [] };
for (let b = 0; b < 6; b++) {
  for (const [name, backend] of Object.entries(direct)) {
    const xs = [];
    const t0 = performance.now();
    while (performance.now() - t0 < 150 || xs.length < 4) {
      const t = performance.now();
      await backend[c.op](args);
      xs.push(performance.now() - t);
    }
    blocks[name].push(med(xs.slice(xs.length >> 1)));
  }
}
const pick = `${route.backend}/${route.variant}`;
const later = Object.fromEntries(Object.entries(blocks).map(([n, xs]) => [n, +med(xs).toFixed(2)]));
const picked = later[route.backend];
console.log(JSON.stringify({ case: id, pick, trials, routerSettled: +med(settled).toFixed(2), later, pickOverBest: picked === undefined ? null : +(picked / Math.min(...Object.values(later))).toFixed(3) }));
for (const b of Object.values(direct)) await b.dispose();
