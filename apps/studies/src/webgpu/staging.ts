/**
 * Which staging ring shape and pipeline chunk size the WebGPU runtime should default to, measured
 * on one device in one run:
 * - upload and readback GB/s through the staging ring (runtime/transfer.ts) for several ring
 *   shapes, beside one big reused MAP_WRITE / MAP_READ buffer of the same bytes;
 * - conv2d 16×2048² K=11 (`auto`) end to end, its input staged through the ring or copied whole
 *   into the upload landing buffer, into a fresh array (read chunk by chunk, or gathered
 *   in the landing buffer and copied once) and into a reused `out`, with
 *   its kernel time summed over its chunks, for several chunk targets (the whole problem in one
 *   chunk included), on the default ring.
 * Medians of `--reps` after a warm-up. Every chunked conv2d output is compared with the
 * one-chunk output. `--small` shrinks every size so the study runs on llvmpipe in seconds.
 *
 *   node apps/studies/dist/webgpu/staging.js --out DIR [--reps 5] [--small] [--adapter hardware|software|any]
 */
import { join } from 'node:path';
import { median } from '@kernelkit/core';
import { makeConv2dArgs, type Backend, type Conv2dArgs } from '@kernelkit/ops';
import { createWebGpuBackend, type AdapterKind } from '@kernelkit/webgpu';
import { BUF, GpuDevice, MAP_READ, openAdapter, setFreshOutputLanding, setPipelineChunkBytes, setUploadLanding } from '@kernelkit/webgpu/testing';
import { Command, integer, machineInfo, oneOf, parseStudyArgs, writeTextFile } from '../common.js';

const argv = parseStudyArgs<{ out: string; reps: number; small?: boolean; adapter: AdapterKind }>(
  new Command('staging')
    .description('staging ring shapes and conv2d chunk targets: transfer GB/s beside one big mapped buffer, conv2d end to end and kernel sum per chunk target')
    .requiredOption('--out <dir>', 'where webgpu-staging.json and webgpu-staging.md go')
    .option('--reps <n>', 'timed repetitions per row after one warm-up (median)', integer(), 5)
    .option('--small', 'sizes for a software adapter (seconds on llvmpipe), not for published numbers')
    .option('--adapter <kind>', 'hardware, software or any', oneOf<AdapterKind>(['hardware', 'software', 'any']), 'hardware'),
);

const MiB = 2 ** 20;
const GB = 1e9;
const small = argv.small === true;
/**
 * Full size: 256 MiB moved each way, ring shapes in MiB slices, conv2d 16×2048² K=11 (256 MiB in,
 * 256 MiB out; 8, 4, 2 and 1 chunks). Small: the same counts of slices and chunks at 1/32 to 1/256 the bytes.
 */
const SIZES = small
  ? { bytes: 8 * MiB, shapes: [[4, 1], [8, 1], [4, 2], [8, 2], [2, 4]], conv: { batch: 8, height: 128, width: 256, k: 11 }, chunkTargets: [128 << 10, 256 << 10, 512 << 10, 1 * MiB] }
  : { bytes: 256 * MiB, shapes: [[4, 32], [8, 32], [4, 64], [8, 64], [2, 128]], conv: { batch: 16, height: 2048, width: 2048, k: 11 }, chunkTargets: [32 * MiB, 64 * MiB, 128 * MiB, 256 * MiB] };

const timeMs = async (fn: () => Promise<unknown> | unknown): Promise<number> => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};
/** One warm-up run, then the median of `reps` runs, in ms. */
const medianMs = async (fn: () => Promise<unknown> | unknown): Promise<number> => {
  await fn();
  const xs: number[] = [];
  for (let i = 0; i < argv.reps; i++) xs.push(await timeMs(fn));
  return median(xs);
};
const gbps = (bytes: number, ms: number): number => bytes / GB / (ms / 1000);

// ---- transfers
interface TransferRow {
  readonly path: string;
  readonly uploadGBps: number;
  readonly readbackGBps: number;
}

async function transfers(): Promise<{ rows: TransferRow[]; description: string }> {
  const { bytes } = SIZES;
  const opened = await openAdapter(argv.adapter);
  if ('reasons' in opened) throw new Error(opened.reasons.join('; '));
  const gpu = await GpuDevice.open(opened);
  const device = gpu.device;
  const idle = () => device.queue.onSubmittedWorkDone();
  const host = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i += 4096) host[i] = i & 255;
  // A reused destination: its pages are faulted in once, before any timing.
  const reused = new Uint8Array(bytes).fill(1);
  const buf = gpu.storage(bytes);
  const rows: TransferRow[] = [];
  try {
    for (const [slices, mibs] of SIZES.shapes as [number, number][]) {
      await gpu.setStaging({ slices, sliceBytes: mibs * MiB });
      const up = await medianMs(() => gpu.exclusive(async () => (await gpu.write(buf, 0, host), await idle())));
      const down = await medianMs(() => gpu.exclusive(() => gpu.read(buf, 0, bytes, reused)));
      rows.push({ path: `ring ${slices} × ${mibs} MiB`, uploadGBps: gbps(bytes, up), readbackGBps: gbps(bytes, down) });
      console.log(JSON.stringify(rows.at(-1)));
    }
    const upBuf = device.createBuffer({ size: bytes, usage: BUF.MAP_WRITE | BUF.COPY_SRC, mappedAtCreation: true });
    const downBuf = device.createBuffer({ size: bytes, usage: BUF.MAP_READ | BUF.COPY_DST });
    try {
      upBuf.unmap();
      await upBuf.mapAsync(BUF.MAP_WRITE);
      // Filled in place, copied, mapped again for the next use (the map wait is part of each run).
      const up = await medianMs(async () => {
        new Uint8Array(upBuf.getMappedRange()).set(host);
        upBuf.unmap();
        const enc = device.createCommandEncoder();
        enc.copyBufferToBuffer(upBuf, 0, buf, 0, bytes);
        device.queue.submit([enc.finish()]);
        await upBuf.mapAsync(BUF.MAP_WRITE);
      });
      const down = await medianMs(async () => {
        const enc = device.createCommandEncoder();
        enc.copyBufferToBuffer(buf, 0, downBuf, 0, bytes);
        device.queue.submit([enc.finish()]);
        await downBuf.mapAsync(MAP_READ);
        reused.set(new Uint8Array(downBuf.getMappedRange()));
        downBuf.unmap();
      });
      rows.push({ path: `one ${bytes / MiB} MiB mapped buffer`, uploadGBps: gbps(bytes, up), readbackGBps: gbps(bytes, down) });
      console.log(JSON.stringify(rows.at(-1)));
    } finally {
      upBuf.destroy();
      downBuf.destroy();
    }
    return { rows, description: gpu.info.description };
  } finally {
    gpu.release(buf);
    gpu.destroy();
  }
}

// ---- conv2d per chunk target
/** Into a fresh array read chunk by chunk (the default), into one gathered in the landing buffer first (runtime/landing.ts), into a reused `out`. */
const MODES = ['fresh', 'fresh via landing', 'out'] as const;
type Mode = (typeof MODES)[number];
/** The host input staged chunk by chunk through the ring, or copied whole into the upload landing buffer first. */
const INPUTS = ['ring', 'landing'] as const;
type Input = (typeof INPUTS)[number];

interface ConvRow {
  readonly chunkMiB: number;
  readonly chunks: number;
  readonly input: Input;
  readonly mode: Mode;
  readonly endToEndMs: number;
  readonly kernelMs: number | undefined;
  readonly uploadMs: number | undefined;
  readonly readbackMs: number | undefined;
  readonly maxAbsDiff: number;
}

/** How many chunks conv2d cuts the study's problem into (as conv2dChunks does): whole images while one fits a chunk, else row bands with halo rows. */
function chunksOf(chunkBytes: number): number {
  const { batch, height, width, k } = SIZES.conv;
  const perImage = height * width * 4;
  if (perImage <= chunkBytes) return Math.ceil(batch / Math.floor(chunkBytes / perImage));
  const rows = Math.floor(chunkBytes / (width * 4)) - (k - 1);
  return batch * Math.ceil(height / rows);
}

async function conv(): Promise<ConvRow[]> {
  const args: Conv2dArgs = makeConv2dArgs(SIZES.conv);
  const n = SIZES.conv.batch * SIZES.conv.height * SIZES.conv.width;
  const rows: ConvRow[] = [];
  const b: Backend = await createWebGpuBackend({ adapter: argv.adapter });
  // A chunk never binds more than this (runtime/pipeline.ts chunkBytesOf).
  const binding = Number(b.info.adapter?.limits['maxStorageBufferBindingSize'] ?? Infinity);
  try {
    // The reference: the whole problem in one chunk (the largest target).
    setPipelineChunkBytes(b, Math.max(...SIZES.chunkTargets));
    const want = (await b.conv2d(args, { variant: 'auto' })).data;
    const out = new Float32Array(n).fill(1);
    for (const target of SIZES.chunkTargets) {
      setPipelineChunkBytes(b, target);
      for (const input of INPUTS) {
        setUploadLanding(b, input === 'landing');
        for (const mode of MODES) {
          setFreshOutputLanding(b, mode === 'fresh via landing');
          const call = (timing: boolean) => b.conv2d(args, { variant: 'auto', timing, ...(mode === 'out' ? { out } : {}) });
          const endToEndMs = await medianMs(() => call(false));
          const timed: { kernelMs?: number | undefined; uploadMs?: number | undefined; readbackMs?: number | undefined }[] = [];
          let last!: Float32Array;
          for (let i = 0; i < argv.reps; i++) {
            const r = await call(true);
            timed.push(r.timing ?? {});
            last = r.data;
          }
          const med = (k: 'kernelMs' | 'uploadMs' | 'readbackMs') => {
            const xs = timed.map((t) => t[k]).filter((v): v is number => v !== undefined);
            return xs.length === 0 ? undefined : median(xs);
          };
          let diff = 0;
          for (let i = 0; i < n; i++) diff = Math.max(diff, Math.abs(last[i]! - want[i]!));
          const chunks = chunksOf(Math.min(target, binding));
          rows.push({ chunkMiB: target / MiB, chunks, input, mode, endToEndMs, kernelMs: med('kernelMs'), uploadMs: med('uploadMs'), readbackMs: med('readbackMs'), maxAbsDiff: diff });
          console.log(JSON.stringify(rows.at(-1)));
        }
      }
    }
  } finally {
    await b.dispose();
  }
  return rows;
}

const t = await transfers();
const convRows = await conv();
const f = (v: number | undefined, d = 1) => (v === undefined ? '–' : v.toFixed(d));
const c = SIZES.conv;
const md = [
  `# WebGPU staging ring shapes and conv2d chunk targets (${t.description})${small ? ' — small sizes, not for publishing' : ''}`,
  '',
  `Transfers: ${SIZES.bytes / MiB} MiB each way between a reused host array and one storage buffer, through the staging ring of each shape (the executor's \`write\`/\`read\`) and through one mapped buffer of the whole size; median of ${argv.reps} after a warm-up.`,
  '',
  '| path | upload GB/s | readback GB/s |',
  '|---|---|---|',
  ...t.rows.map((r) => `| ${r.path} | ${r.uploadGBps.toFixed(2)} | ${r.readbackGBps.toFixed(2)} |`),
  '',
  `conv2d ${c.batch}×${c.height}×${c.width} K=${c.k}, \`auto\`, default ring, per chunk target and input staging ("ring": each chunk's rows through the staging ring; "landing": the whole input copied into one mapped upload buffer, each chunk's rows copied from there on the GPU): end to end the median of ${argv.reps} untimed calls after a warm-up; kernel (summed over the chunks), upload and readback the medians of ${argv.reps} timed calls. "fresh": into a new array, each chunk read back into it; "fresh via landing": the chunks gathered in the landing buffer, copied into a new array at the end; "out": into a reused \`out\` (through the landing buffer). Max abs diff: against the one-chunk output.`,
  '',
  '| chunk target MiB | chunks | input | output | end to end ms | kernel ms | upload ms | readback ms | max abs diff |',
  '|---|---|---|---|---|---|---|---|---|',
  ...convRows.map((r) => `| ${r.chunkMiB} | ${r.chunks} | ${r.input} | ${r.mode} | ${f(r.endToEndMs)} | ${f(r.kernelMs, 3)} | ${f(r.uploadMs)} | ${f(r.readbackMs)} | ${r.maxAbsDiff} |`),
  '',
];
await writeTextFile(join(argv.out, 'webgpu-staging.md'), md.join('\n'));
await writeTextFile(join(argv.out, 'webgpu-staging.json'), JSON.stringify({ schema: 'kernelkit-webgpu-staging/1', date: new Date().toISOString(), machine: machineInfo(), small, reps: argv.reps, sizes: SIZES, transfers: t.rows, conv2d: convRows }, null, 2) + '\n');
console.log(md.join('\n'));
if (convRows.some((r) => r.maxAbsDiff !== 0)) {
  process.stderr.write('staging: a chunked conv2d output differs from the one-chunk output\n');
  process.exitCode = 1;
}
