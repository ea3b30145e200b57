/**
 * Does overlapping chunk uploads and readbacks with compute pay? The ECE408 layers at B=10 000,
 * chunked (`convLayerChunkItems`), with and without overlap, end to end (what overlap can save)
 * and kernel time (what it must not cost). Every result is compared with the unchunked one.
 *
 *   node packages/webgpu/dist/bench/conv-layer-chunks.js [--batch 10000] [--chunks 1000,2500]
 *        [--reps 3] [--adapter any|software|hardware] [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { median } from '@kernelkit/core';
import { CONV_LAYER_WORKLOADS, makeConvLayerArgs, type Backend } from '@kernelkit/ops';
import { createWebGpuBackend } from '../index.js';
import type { AdapterKind } from '../runtime/adapter.js';

const { values: argv } = parseArgs({
  options: {
    batch: { type: 'string', default: '10000' },
    chunks: { type: 'string', default: '1000,2500' },
    reps: { type: 'string', default: '3' },
    adapter: { type: 'string', default: 'any' },
    out: { type: 'string' },
  },
});
const fail = (msg: string): never => {
  process.stderr.write(`conv-layer-chunks: ${msg}\n`);
  process.exit(2);
};
const batch = Number(argv.batch);
if (!Number.isInteger(batch) || batch < 1) fail(`--batch: expected a positive integer, got ${argv.batch}`);
const chunks = argv.chunks.split(',').map(Number);
if (chunks.some((c) => !Number.isInteger(c) || c < 1)) fail(`--chunks: expected positive integers, got ${argv.chunks}`);
const reps = Number(argv.reps);
if (!Number.isInteger(reps) || reps < 1) fail(`--reps: expected a positive integer, got ${argv.reps}`);
if (!['any', 'software', 'hardware'].includes(argv.adapter)) fail(`--adapter: expected any, software or hardware, got ${argv.adapter}`);

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
    await using b = await createWebGpuBackend({ adapter: argv.adapter as AdapterKind });
    const r = await time(b, args);
    want = r.data;
    rows.push({ layer: w.label, mode: 'one pass (no chunking)', totalMs: r.total, kernelMs: r.kernel, maxAbsDiff: 0, notes: r.notes });
  }
  for (const c of chunks) {
    for (const overlap of [false, true]) {
      await using b = await createWebGpuBackend({ adapter: argv.adapter as AdapterKind, convLayerChunkItems: c, convLayerOverlap: overlap });
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
if (argv.out) writeFileSync(argv.out, JSON.stringify({ schema: 'kernelkit-conv-layer-chunks/1', date: new Date().toISOString(), batch, reps, rows }, null, 2) + '\n');
if (rows.some((r) => r.maxAbsDiff !== 0)) {
  process.stderr.write('conv-layer-chunks: a chunked result differs from the one-pass result\n');
  process.exitCode = 1;
}
