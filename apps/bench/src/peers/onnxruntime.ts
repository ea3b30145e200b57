import { createRequire } from 'node:module';
import { OPS, convLayerOutputShape, type ConvLayerProblem, type Conv2dProblem, type OpArgs, type OpName } from '@kernelkit/ops';
import { CONV_INPUT, CONV_OUTPUT, convModel, type ConvModelSpec } from './onnx-model.js';
import { PEER_OPS, cpuSimd, type Peer, type PeerOutput } from './peer.js';

type Ort = typeof import('onnxruntime-node');
type Session = import('onnxruntime-node').InferenceSession;

/**
 * The model for one op call: conv2d as N×1×H×W with one K×K filter and 'same' padding, convLayer
 * as is (valid padding). `weights` is the caller's own filter array, the sessions' cache key
 * (validation hands back fresh views, which would miss it on every call).
 */
function modelSpec(op: OpName, args: OpArgs<OpName>): { spec: ConvModelSpec; weights: object } {
  if (op === 'conv2d') {
    const p = OPS.conv2d.validate(args as OpArgs<'conv2d'>) as Conv2dProblem;
    const spec = { inputShape: [p.batch, 1, p.height, p.width], weightShape: [1, 1, p.k, p.k], outputShape: [p.batch, 1, p.height, p.width], weights: p.filter, pad: (p.k - 1) / 2 } as const;
    return { spec, weights: (args as OpArgs<'conv2d'>).filter };
  }
  const p = OPS.convLayer.validate(args as OpArgs<'convLayer'>) as ConvLayerProblem;
  const { outHeight, outWidth } = convLayerOutputShape(p);
  const spec = { inputShape: [p.batch, p.channels, p.height, p.width], weightShape: [p.maps, p.channels, p.k, p.k], outputShape: [p.batch, p.maps, outHeight, outWidth], weights: p.weights, bias: p.bias, pad: 0, relu: p.relu } as const;
  return { spec, weights: (args as OpArgs<'convLayer'>).weights };
}

/**
 * onnxruntime-node's CPU execution provider on a one-node Conv model built in code. Variants are
 * intra-op thread counts (`1t`, `<threads>t`); a session per model and thread count is made on
 * the first call with those weights (in the row's first-call time) and kept until dispose.
 */
export async function openOnnxruntime(threads: number, hooks: { readonly onSession?: () => void } = {}): Promise<Peer> {
  const ort = (await import('onnxruntime-node')) as Ort & { default?: Ort };
  const { InferenceSession, Tensor } = ort.default ?? ort;
  const version = (createRequire(import.meta.url)('onnxruntime-node/package.json') as { version: string }).version;
  const counts = [...new Set([1, threads])];
  const variants = counts.map((t) => `${t}t`);
  // Keyed by the weights array (one per bench case) and then by shape and variant.
  const sessions = new WeakMap<object, Map<string, Promise<Session>>>();
  const open: Promise<Session>[] = [];
  const session = ({ spec, weights }: ReturnType<typeof modelSpec>, variant: string): Promise<Session> => {
    const key = `${variant} ${spec.inputShape.join('x')} ${spec.pad} ${spec.relu === true} ${spec.bias !== undefined}`;
    let byKey = sessions.get(weights);
    if (byKey === undefined) sessions.set(weights, (byKey = new Map()));
    let s = byKey.get(key);
    if (s === undefined) {
      const t = Number.parseInt(variant, 10);
      s = InferenceSession.create(convModel(spec), { executionProviders: ['cpu'], intraOpNumThreads: t, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' });
      byKey.set(key, s);
      open.push(s);
      hooks.onSession?.();
    }
    return s;
  };
  return {
    name: 'onnxruntime',
    description: `onnxruntime-node ${version}, CPU execution provider, intra-op threads ${counts.join(' or ')} (the variant), MLAS kernels (${cpuSimd()} on this CPU)`,
    variants: (op) => (PEER_OPS.includes(op) ? variants : []),
    async run(op, args, variant): Promise<PeerOutput> {
      if (!variants.includes(variant)) throw new Error(`onnxruntime has no variant ${variant} (it has ${variants.join(', ')})`);
      const model = modelSpec(op, args);
      const s = await session(model, variant);
      const { spec } = model;
      const input = (args as { input: Float32Array }).input;
      const out = await s.run({ [CONV_INPUT]: new Tensor('float32', input, spec.inputShape) });
      return { data: out[CONV_OUTPUT]!.data as Float32Array };
    },
    async dispose() {
      const all = await Promise.allSettled(open.splice(0));
      for (const r of all) if (r.status === 'fulfilled') await r.value.release().catch(() => {});
    },
  };
}
