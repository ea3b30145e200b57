/**
 * What the machine allows before any partitioning: weak-scaling probes that run the same fixed
 * work on every thread, each on private data, all released together.
 *
 *   node packages/piscina/dist/bench/ceilings.js --out DIR [--threads 1,2,4,8,16] [--runs 3]
 *        [--probes alu,stream,conv2d,convLayer]
 *
 * - alu: eight independent f64 multiply-add chains (no memory): per-core compute and clock.
 * - stream: a scaled copy over 128 MiB arrays per thread: DRAM bandwidth.
 * - conv2d / convLayer: the CPU backend's own kernels (the ones Piscina's workers run) on one
 *   seed-sized image / 20 layer-2 images per thread.
 *
 * Efficiency at T threads = (time of one thread alone) / (slowest of T threads running
 * together). Whatever the Piscina backend loses beyond these numbers is partitioning, copies and
 * coordination; whatever these numbers lose is the machine (shared cores, clocks, bandwidth).
 * Writes DIR/piscina-ceilings.json and .md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { median } from '@kernelkit/core';
import { PROBE_NAMES, PROBE_WORK, type ProbeName } from './ceiling-probes.js';

function usage(msg: string): never {
  process.stderr.write(`ceilings: ${msg}\nusage: node packages/piscina/dist/bench/ceilings.js --out DIR [--threads 1,2,4,8,16] [--runs 3] [--probes ${PROBE_NAMES.join(',')}]\n`);
  process.exit(2);
}

const { values: argv } = parseArgs({
  options: { out: { type: 'string' }, threads: { type: 'string' }, runs: { type: 'string', default: '3' }, probes: { type: 'string', default: PROBE_NAMES.join(',') } },
});
if (!argv.out) usage('--out DIR is required');
const cores = os.availableParallelism();
const THREADS = (argv.threads ?? [1, 2, 4, 8, 16, 32].filter((t) => t <= cores).join(',')).split(',').map(Number);
if (THREADS.length === 0 || THREADS.some((t) => !Number.isInteger(t) || t < 1)) usage(`--threads: expected positive integers, got ${argv.threads}`);
const RUNS = Number(argv.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) usage(`--runs: expected a positive integer, got ${argv.runs}`);
const PROBES = argv.probes.split(',') as ProbeName[];
for (const p of PROBES) if (!PROBE_NAMES.includes(p)) usage(`--probes: unknown probe ${p}; known: ${PROBE_NAMES.join(', ')}`);

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

const cpus = os.cpus();
const machine = { cpu: cpus[0]?.model ?? 'unknown', cores, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, os: `${os.platform()} ${os.release()} ${os.arch()}` };
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
mkdirSync(argv.out!, { recursive: true });
writeFileSync(path.join(argv.out!, 'piscina-ceilings.json'), JSON.stringify({ schema: 'kernelkit-piscina-ceilings/1', date: new Date().toISOString(), machine, runs: RUNS, threads: THREADS, results }, null, 2) + '\n');
writeFileSync(path.join(argv.out!, 'piscina-ceilings.md'), lines.join('\n'));
process.stderr.write(`wrote ${path.join(argv.out!, 'piscina-ceilings.md')}\n`);
