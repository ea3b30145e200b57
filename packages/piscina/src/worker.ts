/**
 * The pool's worker: one function, dispatching on `task.kind` to the CPU backend's range
 * kernels (the math exists once, in @kernelkit/cpu). Built to dist/worker.js and loaded from
 * there by the pool, also when the tests import the TypeScript sources.
 */
import { move } from 'piscina';
import {
  conv2dRows,
  conv2dRowsSimd,
  convLayerPlanes,
  convLayerPlanesSimd,
  gridNaiveRange,
  gridPrunedRange,
  scanRange,
  stencilStep,
  sumRange,
  WasmKernels,
  wasmSupport,
} from '@kernelkit/cpu';
import { PointSink, type GridSearchProblem } from '@kernelkit/ops';
import {
  CTRL_ARRIVED,
  CTRL_GENERATION,
  CTRL_STOP,
  STOPPED_MESSAGE,
  type Dtype,
  type GridTask,
  type SharedGridProblem,
  type Ref,
  type StencilSlabTask,
  type Task,
} from './protocol.js';

type View = Float32Array | Float64Array | Uint32Array | Int32Array;
const CTORS: Record<Dtype, new (buf: SharedArrayBuffer, off: number, len: number) => View> = {
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
// them; its memory grows to the largest band seen and is reused by every later task.
let simdKernels: WasmKernels | undefined;
function kernels(): WasmKernels {
  if (simdKernels !== undefined) return simdKernels;
  const s = wasmSupport();
  if (!('module' in s)) throw new Error(`kernelkit: wasm-simd task on a worker without it (${s.unavailable})`);
  return (simdKernels = new WasmKernels(s.module));
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

/** Waits until flag `i` is set (by the main thread), or throws when the call is stopped. */
function waitFlag(flags: Int32Array, i: number, ctrl: Int32Array): void {
  while (Atomics.load(flags, i) === 0) {
    if (Atomics.load(ctrl, CTRL_STOP) !== 0) throw new Error(STOPPED);
    Atomics.wait(flags, i, 0, 50);
  }
}

/**
 * All steps of one slab. `beforeStep` is for the testing worker (src/testing-worker.ts), which
 * fails a participant mid-run through it.
 */
export function stencilSlab(t: StencilSlabTask, beforeStep?: (step: number) => void): void {
  const ctrl = new Int32Array(t.ctrl);
  try {
    const input = view<Float32Array>(t.input);
    const a = view<Float32Array>(t.a);
    const b = view<Float32Array>(t.b);
    const inReady = t.inReady && new Int32Array(t.inReady);
    const outDone = t.outDone && new Int32Array(t.outDone);
    const last = t.steps - 1;
    for (let s = 0; s < t.steps; s++) {
      beforeStep?.(s);
      if (Atomics.load(ctrl, CTRL_STOP) !== 0) throw new Error(STOPPED);
      const src = s === 0 ? input : s % 2 === 1 ? a : b;
      const dst = s % 2 === 0 ? a : b;
      const waitIn = s === 0 ? inReady : undefined;
      const markOut = s === last ? outDone : undefined;
      if (waitIn === undefined && markOut === undefined) {
        stencilStep(src, dst, t.nx, t.ny, t.nz, t.c0, t.c1, t.boundary, t.zStart, t.zEnd);
      } else {
        // Plane by plane, overlapping the main thread's copy in (step 0) or out (last step).
        for (let z = t.zStart; z < t.zEnd; z++) {
          if (waitIn !== undefined) for (let q = Math.max(0, z - 1); q <= Math.min(t.nz - 1, z + 1); q++) waitFlag(waitIn, q, ctrl);
          stencilStep(src, dst, t.nx, t.ny, t.nz, t.c0, t.c1, t.boundary, z, z + 1);
          if (markOut !== undefined) {
            Atomics.store(markOut, z, 1);
            Atomics.notify(markOut, z);
          }
        }
      }
      if (s < last) barrier(ctrl, t.participants);
    }
  } catch (err) {
    // Release the other participants before failing, or they would wait forever.
    Atomics.store(ctrl, CTRL_STOP, 1);
    Atomics.notify(ctrl, CTRL_GENERATION);
    throw err;
  }
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

function grid(t: GridTask): ReturnType<typeof move> | { exceeded: true } {
  const p = gridProblem(t.problem);
  const sink = new PointSink(p.d, p.maxPoints, 256);
  const kernel = t.pruned ? gridPrunedRange : gridNaiveRange;
  if (!kernel(p, t.outer, t.start, t.end, (x) => sink.push(x))) return { exceeded: true };
  return move(sink.finish().points);
}

export default function run(task: Task): unknown {
  switch (task.kind) {
    case 'conv2d':
      if (task.simd) conv2dRowsSimd(kernels(), view(task.input), view(task.filter), view(task.out), task.height, task.width, task.k, task.rowStart, task.rowEnd);
      else conv2dRows(view(task.input), view(task.filter), view(task.out), task.height, task.width, task.k, task.rowStart, task.rowEnd, scratch(task.width));
      return undefined;
    case 'convLayer': {
      const d = task.dims;
      if (task.simd) convLayerPlanesSimd(kernels(), view(task.input), view(task.weights), task.bias && view(task.bias), task.relu, view(task.out), d, task.planeStart, task.planeEnd);
      else convLayerPlanes(view(task.input), view(task.weights), task.bias && view(task.bias), task.relu, view(task.out), d, task.planeStart, task.planeEnd, scratch(d.outHeight * d.outWidth));
      return undefined;
    }
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
    case 'grid':
      return grid(task);
    case 'ping':
      return 'pong';
  }
  throw new TypeError(`unknown task kind ${JSON.stringify((task as { kind?: unknown }).kind)}`);
}
