/**
 * How long after an abort does a call stop? For each backend and op, a call sized to run for
 * seconds is aborted after `--after` ms; the time from `abort()` to the call settling is the
 * abort latency (median and worst of `--runs`). A call that resolved instead counts as not
 * stopped. Also the largest event-loop stall seen while the call ran (a cooperative kernel keeps
 * timers running). The numbers behind the README's Reliability table.
 *
 *   node apps/studies/dist/reliability/abort-latency.js [--backends cpu,piscina,gpujs,webgpu] [--gpujs-modes cpu,webasm,headlessgl,webgpu] [--runs 3] [--json FILE] [--md FILE]
 */
import { median } from '@kernelkit/core';
import { createCpuBackend } from '@kernelkit/cpu';
import { createGpujsBackend, GPUJS_MODES, type GpujsMode } from '@kernelkit/gpujs';
import { CS610_DISP_PATH, CS610_GRID_PATH, makeConv2dArgs, makeConvLayerArgs, makeScanArgs, makeStencil3dArgs, OP_NAMES, readCs610Problem, reduceGrid, type Backend, type GridSearchArgs, type OpName } from '@kernelkit/ops';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { Command, integer, machineInfo, parseStudyArgs, someOf, writeTextFile } from '../common.js';

const BACKENDS = ['cpu', 'piscina', 'gpujs', 'webgpu'] as const;
type StudyBackend = (typeof BACKENDS)[number];

const argv = parseStudyArgs<{ backends: StudyBackend[]; gpujsModes: GpujsMode[]; ops: OpName[]; runs: number; after: number; json?: string; md?: string }>(
  new Command('abort-latency')
    .description('time from abort() to the call settling, per backend and op, for calls that would run for seconds')
    .option('--backends <list>', `comma-separated: ${BACKENDS.join(', ')} (webgpu on the default adapter)`, someOf(BACKENDS), [...BACKENDS])
    .option('--gpujs-modes <list>', `the gpujs modes to measure, comma-separated: ${GPUJS_MODES.join(', ')}`, someOf(GPUJS_MODES), ['cpu'])
    .option('--ops <list>', `comma-separated: ${OP_NAMES.join(', ')}`, someOf(OP_NAMES), [...OP_NAMES])
    .option('--runs <n>', 'aborted calls per backend and op', integer(), 3)
    .option('--after <ms>', 'abort this long after the call starts', integer(), 200)
    .option('--json <file>', 'write the rows as JSON')
    .option('--md <file>', 'write a Markdown table'),
);

/** A call that runs for seconds on every backend, with inputs of at most ~100 MB. */
function longCall(op: OpName, cs610: GridSearchArgs): unknown {
  switch (op) {
    case 'conv2d':
      return makeConv2dArgs({ batch: 8, height: 1024, width: 1024, k: 31 });
    case 'stencil3d':
      return makeStencil3dArgs({ n: 48, steps: 1_000_000, boundary: 'zero' });
    case 'scan':
      return makeScanArgs({ n: 24_000_000, dtype: 'f32' });
    case 'gridSearch':
      // The CS610 search at 12 points per axis: 6.2e10 points.
      return reduceGrid(cs610, 12);
    case 'convLayer':
      return makeConvLayerArgs({ batch: 400, channels: 16, height: 40, width: 40, maps: 64, k: 7 });
  }
}

/** What is measured: each backend, gpujs once per mode asked for. */
function targets(): Array<{ readonly label: string; readonly open: () => Promise<Backend> }> {
  return argv.backends.flatMap((name) => {
    switch (name) {
      case 'cpu':
        return [{ label: name, open: async () => createCpuBackend() }];
      case 'piscina':
        return [{ label: name, open: () => createPiscinaBackend() }];
      case 'gpujs':
        return argv.gpujsModes.map((mode) => ({ label: `gpujs (${mode})`, open: () => createGpujsBackend({ mode }) }));
      case 'webgpu':
        return [{ label: name, open: () => createWebGpuBackend() }];
    }
  });
}

interface Row {
  readonly backend: string;
  readonly op: OpName;
  readonly medianMs: number | undefined;
  readonly worstMs: number | undefined;
  /** Calls that resolved instead of rejecting with AbortError. */
  readonly notStopped: number;
  readonly runs: number;
  /** Largest gap between 10 ms timer ticks while a call ran. */
  readonly worstStallMs: number;
  readonly error?: string;
}

async function measure(b: Backend, op: OpName, args: unknown): Promise<Row> {
  const latencies: number[] = [];
  let notStopped = 0;
  let worstStall = 0;
  for (let i = 0; i < argv.runs; i++) {
    const ac = new AbortController();
    let last = performance.now();
    const ticker = setInterval(() => {
      const t = performance.now();
      worstStall = Math.max(worstStall, t - last);
      last = t;
    }, 10);
    let abortedAt = 0;
    const timer = setTimeout(() => {
      abortedAt = performance.now();
      ac.abort(new Error('abort-latency study'));
    }, argv.after);
    const call = (b[op] as (a: unknown, o: unknown) => Promise<unknown>).call(b, args, { signal: ac.signal });
    const stopped = await call.then(
      () => false,
      (e: unknown) => {
        if ((e as Error).name !== 'AbortError') throw e;
        return true;
      },
    );
    const settled = performance.now();
    clearTimeout(timer);
    clearInterval(ticker);
    if (!stopped) notStopped++;
    // A call that finished before the abort fired says nothing about latency.
    if (abortedAt > 0) latencies.push(settled - abortedAt);
  }
  return { backend: b.info.description.split(' on ')[0] ?? b.name, op, medianMs: latencies.length ? median(latencies) : undefined, worstMs: latencies.length ? Math.max(...latencies) : undefined, notStopped, runs: argv.runs, worstStallMs: worstStall };
}

const fmt = (ms: number | undefined): string => (ms === undefined ? '–' : ms < 10 ? ms.toFixed(1) : ms.toFixed(0));

const cs610 = await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH);
const rows: Row[] = [];
for (const { label: name, open } of targets()) {
  let b: Backend;
  try {
    b = await open();
  } catch (e) {
    console.error(`${name}: not measured (${(e as Error).message})`);
    continue;
  }
  try {
    for (const op of argv.ops) {
      const args = longCall(op, cs610);
      const row = await measure(b, op, args).catch((e: unknown): Row => ({ backend: name, op, medianMs: undefined, worstMs: undefined, notStopped: 0, runs: argv.runs, worstStallMs: 0, error: (e as Error).message }));
      rows.push({ ...row, backend: name });
      console.error(`${name} ${op}: ${row.error ?? `median ${fmt(row.medianMs)} ms, worst ${fmt(row.worstMs)} ms, not stopped ${row.notStopped}/${row.runs}, worst stall ${fmt(row.worstStallMs)} ms`}`);
    }
  } finally {
    await b.dispose();
  }
}

const machine = machineInfo();
const lines = [
  `Abort latency: time from abort() (${argv.after} ms into a call that would run for seconds) to the call settling; ${argv.runs} calls per cell.`,
  `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}.`,
  '',
  '| backend | op | median ms | worst ms | resolved instead | worst event-loop stall ms |',
  '|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.backend} | ${r.op} | ${fmt(r.medianMs)} | ${fmt(r.worstMs)} | ${r.error ?? `${r.notStopped}/${r.runs}`} | ${fmt(r.worstStallMs)} |`),
];
console.log(lines.join('\n'));
if (argv.md !== undefined) await writeTextFile(argv.md, `${lines.join('\n')}\n`);
if (argv.json !== undefined) await writeTextFile(argv.json, `${JSON.stringify({ machine, after: argv.after, rows }, null, 2)}\n`);
