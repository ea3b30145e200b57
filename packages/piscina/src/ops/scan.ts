import { addCarry, scanRange, scanRangeSimd, SHARED_MEMORY_MAX_BYTES, wasmSupport, withKernels } from '@kernelkit/cpu';
import { copyInto, now } from '@kernelkit/core';
import { allocScanOutput, type OpContext, type OpImplementation, type OpOutput, type ScanArray, type ScanProblem } from '@kernelkit/ops';
import { split, type Call } from '../call.js';
import { copyTimes, INLINE_NOTE, inline, newCall, type Env } from './context.js';

/** Smallest chunk worth a task (~0.1–0.3 ms of scanning). */
const MIN_CHUNK = 2 ** 16;
/**
 * Scan work is uniform, so chunks need not balance load, only cover the threads: 2 per thread
 * keeps every thread busy while the main thread stages the next chunk, at half the task count
 * of 4 per thread (every task costs a message round trip).
 */
const CHUNKS_PER_THREAD = 2;

type Ctor<T> = new (buffer: SharedArrayBuffer | number, byteOffset?: number, length?: number) => T;

/**
 * `two-pass`, the JavaScript kernels, over 2 chunks per thread:
 *   1. per-chunk sums (workers; the last chunk's sum is never needed),
 *   2. carries on the main thread: carry[i] = initial ⊕ sum[0] ⊕ … ⊕ sum[i−1] (wrapping for
 *      integers, so u32/i32 are bit-exact; f64 for floats, like the sequential scan's accumulator),
 *   3. local scans of each chunk from its carry (workers), with `scanRange`, the CPU backend's kernel.
 * Steps 2–3 are pipelined: chunk i's local scan is queued the moment sums 0…i−1 are known. The
 * local scans write the result directly (see `SharedOutput`); only for a caller's ordinary `out`
 * do they write over our copy of the input, which saves a buffer, and chunk i's local scan then
 * also waits for chunk i's own sum task, which must read the chunk before it is overwritten.
 */
async function twoPass(env: Env, call: Call, p: ScanProblem, ctx: OpContext<ScanArray>): Promise<OpOutput<ScanArray>> {
  const n = p.input.length;
  const input = call.input<ScanArray>(p.input);
  const out = call.output(p.input.constructor as Ctor<ScanArray>, n, ctx.out, input.owned ? input.view : undefined);
  const chunks = split(n, Math.max(1, Math.min(env.pool.threads * CHUNKS_PER_THREAD, Math.floor(n / MIN_CHUNK))));
  const sums: Array<number | undefined> = new Array<number | undefined>(chunks.length);
  const carries: number[] = [p.initial];
  // Writing over the input: chunk i may be overwritten only after its own sum task read it.
  const inPlace = out.view.buffer === input.view.buffer;
  let next = 0;
  const advance = (): void => {
    while (next < chunks.length) {
      if (next > 0 && carries[next] === undefined) {
        const s = sums[next - 1];
        if (s === undefined) return;
        carries[next] = addCarry(carries[next - 1]!, s, p.dtype);
      }
      if (inPlace && next < chunks.length - 1 && sums[next] === undefined) return;
      const [c0, c1] = chunks[next]!;
      call.submit({ kind: 'scanLocal', input: input.ref, out: out.ref, start: c0, end: c1, carry: carries[next]!, exclusive: p.exclusive, dtype: p.dtype });
      next++;
    }
  };
  for (let i = 0; i < chunks.length - 1; i++) {
    const [c0, c1] = chunks[i]!;
    input.ensure(c1);
    call.submit({ kind: 'scanSum', input: input.ref, start: c0, end: c1, dtype: p.dtype }, (s: number) => {
      sums[i] = s;
      advance();
    });
  }
  input.ensure(n);
  advance();
  await call.finish(() => out.complete());
  return { data: out.result(), ...copyTimes(call, ctx.timing) };
}

/**
 * Units of the chained scan: about 1 MiB each (summed and then scanned while still in the core's
 * cache), at least 2 per thread, whole vectors of 4 elements so every unit's copy keeps the input's alignment.
 */
const CHAIN_UNIT_BYTES = 2 ** 20;

function chainBounds(n: number, size: number, threads: number): number[] {
  const perUnit = Math.max(MIN_CHUNK, Math.min(Math.ceil(n / (threads * CHUNKS_PER_THREAD)), CHAIN_UNIT_BYTES / size));
  const len = Math.ceil(perUnit / 4) * 4;
  const bounds = [0];
  for (let at = len; at < n; at += len) bounds.push(at);
  bounds.push(n);
  return bounds;
}

/**
 * `wasm-simd`: the chained scan of `ScanChainTask`, one task per thread claiming units as this
 * thread stages them, carries passed between the workers through shared memory (no round trip to
 * this thread per unit). An ordinary input is copied into one shared module memory and scanned
 * there in place, each worker copying its units into the result (see `SharedOutput`); a shared
 * input (or one past the largest module memory) stays where it is, and each worker copies its
 * units into its own instance's memory and back out.
 */
async function chained(env: Env, call: Call, p: ScanProblem, ctx: OpContext<ScanArray>): Promise<OpOutput<ScanArray>> {
  const n = p.input.length;
  const size = p.input.BYTES_PER_ELEMENT;
  const ctor = p.input.constructor as Ctor<ScanArray>;
  const units = call.units(chainBounds(n, size, call.threads));
  const common = {
    kind: 'scanChain',
    bounds: units.bounds,
    ctrl: units.ctrl,
    dtype: p.dtype,
    exclusive: p.exclusive,
    initial: p.initial,
    carries: call.acquire(units.count * 8),
    published: call.acquire(units.count * 4),
  } as const;
  new Int32Array(common.published).fill(0);
  // Lined up with the input mod 16 bytes: V8 copies between arrays whose addresses differ by 4 mod 8 several times slower.
  const at = p.input.byteOffset % 16;
  const b = units.bounds;
  if (env.pool.sharedModule !== undefined && !(p.input.buffer instanceof SharedArrayBuffer) && at + p.input.byteLength <= SHARED_MEMORY_MAX_BYTES) {
    const { memory } = call.memory(at + p.input.byteLength);
    const staged = new ctor(memory.memory.buffer, at, n);
    const out = call.output(ctor, n, ctx.out, staged);
    units.run({ ...common, source: { memory, at }, out: out.view === staged ? undefined : out.ref }, call.threads, (u) => {
      const t0 = now();
      copyInto(staged, p.input.subarray(b[u]!, b[u + 1]!), b[u]!);
      call.uploadMs += now() - t0;
    });
    call.copiedInBytes += p.input.byteLength;
    await call.finish(() => out.complete());
    return { data: out.result(), ...copyTimes(call, ctx.timing) };
  }
  const input = call.input<ScanArray>(p.input);
  // Each unit is in a worker's memory before its result is written, so writing over our own copy of the input is safe.
  const out = call.output(ctor, n, ctx.out, input.owned ? input.view : undefined);
  units.run({ ...common, source: { input: input.ref }, out: out.ref }, call.threads, (u) => input.ensure(b[u + 1]!));
  await call.finish(() => out.complete());
  return { data: out.result(), ...copyTimes(call, ctx.timing) };
}

/** `wasm-simd` (the default where the runtime has WebAssembly SIMD) is `chained`, `two-pass` the JavaScript kernels. */
export function scanOp(env: Env): OpImplementation<'scan'> {
  // Inline calls run the cpu backend's default kernel: WebAssembly SIMD where the runtime has it.
  const s = wasmSupport();
  const simd = 'module' in s ? s : undefined;
  const run = (p: ScanProblem, ctx: OpContext<ScanArray>, pooled: typeof twoPass): Promise<OpOutput<ScanArray>> => {
    const n = p.input.length;
    if (inline(env, 'scan', n)) {
      const out = ctx.out ?? allocScanOutput(p.input);
      if (simd !== undefined) withKernels(simd, (w) => scanRangeSimd(w, p.input, out, 0, n, p.initial, p.exclusive, p.dtype));
      else scanRange(p.input, out, 0, n, p.initial, p.exclusive, p.dtype);
      return Promise.resolve({ data: out, notes: [INLINE_NOTE] });
    }
    return pooled(env, newCall(env, 'scan', ctx.signal), p, ctx);
  };
  const twoPassJs: OpImplementation<'scan'>['variants'][string] = (p, ctx) => run(p, ctx, twoPass);
  if (simd === undefined) return { defaultVariant: 'two-pass', variants: { 'two-pass': twoPassJs } };
  return {
    defaultVariant: 'wasm-simd',
    variants: {
      'wasm-simd': (p, ctx) => run(p, ctx, chained),
      'two-pass': twoPassJs,
    },
  };
}
