import { addCarry, scanRange, scanRangeSimd, wasmSupport, withKernels } from '@kernelkit/cpu';
import { allocScanOutput, type OpImplementation, type ScanArray } from '@kernelkit/ops';
import { split } from '../call.js';
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
 * Two-pass parallel scan over 2 chunks per thread:
 *   1. per-chunk sums (workers; the last chunk's sum is never needed),
 *   2. carries on the main thread: carry[i] = initial ⊕ sum[0] ⊕ … ⊕ sum[i−1] (wrapping for
 *      integers, so u32/i32 are bit-exact; f64 for floats, like the sequential scan's accumulator),
 *   3. local scans of each chunk from its carry (workers), with `scanRange`, the CPU backend's kernel.
 * Steps 2–3 are pipelined: chunk i's local scan is queued the moment sums 0…i−1 are known. The
 * local scans write the result directly (see `SharedOutput`); only for a caller's ordinary `out`
 * do they write over our copy of the input, which saves a buffer, and chunk i's local scan then
 * also waits for chunk i's own sum task, which must read the chunk before it is overwritten.
 */
export function scanOp(env: Env): OpImplementation<'scan'> {
  // Inline calls run the cpu backend's default kernel: WebAssembly SIMD where the runtime has it.
  const s = wasmSupport();
  const simd = 'module' in s ? s : undefined;
  return {
    defaultVariant: 'two-pass',
    variants: {
      async 'two-pass'(p, ctx) {
        const n = p.input.length;
        if (inline(env, 'scan', n)) {
          const out = ctx.out ?? allocScanOutput(p.input);
          if (simd !== undefined) withKernels(simd, (w) => scanRangeSimd(w, p.input, out, 0, n, p.initial, p.exclusive, p.dtype));
          else scanRange(p.input, out, 0, n, p.initial, p.exclusive, p.dtype);
          return { data: out, notes: [INLINE_NOTE] };
        }
        const call = newCall(env, 'scan', ctx.signal);
        const input = call.input<ScanArray>(p.input);
        // The workers write the result itself (fresh, or a shared `out`); for an ordinary `out`
        // they write over our own copy of the input, which is then copied into `out` at the end.
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
      },
    },
  };
}
