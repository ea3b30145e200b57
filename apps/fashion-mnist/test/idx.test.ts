import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FileFormatError } from '@kernelkit/core';
import { parseIdxImages, parseIdxLabels, readIdxPair } from '../src/idx.js';
import { TEST_DATA_DIR, splitFiles } from '../src/paths.js';

function idx(magic: number, dims: number[], payload: number[]): Buffer {
  const head = Buffer.alloc(4 + 4 * dims.length);
  head.writeUInt32BE(magic, 0);
  dims.forEach((d, i) => head.writeUInt32BE(d, 4 + 4 * i));
  return Buffer.concat([head, Buffer.from(payload)]);
}
const images = (count: number, rows: number, cols: number, extra = 0): Buffer =>
  gzipSync(idx(0x803, [count, rows, cols], Array.from({ length: count * rows * cols + extra }, (_, i) => i % 256)));
const labels = (values: number[], count = values.length): Buffer => gzipSync(idx(0x801, [count], values));

async function formatError(p: Promise<unknown>): Promise<FileFormatError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FileFormatError);
  return err as FileFormatError;
}

describe('IDX parsing', () => {
  it('parses a well-formed image file and label file', async () => {
    const im = await parseIdxImages(images(2, 3, 4), 'a.gz');
    expect([im.count, im.rows, im.cols, im.pixels.length]).toEqual([2, 3, 4, 24]);
    expect(im.pixels[23]).toBe(23);
    expect(Array.from((await parseIdxLabels(labels([3, 9, 0]), 'l.gz')).labels)).toEqual([3, 9, 0]);
  });

  it('rejects a bad magic number, naming the file and offset 0', async () => {
    const e = await formatError(parseIdxImages(labels([1, 2]), 'wrong.gz'));
    expect(e.message).toMatch(/wrong\.gz.*bad magic at byte offset 0: 0x00000801, expected 0x00000803/);
    expect(e.file).toBe('wrong.gz');
    await expect(parseIdxLabels(images(1, 2, 2), 'l.gz')).rejects.toThrow(/expected 0x00000801/);
  });

  it('rejects a truncated gzip stream', async () => {
    const gz = images(10, 28, 28);
    const e = await formatError(parseIdxImages(gz.subarray(0, gz.length - 40), 'cut.gz'));
    expect(e.message).toMatch(new RegExp(`cut\\.gz: gzip stream truncated: the compressed data ends at byte offset ${gz.length - 40} `));
    await expect(parseIdxImages(Buffer.from('plain text'), 'p.gz')).rejects.toThrow(/not a gzip stream/);
  });

  it('rejects a payload shorter or longer than the header declares', async () => {
    await expect(parseIdxImages(gzipSync(idx(0x803, [3, 2, 2], [1, 2, 3, 4, 5])), 'short.gz')).rejects.toThrow(/short\.gz: truncated payload.*ends at byte offset 21/);
    await expect(parseIdxImages(images(1, 2, 2, 3), 'long.gz')).rejects.toThrow(/long\.gz: unexpected trailing bytes starting at byte offset 20/);
    await expect(parseIdxLabels(labels([1, 2], 5), 'n.gz')).rejects.toThrow(/n\.gz: truncated payload/);
    await expect(parseIdxImages(gzipSync(Buffer.from([0, 0, 8, 3, 0, 0])), 'h.gz')).rejects.toThrow(/h\.gz: truncated header: 6 bytes/);
  });

  it('rejects a label outside 0..9 with its offset', async () => {
    await expect(parseIdxLabels(labels([1, 12, 3]), 'bad.gz')).rejects.toThrow(/bad\.gz: label 12 at byte offset 9 \(item 1\)/);
  });

  it('rejects image and label files whose counts differ', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fm-idx-'));
    writeFileSync(join(dir, 'i.gz'), images(3, 2, 2));
    writeFileSync(join(dir, 'l.gz'), labels([1, 2]));
    await expect(readIdxPair(join(dir, 'i.gz'), join(dir, 'l.gz'))).rejects.toThrow(/l\.gz: count mismatch: .* 2 labels, but .*i\.gz declares 3 images/);
  });

  it('reads the committed test set: 10 000 labelled 28×28 images', async () => {
    const f = splitFiles(TEST_DATA_DIR, 't10k');
    const t = await readIdxPair(f.images, f.labels);
    expect([t.count, t.rows, t.cols, t.pixels.length, t.labels.length]).toEqual([10000, 28, 28, 7840000, 10000]);
    const perClass = new Array<number>(10).fill(0);
    for (const l of t.labels) perClass[l] = (perClass[l] ?? 0) + 1;
    expect(perClass).toEqual(new Array<number>(10).fill(1000));
  });
});
