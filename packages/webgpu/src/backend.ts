import { assertObject, assertOneOf, BackendUnavailableError, assertInteger } from '@kernelkit/core';
import { createBackend, type Backend } from '@kernelkit/ops';
import { openAdapter, type AdapterKind } from './runtime/adapter.js';
import { GpuDevice } from './runtime/device.js';
import { conv2dOp } from './ops/conv2d.js';
import { convLayerOp } from './ops/conv-layer.js';
import { gridSearchOp } from './ops/grid-search.js';
import { scanOp } from './ops/scan.js';
import { stencil3dOp } from './ops/stencil3d.js';

export interface WebGpuBackendOptions {
  /** 'hardware' refuses software adapters, 'software' asks for llvmpipe; default 'any' (hardware first). */
  readonly adapter?: AdapterKind;
  /** Largest scan chunk in elements (default: one storage binding). Lets tests exercise the carry path. */
  readonly scanChunkElements?: number;
  /** Flags for Dawn's create() (e.g. 'enable-dawn-features=disable_robustness'); default HARDWARE_DAWN_FLAGS on the hardware path, none on OpenGL ES. */
  readonly dawnFlags?: readonly string[];
  /** Ms of FMA spin before each timed pass so GPU clocks have ramped (runtime/clock-warmup.ts); default 60 on hardware. */
  readonly clockWarmUpMs?: number;
}

/** A WebGPU backend on Dawn. Rejects with BackendUnavailableError, naming the reasons, when no adapter fits. */
export async function createWebGpuBackend(options: WebGpuBackendOptions = {}): Promise<Backend> {
  assertObject(options, 'options');
  const kind = options.adapter ?? 'any';
  assertOneOf(kind, 'options.adapter', ['hardware', 'software', 'any'] as const);
  if (options.scanChunkElements !== undefined) assertInteger(options.scanChunkElements, 'options.scanChunkElements', 1);
  const dawnFlags: readonly string[] | undefined = (options as WebGpuBackendOptions).dawnFlags;
  const opened = await openAdapter(kind, dawnFlags);
  if ('reasons' in opened) {
    throw new BackendUnavailableError(`no ${kind === 'any' ? '' : `${kind} `}WebGPU adapter`, opened.reasons.map((reason) => ({ backend: 'webgpu', reason })));
  }
  let gpu: GpuDevice;
  try {
    gpu = await GpuDevice.open(opened, (options as WebGpuBackendOptions).clockWarmUpMs);
  } catch (e) {
    throw new BackendUnavailableError('the WebGPU device could not be created', [{ backend: 'webgpu', reason: (e as Error).message }], { cause: e });
  }
  const a = opened.info;
  return createBackend({
    name: 'webgpu',
    info: {
      name: 'webgpu',
      description: `WebGPU (Dawn ${opened.backend === 'opengles' ? 'OpenGL ES' : 'default'} backend) on ${a.description || a.vendor}${a.software ? ' (software)' : ''}`,
      software: a.software,
      adapter: a,
      capabilities: { f64: false },
    },
    ops: {
      conv2d: conv2dOp(gpu),
      stencil3d: stencil3dOp(gpu),
      scan: scanOp(gpu, options.scanChunkElements),
      gridSearch: gridSearchOp(gpu),
      convLayer: convLayerOp(gpu),
    },
    // Wait for queued calls, then destroy the device and drop the create() object.
    release: () => gpu.exclusive(async () => {}).catch(() => {}).then(() => gpu.destroy()),
  });
}
