/**
 * The pool's worker: one function, dispatching on `task.kind` to the CPU backend's range
 * kernels (the math exists once, in @kernelkit/cpu). Built to dist/worker.js and loaded from
 * there by the pool, also when the tests import the TypeScript sources. It imports the packages'
 * narrow entries (range kernels, grid shape), not their main ones, so a worker starts sooner.
 */
import { move, workerData } from 'piscina';
import { copyInto, promptCollection } from '@kernelkit/core';
import {
  conv2dRows,
  conv2dRowsSimd,
  convLayerPlanes,
  convLayerPlanesSimd,
  gridNaiveRange,
  gridPrunedRange,
  gridPrunedRangesSimd,
  addCarry,
  scanInMemory,
  scanRange,
  stencilStep,
  sumInMemory,
  sumRange,
  BAND_BYTES,
  sharedKernels,
  WasmKernels,
  wasmSupport,
  type KernelExports,
} from '@kernelkit/cpu/range-kernels';
import type { GridSearchProblem } from '@kernelkit/ops';
import { PointSink } from '@kernelkit/ops/grid-shape';
import {
  CTRL_ARRIVED,
  CTRL_GENERATION,
  CTRL_STOP,
  GRID_DONE,
  GRID_FOUND,
  STOPPED_MESSAGE,
  UNIT_NEXT,
  UNIT_STOP,
  type Conv2dTask,
  type ConvLayerTask,
  type ModuleMemory,
  type Dtype,
  type ScanChainTask,
  type GridTask,
  type PoolWorkerData,
  type SharedGridProblem,
  type Ref,
  type StencilSlabTask,
  type Task,
  type TaskTimes,
} from './protocol.js';
import { conv2dModuleUnits, convLayerModuleUnits, eachClaimedUnit, timedCopy } from './claimed-units.js';
import { SharedSeen } from './shared-seen.js';

type View = Float32Array | Float64Array | Uint32Array | Int32Array;
const CTORS: Record<Dtype, { new (buf: SharedArrayBuffer, off: number, len: number): View; readonly BYTES_PER_ELEMENT: number }> = {
  f32: Float32Array,
  f64: Float64Array,
  u32: Uint32Array,
  i32: Int32Array,
};

function view<T extends View = Float32Array>(r: Ref): T {
  return new CTORS[r.dtype](r.buf, r.off, r.len) as T;
}

// Scratch accumulators, reused across tasks (each worker runs one task at a time).
let acc = new Float64Array(1024);
function scratch(n: number): Float64Array {
  if (acc.length < n) acc = new Float64Array(Math.max(n, acc.length * 2));
  return acc;
}

// This worker's instance of the WebAssembly SIMD kernels, made on the first task that asks for
// them from the main thread's compiled module (so no worker compiles it again, and code the
// engine has optimised is shared); its memory grows to the largest band seen and is reused.
let simdKernels: WasmKernels | undefined;
function kernels(): WasmKernels {
  if (simdKernels !== undefined) return simdKernels;
  let module = (workerData as PoolWorkerData | undefined)?.wasmModule;
  if (module === undefined) {
    const s = wasmSupport();
    if (!('module' in s)) throw new Error(`kernelkit: wasm-simd task on a worker without it (${s.unavailable})`);
    module = s.module;
  }
  return (simdKernels = new WasmKernels(module));
}

/**
 * Instances of the shared-memory kernels, one per memory id, the most recent few kept: a call's
 * memory usually comes back from the pool's cache for the next call of its size. An instance
 * holds its memory alive, so one over `KEPT_MODULE_BYTES` is made per task and not kept (the
 * pool's cache may have let that memory go).
 */
const KEPT_MODULE_INSTANCES = 4;
const KEPT_MODULE_BYTES = 2 * BAND_BYTES;
const moduleInstances = new Map<number, KernelExports>();
function moduleKernels(m: ModuleMemory): KernelExports {
  let k = moduleInstances.get(m.id);
  if (k !== undefined) {
    moduleInstances.delete(m.id);
  } else {
    const module = (workerData as PoolWorkerData | undefined)?.wasmModule;
    if (module === undefined) throw new Error('kernelkit: shared-memory task on a worker without the shared-memory kernels');
    k = sharedKernels(module, m.memory);
    if (m.memory.buffer.byteLength > KEPT_MODULE_BYTES) return k;
    if (moduleInstances.size >= KEPT_MODULE_INSTANCES) moduleInstances.delete(moduleInstances.keys().next().value!);
  }
  moduleInstances.set(m.id, k);
  return k;
}

/** A stencil slab can grow the memory far past a conv band: such an instance is not kept. */
function dropIfLarge(): void {
  if (simdKernels !== undefined && simdKernels.bytes > 2 * BAND_BYTES) simdKernels = undefined;
}

const STOPPED = STOPPED_MESSAGE;

/**
 * Loads of the generation word before sleeping, adapted per worker: doubled when the others
 * arrived while spinning, halved when it had to sleep anyway. With a core per participant the
 * others usually arrive within microseconds and a futex wake-up per step would cost a real share
 * of a short step, so it grows; on an oversubscribed machine spinning takes the core the others
 * need (a fixed spin made small multi-step grids much slower on the 2-core dev machine under
 * load), so it shrinks.
 */
const SPIN_MIN = 1_000;
const SPIN_MAX = 50_000;
let spinBudget = 4_000;

/** Spins briefly (the next step is usually microseconds away), then sleeps on the generation word. */
function barrier(ctrl: Int32Array, participants: number): void {
  const gen = Atomics.load(ctrl, CTRL_GENERATION);
  if (Atomics.add(ctrl, CTRL_ARRIVED, 1) === participants - 1) {
    Atomics.store(ctrl, CTRL_ARRIVED, 0);
    Atomics.add(ctrl, CTRL_GENERATION, 1);
    Atomics.notify(ctrl, CTRL_GENERATION);
    return;
  }
  for (let spin = 0; spin < spinBudget; spin++) {
    if (Atomics.load(ctrl, CTRL_GENERATION) !== gen) {
      spinBudget = Math.min(SPIN_MAX, spinBudget * 2);
      return;
    }
  }
  spinBudget = Math.max(SPIN_MIN, spinBudget >> 1);
  while (Atomics.load(ctrl, CTRL_GENERATION) === gen) {
    if (Atomics.load(ctrl, CTRL_STOP) !== 0) throw new Error(STOPPED);
    // The timeout only bounds how late a stop is noticed; a notify wakes us at once.
    Atomics.wait(ctrl, CTRL_GENERATION, gen, 50);
  }
}

/** Waits until flag `i` is set (by another thread), or throws once `ctrl[stopAt]` says the call is stopped. */
function waitFlag(flags: Int32Array, i: number, ctrl: Int32Array, stopAt = CTRL_STOP): void {
  while (Atomics.load(flags, i) === 0) {
    if (Atomics.load(ctrl, stopAt) !== 0) throw new Error(STOPPED);
    Atomics.wait(flags, i, 0, 50);
  }
}

function conv2d(t: Conv2dTask): TaskTimes {
  const input = view(t.input);
  const filter = view(t.filter);
  const out = view(t.out);
  if (t.simd) {
    const w = kernels();
    return eachClaimedUnit(t, (r0, r1) => conv2dRowsSimd(w, input, filter, out, t.height, t.width, t.k, r0, r1));
  }
  const acc = scratch(t.width);
  return eachClaimedUnit(t, (r0, r1) => conv2dRows(input, filter, out, t.height, t.width, t.k, r0, r1, acc));
}

function convLayer(t: ConvLayerTask): TaskTimes {
  const input = view(t.input);
  const weights = view(t.weights);
  const bias = t.bias && view(t.bias);
  const out = view(t.out);
  const d = t.dims;
  if (t.simd) {
    const w = kernels();
    return eachClaimedUnit(t, (q0, q1) => convLayerPlanesSimd(w, input, weights, bias, t.relu, out, d, q0, q1));
  }
  const acc = scratch(d.outHeight * d.outWidth);
  return eachClaimedUnit(t, (q0, q1) => convLayerPlanes(input, weights, bias, t.relu, out, d, q0, q1, acc));
}

/** Where a chained scan's units are scanned: `memory` holds the unit at byte `address(start)` once `place` has run. */
interface ScanPlace {
  readonly k: KernelExports;
  readonly memory: () => SharedArrayBuffer;
  /** Makes unit [start, end) readable by `k`; returns its byte address and the ms spent copying it there. */
  readonly place: (start: number, end: number) => [address: number, copyMs: number];
}

function scanPlace(t: ScanChainTask): ScanPlace {
  const size = CTORS[t.dtype].BYTES_PER_ELEMENT;
  const src = t.source;
  if ('memory' in src) {
    const buffer = src.memory.memory.buffer;
    return { k: moduleKernels(src.memory), memory: () => buffer, place: (start) => [src.at + start * size, 0] };
  }
  const input = view<View>(src.input);
  const own = kernels();
  // Lined up with the input mod 16 bytes, like the cpu backend's copies (see scanRangeSimd).
  const at = input.byteOffset % 16;
  return {
    k: own.k,
    memory: () => own.buffer,
    place: (start, end) => {
      own.reserve(at + (end - start) * size);
      return [at, timedCopy(() => copyInto(new CTORS[t.dtype](own.buffer, at, end - start), input.subarray(start, end)))];
    },
  };
}

/**
 * The chained scan's units (see `ScanChainTask`): sum, take the carry of the unit before (waiting
 * for it if need be: it is published right after that unit's sum, before its scan), publish this
 * unit's, scan in place, copy out. The last unit's total is never needed.
 */
function scanChain(t: ScanChainTask): TaskTimes {
  const ctrl = new Int32Array(t.ctrl);
  const carries = new Float64Array(t.carries);
  const published = new Int32Array(t.published);
  const last = t.bounds.length - 2;
  const out = t.out && view<View>(t.out);
  const { k, memory, place } = scanPlace(t);
  const carryBefore = (u: number): number => {
    if (u === 0) return t.initial;
    waitFlag(published, u - 1, ctrl, UNIT_STOP);
    return carries[u - 1]!;
  };
  return eachClaimedUnit(t, (start, end, u) => {
    const n = end - start;
    const [address, copyInMs] = place(start, end);
    const total = u === last ? 0 : sumInMemory(k, address, n, t.dtype);
    const carry = carryBefore(u);
    if (u < last) {
      carries[u] = addCarry(carry, total, t.dtype);
      Atomics.store(published, u, 1);
      Atomics.notify(published, u);
    }
    scanInMemory(k, address, n, carry, t.exclusive, t.dtype);
    if (out === undefined) return copyInMs;
    return copyInMs + timedCopy(() => copyInto(out, new CTORS[t.dtype](memory(), address, n), start));
  });
}

type Grid = Float32Array | Float64Array;

/**
 * All steps of one slab. `beforeStep` is for the testing worker (src/testing-worker.ts), which
 * fails a participant mid-run through it.
 */
export function stencilSlab(t: StencilSlabTask, beforeStep?: (step: number) => void): void {
  const ctrl = new Int32Array(t.ctrl);
  try {
    if (t.simd) stencilSlabSimd(t, ctrl, beforeStep);
    else stencilSlabJs(t, ctrl, beforeStep);
  } catch (err) {
    // Release the other participants before failing, or they would wait forever.
    Atomics.store(ctrl, CTRL_STOP, 1);
    Atomics.notify(ctrl, CTRL_GENERATION);
    throw err;
  }
}

function stencilSlabJs(t: StencilSlabTask, ctrl: Int32Array, beforeStep: ((step: number) => void) | undefined): void {
  const input = view<Grid>(t.input);
  const a = view<Grid>(t.a);
  const b = view<Grid>(t.b);
  const inReady = t.inReady && new Int32Array(t.inReady);
  const last = t.steps - 1;
  for (let s = 0; s < t.steps; s++) {
    beforeStep?.(s);
    if (Atomics.load(ctrl, CTRL_STOP) !== 0) throw new Error(STOPPED);
    const src = s === 0 ? input : s % 2 === 1 ? a : b;
    const dst = s % 2 === 0 ? a : b;
    if (s === 0 && inReady !== undefined) {
      // Plane by plane, overlapping the main thread's copy of the input.
      for (let z = t.zStart; z < t.zEnd; z++) {
        for (let q = Math.max(0, z - 1); q <= Math.min(t.nz - 1, z + 1); q++) waitFlag(inReady, q, ctrl);
        stencilStep(src, dst, t.nx, t.ny, t.nz, t.c0, t.c1, t.boundary, z, z + 1);
      }
    } else {
      stencilStep(src, dst, t.nx, t.ny, t.nz, t.c0, t.c1, t.boundary, t.zStart, t.zEnd);
    }
    if (s < last) barrier(ctrl, t.participants);
  }
}

/**
 * The slab on the WebAssembly kernel. Planes [zStart − 1, zEnd + 1) are copied into module
 * memory once, twice over (ping and pong), and stay there for every step. After a step the slab's
 * first and last planes go out to the step's shared grid (`a` or `b`), and after the barrier the
 * neighbours' planes next to the slab come back in as the halo of the next step; the last step
 * writes the whole slab to its shared grid. A step's shared grid is written again two steps
 * later, after the next barrier, so a neighbour has read it by then.
 */
function stencilSlabSimd(t: StencilSlabTask, ctrl: Int32Array, beforeStep: ((step: number) => void) | undefined): void {
  const w = kernels();
  const { nx, ny, nz, zStart: z0, zEnd: z1 } = t;
  const plane = nx * ny;
  const input = view<Grid>(t.input);
  const a = view<Grid>(t.a);
  const b = view<Grid>(t.b);
  const f64 = input instanceof Float64Array;
  const bytes = input.BYTES_PER_ELEMENT;
  const lo = Math.max(0, z0 - 1);
  const hi = Math.min(nz, z1 + 1);
  const cells = (hi - lo) * plane;
  w.reserve(2 * cells * bytes);
  const m: Grid = f64 ? w.f64 : w.f32;
  const inReady = t.inReady && new Int32Array(t.inReady);
  for (let z = lo; z < hi; z++) {
    if (inReady !== undefined) waitFlag(inReady, z, ctrl);
    copyInto(m, input.subarray(z * plane, (z + 1) * plane), (z - lo) * plane);
  }
  const kernel = f64 ? w.k.stencilF64 : w.k.stencilF32;
  const copy = t.boundary === 'copy' ? 1 : 0;
  // Element index of plane z in copy `buffer` (0 or 1). The kernel gets the address of plane 0,
  // as if memory held the whole grid, so its z is the grid's z (and it knows the boundary
  // planes); that address may lie below 0, and wasm address arithmetic wraps mod 2^32.
  const local = (buffer: number, z: number): number => buffer * cells + (z - lo) * plane;
  for (let s = 0; s < t.steps; s++) {
    beforeStep?.(s);
    if (Atomics.load(ctrl, CTRL_STOP) !== 0) throw new Error(STOPPED);
    const to = (s + 1) % 2;
    kernel(local(s % 2, 0) * bytes, local(to, 0) * bytes, nx, ny, nz, t.c0, t.c1, copy, z0, z1);
    const shared = s % 2 === 0 ? a : b;
    if (s === t.steps - 1) {
      copyInto(shared, m.subarray(local(to, z0), local(to, z1)), z0 * plane);
      break;
    }
    if (z0 > 0) copyInto(shared, m.subarray(local(to, z0), local(to, z0 + 1)), z0 * plane);
    if (z1 < nz) copyInto(shared, m.subarray(local(to, z1 - 1), local(to, z1)), (z1 - 1) * plane);
    barrier(ctrl, t.participants);
    if (z0 > 0) copyInto(m, shared.subarray((z0 - 1) * plane, z0 * plane), local(to, z0 - 1));
    if (z1 < nz) copyInto(m, shared.subarray(z1 * plane, (z1 + 1) * plane), local(to, z1));
  }
  dropIfLarge();
}

/**
 * Rebuilds the problem as views over the shared arrays, once per call: a fresh problem object
 * for every task makes V8 deoptimise the kernels into much slower code (seen on the brute force,
 * whose later passes slowed down without this cache).
 */
let lastGrid: { id: number; p: GridSearchProblem } | undefined;
function gridProblem(s: SharedGridProblem): GridSearchProblem {
  if (lastGrid?.id === s.id) return lastGrid.p;
  const all = view<Float64Array>(s.data);
  const { d, m, counts } = s.meta;
  let o = 0;
  const take = (n: number): Float64Array => all.subarray(o, (o += n));
  const axes = counts.map((c) => take(c));
  const p: GridSearchProblem = { ...s.meta, axes, coefficients: take(m * d), targets: take(m), tolerances: take(m) };
  lastGrid = { id: s.id, p };
  return p;
}

/** `v + n` in a shared word, held at `cap`: the word never wraps however many tasks add to it. */
function addSaturating(words: Int32Array, i: number, n: number, cap: number): number {
  for (;;) {
    const was = Atomics.load(words, i);
    const next = Math.min(cap, was + n);
    if (Atomics.compareExchange(words, i, was, next) === was) return next;
  }
}

/**
 * Claims ranges of prefixes until none is left (pruning makes their work very uneven, so the
 * threads that draw light ones simply take more) and returns their points (see `GridTaskResult`).
 * Every task stops once the tasks together have found more than maxPoints.
 */
function grid(t: GridTask): ReturnType<typeof move> | { exceeded: true } {
  const p = gridProblem(t.problem);
  const ctrl = new Int32Array(t.ctrl);
  const tally = new Int32Array(t.tally);
  const cap = Math.min(p.maxPoints + 1, 2 ** 31 - 1);
  const sink = new PointSink(p.d, p.maxPoints, 256);
  const emit = (x: Float64Array): boolean => sink.push(x);
  const search =
    t.kernel === 'wasm-simd'
      ? gridPrunedRangesSimd(kernels(), p, t.outer)
      : (start: number, end: number, emit: (x: Float64Array) => boolean) => (t.kernel === 'pruned' ? gridPrunedRange : gridNaiveRange)(p, t.outer, start, end, emit);
  const ran: number[] = [];
  const b = t.bounds;
  for (let u = Atomics.add(ctrl, UNIT_NEXT, 1); u < b.length - 1; u = Atomics.add(ctrl, UNIT_NEXT, 1)) {
    if (Atomics.load(ctrl, UNIT_STOP) !== 0) throw new Error(STOPPED);
    if (Atomics.load(tally, GRID_FOUND) > p.maxPoints) return { exceeded: true };
    const before = sink.count;
    if (!search(b[u]!, b[u + 1]!, emit)) return { exceeded: true };
    const found = sink.count - before;
    ran.push(u, found);
    if (addSaturating(tally, GRID_FOUND, found, cap) > p.maxPoints) return { exceeded: true };
    Atomics.add(tally, GRID_DONE, 1);
  }
  const header = 1 + ran.length;
  const res = new Float64Array(header + sink.count * p.d);
  res[0] = ran.length / 2;
  res.set(ran, 1);
  res.set(sink.finish().points, header);
  return move(res);
}

/** Shared memory seen since this worker's last collection (see shared-seen.ts). */
const sharedSeen = new SharedSeen(256 * 2 ** 20);
function noteShared(task: Task): void {
  if (sharedSeen.note(task)) promptCollection(sharedSeen.promptBytes);
}

export default function run(task: Task): unknown {
  noteShared(task);
  switch (task.kind) {
    case 'conv2d':
      return conv2d(task);
    case 'convLayer':
      return convLayer(task);
    case 'conv2dModule':
      return conv2dModuleUnits(task, moduleKernels(task.memory));
    case 'convLayerModule':
      return convLayerModuleUnits(task, moduleKernels(task.memory));
    case 'stencilStep':
      stencilStep(view(task.src), view(task.dst), task.nx, task.ny, task.nz, task.c0, task.c1, task.boundary, task.zStart, task.zEnd);
      return undefined;
    case 'stencilSlab':
      stencilSlab(task);
      return undefined;
    case 'scanSum':
      return sumRange(view(task.input), task.start, task.end, task.dtype);
    case 'scanLocal':
      scanRange(view(task.input), view(task.out), task.start, task.end, task.carry, task.exclusive, task.dtype);
      return undefined;
    case 'scanChain':
      return scanChain(task);
    case 'grid':
      return grid(task);
    case 'ping':
      return 'pong';
  }
  throw new TypeError(`unknown task kind ${JSON.stringify((task as { kind?: unknown }).kind)}`);
}
