import { Pacer, UnsupportedError } from '@kernelkit/core';
import { allocScanOutput, type OpImplementation, type ScanArray, type ScanProblem } from '@kernelkit/ops';
import type { Runtime } from '../runtime.js';
import { callWork, copyResult, kernelFn, type KernelThis } from './kernel-util.js';

/**
 * Scan as a sequence of gather kernels (gpu.js has no workgroup memory or barriers):
 * a reduce pass sums blocks of B elements, the block sums are scanned recursively (exclusive),
 * and a down pass gives each element its block offset plus the sum of its block predecessors.
 * log_B(n) levels, O(n) work per level (B/2 adds per element in the down pass).
 *
 * Integers are bit-exact at any length: u32/i32 values are split into 16-bit limbs held in f32.
 * Every sum a kernel forms is at most 65535 (offset) + B·65535 (block) + 65535 (carry-in)
 * < 2^22 with B = 32, far inside f32's exact integers (2^24), and every result is normalised
 * back to limbs in [0, 65536) (carry from lo into hi, hi taken mod 2^16 = the mod-2^32 wrap)
 * with divisions by 65536, which are exact in binary floating point. So there is no length
 * bound; lengths beyond one call are processed in chunks with an exact u32 carry on the host.
 */
const B = 32;

/**
 * Integer reduce: output [2·nb], lo limbs then hi limbs, normalised. 1-D (not [nb, 2]) because
 * a GL output texture is limited to 16384 texels per row.
 */
const reduceInt = kernelFn(function (this: KernelThis, a: number[]) {
  let b = this.thread.x;
  let limb = 0;
  if (b >= this.constants.NB!) {
    b = b - this.constants.NB!;
    limb = 1;
  }
  const start = b * this.constants.B!;
  let lo = 0;
  let hi = 0;
  for (let j = 0; j < this.constants.B!; j++) {
    const i = start + j;
    if (i < this.constants.N!) {
      lo += a[i]!;
      hi += a[this.constants.N! + i]!;
    }
  }
  const c = Math.floor(lo / 65536);
  if (limb === 0) return lo - c * 65536;
  const h = hi + c;
  return h - Math.floor(h / 65536) * 65536;
});

/** Integer down pass: output [2·n] (lo limbs, then hi); `off` holds block offsets as [nb lo, nb hi]. */
const downInt = kernelFn(function (this: KernelThis, a: number[], off: number[], initLo: number, initHi: number) {
  let i = this.thread.x;
  let limb = 0;
  if (i >= this.constants.N!) {
    i = i - this.constants.N!;
    limb = 1;
  }
  const b = Math.floor(i / this.constants.B!);
  const start = b * this.constants.B!;
  let lo = off[b]! + initLo;
  let hi = off[this.constants.NB! + b]! + initHi;
  for (let j = 0; j < this.constants.B!; j++) {
    const t = start + j;
    if (t < i || (t === i && this.constants.EXCL === 0)) {
      lo += a[t]!;
      hi += a[this.constants.N! + t]!;
    }
  }
  const c = Math.floor(lo / 65536);
  if (limb === 0) return lo - c * 65536;
  const h = hi + c;
  return h - Math.floor(h / 65536) * 65536;
});

const reduceF32 = kernelFn(function (this: KernelThis, a: number[]) {
  const start = this.thread.x * this.constants.B!;
  let s = 0;
  for (let j = 0; j < this.constants.B!; j++) {
    const i = start + j;
    if (i < this.constants.N!) s += a[i]!;
  }
  return s;
});

const downF32 = kernelFn(function (this: KernelThis, a: number[], off: number[], init: number) {
  const i = this.thread.x;
  const b = Math.floor(i / this.constants.B!);
  const start = b * this.constants.B!;
  let s = 0;
  for (let j = 0; j < this.constants.B!; j++) {
    const t = start + j;
    if (t < i || (t === i && this.constants.EXCL === 0)) s += a[t]!;
  }
  return init + (off[b]! + s);
});

type Level = (a: Float32Array, n: number, exclusive: boolean, init: readonly number[]) => Promise<Float32Array>;

/** One recursive scan over `n` values (limbs = 2 for integers, 1 for f32). */
function scanner(rt: Runtime, limbs: 1 | 2, notes: Set<string>): Level {
  const level: Level = async (a, n, exclusive, init) => {
    const nb = Math.ceil(n / B);
    let off: Float32Array;
    if (nb === 1) off = new Float32Array(limbs);
    else {
      const rk = rt.kernel(`scan-reduce:${limbs}:${n}`, limbs === 2 ? reduceInt : reduceF32, { output: [nb * limbs], constants: { B, N: n, NB: nb } });
      const sums = new Float32Array(nb * limbs);
      copyResult(await rt.call(rk, [a], notes), sums, 0);
      off = await level(sums, nb, true, limbs === 2 ? [0, 0] : [0]);
    }
    const dk = rt.kernel(`scan-down:${limbs}:${n}:${exclusive}`, limbs === 2 ? downInt : downF32, {
      output: [n * limbs],
      constants: { B, N: n, NB: nb, EXCL: exclusive ? 1 : 0 },
    });
    const res = new Float32Array(n * limbs);
    copyResult(await rt.call(dk, [a, off, ...init], notes), res, 0);
    return res;
  };
  return level;
}

/** Elements per chunk: within one call's cells, and (see callWork) about B adds each within the work per call. */
const chunkOf = (rt: Runtime, signal: AbortSignal | undefined, limbs: number): number => Math.max(B, Math.floor(Math.min(rt.maxCells / limbs, callWork(rt, signal) / B / limbs) / B) * B);

async function scanInts(rt: Runtime, p: ScanProblem, out: Uint32Array | Int32Array, notes: Set<string>, signal: AbortSignal | undefined): Promise<void> {
  const input = p.input as Uint32Array | Int32Array;
  const n = input.length;
  const chunk = chunkOf(rt, signal, 2);
  const pacer = new Pacer(signal);
  const level = scanner(rt, 2, notes);
  let carry = p.initial >>> 0;
  for (let s = 0; s < n; s += chunk) {
    const len = Math.min(chunk, n - s);
    const limbs = new Float32Array(2 * len);
    for (let i = 0; i < len; i++) {
      const v = input[s + i]!;
      limbs[i] = v & 0xffff;
      limbs[len + i] = v >>> 16;
    }
    const lastIn = input[s + len - 1]!; // read before `out` (maybe the input) is written
    const res = await level(limbs, len, p.exclusive, [carry & 0xffff, carry >>> 16]);
    for (let i = 0; i < len; i++) out[s + i] = res[i]! + res[len + i]! * 65536;
    carry = p.exclusive ? (out[s + len - 1]! + lastIn) >>> 0 : out[s + len - 1]! >>> 0;
    await pacer.tick();
  }
}

async function scanF32(rt: Runtime, p: ScanProblem, out: Float32Array, notes: Set<string>, signal: AbortSignal | undefined): Promise<void> {
  const input = p.input as Float32Array;
  const n = input.length;
  const chunk = chunkOf(rt, signal, 1);
  const pacer = new Pacer(signal);
  const level = scanner(rt, 1, notes);
  let carry = Math.fround(p.initial);
  for (let s = 0; s < n; s += chunk) {
    const len = Math.min(chunk, n - s);
    const lastIn = input[s + len - 1]!;
    const res = await level(input.subarray(s, s + len), len, p.exclusive, [carry]);
    out.set(res, s);
    carry = p.exclusive ? Math.fround(out[s + len - 1]! + lastIn) : out[s + len - 1]!;
    await pacer.tick();
  }
}

export function scan(rt: Runtime): OpImplementation<'scan'> {
  return {
    defaultVariant: 'kernel',
    check(p) {
      if (p.dtype === 'f64') throw new UnsupportedError('gpu.js computes in f32; pass a Float32Array, Uint32Array or Int32Array', 'input');
    },
    variants: {
      async kernel(p, ctx) {
        const out: ScanArray = ctx.out ?? allocScanOutput(p.input);
        const notes = new Set<string>();
        if (p.input.length > 0) {
          if (p.dtype === 'f32') await scanF32(rt, p, out as Float32Array, notes, ctx.signal);
          else await scanInts(rt, p, out as Uint32Array | Int32Array, notes, ctx.signal);
        }
        return { data: out, notes: [...notes] };
      },
    },
  };
}
