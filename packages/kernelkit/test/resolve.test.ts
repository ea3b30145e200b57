import { describe, expect, it } from 'vitest';
import { BackendUnavailableError, InvalidArgumentError } from '@kernelkit/core';
import { makeScanArgs, readCs610Problem, reduceGrid, CS610_DISP_PATH, CS610_GRID_PATH } from '@kernelkit/ops';
import { resolveBackend } from '../src/resolve.js';
import { createKernels } from '../src/kernels.js';
import { SOFTWARE_ADAPTER_REASON } from '../src/names.js';
import { fakeLoaders } from './fakes.js';

const noEnv = {};

describe('auto-selection order', () => {
  it('picks WebGPU on a hardware adapter first', async () => {
    const { loaders, calls } = fakeLoaders({ webgpu: { ok: true }, piscina: { ok: true }, cpu: { ok: true } }, { available: true, software: false });
    const r = await resolveBackend({}, { loaders, env: noEnv });
    expect(r.selected).toBe('webgpu');
    expect(r.skipped).toEqual([]);
    expect(calls.log.map((c) => c.backend)).toEqual(['webgpu']);
    expect(calls.log[0]?.options.adapter).toBe('hardware');
    await r.backend.dispose();
  });

  it('never auto-picks a software adapter over Piscina, and says how to force it', async () => {
    const { loaders, calls } = fakeLoaders({ webgpu: { ok: true, software: true }, piscina: { ok: true }, cpu: { ok: true } }, { available: true, software: true });
    const r = await resolveBackend({}, { loaders, env: noEnv });
    expect(r.selected).toBe('piscina');
    expect(r.skipped).toEqual([{ backend: 'webgpu', reason: SOFTWARE_ADAPTER_REASON }]);
    // The probe decided: no device was created on llvmpipe.
    expect(calls.log.map((c) => c.backend)).toEqual(['piscina']);
    await r.backend.dispose();
  });

  it('disposes and skips a software backend even when the probe is missing', async () => {
    const { loaders, created } = fakeLoaders({ webgpu: { ok: true, software: true }, piscina: { ok: true }, cpu: { ok: true } });
    const r = await resolveBackend({}, { loaders, env: noEnv });
    expect(r.selected).toBe('piscina');
    expect(r.skipped[0]?.reason).toBe(SOFTWARE_ADAPTER_REASON);
    expect(created[0]?.disposed).toBe(true);
    await r.backend.dispose();
  });

  it('falls back to cpu with every reason when WebGPU and Piscina fail', async () => {
    const { loaders } = fakeLoaders({ webgpu: { ok: false, reason: 'no hardware adapter' }, piscina: { ok: false, reason: 'workers not built' }, cpu: { ok: true } }, { available: true, software: false });
    const r = await resolveBackend({}, { loaders, env: noEnv });
    expect(r.selected).toBe('cpu');
    expect(r.skipped).toEqual([
      { backend: 'webgpu', reason: 'no hardware adapter' },
      { backend: 'piscina', reason: 'workers not built' },
    ]);
    await r.backend.dispose();
  });

  it('reports the probe reason when there is no adapter at all', async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: true } }, { available: false, reason: 'no adapter found' });
    const r = await resolveBackend({}, { loaders, env: noEnv });
    expect(r.skipped).toEqual([{ backend: 'webgpu', reason: 'no adapter found' }]);
    await r.backend.dispose();
  });

  it('does not try gpujs unless asked, and follows a custom order', async () => {
    const { loaders, calls } = fakeLoaders({ gpujs: { ok: true }, cpu: { ok: true } }, { available: false, reason: 'none' });
    const auto = await resolveBackend({}, { loaders, env: noEnv });
    expect(calls.log.map((c) => c.backend)).not.toContain('gpujs');
    await auto.backend.dispose();
    const asked = await resolveBackend({ backends: ['gpujs', 'cpu'] }, { loaders, env: noEnv });
    expect(asked.selected).toBe('gpujs');
    await asked.backend.dispose();
  });

  it('throws BackendUnavailableError listing every failure when nothing starts', async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: false, reason: 'p failed' } });
    const err = await resolveBackend({ backends: ['piscina', 'gpujs'] }, { loaders, env: noEnv }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect((err as BackendUnavailableError).failures.map((f) => f.backend)).toEqual(['piscina', 'gpujs']);
  });
});

describe('forced backends', () => {
  it('KERNELKIT_BACKEND forces one, with no fallback', async () => {
    const { loaders } = fakeLoaders({ webgpu: { ok: false, reason: 'no hardware adapter' }, cpu: { ok: true } });
    const err = await resolveBackend({}, { loaders, env: { KERNELKIT_BACKEND: 'webgpu' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect((err as BackendUnavailableError).failures).toEqual([{ backend: 'webgpu', reason: 'no hardware adapter' }]);
    expect((err as Error).message).toContain('no hardware adapter');
  });

  it('KERNELKIT_BACKEND=webgpu KERNELKIT_ADAPTER=software uses the software adapter', async () => {
    const { loaders, calls } = fakeLoaders({ webgpu: { ok: true, software: true }, piscina: { ok: true } }, { available: true, software: true });
    const r = await resolveBackend({}, { loaders, env: { KERNELKIT_BACKEND: 'webgpu', KERNELKIT_ADAPTER: 'software' } });
    expect(r.selected).toBe('webgpu');
    expect(r.forced).toBe(true);
    expect(calls.log[0]?.options.adapter).toBe('software');
    await r.backend.dispose();
  });

  it('the backend option wins over the environment', async () => {
    const { loaders } = fakeLoaders({ cpu: { ok: true }, piscina: { ok: true } });
    const r = await resolveBackend({ backend: 'cpu' }, { loaders, env: { KERNELKIT_BACKEND: 'piscina' } });
    expect(r.selected).toBe('cpu');
    await r.backend.dispose();
  });

  it('passes threads to Piscina', async () => {
    const { loaders, calls } = fakeLoaders({ piscina: { ok: true } });
    const r = await resolveBackend({ backend: 'piscina', threads: 3 }, { loaders, env: noEnv });
    expect(calls.log[0]?.options.threads).toBe(3);
    await r.backend.dispose();
  });

  it('passes webgpuDevices to WebGPU (its devices option)', async () => {
    const { loaders, calls } = fakeLoaders({ webgpu: { ok: true } });
    const r = await resolveBackend({ backend: 'webgpu', webgpuDevices: 2 }, { loaders, env: noEnv });
    expect(calls.log[0]?.options.webgpuDevices).toBe(2);
    await r.backend.dispose();
  });
});

describe('invalid options and environment', () => {
  const { loaders } = fakeLoaders({ cpu: { ok: true } });
  it.each([
    [{ KERNELKIT_BACKEND: 'cuda' }, 'KERNELKIT_BACKEND'],
    [{ KERNELKIT_ADAPTER: 'gpu' }, 'KERNELKIT_ADAPTER'],
  ])('rejects %o naming the variable', async (env, name) => {
    const err = await resolveBackend({}, { loaders, env }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).parameter).toBe(name);
  });

  it.each([
    [{ backend: 'cuda' }, 'options.backend'],
    [{ backends: [] }, 'options.backends'],
    [{ backends: ['cpu', 'tpu'] }, 'options.backends[1]'],
    [{ adapter: 'gpu' }, 'options.adapter'],
    [{ threads: 0 }, 'options.threads'],
    [{ webgpuDevices: 0 }, 'options.webgpuDevices'],
  ])('rejects %o naming the option', async (options, name) => {
    const err = await resolveBackend(options as never, { loaders, env: noEnv }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).parameter).toBe(name);
  });
});

describe('createKernels', () => {
  it('delegates ops, applies the default variant where it exists and exposes selected/skipped', async () => {
    const { loaders } = fakeLoaders({ piscina: { ok: false, reason: 'nope' }, cpu: { ok: true } }, { available: false, reason: 'none' });
    const prev = process.env['KERNELKIT_BACKEND'];
    delete process.env['KERNELKIT_BACKEND'];
    const k = await createKernels({ variant: 'naive', route: 'fixed' }, loaders);
    if (prev !== undefined) process.env['KERNELKIT_BACKEND'] = prev;
    expect(k.selected).toBe('cpu');
    expect(k.skipped.map((s) => s.backend)).toEqual(['webgpu', 'piscina']);
    const grid = reduceGrid(await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH), 3);
    expect((await k.gridSearch(grid)).variant).toBe('naive');
    expect((await k.gridSearch(grid, { variant: 'pruned' })).variant).toBe('pruned');
    // 'naive' is not a scan variant on cpu: the backend's default is used instead of an error.
    const s = await k.scan(makeScanArgs({ n: 5, dtype: 'u32' }));
    expect(s.variant).toBe('wasm-simd');
    expect(s.data.length).toBe(5);
    await k.dispose();
    expect(k.disposed).toBe(true);
  });
});
