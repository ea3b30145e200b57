import { LimitExceededError, throwIfAborted, UnsupportedError } from '@kernelkit/core';
import { conv2dOutputLength, conv2dPixels, isDeviceArray, type Conv2dProblem, type DeviceArray, type OpContext, type OpOutput, type ResidentOpImplementation, type ResidentProblem } from '@kernelkit/ops';
import { copyBuffer, gpuDeviceArray, residentBuffer } from '../runtime/device-array.js';
import type { Binding, GpuDevice } from '../runtime/device.js';
import { packParams, vec4Array } from '../runtime/params.js';
import type { Program } from '../runtime/program.js';
import { conv2dShapeClass, conv2dShapeKey } from '../tuning/shape-class.js';
import { tunerFor, type TuneCandidate, type TuneChoice, type TunerOptions } from '../tuning/tuner.js';
import { BUF, gridParts, submitsOf, type GridPart } from '../runtime/usage.js';
import { callTimes, executeParts, MIN_WORK_PER_OUTPUT, workPerSubmit, type CallTimes, type WorkRate } from './common.js';
import { chunkBytesOf, CONV2D_CHUNK_BYTES, encodeSinkCopy, hostOutput, PIPELINE_SETS, runChunked, sinkReads, stageInput, type ChunkSink } from '../runtime/pipeline.js';
import { COARSENED_CONFIG, conv2dBlock, conv2dCoalesced, conv2dNaive, conv2dTileBytes, conv2dTiled, TILED_CONFIG, type Conv2dTileConfig } from './conv2d.wgsl.js';

type Plan = {
  program: Program;
  uniformFilter: boolean;
  workgroups: (p: Pick<Conv2dProblem, 'width' | 'height'>, images: number) => [number, number, number];
  /** Output pixels one workgroup computes (with K² multiply-adds each): what sizes a submit. */
  groupPixels: number;
  rate: WorkRate;
  note?: string;
};

/** What `auto` chooses between: the coalesced kernel or one shape of the tiled kernel. Plain JSON (the tuning cache stores it). */
export type Conv2dConfig = { readonly kernel: 'coalesced' } | ({ readonly kernel: 'tiled' } & Conv2dTileConfig);

/**
 * Multiply-adds per ms, low estimates (see WorkRate): llvmpipe on two cores gets about twice
 * these; the naive kernel's strided reads make it several times slower than the others.
 */
const NAIVE_RATE: WorkRate = { software: 1.2e4, hardware: 1e9 };
const RATE: WorkRate = { software: 6e4, hardware: 5e9 };

const naivePlan = (k: number): Plan => ({ program: conv2dNaive(k), uniformFilter: false, workgroups: (p, n) => [Math.ceil(p.height / 64), p.width, n], groupPixels: 64, rate: NAIVE_RATE });
const coalescedPlan = (k: number): Plan => ({
  program: conv2dCoalesced(k),
  uniformFilter: false,
  workgroups: (p, n) => [Math.ceil(p.width / 32), Math.ceil(p.height / 8), n],
  groupPixels: 256,
  rate: RATE,
});

function tiledPlan(k: number, c: Conv2dTileConfig): Plan {
  const [bw, bh] = conv2dBlock(c);
  return { program: conv2dTiled(k, c), uniformFilter: true, workgroups: (p, n) => [Math.ceil(p.width / bw), Math.ceil(p.height / bh), n], groupPixels: bw * bh, rate: RATE };
}

const planOf = (k: number, c: Conv2dConfig): Plan => (c.kernel === 'coalesced' ? coalescedPlan(k) : tiledPlan(k, c));

/** The adapter limits a conv2d config must respect (the GpuDevice requested the adapter's maxima). */
export interface Conv2dLimits {
  readonly workgroupStorage: number;
  readonly invocations: number;
  readonly sizeX: number;
  readonly sizeY: number;
  readonly uniformBytes: number;
}

export function conv2dLimits(gpu: GpuDevice): Conv2dLimits {
  const l = gpu.device.limits;
  return {
    workgroupStorage: gpu.limits.workgroupStorage,
    invocations: gpu.limits.invocations,
    sizeX: l.maxComputeWorkgroupSizeX,
    sizeY: l.maxComputeWorkgroupSizeY,
    uniformBytes: Number(l.maxUniformBufferBindingSize),
  };
}

/**
 * Why `config` cannot run K×K on this adapter, or undefined when it can. Checked before anything
 * is compiled, so a sweep never meets a pipeline error. Image size never rules a config out:
 * grids past the per-dimension workgroup limit run as several dispatches.
 */
export function whyConv2dConfigCannotRun(config: Conv2dConfig, k: number, limits: Conv2dLimits): string | undefined {
  const [tw, th] = config.kernel === 'coalesced' ? [32, 8] : config.tile;
  if (tw * th > limits.invocations || tw > limits.sizeX || th > limits.sizeY) return `${tw}×${th} invocations exceed the workgroup limits`;
  if (config.kernel === 'tiled') {
    const bytes = conv2dTileBytes(k, config);
    if (bytes > limits.workgroupStorage) return `the tile needs ${bytes} bytes of workgroup memory, the adapter has ${limits.workgroupStorage}`;
    // The filter is a uniform array of vec4 (16-byte stride).
    if (Math.ceil((k * k) / 4) * 16 > limits.uniformBytes) return `a ${k}×${k} filter does not fit a uniform buffer (${limits.uniformBytes} bytes)`;
  }
  return undefined;
}

const tiled = (tw: number, th: number, cx: number, cy: number): TuneCandidate<Conv2dConfig> => ({
  name: `${tw}x${th}/${cx}x${cy}`,
  config: { kernel: 'tiled', tile: [tw, th], perThread: [cx, cy] },
});

/**
 * The `auto` sweep: 16 configs × 3 runs, each a shape test/tuning.test.ts checks against the
 * reference on every CI build, so whatever wins is correct. Chosen from an H100 exploration of
 * 63 tiled configs (7 workgroup shapes × 9 output blocks) on 9 workloads (K 1–11, 128² × 64 to
 * 8192²): the best of these 15 came close to the best of all 63 on every workload. The winners
 * had 2–8 outputs per thread, either a column (1×4, 1×8: the
 * threads of a warp read consecutive words, and each read serves up to 4–8 output rows) or a
 * block (2×2, 2×4: the fewest workgroup-memory reads per output); 1×1 and the row-only 4×1
 * never won. Kept besides: coalesced (no workgroup memory; it wins where that memory is
 * emulated, as on llvmpipe) and the `tiled` and `coarsened` variants, so every sweep measures
 * the named variants `auto` replaces. 32×16 needs 512 invocations: on adapters with WebGPU's default of 256
 * those three drop out up front.
 */
export const CONV2D_CANDIDATES: readonly TuneCandidate<Conv2dConfig>[] = [
  { name: 'coalesced', config: { kernel: 'coalesced' } },
  tiled(32, 8, 1, 1), // the `tiled` variant
  tiled(32, 8, 4, 1), // the `coarsened` variant
  tiled(32, 8, 1, 4),
  tiled(32, 8, 2, 2),
  tiled(32, 8, 2, 4),
  tiled(16, 16, 1, 4),
  tiled(16, 16, 2, 2),
  tiled(16, 16, 2, 4),
  tiled(32, 4, 1, 4),
  tiled(32, 4, 2, 2),
  tiled(32, 4, 1, 8),
  tiled(64, 4, 1, 4),
  tiled(32, 16, 1, 4),
  tiled(32, 16, 2, 2),
  tiled(32, 16, 2, 4),
];

export function describeConv2dConfig(c: Conv2dConfig): string {
  return c.kernel === 'coalesced' ? 'coalesced (no tile)' : `tile ${c.tile[0]}×${c.tile[1]}, ${c.perThread[0]}×${c.perThread[1]} per thread`;
}

/** The named tiled variants keep their shape; where it cannot run (huge K) they fall back to coalesced and say so. */
function namedTiledPlan(gpu: GpuDevice, k: number, c: Conv2dTileConfig): Plan {
  const reason = whyConv2dConfigCannotRun({ kernel: 'tiled', ...c }, k, conv2dLimits(gpu));
  if (reason !== undefined) return { ...coalescedPlan(k), note: `k=${k}: ${reason}; ran the coalesced kernel` };
  return tiledPlan(k, c);
}

/** The grid of `n` images of `size` in parts within the device's limits, grouped into submits of about SUBMIT_MS of work. */
function conv2dSubmits(gpu: GpuDevice, plan: Plan, k: number, size: Pick<Conv2dProblem, 'width' | 'height'>, n: number): GridPart[][] {
  const maxGroups = workPerSubmit(gpu, plan.rate) / (plan.groupPixels * Math.max(k * k, MIN_WORK_PER_OUTPUT));
  return submitsOf(gridParts(plan.workgroups(size, n), gpu.limits.workgroupsPerDimension, maxGroups), maxGroups);
}

const partParams = (size: Pick<Conv2dProblem, 'width' | 'height'>, part: GridPart): ArrayBuffer =>
  packParams([['u32', size.width], ['u32', size.height], ['u32', part.offset[0]], ['u32', part.offset[1]], ['u32', part.offset[2]]]);

/**
 * One pipeline chunk: images [b0, b0 + n), output rows [r0, r1) of each, computed from input rows
 * [in0, in1). Whole images per chunk while an image fits the chunk size; a larger image is cut
 * into row bands, each uploaded with its R = (K−1)/2 halo rows above and below, so the kernel
 * runs on the band as on a smaller image and only the band's own rows (whose neighbourhoods lie
 * inside it) are read back.
 */
export interface Conv2dChunk {
  readonly b0: number;
  readonly n: number;
  readonly r0: number;
  readonly r1: number;
  readonly in0: number;
  readonly in1: number;
}

/** The chunks of a conv2d call for a chunk size of `chunkBytes` (input bytes; the output is the same size). */
export function conv2dChunks(p: Pick<Conv2dProblem, 'batch' | 'height' | 'width' | 'k'>, chunkBytes: number): Conv2dChunk[] {
  const { batch, height: h, width: w } = p;
  const chunks: Conv2dChunk[] = [];
  const img = h * w * 4;
  if (img <= chunkBytes) {
    // At most 65535 images: the grid's z dimension.
    const per = Math.min(65535, Math.floor(chunkBytes / img));
    for (let b0 = 0; b0 < batch; b0 += per) chunks.push({ b0, n: Math.min(per, batch - b0), r0: 0, r1: h, in0: 0, in1: h });
    return chunks;
  }
  const r = (p.k - 1) / 2;
  const rowBytes = w * 4;
  if ((1 + 2 * r) * rowBytes > chunkBytes) throw new LimitExceededError('input', `one output row of a ${w}-wide image needs ${(1 + 2 * r) * rowBytes} bytes of input rows, more than a chunk can bind (${chunkBytes} bytes)`);
  const rows = Math.floor(chunkBytes / rowBytes) - 2 * r;
  for (let b0 = 0; b0 < batch; b0++) {
    for (let r0 = 0; r0 < h; r0 += rows) {
      const r1 = Math.min(h, r0 + rows);
      chunks.push({ b0, n: 1, r0, r1, in0: Math.max(0, r0 - r), in1: Math.min(h, r1 + r) });
    }
  }
  return chunks;
}

/** A chunk's own input and output buffers; undefined where the chunk binds the call's storage buffer at its offset instead. */
interface Conv2dSet {
  readonly input: GPUBuffer | undefined;
  readonly output: GPUBuffer | undefined;
}

/** Byte offsets of a chunk's input rows (halo rows included) in the call's input, and of its own output rows in the call's output. */
const inputOffset = (p: Pick<Conv2dProblem, 'height' | 'width'>, c: Conv2dChunk): number => (c.b0 * p.height + c.in0) * p.width * 4;
const outputOffset = (p: Pick<Conv2dProblem, 'height' | 'width'>, c: Conv2dChunk): number => (c.b0 * p.height + c.r0) * p.width * 4;

/** Where a call's input is: the caller's host array or a GPU buffer (a resident DeviceArray; a getter, read inside the call). */
type Source = { readonly host: Float32Array } | { readonly buffer: GPUBuffer };

/**
 * The call's chunks through the runtime pipeline, from `src` into `sink`. A resident input is
 * bound band by band (halo rows included) at its offset, or copied into each chunk's input
 * buffer on the GPU where an offset is not aligned; a device output likewise.
 */
async function conv2dBody(gpu: GpuDevice, p: Conv2dProblem | ResidentProblem<'conv2d'>, src: Source, sink: ChunkSink, timing: boolean, plan: Plan, signal: AbortSignal | undefined): Promise<CallTimes> {
  const pipeline = gpu.pipeline(plan.program);
  const chunks = conv2dChunks(p, chunkBytesOf(gpu, CONV2D_CHUNK_BYTES));
  const bytes = (c: Conv2dChunk): number => c.n * (c.in1 - c.in0) * p.width * 4;
  const setBytes = Math.max(...chunks.map(bytes));
  // A large host input goes into the upload landing buffer in one copy; the chunks then copy their rows from there, as from a resident input.
  const staged = 'host' in src ? await stageInput(gpu, src.host, chunks.length, signal) : undefined;
  const resident = 'buffer' in src ? src.buffer : staged?.buffer;
  // Storage buffers (a resident input, a device output) are bound at each chunk's offset instead
  // of copied, where every offset meets the binding alignment: any input band (halo rows are
  // only read), but only whole-image output chunks (a band's halo rows would overwrite its
  // neighbours' rows). A landing buffer cannot be bound: its chunks are copied.
  const align = gpu.device.limits.minStorageBufferOffsetAlignment;
  const aligned = (offset: number): boolean => offset % align === 0;
  const bindInput = 'buffer' in src && chunks.every((c) => aligned(inputOffset(p, c)));
  const deviceOut = 'buffer' in sink && (sink.buffer.usage & BUF.STORAGE) !== 0 ? sink.buffer : undefined;
  const bindOutput = deviceOut !== undefined && chunks.every((c) => c.r0 === 0 && c.r1 === p.height && aligned(outputOffset(p, c)));
  let filter: GPUBuffer | undefined;
  try {
    filter = plan.uniformFilter ? gpu.uniform(vec4Array(p.filter)) : await gpu.upload(p.filter, 0, signal);
    const r = await runChunked<Conv2dSet>(
      gpu,
      {
        chunks: chunks.length,
        sets: PIPELINE_SETS,
        createSet: () => ({ input: bindInput ? undefined : gpu.storage(setBytes), output: bindOutput ? undefined : gpu.storage(setBytes) }),
        releaseSet: (s) => {
          if (s.input !== undefined) gpu.release(s.input);
          if (s.output !== undefined) gpu.release(s.output);
        },
        chunk: (i) => {
          const c = chunks[i]!;
          const size = { width: p.width, height: c.in1 - c.in0 };
          const rows = c.r1 - c.r0;
          const from = inputOffset(p, c);
          // Only the band's own rows: the halo rows' outputs lack neighbours outside the band.
          const own = { offset: (c.r0 - c.in0) * p.width * 4, size: c.n * rows * p.width * 4, at: outputOffset(p, c) };
          const input = (s: Conv2dSet): Binding => s.input ?? { buffer: resident!, offset: from, size: bytes(c) };
          const output = (s: Conv2dSet): Binding => s.output ?? { buffer: deviceOut!, offset: own.at, size: own.size };
          return {
            upload: async (s, sig) => {
              if (resident === undefined && 'host' in src) await gpu.write(s.input!, 0, new Uint8Array(src.host.buffer, src.host.byteOffset + from, bytes(c)), sig);
            },
            encodeBefore: (enc, s) => {
              if (resident !== undefined && s.input !== undefined) enc.copyBufferToBuffer(resident, from, s.input, 0, bytes(c));
            },
            work: (s) => ({
              pipeline,
              submits: conv2dSubmits(gpu, plan, p.k, size, c.n),
              bind: (part, temps) => {
                const params = gpu.uniform(partParams(size, part));
                temps.push(params);
                return gpu.bind(pipeline, [input(s), filter!, output(s), params]);
              },
            }),
            encodeAfter: (enc, s) => {
              if (s.output !== undefined) encodeSinkCopy(enc, sink, s.output, own.offset, own.size, own.at);
            },
            reads: (s) => (s.output === undefined ? [] : sinkReads(sink, s.output, own.offset, own.size, own.at)),
          };
        },
      },
      { timing, signal },
    );
    return callTimes(gpu, r.kernelMs);
  } finally {
    if (filter !== undefined) gpu.release(filter);
    staged?.release();
  }
}

/** The input as the kernels take it: a host array, or the buffer behind this backend's own handle (looked up inside the call). */
function sourceOf(gpu: GpuDevice, input: Float32Array | DeviceArray<Float32Array>): Source {
  if (!isDeviceArray(input)) return { host: input };
  return {
    get buffer(): GPUBuffer {
      return residentBuffer(gpu, input, 'input');
    },
  };
}

async function runConv2d(gpu: GpuDevice, p: ResidentProblem<'conv2d'>, ctx: OpContext<Float32Array>, plan: Plan): Promise<OpOutput<Float32Array>> {
  const length = conv2dOutputLength(p);
  const src = sourceOf(gpu, p.input);
  const notes = plan.note === undefined ? [] : [plan.note];
  if (ctx.output === 'device') {
    if (length * 4 > gpu.limits.bufferSize) {
      throw new LimitExceededError('output', `a device output of ${length * 4} bytes is larger than this device's largest buffer (${gpu.limits.bufferSize} bytes); ask for output: 'array'`);
    }
    const { buffer, times } = await gpu.exclusive(async () => {
      const buffer = gpu.storage(length * 4);
      try {
        return { buffer, times: await conv2dBody(gpu, p, src, { buffer }, ctx.timing, plan, ctx.signal) };
      } catch (e) {
        gpu.release(buffer);
        throw e;
      }
    });
    return { data: gpuDeviceArray(gpu, ctx.deviceArray, buffer, length), ...times, notes: notes.length === 0 ? undefined : notes };
  }
  const r = await hostOutput(gpu, ctx.out, Float32Array, length, ctx.signal, (sink) => conv2dBody(gpu, p, src, sink, ctx.timing, plan, ctx.signal));
  if (r.note !== undefined) notes.push(r.note);
  return { data: r.data, ...r.result, ...r.transfer, notes: notes.length === 0 ? undefined : notes };
}

/** Runs one config, as `auto` would after picking it: what the tests check every candidate with. */
export async function runConv2dConfig(gpu: GpuDevice, p: Conv2dProblem, config: Conv2dConfig): Promise<Float32Array> {
  const out = new Float32Array(conv2dOutputLength(p));
  await gpu.exclusive(() => conv2dBody(gpu, p, { host: p.input }, { host: out }, false, planOf(p.k, config), undefined));
  return out;
}

/**
 * Sweeps time each candidate on the real problem, or on a slice of it when it is larger than
 * this many pixels: enough work to fill a big GPU many waves over, little enough that 48 runs
 * cost milliseconds on one; on the H100, picking on the slice instead of the whole problem
 * rarely chose a config much slower on the whole. Software adapters get a much smaller slice
 * because each run costs CPU time on the caller's cores.
 */
export const SWEEP_PIXELS = { hardware: 1 << 24, software: 1 << 16 } as const;

/**
 * Below this many output pixels `auto` does not sweep: such a kernel is over in microseconds on
 * any GPU (launch latency dominates and every config is about as fast), so a sweep of 48 runs
 * could never pay for itself.
 */
export const SWEEP_MIN_PIXELS = 1 << 16;

function sameConfig(a: Conv2dConfig, b: Conv2dConfig): boolean {
  if (a.kernel === 'coalesced' || b.kernel === 'coalesced') return a.kernel === b.kernel;
  return a.tile[0] === b.tile[0] && a.tile[1] === b.tile[1] && a.perThread[0] === b.perThread[0] && a.perThread[1] === b.perThread[1];
}

/** The slice a sweep times: the first `images` images, each cut to its first `height` rows. */
export function sweepSlice(p: Pick<Conv2dProblem, 'batch' | 'height' | 'width'>, cap: number): { images: number; height: number } {
  const img = p.height * p.width;
  if (p.batch * img <= cap) return { images: p.batch, height: p.height };
  if (img <= cap) return { images: Math.max(1, Math.floor(cap / img)), height: p.height };
  return { images: 1, height: Math.max(1, Math.min(p.height, Math.floor(cap / p.width))) };
}

/**
 * Times conv2d configs on one problem (or its slice): device buffers are uploaded on the first
 * timed run, so a cached pick uploads nothing. `cap` overrides the slice size (benchmarks).
 */
export class Conv2dSweep {
  readonly slice: { images: number; height: number };
  readonly timestamps: boolean;
  private bufs: { input: GPUBuffer; output: GPUBuffer; filterStorage: GPUBuffer; filterUniform: GPUBuffer } | undefined;
  private warmUp = true;

  constructor(
    private readonly gpu: GpuDevice,
    private readonly p: ResidentProblem<'conv2d'>,
    private readonly signal: AbortSignal | undefined,
    cap: number = gpu.info.software ? SWEEP_PIXELS.software : SWEEP_PIXELS.hardware,
  ) {
    // The slice must fit one storage binding (an image larger than one runs in row bands).
    const s = sweepSlice(p, Math.min(cap, Math.floor(gpu.limits.storageBinding / 4)));
    this.slice = { images: Math.min(s.images, Math.max(1, Math.floor(gpu.limits.storageBinding / (s.height * p.width * 4)))), height: s.height };
    this.timestamps = gpu.hasTimestamps;
  }

  async time(config: Conv2dConfig): Promise<number> {
    throwIfAborted(this.signal);
    const gpu = this.gpu;
    const size = { width: this.p.width, height: this.slice.height };
    const n = this.slice.images;
    const input = this.p.input;
    const b = (this.bufs ??= await gpu.exclusive(async () => ({
      input: isDeviceArray(input) ? sliceOf(gpu, residentBuffer(gpu, input, 'input'), n * size.height * size.width * 4) : await gpu.upload(input.subarray(0, n * size.height * size.width)),
      output: gpu.storage(n * size.height * size.width * 4),
      filterStorage: await gpu.upload(this.p.filter),
      filterUniform: gpu.uniform(vec4Array(this.p.filter)),
    })));
    return gpu.exclusive(async () => {
      const plan = planOf(this.p.k, config);
      const pipeline = gpu.pipeline(plan.program);
      const filter = plan.uniformFilter ? b.filterUniform : b.filterStorage;
      const bindPart = (part: GridPart, temps: GPUBuffer[]): GPUBindGroup => {
        const params = gpu.uniform(partParams(size, part));
        temps.push(params);
        return gpu.bind(pipeline, [b.input, filter, b.output, params]);
      };
      const submits = conv2dSubmits(gpu, plan, this.p.k, size, n);
      if (this.timestamps) {
        // One clock warm-up for the whole sweep: its runs follow each other closely enough to keep the clocks up.
        const r = await executeParts(gpu, pipeline, submits, bindPart, [], true, this.signal, this.warmUp);
        this.warmUp = false;
        if (r.kernelMs !== undefined) return r.kernelMs;
      }
      // No timestamps (software adapters): wall clock from submit to onSubmittedWorkDone.
      const t0 = performance.now();
      await executeParts(gpu, pipeline, submits, bindPart, [], false, this.signal);
      return performance.now() - t0;
    });
  }

  describe(): string {
    const { images, height } = this.slice;
    const how = this.timestamps ? 'GPU timestamps' : 'wall clock';
    if (images === this.p.batch && height === this.p.height) return how;
    if (height === this.p.height) return `${how} on ${images} of ${this.p.batch} images`;
    return `${how} on the first ${height} of ${this.p.height} rows`;
  }

  dispose(): void {
    if (this.bufs === undefined) return;
    const b = this.bufs;
    this.gpu.release(b.input, b.output, b.filterStorage, b.filterUniform);
    this.bufs = undefined;
  }
}

/** A new storage buffer holding the first `bytes` of `src` (a sweep's slice of a resident input). */
function sliceOf(gpu: GpuDevice, src: GPUBuffer, bytes: number): GPUBuffer {
  const buf = gpu.storage(bytes);
  copyBuffer(gpu, src, 0, buf, 0, Math.ceil(bytes / 4) * 4);
  return buf;
}

/** The note `auto` adds to its Result: what ran and why (exported for the tests). */
export function autoNote(choice: TuneChoice<Conv2dConfig>, key: string, swept: number, skipped: number, how: string): string {
  const what = `auto: ${describeConv2dConfig(choice.candidate.config)}`;
  const skip = skipped > 0 ? `; ${skipped} candidate${skipped === 1 ? '' : 's'} skipped: over this adapter's limits` : '';
  if (choice.source !== 'sweep') return `${what} (cached${choice.source === 'disk' ? ' in the tuning file' : ''} for ${key})`;
  return `${what} (swept ${swept} candidates in ${Math.round(choice.sweepMs ?? 0)} ms, ${how}${skip})`;
}

/** `auto`: the fastest fitting candidate for this adapter and shape class, swept once and cached. */
async function runAuto(gpu: GpuDevice, tuning: TunerOptions | undefined, p: ResidentProblem<'conv2d'>, ctx: OpContext<Float32Array>): Promise<OpOutput<Float32Array>> {
  const limits = conv2dLimits(gpu);
  const fitting = CONV2D_CANDIDATES.filter((c) => whyConv2dConfigCannotRun(c.config, p.k, limits) === undefined);
  if (fitting.length === 0) {
    const out = await runConv2d(gpu, p, ctx, coalescedPlan(p.k));
    return { ...out, notes: [`auto: no tuning candidate fits this adapter for k=${p.k}, ${p.width}×${p.height}; ran the coalesced kernel`] };
  }
  if (fitting.length === 1) {
    // Nothing to choose between (a huge K leaves only coalesced): timing it would be pure cost.
    const only = fitting[0]!.config;
    const out = await runConv2d(gpu, p, ctx, planOf(p.k, only));
    return { ...out, notes: [`auto: ${describeConv2dConfig(only)} (the only candidate within this adapter's limits for k=${p.k})`] };
  }
  if (conv2dPixels(p) < SWEEP_MIN_PIXELS) {
    // Without a sweep: a 1×1 filter has no reuse for a tile to exploit; otherwise the coarsened tile.
    const config: Conv2dConfig = p.k === 1 ? { kernel: 'coalesced' } : { kernel: 'tiled', ...COARSENED_CONFIG };
    const pick = fitting.find((c) => sameConfig(c.config, config))?.config ?? fitting[0]!.config;
    const out = await runConv2d(gpu, p, ctx, planOf(p.k, pick));
    return { ...out, notes: [`auto: ${describeConv2dConfig(pick)} (the default below ${SWEEP_MIN_PIXELS} pixels, where a sweep would cost more than any config could save)`] };
  }
  const key = conv2dShapeKey(conv2dShapeClass(p));
  const sweep = new Conv2dSweep(gpu, p, ctx.signal);
  let choice: TuneChoice<Conv2dConfig>;
  try {
    choice = await tunerFor(gpu, tuning).pick(key, fitting, (c) => sweep.time(c));
  } finally {
    sweep.dispose();
  }
  const out = await runConv2d(gpu, p, ctx, planOf(p.k, choice.candidate.config));
  const note = autoNote(choice, key, fitting.length, CONV2D_CANDIDATES.length - fitting.length, sweep.describe());
  return { ...out, notes: [note, ...(choice.notes ?? [])] };
}

/** `tuning`: where `auto` keeps its picks (memory only by default); the first conv2dOp for a device decides. */
export function conv2dOp(gpu: GpuDevice, tuning?: TunerOptions): ResidentOpImplementation<'conv2d'> {
  return {
    residentInputs: true,
    defaultVariant: 'auto',
    check(p) {
      if (isDeviceArray(p.input) && p.input.dtype !== 'f32') throw new UnsupportedError(`WebGPU conv2d takes f32; got a ${p.input.dtype} DeviceArray`, 'input');
    },
    variants: {
      naive: (p, ctx) => runConv2d(gpu, p, ctx, naivePlan(p.k)),
      coalesced: (p, ctx) => runConv2d(gpu, p, ctx, coalescedPlan(p.k)),
      tiled: (p, ctx) => runConv2d(gpu, p, ctx, namedTiledPlan(gpu, p.k, TILED_CONFIG)),
      coarsened: (p, ctx) => runConv2d(gpu, p, ctx, namedTiledPlan(gpu, p.k, COARSENED_CONFIG)),
      auto: (p, ctx) => runAuto(gpu, tuning, p, ctx),
    },
  };
}
