import type { OpImplementation, Stencil3dProblem } from '@kernelkit/ops';
import { stencilStep } from '../kernels/stencil3d.js';

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

export const stencil3d: OpImplementation<'stencil3d'> = {
  defaultVariant: 'direct',
  variants: {
    direct(p, ctx) {
      const out = ctx.out ?? new (p.input.constructor as Float32ArrayConstructor)(p.nx * p.ny * p.nz);
      if (p.steps === 0) {
        out.set(p.input);
        return { data: out };
      }
      const buffers = stencilBuffers(p, out);
      for (let t = 0; t < p.steps; t++) {
        const { src, dst } = buffers(t);
        stencilStep(src, dst, p.nx, p.ny, p.nz, p.c0, p.c1, p.boundary, 0, p.nz);
      }
      return { data: out };
    },
  },
};
