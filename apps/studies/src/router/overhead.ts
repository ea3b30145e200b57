/**
 * Where does the router's extra time go? For each case of a bench workload, in one process, the
 * facade's routed call and a direct call on the backend and variant it routed to are timed
 * alternately (so machine noise hits both alike), with the router's prediction beside them.
 *
 * `--calibration` says how the facade got its cost model, which is what decides what else the
 * process has run before the timed calls: 'in-process' calibrates in this process
 * (`calibrateIn: 'process'`: WebGPU, the CPU and Piscina all run here first), 'child' in a
 * child process (`calibrateIn: 'child'`), 'default' uses the user's cache as createKernels does. `--detach` detaches one
 * ArrayBuffer first, which alone slows V8's typed-array code for the rest of the process.
 * `--processes N` runs N child processes per calibration mode named in `--modes`, alternating
 * the modes, and prints every mode's medians over them: the direct column then shows what the
 * process's history costs calls that never go through the router.
 *
 *   node apps/studies/dist/router/overhead.js [--workload small] [--cases id,...] [--rounds 11]
 *     [--calibration in-process|child|default] [--detach] [--processes 3 --modes child,in-process] [--json]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '@kernelkit/core';
import { benchCases, type BenchCase } from '@kernelkit/bench';
import type { Backend, BackendName, OpName } from '@kernelkit/ops';
import { createKernels, defaultLoaders, type Kernels } from 'kernelkit';
import { Command, integer, oneOf, parseStudyArgs, runNode, someOf } from '../common.js';

const CALIBRATIONS = ['in-process', 'child', 'default'] as const;
type Calibration = (typeof CALIBRATIONS)[number];

interface Argv {
  workload: 'small' | 'tiny' | 'seed';
  cases?: string;
  rounds: number;
  calibration: Calibration;
  detach?: boolean;
  processes?: number;
  modes: Calibration[];
  json?: boolean;
}

const argv = parseStudyArgs<Argv>(
  new Command('overhead')
    .description("the router's routed call against a direct call on the backend it routes to, alternated in one process")
    .option('--workload <name>', 'bench workload: small, tiny or seed', oneOf(['small', 'tiny', 'seed'] as const), 'small')
    .option('--cases <ids>', 'comma-separated case ids (default: every case but the grid search)')
    .option('--rounds <n>', 'timed pairs per case (median)', integer(), 11)
    .option('--calibration <how>', `how the facade gets its model: ${CALIBRATIONS.join(', ')}`, oneOf(CALIBRATIONS), 'in-process')
    .option('--detach', 'detach an ArrayBuffer before anything is timed')
    .option('--processes <n>', 'run this many child processes per mode, alternating, and summarize', integer())
    .option('--modes <list>', 'calibration modes for --processes', someOf(CALIBRATIONS), ['child', 'in-process'])
    .option('--json', 'print one JSON line (used by --processes)'),
);

interface Row {
  readonly id: string;
  readonly routedTo: string;
  readonly predictedMs: number | undefined;
  readonly directMs: number;
  readonly routedMs: number;
  /** CPU time of the whole process (every thread) per call: less sensitive than wall time to other load on the machine. */
  readonly directCpuMs: number;
  readonly routedCpuMs: number;
}

interface ProcessResult {
  readonly calibration: Calibration;
  readonly calibrationMs: number;
  readonly rows: readonly Row[];
}


async function openKernels(how: Calibration, cache: string): Promise<{ kernels: Kernels; ms: number }> {
  const t0 = performance.now();
  // Prediction only: the routed calls must all go where the first one went, which exploring calls do not.
  if (how === 'default') return { kernels: await createKernels({ route: 'auto', explore: false }), ms: 0 };
  const kernels = await createKernels({ route: 'auto', explore: false, calibrationCache: cache, calibrateIn: how === 'child' ? 'child' : 'process' });
  await kernels.calibrate();
  return { kernels, ms: performance.now() - t0 };
}

type Call = (args: unknown, options?: Record<string, unknown>) => Promise<{ readonly variant: string; readonly route?: { readonly backend: BackendName; readonly predictedMs?: number } }>;
const callOf = (b: Backend | Kernels, op: OpName): Call => (b[op] as unknown as Call).bind(b);

async function timed(f: () => Promise<unknown>, wall: number[], cpu: number[]): Promise<void> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await f();
  wall.push(performance.now() - t0);
  const c = process.cpuUsage(c0);
  cpu.push((c.user + c.system) / 1000);
}

async function oneProcess(): Promise<ProcessResult> {
  if (argv.detach) {
    const b = new ArrayBuffer(8);
    structuredClone(b, { transfer: [b] });
  }
  const dir = await mkdtemp(join(os.tmpdir(), 'kernelkit-overhead-'));
  const { kernels, ms: calibrationMs } = await openKernels(argv.calibration, join(dir, 'calibration.json'));
  const direct = new Map<BackendName, Backend>();
  const rows: Row[] = [];
  try {
    const wanted = argv.cases?.split(',').map((s) => s.trim());
    const cases = benchCases(argv.workload).filter((c: BenchCase) => (wanted ? wanted.includes(c.id) : c.op !== 'gridSearch'));
    for (const c of cases) {
      const args = await c.make();
      const routed = callOf(kernels, c.op);
      // The first routed call loads the model (or calibrates the op) and says where calls go.
      const first = await routed(args);
      const to = first.route!.backend;
      let b = direct.get(to);
      if (b === undefined) {
        b = await defaultLoaders[to](to === 'webgpu' ? { adapter: 'any' } : {});
        direct.set(to, b);
      }
      const own = callOf(b, c.op);
      const opts = { variant: first.variant };
      await own(args, opts);
      const d: number[] = [];
      const dc: number[] = [];
      const r: number[] = [];
      const rc: number[] = [];
      for (let i = 0; i < argv.rounds; i++) {
        // Alternate which goes first, so neither always follows the other's garbage.
        if (i % 2 === 0) {
          await timed(() => own(args, opts), d, dc);
          await timed(() => routed(args), r, rc);
        } else {
          await timed(() => routed(args), r, rc);
          await timed(() => own(args, opts), d, dc);
        }
      }
      rows.push({
        id: c.id, routedTo: `${to}/${first.variant}`, predictedMs: first.route!.predictedMs, directMs: median(d), routedMs: median(r), directCpuMs: median(dc), routedCpuMs: median(rc),
      });
    }
  } finally {
    await kernels.dispose();
    await Promise.all([...direct.values()].map((b) => b.dispose()));
    await rm(dir, { recursive: true, force: true });
  }
  return { calibration: argv.calibration, calibrationMs, rows };
}

const fmt = (ms: number | undefined): string => (ms === undefined ? '-' : ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

function table(title: string, rows: readonly Row[]): string {
  const head = ['case'.padEnd(20), 'routed to'.padEnd(26), 'predicted', '  direct', '  routed', 'r/d wall', 'cpu direct', 'cpu routed', 'r/d cpu'];
  const lines = [title, head.join(' ')];
  for (const r of rows) {
    const cells = [fmt(r.predictedMs), fmt(r.directMs), fmt(r.routedMs), (r.routedMs / r.directMs).toFixed(2), fmt(r.directCpuMs), fmt(r.routedCpuMs), (r.routedCpuMs / r.directCpuMs).toFixed(2)];
    lines.push([r.id.padEnd(20), r.routedTo.padEnd(26), ...cells.map((c, i) => c.padStart(head[i + 2]!.length))].join(' '));
  }
  return lines.join('\n');
}

async function manyProcesses(n: number): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const passOn = ['--workload', argv.workload, '--rounds', String(argv.rounds), ...(argv.cases ? ['--cases', argv.cases] : []), ...(argv.detach ? ['--detach'] : [])];
  const byMode = new Map<Calibration, ProcessResult[]>();
  for (let i = 0; i < n; i++) {
    for (const mode of argv.modes) {
      const out = await runNode([self, ...passOn, '--calibration', mode, '--json']);
      const got = JSON.parse(out.trim().split('\n').at(-1)!) as ProcessResult;
      byMode.set(mode, [...(byMode.get(mode) ?? []), got]);
      process.stderr.write(`process ${i + 1}/${n} ${mode}: calibration ${(got.calibrationMs / 1000).toFixed(1)} s\n`);
    }
  }
  // Direct medians of each mode's processes: the same backend and variant timed in processes with different histories.
  for (const [mode, runs] of byMode) {
    const ids = runs[0]!.rows.map((r) => r.id);
    const rows = ids.map((id): Row => {
      const all = runs.map((p) => p.rows.find((r) => r.id === id)!);
      const routedTo = [...new Set(all.map((r) => r.routedTo))].join(' | ');
      const predicted = all.flatMap((r) => (r.predictedMs === undefined ? [] : [r.predictedMs]));
      const mid = (f: (r: Row) => number): number => median(all.map(f));
      return {
        id, routedTo, predictedMs: predicted.length ? median(predicted) : undefined,
        directMs: mid((r) => r.directMs), routedMs: mid((r) => r.routedMs), directCpuMs: mid((r) => r.directCpuMs), routedCpuMs: mid((r) => r.routedCpuMs),
      };
    });
    process.stdout.write(table(`calibration ${mode}: medians over ${runs.length} processes of per-process medians (${argv.rounds} pairs each), ms`, rows) + '\n\n');
  }
}

if (argv.processes !== undefined) await manyProcesses(argv.processes);
else {
  const result = await oneProcess();
  if (argv.json) process.stdout.write(JSON.stringify(result) + '\n');
  else process.stdout.write(table(`calibration ${result.calibration} (${(result.calibrationMs / 1000).toFixed(1)} s), medians of ${argv.rounds} alternated pairs, ms`, result.rows) + '\n');
}
