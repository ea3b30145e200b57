import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { OPS, type ConvLayerProblem, type Conv2dProblem, type OpArgs } from '@kernelkit/ops';
import { PEER_OPS, type Peer, type PeerOutput } from './peer.js';

type Tf = typeof import('@tensorflow/tfjs-core');
type Tensor4D = import('@tensorflow/tfjs-core').Tensor4D;

const VARIANT = '1t';

/**
 * @tensorflow/tfjs-backend-wasm with SIMD and one thread (its threaded build needs a worker
 * script Node cannot load). Its Conv2D takes NHWC only: conv2d's single-channel N×H×W input
 * already is, convLayer's NCHW input and output are transposed inside each timed call (a row
 * note says so). Filters are converted once per case and kept until dispose.
 */
export async function openTfjsWasm(): Promise<Peer> {
  const require = createRequire(import.meta.url);
  const tf = (await import('@tensorflow/tfjs-core')) as Tf;
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  wasm.setWasmPaths(dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm')) + '/');
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs-backend-wasm did not initialise');
  await tf.ready();
  const simd = (await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')) === true;
  const version = (require('@tensorflow/tfjs-backend-wasm/package.json') as { version: string }).version;
  // One filter tensor per case, keyed by the caller's own weights array (validation hands back
  // fresh views, which would miss it on every call).
  const filters = new WeakMap<object, Tensor4D>();
  const kept: Tensor4D[] = [];
  const filterOf = (weights: object, make: () => Tensor4D): Tensor4D => {
    let f = filters.get(weights);
    if (f === undefined) {
      f = tf.keep(make());
      filters.set(weights, f);
      kept.push(f);
    }
    return f;
  };
  return {
    name: 'tfjs-wasm',
    description: `@tensorflow/tfjs-backend-wasm ${version}, WebAssembly SIMD ${simd ? 'on' : 'off (not supported here)'}, 1 thread`,
    variants: (op) => (PEER_OPS.includes(op) ? [VARIANT] : []),
    async run(op, args, variant): Promise<PeerOutput> {
      if (variant !== VARIANT) throw new Error(`tfjs-wasm has no variant ${variant} (it has ${VARIANT})`);
      if (op === 'conv2d') {
        const p = OPS.conv2d.validate(args as OpArgs<'conv2d'>) as Conv2dProblem;
        const r = (p.k - 1) / 2;
        const filter = filterOf((args as OpArgs<'conv2d'>).filter, () => tf.tensor4d(p.filter, [p.k, p.k, 1, 1]));
        const y = tf.tidy(() => tf.conv2d(tf.tensor4d(p.input, [p.batch, p.height, p.width, 1]), filter, 1, [[0, 0], [r, r], [r, r], [0, 0]]));
        try {
          return { data: (await y.data()) as Float32Array };
        } finally {
          y.dispose();
        }
      }
      const p = OPS.convLayer.validate(args as OpArgs<'convLayer'>) as ConvLayerProblem;
      // M×C×K×K → K×K×C×M, the layout tfjs filters have.
      const filter = filterOf((args as OpArgs<'convLayer'>).weights, () => tf.tidy(() => tf.transpose(tf.tensor4d(p.weights, [p.maps, p.channels, p.k, p.k]), [2, 3, 1, 0])));
      const y = tf.tidy(() => {
        const x = tf.transpose(tf.tensor4d(p.input, [p.batch, p.channels, p.height, p.width]), [0, 2, 3, 1]);
        let out: Tensor4D = tf.conv2d(x as Tensor4D, filter, 1, 'valid');
        if (p.bias !== undefined) out = tf.add(out, tf.tensor1d(p.bias));
        if (p.relu) out = tf.relu(out);
        return tf.transpose(out, [0, 3, 1, 2]);
      });
      try {
        return { data: (await y.data()) as Float32Array, notes: ['tfjs-wasm: NCHW input and output transposed to and from NHWC inside the timed call (its Conv2D takes NHWC only)'] };
      } finally {
        y.dispose();
      }
    },
    async dispose() {
      for (const f of kept.splice(0)) f.dispose();
    },
  };
}
