import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TRIAL_MAX_CALLS, WARM_UP_MAX_CALLS, type BackendLoaders } from 'kernelkit';
import { callsUntilResultsReused, median, writeFileAtomic, errorMessage } from '@kernelkit/core';
import { createCpuBackend } from '@kernelkit/cpu';
import { OP_NAMES, type GridPoints, type OpArgs, type OpData, type OpName, type RunOptions } from '@kernelkit/ops';
import { ROUTED_VARIANT, ROUTER, benchOps, capReason, openBackend, type BenchBackend, type CallOutput, type Contender } from './backends.js';
import { UsageError } from 'kernelkit/cli-kit';
import { benchCases, type BenchCase } from './cases.js';
import { checkResult, type Reference } from './check.js';
import { runFloor } from './floor.js';
import { ladderOrder, withSpeedups } from './ladder.js';
import { machineInfo } from './machine.js';
import { measure, singleSample, type Measured } from './measure.js';
import { RESIDENT_BACKENDS, measureResident } from './resident.js';
import { measureSideBySide } from './side-by-side.js';
import type { BackendStart, BenchOptions, BenchReport, Row } from './types.js';

export interface RunHooks {
  readonly loaders?: BackendLoaders;
  /** The number of rows the run will produce, once every backend is open and the rows are planned. */
  readonly onTotal?: (total: number) => void;
  /** Each row (measured or skipped) as soon as it is known, so a run cut short (a device-time limit) still reports. */
  readonly onRow?: (row: Row) => void;
  /** The report so far (marked `partial`) after each row, for writers that must survive a kill. */
  readonly onPartial?: (report: BenchReport) => void | Promise<void>;
  /**
   * A folder shared by the processes of one isolated run: the CPU backend leaves its grid-search
   * point lists there, and later backends check against them (the f64 brute force is far too slow
   * at the seed sizes).
   */
  readonly referenceDir?: string;
  /** How the rows were isolated, for the report (default: IN_PROCESS). */
  readonly isolation?: string;
  /** A child of an isolated run has one backend: an unknown --variant is the parent's to judge across all of them. */
  readonly parentChecksVariants?: boolean;
}

/** The backend × case pairs `rows` measured (a pair has one row per variant). */
export const pairsDone = (rows: readonly Row[]): number => new Set(rows.map((r) => `${r.backend}\0${r.caseId}`)).size;

/** The report's isolation line for a run of every backend in this one process. */
export const IN_PROCESS = 'all backends in one process (--in-process): rows after a WebGPU or peer row may be slowed by detached ArrayBuffers';

function call(b: Contender, op: OpName, args: OpArgs<OpName>, o: RunOptions<never>): Promise<CallOutput> {
  return b.call(op, args, o);
}

const gridFile = (dir: string, caseId: string): string => join(dir, `${caseId}.grid.json`);

/** The sequential CPU backend's point list (its kernels pass the f64 conformance suite). */
async function cpuGridPoints(args: OpArgs<'gridSearch'>): Promise<GridPoints> {
  const cpu = createCpuBackend();
  try {
    return (await cpu.gridSearch(args)).data;
  } finally {
    await cpu.dispose();
  }
}

/** The CPU backend's grid-search point lists another process of this run left in `dir`. */
async function loadGridReferences(dir: string, cases: readonly BenchCase[], into: Map<string, OpData<OpName>>): Promise<void> {
  for (const c of cases.filter((x) => x.op === 'gridSearch')) {
    const text = await readFile(gridFile(dir, c.id), 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    const g = JSON.parse(text) as { count: number; dims: number; points: number[] };
    into.set(c.id, { count: g.count, dims: g.dims, points: Float64Array.from(g.points) } satisfies GridPoints);
  }
}

export const CHECK_POLICY =
  'Every row is checked before it is timed. scan: against the f64 reference (integers bit-exact). small/tiny: CPU rows and, without a CPU row, ' +
  'all rows against the f64 reference (verifyResult); other backends against the sequential CPU output under the op\'s error factor × max|output|. ' +
  'seed: the CPU output is trusted as the sequential baseline (the CPU backend passes the f64 conformance suite); grid search must equal the CPU point list exactly. ' +
  'Where the CPU output is not at hand (each backend in its own process, or no CPU row): small/tiny against the f64 reference; seed against it at 2000 sampled outputs, grid search against the CPU point list the CPU process left behind, or one the CPU backend computes in that process when there was no CPU row. ' +
  'Peers (onnxruntime, tfjs-wasm) are checked like any other backend.';

/** One backend's share of the run: its rows to measure, or the reason it could not start. */
type Planned =
  | { readonly name: BenchBackend; readonly status: 'ok'; readonly backend: Contender; readonly startMs: number; readonly work: readonly { readonly c: BenchCase; readonly variants: readonly string[] }[] }
  | { readonly name: BenchBackend; readonly status: 'errored'; readonly reason: string; readonly cases: readonly BenchCase[] };

/** --variant names that no started backend has for the selected ops, and a filter that leaves no row, are usage errors. */
function checkVariants(o: BenchOptions, plan: readonly Planned[], cases: readonly BenchCase[]): void {
  if (o.variants === undefined) return;
  const started = plan.filter((p): p is Extract<Planned, { status: 'ok' }> => p.status === 'ok');
  const notStarted = plan.filter((p) => p.status === 'errored').map((p) => p.name);
  const ops = [...new Set(cases.map((c) => c.op))];
  const unstarted = notStarted.length ? `; ${notStarted.join(', ')} did not start, so their variants are unknown` : '';
  const offered = (p: (typeof started)[number], op: OpName): readonly string[] => (p.name === ROUTER ? [ROUTED_VARIANT] : p.backend.variants(op));
  const known = new Set(started.flatMap((p) => ops.flatMap((op) => offered(p, op))));
  const has = started.map((p) => `${p.name}: ${[...new Set(ops.flatMap((op) => offered(p, op)))].join(', ')}`);
  const unknown = o.variants.filter((v) => !known.has(v));
  if (unknown.length) throw new UsageError('--variant', `unknown variant ${unknown.join(', ')} for --op ${ops.join(',')} (${has.join('; ') || 'no backend started'}${unstarted})`);
  if (!started.some((p) => p.work.some((w) => w.variants.length > 0))) {
    throw new UsageError('--variant', `${o.variants.join(', ')} matches no row of the selected cases (${has.join('; ')}${unstarted})`);
  }
}

/** Runs every selected op × backend × variant; a failing backend or row never stops the run. */
export async function runBench(o: BenchOptions, hooks: RunHooks = {}): Promise<BenchReport> {
  const t0 = performance.now();
  const cases = benchCases(o.workload).filter((c) => o.ops.includes(c.op) && (o.cases === undefined || o.cases.includes(c.id)));
  if (!cases.length) throw new UsageError('--case', `no case of the ${o.workload} workload matches the --op and --case filters`);
  // cpu first: its outputs are the reference for the others and its times the sequential baseline.
  const order = [...o.backends].sort((a, b) => (a === 'cpu' ? -1 : b === 'cpu' ? 1 : 0));
  const argsCache = new Map<string, OpArgs<OpName>>();
  const cpuRef = new Map<string, OpData<OpName>>();
  const cpuDefault: Partial<Record<OpName, string>> = {};
  const rows: Row[] = [];
  const starts: BackendStart[] = [];
  // Every backend opens before any row runs: the variants are then known (the row count, the
  // --variant check), and what opening prints (Dawn's warnings) lands before a progress bar starts.
  const plan: Planned[] = [];
  if (hooks.referenceDir !== undefined) await loadGridReferences(hooks.referenceDir, cases, cpuRef);
  // Before any backend opens: a pool's or device's threads would compete with the probe.
  const floor = await runFloor(o);
  try {
    for (const name of order) {
      const own = cases.filter((c) => benchOps(name, [c.op]).length > 0);
      if (!own.length) {
        // A peer with no counterpart of the selected ops: listed, so the table says why it has no rows.
        starts.push({ backend: name, status: 'skipped', reason: `has rows for ${benchOps(name, OP_NAMES).join(' and ')} only; none of those selected` });
        continue;
      }
      const opened = await openBackend(name, o.threads, hooks.loaders);
      if (opened.status === 'errored') {
        plan.push({ name, status: 'errored', reason: opened.reason, cases: own });
        starts.push({ backend: name, status: 'skipped', reason: opened.reason });
        continue;
      }
      const b = opened.backend;
      const offered = (c: BenchCase): string[] => (name === ROUTER ? [ROUTED_VARIANT] : ladderOrder(c.op, [...b.variants(c.op)]));
      const work = own.map((c) => ({ c, variants: offered(c).filter((v) => o.variants === undefined || o.variants.includes(v)) }));
      plan.push({ name, status: 'ok', backend: b, startMs: opened.startMs, work });
      starts.push({ backend: name, status: 'ok', startMs: opened.startMs, description: b.info.description, info: b.info });
    }
    if (!hooks.parentChecksVariants) checkVariants(o, plan, cases);
    const planned = plan.reduce((n, p) => n + (p.status === 'ok' ? p.work.reduce((k, w) => k + w.variants.length, 0) : p.cases.length), 0);
    hooks.onTotal?.(planned);
    const snapshot = (partial: boolean): BenchReport => ({
      schema: 'kernelkit-bench/1',
      date: new Date().toISOString(),
      workload: o.workload,
      machine: machineInfo(),
      backends: [...starts],
      rows: withSpeedups(rows, cpuDefault),
      wallMs: performance.now() - t0,
      checkPolicy: CHECK_POLICY,
      warmUp: WARM_UP_POLICY,
      isolation: hooks.isolation ?? IN_PROCESS,
      sequentialBaseline: { ...cpuDefault },
      ...(partial ? { partial: { pairsDone: pairsDone(rows), pairsPlanned: order.length * cases.length } } : {}),
      ...(floor ? { floor } : {}),
    });
    const add = async (row: Row): Promise<void> => {
      rows.push(row);
      hooks.onRow?.(row);
      await hooks.onPartial?.(snapshot(true));
    };

    for (const p of plan) {
      if (p.status === 'errored') {
        for (const c of p.cases) await add({ status: 'skipped', op: c.op, caseId: c.id, label: c.label, backend: p.name, variant: '*', reason: `backend unavailable: ${p.reason}` });
        continue;
      }
      const b = p.backend;
      try {
        for (const { c, variants } of p.work) {
          const def = b.variants(c.op)[0];
          if (p.name === 'cpu' && def !== undefined) cpuDefault[c.op] = def;
          if (!variants.length) continue;
          let args = argsCache.get(c.id);
          if (!args) argsCache.set(c.id, (args = await c.make()));
          for (const variant of variants) await add(await runRow(b, p.name, c, variant, args, o, cpuRef, hooks.loaders));
          if (p.name === 'cpu' && c.op === 'gridSearch' && hooks.referenceDir !== undefined && cpuRef.has(c.id)) {
            const g = cpuRef.get(c.id) as GridPoints;
            await writeFileAtomic(gridFile(hooks.referenceDir, c.id), JSON.stringify({ count: g.count, dims: g.dims, points: [...g.points] }));
          }
        }
      } finally {
        // Done with this backend: its pool or device is released before the next one is measured.
        await b.dispose().catch(() => {});
      }
    }
    return snapshot(false);
  } finally {
    for (const p of plan) if (p.status === 'ok' && !p.backend.disposed) await p.backend.dispose().catch(() => {});
  }
}

async function runRow(b: Contender, name: BenchBackend, c: BenchCase, variant: string, args: OpArgs<OpName>, o: BenchOptions, cpuRef: Map<string, OpData<OpName>>, loaders: BackendLoaders | undefined): Promise<Row> {
  const key = { op: c.op, caseId: c.id, label: c.label, backend: name, variant };
  const cap = capReason(b, variant, c);
  if (cap) return { ...key, status: 'skipped', reason: cap };
  try {
    // The router row passes no variant: choosing one is what it is measured for.
    // Timed samples run without `timing`, as most callers do: on a hardware GPU asking for
    // kernel timestamps adds a clock warm-up to each call. Kernel times come from separate timed calls.
    const plain = name === ROUTER ? {} : { variant };
    const opts = { ...plain, timing: true };
    const explored = name === ROUTER ? await settleRouter(b, c.op, args) : undefined;
    let t = performance.now();
    const first = await call(b, c.op, args, opts);
    let last = first;
    const firstCallMs = performance.now() - t;
    // Seed grid searches without a CPU point list at hand get one computed here: the f64 brute
    // force over 1e9-1e11 points would take hours.
    if (name !== 'cpu' && c.op === 'gridSearch' && o.workload === 'seed' && !cpuRef.has(c.id)) cpuRef.set(c.id, await cpuGridPoints(args as OpArgs<'gridSearch'>));
    const ref: Reference | undefined =
      name === 'cpu'
        ? o.workload === 'seed'
          ? undefined
          : { kind: 'f64' }
        : cpuRef.has(c.id)
          ? { kind: 'cpu', data: cpuRef.get(c.id)! }
          : o.workload === 'seed'
            ? { kind: 'sampled' }
            : { kind: 'f64' };
    let how = 'sequential baseline (trusted)';
    if (ref) {
      const r = checkResult(c.op, args, first.data, ref);
      if (r.message !== undefined) return { ...key, status: 'errored', message: `wrong result (${r.how}): ${r.message}` };
      how = r.how;
    }
    if (name === 'cpu' && !cpuRef.has(c.id)) cpuRef.set(c.id, first.data);
    // A row whose run exceeds the single-shot bound (singleShotMs: the CPU rows at the course
    // reports' sizes) is timed once: by its checked first run when that alone is over
    // the bound (multi-second rows are compute, not compile), else by one warm second run. The
    // point is a full table inside a 2-core CI budget or a 10-minute GPU-host call.
    const singleShotMs = o.workload === 'small' ? 1500 : o.workload === 'seed' ? 5000 : 30_000;
    const budgetMs = o.workload === 'seed' ? 3000 : o.workload === 'tiny' ? 200 : 1200;
    let m: Measured;
    // Where the router's timed samples went, call by call: the row names what they measured.
    const timedRoutes = new Map<string, number>();
    // The calls asked for `timing`: their kernel, upload and readback times give the row's medians.
    let timed: Timed[];
    if (firstCallMs > singleShotMs) {
      m = singleSample(firstCallMs, first.timing?.kernelMs);
      timed = [first.timing];
    } else {
      t = performance.now();
      const second = await call(b, c.op, args, opts);
      last = second;
      const timedMs = performance.now() - t;
      timed = [second.timing];
      if (timedMs > singleShotMs) m = singleSample(timedMs, second.timing?.kernelMs);
      else {
        await warmUntilResultsReused(b, c.op, args, plain, second.data, budgetMs);
        // Calls with `timing` run first: on a hardware GPU each starts with a clock warm-up, so the
        // samples start at the clocks a busy GPU runs at, whatever this process did before.
        timed.push(...(await timedCalls(b, c.op, args, opts, timedMs)));
        // The samples' count comes from a plain call's time: one with `timing` also spins the clocks up.
        t = performance.now();
        await call(b, c.op, args, plain);
        const estMs = performance.now() - t;
        m = await measure(async () => void countRoute(timedRoutes, await call(b, c.op, args, plain)), estMs, budgetMs, singleShotMs);
        if (m.stats.samples > 1) m = { ...m, ...kernelMedian(timed.map((x) => x?.kernelMs)) };
      }
    }
    const perSec = (ms: number) => c.work / (ms / 1000);
    // Half the row's budget: resident calls are the short ones, and seed runs must fit the GPU host's call limit.
    const resident = RESIDENT_BACKENDS.includes(name) ? await measureResident(b, c.op, args, variant, ref, budgetMs / 2, singleShotMs) : undefined;
    // A row timed once was timed by its first or second call.
    if (name === ROUTER && timedRoutes.size === 0) countRoute(timedRoutes, last);
    const ran = routeSummary(timedRoutes);
    const side =
      name === ROUTER && o.sideBySide !== false && m.stats.samples > 1
        ? await measureSideBySide(b, c.op, args, last.route, {
            threads: o.threads,
            loaders,
            budgetMs,
            warm: async (d, v, out) => {
              await warmUntilResultsReused(d, c.op, args, { variant: v }, out.data, budgetMs);
              // As tinybench warms a row: a quarter of its budget, at least two calls.
              const t0 = performance.now();
              for (let i = 0; i < 2 || performance.now() - t0 < budgetMs / 4; i++) await call(d, c.op, args, { variant: v });
            },
          })
        : undefined;
    const sideNotes = side?.skipped.length ? [`side by side without ${side.skipped.join('; ')}`] : [];
    const notes = [...((name === ROUTER ? last : first).notes ?? []), ...(explored === undefined ? [] : [explored]), ...(ran.note === undefined ? [] : [ran.note]), ...(resident?.notes ?? []), ...sideNotes];
    return {
      ...key,
      status: 'ok',
      software: b.info.software,
      firstCallMs,
      stats: m.stats,
      ...(m.kernelMedianMs === undefined ? {} : { kernelMedianMs: m.kernelMedianMs, kernelThroughput: { value: perSec(m.kernelMedianMs), unit: c.unit } }),
      ...medianOf('uploadMedianMs', timed.map((x) => x?.uploadMs)),
      ...medianOf('readbackMedianMs', timed.map((x) => x?.readbackMs)),
      ...(ArrayBuffer.isView(first.data) ? { outputBytes: first.data.byteLength } : {}),
      ...(resident?.medianMs === undefined ? {} : { residentMedianMs: resident.medianMs, residentThroughput: { value: perSec(resident.medianMs), unit: c.unit } }),
      throughput: { value: perSec(m.stats.medianMs), unit: c.unit },
      check: how,
      ...(ran.routedTo === undefined ? {} : { routedTo: ran.routedTo }),
      ...(side?.sideBySide === undefined ? {} : { sideBySide: side.sideBySide }),
      // The router's notes are its warm call's (its first may have weighed a backend's start-up).
      ...(notes.length ? { notes } : {}),
    };
  } catch (err) {
    return { ...key, status: 'errored', message: errorMessage(err) };
  }
}

type Timed = CallOutput['timing'];

/** The report's `warmUp`: what warmUntilResultsReused does. */
export const WARM_UP_POLICY =
  "untimed calls until a result of 1 MiB or more comes from memory an earlier, dropped result used (its first write no longer page-faults, as in a loop's settled calls)";

/**
 * Untimed calls until a row's host results come from reused memory, as a loop's calls do once
 * settled (callsUntilResultsReused: the backends hand a result of 1 MiB or more fresh memory, a
 * page fault per 4 KiB, until callers have held a bound of bytes and a prompted collection hands
 * the dropped ones back). Without this a row's samples fall in that stretch or not depending on
 * the process's heap. At most 3 × `budgetMs`.
 */
export async function warmUntilResultsReused(b: Contender, op: OpName, args: OpArgs<OpName>, o: RunOptions<never>, data: unknown, budgetMs: number): Promise<void> {
  if (!ArrayBuffer.isView(data)) return;
  const calls = callsUntilResultsReused(data.byteLength);
  const t0 = performance.now();
  for (let i = 0; i < calls && performance.now() - t0 < 3 * budgetMs; i++) await call(b, op, args, o);
}

/**
 * The router's first calls of a case explore (a warm-up and a trial per candidate near the
 * best, and a close race run again back to back): they are made here, before the row's first call,
 * so the row times the settled choice. At most WARM_UP_MAX_CALLS + TRIAL_MAX_CALLS calls per candidate (its
 * longest warm-up and trial), as many for each of a close race's two, and two more. Returns the note saying what exploring took.
 */
export async function settleRouter(b: Contender, op: OpName, args: OpArgs<OpName>): Promise<string> {
  const t0 = performance.now();
  let calls = 0;
  let route: CallOutput['route'];
  do {
    route = (await call(b, op, args, {})).route;
    calls++;
  } while (route !== undefined && !route.settled && calls < (WARM_UP_MAX_CALLS + TRIAL_MAX_CALLS) * ((route.candidates ?? 1) + 2) + 2);
  const trials = Object.entries(route?.trials ?? {}).map(([name, ms]) => `${name} ${ms.toFixed(1)} ms${route?.trialCalls?.[name] === undefined ? '' : ` (${route.trialCalls[name]} calls)`}`);
  const state = route === undefined || route.settled ? 'settled' : 'not settled';
  // Predictions too: a candidate predicted far from the best is never tried, and only they say why.
  const predicted = [
    ...(route?.predictedMs === undefined ? [] : [`${route.backend}/${route.variant} ${route.predictedMs.toFixed(1)} ms`]),
    ...(route?.runnerUp?.predictedMs === undefined ? [] : [`runner-up ${route.runnerUp.backend}/${route.runnerUp.variant} ${route.runnerUp.predictedMs.toFixed(1)} ms`]),
  ];
  return `router ${state} after ${calls} call${calls === 1 ? '' : 's'} (${((performance.now() - t0) / 1000).toFixed(1)} s)${trials.length ? `; trials: ${trials.join(', ')}` : ''}${predicted.length ? `; predicted: ${predicted.join(', ')}` : ''}`;
}

/** Counts a routed call's backend/variant in `routes` (calls without a route are not counted). */
function countRoute(routes: Map<string, number>, out: CallOutput): void {
  if (out.route?.backend === undefined) return;
  const r = `${out.route.backend}/${out.route.variant ?? ''}`;
  routes.set(r, (routes.get(r) ?? 0) + 1);
}

/** The route most counted calls took and, when they split, a note listing every route with its count. */
export function routeSummary(routes: ReadonlyMap<string, number>): { routedTo?: string; note?: string } {
  const byCount = [...routes].sort((x, y) => y[1] - x[1]);
  if (byCount.length === 0) return {};
  return {
    routedTo: byCount[0]![0],
    ...(byCount.length > 1 ? { note: `the timed calls (and tinybench's warm-up) ran on ${byCount.map(([r, n]) => `${r} (${n})`).join(', ')}` } : {}),
  };
}

/** Up to three more calls with `timing` when a call is cheap, for the kernel, upload and readback medians. */
async function timedCalls(b: Contender, op: OpName, args: OpArgs<OpName>, opts: RunOptions<never>, estMs: number): Promise<Timed[]> {
  const out: Timed[] = [];
  for (let i = 0; i < (estMs < 1000 ? 3 : 0); i++) out.push((await call(b, op, args, opts)).timing);
  return out;
}

/** `{ [key]: median }` of the samples a backend reported, or nothing when it reported none. */
function medianOf<K extends string>(key: K, samples: readonly (number | undefined)[]): Partial<Record<K, number>> {
  const xs = samples.filter((k): k is number => k !== undefined);
  return xs.length ? ({ [key]: median(xs) } as Partial<Record<K, number>>) : {};
}

function kernelMedian(samples: readonly (number | undefined)[]): { kernelMedianMs?: number } {
  const ks = samples.filter((k): k is number => k !== undefined);
  return ks.length ? { kernelMedianMs: median(ks) } : {};
}
