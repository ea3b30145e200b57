/**
 * Scaling of the Piscina backend over the sequential CPU backend at the course reports' sizes
 * (the ops' `seed` workloads).
 *
 *   node apps/studies/dist/piscina/scaling.js --out DIR [--threads 1,2,4,8,16] [--quick]
 *        [--ops conv2d,stencil3d,scan,convLayer,gridSearch|none] [--runs 3] [--max-seq-s 60]
 *        [--budget-s 540] [--merge [--missing]] [--full-cs610]
 *
 * For every workload: the CPU backend once (median of 3 when a run takes under 2 s), then the
 * Piscina backend at each thread count (a fresh pool per count, warmed up on the op's small
 * workload, then the median of `--runs` runs), each result checked against the CPU result:
 * bit-identical for conv2d, convLayer, stencil3d, integer scans and grid points (the workers run
 * the CPU backend's kernels, so they must be), and under the op's tolerance for float scans.
 * Writes DIR/piscina-scaling.json (raw numbers, machine) and DIR/piscina-scaling.md (the table).
 * A workload whose sequential time is estimated above --max-seq-s (from a smaller one of the same
 * op) is skipped with the estimate in the table. Progress goes to stderr.
 *
 * --full-cs610: the full 13^10-point CS610 brute force (`naive`) at the largest thread count,
 * timed, its count printed and its point list compared with the `pruned` result (11 608 points).
 * `--ops none --full-cs610` runs only that; `--cs610-steps N` (< 13) runs it on the reduced grid
 * N^10 instead, as a smoke test.
 *
 * Time: a workload costs about 7× its sequential time (the CPU run, then 3 runs at 1 thread,
 * 3 at 2, …). --budget-s (default 540, under a 10-minute command limit) skips, with a note in the
 * table, any workload whose predicted cost no longer fits. Both files are rewritten after every
 * workload, so an interrupted run keeps what it measured. --merge folds this run's rows into an
 * existing DIR/piscina-scaling.json (same op, workload, variant and mode: replaced), so the
 * full set can be measured in several commands, e.g.
 *   --ops conv2d,stencil3d,scan   then   --ops convLayer,gridSearch --merge   then   --ops none --full-cs610 --merge
 * --missing (with --merge) measures only the workloads the merged file lacks at every thread
 * count (skipped earlier for the budget), so the holes of a table fill over several commands;
 * its sequential times also serve as the estimates that decide what fits.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median } from '@kernelkit/core';
import { createCpuBackend } from '@kernelkit/cpu';
import {
  compareGridPoints,
  conv2dMultiplyAdds,
  convLayerMultiplyAdds,
  convLayerOutputShape,
  cs610Points,
  stencil3dPointUpdates,
  CONV2D_WORKLOADS,
  CONV_LAYER_WORKLOADS,
  CS610_DISP_PATH,
  CS610_GRID_PATH,
  GRID_SEARCH_WORKLOADS,
  makeConv2dArgs,
  makeConvLayerArgs,
  makeScanArgs,
  makeStencil3dArgs,
  readCs610Problem,
  reduceGrid,
  SCAN_WORKLOADS,
  STENCIL3D_WORKLOADS,
  type Backend,
  type GridPoints,
  type GridSearchArgs,
  type OpArgs,
  type OpData,
  type OpName,
  type ScanArray,
} from '@kernelkit/ops';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { checkResult, Command, integer, integers, machineInfo, mergeRows, parseStudyArgs, positive, writeTextFile } from '../common.js';

// ------------------------------------------------------------------------------ arguments

function defaultThreads(): number[] {
  const max = os.availableParallelism();
  const t: number[] = [];
  for (let n = 1; n <= max; n *= 2) t.push(n);
  if (t.at(-1) !== max) t.push(max);
  return t;
}

const argv = parseStudyArgs<{
  out: string;
  threads?: number[];
  quick?: boolean;
  ops?: string;
  runs: number;
  maxSeqS: number;
  fullCs610?: boolean;
  budgetS: number;
  merge?: boolean;
  missing?: boolean;
  cs610Steps: number;
}>(
  new Command('scaling')
    .description('the Piscina backend over the sequential CPU backend at each thread count, every result checked against the CPU one')
    .requiredOption('--out <dir>', 'write piscina-scaling.json and .md here')
    .option('--threads <list>', 'thread counts, comma-separated (default powers of two up to the cores)', integers())
    .option('--quick', 'the small workloads')
    .option('--ops <list>', 'conv2d,stencil3d,scan,convLayer,gridSearch or none')
    .option('--runs <n>', 'Piscina runs per thread count (median)', integer(), 3)
    .option('--max-seq-s <s>', 'skip workloads estimated to take longer sequentially', positive, 60)
    .option('--full-cs610', 'the full 13^10 CS610 brute force at the largest thread count')
    .option('--budget-s <s>', 'skip what no longer fits this many seconds', positive, 540)
    .option('--merge', 'fold the rows into an existing piscina-scaling.json')
    .option('--missing', 'with --merge: only the workloads the merged file lacks')
    .option('--cs610-steps <n>', 'points per axis of --full-cs610 (13 is the real one)', integer(1), 13),
);
const usage = (msg: string): never => {
  process.stderr.write(`scaling: ${msg}\n`);
  process.exit(2);
};
const OUT_DIR = path.resolve(argv.out);
const THREADS = argv.threads ?? defaultThreads();
const RUNS = argv.runs;
const MAX_SEQ_MS = argv.maxSeqS * 1000;
const BUDGET_MS = argv.budgetS * 1000;
/** Points per axis of the --full-cs610 run: 13 is the real one; fewer make a smoke test. */
const CS610_STEPS = argv.cs610Steps;
if (CS610_STEPS > 13) usage(`--cs610-steps: expected an integer 1..13, got ${CS610_STEPS}`);
const ALL_OPS: OpName[] = ['conv2d', 'stencil3d', 'scan', 'convLayer', 'gridSearch'];
const OPS = argv.ops === undefined ? ALL_OPS : argv.ops === 'none' ? [] : (argv.ops.split(',') as OpName[]);
for (const op of OPS) if (!ALL_OPS.includes(op)) usage(`--ops: unknown op ${op}`);
const QUICK = argv.quick === true;

const log = (s: string): void => void process.stderr.write(`${s}\n`);
const fmtMs = (ms: number): string => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));
const T0 = performance.now();
const remainingMs = (): number => T0 + BUDGET_MS - performance.now();
const elapsed = (): string => `${((performance.now() - T0) / 1000).toFixed(0)} s`;

// ------------------------------------------------------------------------------ workloads

type Data = Float32Array | Float64Array | ScanArray | GridPoints;

interface Workload {
  readonly op: OpName;
  readonly id: string;
  readonly label: string;
  readonly variant: string;
  /** 'plain': ordinary arrays (copied into shared memory per call); 'shared': SAB input and `out`. */
  readonly mode: 'plain' | 'shared';
  /** Work units (MACs, cell updates, elements, grid points), to estimate one workload from another. */
  readonly work: number;
  /** Builds the arguments (called once per workload; big arrays). */
  readonly make: () => unknown | Promise<unknown>;
  /** The small sibling that warms a new pool's workers up. */
  readonly warmup: () => unknown | Promise<unknown>;
}

let cs610: GridSearchArgs | undefined;
const cs610Args = async (): Promise<GridSearchArgs> => (cs610 ??= await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH));

function shareArgs(a: { input: ScanArray }): { input: ScanArray } {
  const s = new (a.input.constructor as new (b: SharedArrayBuffer) => ScanArray)(new SharedArrayBuffer(a.input.byteLength));
  s.set(a.input as never);
  return { ...a, input: s };
}

function workloads(): Workload[] {
  const list: Workload[] = [];
  const set = QUICK ? 'small' : 'seed';
  if (OPS.includes('conv2d')) {
    const warm = CONV2D_WORKLOADS.small[1];
    for (const w of CONV2D_WORKLOADS[set]) {
      list.push({ op: 'conv2d', id: w.id, label: w.label, variant: 'wasm-simd', mode: 'plain', work: conv2dMultiplyAdds(w), make: () => makeConv2dArgs(w), warmup: () => makeConv2dArgs(warm) });
    }
  }
  if (OPS.includes('stencil3d')) {
    const warm = { n: 32, steps: 20, boundary: 'copy' as const };
    for (const w of STENCIL3D_WORKLOADS[set]) {
      // The pool's default kernels: the same WebAssembly code the CPU backend's default runs, so results are bit-identical.
      for (const variant of ['wasm-simd']) {
        list.push({ op: 'stencil3d', id: w.id, label: w.label, variant, mode: 'plain', work: stencil3dPointUpdates({ nx: w.n, ny: w.n, nz: w.n, steps: w.steps }), make: () => makeStencil3dArgs(w), warmup: () => makeStencil3dArgs(warm) });
      }
    }
  }
  if (OPS.includes('scan')) {
    const ws = QUICK ? SCAN_WORKLOADS.small : SCAN_WORKLOADS.seed.filter((w) => w.n === 40_000_000);
    for (const w of ws) {
      const warm = { n: 2_000_000, dtype: w.dtype };
      list.push({ op: 'scan', id: w.id, label: w.label, variant: 'wasm-simd', mode: 'plain', work: w.n, make: () => makeScanArgs(w), warmup: () => makeScanArgs(warm) });
      list.push({ op: 'scan', id: w.id, label: `${w.label}, shared in/out`, variant: 'wasm-simd', mode: 'shared', work: w.n, make: () => shareArgs(makeScanArgs(w)), warmup: () => makeScanArgs(warm) });
    }
  }
  if (OPS.includes('convLayer')) {
    const ws = QUICK ? CONV_LAYER_WORKLOADS.small : CONV_LAYER_WORKLOADS.seed.filter((w) => w.batch === 1000 || w.batch === 10000);
    // Smallest first, so each bigger one's time can be estimated before it is run.
    const sorted = [...ws].sort((a, b) => a.batch - b.batch);
    for (const w of sorted) {
      const work = convLayerMultiplyAdds({ ...w, ...convLayerOutputShape(w) });
      const warm = { ...w, batch: 20 };
      list.push({ op: 'convLayer', id: w.id, label: w.label, variant: 'wasm-simd', mode: 'plain', work, make: () => makeConvLayerArgs(w), warmup: () => makeConvLayerArgs(warm) });
    }
  }
  if (OPS.includes('gridSearch')) {
    const w = QUICK ? GRID_SEARCH_WORKLOADS.small[0] : GRID_SEARCH_WORKLOADS.seed.find((g) => g.id === 'grid-cs610-8')!;
    const warmSteps = QUICK ? 4 : 5;
    for (const variant of ['wasm-simd', 'pruned', 'naive']) {
      list.push({
        op: 'gridSearch',
        id: w.id,
        label: w.label,
        variant,
        mode: 'plain',
        work: cs610Points(w.stepsPerDim),
        make: async () => reduceGrid(await cs610Args(), w.stepsPerDim),
        warmup: async () => reduceGrid(await cs610Args(), warmSteps),
      });
    }
  }
  return list;
}

// ------------------------------------------------------------------------------ measuring

async function call(backend: Backend, op: OpName, args: unknown, variant: string, out?: unknown): Promise<{ ms: number; data: Data; uploadMs?: number; readbackMs?: number }> {
  const fn = backend[op] as unknown as (a: unknown, o: object) => Promise<{ data: Data; timing?: { uploadMs?: number; readbackMs?: number } }>;
  const t0 = performance.now();
  const res = await fn.call(backend, args, { variant, timing: true, ...(out === undefined ? {} : { out }) });
  const ms = performance.now() - t0;
  return { ms, data: res.data, ...(res.timing?.uploadMs === undefined ? {} : { uploadMs: res.timing.uploadMs }), ...(res.timing?.readbackMs === undefined ? {} : { readbackMs: res.timing.readbackMs }) };
}

/** 'bit-identical' / 'within tolerance' when it conforms; otherwise a message starting with 'MISMATCH'. */
function check(w: Workload, args: unknown, got: Data, want: Data): string {
  const r = checkResult(w.op, args as OpArgs<OpName>, got as OpData<OpName>, { kind: 'identical', data: want as OpData<OpName> });
  return r.message === undefined ? r.how : `MISMATCH: ${r.message}`;
}

/** 'shared' rows: one preallocated shared `out`, reused by every run (as a caller reusing buffers would). */
function sharedOut(w: Workload, args: unknown): ScanArray | undefined {
  if (w.mode !== 'shared') return undefined;
  const input = (args as { input: ScanArray }).input;
  return new (input.constructor as new (b: SharedArrayBuffer) => ScanArray)(new SharedArrayBuffer(input.byteLength));
}

interface ThreadResult {
  threads: number;
  ms: number;
  runsMs: number[];
  speedup: number;
  efficiency: number;
  check: string;
  uploadMs?: number;
  readbackMs?: number;
}

interface Row {
  op: OpName;
  workload: string;
  label: string;
  variant: string;
  mode: 'plain' | 'shared';
  work: number;
  seqMs?: number;
  seqRunsMs?: number[];
  piscina: ThreadResult[];
  skipped?: string;
}

/** Predicted cost of the Piscina runs of a workload whose sequential time is `seqMs` (70 % efficiency assumed). */
const piscinaCostMs = (seqMs: number): number => THREADS.reduce((a, t) => a + ((RUNS + 0.2) * seqMs) / (t * 0.7), 0);

async function measureWorkload(w: Workload, estimate: number | undefined): Promise<Row> {
  const row: Row = { op: w.op, workload: w.id, label: w.label, variant: w.variant, mode: w.mode, work: w.work, piscina: [] };
  const skip = (why: string): Row => {
    row.skipped = why;
    log(`[${elapsed()}] ${w.op} ${w.id} (${w.variant}): skipped (${why})`);
    return row;
  };
  if (estimate !== undefined && estimate > MAX_SEQ_MS) return skip(`estimated ${(estimate / 1000).toFixed(0)} s sequential > --max-seq-s ${MAX_SEQ_MS / 1000}`);
  if (estimate !== undefined && estimate + piscinaCostMs(estimate) > remainingMs()) {
    return skip(`not run: predicted ${((estimate + piscinaCostMs(estimate)) / 1000).toFixed(0)} s > what is left of --budget-s; run it with --ops ${w.op} --merge`);
  }
  if (remainingMs() <= 0) return skip(`not run: --budget-s used up; run it with --ops ${w.op} --merge`);
  const args = await w.make();
  const warmArgs = await w.warmup();
  const cpuVariant = w.op === 'gridSearch' ? w.variant : undefined;
  await using cpu = createCpuBackend();
  // The CPU backend's own warm-up, then its timing.
  const cpuV = cpuVariant ?? cpu.variants(w.op)[0]!;
  const cpuOut = sharedOut(w, args);
  const pisOut = sharedOut(w, args);
  await call(cpu, w.op, warmArgs, cpuV);
  const first = await call(cpu, w.op, args, cpuV, cpuOut);
  const seqRuns = [first.ms];
  if (first.ms < 2000) for (let i = 0; i < 2; i++) seqRuns.push((await call(cpu, w.op, args, cpuV, cpuOut)).ms);
  const want = first.data;
  row.seqMs = median(seqRuns);
  row.seqRunsMs = seqRuns;
  log(`[${elapsed()}] ${w.op} ${w.id} (${w.variant}${w.mode === 'shared' ? ', shared' : ''}): cpu ${fmtMs(row.seqMs)} ms`);
  if (piscinaCostMs(row.seqMs) > remainingMs()) {
    return skip(`Piscina runs not made: predicted ${(piscinaCostMs(row.seqMs) / 1000).toFixed(0)} s > what is left of --budget-s; run it with --ops ${w.op} --merge`);
  }
  for (const t of THREADS) {
    await using pool = await createPiscinaBackend({ threads: t });
    await call(pool, w.op, warmArgs, w.variant);
    const runs: Array<Awaited<ReturnType<typeof call>>> = [];
    let verdict = '';
    for (let i = 0; i < RUNS; i++) {
      const r = await call(pool, w.op, args, w.variant, pisOut);
      if (i === 0) verdict = check(w, args, r.data, want);
      runs.push(r);
    }
    const ms = median(runs.map((r) => r.ms));
    const mid = [...runs].sort((a, b) => a.ms - b.ms)[Math.floor((runs.length - 1) / 2)]!;
    const speedup = row.seqMs / ms;
    const tr: ThreadResult = { threads: t, ms, runsMs: runs.map((r) => r.ms), speedup, efficiency: speedup / t, check: verdict };
    if (mid.uploadMs !== undefined) tr.uploadMs = mid.uploadMs;
    if (mid.readbackMs !== undefined) tr.readbackMs = mid.readbackMs;
    row.piscina.push(tr);
    log(`[${elapsed()}]   ${t} thread${t === 1 ? ' ' : 's'}: ${fmtMs(ms)} ms  ${speedup.toFixed(2)}×  ${(100 * tr.efficiency).toFixed(0)}%  ${verdict}`);
  }
  return row;
}

// ------------------------------------------------------------------------------ full CS610

interface FullCs610 {
  stepsPerDim: number;
  threads: number;
  naiveMs: number;
  naiveCount: number;
  prunedMs: number;
  prunedCount: number;
  identical: boolean;
  difference?: string;
}

async function fullCs610(): Promise<FullCs610> {
  const threads = Math.max(...THREADS);
  const args = CS610_STEPS === 13 ? await cs610Args() : reduceGrid(await cs610Args(), CS610_STEPS);
  const what = `${CS610_STEPS === 13 ? 'full ' : ''}CS610 (${CS610_STEPS}^10 ≈ ${cs610Points(CS610_STEPS).toExponential(2)} points)`;
  await using pool = await createPiscinaBackend({ threads });
  log(`[${elapsed()}] ${what}, ${threads} threads: pruned…`);
  const p = await call(pool, 'gridSearch', args, 'pruned');
  const pruned = p.data as GridPoints;
  log(`[${elapsed()}]   pruned: ${pruned.count} points in ${fmtMs(p.ms)} ms; naive (brute force)…`);
  let lastPct = -1;
  const t0 = performance.now();
  const res = await pool.gridSearch(args, {
    variant: 'naive',
    onProgress: ({ done, total }) => {
      const pct = Math.floor((100 * done) / total / 10) * 10;
      if (pct > lastPct) {
        lastPct = pct;
        log(`[${elapsed()}]   naive ${pct}% (${done}/${total} tasks)`);
      }
    },
  });
  const naiveMs = performance.now() - t0;
  const diff = compareGridPoints(res.data, pruned);
  const out: FullCs610 = { stepsPerDim: CS610_STEPS, threads, naiveMs, naiveCount: res.data.count, prunedMs: p.ms, prunedCount: pruned.count, identical: diff === undefined };
  if (diff !== undefined) out.difference = diff;
  const line = `${what} brute force (naive, ${threads} threads): ${res.data.count} points in ${(naiveMs / 1000).toFixed(1)} s; pruned: ${pruned.count} points in ${(p.ms / 1000).toFixed(2)} s; ${diff === undefined ? 'identical point lists' : `DIFFERENT: ${diff}`}`;
  process.stdout.write(`${line}\n`);
  return out;
}

// ------------------------------------------------------------------------------ report

/** The bench app's machine info, with the date of this run and the threads Node may use. */
function machine() {
  return { ...machineInfo(), availableParallelism: os.availableParallelism(), date: new Date().toISOString() };
}

function markdown(m: ReturnType<typeof machine>, rows: Row[], full: FullCs610 | undefined): string {
  const THREADS = [...new Set(rows.flatMap((r) => r.piscina.map((p) => p.threads)))].sort((a, b) => a - b);
  const lines: string[] = [];
  lines.push('# Piscina backend scaling');
  lines.push('');
  lines.push(`${m.cpu}, ${m.cores} cores (${m.availableParallelism} available), ${m.memoryGiB} GiB, Node ${m.node}, ${m.os}; ${m.date}.`);
  lines.push('');
  lines.push(
    `Sequential = the CPU backend (median of 3 where a run takes < 2 s, else one run). Piscina: a fresh pool per thread count, warmed up, median of ${RUNS} runs; ` +
      'cells are time · speed-up over sequential · parallel efficiency (speed-up / threads). ' +
      'Inputs are ordinary arrays (copied into shared memory per call, results copied out) unless the row says "shared in/out". ' +
      'Every result was checked against the CPU result (see the JSON `check` field). ' +
      'The last column is main-thread time spent copying inputs into shared memory and results out (including the page faults of the fresh result array) in the median run; most of it overlaps the workers.',
  );
  lines.push('');
  const maxT = THREADS.at(-1);
  lines.push(`| op | workload | variant | sequential | ${THREADS.map((t) => `${t} thread${t === 1 ? '' : 's'}`).join(' | ')} | main-thread copies in / out at ${maxT ?? '—'} threads |`);
  lines.push(`|---|---|---|---:|${THREADS.map(() => '---:').join('|')}|---:|`);
  for (const r of rows) {
    const head = `| ${r.op} | ${r.label} | ${r.variant} |`;
    if (r.skipped !== undefined) {
      const seq = r.seqMs === undefined ? '' : `${fmtMs(r.seqMs)} ms; `;
      lines.push(`${head} ${seq}skipped: ${r.skipped} |${THREADS.map(() => ' |').join('')} |`);
      continue;
    }
    const cells = THREADS.map((t) => {
      const x = r.piscina.find((p) => p.threads === t);
      if (x === undefined) return '';
      const bad = x.check.startsWith('MISMATCH') ? ' ⚠ MISMATCH' : '';
      return `${fmtMs(x.ms)} ms · ${x.speedup.toFixed(2)}× · ${(100 * x.efficiency).toFixed(0)}%${bad}`;
    });
    const top = r.piscina.find((p) => p.threads === maxT);
    const copies = top?.uploadMs === undefined ? '' : `${fmtMs(top.uploadMs)} / ${fmtMs(top.readbackMs ?? 0)} ms`;
    lines.push(`${head} ${r.seqMs === undefined ? '' : `${fmtMs(r.seqMs)} ms`} | ${cells.join(' | ')} | ${copies} |`);
  }
  const failures = rows.flatMap((r) => r.piscina.filter((p) => p.check.startsWith('MISMATCH')).map((p) => `- ${r.op} ${r.workload} ${r.variant}, ${p.threads} threads: ${p.check}`));
  lines.push('');
  lines.push(failures.length === 0 ? 'All Piscina results matched the CPU backend (bit-identical, or within the stated tolerance for float scans).' : `Mismatches:\n${failures.join('\n')}`);
  if (full !== undefined) {
    lines.push('');
    lines.push(full.stepsPerDim === 13 ? '## Full CS610 grid search (13^10 ≈ 1.38e11 points)' : `## CS610 grid search, ${full.stepsPerDim} steps per dimension (smoke test of --full-cs610)`);
    lines.push('');
    lines.push(`| variant | threads | time | points |`);
    lines.push(`|---|---:|---:|---:|`);
    lines.push(`| naive (brute force) | ${full.threads} | ${(full.naiveMs / 1000).toFixed(1)} s | ${full.naiveCount} |`);
    lines.push(`| pruned | ${full.threads} | ${(full.prunedMs / 1000).toFixed(2)} s | ${full.prunedCount} |`);
    lines.push('');
    lines.push(full.identical ? 'The brute force and the pruned search return identical point lists.' : `The point lists differ: ${full.difference}`);
  }
  lines.push('');
  return lines.join('\n');
}

// ------------------------------------------------------------------------------ main

const rowKey = (r: Row): string => `${r.op}|${r.workload}|${r.variant}|${r.mode}`;

interface Report {
  machine: ReturnType<typeof machine>;
  invocations: Array<{ date: string; args: string[]; threads: number[]; runs: number; quick: boolean }>;
  rows: Row[];
  fullCs610?: FullCs610;
}

async function main(): Promise<void> {
  const jsonPath = path.join(OUT_DIR, 'piscina-scaling.json');
  const mdPath = path.join(OUT_DIR, 'piscina-scaling.md');
  const m = machine();
  let merged: Report | undefined;
  if (argv.merge && existsSync(jsonPath)) merged = JSON.parse(readFileSync(jsonPath, 'utf8')) as Report;
  const report: Report = {
    machine: m,
    invocations: [...(merged?.invocations ?? []), { date: m.date, args: process.argv.slice(2), threads: THREADS, runs: RUNS, quick: QUICK }],
    rows: [...(merged?.rows ?? [])],
    ...(merged?.fullCs610 === undefined ? {} : { fullCs610: merged.fullCs610 }),
  };
  if (merged !== undefined && merged.machine.cpu !== m.cpu) log(`scaling: warning: merging into results from another CPU (${merged.machine.cpu})`);
  const save = async (): Promise<void> => {
    await writeTextFile(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
    await writeTextFile(mdPath, markdown(m, report.rows, report.fullCs610));
  };
  const put = async (row: Row): Promise<void> => {
    report.rows = mergeRows([report.rows, [row]], rowKey);
    await save();
  };
  log(`scaling: ${m.cpu}, ${m.availableParallelism} threads available; threads ${THREADS.join(',')}; ${QUICK ? 'quick' : 'seed'} workloads; runs ${RUNS}; budget ${BUDGET_MS / 1000} s`);
  const mine: Row[] = [];
  const complete = (r: Row | undefined): boolean => r !== undefined && r.skipped === undefined && THREADS.every((t) => r.piscina.some((p) => p.threads === t));
  for (const w of workloads()) {
    const had = merged?.rows.find((r) => rowKey(r) === rowKey({ op: w.op, workload: w.id, variant: w.variant, mode: w.mode } as Row));
    if (argv.missing && complete(had)) {
      log(`[${elapsed()}] ${w.op} ${w.id} (${w.variant}): already measured, kept (--missing)`);
      continue;
    }
    // Estimate from the last measured workload of the same op and variant (this run's first,
    // then the merged file's), scaled by work.
    const known = [...(merged?.rows ?? []), ...mine];
    const prev = [...known].reverse().find((r) => r.op === w.op && r.variant === w.variant && r.seqMs !== undefined);
    const estimate = prev === undefined ? undefined : (prev.seqMs! * w.work) / prev.work;
    const row = await measureWorkload(w, estimate);
    mine.push(row);
    await put(row);
  }
  if (argv.fullCs610) {
    report.fullCs610 = await fullCs610();
  }
  await save();
  log(`[${elapsed()}] wrote ${jsonPath} and ${mdPath}`);
  const bad = mine.some((r) => r.piscina.some((p) => p.check.startsWith('MISMATCH'))) || (argv.fullCs610 && report.fullCs610?.identical === false);
  if (bad) process.exitCode = 1;
}

await main();
