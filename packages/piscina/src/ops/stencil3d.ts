import { stencilBuffers, stencilStep } from '@kernelkit/cpu';
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
  readonly result: Grid;
  readonly out: SharedOutput<Grid>;
  readonly slabs: Array<[number, number]>;
  readonly common: { nx: number; ny: number; nz: number; c0: number; c1: number; boundary: Stencil3dProblem['boundary'] };
}

/**
 * Ping-pong buffers in shared memory, arranged so the last step lands in the caller's `out` when
 * that is shared (no copy), and so our own copy of the input is reused as the second buffer (it
 * is last read in step 0 and first written in step 1, after the step barrier).
 */
function plan(env: Env, p: Stencil3dProblem, ctx: OpContext<Grid>): Plan {
  const call = newCall(env, 'stencil3d', ctx.signal);
  const ctor = p.input.constructor as Ctor;
  const len = p.input.length;
  const input = call.input<Grid>(p.input);
  const lastIsA = (p.steps - 1) % 2 === 0;
  const outShared = ctx.out !== undefined && ctx.out.buffer instanceof SharedArrayBuffer;
  const fresh = (): Grid => new ctor(call.acquire(len * p.input.BYTES_PER_ELEMENT), 0, len);
  let a: Grid;
  let b: Grid;
  if (outShared && !lastIsA) {
    b = ctx.out!;
    a = fresh();
  } else {
    a = outShared ? ctx.out! : fresh();
    b = p.steps < 2 ? a : input.owned ? input.view : fresh();
  }
  const result = lastIsA ? a : b;
  const out = call.output<Grid>(ctor, len, ctx.out, result) as Plan['out'];
  const common = { nx: p.nx, ny: p.ny, nz: p.nz, c0: p.c0, c1: p.c1, boundary: p.boundary };
  return { call, input: input.ref, staging: input, a, b, result, out, slabs: split(p.nz, slabCount(env, p)), common };
}

/**
 * Plane indices in the order the participants reach them: round robin over the slabs, each from
 * its first plane. `halo`: include the plane on either side of each slab (what step 0 reads).
 */
function planeOrder(slabs: Array<[number, number]>, nz: number, halo: boolean): number[] {
  const seen = new Uint8Array(nz);
  const order: number[] = [];
  const h = halo ? 1 : 0;
  const longest = Math.max(...slabs.map(([z0, z1]) => z1 - z0));
  for (let j = -h; j < longest + h; j++) {
    for (const [z0, z1] of slabs) {
      const z = z0 + j;
      if (z >= Math.max(0, z0 - h) && z < Math.min(nz, z1 + h) && seen[z] === 0) {
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

type WaitAsync = (a: Int32Array, i: number, v: number, t: number) => { async: boolean; value: Promise<string> | string };

/** Copies each plane out as the last step finishes it (the workers set `done[z]`), in the order they get there. */
async function followOutput(pl: Plan, done: Int32Array, order: readonly number[], plane: number): Promise<void> {
  const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;
  // A pending waitAsync does not keep Node's event loop alive on its own.
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    for (const z of order) {
      while (Atomics.load(done, z) === 0) {
        if (pl.call.failed) return;
        const w = waitAsync(done, z, 0, 50);
        if (w.async) await w.value;
      }
      pl.out.copyOut(z * plane, (z + 1) * plane, pl.result);
    }
  } finally {
    clearInterval(keepAlive);
  }
}

const ref = (g: Grid): Ref => ({ buf: g.buffer as SharedArrayBuffer, off: g.byteOffset, len: g.length, dtype: g instanceof Float64Array ? 'f64' : 'f32' });

async function finish(pl: Plan, ctx: OpContext<Grid>, copied = false): Promise<OpOutput<Grid>> {
  await pl.call.finish(() => {
    if (!copied) pl.out.copyOut(0, pl.result.length, pl.result);
    pl.out.complete(pl.result);
  });
  return { data: pl.out.result(), ...copyTimes(pl.call, ctx.timing) };
}

function runInline(p: Stencil3dProblem, ctx: OpContext<Grid>): OpOutput<Grid> {
  const out = ctx.out ?? new (p.input.constructor as Ctor)(p.input.length);
  const buffers = stencilBuffers(p, out);
  for (let t = 0; t < p.steps; t++) {
    const { src, dst } = buffers(t);
    stencilStep(src, dst, p.nx, p.ny, p.nz, p.c0, p.c1, p.boundary, 0, p.nz);
  }
  return { data: out, notes: [INLINE_NOTE] };
}

function trivial(env: Env, p: Stencil3dProblem, ctx: OpContext<Grid>): OpOutput<Grid> | undefined {
  if (p.steps === 0) {
    const out = ctx.out ?? new (p.input.constructor as Ctor)(p.input.length);
    out.set(p.input);
    return { data: out };
  }
  if (inline(env, 'stencil3d', p.input.length * p.steps)) return runInline(p, ctx);
  return undefined;
}

/**
 * Two strategies, both z-slabs of contiguous planes (a slab streams through memory in order, and
 * neighbouring slabs share only their boundary planes):
 *
 * - `slabs` (default): one task per slab for the whole run; the workers step together,
 *   synchronising with an Atomics barrier on a shared generation counter (spin briefly, then
 *   `Atomics.wait`). A step costs one barrier (microseconds) instead of a round of task messages.
 *   Barrier calls hold every participant's thread, so they are serialised per backend, and an
 *   abort or a failing participant raises a shared stop flag that releases the others.
 * - `slabs-per-step`: one task per slab per step, the main thread awaiting each step's tasks.
 *   Simpler and preemptible, but a step costs a round trip through the main thread.
 *
 * The barrier wins where steps are short (many steps on a small grid: a step costs microseconds
 * instead of a round of messages) and ties on big grids, so it is the default; the scaling study
 * measures both (benchmarks/results/piscina-scaling-h100host-2026-11-22.md).
 *
 * With the barrier strategy the copies overlap the work too: the main thread copies the input
 * plane by plane (each slab's planes in the order its participant needs them) and step 0 computes
 * each plane once its neighbours have arrived; the last step flags each finished plane and the
 * main thread copies it out meanwhile (Atomics.waitAsync, so the event loop stays free).
 */
export function stencil3dOp(env: Env): OpImplementation<'stencil3d'> {
  return {
    defaultVariant: 'slabs',
    variants: {
      slabs(p, ctx) {
        const quick = trivial(env, p, ctx);
        if (quick !== undefined) return quick;
        return env.pool.exclusive(async () => {
          const pl = plan(env, p, ctx);
          const ctrl = new SharedArrayBuffer(CTRL_WORDS * 4);
          const words = new Int32Array(ctrl);
          const plane = p.nx * p.ny;
          // The input copy overlaps step 0 when we make it; the output copy overlaps the last step.
          const inReady = pl.staging.owned ? new SharedArrayBuffer(p.nz * 4) : undefined;
          // (Not for a caller's ordinary `out`, which is written only once the call has succeeded.)
          const outDone = pl.out.direct || pl.out.deferred ? undefined : new SharedArrayBuffer(p.nz * 4);
          pl.call.whenStopped(() => {
            Atomics.store(words, CTRL_STOP, 1);
            Atomics.notify(words, CTRL_GENERATION);
          });
          for (const [z0, z1] of pl.slabs) {
            pl.call.submit(
              { kind: 'stencilSlab', ...pl.common, input: pl.input, a: ref(pl.a), b: ref(pl.b), steps: p.steps, zStart: z0, zEnd: z1, ctrl, participants: pl.slabs.length, inReady, outDone },
              undefined,
              // Never let Piscina kill a participant: the others would wait for it forever.
              { abortable: false },
            );
          }
          if (inReady !== undefined) {
            const flags = new Int32Array(inReady);
            for (const z of planeOrder(pl.slabs, p.nz, true)) {
              if (pl.call.failed) break;
              pl.staging.copyRange(z * plane, (z + 1) * plane);
              setFlag(flags, z);
            }
          }
          if (outDone === undefined) return finish(pl, ctx);
          pl.out.prefault();
          await followOutput(pl, new Int32Array(outDone), planeOrder(pl.slabs, p.nz, false), plane);
          return finish(pl, ctx, true);
        });
      },
      async 'slabs-per-step'(p, ctx) {
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
          if (t === 0) pl.out.prefault();
          if (!(await pl.call.drain())) break;
        }
        return finish(pl, ctx);
      },
    },
  };
}
