import { allocScanOutput, type OpImplementation } from '@kernelkit/ops';
import { scanRange, scanRangeSimd } from '../kernels/scan.js';
import { forSlices } from '../wasm/pace.js';
import { withKernels, type WasmSupport } from '../wasm/runtime.js';

/** Elements per slice between abort checks (a few ms of the JavaScript kernel, less of the wasm one). */
const SLICE = 2 ** 21;

/** `simd`: the runtime's WebAssembly SIMD support; without it only the JavaScript kernel is offered. */
export function scanOp(simd: WasmSupport | undefined): OpImplementation<'scan'> {
  const sequential: OpImplementation<'scan'>['variants'][string] = async (p, ctx) => {
    const out = ctx.out ?? allocScanOutput(p.input);
    let carry = p.initial;
    await forSlices(ctx.signal, p.input.length, SLICE, (from, to) => {
      carry = scanRange(p.input, out, from, to, carry, p.exclusive, p.dtype);
    });
    return { data: out };
  };
  if (simd === undefined) return { defaultVariant: 'sequential', variants: { sequential } };
  return {
    defaultVariant: 'wasm-simd',
    variants: {
      sequential,
      'wasm-simd'(p, ctx) {
        const out = ctx.out ?? allocScanOutput(p.input);
        let carry = p.initial;
        return withKernels(simd, async (w) => {
          await forSlices(ctx.signal, p.input.length, SLICE, (from, to) => {
            carry = scanRangeSimd(w, p.input, out, from, to, carry, p.exclusive, p.dtype);
          });
          return { data: out };
        });
      },
    },
  };
}
