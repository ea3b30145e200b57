import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../dist/webgpu/scan-huge.js', import.meta.url));
const run = (args: readonly string[]) =>
  spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, EGL_PLATFORM: 'surfaceless' } });

describe('webgpu/scan-huge (run `npm run build -w @kernelkit/studies` first)', () => {
  it('scans across element index 2^32 in chunks with a ragged last one, every output checked', () => {
    const r = run(['--elements', '3000001', '--start', '4294000000', '--chunk', '1000000', '--adapter', 'software', '--workers', '2']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('| elements | 3000001 of 3000001 (elements 4294000000 to 4297000000)');
    expect(r.stdout).toContain('| chunks | 4 of 1000000 elements (the last 1) |');
    expect(r.stdout).toContain('| check | every output element bit-exact |');
  });

  it('refuses a malformed count, naming the option', () => {
    const r = run(['--elements', '4e9x']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--elements/);
  });
});
