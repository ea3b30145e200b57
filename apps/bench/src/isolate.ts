import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from 'kernelkit/cli-kit';
import { benchOps, type BenchBackend } from './backends.js';
import { benchCases } from './cases.js';
import { runFloor } from './floor.js';
import { machineInfo } from './machine.js';
import { withSpeedups } from './ladder.js';
import { mergeReports, withoutSpeedups } from './merge.js';
import { medianRounds } from './rounds.js';
import { CHECK_POLICY, WARM_UP_POLICY, pairsDone, type RunHooks } from './run.js';
import type { BackendStart, BenchOptions, BenchReport, Row } from './types.js';

/** The report's isolation line for the default run. */
export const ONE_PROCESS_PER_BACKEND =
  'one child process per backend and per peer, one after another (a detached ArrayBuffer, which WebGPU buffer mapping and a peer growing its WebAssembly memory leave behind, slows the JavaScript kernels for the rest of a process)';

/** Set in a child's environment to the run's shared reference folder; the child then reports rows over IPC. */
export const CHILD_ENV = 'KERNELKIT_BENCH_CHILD';
/** cli-kit's relaunch markers: a child of ours is not the relaunched filter child, whatever its parent is. */
const RELAUNCH_ENV = ['KERNELKIT_STDERR_FILTERED', 'KERNELKIT_STDERR_COLUMNS'];
/** How much of a crashed child's stderr its errored rows quote. */
const TAIL_CHARS = 2000;

/** What a child sends its parent over IPC. */
export type ChildMessage = { readonly kind: 'total'; readonly total: number } | { readonly kind: 'row'; readonly row: Row };

/** The command line that runs one backend of `o` in a child writing its report to `json`. */
export function childArgs(o: BenchOptions, backend: BenchBackend, json: string): string[] {
  return [
    '--workload', o.workload,
    '--op', o.ops.join(','),
    '--backend', backend,
    ...(o.variants ? ['--variant', o.variants.join(',')] : []),
    ...(o.cases ? ['--case', o.cases.join(',')] : []),
    ...(o.threads === undefined ? [] : ['--threads', String(o.threads)]),
    '--json', json,
    '--in-process',
    '--no-progress',
    // The parent measured the floor before its children: one probe per run.
    '--no-floor',
    ...(o.sideBySide === false ? ['--no-side-by-side'] : []),
  ];
}

export interface ChildResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderrTail: string;
}

/** Runs one child; its stderr passes through to ours (when `relay`) and its last lines are kept for a crash report. */
export function runChild(script: string, args: readonly string[], referenceDir: string, onMessage: (m: ChildMessage) => void, relay: boolean): Promise<ChildResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, [CHILD_ENV]: referenceDir };
  for (const k of RELAUNCH_ENV) delete env[k];
  const child = spawn(process.execPath, [...process.execArgv, script, ...args], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env });
  // A parent that exits (an error, a signal it handles) takes its child along.
  const kill = (): void => void child.kill();
  process.once('exit', kill);
  let tail = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    if (relay) process.stderr.write(chunk);
    tail = (tail + chunk).slice(-TAIL_CHARS);
  });
  child.on('message', (m) => onMessage(m as ChildMessage));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      process.off('exit', kill);
      resolve({ code, signal, stderrTail: tail.trim() });
    });
  });
}

async function readReport(path: string): Promise<BenchReport | undefined> {
  try {
    const r = JSON.parse(await readFile(path, 'utf8')) as BenchReport;
    return r.schema === 'kernelkit-bench/1' ? r : undefined;
  } catch {
    return undefined;
  }
}

export interface IsolatedHooks extends Pick<RunHooks, 'onRow' | 'onPartial'> {
  /** The rows planned so far: it grows as each child plans its own. */
  readonly onTotal?: (total: number) => void;
  /** Whether the children's stderr (backend warnings) passes through to ours. */
  readonly relayStderr?: boolean;
}

/**
 * Runs each backend of `o` in its own child process (`script` is the bench CLI, run with one
 * `--backend` and `--in-process`), the CPU backend first, and merges their reports; with
 * `o.rounds`, all of that again as many times, each row keeping its median round. A child that
 * dies keeps the rows it reported; the cases it did not reach become errored rows quoting its
 * stderr, and its backend an errored one.
 */
export async function runIsolated(o: BenchOptions, script: string, hooks: IsolatedHooks = {}): Promise<BenchReport> {
  const t0 = performance.now();
  const date = new Date().toISOString();
  const cases = benchCases(o.workload).filter((c) => o.ops.includes(c.op) && (o.cases === undefined || o.cases.includes(c.id)));
  const order = [...o.backends].sort((a, b) => (a === 'cpu' ? -1 : b === 'cpu' ? 1 : 0));
  // Measured here, before any child runs, with the machine otherwise idle.
  const floor = await runFloor(o);
  const dir = await mkdtemp(join(tmpdir(), 'kernelkit-bench-'));
  const rounds = o.rounds ?? 1;
  // Each round's reports, one per backend; a row keeps its median round (rounds.ts).
  const roundParts: BenchReport[][] = [];
  let total = 0;
  // Partial reports are written one after another, never two at once to the same file.
  let writing: Promise<void> = Promise.resolve();
  const base = (backends: readonly BackendStart[], rows: readonly Row[], partial: boolean): BenchReport => ({
    schema: 'kernelkit-bench/1',
    date,
    workload: o.workload,
    machine: machineInfo(),
    backends,
    rows,
    wallMs: 0,
    checkPolicy: CHECK_POLICY,
    ...(partial ? { partial: { pairsDone: pairsDone(rows), pairsPlanned: rounds * order.length * cases.length } } : {}),
  });
  const compose = (extra: BenchReport | undefined): BenchReport => {
    const all = [...roundParts.flat(), ...(extra ? [extra] : [])];
    const merged = all.length ? mergeReports(all.map((report, i) => ({ name: `part ${i + 1}`, report }))) : base([], [], false);
    const { mergedFrom: _m, stoppedParts: _s, partial: _p, ...rest } = merged;
    const done = roundParts.flat().reduce((n, p) => n + pairsDone(p.rows), 0) + (extra ? pairsDone(extra.rows) : 0);
    // A row measured in several rounds keeps its median one; speed-ups are then worked out again among the kept rows.
    const roundRows = roundParts.map((parts, i) => [...parts, ...(extra && i === roundParts.length - 1 ? [extra] : [])].flatMap((p) => p.rows));
    const rows = rounds > 1 ? withSpeedups(medianRounds(roundRows).map(withoutSpeedups), rest.sequentialBaseline ?? {}) : rest.rows;
    return {
      ...rest,
      rows,
      date,
      checkPolicy: CHECK_POLICY,
      warmUp: WARM_UP_POLICY,
      isolation: ONE_PROCESS_PER_BACKEND,
      wallMs: performance.now() - t0,
      ...(extra?.partial ? { partial: { pairsDone: done, pairsPlanned: rounds * order.length * cases.length } } : {}),
      ...(floor ? { floor } : {}),
      ...(rounds > 1 ? { rounds } : {}),
    };
  };
  try {
    for (let round = 0; round < rounds; round++) {
      const parts: BenchReport[] = [];
      roundParts.push(parts);
      for (const name of order) {
        const own = cases.filter((c) => benchOps(name, [c.op]).length > 0);
        if (!own.length) {
          parts.push(base([{ backend: name, status: 'skipped', reason: `has rows for ${benchOps(name, ['conv2d', 'stencil3d', 'scan', 'gridSearch', 'convLayer']).join(' and ')} only; none of those selected` }], [], false));
          continue;
        }
        const json = join(dir, `${name}.json`);
        const live: Row[] = [];
        const res = await runChild(
          script,
          childArgs(o, name, json),
          dir,
          (m) => {
            if (m.kind === 'total') hooks.onTotal?.((total += m.total));
            else {
              live.push(m.row);
              hooks.onRow?.(m.row);
              const snapshot = compose(base([{ backend: name, status: 'ok' }], live, true));
              writing = writing.then(() => hooks.onPartial?.(snapshot)).catch(() => {});
            }
          },
          hooks.relayStderr ?? true,
        );
        await writing;
        const report = await readReport(json);
        if (res.code === 0 && report && !report.partial) {
          parts.push(report);
          continue;
        }
        if (res.code === 2 && !live.length) throw new UsageError('--backend', `the ${name} child refused its arguments: ${res.stderrTail}`);
        const how = res.signal ? `was killed by ${res.signal}` : `exited with code ${res.code}`;
        const why = `its child process ${how}${res.stderrTail ? `: ${res.stderrTail}` : ''}`;
        const rows = report?.rows.length ? report.rows : live;
        const reached = new Set(rows.map((r) => r.caseId));
        const lost: Row[] = own.filter((c) => !reached.has(c.id)).map((c) => ({ status: 'errored', op: c.op, caseId: c.id, label: c.label, backend: name, variant: '*', message: why }));
        for (const r of lost) hooks.onRow?.(r);
        const started = report?.backends.find((b) => b.backend === name);
        parts.push({ ...base([{ ...started, backend: name, status: 'errored', reason: why }], [...rows, ...lost], false), ...(report?.sequentialBaseline ? { sequentialBaseline: report.sequentialBaseline } : {}) });
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const report = compose(undefined);
  if (o.variants !== undefined && !report.rows.some((r) => r.status !== 'skipped' && o.variants!.includes(r.variant))) {
    throw new UsageError('--variant', `${o.variants.join(', ')} matches no row of the selected cases and backends`);
  }
  return report;
}
