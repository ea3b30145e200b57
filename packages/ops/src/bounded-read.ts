/**
 * Reading a data file named by a user, with a byte limit: folders and devices are refused before
 * any read (`/dev/zero` never ends), a regular file over the limit is refused from its size, and a
 * pipe is cut off as soon as it passes the limit, so memory stays bounded whatever the path names.
 */
import { open } from 'node:fs/promises';
import { FileFormatError } from '@kernelkit/core';

const CHUNK_BYTES = 64 * 1024;

/**
 * The file's bytes in chunks, `maxBytes` at most; `what` names the kind of file in the errors
 * ("a CS610 grid file"). Throws FileFormatError naming `path` for a folder, a device or socket,
 * or more than `maxBytes` bytes; the system's own error (which names the path) when it cannot be opened.
 */
export async function* readFileChunks(path: string, maxBytes: number, what: string): AsyncGenerator<Uint8Array, void, undefined> {
  const handle = await open(path, 'r');
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new FileFormatError(path, `is a folder, expected ${what}`);
    if (!stat.isFile() && !stat.isFIFO()) throw new FileFormatError(path, `is a device or socket, not a file; expected ${what}`);
    if (stat.isFile() && stat.size > maxBytes) throw new FileFormatError(path, `is ${stat.size} bytes, more than the ${maxBytes}-byte limit for ${what}`);
    let total = 0;
    for (;;) {
      // One byte past the limit is enough to know the file is too long.
      const want = Math.min(CHUNK_BYTES, maxBytes + 1 - total);
      const buffer = new Uint8Array(want);
      const { bytesRead } = await handle.read(buffer, 0, want, null);
      if (bytesRead === 0) return;
      total += bytesRead;
      if (total > maxBytes) throw new FileFormatError(path, `holds more than the ${maxBytes}-byte limit for ${what}`);
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/** The whole file, read with `readFileChunks`' checks. */
export async function readBoundedFile(path: string, maxBytes: number, what: string): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of readFileChunks(path, maxBytes, what)) {
    chunks.push(chunk);
    total += chunk.length;
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
