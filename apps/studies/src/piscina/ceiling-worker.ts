/**
 * Worker side of ceilings.ts: waits on a shared start flag so every thread begins together,
 * runs one fixed-size probe on its own private data and posts its busy time.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { WasmKernels, conv2dRows, conv2dRowsSimd, convLayerPlanes, convLayerPlanesSimd, gridPrunedRange, gridPrunedRangesSimd, prefixCount, wasmSupport } from '@kernelkit/cpu';
import { CS610_DISP_PATH, CS610_GRID_PATH, readCs610Problem, reduceGrid, validateGridSearch } from '@kernelkit/ops';
import type { ProbeName } from './ceiling-probes.js';
import { CONV2D_PROBE, CONV_LAYER_PROBE, GRID_PROBE_STEPS, STREAM_ELEMENTS, ALU_ITERATIONS } from './ceiling-probes.js';

interface Init {
  readonly probe: ProbeName;
  readonly start: Int32Array;
}
const { probe, start } = workerData as Init;

function alu(): number {
  // Eight independent dependency chains keep the FP pipes full; the result is returned so
  // nothing is dead code.
  let a0 = 1, a1 = 1.1, a2 = 1.2, a3 = 1.3, a4 = 1.4, a5 = 1.5, a6 = 1.6, a7 = 1.7;
  const m = 0.999999, c = 1e-7;
  for (let i = 0; i < ALU_ITERATIONS; i++) {
    a0 = a0 * m + c; a1 = a1 * m + c; a2 = a2 * m + c; a3 = a3 * m + c;
    a4 = a4 * m + c; a5 = a5 * m + c; a6 = a6 * m + c; a7 = a7 * m + c;
  }
  return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

const src = probe === 'stream' ? new Float32Array(STREAM_ELEMENTS).fill(1) : undefined;
const dst = probe === 'stream' ? new Float32Array(STREAM_ELEMENTS) : undefined;
function stream(): number {
  // Two passes of a scaled copy over arrays far larger than any cache: DRAM read + write.
  for (let pass = 0; pass < 2; pass++) for (let i = 0; i < STREAM_ELEMENTS; i++) dst![i] = src![i]! * 1.0001 + 0.5;
  return dst![STREAM_ELEMENTS - 1]!;
}

// The kernels the backends run by default: WebAssembly SIMD where the runtime has it, one
// instance per thread as each Piscina worker has; the JavaScript kernels only without it.
const simd = probe === 'conv2d' || probe === 'convLayer' || probe === 'gridSearch' ? wasmSupport() : undefined;
const kernels = simd !== undefined && 'module' in simd ? new WasmKernels(simd.module) : undefined;

const cv = CONV2D_PROBE;
const cvIn = probe === 'conv2d' ? Float32Array.from({ length: cv.height * cv.width }, (_, i) => ((i * 2654435761) % 1000) / 1000) : undefined;
const cvF = probe === 'conv2d' ? Float32Array.from({ length: cv.k * cv.k }, (_, i) => (i % 7) / 7 - 0.5) : undefined;
const cvOut = probe === 'conv2d' ? new Float32Array(cv.height * cv.width) : undefined;
const cvAcc = new Float64Array(cv.width);
function conv2d(): number {
  if (kernels !== undefined) conv2dRowsSimd(kernels, cvIn!, cvF!, cvOut!, cv.height, cv.width, cv.k, 0, cv.height);
  else conv2dRows(cvIn!, cvF!, cvOut!, cv.height, cv.width, cv.k, 0, cv.height, cvAcc);
  return cvOut![0]!;
}

const cl = CONV_LAYER_PROBE;
const clIn = probe === 'convLayer' ? Float32Array.from({ length: cl.batch * cl.channels * cl.height * cl.width }, (_, i) => ((i * 2654435761) % 1000) / 1000) : undefined;
const clW = probe === 'convLayer' ? Float32Array.from({ length: cl.maps * cl.channels * cl.k * cl.k }, (_, i) => (i % 5) / 5 - 0.4) : undefined;
const clOut = probe === 'convLayer' ? new Float32Array(cl.batch * cl.maps * cl.outHeight * cl.outWidth) : undefined;
const clAcc = new Float64Array(cl.outHeight * cl.outWidth);
function convLayer(): number {
  if (kernels !== undefined) convLayerPlanesSimd(kernels, clIn!, clW!, undefined, false, clOut!, cl, 0, cl.batch * cl.maps);
  else convLayerPlanes(clIn!, clW!, undefined, false, clOut!, cl, 0, cl.batch * cl.maps, clAcc);
  return clOut![0]!;
}

// The whole search as one range of prefixes over the first two axes, as a Piscina task runs its ranges.
const grid = probe === 'gridSearch' ? validateGridSearch(reduceGrid(await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH), GRID_PROBE_STEPS)) : undefined;
function gridSearch(): number {
  const outer = 2;
  const range = kernels !== undefined ? gridPrunedRangesSimd(kernels, grid!, outer) : (start: number, end: number, emit: (x: Float64Array) => boolean) => gridPrunedRange(grid!, outer, start, end, emit);
  let found = 0;
  range(0, prefixCount(grid!, outer), () => (found++, true));
  return found;
}

const run = { alu, stream, conv2d, convLayer, gridSearch }[probe];
run(); // warm-up: JIT tiers and first-touch page faults stay out of the timed run
parentPort!.postMessage({ ready: true });
Atomics.wait(start, 0, 0);
const t0 = performance.now();
const sink = run();
parentPort!.postMessage({ ms: performance.now() - t0, sink });
