/**
 * IDX file reader (the MNIST / Fashion-MNIST format), gzip-compressed as distributed.
 *
 * Layout (big-endian): u32 magic = 0x00000800 | (type << 8) | dims, then one u32 per dimension,
 * then the payload. Images: magic 0x00000803 (u8, 3 dims: count, rows, cols); labels: magic
 * 0x00000801 (u8, 1 dim: count). Every check names the file and the byte offset where the
 * problem is: in the compressed file for gzip errors, in the decompressed stream for IDX errors.
 */
import { readFileSync } from 'node:fs';
import { constants as zlibConstants, gunzipSync } from 'node:zlib';
import { FileFormatError } from '@kernelkit/core';

export const IDX_IMAGES_MAGIC = 0x00000803;
export const IDX_LABELS_MAGIC = 0x00000801;
/** Fashion-MNIST has ten classes; a label outside 0..9 is corruption, not data. */
export const CLASS_COUNT = 10;

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

function gunzip(gz: Uint8Array, file: string): Uint8Array {
  if (gz.length === 0) throw new FileFormatError(file, 'not a gzip stream: the file is empty (0 bytes; expected the gzip magic 1f 8b at byte offset 0)');
  if (gz.length < 2 || gz[0] !== 0x1f || gz[1] !== 0x8b) {
    throw new FileFormatError(file, `not a gzip stream: byte offset 0 holds ${hex(gz, 0, 2)}, expected the gzip magic 1f 8b`);
  }
  try {
    return gunzipSync(gz);
  } catch (err) {
    throw new FileFormatError(file, gzipFailure(gz, err), undefined, { cause: err });
  }
}

/** Only zlib's own errors are data errors (a RangeError for an output over the buffer limit is not). */
const zlibDataError = (err: unknown): boolean => err instanceof Error && typeof (err as { errno?: unknown }).errno === 'number';

/**
 * zlib does not say where a stream broke, so this finds out (on the error path only): a sync-flush
 * decode of the whole input succeeds when the stream merely stops early; otherwise the shortest
 * prefix that already fails ends at the byte where zlib detects the damage.
 */
function gzipFailure(gz: Uint8Array, err: unknown): string {
  const why = err instanceof Error ? err.message : String(err);
  const partial = (n: number): number | undefined => {
    try {
      return gunzipSync(gz.subarray(0, n), { finishFlush: zlibConstants.Z_SYNC_FLUSH }).length;
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

/** Reads the header (magic + `dims` sizes) and checks the payload is exactly `itemBytes × count`. */
function header(raw: Uint8Array, file: string, magic: number, dims: number): number[] {
  // Magic first: a file of the wrong kind should say so, not that its header is short.
  if (raw.length < 4) throw new FileFormatError(file, `truncated header: ${raw.length} bytes, the magic number needs 4 (ends at byte offset ${raw.length})`);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const found = view.getUint32(0, false);
  if (found !== magic) {
    throw new FileFormatError(file, `bad magic at byte offset 0: 0x${found.toString(16).padStart(8, '0')}, expected 0x${magic.toString(16).padStart(8, '0')}`);
  }
  const headerBytes = 4 + 4 * dims;
  if (raw.length < headerBytes) {
    throw new FileFormatError(file, `truncated header: ${raw.length} bytes, an IDX header with ${dims} dimension(s) needs ${headerBytes} (ends at byte offset ${raw.length})`);
  }
  const sizes: number[] = [];
  for (let d = 0; d < dims; d++) sizes.push(view.getUint32(4 + 4 * d, false));
  const payload = sizes.reduce((a, b) => a * b, 1);
  const have = raw.length - headerBytes;
  if (have < payload) {
    throw new FileFormatError(file, `truncated payload: header at byte offset 4 declares ${sizes.join('×')} = ${payload} bytes, but the data ends at byte offset ${raw.length} (${have} bytes after the ${headerBytes}-byte header)`);
  }
  if (have > payload) {
    throw new FileFormatError(file, `${have - payload} unexpected trailing byte(s) starting at byte offset ${headerBytes + payload}`);
  }
  return sizes;
}

/** Parses a gzip-compressed IDX image file (already in memory). `file` names it in errors. */
export function parseIdxImages(gz: Uint8Array, file: string): IdxImages {
  const raw = gunzip(gz, file);
  const [count = 0, rows = 0, cols = 0] = header(raw, file, IDX_IMAGES_MAGIC, 3);
  if (rows === 0 || cols === 0) throw new FileFormatError(file, `image size ${rows}×${cols} at byte offset 8 is empty`);
  return { count, rows, cols, pixels: raw.subarray(16) };
}

/** Parses a gzip-compressed IDX label file; every label must be a class 0..9. */
export function parseIdxLabels(gz: Uint8Array, file: string): IdxLabels {
  const raw = gunzip(gz, file);
  const [count = 0] = header(raw, file, IDX_LABELS_MAGIC, 1);
  const labels = raw.subarray(8);
  for (let i = 0; i < labels.length; i++) {
    const v = labels[i] ?? 0;
    if (v >= CLASS_COUNT) throw new FileFormatError(file, `label ${v} at byte offset ${8 + i} (item ${i}) is not a class 0..${CLASS_COUNT - 1}`);
  }
  return { count, labels };
}

export interface LabelledImages extends IdxImages {
  readonly labels: Uint8Array;
}

/** Reads a matched pair of image and label files and checks they describe the same items. */
export function readIdxPair(imagesFile: string, labelsFile: string): LabelledImages {
  const images = parseIdxImages(readFileSync(imagesFile), imagesFile);
  const labels = parseIdxLabels(readFileSync(labelsFile), labelsFile);
  if (images.count !== labels.count) {
    throw new FileFormatError(labelsFile, `count mismatch: header at byte offset 4 declares ${labels.count} labels, but ${imagesFile} declares ${images.count} images`);
  }
  return { ...images, labels: labels.labels };
}
