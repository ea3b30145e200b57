import type { ConvLayerProblem, OpContext, OpImplementation, OpOutput } from '@kernelkit/ops';
import type { GpuDevice } from '../runtime/device.js';
import { packParams, vec4Array } from '../runtime/params.js';
import type { Program } from '../runtime/program.js';
import { addMs, itemsPerChunk } from './common.js';
import { convLayerDirect, convLayerGemm, convLayerTiled } from './conv-layer.wgsl.js';

interface Plan {
  readonly program: Program;
  readonly uniformWeights: boolean;
  /** Length of the uniform weight array the program declares (the binding must cover it). */
  readonly uniformVec4s?: number;
  readonly workgroups: (p: ConvLayerProblem, n: number) => [number, number, number];
  readonly note?: string;
}

const directPlan = (p: ConvLayerProblem): Plan => ({ program: convLayerDirect(p.k), uniformWeights: false, workgroups: (q, n) => [Math.ceil((q.outHeight * q.outWidth) / 256), q.maps, n] });

function tiledPlan(gpu: GpuDevice, p: ConvLayerProblem): Plan {
  const w4 = Math.ceil(p.weights.length / 4);
  // Weights must fit a 64 KiB uniform and the (16+K−1)² tile the workgroup memory.
  if (w4 > 4096 || (15 + p.k) ** 2 * 4 > gpu.limits.workgroupStorage) return { ...directPlan(p), note: 'weights or tile too large for the tiled kernel; ran direct' };
  // Round the uniform array length up to a power of two so a handful of pipelines serve all layers.
  const len = 2 ** Math.ceil(Math.log2(Math.max(1, w4)));
  return {
    program: convLayerTiled(p.k, len),
    uniformWeights: true,
    uniformVec4s: len,
    workgroups: (q, n) => [Math.ceil(q.outWidth / 16) * Math.ceil(q.outHeight / 16), q.maps, n],
  };
}

function gemmPlan(p: ConvLayerProblem): Plan {
  const mt = p.maps <= 4 ? 4 : p.maps <= 8 ? 8 : 16;
  return {
    program: convLayerGemm(p.k, mt),
    uniformWeights: false,
    workgroups: (q, n) => {
      const groups = Math.ceil((n * q.outHeight * q.outWidth) / 256);
      const x = Math.min(groups, 65535);
      return [x, Math.ceil(q.maps / mt), Math.ceil(groups / x)];
    },
  };
}

async function runLayer(gpu: GpuDevice, p: ConvLayerProblem, ctx: OpContext<Float32Array>, plan: Plan): Promise<OpOutput<Float32Array>> {
  const inPer = p.channels * p.height * p.width;
  const outPer = p.maps * p.outHeight * p.outWidth;
  const out = ctx.out ?? new Float32Array(p.batch * outPer);
  const per = itemsPerChunk(gpu, Math.max(inPer, outPer) * 4, 'input');
  return gpu.exclusive(async () => {
    const pipeline = gpu.pipeline(plan.program);
    const weights = plan.uniformWeights ? gpu.uniform(vec4Array(p.weights, plan.uniformVec4s)) : gpu.upload(p.weights);
    // The bias binding always exists (flags say whether to use it): one pipeline layout.
    const bias = gpu.upload(p.bias ?? new Float32Array(1));
    const flags = (p.bias !== undefined ? 1 : 0) | (p.relu ? 2 : 0);
    let kernelMs: number | undefined = 0;
    for (let b0 = 0; b0 < p.batch; b0 += per) {
      const n = Math.min(per, p.batch - b0);
      const input = gpu.upload(p.input.subarray(b0 * inPer, (b0 + n) * inPer));
      const output = gpu.storage(n * outPer * 4);
      const params = gpu.uniform(
        packParams([['u32', n], ['u32', p.channels], ['u32', p.height], ['u32', p.width], ['u32', p.maps], ['u32', p.outHeight], ['u32', p.outWidth], ['u32', flags]]),
      );
      const bindGroup = gpu.bind(pipeline, [input, weights, bias, output, params]);
      const r = await gpu.execute([{ pipeline, bindGroup, workgroups: plan.workgroups(p, n) }], [{ buffer: output, offset: 0, size: n * outPer * 4 }], ctx.timing);
      out.set(new Float32Array(r.data[0]!), b0 * outPer);
      kernelMs = addMs(kernelMs, r.kernelMs);
      gpu.release(input, output, params);
    }
    gpu.release(weights, bias);
    return { data: out, kernelMs, notes: plan.note === undefined ? undefined : [plan.note] };
  });
}

export function convLayerOp(gpu: GpuDevice): OpImplementation<'convLayer'> {
  return {
    defaultVariant: 'gemm',
    variants: {
      direct: (p, ctx) => runLayer(gpu, p, ctx, directPlan(p)),
      tiled: (p, ctx) => runLayer(gpu, p, ctx, tiledPlan(gpu, p)),
      gemm: (p, ctx) => runLayer(gpu, p, ctx, gemmPlan(p)),
    },
  };
}
