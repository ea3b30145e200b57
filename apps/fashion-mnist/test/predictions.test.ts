/**
 * The committed model on the committed test set: accuracy against the manifest, and identical
 * labels from every CPU backend that starts here.
 */
import { describe, expect, it } from 'vitest';
import { errorReason, openBackend } from '../src/backends.js';
import { evaluate, type Evaluation } from '../src/evaluate.js';
import { committed } from './helpers.js';

const FULL = process.env['FASHION_MNIST_FULL'] === '1';

async function run(name: 'cpu' | 'piscina', count: number): Promise<Evaluation | string> {
  let opened;
  try {
    opened = await openBackend(name);
  } catch (err) {
    return `${name} did not start: ${errorReason(err)}`;
  }
  try {
    const { test, weights } = await committed();
    return await evaluate(opened.backend, weights, test, { count, chunk: 500 });
  } finally {
    await opened.backend.dispose();
  }
}

describe('committed model', () => {
  let cpu: Evaluation;

  it('reaches the manifest accuracy on the first 1000 test images (cpu backend)', async () => {
    const r = await run('cpu', 1000);
    if (typeof r === 'string') throw new Error(r);
    cpu = r;
    const { manifest } = await committed();
    expect(manifest.testAccuracyFirst1000, 'manifest.testAccuracyFirst1000 (run node dist/evaluate-model.js)').toBeTypeOf('number');
    expect(r.accuracy).toBeGreaterThanOrEqual((manifest.testAccuracyFirst1000 ?? 1) - 0.001);
  }, 300_000);

  it('gives identical labels on 1000 images on piscina and cpu', async (ctx) => {
    const r = await run('piscina', 1000);
    if (typeof r === 'string') {
      ctx.skip(r);
      return;
    }
    const differ: number[] = [];
    for (let i = 0; i < 1000; i++) if (r.predictions[i] !== cpu.predictions[i]) differ.push(i);
    expect(differ, `images where piscina and cpu disagree`).toEqual([]);
    expect(r.backend).toBe('piscina');
  }, 300_000);

  it.skipIf(!FULL)('reaches the manifest accuracy on all 10 000 test images (FASHION_MNIST_FULL=1; ~5 min on cpu)', async () => {
    const r = await run('cpu', 10000);
    if (typeof r === 'string') throw new Error(r);
    expect(r.accuracy).toBeGreaterThanOrEqual((await committed()).manifest.testAccuracy - 0.001);
  }, 1_200_000);
});
