/**
 * Streaming scan throughput: the same chunks through
 * - `host carry`: scanStream from @kernelkit/ops (one backend.scan per chunk, the carry read back
 *   and passed as the next `initial`: upload, scan and readback strictly one after another);
 * - `gpu, 1 set`: webgpu's streaming scan with one buffer set (sequential, carry on the GPU);
 * - `gpu, 2 sets` / `gpu, 3 sets`: the same with uploads and readbacks overlapping the scans.
 * MB/s counts input bytes per second of wall time, end to end (the consumer copies nothing).
 * `node dist/bench/scan-stream.js [--total N] [--chunk N] [--dtype u32|f32] [--reps N] [--adapter any|software|hardware] [--out FILE]`
 */
import { writeFileSync } from 'node:fs';
import { makeScanArgs, scanReference, scanStream, validateScan, type Backend, type ScanArray } from '@kernelkit/ops';
import { DEVICES } from '../backend.js';
import { createWebGpuBackend } from '../index.js';
import { scanStreamOnDevice } from '../ops/scan-stream.js';
import type { AdapterKind } from '../runtime/adapter.js';
import { scanTolerance } from '@kernelkit/ops/testing/data';

const argv = process.argv.slice(2);
const arg = (name: string, fallback: string): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : fallback;
};
const total = Number(arg('total', '16000000'));
const chunk = Number(arg('chunk', '1000000'));
const dtype = arg('dtype', 'u32') as 'u32' | 'f32';
const reps = Number(arg('reps', '3'));
const adapter = arg('adapter', 'any') as AdapterKind;
const outFile = argv.includes('--out') ? arg('out', '') : undefined;
if (!(Number.isInteger(total) && total > 0 && Number.isInteger(chunk) && chunk > 0 && (dtype === 'u32' || dtype === 'f32') && reps >= 1)) {
  console.error('usage: scan-stream.js [--total N] [--chunk N] [--dtype u32|f32] [--reps N] [--adapter any|software|hardware] [--out FILE]');
  process.exit(2);
}

const input = makeScanArgs({ n: total, dtype }).input as Uint32Array | Float32Array;
const chunks: ScanArray[] = [];
for (let s = 0; s < total; s += chunk) chunks.push(input.subarray(s, Math.min(total, s + chunk)));
const want = dtype === 'u32' ? scanReference(validateScan({ input })) : undefined;

/** Bit-exact for u32; f32 against the f64 prefix within the conformance tolerance, every 997th element. */
function check(outs: readonly ScanArray[]): string {
  let i = 0;
  let s = 0;
  let mag = 0;
  const tol = scanTolerance(total, 'f32');
  for (const o of outs) {
    for (let j = 0; j < o.length; j++, i++) {
      if (want !== undefined) {
        if (o[j] !== want[i]) return `[${i}] got ${o[j]}, expected ${want[i]}`;
        continue;
      }
      s += input[i]!;
      mag += Math.abs(input[i]!);
      if ((i % 997 === 0 || i === total - 1) && !(Math.abs(o[j]! - s) <= tol.factor * tol.u * mag + tol.tiny)) return `[${i}] got ${o[j]}, expected ${s}`;
    }
  }
  return i === total ? 'ok' : `${i} elements, expected ${total}`;
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
  return { ms: ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)]!, check: c };
}

const backend: Backend = await createWebGpuBackend({ adapter });
const gpu = DEVICES.get(backend)!;
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
if (outFile) writeFileSync(outFile, JSON.stringify({ adapter: backend.info.description, total, chunk, dtype, reps, rows }, null, 2));
await backend.dispose();
