import { Pacer } from '@kernelkit/core';
import type { OpContext, OpImplementation, OpOutput, Stencil3dProblem } from '@kernelkit/ops';
import { stencilRunSimd, stencilStep, stencilStepSimd } from '../kernels/stencil3d.js';
import { forSlices } from '../wasm/pace.js';
import { withKernels, type WasmSupport } from '../wasm/runtime.js';
import type { NewOutput } from '../outputs.js';

type Grid = Float32Array | Float64Array;

/**
 * Ping-pong between the output and one scratch grid, arranged so the last step lands in the
 * output (no final copy) and the caller's input is only ever read.
 */
export function stencilBuffers(p: Stencil3dProblem, out: Grid): (step: number) => { src: Grid; dst: Grid } {
  const scratch = p.steps > 1 ? new (p.input.constructor as Float32ArrayConstructor)(out.length) : out;
  const bufs = [out, scratch] as const;
  return (t) => ({ src: t === 0 ? p.input : bufs[(p.steps - t) % 2]!, dst: bufs[(p.steps - 1 - t) % 2]! });
}

const newGrid = (p: Stencil3dProblem, newOutput: NewOutput): Promise<Grid> => newOutput(p.input.constructor as Float32ArrayConstructor, p.nx * p.ny * p.nz);

/** Cell updates per slice between abort checks (a few ms): bands of z-planes, or many steps of a small grid. */
const SLICE_CELLS_JS = 2 ** 20;
const SLICE_CELLS_SIMD = 2 ** 22;

/**
 * Steps through `steps` × bands of z-planes in order, each band's work done by `band(t, z0, z1)`,
 * pacing every slice of about `sliceCells` cell updates. Step t+1 starts after every band of step t.
 */
async function pacedSteps(p: Stencil3dProblem, signal: AbortSignal | undefined, sliceCells: number, band: (t: number, z0: number, z1: number) => void): Promise<void> {
  const plane = p.nx * p.ny;
  const bandPlanes = Math.max(1, Math.min(p.nz, Math.floor(sliceCells / plane)));
  const bands = Math.ceil(p.nz / bandPlanes);
  const unitsPerSlice = Math.max(1, Math.floor(sliceCells / (bandPlanes * plane)));
  await forSlices(signal, p.steps * bands, unitsPerSlice, (u0, u1) => {
    for (let u = u0; u < u1; u++) {
      const t = Math.floor(u / bands);
      const z0 = (u - t * bands) * bandPlanes;
      band(t, z0, Math.min(p.nz, z0 + bandPlanes));
    }
  });
}

async function direct(p: Stencil3dProblem, ctx: OpContext<Grid>, newOutput: NewOutput): Promise<OpOutput<Grid>> {
  const out = ctx.out ?? (await newGrid(p, newOutput));
  if (p.steps === 0) {
    out.set(p.input);
    return { data: out };
  }
  const buffers = stencilBuffers(p, out);
  await pacedSteps(p, ctx.signal, SLICE_CELLS_JS, (t, z0, z1) => {
    const { src, dst } = buffers(t);
    stencilStep(src, dst, p.nx, p.ny, p.nz, p.c0, p.c1, p.boundary, z0, z1);
  });
  return { data: out };
}

/** `simd`: the runtime's WebAssembly SIMD support; without it only the JavaScript kernel is offered. `newOutput`: result arrays. */
export function stencil3dOp(simd: WasmSupport | undefined, newOutput: NewOutput): OpImplementation<'stencil3d'> {
  const js = (p: Stencil3dProblem, ctx: OpContext<Grid>): Promise<OpOutput<Grid>> => direct(p, ctx, newOutput);
  if (simd === undefined) return { defaultVariant: 'direct', variants: { direct: js } };
  return {
    defaultVariant: 'wasm-simd',
    variants: {
      async 'wasm-simd'(p, ctx) {
        const out = ctx.out ?? (await newGrid(p, newOutput));
        if (p.steps === 0) {
          out.set(p.input);
          return { data: out };
        }
        return withKernels(simd, async (w) => {
          const pacer = new Pacer(ctx.signal);
          if (await stencilRunSimd(w, p.input, out, p, () => pacer.tick())) return { data: out };
          // Too big to hold both grids in linear memory: step through JavaScript buffers in bands.
          const buffers = stencilBuffers(p, out);
          await pacedSteps(p, ctx.signal, SLICE_CELLS_SIMD, (t, z0, z1) => {
            const { src, dst } = buffers(t);
            stencilStepSimd(w, src, dst, p.nx, p.ny, p.nz, p.c0, p.c1, p.boundary, z0, z1);
          });
          return { data: out, notes: ['the grid is too large to keep in WebAssembly memory: each step was copied in and out in bands'] };
        });
      },
      direct: js,
    },
  };
}
