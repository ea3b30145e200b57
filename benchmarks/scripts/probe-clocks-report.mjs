// Summarises a router-grid-probe run with the GPU's clocks beside it (gpu-host-2026-12-07-s47.sh
// aftermath / verify): per process, the medians of its calls' four quarters, the backend of each
// call, the SM clock (min/median/max MHz) and power states nvidia-smi saw while it ran, its last route.
//   node benchmarks/scripts/probe-clocks-report.mjs DIR   (DIR holds aftermath.txt, marks.txt, smi.csv)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? '.';
const read = (f) => readFileSync(join(dir, f), 'utf8').split('\n').filter((l) => l.trim() !== '');
// nvidia-smi and `date` both write "YYYY/MM/DD HH:MM:SS.fraction": compared as ms since midnight.
const msOf = (stamp) => {
  const [h, m, s] = stamp.split(' ')[1].split(':');
  return ((+h * 60 + +m) * 60 + +s) * 1000;
};
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const runs = read('aftermath.txt').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
const marks = read('marks.txt').map((l) => {
  const [date, time, what, ...rest] = l.split(' ');
  return { at: msOf(`${date} ${time}`), what, label: rest.join(' ') };
});
const starts = marks.filter((m) => m.what === 'start');
const ends = marks.filter((m) => m.what === 'end');
const smi = read('smi.csv').slice(1).flatMap((l) => {
  const f = l.split(',').map((x) => x.trim());
  const clock = parseInt(f[2], 10);
  return Number.isFinite(clock) ? [{ at: msOf(f[0]), pstate: f[1], clock }] : [];
});
runs.forEach((r, i) => {
  const label = starts[i]?.label ?? r.mode;
  if (r.mode === 'calibrate') return console.log(`${label}: ${r.calibrateMs} ms`);
  const q = [0, 1, 2, 3].map((k) => median(r.ms.slice((k * r.ms.length) / 4, ((k + 1) * r.ms.length) / 4)).toFixed(1));
  const seen = smi.filter((s) => s.at >= starts[i].at && s.at <= ends[i].at);
  const clocks = seen.map((s) => s.clock).sort((a, b) => a - b);
  const clock = clocks.length ? `${clocks[0]}/${median(clocks)}/${clocks.at(-1)}` : '-';
  console.log(`${label.padEnd(40)} quarters ${q.join(' ')}  on ${(r.on ?? '').slice(0, 60)}  sm clock ${clock}  ${[...new Set(seen.map((s) => s.pstate))].join(',')}`);
  if (r.kernelMs) console.log(`   kernel ${r.kernelMs.map((k) => (k ?? 0).toFixed(1)).join(' ')}`);
  if (r.route) console.log(`   ${r.route.slice(0, 200)}`);
});
