// A Piscina pool's calls right after the calling thread was busy: BUSY_MS of the cpu backend's
// calls (cpu), of a plain JavaScript loop (spin) or of sleeping (sleep), then CALLS pool calls, the
// median of each call position over TURNS turns. Router trials and the bench's side-by-side blocks
// both time a pool's calls just after another candidate's ran on this thread; this says how many
// of those calls run slower than back to back, and by how much.
//   node benchmarks/scripts/pool-after-busy-thread.mjs [CASE=stencil-64-s100] [BUSY_MS,…=50,150,500] [CALLS=12] [TURNS=8]
import { benchCases } from '@kernelkit/bench';
import { median } from '@kernelkit/core';
import { createCpuBackend } from '@kernelkit/cpu';
import { createPiscinaBackend } from '@kernelkit/piscina';

const [caseId = 'stencil-64-s100', busyArg = '50,150,500', callsArg = '12', turnsArg = '8'] = process.argv.slice(2);
const c = benchCases('small').find((x) => x.id === caseId);
if (c === undefined) {
  console.error(`no small-workload case ${caseId}`);
  process.exit(2);
}
const args = await c.make();
const [calls, turns] = [Number(callsArg), Number(turnsArg)];
const opts = { variant: 'wasm-simd' };
const timedCall = async (b) => {
  const t = performance.now();
  await b[c.op](args, opts);
  return performance.now() - t;
};
const pool = await createPiscinaBackend();
const cpu = await createCpuBackend();
for (const b of [pool, cpu]) for (let i = 0; i < 10; i++) await timedCall(b);

const busy = {
  cpu: async (ms) => { const end = performance.now() + ms; while (performance.now() < end) await timedCall(cpu); },
  spin: async (ms) => { const end = performance.now() + ms; while (performance.now() < end); },
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};
const backToBack = [];
for (let i = 0; i < calls * 2; i++) backToBack.push(await timedCall(pool));
console.log(`${caseId}: pool back to back, median ${median(backToBack).toFixed(2)} ms; after the calling thread was busy, each call position's median (ms):`);
for (const busyMs of busyArg.split(',').map(Number)) {
  for (const [kind, wait] of Object.entries(busy)) {
    const at = Array.from({ length: calls }, () => []);
    for (let t = 0; t < turns; t++) {
      await wait(busyMs);
      for (let k = 0; k < calls; k++) at[k].push(await timedCall(pool));
    }
    console.log(`  ${kind.padEnd(5)} ${String(busyMs).padStart(4)} ms: ${at.map((v) => median(v).toFixed(1)).join(' ')}`);
  }
}
await pool.dispose();
await cpu.dispose();
