import { readIdxPair, type LabelledImages } from '../src/idx.js';
import { readModel, type Manifest, type ModelWeights } from '../src/model-format.js';
import { MODEL_DIR, TEST_DATA_DIR, splitFiles } from '../src/paths.js';

let cache: { test: LabelledImages; weights: ModelWeights; manifest: Manifest } | undefined;

/** The committed test set and model, read once per test file. */
export async function committed(): Promise<{ test: LabelledImages; weights: ModelWeights; manifest: Manifest }> {
  if (cache === undefined) {
    const f = splitFiles(TEST_DATA_DIR, 't10k');
    cache = { test: await readIdxPair(f.images, f.labels), ...(await readModel(MODEL_DIR)) };
  }
  return cache;
}
