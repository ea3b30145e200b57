// How long a Piscina pool of kernelkit's workers takes to answer its first task (what
// createPiscinaBackend waits for), with the worker loading the narrow entries
// (@kernelkit/cpu/range-kernels, @kernelkit/ops/grid-shape: the built dist/worker.js) against the
// same worker loading the packages' main entries (a copy written beside it for the run, then
// removed). The two alternate, each start in a fresh pool with every thread starting at once.
//   node benchmarks/scripts/pool-start.mjs [THREADS=1,2,...] [STARTS=20]
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { Piscina } from 'piscina';
import { wasmSupport } from '@kernelkit/cpu';

const available = os.availableParallelism();
const threadCounts = (process.argv[2] ?? [1, 2, 4, 8, 16].filter((t) => t <= available).join(',')).split(',').map(Number);
const starts = Number(process.argv[3] ?? 20);
const narrow = new URL('../../packages/piscina/dist/worker.js', import.meta.url);
const main = new URL('../../packages/piscina/dist/worker-main-entries.js', import.meta.url);
const source = readFileSync(narrow, 'utf8');
const rewritten = source.replace("'@kernelkit/cpu/range-kernels'", "'@kernelkit/cpu'").replace("'@kernelkit/ops/grid-shape'", "'@kernelkit/ops'");
if (rewritten === source) throw new Error('dist/worker.js does not import the narrow entries: build the current sources first');
writeFileSync(main, rewritten);
const simd = wasmSupport();
const workerData = 'module' in simd ? { wasmModule: simd.module } : {};
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function firstPing(file, threads) {
  const t0 = performance.now();
  const pool = new Piscina({ filename: file.href, minThreads: threads, maxThreads: threads, workerData, recordTiming: false, execArgv: ['--no-experimental-require-module'] });
  await pool.run({ kind: 'ping' });
  const ms = performance.now() - t0;
  await pool.destroy();
  return ms;
}

try {
  console.log(`${os.cpus()[0]?.model ?? 'cpu'}, ${available} available, Node ${process.version}; ${starts} starts per entry kind and thread count, alternating`);
  console.log('threads | main entries: first task answered (median ms) | narrow entries | main / narrow');
  for (const threads of threadCounts) {
    const r = { main: [], narrow: [] };
    for (let i = 0; i < starts; i++) {
      for (const kind of i % 2 ? ['narrow', 'main'] : ['main', 'narrow']) r[kind].push(await firstPing(kind === 'main' ? main : narrow, threads));
    }
    const m = median(r.main);
    const n = median(r.narrow);
    console.log(`${threads} | ${m.toFixed(1)} | ${n.toFixed(1)} | ${(m / n).toFixed(2)}`);
  }
} finally {
  rmSync(main, { force: true });
}
