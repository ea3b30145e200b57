/** Where the app finds its data and model, relative to the built file so it works from any cwd. */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** apps/fashion-mnist (dist/*.js and src/*.ts both sit one level below it). */
export const APP_DIR = fileURLToPath(new URL('..', import.meta.url));
/** The committed 10 000-image test set. */
export const TEST_DATA_DIR = join(APP_DIR, 'data');
export const MODEL_DIR = join(APP_DIR, 'model');
/** Where the Debian package dataset-fashion-mnist installs the full data set. */
export const SYSTEM_DATA_DIR = '/usr/share/datasets/fashion-mnist';

export const splitFiles = (dir: string, split: 'train' | 't10k'): { images: string; labels: string } => ({
  images: join(dir, `${split}-images-idx3-ubyte.gz`),
  labels: join(dir, `${split}-labels-idx1-ubyte.gz`),
});
