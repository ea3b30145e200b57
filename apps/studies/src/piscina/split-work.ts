/**
 * Shared by split.ts and split-worker.ts: the workloads and the pieces of work one thread does
 * for a share of a workload. Each piece lives where it runs (its own WebAssembly instance, its
 * own memory), so what split.ts times is the thread's work and nothing that moves it there.
 */
import { conv2dRowsSimd, convLayerPlanesSimd, WasmKernels, type WasmSupport } from '@kernelkit/cpu';

export type WasmModule = WasmSupport['module'];
import { convLayerOutputShape } from '@kernelkit/ops';

export const WORKLOADS = {
  'conv2d-k11': { op: 'conv2d', batch: 4, height: 512, width: 512, k: 11 },
  'conv2d-k5': { op: 'conv2d', batch: 1, height: 1024, width: 1024, k: 5 },
  'l1-b100': { op: 'convLayer', batch: 100, channels: 1, height: 86, width: 86, maps: 4, k: 7 },
  'l2-b100': { op: 'convLayer', batch: 100, channels: 4, height: 40, width: 40, maps: 16, k: 7 },
  'l1-b1000': { op: 'convLayer', batch: 1000, channels: 1, height: 86, width: 86, maps: 4, k: 7 },
  'l2-b1000': { op: 'convLayer', batch: 1000, channels: 4, height: 40, width: 40, maps: 16, k: 7 },
} as const;
export type WorkloadName = keyof typeof WORKLOADS;
export type Workload = (typeof WORKLOADS)[WorkloadName];

/**
 * What a thread can be asked to do with its share [from, to) of a workload's units (conv2d:
 * rows of the flattened batch·height; convLayer: images):
 * - kernel: the WebAssembly kernel alone, on operands already in its memory (no copies);
 * - range: the CPU package's range function (copies into and out of its memory) into a shared
 *   output that every round reuses (pages already touched);
 * - range-fresh: the same into a fresh SharedArrayBuffer each round (first-touch page faults);
 * - touch: only writing the share of a fresh SharedArrayBuffer of the output's size.
 */
export type PieceKind = 'kernel' | 'range' | 'range-fresh' | 'touch';

export interface Shared {
  readonly input: Float32Array;
  readonly weights: Float32Array;
  /** The reused output, shared by every thread. */
  readonly out: Float32Array;
}

export function units(w: Workload): number {
  return w.op === 'conv2d' ? w.batch * w.height : w.batch;
}

export function outputLength(w: Workload): number {
  if (w.op === 'conv2d') return w.batch * w.height * w.width;
  const o = convLayerOutputShape(w);
  return w.batch * w.maps * o.outHeight * o.outWidth;
}

/** Pseudo-random operands in shared memory, so every thread reads the same arrays. */
export function makeShared(w: Workload): Shared {
  const inLen = w.op === 'conv2d' ? w.batch * w.height * w.width : w.batch * w.channels * w.height * w.width;
  const wLen = w.op === 'conv2d' ? w.k * w.k : w.maps * w.channels * w.k * w.k;
  const fill = (n: number, seed: number): Float32Array => {
    const a = new Float32Array(new SharedArrayBuffer(n * 4));
    let x = seed;
    for (let i = 0; i < n; i++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      a[i] = x / 2 ** 31 - 1;
    }
    return a;
  };
  const out = new Float32Array(new SharedArrayBuffer(outputLength(w) * 4)).fill(0);
  return { input: fill(inLen, 1), weights: fill(wLen, 2), out };
}

/** Units per output element block: where unit `u`'s output starts. */
function outStart(w: Workload, u: number): number {
  return (u * outputLength(w)) / units(w);
}

/**
 * Prepares one thread's piece: returns a function that does it once. The kernel piece lays its
 * share out in its own memory beforehand (as the range functions would), so each run is the
 * kernel's arithmetic alone.
 */
export function preparePiece(module: WasmModule, w: Workload, s: Shared, kind: PieceKind, from: number, to: number): () => void {
  const kk = new WasmKernels(module);
  const n = to - from;
  if (kind === 'touch') {
    const len = outStart(w, to) - outStart(w, from);
    return () => {
      new Float32Array(new SharedArrayBuffer(len * 4)).fill(1);
    };
  }
  if (kind === 'range' || kind === 'range-fresh') {
    const fresh = kind === 'range-fresh';
    if (w.op === 'conv2d') {
      return () => {
        const out = fresh ? new Float32Array(new SharedArrayBuffer(s.out.byteLength)) : s.out;
        conv2dRowsSimd(kk, s.input, s.weights, out, w.height, w.width, w.k, from, to);
      };
    }
    const o = convLayerOutputShape(w);
    const d = { channels: w.channels, height: w.height, width: w.width, maps: w.maps, k: w.k, ...o };
    return () => {
      const out = fresh ? new Float32Array(new SharedArrayBuffer(s.out.byteLength)) : s.out;
      convLayerPlanesSimd(kk, s.input, s.weights, undefined, false, out, d, from * w.maps, to * w.maps);
    };
  }
  // kernel: operands laid out as the range functions lay them out, then only the kernel call.
  if (w.op === 'conv2d') {
    const r = (w.k - 1) >> 1;
    const stride = w.width + 2 * r + 8;
    const filterLen = (w.k * w.k + 3) & ~3;
    const inOff = filterLen;
    const outOff = inOff + (n + 2 * r + 4) * stride;
    kk.reserve((outOff + n * w.width) * 4);
    kk.f32.set(s.weights, 0);
    kk.f32.fill(0.5, inOff, outOff + n * w.width);
    return () => kk.k.conv2d(inOff * 4, stride, 0, w.k, outOff * 4, n, w.width);
  }
  const o = convLayerOutputShape(w);
  const image = w.channels * w.height * w.width;
  const plane = o.outHeight * o.outWidth;
  const packed = Math.ceil(w.maps / 4) * 4 * w.channels * w.k * w.k;
  const bOff = packed;
  const inOff = bOff + Math.ceil(w.maps / 4) * 4 + 4;
  const outOff = inOff + n * image + 8 + w.k;
  kk.reserve((outOff + n * w.maps * plane) * 4);
  kk.f32.fill(0.01, 0, outOff + n * w.maps * plane);
  return () => {
    for (let b = 0; b < n; b++) kk.k.convLayer((inOff + b * image) * 4, w.channels, w.height, w.width, 0, w.maps, w.k, bOff * 4, 0, (outOff + b * w.maps * plane) * 4);
  };
}
