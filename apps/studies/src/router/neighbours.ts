/**
 * Is a backend slower once other backends have run in its process? The router's process holds
 * every candidate it tried, and the backends' own bench rows hold one. One case, one chosen
 * backend and variant: its calls alone, then after each other candidate ran some calls, after an
 * idle pause, and after the others are disposed; per phase the later half's median, the fastest
 * call, the first calls, and the garbage collections the phase had.
 *
 *   node apps/studies/dist/router/neighbours.js --workload seed --case convlayer-L1-b100 --chosen piscina/wasm-simd --others webgpu/gemm,cpu/wasm-simd [--calls 40]
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { median } from '@kernelkit/core';
import { benchCases } from '@kernelkit/bench';
import type { Backend, BackendName, OpName } from '@kernelkit/ops';
import { BACKEND_NAMES, defaultLoaders } from 'kernelkit';
import { Command, integer, oneOf, parseStudyArgs } from '../common.js';

interface Argv {
  workload: 'small' | 'tiny' | 'seed';
  case: string;
  chosen: string;
  others: string;
  calls: number;
}

const argv = parseStudyArgs<Argv>(
  new Command('neighbours')
    .description("one backend's calls alone, after other backends ran in its process, and after they are disposed")
    .option('--workload <name>', 'bench workload: small, tiny or seed', oneOf(['small', 'tiny', 'seed'] as const), 'seed')
    .requiredOption('--case <id>', 'bench case id')
    .requiredOption('--chosen <backend/variant>', 'the backend and variant timed in every phase')
    .requiredOption('--others <list>', 'comma-separated backend/variant run between the phases')
    .option('--calls <n>', 'calls per phase (even)', integer(2), 40),
);

const benchCase = benchCases(argv.workload).find((c) => c.id === argv.case);
if (benchCase === undefined) throw new Error(`--case: no case ${argv.case} in the ${argv.workload} workload`);
const args = await benchCase.make();
const op = benchCase.op as OpName;

let gcMs = 0;
let gcCount = 0;
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) [gcMs, gcCount] = [gcMs + e.duration, gcCount + 1];
});
gcObserver.observe({ entryTypes: ['gc'] });

const backends = new Map<BackendName, Backend>();
async function open(backend: BackendName): Promise<Backend> {
  if (!BACKEND_NAMES.includes(backend)) throw new Error(`unknown backend ${backend}`);
  if (!backends.has(backend)) backends.set(backend, await defaultLoaders[backend](backend === 'webgpu' ? { adapter: 'any' } : {}));
  return backends.get(backend)!;
}

type Call = (args: unknown, options: { variant: string }) => Promise<unknown>;
async function time(name: string, n: number): Promise<number[]> {
  const [backend, variant] = name.split('/') as [BackendName, string];
  const b = await open(backend);
  const call = (b[op] as unknown as Call).bind(b);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call(args, { variant });
    out.push(performance.now() - t0);
  }
  return out;
}

const fmt = (ms: number): string => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
async function phase(label: string): Promise<void> {
  const [ms0, n0] = [gcMs, gcCount];
  const xs = await time(argv.chosen, argv.calls);
  const later = xs.slice(Math.floor(xs.length / 2));
  process.stdout.write(`${argv.case} ${argv.chosen} ${label.padEnd(24)} later half median ${fmt(median(later))}, fastest ${fmt(Math.min(...xs))}; first 5: ${xs.slice(0, 5).map(fmt).join(' ')}; ${gcCount - n0} collections, ${(gcMs - ms0).toFixed(1)} ms\n`);
}

try {
  await time(argv.chosen, argv.calls);
  await phase('alone');
  await phase('alone, again');
  for (const other of argv.others.split(',').map((s) => s.trim())) await time(other, Math.max(10, Math.floor(argv.calls / 3)));
  await phase('after the others ran');
  await phase('again');
  await sleep(1500);
  await phase('after 1.5 s idle');
  const chosenBackend = argv.chosen.split('/')[0] as BackendName;
  for (const [name, b] of backends) {
    if (name === chosenBackend) continue;
    await b.dispose();
    backends.delete(name);
  }
  await phase('others disposed');
  await phase('again');
} finally {
  gcObserver.disconnect();
  for (const b of backends.values()) await b.dispose();
}
