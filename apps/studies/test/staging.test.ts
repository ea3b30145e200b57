import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../dist/webgpu/staging.js', import.meta.url));

describe('webgpu/staging.js (run `npm run build -w @kernelkit/studies` first)', () => {
  it('--small on the software adapter: every ring shape and chunk target, chunked outputs equal to the one-chunk output', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kk-staging-'));
    try {
      const r = spawnSync(process.execPath, [script, '--small', '--adapter', 'software', '--reps', '1', '--out', dir], { encoding: 'utf8', timeout: 110_000, env: { ...process.env, EGL_PLATFORM: 'surfaceless' } });
      expect(r.status, r.stderr).toBe(0);
      const json = JSON.parse(readFileSync(join(dir, 'webgpu-staging.json'), 'utf8')) as { transfers: { path: string; uploadGBps: number }[]; conv2d: { chunks: number; input: string; mode: string; maxAbsDiff: number }[] };
      expect(json.transfers.map((t) => t.path)).toEqual(['ring 4 × 1 MiB', 'ring 8 × 1 MiB', 'ring 4 × 2 MiB', 'ring 8 × 2 MiB', 'ring 2 × 4 MiB', 'one 8 MiB mapped buffer']);
      expect(json.transfers.every((t) => t.uploadGBps > 0)).toBe(true);
      expect(json.conv2d.map((c) => `${c.chunks} ${c.input} ${c.mode}`)).toEqual([8, 4, 2, 1].flatMap((n) => ['ring', 'landing'].flatMap((i) => [`${n} ${i} fresh`, `${n} ${i} fresh via landing`, `${n} ${i} out`])));
      expect(json.conv2d.every((c) => c.maxAbsDiff === 0)).toBe(true);
      expect(readFileSync(join(dir, 'webgpu-staging.md'), 'utf8')).toMatch(/\| chunk target MiB \|/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
