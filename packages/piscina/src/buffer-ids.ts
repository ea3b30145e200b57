/**
 * Ids for the pool's own shared buffers and memories, which its caches hand out call after call.
 * A task names them by id, so a worker counts each one's bytes once towards its next collection
 * rather than once per task (see shared-seen.ts).
 */
let nextId = 1;
const ids = new WeakMap<SharedArrayBuffer, number>();

/** A fresh id (for a shared WebAssembly memory). */
export function newBufferId(): number {
  return nextId++;
}

/** A SharedArrayBuffer of `byteLength` bytes with an id. */
export function pooledSharedBuffer(byteLength: number): SharedArrayBuffer {
  const b = new SharedArrayBuffer(byteLength);
  ids.set(b, newBufferId());
  return b;
}

/** The id of one of the pool's buffers; undefined for any other (a caller's own shared array). */
export function bufferId(b: ArrayBufferLike): number | undefined {
  return ids.get(b as SharedArrayBuffer);
}
