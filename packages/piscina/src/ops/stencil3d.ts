import { stencilBuffers, stencilStep, stencilStepSimd, wasmSupport, withKernels } from '@kernelkit/cpu';
import type { OpContext, OpImplementation, OpOutput, Stencil3dProblem } from '@kernelkit/ops';
import { split, type Call, type SharedInput, type SharedOutput } from '../call.js';
import { CTRL_GENERATION, CTRL_STOP, CTRL_WORDS, type Ref } from '../protocol.js';
import { copyTimes, INLINE_NOTE, inline, newCall, type Env } from './context.js';

type Grid = Float32Array | Float64Array;
type Ctor = new (buffer: SharedArrayBuffer | number, byteOffset?: number, length?: number) => Grid;

/** Fewest cells a slab should hold: below this a step is shorter than the synchronisation. */
const MIN_SLAB_CELLS = 2 ** 14;

/** Participants (= slabs): one per thread, fewer for small grids, never more than z-planes. */
function slabCount(env: Env, p: Stencil3dProblem): number {
  return Math.max(1, Math.min(env.pool.threads, p.nz, Math.floor((p.nx * p.ny * p.nz) / MIN_SLAB_CELLS)));
}

interface Plan {
  readonly call: Call;
  readonly input: Ref;
  /** Copies the input in (all at once, or plane by plane behind `inReady` flags). */
  readonly staging: SharedInput<Grid>;
  /** Step t reads `t === 0 ? input : (t odd ? a : b)` and writes `t even ? a : b`. */
  readonly a: Grid;
  readonly b: Grid;
  readonly out: SharedOutput<Grid>;
  readonly slabs: Array<[number, number]>;
  readonly common: { nx: number; ny: number; nz: number; c0: number; c1: number; boundary: Stencil3dProblem['boundary'] };
}

/**
 * Ping-pong buffers in shared memory, arranged so the last step lands in the result (fresh, or
 * the caller's shared `out`: no copy), and so our own copy of the input is reused as the second
 * buffer when the last step writes `a` (the copy is last read in step 0 and first written in
 * step 1, after the step barrier).
 */
function plan(env: Env, p: Stencil3dProblem, ctx: OpContext<Grid>): Plan {
  const call = newCall(env, 'stencil3d', ctx.signal);
  const ctor = p.input.constructor as Ctor;
  const len = p.input.length;
  const input = call.input<Grid>(p.input);
  const out = call.output<Grid>(ctor, len, ctx.out);
  const fresh = (): Grid => new ctor(call.acquire(len * p.input.BYTES_PER_ELEMENT), 0, len);
  const lastIsA = (p.steps - 1) % 2 === 0;
  let a: Grid;
  let b: Grid;
  if (lastIsA) {
    a = out.view;
    b = p.steps < 2 ? a : input.owned ? input.view : fresh();
  } else {
    a = fresh();
    b = out.view;
  }
  const common = { nx: p.nx, ny: p.ny, nz: p.nz, c0: p.c0, c1: p.c1, boundary: p.boundary };
  return { call, input: input.ref, staging: input, a, b, out, slabs: split(p.nz, slabCount(env, p)), common };
}

/**
 * Plane indices in the order the participants reach them: round robin over the slabs, each from
 * its first plane, with the plane on either side of each slab (what step 0 reads).
 */
function planeOrder(slabs: Array<[number, number]>, nz: number): number[] {
  const seen = new Uint8Array(nz);
  const order: number[] = [];
  const longest = Math.max(...slabs.map(([z0, z1]) => z1 - z0));
  for (let j = -1; j < longest + 1; j++) {
    for (const [z0, z1] of slabs) {
      const z = z0 + j;
      if (z >= Math.max(0, z0 - 1) && z < Math.min(nz, z1 + 1) && seen[z] === 0) {
        seen[z] = 1;
        order.push(z);
      }
    }
  }
  return order;
}

const setFlag = (flags: Int32Array, i: number): void => {
  Atomics.store(flags, i, 1);
  Atomics.notify(flags, i);
};

const ref = (g: Grid): Ref => ({ buf: g.buffer as SharedArrayBuffer, off: g.byteOffset, len: g.length, dtype: g instanceof Float64Array ? 'f64' : 'f32' });

async function finish(pl: Plan, ctx: OpContext<Grid>): Promise<OpOutput<Grid>> {
  await pl.call.finish(() => pl.out.complete());
  return { data: pl.out.result(), ...copyTimes(pl.call, ctx.timing) };
}

/** Most module memory one wasm participant may take for its slab (two copies, plus halo planes). */
const MAX_SIMD_SLAB_BYTES = 2 ** 30;

const TOO_BIG_NOTE = 'a slab would need more than 1 GiB of WebAssembly memory per thread: ran the JavaScript kernel';

/** The barrier strategy ('slabs' and 'wasm-simd'): one task per slab for all steps. */
function slabs(env: Env, p: Stencil3dProblem, ctx: OpContext<Grid>, simd: boolean): Promise<OpOutput<Grid>> {
  return env.pool.exclusive(async () => {
    const pl = plan(env, p, ctx);
    const plane = p.nx * p.ny;
    const useSimd = simd && pl.slabs.every(([z0, z1]) => 2 * (z1 - z0 + 2) * plane * p.input.BYTES_PER_ELEMENT <= MAX_SIMD_SLAB_BYTES);
    const ctrl = new SharedArrayBuffer(CTRL_WORDS * 4);
    const words = new Int32Array(ctrl);
    // The input copy overlaps step 0 when we make it.
    const inReady = pl.staging.owned ? new SharedArrayBuffer(p.nz * 4) : undefined;
    pl.call.whenStopped(() => {
      Atomics.store(words, CTRL_STOP, 1);
      Atomics.notify(words, CTRL_GENERATION);
    });
    for (const [z0, z1] of pl.slabs) {
      pl.call.submit(
        { kind: 'stencilSlab', ...pl.common, input: pl.input, a: ref(pl.a), b: ref(pl.b), steps: p.steps, zStart: z0, zEnd: z1, ctrl, participants: pl.slabs.length, inReady, simd: useSimd },
        undefined,
        // Never let Piscina kill a participant: the others would wait for it forever.
        { abortable: false },
      );
    }
    if (inReady !== undefined) {
      const flags = new Int32Array(inReady);
      for (const z of planeOrder(pl.slabs, p.nz)) {
        if (pl.call.failed) break;
        pl.staging.copyRange(z * plane, (z + 1) * plane);
        setFlag(flags, z);
      }
    }
    const res = await finish(pl, ctx);
    return simd && !useSimd ? { ...res, notes: [TOO_BIG_NOTE] } : res;
  });
}

function runInline(p: Stencil3dProblem, ctx: OpContext<Grid>, simd: boolean): OpOutput<Grid> {
  const out = ctx.out ?? new (p.input.constructor as Ctor)(p.input.length);
  const buffers = stencilBuffers(p, out);
  const support = wasmSupport();
  if (simd && 'module' in support) {
    withKernels(support, (w) => {
      for (let t = 0; t < p.steps; t++) {
        const { src, dst } = buffers(t);
        stencilStepSimd(w, src, dst, p.nx, p.ny, p.nz, p.c0, p.c1, p.boundary, 0, p.nz);
      }
    });
  } else {
    for (let t = 0; t < p.steps; t++) {
      const { src, dst } = buffers(t);
      stencilStep(src, dst, p.nx, p.ny, p.nz, p.c0, p.c1, p.boundary, 0, p.nz);
    }
  }
  return { data: out, notes: [INLINE_NOTE] };
}

function trivial(env: Env, p: Stencil3dProblem, ctx: OpContext<Grid>, simd = false): OpOutput<Grid> | undefined {
  if (p.steps === 0) {
    const out = ctx.out ?? new (p.input.constructor as Ctor)(p.input.length);
    out.set(p.input);
    return { data: out };
  }
  if (inline(env, 'stencil3d', p.input.length * p.steps)) return runInline(p, ctx, simd);
  return undefined;
}

/**
 * Z-slabs of contiguous planes (a slab streams through memory in order, and neighbouring slabs
 * share only their boundary planes), three ways:
 *
 * - `wasm-simd` (default where the runtime has WebAssembly SIMD): one task per slab for the
 *   whole run, on the WebAssembly kernel. Each participant keeps its slab in its module's memory
 *   for every step and exchanges only its two boundary planes per step through shared memory.
 * - `slabs`: the same with the JavaScript kernel, reading and writing the shared grids directly.
 * - `slabs-per-step`: one task per slab per step, the main thread awaiting each step's tasks.
 *   Simpler and preemptible, but a step costs a round trip through the main thread.
 *
 * In the first two the workers step together, synchronising with an Atomics barrier on a shared
 * generation counter (spin briefly, then `Atomics.wait`): a step costs microseconds instead of a
 * round of task messages. Barrier calls hold every participant's thread, so they are serialised
 * per backend, and an abort or a failing participant raises a shared stop flag that releases the
 * others. The main thread copies the input plane by plane (in the order the participants need
 * the planes) while step 0 starts; the last step writes the result itself.
 */
export function stencil3dOp(env: Env): OpImplementation<'stencil3d'> {
  const slabsVariant: OpImplementation<'stencil3d'>['variants'][string] = (p, ctx) => trivial(env, p, ctx) ?? slabs(env, p, ctx, false);
  const perStep: OpImplementation<'stencil3d'>['variants'][string] = async (p, ctx) => {
    const quick = trivial(env, p, ctx);
    if (quick !== undefined) return quick;
    const pl = plan(env, p, ctx);
    pl.staging.all();
    const a = ref(pl.a);
    const b = ref(pl.b);
    for (let t = 0; t < p.steps; t++) {
      const src = t === 0 ? pl.input : t % 2 === 1 ? a : b;
      const dst = t % 2 === 0 ? a : b;
      for (const [z0, z1] of pl.slabs) pl.call.submit({ kind: 'stencilStep', ...pl.common, src, dst, zStart: z0, zEnd: z1 });
      if (!(await pl.call.drain())) break;
    }
    return finish(pl, ctx);
  };
  if (!('module' in wasmSupport())) return { defaultVariant: 'slabs', variants: { slabs: slabsVariant, 'slabs-per-step': perStep } };
  return {
    defaultVariant: 'wasm-simd',
    variants: {
      'wasm-simd': (p, ctx) => trivial(env, p, ctx, true) ?? slabs(env, p, ctx, true),
      slabs: slabsVariant,
      'slabs-per-step': perStep,
    },
  };
}
