/**
 * Where two threads lose against one on the WebAssembly kernels (strong scaling: one workload
 * split in halves), from the bare kernel up to the Piscina backend:
 *
 *   node apps/studies/dist/piscina/split.js [--workloads l2-b100,conv2d-k11,...] [--rounds 15]
 *        [--max-other 0.05] [--patience 120] [--out DIR]
 *
 * Per workload, each round runs every case once, interleaved:
 * - kernel: the kernel alone on operands already in each thread's memory (no copies), on the
 *   calling thread, on two plain worker threads with half each, and on the calling thread plus
 *   one worker;
 * - range: the CPU package's range function (copies in and out of the thread's memory) into a
 *   reused shared output, and into a fresh SharedArrayBuffer (first-touch page faults);
 * - touch: only writing a fresh output-sized SharedArrayBuffer, one thread or two halves;
 * - the cpu backend and the Piscina backend (2 threads) end to end, fresh output each call.
 * Two workers' time is the wall time from the calling thread's post to both replies.
 *
 * Rounds in which other processes used more than --max-other of the machine's CPU time (from
 * /proc/stat, less this process's own CPU time) are dropped: two threads can only be compared
 * with one on otherwise idle cores. Medians over the rounds kept.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { median } from '@kernelkit/core';
import { createCpuBackend, wasmSupport } from '@kernelkit/cpu';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { Command, integer, machineInfo, parseStudyArgs, positive, someOf, writeTextFile } from '../common.js';
import { makeShared, preparePiece, units, WORKLOADS, type PieceKind, type Workload, type WorkloadName } from './split-work.js';

const NAMES = Object.keys(WORKLOADS) as WorkloadName[];
const argv = parseStudyArgs<{ workloads: WorkloadName[]; rounds: number; maxOther: number; patience: number; out?: string }>(
  new Command('split')
    .description('strong scaling of the wasm kernels on 2 threads: bare kernel, copies, page faults, Piscina')
    .option('--workloads <list>', `comma-separated: ${NAMES.join(', ')}`, someOf(NAMES), ['conv2d-k11', 'conv2d-k5', 'l1-b100', 'l2-b100'])
    .option('--rounds <n>', 'rounds kept per workload (rounds on a busy machine are dropped and run again)', integer(), 15)
    .option('--patience <s>', 'seconds per workload to wait for quiet rounds before reporting what was kept', positive, 120)
    .option('--max-other <fraction>', "largest share of the machine's CPU time other processes may use in a kept round", positive, 0.05)
    .option('--out <dir>', 'write piscina-split.json and .md here'),
);

const s = wasmSupport();
if (!('module' in s)) throw new Error(`no WebAssembly SIMD: ${s.unavailable}`);
const module = s.module;

/** Busy and total CPU milliseconds of the whole machine so far (/proc/stat, Linux only). */
function machineCpuMs(): { busy: number; total: number } | undefined {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = f[3]! + (f[4] ?? 0);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    const tick = 10; // USER_HZ = 100 on Linux
    return { busy: (total - idle) * tick, total: total * tick };
  } catch {
    return undefined;
  }
}
const ownCpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Runner {
  post(m: object): void;
  next(): Promise<{ ms?: number; ready?: string }>;
}
function startWorker(): { w: Worker; r: Runner } {
  const w = new Worker(new URL('./split-worker.js', import.meta.url), { workerData: { module } });
  const queue: Array<(m: { ms?: number; ready?: string }) => void> = [];
  w.on('message', (m) => queue.shift()!(m));
  w.on('error', (e) => {
    throw e;
  });
  return { w, r: { post: (m) => w.postMessage(m), next: () => new Promise((res) => queue.push(res)) } };
}

const workers = [startWorker(), startWorker()];
const cpu = createCpuBackend();
const piscina = await createPiscinaBackend({ threads: 2 });

type Case = () => Promise<number>;

/**
 * CPU time of every backend call, all threads of the process together, kept from busy rounds
 * too: unlike wall time it hardly depends on other processes, so it shows what the pool costs
 * beyond the work itself (staging, messages, page faults of its output) on any machine.
 */
const cpuMs: Record<string, number[]> = {};

async function casesFor(name: WorkloadName, w: Workload): Promise<Record<string, Case>> {
  const shared = makeShared(w);
  const U = units(w);
  const half = Math.floor(U / 2);
  let id = 0;
  const onWorker = async (i: number, kind: PieceKind, from: number, to: number): Promise<string> => {
    const key = `${name}-${id++}`;
    workers[i]!.r.post({ prepare: key, workload: name, shared, kind, from, to });
    await workers[i]!.r.next();
    return key;
  };
  const runWorkers = async (keys: Array<[number, string]>, alsoHere?: () => void): Promise<number> => {
    const t0 = performance.now();
    const done = keys.map(([i, key]) => {
      workers[i]!.r.post({ run: key });
      return workers[i]!.r.next();
    });
    alsoHere?.();
    await Promise.all(done);
    return performance.now() - t0;
  };
  const here = (f: () => void): Case => async () => {
    const t0 = performance.now();
    f();
    return performance.now() - t0;
  };
  const out: Record<string, Case> = {};
  for (const kind of ['kernel', 'range', 'range-fresh', 'touch'] as const) {
    out[`${kind}: 1 thread`] = here(preparePiece(module, w, shared, kind, 0, U));
    const a = await onWorker(0, kind, 0, half);
    const b = await onWorker(1, kind, half, U);
    out[`${kind}: 2 workers`] = () => runWorkers([[0, a], [1, b]]);
    if (kind === 'kernel' || kind === 'range-fresh') {
      const mine = preparePiece(module, w, shared, kind, 0, half);
      const other = await onWorker(0, kind, half, U);
      out[`${kind}: calling + 1 worker`] = () => runWorkers([[0, other]], mine);
    }
  }
  const args =
    w.op === 'conv2d'
      ? { input: shared.input.slice(), filter: shared.weights.slice(), batch: w.batch, height: w.height, width: w.width, k: w.k }
      : { input: shared.input.slice(), weights: shared.weights.slice(), batch: w.batch, channels: w.channels, height: w.height, width: w.width, maps: w.maps, k: w.k };
  const call = async (b: typeof cpu, label: string): Promise<number> => {
    const c0 = ownCpuMs();
    const t0 = performance.now();
    if (w.op === 'conv2d') await b.conv2d(args as Parameters<typeof b.conv2d>[0]);
    else await b.convLayer(args as Parameters<typeof b.convLayer>[0]);
    const ms = performance.now() - t0;
    (cpuMs[`${name} ${label}`] ??= []).push(ownCpuMs() - c0);
    return ms;
  };
  out['cpu backend'] = () => call(cpu, 'cpu');
  out['piscina backend, 2 threads'] = () => call(piscina, 'piscina');
  return out;
}

interface Row {
  readonly workload: WorkloadName;
  readonly roundsKept: number;
  readonly roundsDropped: number;
  readonly medianMs: Record<string, number>;
}
const rows: Row[] = [];
for (const name of argv.workloads) {
  const cases = await casesFor(name, WORKLOADS[name]);
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (const f of Object.values(cases)) await f(); // warm-up (tier-up, pools, page cache)
  let kept = 0;
  let dropped = 0;
  const giveUp = performance.now() + argv.patience * 1000;
  while (kept < argv.rounds && performance.now() < giveUp) {
    const m0 = machineCpuMs();
    const own0 = ownCpuMs();
    const round: Record<string, number> = {};
    for (const [k, f] of Object.entries(cases)) round[k] = await f();
    const m1 = machineCpuMs();
    const other = m0 && m1 ? (m1.busy - m0.busy - (ownCpuMs() - own0)) / Math.max(1, m1.total - m0.total) : 0;
    if (other > argv.maxOther) {
      dropped++;
      continue;
    }
    kept++;
    for (const [k, v] of Object.entries(round)) times[k]!.push(v);
  }
  const medianMs = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.length ? median(v) : Number.NaN]));
  rows.push({ workload: name, roundsKept: kept, roundsDropped: dropped, medianMs });
  process.stderr.write(`${name}: ${kept} rounds kept, ${dropped} dropped (machine busy)\n`);
  for (const [k, v] of Object.entries(medianMs)) process.stderr.write(`  ${k.padEnd(32)} ${v.toFixed(2)} ms\n`);
}

await cpu.dispose();
await piscina.dispose();
await Promise.all(workers.map(({ w }) => w.terminate()));

function cpuRows(): string[] {
  const m = (k: string): number => median(cpuMs[k] ?? [Number.NaN]);
  return [
    'CPU time per backend call, all threads together (every round, busy ones too; medians):',
    '',
    '| workload | cpu backend | piscina, 2 threads | piscina ÷ cpu |',
    '|---|---:|---:|---:|',
    ...rows.map((r) => `| ${r.workload} | ${m(`${r.workload} cpu`).toFixed(2)} ms | ${m(`${r.workload} piscina`).toFixed(2)} ms | ${(m(`${r.workload} piscina`) / m(`${r.workload} cpu`)).toFixed(2)} |`),
    '',
    'Wall time, medians of the quiet rounds:',
    '',
  ];
}

const machine = machineInfo();
const speedup = (r: Row, one: string, two: string): string => (r.medianMs[one]! / r.medianMs[two]!).toFixed(2);
const lines = [
  '# Two threads against one on the WebAssembly kernels (strong scaling)',
  '',
  `${machine.cpu}, ${os.availableParallelism()} cores, Node ${machine.node}; ${new Date().toISOString()}; medians of the rounds in which other processes used at most ${(argv.maxOther * 100).toFixed(0)}% of the machine.`,
  '',
  ...cpuRows(),
  '| workload | rounds kept / dropped | kernel 1t | kernel 2 workers | kernel calling+1 | range 1t | range 2w | range fresh out 1t | range fresh 2w | fresh-out touch 1t / 2w | cpu backend | piscina 2t |',
  '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map((r) => {
    if (r.roundsKept === 0) return `| ${r.workload} | 0 / ${r.roundsDropped} | no quiet round |||||||||| |`;
    const m = (k: string): string => r.medianMs[k]!.toFixed(2);
    return `| ${r.workload} | ${r.roundsKept} / ${r.roundsDropped} | ${m('kernel: 1 thread')} | ${m('kernel: 2 workers')} (${speedup(r, 'kernel: 1 thread', 'kernel: 2 workers')}×) | ${m('kernel: calling + 1 worker')} (${speedup(r, 'kernel: 1 thread', 'kernel: calling + 1 worker')}×) | ${m('range: 1 thread')} | ${m('range: 2 workers')} (${speedup(r, 'range: 1 thread', 'range: 2 workers')}×) | ${m('range-fresh: 1 thread')} | ${m('range-fresh: 2 workers')} (${speedup(r, 'range-fresh: 1 thread', 'range-fresh: 2 workers')}×) | ${m('touch: 1 thread')} / ${m('touch: 2 workers')} | ${m('cpu backend')} | ${m('piscina backend, 2 threads')} (${speedup(r, 'cpu backend', 'piscina backend, 2 threads')}×) |`;
  }),
  '',
];
process.stdout.write(lines.join('\n'));
if (argv.out !== undefined) {
  await writeTextFile(path.join(argv.out, 'piscina-split.json'), JSON.stringify({ schema: 'kernelkit-piscina-split/1', date: new Date().toISOString(), machine, maxOther: argv.maxOther, rows, cpuMs }, null, 2) + '\n');
  await writeTextFile(path.join(argv.out, 'piscina-split.md'), lines.join('\n'));
}
