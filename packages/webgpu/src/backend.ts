import { assertBoolean, assertObject, assertOneOf, BackendUnavailableError, assertInteger, InvalidArgumentError } from '@kernelkit/core';
import { conv2dOutputLength, convLayerOutputLength, createBackend, type Backend, type OpImplementation, type OpName, type OpProblem, type OpRunner } from '@kernelkit/ops';
import { assertDevicesOption, describeDevices, devicesToOpen } from './runtime/devices.js';
import { firstDeviceOp, shardBatchOp } from './runtime/shards.js';
import { openAdapter, type AdapterKind } from './runtime/adapter.js';
import { GpuDevice } from './runtime/device.js';
import { registerDevice } from './runtime/registry.js';
import { conv2dOp } from './ops/conv2d.js';
import { convLayerOp } from './ops/conv-layer.js';
import { gridSearchOp, shardedGridSearchOp } from './ops/grid-search.js';
import { scanOp } from './ops/scan.js';
import { stencil3dOp } from './ops/stencil3d.js';
import { shareTuners, type TunerOptions } from './tuning/tuner.js';

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
  /**
   * GPU devices one call's work is spread over (default 1): gridSearch is cut into sub-grids,
   * conv2d and convLayer into image ranges, each device taking the next piece as it frees up,
   * with its own staging rings and chunk pipeline. A number opens that many devices on the chosen
   * adapter (on one GPU: several queues of the same GPU). `'all'` opens one device per GPU this
   * process can tell apart (see `countGpus`: Dawn's node bindings pick adapters by name, so
   * identical GPUs count once). scan and stencil3d run on the first device.
   */
  readonly devices?: number | 'all';
  /** Overlap chunk n+1's upload and chunk n−1's readback with chunk n's compute (default true); false runs chunks one after another. */
  readonly convLayerOverlap?: boolean;
}

/**
 * Every runner of `impl`, refusing at once when the backend became unusable (a lost device
 * that could not be recreated: see GpuDevice), and noting a recreation the call waited for.
 */
// A ResidentOpImplementation passes through here as an OpImplementation (its runners are
// assignable); the spread below keeps its `residentInputs` flag.
function recovering<O extends OpName>(gpus: readonly GpuDevice[], impl: OpImplementation<O>): OpImplementation<O> {
  const variants: Record<string, OpRunner<O>> = {};
  for (const [name, run] of Object.entries(impl.variants)) {
    variants[name] = async (p, ctx) => {
      // With several devices the call goes ahead while one of them is usable.
      if (gpus.length === 1 || gpus.every((g) => !g.usable)) gpus[0]!.assertUsable();
      const seen = gpus.map((g) => g.recoveryCount);
      const out = await run(p, ctx);
      const recovered = gpus.flatMap((g, i) => g.recoveriesSince(seen[i]!).map((r) => (gpus.length === 1 ? r : `device ${i}: ${r}`)));
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
  assertDevicesOption(options.devices);
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
  const gpus: GpuDevice[] = [];
  try {
    for (const adapter of await devicesToOpen(opened, (options as WebGpuBackendOptions).devices ?? 1)) gpus.push(await GpuDevice.open(adapter, (options as WebGpuBackendOptions).clockWarmUpMs));
  } catch (e) {
    for (const g of gpus) g.destroy();
    throw new BackendUnavailableError('the WebGPU device could not be created', [{ backend: 'webgpu', reason: (e as Error).message }], { cause: e });
  }
  const gpu = gpus[0]!;
  shareTuners(gpus, tuning);
  const a = opened.info;
  const several = gpus.length > 1;
  const batchOp = <O extends 'conv2d' | 'convLayer'>(make: (g: GpuDevice) => OpImplementation<O>, perImage: (p: OpProblem<O>) => { input: number; output: number }): OpImplementation<O> =>
    several ? shardBatchOp(gpus, gpus.map(make), perImage, 1) : make(gpu);
  const unsharded = <O extends OpName>(impl: OpImplementation<O>, why: string): OpImplementation<O> => (several ? firstDeviceOp(impl, gpus.length, why) : impl);
  const backend = createBackend({
    name: 'webgpu',
    info: {
      name: 'webgpu',
      description: `WebGPU (Dawn ${opened.backend === 'opengles' ? 'OpenGL ES' : 'default'} backend) on ${a.description || a.vendor}${a.software ? ' (software)' : ''}${several ? `, ${gpus.length} devices (${describeDevices(gpus)})` : ''}`,
      software: a.software,
      adapter: a,
      capabilities: { f64: false },
    },
    ops: {
      conv2d: recovering(gpus, batchOp((g) => conv2dOp(g, tuning), (p) => ({ input: p.height * p.width, output: conv2dOutputLength({ ...p, batch: 1 }) }))),
      stencil3d: recovering([gpu], unsharded(stencil3dOp(gpu), 'stencil3d is not sharded')),
      scan: recovering([gpu], unsharded(scanOp(gpu, (options as WebGpuBackendOptions).scanChunkElements), 'scan is not sharded')),
      gridSearch: recovering(gpus, several ? shardedGridSearchOp(gpus) : gridSearchOp(gpu)),
      convLayer: recovering(
        gpus,
        batchOp(
          (g) => convLayerOp(g, tuning, { chunkItems: (options as WebGpuBackendOptions).convLayerChunkItems, overlap: (options as WebGpuBackendOptions).convLayerOverlap }) as OpImplementation<'convLayer'>,
          (p) => ({ input: p.channels * p.height * p.width, output: convLayerOutputLength({ ...p, batch: 1 }) }),
        ),
      ),
    },
    // A sharded call's output comes from the first device; the others have none to hand over.
    handOver: (data) => {
      for (const g of gpus) g.handOver(data);
    },
    // The clock spin that timed passes run first (ClockWarmUp), on its own: absent on software adapters.
    warmUp: async () => {
      await Promise.all(gpus.map((g) => g.warmUpClocks()));
    },
    // Wait for queued calls, then destroy every buffer and every device and drop the create() objects.
    release: async () => {
      await Promise.all(gpus.map((g) => g.close()));
    },
  });
  registerDevice(backend, gpus);
  return backend;
}
