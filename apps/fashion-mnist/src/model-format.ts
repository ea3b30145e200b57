/**
 * The committed model's on-disk format: `weights.bin` is the tensors below, each a little-endian
 * f32 blob, concatenated in `TENSOR_ORDER` with no padding; `manifest.json` lists every tensor's
 * name, shape and byte offset, the sha256 of `weights.bin`, and how the model was trained.
 *
 * Layouts are kernelkit's, not tfjs's: conv weights `[M][C][K][K]`; FC weights `[out][in]`, with
 * fc1's input index `c·81 + y·9 + x` — the order src/network.ts flattens its `[16][9][9]` maps.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileFormatError, errorMessage } from '@kernelkit/core';
import { readBoundedFile } from '@kernelkit/ops';

export const TENSOR_SHAPES = {
  'conv1.weight': [4, 1, 7, 7],
  'conv1.bias': [4],
  'conv2.weight': [16, 4, 7, 7],
  'conv2.bias': [16],
  'fc1.weight': [32, 1296],
  'fc1.bias': [32],
  'fc2.weight': [10, 32],
  'fc2.bias': [10],
} as const satisfies Record<string, readonly number[]>;

export type TensorName = keyof typeof TENSOR_SHAPES;
export const TENSOR_ORDER = Object.keys(TENSOR_SHAPES) as readonly TensorName[];
export type ModelWeights = Readonly<Record<TensorName, Float32Array>>;

export interface TensorEntry {
  readonly name: TensorName;
  readonly shape: readonly number[];
  readonly dtype: 'float32';
  readonly byteOffset: number;
  readonly byteLength: number;
}

export interface Manifest {
  readonly format: 'kernelkit-fashion-mnist-weights/1';
  readonly weightsFile: string;
  readonly byteOrder: 'little-endian';
  readonly sha256: string;
  readonly tensors: readonly TensorEntry[];
  readonly layout: string;
  readonly training: Readonly<Record<string, unknown>>;
  /** Accuracy of these weights on the 10 000 test images through src/network.ts (cpu backend). */
  readonly testAccuracy: number;
  /** The same on the first 1 000 test images, so a quick test can hold the model to it too. */
  readonly testAccuracyFirst1000?: number;
}

const size = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

/** Writes `weights.bin` and `manifest.json` into `dir`; returns the manifest. */
export function writeModel(dir: string, weights: ModelWeights, extra: Pick<Manifest, 'training' | 'testAccuracy' | 'testAccuracyFirst1000'>): Manifest {
  const tensors: TensorEntry[] = [];
  let offset = 0;
  for (const name of TENSOR_ORDER) {
    const shape = TENSOR_SHAPES[name];
    if (weights[name].length !== size(shape)) throw new RangeError(`${name}: ${weights[name].length} values, shape [${shape.join(', ')}] needs ${size(shape)}`);
    tensors.push({ name, shape, dtype: 'float32', byteOffset: offset, byteLength: 4 * size(shape) });
    offset += 4 * size(shape);
  }
  const bin = Buffer.alloc(offset);
  for (const t of tensors) {
    const w = weights[t.name];
    for (let i = 0; i < w.length; i++) bin.writeFloatLE(w[i] ?? 0, t.byteOffset + 4 * i);
  }
  const manifest: Manifest = {
    format: 'kernelkit-fashion-mnist-weights/1',
    weightsFile: 'weights.bin',
    byteOrder: 'little-endian',
    sha256: createHash('sha256').update(bin).digest('hex'),
    tensors,
    layout: 'conv weights [M][C][K][K]; fc weights [out][in]; fc1 input index = c*81 + y*9 + x over the [16][9][9] pooled maps',
    ...extra,
  };
  writeFileSync(join(dir, 'weights.bin'), bin);
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}

/** A model's files are small (weights.bin is ~180 KB); past these the path names something else. */
const MANIFEST_MAX_BYTES = 1024 * 1024;
const WEIGHTS_MAX_BYTES = 64 * 1024 * 1024;

const describe = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'string' ? JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v) : typeof v === 'object' ? 'an object' : String(v));
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * Checks the parsed manifest's shape field by field, so a malformed one is a FileFormatError naming
 * the file and the field, never a TypeError from a later read of a missing or wrong-typed field.
 */
export function parseManifest(json: unknown, file: string): Manifest {
  const bad = (field: string, expected: string, got: unknown): never => {
    throw new FileFormatError(file, `${field}: expected ${expected}, got ${describe(got)}`);
  };
  if (!isRecord(json)) return bad('the manifest', 'a JSON object', json);
  const { format, weightsFile, byteOrder, sha256, tensors } = json;
  if (format !== 'kernelkit-fashion-mnist-weights/1') bad('format', '"kernelkit-fashion-mnist-weights/1"', format);
  // A plain file name in the model folder: a path could point the reader anywhere.
  if (typeof weightsFile !== 'string' || weightsFile === '' || /[/\\]/.test(weightsFile) || weightsFile === '.' || weightsFile === '..') {
    bad('weightsFile', 'the name of a file next to the manifest', weightsFile);
  }
  if (byteOrder !== 'little-endian') bad('byteOrder', '"little-endian"', byteOrder);
  if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256)) bad('sha256', '64 lowercase hex digits', sha256);
  if (!Array.isArray(tensors)) return bad('tensors', 'an array', tensors);
  const names = new Set<string>();
  tensors.forEach((t: unknown, i) => {
    const at = `tensors[${i}]`;
    if (!isRecord(t)) return bad(at, 'an object', t);
    if (typeof t['name'] !== 'string' || !Object.hasOwn(TENSOR_SHAPES, t['name'])) bad(`${at}.name`, `one of ${TENSOR_ORDER.join(', ')}`, t['name']);
    const name = t['name'] as string;
    if (names.has(name)) bad(`${at}.name`, 'each tensor once', name);
    names.add(name);
    const shape = t['shape'];
    if (!Array.isArray(shape) || !shape.every(isCount)) bad(`${at}.shape`, 'an array of sizes', shape);
    if (t['dtype'] !== 'float32') bad(`${at}.dtype`, '"float32"', t['dtype']);
    if (!isCount(t['byteOffset'])) bad(`${at}.byteOffset`, 'an integer >= 0', t['byteOffset']);
    if (!isCount(t['byteLength'])) bad(`${at}.byteLength`, 'an integer >= 0', t['byteLength']);
    return undefined;
  });
  return json as unknown as Manifest;
}

/** Reads and verifies a model directory written by `writeModel`. */
export async function readModel(dir: string): Promise<{ manifest: Manifest; weights: ModelWeights }> {
  const manifestFile = join(dir, 'manifest.json');
  const text = new TextDecoder().decode(await readBoundedFile(manifestFile, MANIFEST_MAX_BYTES, 'a model manifest (JSON)'));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new FileFormatError(manifestFile, `not readable JSON: ${errorMessage(err)}`, undefined, { cause: err });
  }
  const manifest = parseManifest(json, manifestFile);
  const binFile = join(dir, manifest.weightsFile);
  const bin = Buffer.from(await readBoundedFile(binFile, WEIGHTS_MAX_BYTES, 'a model weights file'));
  const digest = createHash('sha256').update(bin).digest('hex');
  if (digest !== manifest.sha256) throw new FileFormatError(binFile, `sha256 ${digest} does not match the manifest's ${manifest.sha256}`);
  const out: Partial<Record<TensorName, Float32Array>> = {};
  for (const name of TENSOR_ORDER) {
    const t = manifest.tensors.find((e) => e.name === name);
    if (t === undefined) throw new FileFormatError(manifestFile, `tensor ${name} is missing`);
    const n = size(TENSOR_SHAPES[name]);
    if (size(t.shape) !== n || t.byteLength !== 4 * n) throw new FileFormatError(manifestFile, `tensor ${name} has shape [${t.shape.join(', ')}], expected [${TENSOR_SHAPES[name].join(', ')}]`);
    if (t.byteOffset + t.byteLength > bin.length) throw new FileFormatError(binFile, `tensor ${name} runs past the end of the file: bytes ${t.byteOffset}..${t.byteOffset + t.byteLength} of ${bin.length}`);
    const w = new Float32Array(n);
    for (let i = 0; i < n; i++) w[i] = bin.readFloatLE(t.byteOffset + 4 * i);
    out[name] = w;
  }
  return { manifest, weights: out as ModelWeights };
}
