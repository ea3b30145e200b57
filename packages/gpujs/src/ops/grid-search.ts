import { LimitExceededError, Pacer } from '@kernelkit/core';
import { GridRecheck, PointSink, type GridSearchProblem, type OpImplementation, U32F } from '@kernelkit/ops';
import type { Runtime } from '../runtime.js';
import { callWork, kernelFn, type KernelThis } from './kernel-util.js';

/** Inner-dimension points per thread: a bitmask of SEG bits is an exact f32 integer (< 2^24). */
const SEG = 24;
/**
 * Threads per call. Thread ids are decoded into digits with f32 division plus an exact ±1
 * fix-up; that needs the quotient's error below 1, true for ids below 2^22.
 */
const MAX_THREADS = 2 ** 22;

/**
 * f32 screen. Thread t owns one point of the "middle" dimensions (decoded from t) and a segment
 * of up to SEG points of the last dimension; the host fixes the "outer" dimensions per call
 * and passes their contribution per constraint in `partial`. `alive` is a bitmask over the
 * segment, kept as an f32 integer (bit tests with exact divisions by powers of two); a bit is
 * cleared when some constraint rejects the point by more than the margin in `bnd`.
 * A NaN comparison is false, so NaN never rejects: such points go to the f64 re-check.
 * Arrays are packed (midMeta = [counts | offsets into midAxes], cons = [c_last | partial | d |
 * bound], m each) because WebGPU devices allow only 8 storage buffers per shader stage by default.
 */
const screenKernel = kernelFn(function (
  this: KernelThis,
  cMid: number[],
  midMeta: number[],
  midAxes: number[],
  lastAxis: number[],
  cons: number[],
) {
  const t = this.thread.x + 0.0;
  let q = Math.floor((t + 0.5) / this.constants.NSEG!);
  let seg = t - q * this.constants.NSEG!;
  if (seg < 0) {
    q = q - 1;
    seg = seg + this.constants.NSEG!;
  }
  if (seg >= this.constants.NSEG!) {
    q = q + 1;
    seg = seg - this.constants.NSEG!;
  }
  const segStart = seg * this.constants.SEG!;
  let nIn = this.constants.NL! - segStart;
  if (nIn > this.constants.SEG!) nIn = this.constants.SEG!;
  let full = 1;
  for (let r = 0; r < this.constants.SEG!; r++) {
    if (r < nIn) full = full * 2;
  }
  let alive = full - 1;
  for (let i = 0; i < this.constants.M!; i++) {
    if (alive > 0) {
      let s = cons[this.constants.M! + i]!;
      let rest = q;
      for (let jj = 0; jj < this.constants.NMID!; jj++) {
        const j = this.constants.NMID! - 1 - jj;
        const c = midMeta[j]!;
        let qq = Math.floor((rest + 0.5) / c);
        let r = rest - qq * c;
        if (r < 0) {
          qq = qq - 1;
          r = r + c;
        }
        if (r >= c) {
          qq = qq + 1;
          r = r - c;
        }
        s += cMid[i * this.constants.NMID! + j]! * midAxes[midMeta[this.constants.NMID! + j]! + r]!;
        rest = qq;
      }
      let bit = 1;
      for (let r = 0; r < this.constants.SEG!; r++) {
        if (r < nIn) {
          const shifted = Math.floor(alive / bit);
          if (shifted - Math.floor(shifted / 2) * 2 === 1) {
            const v = s + cons[i]! * lastAxis[segStart + r]!;
            if (Math.abs(v - cons[2 * this.constants.M! + i]!) > cons[3 * this.constants.M! + i]!) alive = alive - bit;
          }
        }
        bit = bit * 2;
      }
    }
  }
  return alive;
});

/** gpu.js cannot take empty arrays; a 1-element pad is never read. */
const f32 = (a: ArrayLike<number>): Float32Array => (a.length === 0 ? new Float32Array(1) : Float32Array.from(a));

/**
 * The screen's bound per constraint. Computing s = Σ_j c_ij·x_j − d_i in f32 (c, x, d and the
 * host's partial sum each rounded to f32: 1 rounding each; products: 1; ≤ D additions in any
 * order; the subtraction: 1) differs from the exact value by at most (D+4)·u·(Σ_j|c_ij|·|x_j|
 * + |d_i|) + u·e_i with u = 2^-24, and the f64 test itself errs by ≤ D·2^-53·(same), which is
 * far smaller. The margin takes 4·(D+6)·u·(Mabs + |d| + e), with Mabs the largest Σ|c||x| over
 * the grid: 4× the worst case, to cover GL/WGSL implementations that round divisions and
 * products within a few ulp rather than correctly. So a point the screen rejects
 * (|s32 − d| > e + margin) has |s_f64 − d| > e: it fails the exact test, and skipping it is
 * safe. Every point the screen keeps is re-checked with `GridRecheck` (gridPointPasses' f64
 * test), so the output is exactly the f64 reference's. The bound is rounded up when converted to f32.
 */
function screenBounds(p: GridSearchProblem): Float64Array {
  const u = U32F;
  const bnd = new Float64Array(p.m);
  for (let i = 0; i < p.m; i++) {
    let mabs = 0;
    for (let j = 0; j < p.d; j++) {
      let xmax = 0;
      for (const v of p.axes[j]!) xmax = Math.max(xmax, Math.abs(v));
      mabs += Math.abs(p.coefficients[i * p.d + j]!) * xmax;
    }
    const e = p.tolerances[i]!;
    const margin = 4 * (p.d + 6) * u * (mabs + Math.abs(p.targets[i]!) + e);
    bnd[i] = (e + margin) * (1 + 2 ** -20);
  }
  return bnd;
}

interface Split {
  readonly midStart: number;
  readonly nSeg: number;
  readonly threads: number;
  readonly outerCount: number;
}

function split(p: GridSearchProblem, maxThreads: number): Split {
  const nL = p.counts[p.d - 1]!;
  const nSeg = Math.ceil(nL / SEG);
  let threads = nSeg;
  let midStart = p.d - 1;
  while (midStart > 0 && threads * p.counts[midStart - 1]! <= maxThreads) threads *= p.counts[--midStart]!;
  let outerCount = 1;
  for (let j = 0; j < midStart; j++) outerCount *= p.counts[j]!;
  return { midStart, nSeg, threads, outerCount };
}

export function gridSearch(rt: Runtime): OpImplementation<'gridSearch'> {
  return {
    defaultVariant: 'kernel',
    variants: {
      async kernel(p, ctx) {
        const sink = new PointSink(p.d, p.maxPoints);
        if (p.total === 0) return { data: sink.finish() };
        const notes = new Set<string>();
        // With a signal, threads per call also bounded by work (see callWork): SEG tests per constraint each.
        const { midStart, nSeg, threads, outerCount } = split(p, Math.min(MAX_THREADS, rt.maxCells, Math.floor(callWork(rt, ctx.signal) / SEG / Math.max(1, p.m))));
        const D = p.d;
        const nMid = D - 1 - midStart;
        const nL = p.counts[D - 1]!;
        const cMid = new Float32Array(Math.max(1, p.m * nMid));
        // cons = [c_last | partial (per call) | d | bound], m each
        const cons = new Float32Array(Math.max(1, 4 * p.m));
        for (let i = 0; i < p.m; i++) {
          for (let q = 0; q < nMid; q++) cMid[i * nMid + q] = p.coefficients[i * D + midStart + q]!;
          cons[i] = p.coefficients[i * D + D - 1]!;
        }
        cons.set(p.targets, 2 * p.m);
        cons.set(screenBounds(p), 3 * p.m);
        const offs: number[] = [];
        const vals: number[] = [];
        for (let j = midStart; j < D - 1; j++) {
          offs.push(vals.length);
          for (const v of p.axes[j]!) vals.push(v);
        }
        const midMeta = f32([...p.counts.slice(midStart, D - 1), ...offs]);
        const midAxes = f32(vals);
        const lastAxis = new Float32Array(nSeg * SEG);
        lastAxis.set(p.axes[D - 1]!);
        const k = rt.kernel(`grid:${p.m}:${nMid}:${nSeg}:${nL}:${threads}`, screenKernel, {
          output: [threads],
          constants: { M: p.m, NMID: nMid, SEG, NSEG: nSeg, NL: nL },
        });
        const outer = new Array<number>(midStart).fill(0);
        const x = new Float64Array(D);
        const recheck = new GridRecheck(p);
        const midDigits = new Array<number>(nMid).fill(0);
        let candidates = 0;
        const pacer = new Pacer(ctx.signal);
        for (let o = 0; o < outerCount; o++) {
          // outer digits of o, last outer dimension fastest (lexicographic order)
          for (let j = midStart - 1, r = o; j >= 0; j--) {
            outer[j] = r % p.counts[j]!;
            r = Math.floor(r / p.counts[j]!);
            x[j] = p.axes[j]![outer[j]!]!;
          }
          for (let i = 0; i < p.m; i++) {
            let s = 0;
            for (let j = 0; j < midStart; j++) s += p.coefficients[i * D + j]! * x[j]!;
            cons[p.m + i] = s;
          }
          const res = (await rt.call(k, [cMid, midMeta, midAxes, lastAxis, cons], notes)) as Float32Array;
          for (let t = 0; t < threads; t++) {
            const alive = res[t]!;
            if (alive === 0) continue;
            const seg = t % nSeg;
            let rest = (t - seg) / nSeg;
            for (let q = nMid - 1; q >= 0; q--) {
              const c = p.counts[midStart + q]!;
              midDigits[q] = rest % c;
              rest = Math.floor(rest / c);
              x[midStart + q] = p.axes[midStart + q]![midDigits[q]!]!;
            }
            for (let r = 0; r < SEG; r++) {
              if (Math.floor(alive / 2 ** r) % 2 !== 1) continue;
              const li = seg * SEG + r;
              if (li >= nL) break;
              x[D - 1] = p.axes[D - 1]![li]!;
              candidates++;
              if (recheck.passes(x) && !sink.push(x)) {
                throw new LimitExceededError('maxPoints', `more than ${p.maxPoints} points pass; raise maxPoints or tighten the constraints`);
              }
            }
          }
          ctx.onProgress?.({ done: o + 1, total: outerCount, unit: 'slices' });
          await pacer.tick();
        }
        notes.add(`f32 screen kept ${candidates} of ${p.total} points; each re-checked in f64 (${sink.count} pass)`);
        return { data: sink.finish(), notes: [...notes] };
      },
    },
  };
}
