import type { BackendName } from '@kernelkit/ops';
import type { BackendLoaders, LoadOptions } from '../loaders.js';
import { DEFAULT_ORDER, type AdapterKind } from '../names.js';

export interface Candidate {
  readonly name: BackendName;
  readonly load: LoadOptions;
}

/**
 * The cache key of a candidate: what was measured depends on the adapter (WebGPU) and the
 * worker count (Piscina), so each gets its own entry. WebGPU is probed (no device is created);
 * `skip` says why it cannot be a candidate here.
 */
export async function backendKey(c: Candidate, loaders: Pick<BackendLoaders, 'probeWebGpu'>): Promise<{ key: string } | { skip: string }> {
  if (c.name === 'piscina') return { key: `piscina/${c.load.threads ?? 'default'} threads` };
  if (c.name !== 'webgpu' || !loaders.probeWebGpu) return { key: c.name };
  const p = await loaders.probeWebGpu();
  if (!p.available) return { skip: p.reason ?? 'no WebGPU adapter' };
  const a = p.adapter;
  const software = p.software === true || a?.software === true;
  if (c.load.adapter === 'hardware' && software) return { skip: 'only a software adapter, and adapter: hardware was asked for' };
  return { key: `webgpu/${a ? `${a.vendor} ${a.architecture} ${a.description}`.trim() : 'adapter'}${software ? ' (software)' : ''}` };
}

/** The backends auto-routing chooses among: WebGPU on any adapter (calibration decides whether a software one earns calls), Piscina, the CPU. */
// The calibration key stays the adapter's: a backend sharding over several devices is measured as one.
export function autoCandidates(threads: number | undefined, adapter: AdapterKind | undefined, webgpuDevices?: number | 'all'): Candidate[] {
  return DEFAULT_ORDER.map((name) => ({ name, load: name === 'webgpu' ? { adapter: adapter ?? 'any', ...(webgpuDevices === undefined ? {} : { webgpuDevices }) } : threads === undefined ? {} : { threads } }));
}
