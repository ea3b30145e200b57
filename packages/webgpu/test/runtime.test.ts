import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BackendUnavailableError, InvalidArgumentError } from '@kernelkit/core';
import { CS610_DISP_PATH, CS610_GRID_PATH, readCs610Problem, reduceGrid, verifyResult, validateGridSearch } from '@kernelkit/ops';
import { scanCase } from '@kernelkit/ops/testing';
import { createWebGpuBackend, probeWebGpu, screenThresholds } from '../src/index.js';

describe('adapter selection and probe', () => {
  it('probe reports the software adapter and is cached', async () => {
    const a = await probeWebGpu();
    expect(a.available).toBe(true);
    expect(await probeWebGpu()).toBe(a);
    expect(typeof a.adapter?.description).toBe('string');
  });
  it('software backend reports llvmpipe as software with f64 off', async () => {
    await using b = await createWebGpuBackend({ adapter: 'software' });
    expect(b.info.software).toBe(true);
    expect(b.info.adapter?.software).toBe(true);
    expect(b.info.capabilities.f64).toBe(false);
    expect(b.info.adapter?.limits['maxStorageBufferBindingSize']).toBeGreaterThan(0);
  });
  it('hardware request on a GPU-less machine is BackendUnavailableError with reasons (or a hardware adapter)', async () => {
    const r = await createWebGpuBackend({ adapter: 'hardware' }).then(
      async (b) => {
        const sw = b.info.software;
        await b.dispose();
        return sw;
      },
      (e: unknown) => e,
    );
    if (r instanceof Error) {
      expect(r).toBeInstanceOf(BackendUnavailableError);
      expect((r as BackendUnavailableError).failures.length).toBeGreaterThan(0);
    } else expect(r).toBe(false);
  });
  it('rejects a bad adapter option naming it', async () => {
    await expect(createWebGpuBackend({ adapter: 'quantum' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('scan in chunks with carries (chunk forced to 2048 elements)', () => {
  const backend = createWebGpuBackend({ adapter: 'software', scanChunkElements: 2048 });
  afterAll(async () => (await backend).dispose());
  for (const variant of ['blelloch', 'reduce-then-scan', 'decoupled']) {
    for (const dtype of ['u32', 'i32', 'f32'] as const) {
      it(`${variant} ${dtype}: 10 000 elements, inclusive and exclusive with carry-in`, async () => {
        const b = await backend;
        for (const [exclusive, initial] of [[false, 0], [true, dtype === 'u32' ? 4_000_000_000 : dtype === 'i32' ? -77 : 1.5]] as const) {
          const args = scanCase(dtype, 10_001, 5, exclusive, initial);
          const res = await b.scan(args, { variant });
          expect(verifyResult('scan', args, res.data)).toBeUndefined();
        }
      });
    }
  }
});

describe('grid search f32 screen', () => {
  it('thresholds are at least the f64 tolerances (the screen never rejects a passing point)', async () => {
    const p = validateGridSearch(reduceGrid(await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH), 13));
    const thr = screenThresholds(p);
    for (let i = 0; i < p.m; i++) expect(thr[i]!).toBeGreaterThan(p.tolerances[i]!);
  });
});

describe('process lifetime', () => {
  const runChild = (body: string) => {
    const script = `
      const { createWebGpuBackend } = await import(${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)});
      const testing = await import(${JSON.stringify(new URL('../dist/testing.js', import.meta.url).href)});
      ${body}
      console.log('done');
    `;
    return spawnSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000, encoding: 'utf8', cwd: fileURLToPath(new URL('..', import.meta.url)) });
  };
  it('a script that uses and disposes the backend exits by itself', () => {
    const child = runChild(`
      const b = await createWebGpuBackend({ adapter: 'software' });
      const r = await b.scan({ input: new Uint32Array([1, 2, 3]) });
      if (r.data.join() !== '1,3,6') process.exit(3);
      await b.dispose();
      if (testing.webgpuStats(b).holdsInstance || testing.liveGpuBuffers() !== 0) process.exit(4);
    `);
    expect(child.error, 'the child must exit by itself before the timeout').toBeUndefined();
    expect(child.status).toBe(0);
    expect(child.stdout).toContain('done');
  });
  it('so does one whose device was lost and recreated, and one whose recreation failed', () => {
    const child = runChild(`
      const b = await createWebGpuBackend({ adapter: 'software' });
      await testing.loseDevice(b);
      const r = await b.scan({ input: new Uint32Array([1, 2, 3]) });
      if (r.data.join() !== '1,3,6' || !String(r.notes).includes('recreated')) process.exit(3);
      await testing.loseDevice(b);
      testing.failNextDeviceRecreation(b, 'simulated');
      if (await b.scan({ input: new Uint32Array([1]) }).then(() => true, () => false)) process.exit(4);
      await b.dispose();
      if (testing.webgpuStats(b).holdsInstance || testing.liveGpuBuffers() !== 0) process.exit(5);
    `);
    expect(child.error, 'the child must exit by itself before the timeout').toBeUndefined();
    expect(child.status, child.stderr.split('\n').filter((l) => !l.startsWith('Warning')).join('\n')).toBe(0);
    expect(child.stdout).toContain('done');
  });
});
