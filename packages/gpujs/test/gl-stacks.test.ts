import { execFile } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { probeGpujsModes } from '../src/index.js';
import { startXvfb } from './xvfb.js';

// Each case runs in a fresh child process: what a process has started is the state under test,
// and the failure being prevented (an X error) ends the process it happens in.
const xvfb = await startXvfb();
const probes = typeof xvfb === 'string' ? undefined : await probeGpujsModes();
const skip = typeof xvfb === 'string' ? xvfb : !probes!.headlessgl.available ? `headlessgl: ${probes!.headlessgl.reason}` : !probes!.webgpu.available ? `webgpu: ${probes!.webgpu.reason}` : probes!.webgpu.reason === undefined ? 'a hardware adapter: Dawn does not use OpenGL ES here' : undefined;
const dir = mkdtempSync(join(tmpdir(), 'kernelkit-gl-stacks-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  if (typeof xvfb !== 'string') xvfb.stop();
});

const DIST = new URL('../dist/index.js', import.meta.url).href;

/** Runs `body` (an ES module body with `gpujs` imported) in a child; returns its stdout lines. */
async function inChild(name: string, body: string): Promise<string[]> {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, `import * as gpujs from ${JSON.stringify(DIST)};\nconst input = new Float32Array([1, 2, 3]);\n${body}\n`);
  const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 90_000 });
  return stdout.trim().split('\n');
}

describe("headless-gl and Dawn's OpenGL ES adapter in one process", () => {
  if (skip !== undefined) {
    it.skip(`skipped: ${skip}`, () => {});
    return;
  }

  it('after a software webgpu-mode backend, headlessgl is refused with the reason, auto mode runs webasm, and the process lives', async () => {
    const out = await inChild(
      'dawn-first',
      `const w = await gpujs.createGpujsBackend({ mode: 'webgpu' });
console.log('webgpu', Array.from((await w.scan({ input })).data).join(','));
const err = await gpujs.createGpujsBackend({ mode: 'headlessgl' }).catch((e) => e);
console.log('headlessgl', err.name, err.failures?.[0]?.reason);
const a = await gpujs.createGpujsBackend();
console.log('auto', a.info.mode, Array.from((await a.scan({ input })).data).join(','));
await a.dispose();
await w.dispose();`,
    );
    expect(out[0]).toBe('webgpu 1,3,6');
    expect(out[1]).toMatch(/^headlessgl BackendUnavailableError Dawn's OpenGL ES backend \(software WebGPU\) has made a device in this process/);
    expect(out[2]).toBe('auto webasm 1,3,6');
  });

  it('after a headlessgl backend, the webgpu mode is refused with the reason', async () => {
    const out = await inChild(
      'gl-first',
      `const g = await gpujs.createGpujsBackend({ mode: 'headlessgl' });
console.log('headlessgl', Array.from((await g.scan({ input })).data).join(','));
const err = await gpujs.createGpujsBackend({ mode: 'webgpu' }).catch((e) => e);
console.log('webgpu', err.name, err.failures?.[0]?.reason);
await g.dispose();`,
    );
    expect(out[0]).toBe('headlessgl 1,3,6');
    expect(out[1]).toMatch(/^webgpu BackendUnavailableError .*headless-gl \(gpu.js's headlessgl mode\) has made a GL context in this process/);
  });

  it('probing the modes leaves both available to the probing process', async () => {
    const out = await inChild(
      'probe-first',
      `const p = await gpujs.probeGpujsModes();
console.log('probe', p.headlessgl.available, p.webgpu.available);
const w = await gpujs.createGpujsBackend({ mode: 'webgpu' });
console.log('webgpu', Array.from((await w.scan({ input })).data).join(','));
await w.dispose();`,
    );
    expect(out).toEqual(['probe true true', 'webgpu 1,3,6']);
  });
});
