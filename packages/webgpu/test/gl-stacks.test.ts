import { describe, expect, it } from 'vitest';
import { BackendUnavailableError, glStackConflict, markGlStackStarted } from '@kernelkit/core';
import { createWebGpuBackend, probeWebGpu } from '../src/index.js';

// Process state: this file's process is one where the stacks are marked in this order.
describe("Dawn's OpenGL ES backend and headless-gl in one process (see gl-stacks in core)", () => {
  it('a software backend records its OpenGL ES device, so that headless-gl is refused afterwards', async () => {
    const probe = await probeWebGpu();
    if (!probe.available || probe.software !== true) return expect(probe.reason ?? 'a hardware adapter').toMatch(/\S/);
    expect(glStackConflict('headless-gl')).toBeUndefined(); // the probe made no device
    const b = await createWebGpuBackend({ adapter: 'software' });
    await b.dispose();
    expect(glStackConflict('headless-gl')).toMatch(/Dawn's OpenGL ES backend/);
  });

  it('once headless-gl has made a context, a software adapter is refused with that reason, before Dawn is asked', async () => {
    markGlStackStarted('headless-gl');
    const err = await createWebGpuBackend({ adapter: 'software' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendUnavailableError);
    expect((err as BackendUnavailableError).failures.map((f) => f.reason).join('\n')).toMatch(/headless-gl .* has made a GL context in this process/);
  });
});
