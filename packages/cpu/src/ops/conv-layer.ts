import type { OpImplementation } from '@kernelkit/ops';
import { convLayerPlanes } from '../kernels/conv-layer.js';

export const convLayer: OpImplementation<'convLayer'> = {
  defaultVariant: 'direct',
  variants: {
    direct(p, ctx) {
      const out = ctx.out ?? new Float32Array(p.batch * p.maps * p.outHeight * p.outWidth);
      convLayerPlanes(p.input, p.weights, p.bias, p.relu, out, p, 0, p.batch * p.maps, new Float64Array(p.outHeight * p.outWidth));
      return { data: out };
    },
  },
};
