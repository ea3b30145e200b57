/**
 * Measures a model's test accuracy through this app's own inference path (src/network.ts on
 * kernelkit's sequential cpu backend) and records it in the manifest: `testAccuracy` over all
 * 10 000 test images and `testAccuracyFirst1000`. These, not tfjs's own evaluation, are the
 * numbers the tests hold the committed model to. train.ts calls this after its last epoch;
 * `node dist/evaluate-model.js [--model DIR]` re-runs it on its own.
 */
import { pathToFileURL } from 'node:url';
import { createCpuBackend } from '@kernelkit/cpu';
import { evaluate } from './evaluate.js';
import { readIdxPair, type LabelledImages } from './idx.js';
import { readModel, writeModel } from './model-format.js';
import { MODEL_DIR, TEST_DATA_DIR, splitFiles } from './paths.js';
import { MODEL_IMAGE } from './resize.js';

export async function recordKernelkitAccuracy(dir: string, test: LabelledImages): Promise<{ testAccuracy: number; testAccuracyFirst1000: number }> {
  const { manifest, weights } = await readModel(dir);
  const backend = createCpuBackend();
  try {
    const e = await evaluate(backend, weights, test, { count: test.count, chunk: 1000 });
    let first = 0;
    const n = Math.min(1000, test.count);
    for (let i = 0; i < n; i++) if (e.predictions[i] === test.labels[i]) first++;
    const acc = { testAccuracy: e.accuracy, testAccuracyFirst1000: first / n };
    writeModel(dir, weights, { training: { ...manifest.training, evaluatedWith: 'src/network.ts on @kernelkit/cpu (sequential), all 10000 committed test images' }, ...acc });
    return acc;
  } finally {
    await backend.dispose();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const i = process.argv.indexOf('--model');
  const dir = i > 0 ? (process.argv[i + 1] ?? MODEL_DIR) : MODEL_DIR;
  const files = splitFiles(TEST_DATA_DIR, 't10k');
  const acc = await recordKernelkitAccuracy(dir, await readIdxPair(files.images, files.labels, { imageSize: MODEL_IMAGE }));
  console.log(`test accuracy ${acc.testAccuracy.toFixed(4)} (first 1000: ${acc.testAccuracyFirst1000.toFixed(4)}), written to ${dir}/manifest.json`);
}
