import {
  AbortError,
  assertAbortSignal,
  assertBoolean,
  assertFiniteNumber,
  assertInteger,
  assertObject,
  describeValue,
  DisposedError,
  InvalidArgumentError,
  raceAbort,
  throwIfAborted,
  UnsupportedError,
} from '@kernelkit/core';
import type { Backend, ScanArray } from '@kernelkit/ops';
import type { GpuDevice } from '../runtime/device.js';
import { deviceOf } from '../runtime/registry.js';
import { ChunkPipeline } from '../runtime/pipeline.js';
import { BUF, grid1d } from '../runtime/usage.js';
import { type DecoupledConfig, decoupledConfig, decoupledParams, decoupledVecScan, paddedBytes, stateBytes, tileElements, tilesFor } from './scan-decoupled.js';
import type { WgslScalar } from './scan.wgsl.js';

export interface WebGpuScanStreamOptions {
  /** Exclusive scan (each chunk's first output is the running carry); default false. */
  readonly exclusive?: boolean;
  /** Carry into the first chunk; default 0. Checked against the chunks' dtype like `initial` of scan. */
  readonly initial?: number;
  /** `'decoupled'` (default) or `'decoupled-subgroups'`: the kernels that keep the carry on the GPU. */
  readonly variant?: string;
  /** Aborting rejects the pending `next()` with AbortError and releases the stream's GPU buffers. */
  readonly signal?: AbortSignal;
}

/** Knobs of the device-level stream, for tests and the scan-stream study (apps/studies). */
export interface ScanStreamTuning {
  /**
   * Buffer sets in flight, 1–4; default 2. With 1 each piece is uploaded, scanned and read back
   * before the next is uploaded (sequential); with 2 the upload of piece n+1 and the readback of
   * piece n−1 overlap the scan of piece n.
   */
  readonly sets?: number;
  /** Longest piece one dispatch scans (longer chunks are split); default min(2^24, one storage binding). */
  readonly maxPieceElements?: number;
}

const STREAM_VARIANTS = ['decoupled', 'decoupled-subgroups'] as const;
const HOST_CARRY_VARIANTS = ['blelloch', 'reduce-then-scan'];
const DEFAULT_MAX_PIECE = 1 << 24;

type Ctor = Uint32ArrayConstructor | Int32ArrayConstructor | Float32ArrayConstructor;
const DTYPES: ReadonlyArray<readonly [Ctor, WgslScalar]> = [
  [Uint32Array, 'u32'],
  [Int32Array, 'i32'],
  [Float32Array, 'f32'],
];

function chunkDtype(chunk: unknown, index: number): { ctor: Ctor; t: WgslScalar } {
  for (const [ctor, t] of DTYPES) if (chunk instanceof ctor) return { ctor, t };
  if (chunk instanceof Float64Array) throw new UnsupportedError('WebGPU has no f64; stream Float32Array, Int32Array or Uint32Array chunks', `chunks[${index}]`);
  throw new InvalidArgumentError(`chunks[${index}]`, `expected a Uint32Array, Int32Array or Float32Array, got ${describeValue(chunk)}`);
}

function initialBits(t: WgslScalar, initial: number): number {
  if (t === 'u32') assertInteger(initial, 'options.initial', 0, 2 ** 32 - 1);
  else if (t === 'i32') assertInteger(initial, 'options.initial', -(2 ** 31), 2 ** 31 - 1);
  if (t === 'f32') return new Uint32Array(new Float32Array([initial]).buffer)[0]!;
  return initial >>> 0;
}

function streamVariant(variant: unknown, subgroups: boolean): 'wg' | 'subgroups' {
  if (variant === undefined || variant === 'decoupled') return 'wg';
  if (variant === 'decoupled-subgroups') {
    // No Result notes here to say it fell back (as backend.scan does): refuse instead.
    if (!subgroups) throw new UnsupportedError("decoupled-subgroups needs the adapter feature 'subgroups', which this adapter lacks; use decoupled", 'options.variant');
    return 'subgroups';
  }
  if (typeof variant === 'string' && HOST_CARRY_VARIANTS.includes(variant)) {
    throw new UnsupportedError(`the streaming scan keeps its carry on the GPU, which only ${STREAM_VARIANTS.join(' and ')} do; scanStream from @kernelkit/ops streams with any variant`, 'options.variant');
  }
  throw new InvalidArgumentError('options.variant', `unknown variant ${describeValue(variant)} for the streaming scan; expected ${STREAM_VARIANTS.join(' or ')}`);
}


/** One set of buffers: a piece is uploaded into `src` and scanned into `dst`, which is read back through the device's staging ring. */
interface BufferSet {
  capacity: number;
  src: GPUBuffer;
  dst: GPUBuffer;
  state: GPUBuffer;
  params: GPUBuffer;
  bindGroup: GPUBindGroup;
}

/** A chunk whose output is being assembled; yielded once `left` pieces reach 0. */
interface PendingChunk {
  readonly out: ScanArray;
  left: number;
}

interface Piece {
  readonly chunk: PendingChunk;
  /** The piece's readback into the chunk's output (runtime/pipeline.ts); already has a rejection handler. */
  readonly read: Promise<void>;
}

/**
 * The GPU side of one stream: pipeline, carry slots, and its pieces on the runtime's chunk
 * pipeline (runtime/pipeline.ts), whose buffer sets are the stream's own (destroyed by `release`,
 * so an ended stream leaves nothing in the pool).
 */
class StreamGpu {
  private readonly owned: GPUBuffer[] = [];
  private pipeline: GPUComputePipeline | undefined;
  private carry: GPUBuffer | undefined;
  private chunks: ChunkPipeline<BufferSet> | undefined;
  /** Elements of the piece being pushed: what its buffer set must hold. */
  private wanted = 0;
  /** Pieces submitted so far: piece i reads carry slot i % 2 and writes slot (i + 1) % 2. */
  private pieces = 0;

  constructor(
    private readonly gpu: GpuDevice,
    private readonly cfg: DecoupledConfig,
    private readonly inclusive: boolean,
    private readonly maxPiece: number,
    private readonly sets: number,
  ) {}

  /** Builds the pipeline for the stream's dtype and writes the initial carry into slot 0. */
  start(t: WgslScalar, initBits: number): Promise<void> {
    return this.gpu.exclusive(async () => {
      this.pipeline = this.gpu.pipeline(decoupledVecScan(t, this.cfg));
      this.carry = this.create(16, BUF.STORAGE | BUF.COPY_DST);
      this.gpu.device.queue.writeBuffer(this.carry, 0, new Uint32Array([initBits, 0, 0, 0]));
      this.chunks = new ChunkPipeline<BufferSet>(this.gpu, { sets: this.sets, fit: (old) => this.fit(old), release: (s) => this.destroySet(s) }, { timing: false, signal: undefined });
    });
  }

  private create(size: number, usage: number): GPUBuffer {
    const b = this.gpu.device.createBuffer({ size, usage });
    this.owned.push(b);
    return b;
  }

  private destroySet(s: BufferSet): void {
    for (const b of [s.src, s.dst, s.state, s.params]) {
      b.destroy();
      const i = this.owned.indexOf(b);
      if (i >= 0) this.owned.splice(i, 1);
    }
  }

  /** The slot's set when it holds the piece being pushed, else a new one grown to hold it. */
  private fit(old: BufferSet | undefined): BufferSet {
    const length = this.wanted;
    if (old !== undefined && old.capacity >= length) return old;
    if (old !== undefined) this.destroySet(old);
    // Powers of two (in tiles) so that uneven chunk sizes do not reallocate every time.
    const tile = tileElements(this.cfg);
    const capacity = Math.max(length, Math.min(this.maxPiece, tile * 2 ** Math.ceil(Math.log2(Math.ceil(length / tile)))));
    const src = this.create(paddedBytes(capacity), BUF.STORAGE | BUF.COPY_DST);
    const dst = this.create(paddedBytes(capacity), BUF.STORAGE | BUF.COPY_SRC);
    const state = this.create(stateBytes(tilesFor(capacity, this.cfg)), BUF.STORAGE | BUF.COPY_DST);
    const params = this.create(32, BUF.UNIFORM | BUF.COPY_DST);
    const bindGroup = this.gpu.bind(this.pipeline!, [src, dst, params, state, this.carry!]);
    return { capacity, src, dst, state, params, bindGroup };
  }

  /**
   * One piece on the chunk pipeline: staged into its set, clear-state → scan, then read into the
   * chunk's output. The carry never leaves the GPU: the scan reads the previous piece's slot.
   * The readback outlives this exclusive section, so the device's close waits for it.
   */
  submit(data: ScanArray, chunk: PendingChunk, offset: number): Promise<Piece> {
    return this.gpu.exclusive(async () => {
      const gpu = this.gpu;
      const n = data.length;
      const slot = this.pieces % 2;
      const tiles = tilesFor(n, this.cfg);
      const out = chunk.out;
      this.wanted = n;
      const { complete: read } = await this.chunks!.push({
        upload: async (set) => {
          await gpu.write(set.src, 0, data);
          gpu.device.queue.writeBuffer(set.params, 0, decoupledParams(n, this.cfg, slot, 1 - slot, this.inclusive));
        },
        encodeBefore: (enc, set) => enc.clearBuffer(set.state, 0, stateBytes(tiles)),
        work: (set) => ({ pipeline: this.pipeline!, submits: [[{ offset: [0, 0, 0], workgroups: grid1d(tiles, gpu.limits.workgroupsPerDimension) }]], bind: () => set.bindGroup }),
        reads: (set) => [{ buffer: set.dst, offset: 0, size: n * 4, into: new Uint8Array(out.buffer, out.byteOffset + offset * 4, n * 4) }],
      });
      this.pieces++;
      gpu.outlives(read);
      return { chunk, read };
    });
  }

  /** Waits for a piece's readback into its chunk's output. */
  async complete(piece: Piece, signal: AbortSignal | undefined): Promise<void> {
    await raceAbort(piece.read, signal);
    piece.chunk.left--;
  }

  /** Lets the pieces in flight settle, then destroys every buffer the stream made. */
  async release(): Promise<void> {
    await this.chunks?.close();
    for (const b of this.owned.splice(0)) b.destroy();
  }
}

type SourceIterator<T> = AsyncIterator<T> | Iterator<T>;

function iteratorOf<T>(source: AsyncIterable<T> | Iterable<T>): SourceIterator<T> {
  if (source !== null && typeof source === 'object') {
    const s = source as Partial<AsyncIterable<T> & Iterable<T>>;
    const asyncIt = s[Symbol.asyncIterator];
    if (typeof asyncIt === 'function') return asyncIt.call(source);
    const syncIt = s[Symbol.iterator];
    if (typeof syncIt === 'function') return syncIt.call(source);
  }
  throw new InvalidArgumentError('source', `expected an iterable or async iterable of typed arrays, got ${describeValue(source)}`);
}

/**
 * Scans a sequence of chunks as one long array on `gpu`, with the semantics of `scanStream`
 * (@kernelkit/ops): each output chunk is the scan of its input chunk with the running carry
 * added; all chunks share the first one's element type; an empty chunk yields an empty array.
 * Unlike it, the carry stays on the GPU (the last element of piece n is the offset of piece n+1,
 * see scan-decoupled.wgsl.ts) and `tuning.sets` buffer sets are in flight, so uploading the next
 * piece and reading back the previous one overlap the current scan.
 */
export async function* scanStreamOnDevice<T extends ScanArray>(
  gpu: GpuDevice,
  source: AsyncIterable<T> | Iterable<T>,
  options: WebGpuScanStreamOptions = {},
  tuning: ScanStreamTuning = {},
  beforeGpuWork: () => void = () => {},
): AsyncGenerator<T, void, undefined> {
  assertObject(options, 'options');
  const exclusive = options.exclusive ?? false;
  assertBoolean(exclusive, 'options.exclusive');
  const initial = options.initial ?? 0;
  assertFiniteNumber(initial, 'options.initial');
  const given = options.signal;
  if (given !== undefined) assertAbortSignal(given, 'options.signal');
  // Checked above; named again so the nested generators below see the narrowed type.
  const signal: AbortSignal | undefined = given;
  const form = streamVariant(options.variant, gpu.subgroups);
  assertObject(tuning, 'tuning');
  const sets = tuning.sets ?? 2;
  assertInteger(sets, 'tuning.sets', 1, 4);
  const bindingMax = Math.floor(Math.min(gpu.limits.storageBinding, gpu.limits.bufferSize) / 16) * 4;
  const maxPiece = tuning.maxPieceElements ?? Math.min(DEFAULT_MAX_PIECE, bindingMax);
  assertInteger(maxPiece, 'tuning.maxPieceElements', 1, bindingMax);
  const it = iteratorOf(source);
  throwIfAborted(signal);

  const cfg = decoupledConfig(gpu, form);
  const stream = new StreamGpu(gpu, cfg, !exclusive, maxPiece, sets);
  const pending: PendingChunk[] = [];
  const inflight: Piece[] = [];
  let dtype: { ctor: Ctor; t: WgslScalar } | undefined;
  let sourceDone = false;
  let sourceFailed = false;
  let nextPending = false;
  let failed = false;
  // The chunks whose pieces were all submitted, once their readbacks land: what a stream still
  // yields when its backend is disposed (those pieces are in flight; dispose waits for them).
  async function* drain(): AsyncGenerator<T, void, undefined> {
    while (inflight.length > 0) {
      await stream.complete(inflight.shift()!, signal);
      while (pending[0]?.left === 0) yield pending.shift()!.out as T;
    }
  }
  // Before any new GPU work: a disposed backend yields what is in flight, then DisposedError.
  async function* guard(): AsyncGenerator<T, void, undefined> {
    try {
      beforeGpuWork();
    } catch (e) {
      yield* drain();
      throw e;
    }
  }
  try {
    for (let index = 0; ; index++) {
      yield* guard();
      let step: IteratorResult<T>;
      try {
        nextPending = true;
        const next = Promise.resolve(it.next());
        next.catch(() => {});
        step = await raceAbort(next.finally(() => (nextPending = false)), signal);
      } catch (e) {
        if (!(e instanceof AbortError)) sourceFailed = true;
        throw e;
      }
      if (step.done === true) {
        sourceDone = true;
        break;
      }
      const chunk = step.value;
      const dt = chunkDtype(chunk, index);
      if (dtype === undefined) {
        dtype = dt;
        const bits = initialBits(dt.t, initial);
        yield* guard();
        await stream.start(dt.t, bits);
      } else if (dt.t !== dtype.t) {
        throw new InvalidArgumentError(`chunks[${index}]`, `expected a ${dtype.t} chunk like the first one, got ${dt.t}`);
      }
      const pc: PendingChunk = { out: new dt.ctor(chunk.length), left: Math.ceil(chunk.length / maxPiece) };
      pending.push(pc);
      for (let s = 0; s < chunk.length; s += maxPiece) {
        throwIfAborted(signal);
        yield* guard();
        inflight.push(await stream.submit(chunk.subarray(s, Math.min(chunk.length, s + maxPiece)), pc, s));
        // Keep at most `sets` pieces in flight: finishing the oldest frees the set the next piece takes.
        while (inflight.length >= sets) {
          await stream.complete(inflight.shift()!, signal);
          while (pending[0]?.left === 0) yield pending.shift()!.out as T;
        }
      }
      while (pending[0]?.left === 0) yield pending.shift()!.out as T;
    }
    yield* drain();
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    await stream.release();
    // Like for await: an early exit (break, abort, an error here) returns the source; a source that threw is not returned.
    if (!sourceDone && !sourceFailed && typeof it.return === 'function') {
      // A return queued behind a next() that never settles would never settle either: do not wait for it.
      const ret = Promise.resolve().then(() => it.return!());
      if (nextPending || failed) ret.catch(() => {});
      else await ret;
    }
  }
}

/**
 * The GPU streaming scan of a backend made by `createWebGpuBackend`: `scanStreamOnDevice` on
 * its device, two buffer sets in flight. Errors arrive through iteration, like `scanStream`'s.
 * The backend's dispose rule holds for it: dispose waits for the pieces in flight, the stream
 * still yields the chunks they complete, and then rejects with DisposedError instead of
 * starting new GPU work.
 */
export function webgpuScanStream<T extends ScanArray>(
  backend: Backend,
  source: AsyncIterable<T> | Iterable<T>,
  options: WebGpuScanStreamOptions = {},
): AsyncGenerator<T, void, undefined> {
  // eslint-disable-next-line require-yield -- a generator that only throws: the error arrives through iteration
  async function* refuse(e: Error): AsyncGenerator<T, void, undefined> {
    throw e;
  }
  const guard = (): void => {
    if (backend.disposed) throw new DisposedError(backend.name);
  };
  let gpu: GpuDevice;
  try {
    gpu = deviceOf(backend);
    guard();
  } catch (e) {
    return refuse(e as Error);
  }
  return scanStreamOnDevice(gpu, source, options, {}, guard);
}
