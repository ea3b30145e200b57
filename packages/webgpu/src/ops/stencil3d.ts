import { LimitExceededError, UnsupportedError } from '@kernelkit/core';
import type { OpContext, OpImplementation, OpOutput, Stencil3dProblem } from '@kernelkit/ops';
import type { GpuDevice } from '../runtime/device.js';
import { packParams } from '../runtime/params.js';
import type { Program } from '../runtime/program.js';
import { grid1d } from '../runtime/usage.js';
import { STREAMED, stencilNaive, stencilStreamed, stencilTiled, TILED } from './stencil3d.wgsl.js';

type Workgroups = (p: Stencil3dProblem) => [number, number, number];

async function runStencil(gpu: GpuDevice, p: Stencil3dProblem, ctx: OpContext<Float32Array | Float64Array>, program: Program, wg: Workgroups): Promise<OpOutput<Float32Array>> {
  const input = p.input as Float32Array;
  const n = input.length;
  const out = (ctx.out as Float32Array | undefined) ?? new Float32Array(n);
  if (p.steps === 0) {
    out.set(input);
    return { data: out };
  }
  if (n * 4 > gpu.limits.storageBinding) throw new LimitExceededError('input', `a ${p.nx}×${p.ny}×${p.nz} grid (${n * 4} bytes) is larger than one storage binding (${gpu.limits.storageBinding} bytes)`);
  return gpu.exclusive(async () => {
    const pipeline = gpu.pipeline(program);
    const a = gpu.upload(input);
    const b = gpu.storage(n * 4);
    const params = gpu.uniform(packParams([['u32', p.nx], ['u32', p.ny], ['u32', p.nz], ['u32', p.boundary === 'copy' ? 1 : 0], ['f32', p.c0], ['f32', p.c1]]));
    const ab = gpu.bind(pipeline, [{ buffer: a, size: n * 4 }, { buffer: b, size: n * 4 }, params]);
    const ba = gpu.bind(pipeline, [{ buffer: b, size: n * 4 }, { buffer: a, size: n * 4 }, params]);
    // All steps ping-pong on the GPU inside one pass; only the final grid is read back.
    const workgroups = wg(p);
    const dispatches = Array.from({ length: p.steps }, (_, s) => ({ pipeline, bindGroup: s % 2 === 0 ? ab : ba, workgroups }));
    const last = p.steps % 2 === 1 ? b : a;
    const r = await gpu.execute(dispatches, [{ buffer: last, offset: 0, size: n * 4 }], ctx.timing);
    out.set(new Float32Array(r.data[0]!));
    gpu.release(a, b, params);
    return { data: out, kernelMs: r.kernelMs };
  });
}

export function stencil3dOp(gpu: GpuDevice): OpImplementation<'stencil3d'> {
  const naive = stencilNaive();
  const tiled = stencilTiled();
  const streamed = stencilStreamed();
  return {
    defaultVariant: 'streamed',
    check(p) {
      if (p.input instanceof Float64Array) throw new UnsupportedError('WebGPU has no f64; pass a Float32Array', 'input');
    },
    variants: {
      naive: (p, ctx) => runStencil(gpu, p, ctx, naive, (q) => grid1d(Math.ceil((q.nx * q.ny * q.nz) / 256))),
      tiled: (p, ctx) => runStencil(gpu, p, ctx, tiled, (q) => [Math.ceil(q.nx / TILED.tx), Math.ceil(q.ny / TILED.ty), Math.ceil(q.nz / TILED.tz)]),
      streamed: (p, ctx) => runStencil(gpu, p, ctx, streamed, (q) => [Math.ceil(q.nx / STREAMED.tx), Math.ceil(q.ny / STREAMED.ty), Math.ceil(q.nz / STREAMED.zb)]),
    },
  } as OpImplementation<'stencil3d'>;
}
