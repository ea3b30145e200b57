import { createBackend, type Backend, type OpImplementation, type OpName } from '@kernelkit/ops';
import type { GpujsMode } from './gpujs.js';
import { createRuntime, type Runtime } from './runtime.js';
import { conv2d } from './ops/conv2d.js';
import { convLayer } from './ops/conv-layer.js';
import { gridSearch } from './ops/grid-search.js';
import { scan } from './ops/scan.js';
import { stencil3d } from './ops/stencil3d.js';

/** Each call of the op runs in a runtime session, so the kernels it uses stay cached until it ends. */
function inSession<O extends OpName>(rt: Runtime, impl: OpImplementation<O>): OpImplementation<O> {
  const variants = Object.fromEntries(Object.entries(impl.variants).map(([name, runner]) => [name, ((p, ctx) => rt.session(async () => runner(p, ctx))) as typeof runner]));
  return { ...impl, variants };
}

export interface GpujsBackendOptions {
  /** Force one gpu.js mode; a forced mode that cannot run is a BackendUnavailableError. */
  readonly mode?: GpujsMode;
}

/**
 * The gpu.js backend. Without `mode` it takes the first that starts of webgpu (hardware adapter
 * only) → headlessgl → webasm → cpu; the modes it skipped, and why, are in `info.description`.
 * `info.mode` is the mode of the kernel class gpu.js actually built for a probe kernel.
 */
export async function createGpujsBackend(options: GpujsBackendOptions = {}): Promise<Backend> {
  const { rt, skipped } = await createRuntime(options.mode);
  const skippedText = skipped.length > 0 ? `; skipped ${skipped.map((s) => `${s.backend} (${s.reason})`).join(', ')}` : '';
  return createBackend({
    name: 'gpujs',
    info: {
      name: 'gpujs',
      description: `${rt.description}${skippedText}`,
      software: rt.software,
      mode: rt.mode,
      capabilities: { f64: false },
    },
    ops: {
      conv2d: inSession(rt, conv2d(rt)),
      stencil3d: inSession(rt, stencil3d(rt)),
      scan: inSession(rt, scan(rt)),
      gridSearch: inSession(rt, gridSearch(rt)),
      convLayer: inSession(rt, convLayer(rt)),
    },
    release: () => rt.release(),
  });
}
