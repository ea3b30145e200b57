/**
 * Streaming scan throughput: the same chunks through
 * - `host carry`: scanStream from @kernelkit/ops (one backend.scan per chunk, the carry read back
 *   and passed as the next `initial`: upload, scan and readback strictly one after another);
 * - `gpu, 1 set`: webgpu's streaming scan with one buffer set (sequential, carry on the GPU);
 * - `gpu, 2 sets` / `gpu, 3 sets`: the same with uploads and readbacks overlapping the scans.
 * MB/s counts input bytes per second of wall time, end to end (the consumer copies nothing).
 * `node apps/studies/dist/webgpu/scan-stream.js [--total N] [--chunk N] [--dtype u32|f32] [--reps N] [--adapter any|software|hardware] [--out FILE]`
 */
import { median } from '@kernelkit/core';
import { makeScanArgs, scanStream, type Backend, type ScanArray } from '@kernelkit/ops';
import { createWebGpuBackend, type AdapterKind } from '@kernelkit/webgpu';
import { gpuDeviceOf, scanStreamOnDevice } from '@kernelkit/webgpu/testing';
import { checkResult, Command, integer, oneOf, parseStudyArgs, writeTextFile } from '../common.js';

const o = parseStudyArgs<{ total: number; chunk: number; dtype: 'u32' | 'f32'; reps: number; adapter: AdapterKind; out?: string }>(
  new Command('scan-stream')
    .description('streaming scan throughput: host carry (scanStream) against the GPU stream with 1, 2 and 3 buffer sets')
    .option('--total <n>', 'elements in all', integer(), 16_000_000)
    .option('--chunk <n>', 'elements per chunk', integer(), 1_000_000)
    .option('--dtype <dtype>', 'u32 or f32', oneOf(['u32', 'f32'] as const), 'u32')
    .option('--reps <n>', 'timed runs per mode (median)', integer(), 3)
    .option('--adapter <kind>', 'any, software or hardware', oneOf<AdapterKind>(['any', 'software', 'hardware']), 'any')
    .option('--out <file>', 'write the rows as JSON'),
);
const { total, chunk, dtype, reps, adapter } = o;
const outFile = o.out;

const args = makeScanArgs({ n: total, dtype });
const input = args.input as Uint32Array | Float32Array;
const chunks: ScanArray[] = [];
for (let s = 0; s < total; s += chunk) chunks.push(input.subarray(s, Math.min(total, s + chunk)));

/** The chunks' outputs joined, against the f64 reference at sampled outputs (u32 bit-exact). */
function check(outs: readonly ScanArray[]): string {
  const all = new (input.constructor as Uint32ArrayConstructor)(outs.reduce((n, x) => n + x.length, 0));
  let at = 0;
  for (const x of outs) {
    all.set(x as Uint32Array, at);
    at += x.length;
  }
  return checkResult('scan', args, all, { kind: 'sampled', samples: 20_000 }).message ?? 'ok';
}

async function time(run: () => AsyncIterable<ScanArray>): Promise<{ ms: number; check: string }> {
  const collect = async (): Promise<ScanArray[]> => {
    const outs: ScanArray[] = [];
    for await (const o of run()) outs.push(o);
    return outs;
  };
  const c = check(await collect()); // warm-up: pipelines, pools
  const ms: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    await collect();
    ms.push(performance.now() - t0);
  }
  return { ms: median(ms), check: c };
}

const backend: Backend = await createWebGpuBackend({ adapter });
const gpu = gpuDeviceOf(backend);
console.log(`${backend.info.description}; ${total} ${dtype} in chunks of ${chunk} (${chunks.length} chunks), median of ${reps}`);
const modes: [string, () => AsyncIterable<ScanArray>][] = [
  ['host carry (scanStream)', () => scanStream(backend, chunks, { variant: 'decoupled' })],
  ['gpu carry, 1 set (sequential)', () => scanStreamOnDevice(gpu, chunks, {}, { sets: 1 })],
  ['gpu carry, 2 sets (overlapped)', () => scanStreamOnDevice(gpu, chunks, {}, { sets: 2 })],
  ['gpu carry, 3 sets (overlapped)', () => scanStreamOnDevice(gpu, chunks, {}, { sets: 3 })],
];
const rows: { mode: string; ms: number; mbPerS: number; check: string }[] = [];
for (const [mode, run] of modes) {
  const r = await time(run);
  const row = { mode, ms: r.ms, mbPerS: (total * 4) / 1e6 / (r.ms / 1000), check: r.check };
  rows.push(row);
  console.log(`${mode.padEnd(32)} ${row.ms.toFixed(1).padStart(9)} ms ${row.mbPerS.toFixed(1).padStart(9)} MB/s  ${row.check}`);
}
if (outFile) await writeTextFile(outFile, JSON.stringify({ adapter: backend.info.description, total, chunk, dtype, reps, rows }, null, 2));
await backend.dispose();
