import type { OpImplementation } from '@kernelkit/ops';
import { conv2dRows } from '../kernels/conv2d.js';

export const conv2d: OpImplementation<'conv2d'> = {
  defaultVariant: 'direct',
  variants: {
    direct(p, ctx) {
      const out = ctx.out ?? new Float32Array(p.batch * p.height * p.width);
      conv2dRows(p.input, p.filter, out, p.height, p.width, p.k, 0, p.batch * p.height, new Float64Array(p.width));
      return { data: out };
    },
  },
};
