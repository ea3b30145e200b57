import { allocScanOutput, type OpImplementation } from '@kernelkit/ops';
import { scanRange } from '../kernels/scan.js';

export const scan: OpImplementation<'scan'> = {
  defaultVariant: 'sequential',
  variants: {
    sequential(p, ctx) {
      const out = ctx.out ?? allocScanOutput(p.input);
      scanRange(p.input, out, 0, p.input.length, p.initial, p.exclusive, p.dtype);
      return { data: out };
    },
  },
};
