/**
 * The WebGPU ladder: every op × variant on the course reports' sizes (the `seed` workloads), each
 * result checked, kernel time from GPU timestamps and end-to-end time, throughput in the reports'
 * units and speed-up over the previous variant. `node apps/studies/dist/webgpu/ladder.js --out DIR [--quick] [--check] [--op NAME …] [--flags FLAGS]`.
 */
import { join } from 'node:path';
import { median } from '@kernelkit/core';
import {
  CONV2D_WORKLOADS,
  CONV_LAYER_WORKLOADS,
  CS610_DISP_PATH,
  CS610_GRID_PATH,
  conv2dPixels,
  convLayerFlops,
  convLayerOutputShape,
  cs610Points,
  makeConv2dArgs,
  makeConvLayerArgs,
  makeScanArgs,
  makeStencil3dArgs,
  OP_NAMES,
  readCs610Problem,
  reduceGrid,
  scanBytes,
  stencil3dPointUpdates,
  type Backend,
  type OpArgs,
  type OpData,
  type OpName,
  type Result,
} from '@kernelkit/ops';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { checkResult, Command, parseStudyArgs, someOf, writeTextFile } from '../common.js';
import { runHardwareChecks } from './hw-check.js';

interface Row {
  op: OpName;
  workload: string;
  variant: string;
  kernelMs: number | null;
  totalMs: number;
  throughput: number | null;
  unit: string;
  speedupVsPrev: number | null;
  check: string;
  notes?: readonly string[];
  /** The first (untimed warm-up) call's notes and end-to-end ms: for `auto`, the one that swept. */
  firstCall?: { totalMs: number; notes?: readonly string[] };
}

const o = parseStudyArgs<{ out: string; quick?: boolean; check?: boolean; op?: OpName[]; flags?: string }>(
  new Command('ladder')
    .description('every WebGPU op × variant on the course reports\' sizes: checked, kernel and end-to-end time, speed-up over the previous variant')
    .requiredOption('--out <dir>', 'write webgpu-ladder.json and .md here')
    .option('--quick', 'small sizes, one timed run')
    .option('--check', 'first run the hardware conformance subset')
    .option('--op <ops>', `only these ops, comma-separated: ${OP_NAMES.join(', ')}`, someOf(OP_NAMES))
    .option('--flags <flags>', "Dawn flags, space-separated (e.g. 'enable-dawn-features=a,b')"),
);
const outDir = o.out;
const quick = o.quick === true;
const onlyOps: readonly string[] = o.op ?? [];
const flagArg = o.flags;
const reps = quick ? 1 : 3;

/** The f64 reference at sampled outputs (big outputs); grid searches are checked by count instead. */
const sampled = (op: OpName, args: unknown, data: unknown): string | undefined => checkResult(op, args as OpArgs<OpName>, data as OpData<OpName>, { kind: 'sampled' }).message;

async function measure<D>(call: () => Promise<Result<D>>, repeats = reps): Promise<{ res: Result<D>; first: Result<D>; firstMs: number; kernelMs: number | null; totalMs: number }> {
  const t0 = performance.now();
  const first = await call(); // warm-up: pipeline compile, pool fill, auto's tuning sweep
  const firstMs = performance.now() - t0;
  let res = first;
  const k: number[] = [];
  const t: number[] = [];
  for (let i = 0; i < repeats; i++) {
    res = await call();
    if (res.timing?.kernelMs !== undefined) k.push(res.timing.kernelMs);
    t.push(res.timing?.totalMs ?? Number.NaN);
  }
  return { res, first, firstMs, kernelMs: k.length ? median(k) : null, totalMs: median(t) };
}

const rows: Row[] = [];
function push(op: OpName, workload: string, variant: string, m: { kernelMs: number | null; totalMs: number }, work: number, unit: string, check: string | undefined, notes?: readonly string[], firstCall?: Row['firstCall']): void {
  const prev = rows.at(-1);
  const time = m.kernelMs ?? m.totalMs;
  const row: Row = {
    op,
    workload,
    variant,
    kernelMs: m.kernelMs,
    totalMs: m.totalMs,
    throughput: work / (time / 1000),
    unit,
    speedupVsPrev: prev && prev.op === op && prev.workload === workload ? (prev.kernelMs ?? prev.totalMs) / time : null,
    check: check ?? 'ok',
  };
  if (notes) row.notes = notes;
  if (firstCall) row.firstCall = firstCall;
  rows.push(row);
  console.log(`${op.padEnd(10)} ${workload.padEnd(26)} ${variant.padEnd(17)} kernel ${m.kernelMs?.toFixed(3) ?? '—'} ms  total ${m.totalMs.toFixed(1)} ms  ${(row.throughput! / 1).toExponential(3)} ${unit}  ${row.check}`);
}

async function conv2d(b: Backend) {
  const ws = quick ? CONV2D_WORKLOADS.small : CONV2D_WORKLOADS.seed;
  for (const w of ws) {
    const args = makeConv2dArgs(w);
    for (const v of ['naive', 'coalesced', 'tiled', 'coarsened', 'auto']) {
      const m = await measure(() => b.conv2d(args, { variant: v, timing: true }));
      // `auto` tunes on its first call (the warm-up); that call's notes say what it picked and what the sweep cost.
      const first = v === 'auto' ? (m.first.notes ? { totalMs: m.firstMs, notes: m.first.notes } : { totalMs: m.firstMs }) : undefined;
      const check = sampled('conv2d', args, m.res.data) ?? (v === 'auto' ? sampled('conv2d', args, m.first.data) : undefined);
      push('conv2d', w.label, v, m, conv2dPixels(w) / 1e6, 'MPix/s', check, m.res.notes, first);
      if (first) console.log(`  auto, first call ${m.firstMs.toFixed(1)} ms: ${m.first.notes?.join('; ') ?? '(no notes)'}`);
    }
  }
}

async function stencil(b: Backend) {
  const ws = quick
    ? [{ label: 'N=128, 4 steps', n: 128, steps: 4 }]
    : [
        { label: 'N=256, 10 steps', n: 256, steps: 10 },
        { label: 'N=512, 10 steps', n: 512, steps: 10 },
      ];
  for (const w of ws) {
    const args = makeStencil3dArgs({ n: w.n, steps: w.steps, boundary: 'copy' });
    for (const v of ['naive', 'tiled', 'streamed']) {
      const m = await measure(() => b.stencil3d(args, { variant: v, timing: true }));
      push('stencil3d', w.label, v, m, stencil3dPointUpdates({ nx: w.n, ny: w.n, nz: w.n, steps: w.steps }) / 1e9, 'GPts/s', sampled('stencil3d', args, m.res.data));
    }
  }
}

async function scan(b: Backend) {
  const ws = quick
    ? [{ label: '4M f32', n: 4_000_000, dtype: 'f32' as const }, { label: '4M u32', n: 4_000_000, dtype: 'u32' as const }]
    : [
        { label: '40M f32', n: 40_000_000, dtype: 'f32' as const },
        { label: '400M f32', n: 400_000_000, dtype: 'f32' as const },
        { label: '40M u32', n: 40_000_000, dtype: 'u32' as const },
      ];
  for (const w of ws) {
    const args = makeScanArgs(w);
    const out = new (args.input.constructor as Float32ArrayConstructor)(w.n);
    for (const v of ['blelloch', 'reduce-then-scan', 'decoupled']) {
      const m = await measure(() => b.scan(args, { variant: v, timing: true, out }), w.n > 1e8 ? 1 : reps);
      push('scan', w.label, v, m, scanBytes(w.n, w.dtype) / 1e9, 'GB/s', sampled('scan', args, out));
    }
  }
}

async function grid(b: Backend) {
  const full = await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH);
  const cases = quick ? [{ label: 'CS610 6^10', steps: 6, want: undefined as number | undefined }] : [{ label: 'CS610 full 13^10', steps: 13, want: 11608 }];
  for (const c of cases) {
    const args = reduceGrid(full, c.steps);
    for (const v of ['naive', 'optimized']) {
      const m = await measure(() => b.gridSearch(args, { variant: v, timing: true }), 1);
      const check = c.want !== undefined && m.res.data.count !== c.want ? `count ${m.res.data.count}, expected ${c.want}` : undefined;
      push('gridSearch', c.label, v, m, cs610Points(c.steps) / 1e9, 'Gpts/s', check, m.res.notes);
    }
  }
}

async function convLayer(b: Backend) {
  const ws = quick ? CONV_LAYER_WORKLOADS.small : CONV_LAYER_WORKLOADS.seed;
  for (const w of ws) {
    const args = makeConvLayerArgs(w);
    const flops = convLayerFlops({ ...w, ...convLayerOutputShape(w) });
    for (const v of ['direct', 'tiled', 'gemm']) {
      const m = await measure(() => b.convLayer(args, { variant: v, timing: true }));
      push('convLayer', w.label, v, m, flops / 1e9, 'GFLOP/s', sampled('convLayer', args, m.res.data), m.res.notes);
    }
  }
}

/** What conv2d `auto` picked per workload and what its first call (the sweep) cost next to a tuned call. */
function autoSection(rs: readonly Row[]): string[] {
  const autos = rs.filter((r) => r.op === 'conv2d' && r.variant === 'auto' && r.firstCall !== undefined);
  if (autos.length === 0) return [];
  return [
    'conv2d `auto` tunes on its first call per adapter and shape class (a sweep of tile × outputs-per-thread configs, timed on the problem or a slice of it; the named tiled variants above already compiled two of its pipelines); later calls hit the in-memory cache.',
    '',
    '| workload | first call ms (incl. sweep) | tuned call ms | first call notes | later call notes |',
    '|---|---:|---:|---|---|',
    ...autos.map((r) => `| ${r.workload} | ${r.firstCall!.totalMs.toFixed(1)} | ${r.totalMs.toFixed(1)} | ${r.firstCall!.notes?.join('; ') ?? '—'} | ${r.notes?.join('; ') ?? '—'} |`),
    '',
  ];
}

const t0 = performance.now();
const backend = await createWebGpuBackend(flagArg === undefined ? { adapter: 'any' } : { adapter: 'any', dawnFlags: flagArg.split(' ') });
console.log(backend.info.description);
const hw = o.check ? await runHardwareChecks(backend) : undefined;
if (hw) console.log(`hardware checks: ${hw.passed}/${hw.total} passed`, hw.failures.slice(0, 10));
const failures: string[] = [];
for (const [name, fn] of [['conv2d', conv2d], ['stencil3d', stencil], ['scan', scan], ['gridSearch', grid], ['convLayer', convLayer]] as const) {
  if (onlyOps.length > 0 && !onlyOps.includes(name)) continue;
  try {
    await fn(backend);
  } catch (e) {
    failures.push(`${name}: ${(e as Error).stack ?? String(e)}`);
    console.error(`${name} failed:`, e);
  }
  await writeTextFile(join(outDir, 'webgpu-ladder.json'), JSON.stringify({ adapter: backend.info.adapter, description: backend.info.description, quick, rows, hardwareChecks: hw, failures }, null, 2));
}
const info = backend.info;
await backend.dispose();
const fmt = (v: number | null, d = 3) => (v === null ? '—' : v.toFixed(d));
const md = [
  `# WebGPU ladder${quick ? ' (quick)' : ''}`,
  '',
  `Adapter: ${info.description}`,
  `vendor ${info.adapter?.vendor}, architecture ${info.adapter?.architecture}; features: ${info.adapter?.features.join(', ')}`,
  hw ? `Hardware conformance subset: ${hw.passed}/${hw.total} passed${hw.failures.length ? ` — failures: ${hw.failures.join('; ')}` : ''}` : '',
  '',
  `Dawn flags: ${flagArg ?? '(backend defaults: HARDWARE_DAWN_FLAGS)'}. Each timed pass is preceded by a clock warm-up spin (its own untimed pass, runtime/clock-warmup.ts; not for gridSearch, whose passes are long): without it the GPU runs the kernels at its idle clock (ceilings.js --ramp measures how much warm-up a pass needs).`,
  '',
  'Kernel ms = GPU timestamps around the compute pass (median); total ms = end to end incl. upload, warm-up and readback. Throughput from kernel time.',
  '',
  '| op | workload | variant | kernel ms | total ms | throughput | speed-up vs previous variant | check |',
  '|---|---|---|---:|---:|---:|---:|---|',
  ...rows.map((r) => `| ${r.op} | ${r.workload} | ${r.variant} | ${fmt(r.kernelMs)} | ${fmt(r.totalMs, 1)} | ${r.throughput === null ? '—' : r.throughput.toPrecision(4)} ${r.unit} | ${r.speedupVsPrev === null ? '—' : `${r.speedupVsPrev.toFixed(2)}×`} | ${r.check} |`),
  '',
  ...autoSection(rows),
  failures.length ? `Failures:\n\n${failures.map((f) => '    ' + f.split('\n')[0]).join('\n')}` : '',
  `Wall time: ${((performance.now() - t0) / 1000).toFixed(1)} s`,
].join('\n');
await writeTextFile(join(outDir, 'webgpu-ladder.md'), md + '\n');
console.log(md);
