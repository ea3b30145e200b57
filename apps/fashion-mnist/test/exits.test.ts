/**
 * The built CLI (dist/cli.js) exits by itself with each backend kind open, and on errors raised
 * before and after a backend starts: a live worker pool or GPU device would keep it running into
 * the timeout. cli.test.ts covers the cpu and auto runs; build the app first.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_DIR, MODEL_DIR, TEST_DATA_DIR, splitFiles } from '../src/paths.js';
import { expectExitCode, spawnCli } from '@kernelkit/ops/testing';

const CLI = join(APP_DIR, 'dist', 'cli.js');
const app = (args: readonly string[]) => spawnCli(CLI, args, { timeoutMs: 60_000 });

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fm-exits-'));
});
afterAll(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('kernelkit-fashion-mnist exits by itself', () => {
  it('--backend piscina: the worker pool does not keep it alive', async () => {
    const r = await app(['--batch', '100', '--backend', 'piscina', '--json']);
    expectExitCode(r, 0);
    const out = JSON.parse(r.stdout) as { count: number; backend: string; accuracy: number };
    expect(out).toMatchObject({ count: 100, backend: 'piscina' });
    expect(out.accuracy).toBeGreaterThan(0.5);
  });

  it('--compare: every available backend open at once, then all disposed', async () => {
    // Four backends one after another: slower than the others, so a longer limit (a hang still fails).
    const r = await spawnCli(CLI, ['--batch', '100', '--compare', '--json'], { timeoutMs: 120_000 });
    expectExitCode(r, 0);
    const out = JSON.parse(r.stdout) as { agree: boolean; results: { backend: string; count: number }[]; skipped: { backend: string }[] };
    expect(out.agree).toBe(true);
    expect([...out.results.map((x) => x.backend), ...out.skipped.map((s) => s.backend)].sort()).toEqual(['cpu', 'gpujs', 'piscina', 'webgpu']);
    expect(out.results.map((x) => x.backend)).toContain('cpu');
    for (const x of out.results) expect(x.count).toBe(100);
  }, 180_000);

  it('a usage error raised after the worker pool started (exit 2)', async () => {
    const r = await app(['--batch', '100', '--backend', 'piscina', '--variant', 'nope']);
    expectExitCode(r, 2);
    expect(r.stderr).toMatch(/--variant: the piscina backend has no convLayer variant "nope"/);
  });

  it('a truncated labels file (exit 1), named with its byte offset', async () => {
    const real = splitFiles(TEST_DATA_DIR, 't10k');
    const bad = splitFiles(dir, 't10k');
    await copyFile(real.images, bad.images);
    const labels = await readFile(real.labels);
    await writeFile(bad.labels, labels.subarray(0, labels.length >> 1));
    const r = await app(['--batch', '100', '--backend', 'cpu', '--data', dir]);
    expectExitCode(r, 1);
    expect(r.stderr).toContain(`${bad.labels}: gzip stream truncated: the compressed data ends at byte offset ${labels.length >> 1}`);
  });
});

/** An IDX file: big-endian magic, one u32 per dimension, then the payload. */
function idx(magic: number, dims: readonly number[], payload: Uint8Array): Buffer {
  const head = Buffer.alloc(4 + 4 * dims.length);
  head.writeUInt32BE(magic, 0);
  dims.forEach((d, i) => head.writeUInt32BE(d, 4 + 4 * i));
  return Buffer.concat([head, payload]);
}

/** A --data folder holding `images` (already gzipped) and the first `count` committed labels. */
async function dataDir(name: string, images: Buffer, count: number): Promise<string> {
  const d = join(dir, name);
  await mkdir(d);
  const f = splitFiles(d, 't10k');
  const labels = gunzipSync(await readFile(splitFiles(TEST_DATA_DIR, 't10k').labels)).subarray(8, 8 + count);
  await writeFile(f.images, images);
  await writeFile(f.labels, gzipSync(idx(0x801, [count], labels)));
  return d;
}

/** Exit code `code` with one line on stderr (plus the --help hint for usage errors) that contains `text`: never silent, no stack. */
function expectOneLineError(r: { code: number | null; stderr: string }, code: number, text: string): void {
  expectExitCode(r as Parameters<typeof expectExitCode>[0], code);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines[0]).toContain(text);
  expect(lines[0]!.startsWith('kernelkit-fashion-mnist: '), r.stderr).toBe(true);
  expect(lines.slice(1).every((l) => l.startsWith('Try ')), r.stderr).toBe(true);
  expect(r.stderr).not.toMatch(/^\s+at |TypeError|RangeError/m);
}

describe('bad data, model and output paths: one line on stderr, never a silent exit', () => {
  it('--batch larger than the data set (exit 2, naming the file and its count)', async () => {
    const real = gunzipSync(await readFile(splitFiles(TEST_DATA_DIR, 't10k').images));
    const d = await dataDir('fifty', gzipSync(idx(0x803, [50, 28, 28], real.subarray(16, 16 + 50 * 784))), 50);
    const r = await app(['--batch', '100', '--backend', 'cpu', '--data', d]);
    expectOneLineError(r, 2, `--batch: ${splitFiles(d, 't10k').images} holds only 50 images, fewer than 100`);
  });

  it.each([
    [1, 1],
    [500, 500],
  ])('%i×%i images are refused, not classified (exit 1)', async (rows, cols) => {
    const d = await dataDir(`size-${rows}`, gzipSync(idx(0x803, [100, rows, cols], new Uint8Array(100 * rows * cols))), 100);
    const r = await app(['--batch', '100', '--backend', 'cpu', '--data', d]);
    expectOneLineError(r, 1, `${splitFiles(d, 't10k').images}: image size ${rows}×${cols} at byte offset 8: the model takes 28×28 images`);
  });

  it('a decompression bomb is refused once it passes what its header declares (exit 1)', async () => {
    // 64 MiB of zeros behind a header for 100 images: the reader stops at byte 78 416.
    const bomb = gzipSync(Buffer.concat([idx(0x803, [100, 28, 28], new Uint8Array(100 * 784)), Buffer.alloc(64 << 20)]));
    const d = await dataDir('bomb', bomb, 100);
    const r = await app(['--batch', '100', '--backend', 'cpu', '--data', d]);
    expectOneLineError(r, 1, `${splitFiles(d, 't10k').images}: unexpected trailing bytes starting at byte offset ${16 + 100 * 784}`);
  });

  it.each([
    ['null', null, 'the manifest: expected a JSON object, got null'],
    ['tensors: null', { tensors: null }, 'tensors: expected an array, got null'],
    ['no weightsFile', { weightsFile: undefined }, 'weightsFile: expected the name of a file next to the manifest, got undefined'],
    ['a negative byteOffset', { byteOffset: -8 }, 'tensors[0].byteOffset: expected an integer >= 0, got -8'],
  ])('a manifest with %s (exit 1)', async (name, change, text) => {
    const good = JSON.parse(await readFile(join(MODEL_DIR, 'manifest.json'), 'utf8')) as { tensors: Record<string, unknown>[] };
    let manifest: unknown = change;
    if (change !== null && 'byteOffset' in change) {
      good.tensors[0]!['byteOffset'] = change.byteOffset;
      manifest = good;
    } else if (change !== null) manifest = { ...good, ...change };
    const m = join(dir, `model-${name.replace(/\W+/g, '-')}`);
    await mkdir(m);
    await copyFile(join(MODEL_DIR, 'weights.bin'), join(m, 'weights.bin'));
    await writeFile(join(m, 'manifest.json'), JSON.stringify(manifest));
    const r = await app(['--batch', '100', '--backend', 'cpu', '--model', m]);
    expectOneLineError(r, 1, `${join(m, 'manifest.json')}: ${text}`);
  });

  it('--json into a folder that does not exist is refused before any work (exit 2)', async () => {
    const out = join(dir, 'no-such-folder', 'r.json');
    const r = await app(['--batch', '100', '--backend', 'cpu', '--json', out]);
    expectOneLineError(r, 2, `--json: cannot create ${out}: the folder ${join(dir, 'no-such-folder')} does not exist`);
  });

  it('--json naming an input file is refused (exit 2), the input untouched', async () => {
    const d = await dataDir('json-input', await readFile(splitFiles(TEST_DATA_DIR, 't10k').images), 10000);
    const labels = splitFiles(d, 't10k').labels;
    const before = await readFile(labels);
    const r = await app(['--batch', '100', '--backend', 'cpu', '--data', d, '--json', labels]);
    expectOneLineError(r, 2, `--json: ${labels} is the same file as --data ${labels}, an input: refusing to overwrite it`);
    expect((await readFile(labels)).equals(before)).toBe(true);
  });
});

