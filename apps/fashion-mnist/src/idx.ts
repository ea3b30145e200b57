/**
 * IDX file reader (the MNIST / Fashion-MNIST format), gzip-compressed as distributed.
 *
 * Layout (big-endian): u32 magic = 0x00000800 | (type << 8) | dims, then one u32 per dimension,
 * then the payload. Images: magic 0x00000803 (u8, 3 dims: count, rows, cols); labels: magic
 * 0x00000801 (u8, 1 dim: count). Every check names the file and the byte offset where the
 * problem is: in the compressed file for gzip errors, in the decompressed stream for IDX errors.
 */
import { constants as zlibConstants, createGunzip, gunzipSync } from 'node:zlib';
import { FileFormatError, errorMessage } from '@kernelkit/core';
import { readBoundedFile } from '@kernelkit/ops';

export const IDX_IMAGES_MAGIC = 0x00000803;
export const IDX_LABELS_MAGIC = 0x00000801;
/** Fashion-MNIST has ten classes; a label outside 0..9 is corruption, not data. */
export const CLASS_COUNT = 10;
/**
 * The most a file may hold, compressed or inflated: the 60 000-image training set inflates to
 * 47 MB, so this leaves room and still refuses a decompression bomb long before memory runs out.
 */
export const IDX_MAX_BYTES = 256 * 1024 * 1024;

export interface IdxReadOptions {
  /** Refuse a file, or its inflated contents, larger than this (default IDX_MAX_BYTES). */
  readonly maxBytes?: number;
}

export interface IdxImageOptions extends IdxReadOptions {
  /** Refuse images of any other size, from the header, before the pixels are inflated. */
  readonly imageSize?: { readonly rows: number; readonly cols: number };
}

export interface IdxImages {
  readonly count: number;
  readonly rows: number;
  readonly cols: number;
  /** `count × rows × cols` bytes, row-major. */
  readonly pixels: Uint8Array;
}

export interface IdxLabels {
  readonly count: number;
  readonly labels: Uint8Array;
}

function checkGzipMagic(gz: Uint8Array, file: string): void {
  if (gz.length === 0) throw new FileFormatError(file, 'not a gzip stream: the file is empty (0 bytes; expected the gzip magic 1f 8b at byte offset 0)');
  if (gz.length < 2 || gz[0] !== 0x1f || gz[1] !== 0x8b) {
    throw new FileFormatError(file, `not a gzip stream: byte offset 0 holds ${hex(gz, 0, 2)}, expected the gzip magic 1f 8b`);
  }
}

/** The header's magic and sizes; `payload` is the byte count they declare. */
interface Header {
  readonly sizes: number[];
  readonly headerBytes: number;
  readonly payload: number;
}

function readHeader(head: Uint8Array, file: string, magic: number, dims: number): Header {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const found = view.getUint32(0, false);
  if (found !== magic) {
    throw new FileFormatError(file, `bad magic at byte offset 0: 0x${found.toString(16).padStart(8, '0')}, expected 0x${magic.toString(16).padStart(8, '0')}`);
  }
  const sizes: number[] = [];
  for (let d = 0; d < dims; d++) sizes.push(view.getUint32(4 + 4 * d, false));
  return { sizes, headerBytes: 4 + 4 * dims, payload: sizes.reduce((a, b) => a * b, 1) };
}

/**
 * Inflates an IDX file through zlib a chunk at a time into a buffer of exactly the size its header
 * declares, refusing it as soon as the header asks for more than `maxBytes`, the data runs past
 * what the header declares, or `checkHeader` refuses the sizes: memory is bounded by the header
 * and the limit, never by what the stream would inflate to. Every check names the file and a byte offset.
 */
function inflateIdx(gz: Uint8Array, file: string, magic: number, dims: number, maxBytes: number, checkHeader: (h: Header) => void): Promise<{ header: Header; raw: Uint8Array }> {
  checkGzipMagic(gz, file);
  const headerBytes = 4 + 4 * dims;
  return new Promise((resolve, reject) => {
    const gunzip = createGunzip();
    const head = new Uint8Array(headerBytes);
    let received = 0;
    let header: Header | undefined;
    let raw: Uint8Array | undefined;
    let failed = false;
    const fail = (err: unknown): void => {
      if (failed) return;
      failed = true;
      gunzip.destroy();
      reject(err);
    };
    const take = (chunk: Buffer): void => {
      let at = 0;
      if (header === undefined) {
        at = Math.min(headerBytes - received, chunk.length);
        head.set(chunk.subarray(0, at), received);
        received += at;
        // Magic first: a file of the wrong kind should say so, not that its header is short.
        if (received >= 4) readHeader(head.subarray(0, 4), file, magic, 0);
        if (received < headerBytes) return;
        header = readHeader(head, file, magic, dims);
        if (headerBytes + header.payload > maxBytes) {
          throw new FileFormatError(file, `header at byte offset 4 declares ${header.sizes.join('×')} = ${header.payload} bytes, more than the ${maxBytes}-byte limit for an IDX file`);
        }
        checkHeader(header);
        raw = new Uint8Array(headerBytes + header.payload);
        raw.set(head);
      }
      const rest = chunk.length - at;
      if (received + rest > raw!.length) {
        throw new FileFormatError(file, `unexpected trailing bytes starting at byte offset ${raw!.length}: the header declares ${header.sizes.join('×')} = ${header.payload} bytes after the ${headerBytes}-byte header`);
      }
      raw!.set(chunk.subarray(at), received);
      received += rest;
    };
    gunzip.on('data', (chunk: Buffer) => {
      if (failed) return;
      try {
        take(chunk);
      } catch (err) {
        fail(err);
      }
    });
    gunzip.on('error', (err) => {
      if (failed) return;
      try {
        fail(new FileFormatError(file, gzipFailure(gz, err, maxBytes), undefined, { cause: err }));
      } catch (e) {
        fail(e);
      }
    });
    gunzip.on('end', () => {
      if (failed) return;
      if (header === undefined) {
        const what = received < 4 ? 'the magic number needs 4' : `an IDX header with ${dims} dimension(s) needs ${headerBytes}`;
        fail(new FileFormatError(file, `truncated header: ${received} bytes, ${what} (ends at byte offset ${received})`));
      } else if (received < raw!.length) {
        fail(new FileFormatError(file, `truncated payload: header at byte offset 4 declares ${header.sizes.join('×')} = ${header.payload} bytes, but the data ends at byte offset ${received} (${received - headerBytes} bytes after the ${headerBytes}-byte header)`));
      } else {
        resolve({ header, raw: raw! });
      }
    });
    gunzip.end(gz);
  });
}

/** Only zlib's own errors are data errors (a RangeError for an output over the buffer limit is not). */
const zlibDataError = (err: unknown): boolean => err instanceof Error && typeof (err as { errno?: unknown }).errno === 'number';

/**
 * zlib does not say where a stream broke, so this finds out (on the error path only): a sync-flush
 * decode of the whole input succeeds when the stream merely stops early; otherwise the shortest
 * prefix that already fails ends at the byte where zlib detects the damage.
 */
function gzipFailure(gz: Uint8Array, err: unknown, maxBytes: number): string {
  const why = errorMessage(err);
  const partial = (n: number): number | undefined => {
    try {
      // The stream failed before passing the limit, so a prefix of it decodes to no more than that.
      return gunzipSync(gz.subarray(0, n), { finishFlush: zlibConstants.Z_SYNC_FLUSH, maxOutputLength: maxBytes + 1 }).length;
    } catch (e) {
      if (!zlibDataError(e)) throw e;
      return undefined;
    }
  };
  if (!zlibDataError(err)) return `gzip stream could not be decompressed (${gz.length} compressed bytes): ${why}`;
  const produced = partial(gz.length);
  if (produced !== undefined) {
    return `gzip stream truncated: the compressed data ends at byte offset ${gz.length} before the end of the stream (${produced} byte(s) decompressed); zlib: ${why}`;
  }
  // Decoding a prefix fails iff the damage lies within it, so the failing prefixes are a suffix of lengths.
  let ok = 0; // a prefix length known to decode
  let bad = gz.length; // a prefix length known to fail
  while (bad - ok > 1) {
    const mid = ok + Math.floor((bad - ok) / 2);
    if (partial(mid) === undefined) bad = mid;
    else ok = mid;
  }
  return `gzip stream corrupt: zlib detects "${why}" at compressed byte offset ${bad - 1} (of ${gz.length} bytes)`;
}

function hex(b: Uint8Array, from: number, n: number): string {
  return Array.from(b.subarray(from, from + n), (v) => v.toString(16).padStart(2, '0')).join(' ') || '(none)';
}

/** Parses a gzip-compressed IDX image file (already in memory). `file` names it in errors. */
export async function parseIdxImages(gz: Uint8Array, file: string, options: IdxImageOptions = {}): Promise<IdxImages> {
  const { imageSize } = options;
  const { header, raw } = await inflateIdx(gz, file, IDX_IMAGES_MAGIC, 3, options.maxBytes ?? IDX_MAX_BYTES, ({ sizes: [, rows = 0, cols = 0] }) => {
    if (rows === 0 || cols === 0) throw new FileFormatError(file, `image size ${rows}×${cols} at byte offset 8 is empty`);
    if (imageSize !== undefined && (rows !== imageSize.rows || cols !== imageSize.cols)) {
      throw new FileFormatError(file, `image size ${rows}×${cols} at byte offset 8: the model takes ${imageSize.rows}×${imageSize.cols} images (other sizes are refused, not resized)`);
    }
  });
  const [count = 0, rows = 0, cols = 0] = header.sizes;
  return { count, rows, cols, pixels: raw.subarray(header.headerBytes) };
}

/** Parses a gzip-compressed IDX label file; every label must be a class 0..9. */
export async function parseIdxLabels(gz: Uint8Array, file: string, options: IdxReadOptions = {}): Promise<IdxLabels> {
  const { header, raw } = await inflateIdx(gz, file, IDX_LABELS_MAGIC, 1, options.maxBytes ?? IDX_MAX_BYTES, () => {});
  const labels = raw.subarray(header.headerBytes);
  for (let i = 0; i < labels.length; i++) {
    const v = labels[i] ?? 0;
    if (v >= CLASS_COUNT) throw new FileFormatError(file, `label ${v} at byte offset ${header.headerBytes + i} (item ${i}) is not a class 0..${CLASS_COUNT - 1}`);
  }
  return { count: header.sizes[0] ?? 0, labels };
}

export interface LabelledImages extends IdxImages {
  readonly labels: Uint8Array;
}

const WHAT = 'a gzip-compressed IDX file';

/**
 * Reads a matched pair of image and label files and checks they describe the same items. Each
 * file is read with the byte limit (folders and devices refused) and inflated with it.
 */
export async function readIdxPair(imagesFile: string, labelsFile: string, options: IdxImageOptions = {}): Promise<LabelledImages> {
  const maxBytes = options.maxBytes ?? IDX_MAX_BYTES;
  const images = await parseIdxImages(await readBoundedFile(imagesFile, maxBytes, WHAT), imagesFile, options);
  const labels = await parseIdxLabels(await readBoundedFile(labelsFile, maxBytes, WHAT), labelsFile, { maxBytes });
  if (images.count !== labels.count) {
    throw new FileFormatError(labelsFile, `count mismatch: header at byte offset 4 declares ${labels.count} labels, but ${imagesFile} declares ${images.count} images`);
  }
  return { ...images, labels: labels.labels };
}
