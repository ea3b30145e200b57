import { allocScanOutput, type OpImplementation } from '@kernelkit/ops';
import { scanRange } from '../kernels/scan.js';
import { forSlices } from '../wasm/pace.js';

/** Elements per slice between abort checks (a few ms). */
const SLICE = 2 ** 21;

export const scan: OpImplementation<'scan'> = {
  defaultVariant: 'sequential',
  variants: {
    async sequential(p, ctx) {
      const out = ctx.out ?? allocScanOutput(p.input);
      let carry = p.initial;
      await forSlices(ctx.signal, p.input.length, SLICE, (from, to) => {
        carry = scanRange(p.input, out, from, to, carry, p.exclusive, p.dtype);
      });
      return { data: out };
    },
  },
};
