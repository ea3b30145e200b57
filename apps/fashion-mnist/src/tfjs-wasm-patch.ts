/**
 * tfjs-backend-wasm 4.22 registers no `Conv2DBackpropFilter` kernel, so training a conv2d layer
 * on it fails ("Kernel 'Conv2DBackpropFilter' not registered for backend 'wasm'"). This adds
 * one, for the only case the network needs (NHWC, stride 1, dilation 1, 'valid' padding), as a
 * forward conv2d on transposed tensors, which the wasm backend runs through XNNPACK:
 *
 *   dW[p][q][c][m] = Σ_{b,h,w} x[b][h+p][w+q][c] · dy[b][h][w][m]
 *                  = conv2d(x as [C][H][W][B], dy as [OH][OW][B][M])[c][p][q][m].
 */
import * as tf from '@tensorflow/tfjs-core';

interface BackpropFilterAttrs {
  strides: number | [number, number];
  pad: unknown;
  dataFormat: string;
  dilations?: number | [number, number];
  filterShape: [number, number, number, number];
}

const ones = (v: number | [number, number] | undefined): boolean => v === undefined || (Array.isArray(v) ? v.every((x) => x === 1) : v === 1);

export function registerWasmConv2dBackpropFilter(): void {
  if (tf.getKernel('Conv2DBackpropFilter', 'wasm') !== undefined) return;
  tf.registerKernel({
    kernelName: 'Conv2DBackpropFilter',
    backendName: 'wasm',
    kernelFunc: ({ inputs, attrs }) => {
      const a = attrs as unknown as BackpropFilterAttrs;
      if (!ones(a.strides) || !ones(a.dilations) || a.pad !== 'valid' || (a.dataFormat !== 'NHWC' && a.dataFormat !== 'channelsLast')) {
        throw new Error(`Conv2DBackpropFilter (wasm patch): only stride 1, dilation 1, 'valid', NHWC is implemented; got ${JSON.stringify(a)}`);
      }
      const x = inputs['x'] as tf.Tensor4D;
      const dy = inputs['dy'] as tf.Tensor4D;
      return tf.tidy(() => {
        const xt = tf.transpose(x, [3, 1, 2, 0]);
        const dyt = tf.transpose(dy, [1, 2, 0, 3]);
        const dw = tf.conv2d(xt, dyt, 1, 'valid'); // [C][K][K][M]
        return tf.transpose(dw, [1, 2, 0, 3]);
      });
    },
  });
}
