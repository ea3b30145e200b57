import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BackendUnavailableError, UnsupportedError } from '@kernelkit/core';
import { createGpujsBackend, GPUJS_MODES, probeGpujsModes } from '../src/index.js';

const run = promisify(execFile);

describe('gpujs mode selection', () => {
  it('probes every mode and gives a reason for each unavailable one', async () => {
    const probe = await probeGpujsModes();
    expect(Object.keys(probe).sort()).toEqual([...GPUJS_MODES].sort());
    expect(probe.cpu.available).toBe(true);
    for (const m of GPUJS_MODES) if (!probe[m].available) expect(probe[m].reason).toMatch(/\S/);
  });

  it('reports the mode gpu.js actually built, for forced modes', async () => {
    for (const mode of ['webasm', 'cpu'] as const) {
      const b = await createGpujsBackend({ mode });
      try {
        expect(b.info.mode).toBe(mode);
        expect(b.info.software).toBe(true);
        expect(b.info.capabilities.f64).toBe(false);
      } finally {
        await b.dispose();
      }
    }
  });

  it('auto mode never picks a software webgpu adapter and names what it skipped', async () => {
    const probe = await probeGpujsModes();
    const b = await createGpujsBackend();
    try {
      const expected = probe.webgpu.available && probe.webgpu.reason === undefined ? 'webgpu' : probe.headlessgl.available ? 'headlessgl' : probe.webasm.available ? 'webasm' : 'cpu';
      expect(b.info.mode).toBe(expected);
      if (expected !== 'webgpu') expect(b.info.description).toMatch(/skipped gpujs\/webgpu/);
    } finally {
      await b.dispose();
    }
  });

  it('a forced mode that cannot run is a BackendUnavailableError naming the mode and why', async () => {
    const probe = await probeGpujsModes();
    const missing = GPUJS_MODES.find((m) => !probe[m].available);
    if (missing === undefined) return expect(probe.cpu.available).toBe(true); // all modes run here
    const err = await createGpujsBackend({ mode: missing }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect((err as Error).message).toContain(`'${missing}'`);
    expect((err as BackendUnavailableError).failures[0]?.reason).toBe(probe[missing].reason);
  });

  it('refuses f64 with UnsupportedError naming input', async () => {
    const b = await createGpujsBackend({ mode: 'cpu' });
    try {
      const err = await b.scan({ input: new Float64Array(4) }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnsupportedError);
      expect((err as UnsupportedError).parameter).toBe('input');
    } finally {
      await b.dispose();
    }
  });

  it('a script that uses and disposes the backend exits by itself', async () => {
    const script = fileURLToPath(new URL('./fixtures/exit-by-itself.mjs', import.meta.url));
    for (const mode of ['auto', 'webasm', 'webgpu']) {
      const { stdout } = await run(process.execPath, [script, mode], { timeout: 60_000 });
      expect(stdout).toMatch(/^(ok|unavailable) /m);
    }
  });
});
