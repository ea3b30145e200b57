/**
 * Does overlapping chunk uploads and readbacks with compute pay? The ECE408 layers at B=10 000,
 * chunked (`convLayerChunkItems`), with and without overlap, end to end (what overlap can save)
 * and kernel time (what it must not cost). Every result is compared with the unchunked one.
 *
 *   node apps/studies/dist/webgpu/conv-layer-chunks.js [--batch 10000] [--chunks 1000,2500]
 *        [--reps 3] [--adapter any|software|hardware] [--out FILE]
 */
import { median } from '@kernelkit/core';
import { CONV_LAYER_WORKLOADS, makeConvLayerArgs, type Backend } from '@kernelkit/ops';
import { createWebGpuBackend, type AdapterKind } from '@kernelkit/webgpu';
import { Command, integer, integers, oneOf, parseStudyArgs, writeTextFile } from '../common.js';

const argv = parseStudyArgs<{ batch: number; chunks: number[]; reps: number; adapter: AdapterKind; out?: string }>(
  new Command('conv-layer-chunks')
    .description('convLayer at a big batch in one pass and in chunks, with and without overlap; every result compared with the one-pass one')
    .option('--batch <n>', 'images per layer', integer(), 10000)
    .option('--chunks <list>', 'chunk sizes in images, comma-separated', integers(), [1000, 2500])
    .option('--reps <n>', 'timed calls per mode (median)', integer(), 3)
    .option('--adapter <kind>', 'any, software or hardware', oneOf<AdapterKind>(['any', 'software', 'hardware']), 'any')
    .option('--out <file>', 'write the rows as JSON'),
);
const { batch, chunks, reps } = argv;

const layers = CONV_LAYER_WORKLOADS.seed.filter((w) => w.batch === 100).map((w) => ({ ...w, batch, label: w.label.replace('B=100', `B=${batch}`) }));

interface Row {
  layer: string;
  mode: string;
  totalMs: number;
  kernelMs: number | null;
  maxAbsDiff: number;
  notes: readonly string[];
}
const rows: Row[] = [];

async function time(b: Backend, args: ReturnType<typeof makeConvLayerArgs>): Promise<{ total: number; kernel: number | null; data: Float32Array; notes: readonly string[] }> {
  const totals: number[] = [];
  const kernels: number[] = [];
  let last!: Awaited<ReturnType<Backend['convLayer']>>;
  await b.convLayer(args, { variant: 'gemm' }); // compile and pool warm-up
  for (let i = 0; i < reps; i++) {
    last = await b.convLayer(args, { variant: 'gemm', timing: true });
    totals.push(last.timing!.totalMs);
    if (last.timing?.kernelMs !== undefined) kernels.push(last.timing.kernelMs);
  }
  return { total: median(totals), kernel: kernels.length ? median(kernels) : null, data: last.data as Float32Array, notes: last.notes ?? [] };
}

for (const w of layers) {
  const args = makeConvLayerArgs(w);
  let want: Float32Array;
  {
    await using b = await createWebGpuBackend({ adapter: argv.adapter });
    const r = await time(b, args);
    want = r.data;
    rows.push({ layer: w.label, mode: 'one pass (no chunking)', totalMs: r.total, kernelMs: r.kernel, maxAbsDiff: 0, notes: r.notes });
  }
  for (const c of chunks) {
    for (const overlap of [false, true]) {
      await using b = await createWebGpuBackend({ adapter: argv.adapter, convLayerChunkItems: c, convLayerOverlap: overlap });
      const r = await time(b, args);
      let diff = 0;
      for (let i = 0; i < want.length; i++) diff = Math.max(diff, Math.abs(r.data[i]! - want[i]!));
      rows.push({ layer: w.label, mode: `chunks of ${c}, ${overlap ? 'overlapped' : 'sequential'}`, totalMs: r.total, kernelMs: r.kernel, maxAbsDiff: diff, notes: r.notes });
    }
  }
}

const lines = [
  `| layer | mode | end to end (ms) | kernel (ms) | max abs diff vs one pass |`,
  `|---|---|---:|---:|---:|`,
  ...rows.map((r) => `| ${r.layer} | ${r.mode} | ${r.totalMs.toFixed(1)} | ${r.kernelMs === null ? '' : r.kernelMs.toFixed(3)} | ${r.maxAbsDiff} |`),
];
process.stdout.write(lines.join('\n') + '\n');
if (argv.out) await writeTextFile(argv.out, JSON.stringify({ schema: 'kernelkit-conv-layer-chunks/1', date: new Date().toISOString(), batch, reps, rows }, null, 2) + '\n');
if (rows.some((r) => r.maxAbsDiff !== 0)) {
  process.stderr.write('conv-layer-chunks: a chunked result differs from the one-pass result\n');
  process.exitCode = 1;
}
