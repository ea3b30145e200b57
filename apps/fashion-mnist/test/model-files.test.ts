/**
 * Malformed model folders: every bad manifest shape is a FileFormatError naming manifest.json and
 * the field, never a raw TypeError or RangeError from reading a field that is not there.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileFormatError } from '@kernelkit/core';
import { readModel } from '../src/model-format.js';
import { MODEL_DIR } from '../src/paths.js';

type Json = Record<string, unknown> & { tensors: Record<string, unknown>[] };

let dir = '';
let good: Json;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fm-model-'));
  good = JSON.parse(await readFile(join(MODEL_DIR, 'manifest.json'), 'utf8')) as Json;
});
afterAll(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

const edit = (f: (m: Json) => unknown) => (): unknown => {
  const m = structuredClone(good);
  return f(m) ?? m;
};

const CASES: readonly [string, () => unknown, RegExp][] = [
  ['null', () => null, /the manifest: expected a JSON object, got null/],
  ['an array', () => [], /the manifest: expected a JSON object, got an array/],
  ['a number', () => 42, /the manifest: expected a JSON object, got 42/],
  ['tensors: null', edit((m) => ({ ...m, tensors: null })), /tensors: expected an array, got null/],
  ['no weightsFile', edit((m) => ({ ...m, weightsFile: undefined })), /weightsFile: expected the name of a file next to the manifest, got undefined/],
  ['weightsFile as a path out of the folder', edit((m) => ({ ...m, weightsFile: '../../weights.bin' })), /weightsFile: expected the name of a file next to the manifest, got "\.\.\/\.\.\/weights\.bin"/],
  ['no sha256', edit((m) => ({ ...m, sha256: 7 })), /sha256: expected 64 lowercase hex digits, got 7/],
  ['another format', edit((m) => ({ ...m, format: 'tfjs' })), /format: expected "kernelkit-fashion-mnist-weights\/1", got "tfjs"/],
  ['a negative byteOffset', edit((m) => void (m.tensors[2]!['byteOffset'] = -4)), /tensors\[2\]\.byteOffset: expected an integer >= 0, got -4/],
  ['a byteOffset as text', edit((m) => void (m.tensors[0]!['byteOffset'] = '0')), /tensors\[0\]\.byteOffset: expected an integer >= 0, got "0"/],
  ['a fractional byteLength', edit((m) => void (m.tensors[1]!['byteLength'] = 15.5)), /tensors\[1\]\.byteLength: expected an integer >= 0, got 15\.5/],
  ['a tensor that is null', edit((m) => void (m.tensors[3] = null as unknown as Record<string, unknown>)), /tensors\[3\]: expected an object, got null/],
  ['a shape that is not an array', edit((m) => void (m.tensors[4]!['shape'] = 'big')), /tensors\[4\]\.shape: expected an array of sizes, got "big"/],
  ['an unknown tensor name', edit((m) => void (m.tensors[5]!['name'] = 'fc3.weight')), /tensors\[5\]\.name: expected one of conv1\.weight, .*got "fc3\.weight"/],
  ['a tensor listed twice', edit((m) => void (m.tensors[1]!['name'] = m.tensors[0]!['name'])), /tensors\[1\]\.name: expected each tensor once, got "conv1\.weight"/],
  ['a tensor missing', edit((m) => void m.tensors.pop()), /tensor fc2\.bias is missing/],
];

async function modelDir(name: string, manifest: unknown): Promise<string> {
  const d = join(dir, name.replace(/\W+/g, '-'));
  await mkdir(d);
  await copyFile(join(MODEL_DIR, 'weights.bin'), join(d, 'weights.bin'));
  await writeFile(join(d, 'manifest.json'), JSON.stringify(manifest));
  return d;
}

async function rejection(p: Promise<unknown>): Promise<FileFormatError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof FileFormatError) return err;
  throw new Error(err === undefined ? 'expected a FileFormatError, but the model was read' : `expected a FileFormatError, got ${String(err)}`, { cause: err });
}

describe('malformed model manifests', () => {
  it.each(CASES)('%s', async (name, make, reason) => {
    const d = await modelDir(name, make());
    const e = await rejection(readModel(d));
    expect(e.file).toBe(join(d, 'manifest.json'));
    expect(e.message).toMatch(reason);
  });

  it('the committed manifest, copied the same way, is read (so each case fails for its own reason)', async () => {
    const d = await modelDir('good copy', good);
    const { weights } = await readModel(d);
    expect(weights['fc2.bias']).toHaveLength(10);
  });

  it('weights.bin naming a device is refused before it is read', async () => {
    const d = join(dir, 'device-weights');
    await mkdir(d);
    await writeFile(join(d, 'manifest.json'), JSON.stringify(good));
    await symlink('/dev/zero', join(d, 'weights.bin'));
    const e = await rejection(readModel(d));
    expect(e.message).toBe(`${join(d, 'weights.bin')}: is a device or socket, not a file; expected a model weights file`);
  });
});
