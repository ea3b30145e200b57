// The cpu backend's call times alone, then in turns with a Piscina pool's (as router trials run):
// shows the first calls at a size running on fresh result memory (page faults) until a collection
// hands dropped results back.   node benchmarks/scripts/cpu-after-pool.mjs [case id]
import { benchCases } from '@kernelkit/bench';
import { defaultLoaders } from 'kernelkit';
const id = process.argv[2] ?? 'conv2d-1x1024-k5';
const c = benchCases('small').find((x) => x.id === id);
const args = await c.make();
const cpu = await defaultLoaders.cpu({});
const t = async (b, n) => { const out = []; for (let i = 0; i < n; i++) { const t0 = performance.now(); await b[c.op](args); out.push((performance.now() - t0).toFixed(1)); } return out.join(' '); };
console.log('cpu alone      ', await t(cpu, 20));
const pool = await defaultLoaders.piscina({});
console.log('pool first     ', await t(pool, 5));
for (let r = 0; r < 4; r++) {
  console.log('cpu after pool ', await t(cpu, 8));
  console.log('pool           ', await t(pool, 8));
}
await new Promise((r) => setTimeout(r, 1000));
console.log('cpu after 1 s  ', await t(cpu, 8));
await pool.dispose(); await cpu.dispose();
