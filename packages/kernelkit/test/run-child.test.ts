import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CalibrationTimeoutError, runCalibrationChild } from '../src/router/run-child.js';
import type { ChildRequest } from '../src/router/calibrate-child.js';

const request: ChildRequest = { cachePath: '/nowhere', ops: ['scan'], budgetMs: 100, force: false };

function script(body: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'kk-child-')), 'child.mjs');
  writeFileSync(path, body);
  return path;
}

describe('the calibration child', () => {
  it('passes progress on and resolves with the report line', async () => {
    const report = { report: { backends: ['cpu'], ms: 1, skipped: [], saved: 'saved' }, skippedBackends: [] };
    const path = script(`
      const req = JSON.parse(process.argv[2]);
      console.log('a native notice that is not JSON');
      console.log(JSON.stringify({ progress: { done: 1, total: 1, step: 'cpu ' + req.ops[0] + ' #1', elapsedMs: 1 } }));
      console.log(${JSON.stringify(JSON.stringify(report))});
    `);
    const steps: string[] = [];
    await expect(runCalibrationChild(path, request, 30_000, (p) => steps.push(p.step))).resolves.toEqual(report);
    expect(steps).toEqual(['cpu scan #1']);
  });

  it('is stopped at its time limit when it hangs, and says so', async () => {
    const path = script(`setInterval(() => {}, 1000); console.log(JSON.stringify({ progress: { done: 0, total: 1, step: 'started', elapsedMs: 0 } }));`);
    const t0 = performance.now();
    const err = await runCalibrationChild(path, request, 400).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CalibrationTimeoutError);
    expect((err as Error).message).toMatch(/still running after 0.4 s and was stopped/);
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it('rejects with the end of its stderr when it fails', async () => {
    const path = script(`console.error('could not start webgpu'); process.exit(3);`);
    await expect(runCalibrationChild(path, request, 30_000)).rejects.toThrow(/exit code 3: could not start webgpu/);
  });
});
