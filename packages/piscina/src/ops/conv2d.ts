import { allFinite, conv2dRows, conv2dRowsSimd, SHARED_MEMORY_MAX_BYTES, wasmSupport, withKernels } from '@kernelkit/cpu';
import { now } from '@kernelkit/core';
import { conv2dMultiplyAdds, type OpContext, type OpImplementation, type OpOutput, type Conv2dProblem } from '@kernelkit/ops';
import { guidedBounds, type Call } from '../call.js';
import { callerShares, conv2dShare } from '../caller-share.js';
import { copyTimes, INLINE_NOTE, inline, moduleMemory, moduleOutput, newCall, type Env } from './context.js';

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
 * starts on a band as soon as its rows are in), and writes its rows to the shared output (see
 * `SharedOutput`). `wasm-simd` (the default where the runtime has
 * WebAssembly SIMD) runs the bands on the WebAssembly kernel: for an ordinary input in place in
 * one shared module memory (`inModuleMemory`), for a shared one in each worker's own instance,
 * which copies the band (zero-padded) into its memory and the output rows back out;
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
    const r = (p.k - 1) >> 1;
    const units = call.units(guidedBounds(rows, env.pool.threads, Math.ceil(MIN_BAND_MACS / (work / rows))));
    // A shared input stays where it is: the workers copy their parts into their own memories in
    // parallel, where this path would copy all of it on this thread.
    if (useSimd && env.pool.sharedModule !== undefined && !(p.input.buffer instanceof SharedArrayBuffer)) {
      const layout = moduleLayout(p);
      if (layout.bytes <= SHARED_MEMORY_MAX_BYTES) return inModuleMemory(env, call, units, layout, p, ctx);
    }
    const input = call.input(p.input);
    const filter = call.input(p.filter).all();
    const out = call.output(Float32Array, rows * p.width, ctx.out);
    const b = units.bounds;
    const task = { kind: 'conv2d', input: input.ref, filter: filter.ref, out: out.ref, height: p.height, width: p.width, k: p.k, bounds: b, ctrl: units.ctrl, simd: useSimd } as const;
    units.run(
      task,
      env.pool.threads,
      (u) => input.ensure(Math.min(rows, b[u + 1]! + r) * p.width),
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

/**
 * Where a call's data sits in a shared module memory (float offsets): the filter, each image
 * zero-padded as the kernel reads it, then the output rows.
 */
interface ModuleLayout {
  readonly filterAt: number;
  readonly stride: number;
  readonly images: number[];
  readonly outAt: number;
  readonly bytes: number;
}

function moduleLayout(p: Conv2dProblem): ModuleLayout {
  const r = (p.k - 1) >> 1;
  // r zero columns left, 8 + r right (the last tile's taps); r zero rows above, r + 2 below (the 3-row tile).
  const stride = p.width + 2 * r + 8;
  const block = ((p.height + 2 * r + 2) * stride + 2) & ~1;
  const filterAt = 0;
  const first = ((p.k * p.k + 3) & ~3) + 2;
  // V8 copies between ordinary memory and a shared one several times slower when the two
  // addresses differ by 4 mod 8 bytes: each image starts one float later where that lines its
  // rows up with the input's (for an odd width the rows alternate, and so do the images).
  const images = Array.from({ length: p.batch }, (_, b) => first + b * block + (((p.width % 2 === 0 ? r : b * p.height) + p.input.byteOffset / 4) & 1));
  const outAt = first + p.batch * block;
  return { filterAt, stride, images, outAt, bytes: (outAt + p.batch * p.height * p.width) * 4 };
}

/**
 * The shared-memory path: this thread copies the input straight into the memory the workers'
 * kernels run on (row by row, into the zero-padded layout), unit by unit after the tasks are queued.
 * Without an `out` the result is the rows where the kernels wrote them (`moduleOutput`); with a
 * shared `out` each worker copies its finished rows into it, and so does this thread for the units
 * it claims when it takes a share (`callerShares`); a caller's ordinary `out` is filled from the
 * module memory in one copy on this thread once every task has succeeded.
 */
async function inModuleMemory(env: Env, call: Call, units: ReturnType<Call['units']>, l: ModuleLayout, p: Conv2dProblem, ctx: OpContext<Float32Array>): Promise<OpOutput<Float32Array>> {
  const { height: h, width: w, k } = p;
  const r = (k - 1) >> 1;
  const rows = p.batch * h;
  // The kernels never write the input region, so its zero padding stays in place for the next
  // call with the same layout: then only the rows are copied.
  const { memory: mem, sameLayout, forCaller } = moduleMemory(call, l.bytes, ctx.out, `conv2d ${w} ${r} ${l.stride} ${h} ${l.images.join(' ')}`);
  const m = new Float32Array(mem.memory.buffer);
  if (!sameLayout) m.fill(0, l.images[0]!, l.outAt);
  m.set(p.filter, l.filterAt);
  const out = moduleOutput(call, m, forCaller, l.outAt, rows * w, ctx.out);
  const b = units.bounds;
  const task = { kind: 'conv2dModule', memory: mem, images: l.images, stride: l.stride, filterAt: l.filterAt, outAt: l.outAt, out: out.ref, height: h, width: w, k, bounds: b, ctrl: units.ctrl } as const;
  let copied = 0;
  const stage = (end: number): void => {
    const t0 = now();
    for (; copied < end; copied++) {
      const img = (copied / h) | 0;
      m.set(p.input.subarray(copied * w, (copied + 1) * w), l.images[img]! + (copied - img * h + r) * l.stride + r);
    }
    call.uploadMs += now() - t0;
  };
  const stageUnit = (u: number): void => stage(Math.min(rows, b[u + 1]! + r));
  if (callerShares(env, conv2dMultiplyAdds(p))) units.runSharing(task, call.threads, stageUnit, conv2dShare(env, task));
  else units.run(task, call.threads, stageUnit);
  call.copiedInBytes += p.input.byteLength + p.filter.byteLength;
  await call.finish(() => out.complete());
  return { data: out.result(), ...copyTimes(call, ctx.timing) };
}
