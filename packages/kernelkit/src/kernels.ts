import type { BackendFailure } from '@kernelkit/core';
import { InvalidArgumentError } from '@kernelkit/core';
import type { Backend, BackendName, OpName, RunOptions } from '@kernelkit/ops';
import type { BackendLoaders } from './loaders.js';
import { resolveBackend, type ResolveOptions } from './resolve.js';

export interface CreateKernelsOptions extends ResolveOptions {
  /** Default variant for every op whose backend has a variant of this name; others keep their default. */
  readonly variant?: string;
}

export interface Kernels extends Backend {
  readonly selected: BackendName;
  readonly skipped: readonly BackendFailure[];
  /** The backend doing the work. */
  readonly backend: Backend;
}

/** Adds the default variant to the caller's options when the backend has it for `op`. */
function withVariant<O extends RunOptions<unknown>>(b: Backend, op: OpName, variant: string | undefined, options: O | undefined): O | undefined {
  if (variant === undefined || options?.variant !== undefined || !b.variants(op).includes(variant)) return options;
  return { ...options, variant } as O;
}

/** The best backend that starts, with every op delegated to it. */
export async function createKernels(options: CreateKernelsOptions = {}, loaders?: BackendLoaders): Promise<Kernels> {
  if (options.variant !== undefined && (typeof options.variant !== 'string' || options.variant === '')) {
    throw new InvalidArgumentError('options.variant', `expected a non-empty string, got ${JSON.stringify(options.variant)}`);
  }
  const { backend: b, selected, skipped } = await resolveBackend(options, loaders === undefined ? {} : { loaders });
  const v = options.variant;
  const kernels: Kernels = {
    name: b.name,
    info: b.info,
    selected,
    skipped,
    backend: b,
    get disposed() {
      return b.disposed;
    },
    conv2d: (a, o) => b.conv2d(a, withVariant(b, 'conv2d', v, o)),
    stencil3d: (a, o) => b.stencil3d(a, withVariant(b, 'stencil3d', v, o)),
    scan: (a, o) => b.scan(a, withVariant(b, 'scan', v, o)),
    gridSearch: (a, o) => b.gridSearch(a, withVariant(b, 'gridSearch', v, o)),
    convLayer: (a, o) => b.convLayer(a, withVariant(b, 'convLayer', v, o)),
    variants: (op) => b.variants(op),
    dispose: () => b.dispose(),
    [Symbol.asyncDispose]: () => b.dispose(),
  };
  return kernels;
}
