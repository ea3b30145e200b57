import { assertBoolean, assertObject, assertOneOf, BackendUnavailableError, assertInteger, InvalidArgumentError } from '@kernelkit/core';
import { createBackend, type Backend, type OpImplementation, type OpName, type OpRunner } from '@kernelkit/ops';
import { openAdapter, type AdapterKind } from './runtime/adapter.js';
import { GpuDevice } from './runtime/device.js';
import { registerDevice } from './runtime/registry.js';
import { conv2dOp } from './ops/conv2d.js';
import { convLayerOp } from './ops/conv-layer.js';
import { gridSearchOp } from './ops/grid-search.js';
import { scanOp } from './ops/scan.js';
import { stencil3dOp } from './ops/stencil3d.js';
import type { TunerOptions } from './tuning/tuner.js';

export interface WebGpuBackendOptions {
  /** 'hardware' refuses software adapters, 'software' asks for llvmpipe; default 'any' (hardware first). */
  readonly adapter?: AdapterKind;
  /** Largest scan chunk in elements (default: one storage binding). Lets tests exercise the carry path. */
  readonly scanChunkElements?: number;
  /** Flags for Dawn's create() (e.g. 'enable-dawn-features=disable_robustness'); default HARDWARE_DAWN_FLAGS on the hardware path, none on OpenGL ES. */
  readonly dawnFlags?: readonly string[];
  /** Ms of FMA spin before each timed pass so GPU clocks have ramped (runtime/clock-warmup.ts); default 60 on hardware. */
  readonly clockWarmUpMs?: number;
  /**
   * JSON file where the `auto` variants (conv2d, convLayer) keep their tuned picks per adapter and
   * shape class (read once, replaced atomically after each sweep). Default: env
   * KERNELKIT_TUNING_CACHE, else memory only.
   */
  readonly tuningCache?: string;
  /** Largest convLayer chunk in images (default: about 32 MiB of input or output per chunk, see PIPELINE_CHUNK_BYTES in runtime/pipeline.ts). */
  readonly convLayerChunkItems?: number;
  /** Overlap chunk n+1's upload and chunk n−1's readback with chunk n's compute (default true); false runs chunks one after another. */
  readonly convLayerOverlap?: boolean;
}

/**
 * Every runner of `impl`, refusing at once when the backend became unusable (a lost device
 * that could not be recreated: see GpuDevice), and noting a recreation the call waited for.
 */
// A ResidentOpImplementation passes through here as an OpImplementation (its runners are
// assignable); the spread below keeps its `residentInputs` flag.
function recovering<O extends OpName>(gpu: GpuDevice, impl: OpImplementation<O>): OpImplementation<O> {
  const variants: Record<string, OpRunner<O>> = {};
  for (const [name, run] of Object.entries(impl.variants)) {
    variants[name] = async (p, ctx) => {
      gpu.assertUsable();
      const seen = gpu.recoveryCount;
      const out = await run(p, ctx);
      const recovered = gpu.recoveriesSince(seen);
      return recovered.length === 0 ? out : { ...out, notes: [...recovered, ...(out.notes ?? [])] };
    };
  }
  return { ...impl, variants };
}

/** A WebGPU backend on Dawn. Rejects with BackendUnavailableError, naming the reasons, when no adapter fits. */
export async function createWebGpuBackend(options: WebGpuBackendOptions = {}): Promise<Backend> {
  assertObject(options, 'options');
  const kind = options.adapter ?? 'any';
  assertOneOf(kind, 'options.adapter', ['hardware', 'software', 'any'] as const);
  if (options.scanChunkElements !== undefined) assertInteger(options.scanChunkElements, 'options.scanChunkElements', 1);
  if (options.convLayerChunkItems !== undefined) assertInteger(options.convLayerChunkItems, 'options.convLayerChunkItems', 1);
  if (options.convLayerOverlap !== undefined) assertBoolean(options.convLayerOverlap, 'options.convLayerOverlap');
  if (options.tuningCache !== undefined && (typeof options.tuningCache !== 'string' || options.tuningCache === '')) {
    throw new InvalidArgumentError('options.tuningCache', 'must be a non-empty file path');
  }
  const tuning: TunerOptions = { cachePath: options.tuningCache ?? (process.env['KERNELKIT_TUNING_CACHE'] || undefined) };
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
  const backend = createBackend({
    name: 'webgpu',
    info: {
      name: 'webgpu',
      description: `WebGPU (Dawn ${opened.backend === 'opengles' ? 'OpenGL ES' : 'default'} backend) on ${a.description || a.vendor}${a.software ? ' (software)' : ''}`,
      software: a.software,
      adapter: a,
      capabilities: { f64: false },
    },
    ops: {
      conv2d: recovering(gpu, conv2dOp(gpu, tuning)),
      stencil3d: recovering(gpu, stencil3dOp(gpu)),
      scan: recovering(gpu, scanOp(gpu, options.scanChunkElements)),
      gridSearch: recovering(gpu, gridSearchOp(gpu)),
      convLayer: recovering(gpu, convLayerOp(gpu, tuning, { chunkItems: options.convLayerChunkItems, overlap: options.convLayerOverlap })),
    },
    // Wait for queued calls, then destroy every buffer and the device and drop the create() object.
    release: () => gpu.close(),
  });
  registerDevice(backend, gpu);
  return backend;
}
