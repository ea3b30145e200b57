// The router's trials as it runs them (turns of at least 50 ms, at least 250 ms and 4 calls timed per
// candidate, at most 40) of the cpu backend and Piscina after one warm-up each, then each backend
// back to back, 40 calls twice over (as a settled key runs): the trial time the router uses (trialTime:
// median of the fastest half of the later half) and the median of the later half, beside the
// back-to-back medians. Usage: node benchmarks/scripts/trial-estimator.mjs CASE_ID... (small workload)
import { benchCases } from '@kernelkit/bench';
import { createCpuBackend } from '@kernelkit/cpu';
import { createPiscinaBackend } from '@kernelkit/piscina';
const ids = process.argv.slice(2);
const cases = benchCases('small');
const cpu = await createCpuBackend();
const pool = await createPiscinaBackend();
const bs = { cpu, piscina: pool };
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const fastHalf = (xs) => { const later = xs.slice(Math.floor(xs.length / 2)); return med([...later].sort((a, b) => a - b).slice(0, Math.ceil(later.length / 2))); };
const laterMed = (xs) => med(xs.slice(Math.floor(xs.length / 2)));
for (const id of ids) {
  const c = cases.find((x) => x.id === id);
  const args = await c.make();
  const call = (n) => bs[n][c.op](args);
  const samples = { cpu: [], piscina: [] };
  const timed = { cpu: 0, piscina: 0 };
  for (const n of ['cpu', 'piscina']) await call(n); // warm-ups
  let turn = 'cpu';
  while (timed.cpu < 250 || timed.piscina < 250 || samples.cpu.length < 4 || samples.piscina.length < 4) {
    let t = 0;
    do { const s = performance.now(); await call(turn); const ms = performance.now() - s; samples[turn].push(ms); timed[turn] += ms; t += ms; } while (t < 50);
    turn = timed.cpu <= timed.piscina ? 'cpu' : 'piscina';
    if (samples[turn].length >= 40) turn = turn === 'cpu' ? 'piscina' : 'cpu';
    if (samples.cpu.length >= 40 && samples.piscina.length >= 40) break;
  }
  const settled = {};
  for (const n of ['piscina', 'cpu', 'piscina', 'cpu']) { const xs = []; for (let i = 0; i < 40; i++) { const s = performance.now(); await call(n); xs.push(performance.now() - s); } (settled[n] ??= []).push(med(xs)); }
  const f = (x) => x.toFixed(2);
  console.log(JSON.stringify({ id, cpu: { fastHalf: f(fastHalf(samples.cpu)), laterMed: f(laterMed(samples.cpu)), settled: settled.cpu.map(f), n: samples.cpu.length }, piscina: { fastHalf: f(fastHalf(samples.piscina)), laterMed: f(laterMed(samples.piscina)), settled: settled.piscina.map(f), n: samples.piscina.length } }));
}
await pool.dispose(); await cpu.dispose();
