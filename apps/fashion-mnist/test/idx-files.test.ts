/**
 * Malformed IDX image/label pairs on disk: each must be rejected by readIdxPair with a
 * FileFormatError that names the offending file and the byte offset of the problem.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileFormatError } from '@kernelkit/core';
import { IDX_IMAGES_MAGIC, IDX_LABELS_MAGIC, readIdxPair, type IdxImageOptions } from '../src/idx.js';

/** An uncompressed IDX file: big-endian magic, one u32 per dimension, then the payload. */
function idx(magic: number, dims: readonly number[], payload: readonly number[]): Buffer {
  const head = Buffer.alloc(4 + 4 * dims.length);
  head.writeUInt32BE(magic, 0);
  dims.forEach((d, i) => head.writeUInt32BE(d, 4 + 4 * i));
  return Buffer.concat([head, Buffer.from(payload)]);
}
const pixels = (n: number): number[] => Array.from({ length: n }, (_, i) => (i * 37) % 256);
/** Three 2×2 images with labels 1, 2, 3: the pair every case starts from. */
const RAW_IMAGES = idx(IDX_IMAGES_MAGIC, [3, 2, 2], pixels(12));
const GOOD_IMAGES = gzipSync(RAW_IMAGES);
const GOOD_LABELS = gzipSync(idx(IDX_LABELS_MAGIC, [3], [1, 2, 3]));

function flipped(b: Buffer, at: number): Buffer {
  const c = Buffer.from(b);
  c[at] = (c[at] ?? 0) ^ 0xff;
  return c;
}
// gzip: 10-byte header, deflate data, then CRC-32 and size (4 bytes each).
const CRC_AT = GOOD_IMAGES.length - 8;
/** The first byte of the deflate data: damage there breaks the block header. */
const DEFLATE_AT = 10;

interface Case {
  readonly name: string;
  readonly images?: Buffer;
  readonly labels?: Buffer;
  /** Which file the error must name. */
  readonly blame: 'images' | 'labels';
  /** The byte offset the message must give, or the range it must lie in (where zlib notices damage). */
  readonly offset?: number | readonly [number, number];
  readonly reason: RegExp;
  readonly options?: IdxImageOptions;
}

const CASES: readonly Case[] = [
  // Not gzip where gzip is expected.
  { name: 'empty images file', images: Buffer.alloc(0), blame: 'images', offset: 0, reason: /not a gzip stream: the file is empty/ },
  { name: 'an uncompressed IDX file', images: RAW_IMAGES, blame: 'images', offset: 0, reason: /not a gzip stream: byte offset 0 holds 00 00, expected the gzip magic 1f 8b/ },
  { name: 'a text file as labels', labels: Buffer.from('1\n2\n3\n'), blame: 'labels', offset: 0, reason: /not a gzip stream: byte offset 0 holds 31 0a/ },
  { name: 'a one-byte file', labels: Buffer.from([0x1f]), blame: 'labels', offset: 0, reason: /not a gzip stream: byte offset 0 holds 1f,/ },
  // Broken gzip.
  { name: 'gzip cut short', images: GOOD_IMAGES.subarray(0, GOOD_IMAGES.length - 12), blame: 'images', offset: GOOD_IMAGES.length - 12, reason: /gzip stream truncated: the compressed data ends at byte offset/ },
  { name: 'gzip header only', labels: GOOD_LABELS.subarray(0, 10), blame: 'labels', offset: 10, reason: /gzip stream truncated: .*\(0 byte\(s\) decompressed\)/ },
  { name: 'gzip CRC damaged', images: flipped(GOOD_IMAGES, CRC_AT), blame: 'images', offset: [CRC_AT, GOOD_IMAGES.length - 1], reason: /gzip stream corrupt: zlib detects "incorrect data check"/ },
  { name: 'deflate data damaged', images: flipped(GOOD_IMAGES, DEFLATE_AT), blame: 'images', offset: [DEFLATE_AT, GOOD_IMAGES.length - 1], reason: /gzip stream corrupt: zlib detects/ },
  { name: 'junk after the gzip stream', labels: Buffer.concat([GOOD_LABELS, Buffer.from('junk')]), blame: 'labels', offset: [GOOD_LABELS.length, GOOD_LABELS.length + 3], reason: /gzip stream corrupt/ },
  // Bad IDX header.
  { name: 'labels magic in the images file', images: gzipSync(idx(IDX_LABELS_MAGIC, [3], [1, 2, 3])), blame: 'images', offset: 0, reason: /bad magic at byte offset 0: 0x00000801, expected 0x00000803/ },
  { name: 'a 2-D magic in the images file', images: gzipSync(idx(0x802, [3, 4], pixels(12))), blame: 'images', offset: 0, reason: /bad magic .*0x00000802/ },
  { name: 'images magic in the labels file', labels: GOOD_IMAGES, blame: 'labels', offset: 0, reason: /bad magic at byte offset 0: 0x00000803, expected 0x00000801/ },
  { name: 'decompresses to nothing', images: gzipSync(Buffer.alloc(0)), blame: 'images', offset: 0, reason: /truncated header: 0 bytes, the magic number needs 4/ },
  { name: 'header cut inside the magic', labels: gzipSync(Buffer.from([0, 0, 8])), blame: 'labels', offset: 3, reason: /truncated header: 3 bytes/ },
  { name: 'header cut after two of three sizes', images: gzipSync(idx(IDX_IMAGES_MAGIC, [3, 2], [])), blame: 'images', offset: 12, reason: /truncated header: 12 bytes, .*needs 16/ },
  // Header sizes that disagree with the payload.
  { name: 'images header claims more images', images: gzipSync(idx(IDX_IMAGES_MAGIC, [4, 2, 2], pixels(12))), blame: 'images', offset: 28, reason: /truncated payload: .*declares 4×2×2 = 16 bytes/ },
  { name: 'images header claims 2^32-1 images', images: gzipSync(idx(IDX_IMAGES_MAGIC, [0xffffffff, 2, 2], pixels(12))), blame: 'images', offset: 4, reason: /declares 4294967295×2×2 = 17179869180 bytes, more than the 268435456-byte limit for an IDX file/ },
  { name: 'images header claims fewer images', images: gzipSync(idx(IDX_IMAGES_MAGIC, [2, 2, 2], pixels(12))), blame: 'images', offset: 24, reason: /unexpected trailing bytes starting at byte offset 24: the header declares 2×2×2 = 8 bytes/ },
  { name: 'images of zero rows', images: gzipSync(idx(IDX_IMAGES_MAGIC, [3, 0, 2], [])), blame: 'images', offset: 8, reason: /image size 0×2 at byte offset 8 is empty/ },
  { name: 'labels header claims more labels', labels: gzipSync(idx(IDX_LABELS_MAGIC, [5], [1, 2, 3])), blame: 'labels', offset: 11, reason: /truncated payload: .*declares 5 = 5 bytes/ },
  { name: 'labels header claims fewer labels', labels: gzipSync(idx(IDX_LABELS_MAGIC, [2], [1, 2, 3])), blame: 'labels', offset: 10, reason: /unexpected trailing bytes starting at byte offset 10/ },
  { name: 'a label outside 0..9', labels: gzipSync(idx(IDX_LABELS_MAGIC, [3], [1, 2, 10])), blame: 'labels', offset: 10, reason: /label 10 at byte offset 10 \(item 2\) is not a class 0\.\.9/ },
  // Two consistent files that do not describe the same items.
  { name: 'fewer labels than images', labels: gzipSync(idx(IDX_LABELS_MAGIC, [2], [1, 2])), blame: 'labels', offset: 4, reason: /count mismatch: header at byte offset 4 declares 2 labels, but .*images\.gz declares 3 images/ },
  // Decompression bombs: memory stays bounded by the header and the limit, whatever the stream inflates to.
  { name: 'a bomb: 8 MiB of zeros behind a header declaring three 2×2 images', images: gzipSync(Buffer.concat([RAW_IMAGES, Buffer.alloc(8 << 20)])), blame: 'images', offset: 28, reason: /unexpected trailing bytes starting at byte offset 28/ },
  { name: 'a header declaring more than the limit', images: gzipSync(idx(IDX_IMAGES_MAGIC, [1000, 28, 28], pixels(12))), blame: 'images', offset: 4, reason: /header at byte offset 4 declares 1000×28×28 = 784000 bytes, more than the 65536-byte limit/, options: { maxBytes: 65536 } },
  { name: 'a compressed file over the limit', images: Buffer.concat([GOOD_IMAGES, Buffer.alloc(100)]), blame: 'images', reason: /is \d+ bytes, more than the 100-byte limit for a gzip-compressed IDX file/, options: { maxBytes: 100 } },
  // Images the model cannot take: refused from the header, not classified.
  { name: '1×1 images for a 28×28 model', images: gzipSync(idx(IDX_IMAGES_MAGIC, [3, 1, 1], pixels(3))), blame: 'images', offset: 8, reason: /image size 1×1 at byte offset 8: the model takes 28×28 images \(other sizes are refused, not resized\)/, options: { imageSize: { rows: 28, cols: 28 } } },
  { name: '500×500 images for a 28×28 model', images: gzipSync(idx(IDX_IMAGES_MAGIC, [3, 500, 500], [])), blame: 'images', offset: 8, reason: /image size 500×500 at byte offset 8: the model takes 28×28/, options: { imageSize: { rows: 28, cols: 28 } } },
  { name: 'more labels than images', labels: gzipSync(idx(IDX_LABELS_MAGIC, [4], [1, 2, 3, 4])), blame: 'labels', offset: 4, reason: /declares 4 labels, but .* declares 3 images/ },
];

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fm-idx-files-'));
});
afterAll(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

async function rejection(p: Promise<unknown>): Promise<FileFormatError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof FileFormatError) return err;
  throw new Error(err === undefined ? 'expected a FileFormatError, but the files were accepted' : `expected a FileFormatError, got ${String(err)}`, { cause: err });
}

describe('malformed IDX files on disk', () => {
  it.each(CASES.map((c, i) => [c.name, c, i] as const))('%s', async (_name, c, i) => {
    const images = join(dir, `${i}-images.gz`);
    const labels = join(dir, `${i}-labels.gz`);
    await writeFile(images, c.images ?? GOOD_IMAGES);
    await writeFile(labels, c.labels ?? GOOD_LABELS);
    const e = await rejection(readIdxPair(images, labels, c.options));
    const blamed = c.blame === 'images' ? images : labels;
    expect(e.file).toBe(blamed);
    expect(e.message.startsWith(`${blamed}: `), e.message).toBe(true);
    expect(e.message).toMatch(c.reason);
    const offsets = [...e.message.matchAll(/byte offset (\d+)/g)].map((m) => Number(m[1]));
    if (typeof c.offset === 'number') {
      expect(offsets, e.message).toContain(c.offset);
    } else if (c.offset !== undefined) {
      const [lo, hi] = c.offset;
      expect(offsets.some((o) => o >= lo && o <= hi), `${e.message}: no byte offset in ${lo}..${hi}`).toBe(true);
    }
  });

  it('the pair every case starts from is read (so each case fails for its own reason)', async () => {
    const images = join(dir, 'ok-images.gz');
    const labels = join(dir, 'ok-labels.gz');
    await writeFile(images, GOOD_IMAGES);
    await writeFile(labels, GOOD_LABELS);
    const t = await readIdxPair(images, labels);
    expect([t.count, t.rows, t.cols]).toEqual([3, 2, 2]);
    expect(Array.from(t.pixels)).toEqual(pixels(12));
    expect(Array.from(t.labels)).toEqual([1, 2, 3]);
  });

  it.each([
    ['a folder', () => dir, 'is a folder, expected a gzip-compressed IDX file'],
    ['/dev/zero', () => '/dev/zero', 'is a device or socket, not a file; expected a gzip-compressed IDX file'],
  ])('%s as the images file is refused before it is read', async (_name, path, reason) => {
    const labels = join(dir, 'labels-for-paths.gz');
    await writeFile(labels, GOOD_LABELS);
    const e = await rejection(readIdxPair(path(), labels));
    expect(e.message).toBe(`${path()}: ${reason}`);
  });
});
