import { describe, expect, it } from 'vitest';
import { BackendUnavailableError } from '@kernelkit/core';
import { runDoctor } from '../src/doctor.js';
import { createKernels } from '../src/kernels.js';
import { BACKEND_PACKAGES, importBackendPackage, notInstalledReason, packageLoaders, type ImportModule } from '../src/loaders.js';
import { resolveBackend } from '../src/resolve.js';

/** Imports the real packages, except that the optional backends fail as Node fails for a package that is not installed. */
const withoutOptionalBackends: ImportModule = async (specifier) => {
  if (specifier === BACKEND_PACKAGES.webgpu || specifier === BACKEND_PACKAGES.gpujs) {
    throw Object.assign(new Error(`Cannot find package '${specifier}' imported from ${import.meta.url}`), { code: 'ERR_MODULE_NOT_FOUND' });
  }
  return import(specifier);
};

describe('backend packages that are not installed', () => {
  it("Node's error for a missing package becomes the install hint", async () => {
    // The real error, from a package that exists nowhere: the hint must not depend on the fake above.
    await expect(importBackendPackage('@kernelkit/no-such-backend')).rejects.toThrow(/^not installed: npm install @kernelkit\/no-such-backend$/);
  });

  it('a package whose own dependency is missing is not reported as not installed', async () => {
    const missingDependency: ImportModule = async () => {
      throw Object.assign(new Error(`Cannot find package 'webgpu' imported from /x/node_modules/@kernelkit/webgpu/dist/runtime/adapter.js`), { code: 'ERR_MODULE_NOT_FOUND' });
    };
    await expect(importBackendPackage(BACKEND_PACKAGES.webgpu, missingDependency)).rejects.toThrow(/^cannot import @kernelkit\/webgpu: Cannot find package 'webgpu'/);
  });

  it('auto-selection skips WebGPU with the install hint and picks the next backend', async () => {
    const r = await resolveBackend({ backends: ['webgpu', 'gpujs', 'cpu'] }, { loaders: packageLoaders(withoutOptionalBackends), env: {} });
    try {
      expect(r.selected).toBe('cpu');
      expect(r.skipped).toEqual([
        { backend: 'webgpu', reason: 'not installed: npm install @kernelkit/webgpu' },
        { backend: 'gpujs', reason: 'not installed: npm install @kernelkit/gpujs' },
      ]);
    } finally {
      await r.backend.dispose();
    }
  });

  it('createKernels still works and runs an op on what is installed', async () => {
    const k = await createKernels({ backends: ['webgpu', 'cpu'] }, packageLoaders(withoutOptionalBackends));
    try {
      expect(k.selected).toBe('cpu');
      const r = await k.scan({ input: new Float32Array([1, 2, 3, 4]) });
      expect(Array.from(r.data)).toEqual([1, 3, 6, 10]);
    } finally {
      await k.dispose();
    }
  });

  it('forcing a missing backend fails with the hint', async () => {
    const err = await resolveBackend({ backend: 'webgpu' }, { loaders: packageLoaders(withoutOptionalBackends), env: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect((err as BackendUnavailableError).failures).toEqual([{ backend: 'webgpu', reason: notInstalledReason('@kernelkit/webgpu') }]);
  });

  it('doctor lists each missing backend with the command that adds it', async () => {
    const report = await runDoctor({ threads: 1 }, packageLoaders(withoutOptionalBackends));
    const status = Object.fromEntries(report.backends.map((b) => [b.backend, b.status === 'available' ? 'available' : b.reason]));
    expect(status).toEqual({
      webgpu: 'not installed: npm install @kernelkit/webgpu',
      gpujs: 'not installed: npm install @kernelkit/gpujs',
      piscina: 'available',
      cpu: 'available',
    });
    expect(report.webgpuProbe).toEqual({ status: 'ok', value: { available: false, reason: 'not installed: npm install @kernelkit/webgpu' } });
    expect(report.gpujsModes).toEqual({ status: 'errored', message: 'not installed: npm install @kernelkit/gpujs' });
    expect(report.autoSelection).toMatchObject({ status: 'ok', selected: 'piscina', skipped: [{ backend: 'webgpu', reason: 'not installed: npm install @kernelkit/webgpu' }] });
  });
});
