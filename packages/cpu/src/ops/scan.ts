import { type OpContext, type OpImplementation, type OpOutput, type ScanArray, type ScanProblem } from '@kernelkit/ops';
import { scanRange, scanRangeSimd } from '../kernels/scan.js';
import { forSlices } from '../wasm/pace.js';
import { withKernels, type WasmSupport } from '../wasm/runtime.js';
import type { NewOutput } from '../outputs.js';

/** Elements per slice between abort checks (a few ms of the JavaScript kernel, less of the wasm one). */
const SLICE = 2 ** 21;

/** Scans `p` slice by slice with `range`, which scans [from, to) of the input into `out` from `carry` and returns the carry after it. */
async function sliced(p: ScanProblem, ctx: OpContext<ScanArray>, newOutput: NewOutput, range: (out: ScanArray, from: number, to: number, carry: number) => number): Promise<OpOutput<ScanArray>> {
  const out = ctx.out ?? (await newOutput(p.input.constructor as Uint32ArrayConstructor, p.input.length));
  let carry = p.initial;
  await forSlices(ctx.signal, p.input.length, SLICE, (from, to) => {
    carry = range(out, from, to, carry);
  });
  return { data: out };
}

/** `simd`: the runtime's WebAssembly SIMD support; without it only the JavaScript kernel is offered. `newOutput`: result arrays. */
export function scanOp(simd: WasmSupport | undefined, newOutput: NewOutput): OpImplementation<'scan'> {
  const sequential: OpImplementation<'scan'>['variants'][string] = (p, ctx) =>
    sliced(p, ctx, newOutput, (out, from, to, carry) => scanRange(p.input, out, from, to, carry, p.exclusive, p.dtype));
  if (simd === undefined) return { defaultVariant: 'sequential', variants: { sequential } };
  return {
    defaultVariant: 'wasm-simd',
    variants: {
      sequential,
      'wasm-simd': (p, ctx) =>
        withKernels(simd, (w) => sliced(p, ctx, newOutput, (out, from, to, carry) => scanRangeSimd(w, p.input, out, from, to, carry, p.exclusive, p.dtype))),
    },
  };
}
