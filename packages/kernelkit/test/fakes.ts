import { OP_NAMES, type Backend, type BackendName } from '@kernelkit/ops';
import { createCpuBackend } from '@kernelkit/cpu';
import type { WebGpuProbe } from '@kernelkit/webgpu';
import type { BackendLoaders, LoadOptions } from '../src/loaders.js';

/** A fake backend, with how often it was disposed and warmed up. */
export type FakeBackend = Backend & { disposeCalls: number; warmUpCalls: number };

/** A real CPU backend wearing another backend's name: enough to test selection and delegation. */
export function fakeBackend(name: BackendName, software = false): FakeBackend {
  const cpu = createCpuBackend();
  const b = {
    ...Object.fromEntries(OP_NAMES.map((op) => [op, (a: never, o: never) => (cpu[op] as (a: never, o: never) => unknown)(a, o)])),
    name,
    info: { ...cpu.info, name, software },
    disposeCalls: 0,
    warmUpCalls: 0,
    async warmUp() {
      b.warmUpCalls++;
    },
    get disposed() {
      return cpu.disposed;
    },
    variants: (op: (typeof OP_NAMES)[number]) => cpu.variants(op),
    async dispose() {
      b.disposeCalls++;
      await cpu.dispose();
    },
    [Symbol.asyncDispose]: () => cpu.dispose(),
  };
  return b as unknown as FakeBackend;
}

export interface Calls {
  readonly log: { backend: BackendName; options: LoadOptions }[];
}

type Behaviour = { ok: true; software?: boolean } | { ok: false; reason: string };

export function fakeLoaders(spec: Partial<Record<BackendName, Behaviour>>, probe?: WebGpuProbe): { loaders: BackendLoaders; calls: Calls; created: FakeBackend[] } {
  const calls: Calls = { log: [] };
  const created: FakeBackend[] = [];
  const make = (name: BackendName) => async (options: LoadOptions) => {
    calls.log.push({ backend: name, options });
    const s = spec[name] ?? { ok: false, reason: `${name} not configured` };
    if (!s.ok) throw new Error(s.reason);
    const b = fakeBackend(name, s.software ?? false);
    created.push(b);
    return b;
  };
  const loaders: BackendLoaders = {
    cpu: make('cpu'),
    piscina: make('piscina'),
    webgpu: make('webgpu'),
    gpujs: make('gpujs'),
    ...(probe ? { probeWebGpu: async () => probe } : {}),
  };
  return { loaders, calls, created };
}
