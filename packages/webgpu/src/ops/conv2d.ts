import type { Conv2dProblem, OpContext, OpImplementation, OpOutput } from '@kernelkit/ops';
import type { GpuDevice } from '../runtime/device.js';
import { packParams, vec4Array } from '../runtime/params.js';
import type { Program } from '../runtime/program.js';
import { addMs, itemsPerChunk } from './common.js';
import { conv2dCoalesced, conv2dNaive, conv2dTileBytes, conv2dTiled } from './conv2d.wgsl.js';

type Plan = { program: Program; uniformFilter: boolean; workgroups: (p: Conv2dProblem, images: number) => [number, number, number]; note?: string };

const naivePlan = (k: number): Plan => ({ program: conv2dNaive(k), uniformFilter: false, workgroups: (p, n) => [Math.ceil(p.height / 64), p.width, n] });
const coalescedPlan = (k: number): Plan => ({ program: conv2dCoalesced(k), uniformFilter: false, workgroups: (p, n) => [Math.ceil(p.width / 32), Math.ceil(p.height / 8), n] });

/** Tiled rungs need the tile in workgroup memory and k² floats in a 64 KiB uniform; else coalesced. */
function tiledPlan(gpu: GpuDevice, k: number, cx: number): Plan {
  if (conv2dTileBytes(k, cx) > gpu.limits.workgroupStorage || k * k > 16384) {
    return { ...coalescedPlan(k), note: `k=${k}: tile does not fit workgroup memory or the uniform; ran the coalesced kernel` };
  }
  return { program: conv2dTiled(k, cx), uniformFilter: true, workgroups: (p, n) => [Math.ceil(p.width / (32 * cx)), Math.ceil(p.height / 8), n] };
}

async function runConv2d(gpu: GpuDevice, p: Conv2dProblem, ctx: OpContext<Float32Array>, plan: Plan): Promise<OpOutput<Float32Array>> {
  const out = ctx.out ?? new Float32Array(p.batch * p.height * p.width);
  const img = p.height * p.width;
  const per = itemsPerChunk(gpu, img * 4, 'input');
  return gpu.exclusive(async () => {
    const pipeline = gpu.pipeline(plan.program);
    const filter = plan.uniformFilter ? gpu.uniform(vec4Array(p.filter)) : gpu.upload(p.filter);
    let kernelMs: number | undefined = 0;
    // Chunks of whole images keep each binding under the device limit (128 MiB on llvmpipe).
    for (let b0 = 0; b0 < p.batch; b0 += per) {
      const n = Math.min(per, p.batch - b0);
      const input = gpu.upload(p.input.subarray(b0 * img, (b0 + n) * img));
      const output = gpu.storage(n * img * 4);
      const params = gpu.uniform(packParams([['u32', p.width], ['u32', p.height], ['u32', n], ['u32', 0]]));
      const bindGroup = gpu.bind(pipeline, [input, filter, output, params]);
      const r = await gpu.execute([{ pipeline, bindGroup, workgroups: plan.workgroups(p, n) }], [{ buffer: output, offset: 0, size: n * img * 4 }], ctx.timing);
      out.set(new Float32Array(r.data[0]!), b0 * img);
      kernelMs = addMs(kernelMs, r.kernelMs);
      gpu.release(input, output, params);
    }
    gpu.release(filter);
    return { data: out, kernelMs, notes: plan.note === undefined ? undefined : [plan.note] };
  });
}

export function conv2dOp(gpu: GpuDevice): OpImplementation<'conv2d'> {
  return {
    defaultVariant: 'auto',
    variants: {
      naive: (p, ctx) => runConv2d(gpu, p, ctx, naivePlan(p.k)),
      coalesced: (p, ctx) => runConv2d(gpu, p, ctx, coalescedPlan(p.k)),
      tiled: (p, ctx) => runConv2d(gpu, p, ctx, tiledPlan(gpu, p.k, 1)),
      coarsened: (p, ctx) => runConv2d(gpu, p, ctx, tiledPlan(gpu, p.k, 4)),
      // Heuristic: 1×1 filters have no reuse to exploit; otherwise the coarsened tile wins on
      // reuse (each tile pixel feeds up to K·4 outputs from registers).
      auto: (p, ctx) => runConv2d(gpu, p, ctx, p.k === 1 ? coalescedPlan(p.k) : tiledPlan(gpu, p.k, 4)),
    },
  };
}
