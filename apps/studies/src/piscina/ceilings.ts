/**
 * What the machine allows before any partitioning: weak-scaling probes that run the same fixed
 * work on every thread, each on private data, all released together.
 *
 *   node apps/studies/dist/piscina/ceilings.js --out DIR [--threads 1,2,4,8,16] [--runs 3]
 *        [--probes alu,stream,conv2d,convLayer,gridSearch]
 *
 * - alu: eight independent f64 multiply-add chains (no memory): per-core compute and clock.
 * - stream: a scaled copy over 128 MiB arrays per thread: DRAM bandwidth.
 * - conv2d / convLayer: the CPU backends' default kernels (WebAssembly SIMD, one instance per
 *   thread as in Piscina's workers; JavaScript where the runtime has no SIMD) on one image of
 *   the course reports' conv2d batch / 200 layer-2 images per thread.
 * - gridSearch: the cpu backend's default pruned search (WebAssembly SIMD) of CS610 at 7 steps/dim
 *   per thread: branchy f64 work, which shares a core's units differently from the SIMD chains.
 *
 * Efficiency at T threads = (time of one thread alone) / (slowest of T threads running
 * together). Whatever the Piscina backend loses beyond these numbers is partitioning, copies and
 * coordination; whatever these numbers lose is the machine (shared cores, clocks, bandwidth).
 * Writes DIR/piscina-ceilings.json and .md.
 */
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { median } from '@kernelkit/core';
import { Command, integer, integers, machineInfo, parseStudyArgs, someOf, writeTextFile } from '../common.js';
import { PROBE_NAMES, PROBE_WORK, type ProbeName } from './ceiling-probes.js';

const cores = os.availableParallelism();
const argv = parseStudyArgs<{ out: string; threads?: number[]; runs: number; probes: ProbeName[] }>(
  new Command('ceilings')
    .description('weak-scaling probes of the machine: the same fixed work on every thread, all released together')
    .requiredOption('--out <dir>', 'write piscina-ceilings.json and .md here')
    .option('--threads <list>', 'thread counts, comma-separated (default powers of two up to the cores)', integers())
    .option('--runs <n>', 'runs per cell (median)', integer(), 3)
    .option('--probes <list>', `comma-separated: ${PROBE_NAMES.join(', ')}`, someOf(PROBE_NAMES), [...PROBE_NAMES]),
);
const THREADS = argv.threads ?? [1, 2, 4, 8, 16, 32].filter((t) => t <= cores);
const RUNS = argv.runs;
const PROBES = argv.probes;

const WORKER = new URL('./ceiling-worker.js', import.meta.url);

/** One release of `threads` workers; resolves every worker's busy ms. */
async function once(probe: ProbeName, threads: number): Promise<number[]> {
  const start = new Int32Array(new SharedArrayBuffer(4));
  const workers = Array.from({ length: threads }, () => new Worker(WORKER, { workerData: { probe, start } }));
  try {
    const ready: Promise<void>[] = [];
    const done: Promise<number>[] = [];
    for (const w of workers) {
      let onReady!: () => void;
      ready.push(new Promise<void>((r) => (onReady = r)));
      done.push(
        new Promise<number>((resolve, reject) => {
          w.on('message', (m: { ready?: true; ms?: number }) => (m.ready ? onReady() : resolve(m.ms!)));
          w.on('error', reject);
          w.on('exit', (code) => reject(new Error(`ceiling worker exited with code ${code} before reporting`)));
        }),
      );
    }
    await Promise.all(ready);
    Atomics.store(start, 0, 1);
    Atomics.notify(start, 0);
    return await Promise.all(done);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}


interface Cell {
  readonly threads: number;
  /** Median over runs of the slowest thread's ms. */
  readonly slowestMs: number;
  /** Median over runs of the mean thread's ms. */
  readonly meanMs: number;
  readonly efficiency: number;
  /** threads × work / slowest, in PROBE_WORK's unit per second. */
  readonly aggregate: number;
}

const results: { probe: ProbeName; unit: string; cells: Cell[] }[] = [];
for (const probe of PROBES) {
  const cells: Cell[] = [];
  for (const t of THREADS) {
    const slow: number[] = [];
    const mean: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const ms = await once(probe, t);
      slow.push(Math.max(...ms));
      mean.push(ms.reduce((a, b) => a + b, 0) / ms.length);
    }
    const slowestMs = median(slow);
    const base = cells[0]?.slowestMs ?? slowestMs;
    const cell = { threads: t, slowestMs, meanMs: median(mean), efficiency: cells.length ? base / slowestMs : 1, aggregate: (t * PROBE_WORK[probe].amount) / (slowestMs / 1000) };
    cells.push(cell);
    process.stderr.write(`${probe} ×${t}: slowest ${slowestMs.toFixed(1)} ms, efficiency ${(cell.efficiency * 100).toFixed(0)} %, ${cell.aggregate.toFixed(2)} ${PROBE_WORK[probe].unit}/s\n`);
  }
  results.push({ probe, unit: `${PROBE_WORK[probe].unit}/s`, cells });
}

const machine = machineInfo();
if (THREADS[0] !== 1) process.stderr.write('note: efficiency is relative to the first thread count, not to one thread\n');
const lines = [
  '# Machine ceilings for the Piscina backend (weak scaling)',
  '',
  `${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.os}; ${new Date().toISOString()}; median of ${RUNS} runs.`,
  '',
  'Every thread runs the same fixed work on private data, all released together; cells are the slowest thread\'s time · efficiency (one thread alone ÷ slowest of T) · aggregate throughput. No partitioning, no copies, no pool: what is lost here is lost to the machine.',
  '',
  `| probe | ${THREADS.map((t) => `${t} thread${t > 1 ? 's' : ''}`).join(' | ')} |`,
  `|---|${THREADS.map(() => '---:').join('|')}|`,
  ...results.map((r) => `| ${r.probe} | ${r.cells.map((c) => `${c.slowestMs.toFixed(0)} ms · ${(c.efficiency * 100).toFixed(0)}% · ${c.aggregate.toFixed(1)} ${r.unit}`).join(' | ')} |`),
  '',
];
await writeTextFile(path.join(argv.out, 'piscina-ceilings.json'), JSON.stringify({ schema: 'kernelkit-piscina-ceilings/1', date: new Date().toISOString(), machine, runs: RUNS, threads: THREADS, results }, null, 2) + '\n');
await writeTextFile(path.join(argv.out, 'piscina-ceilings.md'), lines.join('\n'));
process.stderr.write(`wrote ${path.join(argv.out, 'piscina-ceilings.md')}\n`);
