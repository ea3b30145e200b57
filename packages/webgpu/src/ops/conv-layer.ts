import { assertBoolean, assertInteger, assertObject, LimitExceededError, throwIfAborted } from '@kernelkit/core';
import { convLayerFlops, convLayerOutputLength, isDeviceArray, type ConvLayerProblem, type DeviceArray, type OpContext, type OpOutput, type ResidentOpImplementation, type ResidentProblem } from '@kernelkit/ops';
import { copyBuffer, gpuDeviceArray, residentBuffer } from '../runtime/device-array.js';
import type { GpuDevice } from '../runtime/device.js';
import { packParams, vec4Array } from '../runtime/params.js';
import type { Program } from '../runtime/program.js';
import { chunkBytesOf, encodeSinkCopy, hostOutput, PIPELINE_CHUNK_BYTES, PIPELINE_SETS, runChunked, sinkReads, stageInput, submitSinkCopy, usesUploadLanding, type ChunkSink } from '../runtime/pipeline.js';
import { log2Bucket } from '../tuning/shape-class.js';
import { tunerFor, type TuneCandidate, type TuneChoice, type TunerOptions } from '../tuning/tuner.js';
import { gridParts, submitsOf, type GridPart } from '../runtime/usage.js';
import { executeParts, itemsPerChunk, MIN_WORK_PER_OUTPUT, workPerSubmit, type WorkRate } from './common.js';
import { convLayerDirect, convLayerGemm, convLayerGemmPx, convLayerTiled, type GemmPixels } from './conv-layer.wgsl.js';

/** Everything of the problem but the input, which is a host array or a GPU buffer. */
type Shape = Omit<ConvLayerProblem, 'input'>;

/** What `auto` chooses between. Plain JSON (the tuning cache stores it). */
export type ConvLayerConfig =
  | { readonly kernel: 'direct' }
  | { readonly kernel: 'tiled' }
  // pixelsPerThread absent = 1 (tuning cache files may lack it; planOf passes it on).
  | { readonly kernel: 'gemm'; readonly mapsPerThread: 4 | 8 | 16; readonly pixelsPerThread?: GemmPixels };

interface Plan {
  readonly program: Program;
  readonly uniformWeights: boolean;
  /** Length of the uniform weight array the program declares (the binding must cover it). */
  readonly uniformVec4s?: number;
  readonly workgroups: (p: Shape, n: number) => [number, number, number];
  /** Outputs (pixel × map) one workgroup computes, each C·K² multiply-adds: what sizes a submit. */
  readonly groupOutputs: number;
  readonly rate: WorkRate;
  readonly note?: string;
}

/**
 * Multiply-adds per ms, low estimates (see WorkRate): llvmpipe on two cores gets about twice
 * these; there the tiled kernel's barriers make it the slowest and gemm's register tiles the fastest.
 */
const DIRECT_RATE: WorkRate = { software: 7e4, hardware: 2e9 };
const TILED_RATE: WorkRate = { software: 2.4e4, hardware: 2e9 };
const GEMM_RATE: WorkRate = { software: 2e5, hardware: 1e10 };

const directPlan = (p: Shape): Plan => ({
  program: convLayerDirect(p.k),
  uniformWeights: false,
  workgroups: (q, n) => [Math.ceil((q.outHeight * q.outWidth) / 256), q.maps, n],
  groupOutputs: 256,
  rate: DIRECT_RATE,
});

/** Why the tiled kernel cannot run this layer, or undefined when it can. */
function whyTiledCannotRun(gpu: GpuDevice, p: Shape): string | undefined {
  // Weights must fit a 64 KiB uniform and the (16+K−1)² tile the workgroup memory.
  if (Math.ceil(p.weights.length / 4) > 4096) return 'weights too large for the uniform of the tiled kernel';
  if ((15 + p.k) ** 2 * 4 > gpu.limits.workgroupStorage) return 'tile too large for workgroup memory';
  return undefined;
}

function tiledPlan(gpu: GpuDevice, p: Shape): Plan {
  const reason = whyTiledCannotRun(gpu, p);
  if (reason !== undefined) return { ...directPlan(p), note: `${reason}; ran direct` };
  // Round the uniform array length up to a power of two so a handful of pipelines serve all layers.
  const len = 2 ** Math.ceil(Math.log2(Math.max(1, Math.ceil(p.weights.length / 4))));
  return {
    program: convLayerTiled(p.k, len),
    uniformWeights: true,
    uniformVec4s: len,
    workgroups: (q, n) => [Math.ceil(q.outWidth / 16) * Math.ceil(q.outHeight / 16), q.maps, n],
    groupOutputs: 256,
    rate: TILED_RATE,
  };
}

/** The `gemm` variant's maps-per-thread tile: the smallest that covers the maps. */
const defaultMapsPerThread = (maps: number): 4 | 8 | 16 => (maps <= 4 ? 4 : maps <= 8 ? 8 : 16);

/**
 * The `gemm` variant's pixels-per-thread tile: about 32 accumulators (MT·PX) per thread, at most 4
 * pixels; the best in the H100 steady-state runs at B=10 000 for both layers
 * (benchmarks/results/webgpu-steady-h100-2026-11-22.md).
 */
const defaultPixelsPerThread = (mt: 4 | 8 | 16): GemmPixels => (mt >= 16 ? 2 : 4);

/** What the `gemm` variant runs, and `auto` below its sweep threshold. */
function defaultGemmConfig(maps: number): ConvLayerConfig {
  const mt = defaultMapsPerThread(maps);
  return { kernel: 'gemm', mapsPerThread: mt, pixelsPerThread: defaultPixelsPerThread(mt) };
}

function gemmPlan(p: Shape, mt: 4 | 8 | 16, px: GemmPixels): Plan {
  return {
    program: px === 1 ? convLayerGemm(p.k, mt) : convLayerGemmPx(p.k, mt, px),
    uniformWeights: false,
    // One row of pixel groups per map tile; gridParts cuts x where it passes the device's limit.
    workgroups: (q, n) => [Math.ceil((n * q.outHeight * Math.ceil(q.outWidth / px)) / 256), Math.ceil(q.maps / mt), 1],
    groupOutputs: 256 * px * mt,
    rate: GEMM_RATE,
  };
}

const planOf = (gpu: GpuDevice, p: Shape, c: ConvLayerConfig): Plan => (c.kernel === 'direct' ? directPlan(p) : c.kernel === 'tiled' ? tiledPlan(gpu, p) : gemmPlan(p, c.mapsPerThread, c.pixelsPerThread ?? 1));

export const describeConvLayerConfig = (c: ConvLayerConfig): string =>
  c.kernel !== 'gemm' ? c.kernel : (c.pixelsPerThread ?? 1) === 1 ? `gemm, ${c.mapsPerThread} maps per thread` : `gemm, ${c.mapsPerThread} maps × ${c.pixelsPerThread} pixels per thread`;

/** How chunked batches run. */
export interface ConvLayerChunking {
  /**
   * Largest chunk in images. Default: about PIPELINE_CHUNK_BYTES (runtime/pipeline.ts) of input
   * or output per chunk, never more than one storage binding; batches under it run in one pass.
   */
  readonly chunkItems?: number | undefined;
  /**
   * `true` (default): two buffer sets, so chunk n+1's upload and chunk n−1's readback overlap
   * chunk n's compute; `false`: chunks one after another (upload → compute → readback).
   */
  readonly overlap?: boolean | undefined;
}

/** Where a call's input is: the caller's host array or a GPU buffer (a resident DeviceArray). */
type Source = { readonly host: Float32Array } | { readonly buffer: GPUBuffer };

/** Where the output goes: a host array or the landing buffer (runtime/pipeline.ts), a new device buffer (for a DeviceArray), or nowhere (sweep timing). */
type Sink = ChunkSink | 'device' | 'discard';

interface LayerRun {
  /** The device output buffer (sink 'device'), owned by the caller now. */
  readonly buffer?: GPUBuffer;
  readonly kernelMs: number | undefined;
  readonly chunks: number;
  readonly overlapped: boolean;
  /** Transfer wall times of the call (set by runLayer). */
  readonly uploadMs?: number;
  readonly readbackMs?: number;
}

interface Job {
  readonly timing: boolean;
  readonly signal: AbortSignal | undefined;
  readonly onProgress: OpContext<Float32Array>['onProgress'];
  readonly chunking: ConvLayerChunking;
  /** Timed passes get the clock warm-up (off for all but the first run of a sweep). */
  readonly warmUp: boolean;
}

const params = (p: Shape, n: number, flags: number, part: GridPart): ArrayBuffer =>
  packParams([
    ['u32', n],
    ['u32', p.channels],
    ['u32', p.height],
    ['u32', p.width],
    ['u32', p.maps],
    ['u32', p.outHeight],
    ['u32', p.outWidth],
    ['u32', flags],
    ['u32', part.offset[0]],
    ['u32', part.offset[1]],
    ['u32', part.offset[2]],
  ]);

/** The grid of `n` images in parts within the device's limits, grouped into submits of about SUBMIT_MS of work. */
function layerSubmits(l: LayerContext, n: number): GridPart[][] {
  const { gpu, p, plan } = l;
  const maxGroups = workPerSubmit(gpu, plan.rate) / (plan.groupOutputs * Math.max(p.channels * p.k * p.k, MIN_WORK_PER_OUTPUT));
  return submitsOf(gridParts(plan.workgroups(p, n), gpu.limits.workgroupsPerDimension, maxGroups), maxGroups);
}

/** Binds one part of a chunk of `n` images; its params uniform goes onto `temps`. */
function bindPart(l: LayerContext, n: number, input: GPUBuffer, output: GPUBuffer, part: GridPart, temps: GPUBuffer[]): GPUBindGroup {
  const uniform = l.gpu.uniform(params(l.p, n, l.flags, part));
  temps.push(uniform);
  return l.gpu.bind(l.pipeline, [input, l.weights, l.bias, output, uniform]);
}

/** Images per chunk: `chunkItems`, or about `target` bytes (the pipeline's chunk size), within one storage binding. */
function imagesPerChunk(gpu: GpuDevice, p: Shape, chunking: ConvLayerChunking, target = PIPELINE_CHUNK_BYTES): number {
  const perImage = Math.max(p.channels * p.height * p.width, convLayerOutputLength({ ...p, batch: 1 })) * 4;
  return Math.min(itemsPerChunk(gpu, perImage, 'input'), chunking.chunkItems ?? Math.max(1, Math.floor(chunkBytesOf(gpu, target) / perImage)));
}

/**
 * Whether the call's chunks move nothing between host and device: the output goes to a device
 * buffer (the landing buffer for `out`, or a device output) and the input comes from one (a
 * resident input, or a host input staged whole in the upload landing buffer). Such chunks have
 * no transfer to overlap, so each costs only its waits, and they run as large as a binding allows.
 */
function transfersOutsideChunks(gpu: GpuDevice, p: Shape, src: Source, sink: Sink): boolean {
  const sinkOnDevice = sink === 'device' || (typeof sink === 'object' && 'buffer' in sink);
  return sinkOnDevice && ('buffer' in src || usesUploadLanding(gpu, p.batch * p.channels * p.height * p.width * 4, 2));
}

/** The layer over the whole batch in one exclusive section of its own (layerBody). */
function runLayer(gpu: GpuDevice, p: Shape, src: Source, sink: Sink, plan: Plan, job: Job): Promise<LayerRun> {
  if (sink === 'device' && p.batch * convLayerOutputLength({ ...p, batch: 1 }) * 4 > gpu.limits.bufferSize) {
    throw new LimitExceededError('output', `a device output of ${p.batch * convLayerOutputLength({ ...p, batch: 1 }) * 4} bytes is larger than this device's largest buffer (${gpu.limits.bufferSize} bytes); ask for output: 'array'`);
  }
  return gpu.exclusive(() => layerBody(gpu, p, src, sink, plan, job));
}

/**
 * The layer over the whole batch, inside the caller's exclusive section: in one pass when the
 * batch fits one binding (or `chunkItems`), else in chunks, overlapped or sequential.
 */
async function layerBody(gpu: GpuDevice, p: Shape, src: Source, sink: Sink, plan: Plan, job: Job): Promise<LayerRun> {
  const inPer = p.channels * p.height * p.width;
  const outPer = convLayerOutputLength({ ...p, batch: 1 });
  const per = imagesPerChunk(gpu, p, job.chunking, transfersOutsideChunks(gpu, p, src, sink) ? Number.POSITIVE_INFINITY : PIPELINE_CHUNK_BYTES);
  // A resident source's buffer is looked up here, inside the call (a getter: see sourceOf).
  const input: Source = 'buffer' in src ? { buffer: src.buffer } : src;
  const pipeline = gpu.pipeline(plan.program);
  const weights = plan.uniformWeights ? gpu.uniform(vec4Array(p.weights, plan.uniformVec4s)) : await gpu.upload(p.weights);
  // The bias binding always exists (flags say whether to use it): one pipeline layout.
  const bias = await gpu.upload(p.bias ?? new Float32Array(1));
  const flags = (p.bias !== undefined ? 1 : 0) | (p.relu ? 2 : 0);
  const layer: LayerContext = { gpu, p, plan, pipeline, weights, bias, flags, inPer, outPer, per, job };
  try {
    const run = per >= p.batch ? await single(layer, input, sink) : await chunked(layer, input, sink);
    return { ...run, ...gpu.transferTimes() };
  } finally {
    gpu.release(weights, bias);
  }
}

interface LayerContext {
  readonly gpu: GpuDevice;
  readonly p: Shape;
  readonly plan: Plan;
  readonly pipeline: GPUComputePipeline;
  readonly weights: GPUBuffer;
  readonly bias: GPUBuffer;
  readonly flags: number;
  readonly inPer: number;
  readonly outPer: number;
  readonly per: number;
  readonly job: Job;
}

async function single(l: LayerContext, src: Source, sink: Sink): Promise<LayerRun> {
  const { gpu, p, inPer, outPer } = l;
  const size = p.batch * outPer * 4;
  let input: GPUBuffer;
  if ('buffer' in src) input = src.buffer;
  else {
    // A large host input goes into the upload landing buffer in one copy, then into its storage buffer on the GPU.
    const staged = await stageInput(gpu, src.host.subarray(0, p.batch * inPer), 1, l.job.signal);
    if (staged === undefined) input = await gpu.upload(src.host, 0, l.job.signal);
    else {
      input = gpu.storage(p.batch * inPer * 4);
      copyBuffer(gpu, staged.buffer, 0, input, 0, p.batch * inPer * 4);
      staged.release();
    }
  }
  const output = gpu.storage(size);
  const reads = typeof sink === 'object' ? sinkReads(sink, output, 0, size, 0) : [];
  const bind = (part: GridPart, temps: GPUBuffer[]) => bindPart(l, p.batch, input, output, part, temps);
  const r = await executeParts(gpu, l.pipeline, layerSubmits(l, p.batch), bind, reads, l.job.timing, l.job.signal, l.job.warmUp);
  if (typeof sink === 'object') submitSinkCopy(gpu, sink, output, 0, size, 0);
  if ('host' in src) gpu.release(input);
  if (sink === 'device') return { buffer: output, kernelMs: r.kernelMs, chunks: 1, overlapped: false };
  gpu.release(output);
  return { kernelMs: r.kernelMs, chunks: 1, overlapped: false };
}

interface LayerSet {
  readonly input: GPUBuffer;
  readonly output: GPUBuffer;
}

/**
 * The batch in chunks of `per` images on the runtime pipeline (runtime/pipeline.ts): with
 * overlap, two buffer sets, so chunk n+1's upload and chunk n−1's readback overlap chunk n's
 * compute; without, each chunk is uploaded, computed and read back before the next. A large
 * host input is staged whole in the upload landing buffer and each chunk copies its images from
 * there on the GPU, as from a resident input; into the landing buffer (a caller's `out`) each
 * chunk's output is copied on the GPU.
 */
async function chunked(l: LayerContext, src: Source, sink: Sink): Promise<LayerRun> {
  const { gpu, p, inPer, outPer, per } = l;
  const overlap = l.job.chunking.overlap ?? true;
  const full = sink === 'device' ? gpu.storage(p.batch * outPer * 4) : undefined;
  const chunks = Math.ceil(p.batch / per);
  const count = (i: number): number => Math.min(per, p.batch - i * per);
  const staged = 'host' in src ? await stageInput(gpu, src.host.subarray(0, p.batch * inPer), chunks, l.job.signal) : undefined;
  // Where chunks copy their images from on the GPU (else each chunk's upload writes them through the ring).
  const from = 'buffer' in src ? src.buffer : staged?.buffer;
  try {
    const r = await runChunked<LayerSet>(
      gpu,
      {
        chunks,
        sets: overlap ? PIPELINE_SETS : 1,
        createSet: () => ({ input: gpu.storage(per * inPer * 4), output: gpu.storage(per * outPer * 4) }),
        releaseSet: (s) => gpu.release(s.input, s.output),
        chunk: (i) => {
          const n = count(i);
          const b0 = i * per;
          return {
            upload: async (s, signal) => {
              if (from === undefined && 'host' in src) await gpu.write(s.input, 0, src.host.subarray(b0 * inPer, (b0 + n) * inPer), signal);
            },
            encodeBefore: (enc, s) => {
              if (from !== undefined) enc.copyBufferToBuffer(from, b0 * inPer * 4, s.input, 0, n * inPer * 4);
            },
            work: (s) => ({ pipeline: l.pipeline, submits: layerSubmits(l, n), bind: (part, temps) => bindPart(l, n, s.input, s.output, part, temps) }),
            encodeAfter: (enc, s) => {
              if (full !== undefined) enc.copyBufferToBuffer(s.output, 0, full, b0 * outPer * 4, n * outPer * 4);
              if (typeof sink === 'object') encodeSinkCopy(enc, sink, s.output, 0, n * outPer * 4, b0 * outPer * 4);
            },
            reads: (s) => (typeof sink === 'object' ? sinkReads(sink, s.output, 0, n * outPer * 4, b0 * outPer * 4) : []),
            done: () => l.job.onProgress?.({ done: b0 + n, total: p.batch, unit: 'images' }),
          };
        },
      },
      { timing: l.job.timing, signal: l.job.signal, warmUp: l.job.warmUp },
    );
    return full === undefined ? { kernelMs: r.kernelMs, chunks, overlapped: overlap } : { buffer: full, kernelMs: r.kernelMs, chunks, overlapped: overlap };
  } catch (e) {
    if (full !== undefined) gpu.release(full);
    throw e;
  } finally {
    staged?.release();
  }
}

const chunkNote = (r: LayerRun): string | undefined => (r.chunks > 1 ? `${r.chunks} chunks, ${r.overlapped ? 'upload and readback overlapped with compute' : 'sequential'}` : undefined);

/** Runs `plan` on the call's problem; the input may be a resident DeviceArray, the output one. */
async function runPlan(gpu: GpuDevice, p: ResidentProblem<'convLayer'>, ctx: OpContext<Float32Array>, plan: Plan, chunking: ConvLayerChunking, extraNotes: readonly string[] = []): Promise<OpOutput<Float32Array>> {
  const src = sourceOf(gpu, p.input);
  const job: Job = { timing: ctx.timing, signal: ctx.signal, onProgress: ctx.onProgress, chunking, warmUp: true };
  const notes = [...extraNotes, ...(plan.note === undefined ? [] : [plan.note])];
  const shape = shapeOf(p);
  if (ctx.output === 'device') {
    const r = await runLayer(gpu, shape, src, 'device', plan, job);
    const chunk = chunkNote(r);
    const data = gpuDeviceArray(gpu, ctx.deviceArray, r.buffer!, convLayerOutputLength(p));
    return { data, kernelMs: r.kernelMs, uploadMs: r.uploadMs, readbackMs: r.readbackMs, notes: chunk === undefined ? notes : [...notes, chunk] };
  }
  const r = await hostOutput(gpu, ctx.out, Float32Array, convLayerOutputLength(p), ctx.signal, (sink) => layerBody(gpu, shape, src, sink, plan, job));
  const chunk = chunkNote(r.result);
  if (r.note !== undefined) notes.push(r.note);
  return { data: r.data, kernelMs: r.result.kernelMs, ...r.transfer, notes: chunk === undefined ? notes : [...notes, chunk] };
}

function shapeOf(p: ResidentProblem<'convLayer'>): Shape {
  const { input: _input, ...shape } = p;
  return shape;
}

/** The input as the kernels take it: a host array, or the buffer behind this backend's own handle. */
function sourceOf(gpu: GpuDevice, input: Float32Array | DeviceArray<Float32Array>): Source {
  if (!isDeviceArray(input)) return { host: input };
  // The kit passes only handles of this backend unread; resolve the buffer lazily inside the call.
  return {
    get buffer(): GPUBuffer {
      return residentBuffer(gpu, input, 'input');
    },
  };
}

/**
 * `auto` times each candidate on the first images of the batch, up to this many flops: enough
 * to fill a big GPU, little enough that 15 runs cost milliseconds; far
 * less on software adapters, whose runs take CPU time from the caller.
 */
export const SWEEP_FLOPS = { hardware: 2 ** 31, software: 2 ** 23 } as const;

/** Below this many flops `auto` does not sweep: launch latency dominates and a sweep could never pay for itself. */
export const SWEEP_MIN_FLOPS = 2 ** 22;

/** The candidates for a layer: direct, tiled where it fits, gemm with each maps-per-thread tile up to the one covering the maps, each with 1, 2 and 4 pixels per thread. */
export function convLayerCandidates(gpu: GpuDevice, p: Shape): TuneCandidate<ConvLayerConfig>[] {
  const out: TuneCandidate<ConvLayerConfig>[] = [{ name: 'direct', config: { kernel: 'direct' } }];
  if (whyTiledCannotRun(gpu, p) === undefined) out.push({ name: 'tiled', config: { kernel: 'tiled' } });
  for (const mt of [4, 8, 16] as const) {
    if (mt > defaultMapsPerThread(p.maps)) continue;
    out.push({ name: `gemm-mt${mt}`, config: { kernel: 'gemm', mapsPerThread: mt } });
    for (const px of [2, 4] as const) out.push({ name: `gemm-mt${mt}-px${px}`, config: { kernel: 'gemm', mapsPerThread: mt, pixelsPerThread: px } });
  }
  return out;
}

/**
 * The tuner key: K, channels, maps (they set the kernel's inner loops and the map tiling), the
 * output-size bucket and the images a sweep times (how many waves fill the GPU).
 */
export function convLayerShapeKey(p: Shape, sweepImages: number): string {
  return `convLayer k=${p.k} c=${p.channels} m=${p.maps} out=2^${log2Bucket(p.outHeight * p.outWidth)} n=2^${log2Bucket(sweepImages)}`;
}

/** Images a sweep times: the whole batch when small, else as many as the flop budget allows (at least 1). */
export function convLayerSweepImages(p: Shape, budget: number): number {
  return Math.max(1, Math.min(p.batch, Math.floor(budget / Math.max(1, convLayerFlops({ ...p, batch: 1 })))));
}

/** Times configs on the first `images` images of the call's input: device buffers kept across a sweep's runs. */
class ConvLayerSweep {
  readonly images: number;
  private first = true;

  constructor(
    private readonly gpu: GpuDevice,
    private readonly p: ResidentProblem<'convLayer'>,
    private readonly signal: AbortSignal | undefined,
    images: number,
  ) {
    this.images = images;
  }

  async time(config: ConvLayerConfig): Promise<number> {
    throwIfAborted(this.signal);
    const gpu = this.gpu;
    const shape = { ...shapeOf(this.p), batch: this.images };
    const inPer = shape.channels * shape.height * shape.width;
    const src: Source = isDeviceArray(this.p.input) ? sourceOf(gpu, this.p.input) : { host: this.p.input.subarray(0, this.images * inPer) };
    const job: Job = { timing: gpu.hasTimestamps, signal: this.signal, onProgress: undefined, chunking: {}, warmUp: this.first };
    this.first = false;
    const t0 = performance.now();
    const r = await runLayer(gpu, shape, src, 'discard', planOf(gpu, shape, config), job);
    // No timestamps (software adapters): wall clock of the run, upload included (the same for every candidate).
    return r.kernelMs ?? performance.now() - t0;
  }

  describe(): string {
    const how = this.gpu.hasTimestamps ? 'GPU timestamps' : 'wall clock';
    return this.images === this.p.batch ? how : `${how} on ${this.images} of ${this.p.batch} images`;
  }
}

function autoNote(choice: TuneChoice<ConvLayerConfig>, key: string, swept: number, how: string): string {
  const what = `auto: ${describeConvLayerConfig(choice.candidate.config)}`;
  if (choice.source !== 'sweep') return `${what} (tuned earlier; cached ${choice.source === 'disk' ? 'in the tuning file' : 'in memory'} for ${key})`;
  return `${what} (tuned now: swept ${swept} candidates in ${Math.round(choice.sweepMs ?? 0)} ms, ${how}, for ${key})`;
}

/** `auto`: the fastest candidate for this adapter and shape class, swept once and cached. */
async function runAuto(gpu: GpuDevice, tuning: TunerOptions | undefined, p: ResidentProblem<'convLayer'>, ctx: OpContext<Float32Array>, chunking: ConvLayerChunking): Promise<OpOutput<Float32Array>> {
  const shape = shapeOf(p);
  const candidates = convLayerCandidates(gpu, shape);
  if (convLayerFlops(shape) < SWEEP_MIN_FLOPS) {
    const config = defaultGemmConfig(p.maps);
    return runPlan(gpu, p, ctx, planOf(gpu, shape, config), chunking, [
      `auto: ${describeConvLayerConfig(config)} (not tuned: the default below ${SWEEP_MIN_FLOPS} flops, where a sweep would cost more than any config could save)`,
    ]);
  }
  const images = Math.min(convLayerSweepImages(shape, gpu.info.software ? SWEEP_FLOPS.software : SWEEP_FLOPS.hardware), itemsPerChunk(gpu, Math.max(p.channels * p.height * p.width, convLayerOutputLength({ ...p, batch: 1 })) * 4, 'input'));
  const key = convLayerShapeKey(shape, images);
  const sweep = new ConvLayerSweep(gpu, p, ctx.signal, images);
  const choice = await tunerFor(gpu, tuning).pick(key, candidates, (c) => sweep.time(c));
  return runPlan(gpu, p, ctx, planOf(gpu, shape, choice.candidate.config), chunking, [autoNote(choice, key, candidates.length, sweep.describe()), ...(choice.notes ?? [])]);
}

/** Runs one config, as `auto` would after picking it: what the tests check every candidate with. */
export async function runConvLayerConfig(gpu: GpuDevice, p: ConvLayerProblem, config: ConvLayerConfig, chunking: ConvLayerChunking = {}): Promise<Float32Array> {
  const out = new Float32Array(convLayerOutputLength(p));
  const job: Job = { timing: false, signal: undefined, onProgress: undefined, chunking, warmUp: false };
  await runLayer(gpu, shapeOf(p), { host: p.input }, { host: out }, planOf(gpu, p, config), job);
  return out;
}

/**
 * `tuning`: where `auto` keeps its picks (memory only by default; the first op of a device
 * decides). `chunking`: chunk size and overlap of batches larger than one binding. The input
 * may be this backend's own DeviceArray (used where it lives) and, with `output: 'device'`, so
 * is the output.
 */
export function convLayerOp(gpu: GpuDevice, tuning?: TunerOptions, chunking: ConvLayerChunking = {}): ResidentOpImplementation<'convLayer'> {
  assertObject(chunking, 'chunking');
  if (chunking.chunkItems !== undefined) assertInteger(chunking.chunkItems, 'chunking.chunkItems', 1);
  if (chunking.overlap !== undefined) assertBoolean(chunking.overlap, 'chunking.overlap');
  return {
    residentInputs: true,
    defaultVariant: 'gemm',
    variants: {
      direct: (p, ctx) => runPlan(gpu, p, ctx, directPlan(p), chunking),
      tiled: (p, ctx) => runPlan(gpu, p, ctx, tiledPlan(gpu, p), chunking),
      gemm: (p, ctx) => runPlan(gpu, p, ctx, planOf(gpu, p, defaultGemmConfig(p.maps)), chunking),
      auto: (p, ctx) => runAuto(gpu, tuning, p, ctx, chunking),
    },
  };
}

/**
 * One timed pass of a config over a whole batch already on the device, output discarded: the
 * steady-state time (no upload in front of it) the testing entry's `timeConvLayerResident` takes.
 */
export async function timeConvLayerPass(gpu: GpuDevice, p: Shape, input: GPUBuffer, config: ConvLayerConfig): Promise<number> {
  const job: Job = { timing: true, signal: undefined, onProgress: undefined, chunking: { chunkItems: p.batch }, warmUp: true };
  const t0 = performance.now();
  const r = await runLayer(gpu, p, { buffer: input }, 'discard', planOf(gpu, p, config), job);
  // No timestamps (software adapters): the wall clock of the pass.
  return r.kernelMs ?? performance.now() - t0;
}
