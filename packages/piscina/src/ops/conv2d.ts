import { allFinite, conv2dRows, conv2dRowsSimd, wasmSupport, withKernels } from '@kernelkit/cpu';
import { conv2dMultiplyAdds, type OpContext, type OpImplementation, type OpOutput, type Conv2dProblem } from '@kernelkit/ops';
import { guidedBounds } from '../call.js';
import { copyTimes, INLINE_NOTE, inline, newCall, type Env } from './context.js';

/**
 * Smallest band, in multiply-adds (well under 0.1 ms of the wasm kernel): the last bands are this
 * small, so the threads finish close together.
 */
const MIN_BAND_MACS = 2 ** 20;

const NON_FINITE_NOTE = 'the filter has NaN or Infinity, which the wasm kernel would spread over the zero padding: ran the rows (JavaScript) kernel';

/**
 * Row bands over the flattened (batch·height) rows, largest first (`guidedBounds`), claimed
 * from a shared counter by one task per thread (no round trip to this thread per band). A band reads its rows plus `r` halo rows on each side straight from the shared
 * input, which is copied into shared memory band by band after the tasks are queued (a thread
 * starts on a band as soon as its rows are in), and writes its rows to the shared output; a
 * small result is copied out band by band as bands finish (see `SharedOutput`). `wasm-simd` (the default where the runtime has
 * WebAssembly SIMD) runs the bands on the WebAssembly kernel, which each worker instantiates once
 * and which copies the band (zero-padded) into its memory and the output rows back out;
 * `rows` runs the JavaScript kernel on the shared arrays themselves.
 */
export function conv2dOp(env: Env): OpImplementation<'conv2d'> {
  const s = wasmSupport();
  const simd = 'module' in s ? s : undefined;
  const bands = async (p: Conv2dProblem, ctx: OpContext<Float32Array>, useSimd: boolean): Promise<OpOutput<Float32Array>> => {
    const rows = p.batch * p.height;
    const work = conv2dMultiplyAdds(p);
    if (inline(env, 'conv2d', work)) {
      const out = ctx.out ?? new Float32Array(rows * p.width);
      if (useSimd && simd !== undefined) withKernels(simd, (w) => conv2dRowsSimd(w, p.input, p.filter, out, p.height, p.width, p.k, 0, rows));
      else conv2dRows(p.input, p.filter, out, p.height, p.width, p.k, 0, rows, new Float64Array(p.width));
      return { data: out, notes: [INLINE_NOTE] };
    }
    const call = newCall(env, 'conv2d', ctx.signal);
    const input = call.input(p.input);
    const filter = call.input(p.filter).all();
    const out = call.output(Float32Array, rows * p.width, ctx.out, undefined, true);
    const r = (p.k - 1) >> 1;
    const units = call.units(guidedBounds(rows, env.pool.threads, Math.ceil(MIN_BAND_MACS / (work / rows))));
    const b = units.bounds;
    const task = { kind: 'conv2d', input: input.ref, filter: filter.ref, out: out.ref, height: p.height, width: p.width, k: p.k, bounds: b, ctrl: units.ctrl, simd: useSimd } as const;
    await units.run(
      task,
      env.pool.threads,
      (u) => input.ensure(Math.min(rows, b[u + 1]! + r) * p.width),
      out.byParts ? (u) => out.copyPart(b[u]! * p.width, b[u + 1]! * p.width) : undefined,
    );
    await call.finish(() => out.complete());
    return { data: out.result(), ...copyTimes(call, ctx.timing) };
  };
  const rows: OpImplementation<'conv2d'>['variants'][string] = (p, ctx) => bands(p, ctx, false);
  if (simd === undefined) return { defaultVariant: 'rows', variants: { rows } };
  return {
    defaultVariant: 'wasm-simd',
    variants: {
      async 'wasm-simd'(p, ctx) {
        if (allFinite(p.filter)) return bands(p, ctx, true);
        const res = await bands(p, ctx, false);
        return { ...res, notes: [...(res.notes ?? []), NON_FINITE_NOTE] };
      },
      rows,
    },
  };
}
