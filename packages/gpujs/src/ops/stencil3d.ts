import { Pacer, UnsupportedError } from '@kernelkit/core';
import type { OpImplementation, Stencil3dProblem } from '@kernelkit/ops';
import { gpujs, type GpuInstance, type PipelineRun } from '../gpujs.js';
import { KERNEL_DEFAULTS, type Runtime } from '../runtime.js';
import { assertCallFits, callWork, copyResult, kernelFn, type KernelThis } from './kernel-util.js';

/**
 * One Jacobi step for a z-slab of the grid; `u` is 3-D ([w][y][x]) and holds the slab plus its
 * halo planes, and output plane `thread.z` is plane `thread.z + off` of `u`. 3-D indexing (not
 * flat) because inside a pipeline a step reads the previous step's 3-D output handle directly.
 * Sizes, coefficients and the boundary policy are constants. Boundary cells write 0 (`ZERO` = 1)
 * or keep their value; `first`/`last` are the planes of `u` that are the grid's first and last
 * planes, or -1 when the slab does not hold them.
 * Plane numbers are slab-relative because gpu.js does this arithmetic in f32 (outside cpu
 * mode): absolute z past 2^24 rounds and reads the wrong plane.
 */
const stepKernel = kernelFn(function (this: KernelThis, u: number[][][], off: number, first: number, last: number) {
  const x = this.thread.x;
  const y = this.thread.y;
  const w = this.thread.z + off;
  if (x === 0 || y === 0 || w === first || x === this.constants.NX! - 1 || y === this.constants.NY! - 1 || w === last) {
    if (this.constants.ZERO === 1) return 0;
    return u[w]![y]![x]!;
  }
  return (
    this.constants.C0! * u[w]![y]![x]! +
    this.constants.C1! * (u[w]![y]![x - 1]! + u[w]![y]![x + 1]! + u[w]![y - 1]![x]! + u[w]![y + 1]![x]! + u[w - 1]![y]![x]! + u[w + 1]![y]![x]!)
  );
});

function constants(p: Stencil3dProblem): Record<string, number> {
  return { NX: p.nx, NY: p.ny, NZ: p.nz, C0: Math.fround(p.c0), C1: Math.fround(p.c1), ZERO: p.boundary === 'zero' ? 1 : 0 };
}

const keyOf = (p: Stencil3dProblem, zs: number) => `stencil:${p.nx}:${p.ny}:${p.nz}:${zs}:${p.c0}:${p.c1}:${p.boundary}`;

/**
 * Steps per pipeline. gpu.js traces the pipeline's step loop into a plan with one entry per step
 * (in webasm, one compiled wasm function each), so a pipeline of all the steps grows with the
 * step count until wasm code space runs out; longer runs repeat one pipeline of this many steps.
 */
export const STEPS_PER_PIPELINE = 128;

/**
 * Whole grid fits one call: up to STEPS_PER_PIPELINE steps run as one gpu.js pipeline
 * (`createPipeline`), so the intermediate grids stay in device memory (webgpu: one command
 * encoder; webasm: one fused wasm plan; GL: textures) and only each pipeline's last step is read
 * back. At most two pipelines per grid (the full one and the remainder), whatever the step count.
 */
async function pipelined(rt: Runtime, p: Stencil3dProblem, out: Float32Array, notes: Set<string>, signal: AbortSignal | undefined): Promise<void> {
  let src = p.input as Float32Array;
  const pacer = new Pacer(signal);
  const perPipeline = Math.max(1, Math.min(STEPS_PER_PIPELINE, Math.floor(callWork(rt, signal) / (p.nx * p.ny * p.nz))));
  for (let done = 0; done < p.steps; ) {
    const steps = Math.min(perPipeline, p.steps - done);
    const run = rt.pipeline(`${keyOf(p, p.nz)}:steps=${steps}`, (gpu: GpuInstance): PipelineRun => {
      // The pipeline owns its kernel, so evicting kernels from the cache cannot break it.
      const step = gpu.createKernel(stepKernel, { ...KERNEL_DEFAULTS, output: [p.nx, p.ny, p.nz], constants: constants(p) });
      return gpu.createPipeline(
        function (this: KernelThis, u: unknown) {
          let v = u;
          for (let s = 0; s < this.constants.steps!; s++) v = step(v, 0, 0, this.constants.last!);
          return v;
        } as never,
        { constants: { steps, last: p.nz - 1 } },
      );
    });
    // The first step reads the flat input as 3-D; later steps read the previous 3-D output.
    const res = await run(gpujs.input(src, [p.nx, p.ny, p.nz]));
    if (run.backend !== undefined && run.backend !== rt.mode && !(rt.mode === 'headlessgl' && run.backend === 'gpu')) {
      notes.add(`gpu.js ran the stencil pipeline on '${run.backend}' instead of '${rt.mode}'${run.fallbackReason ? `: ${run.fallbackReason}` : ''}`);
    }
    copyResult(res, out, 0);
    src = out;
    done += steps;
    if (done < p.steps) await pacer.tick();
  }
}

/**
 * Grids larger than one call: z-slabs per step with host ping-pong (one readback per step),
 * because a step needs the whole previous grid and gpu.js cannot bind part of a buffer.
 */
async function slabbed(rt: Runtime, p: Stencil3dProblem, out: Float32Array, notes: Set<string>, signal: AbortSignal | undefined, callCells: number): Promise<void> {
  const plane = p.nx * p.ny;
  const zs = Math.max(1, Math.floor(callCells / plane) - 2);
  const pacer = new Pacer(signal);
  let src: Float32Array = p.input as Float32Array;
  const scratch = p.steps > 1 ? new Float32Array(out.length) : out;
  for (let t = 0; t < p.steps; t++) {
    const dst = (p.steps - 1 - t) % 2 === 0 ? out : scratch;
    for (let z0 = 0; z0 < p.nz; z0 += zs) {
      const n = Math.min(zs, p.nz - z0);
      const a = Math.max(0, z0 - 1);
      const b = Math.min(p.nz, z0 + n + 1);
      const k = rt.kernel(keyOf(p, n), stepKernel, { output: [p.nx, p.ny, n], constants: constants(p) });
      const slab = gpujs.input(src.subarray(a * plane, b * plane), [p.nx, p.ny, b - a]);
      const args = [slab, z0 - a, a === 0 ? 0 : -1, b === p.nz ? b - 1 - a : -1];
      copyResult(await rt.call(k, args, notes), dst, z0 * plane);
      await pacer.tick();
    }
    src = dst;
  }
  notes.add(`grid of ${p.nx * p.ny * p.nz} cells exceeds one ${rt.mode} call (${callCells}); stepped in z-slabs with a readback per step`);
}

export function stencil3d(rt: Runtime): OpImplementation<'stencil3d'> {
  return {
    defaultVariant: 'kernel',
    check(p) {
      if (p.input instanceof Float64Array) throw new UnsupportedError('gpu.js computes in f32; pass a Float32Array', 'input');
      // No kernel runs for 0 steps (a copy), so nothing to refuse. Otherwise the smallest call
      // is one output plane with its two halo planes, clipped to the grid (the whole grid, in
      // one pipeline, when it fits: then it has at most as many cells).
      const planesIn = Math.min(p.nz, 3);
      if (p.steps > 0) assertCallFits(rt, 'input', p.nx * p.ny * planesIn, `one z-plane and its halo (${planesIn} input plane${planesIn === 1 ? '' : 's'} of ${p.nx}×${p.ny})`);
    },
    variants: {
      async kernel(p, ctx) {
        const out = (ctx.out as Float32Array | undefined) ?? new Float32Array(p.nx * p.ny * p.nz);
        const notes = new Set<string>();
        // With a signal, a call's cells are also bounded by work (see callWork).
        const callCells = Math.min(rt.maxCells, callWork(rt, ctx.signal));
        if (p.steps === 0) out.set(p.input);
        else if (p.nx * p.ny * p.nz <= callCells) await pipelined(rt, p, out, notes, ctx.signal);
        else await slabbed(rt, p, out, notes, ctx.signal, callCells);
        return { data: out, notes: [...notes] };
      },
    },
  };
}
