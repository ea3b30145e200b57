import { BackendUnavailableError, InvalidArgumentError, assertInteger, readEnumEnv, errorMessage, type BackendFailure } from '@kernelkit/core';
import type { Backend, BackendName } from '@kernelkit/ops';
import { defaultLoaders, type BackendLoaders, type LoadOptions } from './loaders.js';
import { ADAPTER_KINDS, BACKEND_NAMES, DEFAULT_ORDER, SOFTWARE_ADAPTER_REASON, type AdapterKind } from './names.js';

export interface ResolveOptions {
  /** Order to try; default webgpu (hardware adapter) → piscina → cpu. */
  readonly backends?: readonly BackendName[];
  /** Force one backend: it starts or this throws. Wins over KERNELKIT_BACKEND. */
  readonly backend?: BackendName;
  readonly threads?: number;
  /** WebGPU adapter kind; wins over KERNELKIT_ADAPTER. */
  readonly adapter?: AdapterKind;
  /** The WebGPU backend's `devices` option: GPU devices one call is sharded over (default 1; see @kernelkit/webgpu). */
  readonly webgpuDevices?: number | 'all';
}

export interface ResolveContext {
  readonly loaders?: BackendLoaders;
  readonly env?: NodeJS.ProcessEnv;
}

export interface Resolved {
  readonly backend: Backend;
  readonly selected: BackendName;
  readonly skipped: readonly BackendFailure[];
  readonly forced: boolean;
}

function checkName(value: unknown, name: string): asserts value is BackendName {
  if (typeof value !== 'string' || !(BACKEND_NAMES as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(name, `expected one of ${BACKEND_NAMES.join(', ')}, got ${JSON.stringify(value)}`);
  }
}

/** Validates the options; every error names the option (or the environment variable). */
export function readResolveOptions(options: ResolveOptions, env: NodeJS.ProcessEnv): { order: readonly BackendName[]; forced?: BackendName; adapter?: AdapterKind; threads?: number; webgpuDevices?: number | 'all' } {
  if (options.backends !== undefined) {
    if (!Array.isArray(options.backends) || options.backends.length === 0) throw new InvalidArgumentError('options.backends', 'expected a non-empty array of backend names');
    options.backends.forEach((b, i) => checkName(b, `options.backends[${i}]`));
  }
  if (options.backend !== undefined) checkName(options.backend, 'options.backend');
  if (options.adapter !== undefined && !(ADAPTER_KINDS as readonly string[]).includes(options.adapter)) {
    throw new InvalidArgumentError('options.adapter', `expected one of ${ADAPTER_KINDS.join(', ')}, got ${JSON.stringify(options.adapter)}`);
  }
  if (options.threads !== undefined) assertInteger(options.threads, 'options.threads', 1, 1024);
  if (options.webgpuDevices !== undefined && options.webgpuDevices !== 'all') assertInteger(options.webgpuDevices, 'options.webgpuDevices', 1, 16);
  // Env is read (and validated) even when an option overrides it: a typo there should not hide.
  const envBackend = readEnumEnv('KERNELKIT_BACKEND', BACKEND_NAMES, env);
  const envAdapter = readEnumEnv('KERNELKIT_ADAPTER', ADAPTER_KINDS, env);
  const forced = options.backend ?? envBackend;
  const adapter = options.adapter ?? envAdapter;
  return {
    order: options.backends ?? DEFAULT_ORDER,
    ...(forced === undefined ? {} : { forced }),
    ...(adapter === undefined ? {} : { adapter }),
    ...(options.threads === undefined ? {} : { threads: options.threads }),
    ...(options.webgpuDevices === undefined ? {} : { webgpuDevices: options.webgpuDevices }),
  };
}

/**
 * Auto-selection: tries `order` and returns the first backend that starts. A software WebGPU
 * adapter is never picked here — it loses to the worker pool on every op — so it is skipped
 * with the way to force it. A forced backend gets no fallback: failure throws.
 */
export async function resolveBackend(options: ResolveOptions = {}, ctx: ResolveContext = {}): Promise<Resolved> {
  const loaders = ctx.loaders ?? defaultLoaders;
  const { order, forced, adapter, threads, webgpuDevices } = readResolveOptions(options, ctx.env ?? process.env);
  const load: LoadOptions = { ...(threads === undefined ? {} : { threads }), ...(adapter === undefined ? {} : { adapter }), ...(webgpuDevices === undefined ? {} : { webgpuDevices }) };

  if (forced !== undefined) {
    try {
      const backend = await loaders[forced](forced === 'webgpu' ? { ...load, adapter: adapter ?? 'hardware' } : load);
      return { backend, selected: forced, skipped: [], forced: true };
    } catch (err) {
      throw new BackendUnavailableError(`the forced backend ${forced} could not start`, [{ backend: forced, reason: errorMessage(err) }], { cause: err });
    }
  }

  const skipped: BackendFailure[] = [];
  for (const name of order) {
    try {
      const backend = name === 'webgpu' ? await tryWebGpu(loaders, load, skipped) : await loaders[name](load);
      if (backend) return { backend, selected: name, skipped, forced: false };
    } catch (err) {
      skipped.push({ backend: name, reason: errorMessage(err) });
    }
  }
  throw new BackendUnavailableError(`no backend could start (tried ${order.join(', ')})`, skipped);
}

/** Returns undefined (after recording why) when WebGPU only has a software adapter. */
async function tryWebGpu(loaders: BackendLoaders, load: LoadOptions, skipped: BackendFailure[]): Promise<Backend | undefined> {
  const wanted = load.adapter ?? 'hardware';
  if (wanted === 'software') {
    skipped.push({ backend: 'webgpu', reason: SOFTWARE_ADAPTER_REASON });
    return undefined;
  }
  if (loaders.probeWebGpu) {
    const probe = await loaders.probeWebGpu();
    if (!probe.available) throw new Error(probe.reason ?? 'no WebGPU adapter');
    if (probe.software === true || probe.adapter?.software === true) {
      skipped.push({ backend: 'webgpu', reason: SOFTWARE_ADAPTER_REASON });
      return undefined;
    }
  }
  const backend = await loaders.webgpu({ ...load, adapter: 'hardware' });
  if (backend.info.software) {
    // A loader that ignored the 'hardware' request: still never auto-pick software.
    await backend.dispose();
    skipped.push({ backend: 'webgpu', reason: SOFTWARE_ADAPTER_REASON });
    return undefined;
  }
  return backend;
}
