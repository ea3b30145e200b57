// The CPU backends against the peers a user would pick instead, in one process, round-robin: each
// round runs every contender's calls back to back (after warm-up calls), so a slow phase of a noisy
// VM lands on all of them; the per-round ratio to onnxruntime on one thread is the figure to read.
//   node benchmarks/scripts/cpu-vs-peers-interleaved.mjs [CASE,CASE] [ROUNDS=12] [CALLS=8]
// Contenders: cpu (wasm-simd), piscina (wasm-simd, every core), onnxruntime 1t, tfjs-wasm 1t.
import { benchCases, machineInfo, openBackend } from '@kernelkit/bench';
import { median as med } from '@kernelkit/core';

const [caseList = 'conv2d-4x512-k11,conv2d-1x1024-k5,convlayer-L1-b100,convlayer-L2-b100', roundsArg = '12', callsArg = '8'] = process.argv.slice(2);
const rounds = Number(roundsArg);
const perRound = Number(callsArg);
const cases = benchCases('small').filter((c) => caseList.split(',').includes(c.id));
const contenders = [['cpu', 'wasm-simd'], ['piscina', 'wasm-simd'], ['onnxruntime', '1t'], ['tfjs-wasm', '1t']];
const opened = [];
for (const [name, variant] of contenders) {
  const o = await openBackend(name, undefined);
  if (o.status !== 'ok') { console.error(`${name}: ${o.reason}`); continue; }
  opened.push({ name, variant, b: o.backend });
}
const m = machineInfo();
console.log(`# ${m.cpu}, ${m.cores} cores, Node ${m.node}; ${rounds} rounds of ${perRound} calls per contender, round-robin in one process`);
for (const c of cases) {
  const args = await c.make();
  const times = new Map(opened.map((o) => [o.name, []]));
  for (const o of opened) for (let i = 0; i < 5; i++) await o.b.call(c.op, args, { variant: o.variant });
  for (let r = 0; r < rounds; r++) {
    for (const o of opened) {
      const t = [];
      for (let i = 0; i < perRound; i++) { const s = performance.now(); await o.b.call(c.op, args, { variant: o.variant }); t.push(performance.now() - s); }
      times.get(o.name).push(med(t));
    }
  }
  const ort = times.get('onnxruntime');
  const line = { caseId: c.id };
  for (const o of opened) {
    const own = times.get(o.name);
    line[o.name] = +med(own).toFixed(2);
    if (ort && o.name !== 'onnxruntime') line[`${o.name}/onnxruntime-1t`] = +med(own.map((x, i) => x / ort[i])).toFixed(2);
  }
  const cpu = times.get('cpu'), pool = times.get('piscina');
  if (cpu && pool) line['cpu/piscina'] = +med(cpu.map((x, i) => x / pool[i])).toFixed(2);
  console.log(JSON.stringify(line));
}
for (const o of opened) await o.b.dispose();
