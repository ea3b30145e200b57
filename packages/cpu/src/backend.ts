import os from 'node:os';
import { createBackend, type Backend } from '@kernelkit/ops';
import { conv2dOp } from './ops/conv2d.js';
import { convLayerOp } from './ops/conv-layer.js';
import { gridSearchOp } from './ops/grid-search.js';
import { scanOp } from './ops/scan.js';
import { stencil3dOp } from './ops/stencil3d.js';
import { describeKernels, wasmSupport } from './wasm/runtime.js';
import { resultOutputs } from './outputs.js';

/**
 * The sequential CPU backend: one thread, typed arrays. Every op defaults to WebAssembly SIMD
 * kernels (`wasm-simd`) where the runtime has WebAssembly SIMD, and offers only the JavaScript
 * kernels (`direct`; `sequential` for scan; `pruned` for the grid search) where it does not; `info.description` says which.
 * It starts wherever JavaScript runs, so it is the last resort of every fallback chain; it throws
 * only where `KERNELKIT_WASM_SIMD` is set to what this runtime cannot run (a configuration error).
 */
export function createCpuBackend(): Backend {
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  const s = wasmSupport();
  const simd = 'module' in s ? s : undefined;
  const kernels = describeKernels(s);
  const { results, newOutput } = resultOutputs();
  return createBackend({
    name: 'cpu',
    info: {
      name: 'cpu',
      description: `sequential, 1 thread on ${cpu} (Node ${process.version}), ${kernels}`,
      software: false,
      threads: 1,
      capabilities: { f64: true },
    },
    ops: { conv2d: conv2dOp(simd, newOutput), stencil3d: stencil3dOp(simd, newOutput), scan: scanOp(simd, newOutput), gridSearch: gridSearchOp(simd), convLayer: convLayerOp(simd, newOutput) },
    handOver: (data) => results.handOver(data),
    release: () => results.close(),
  });
}
