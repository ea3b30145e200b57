import { describe, expect, it } from 'vitest';
import { DisposedError } from '@kernelkit/core';
import { webgpuScanStream, createWebGpuBackend } from '../src/index.js';
import { liveGpuBuffers, setStagingShape } from '../src/testing.js';

/**
 * The dispose rule (issue #17) for the streaming scan, which runs outside the backend kit's
 * calls: a dispose waits for the pieces in flight, the stream yields the chunks they complete,
 * and anything after them rejects with DisposedError.
 */
describe('webgpuScanStream and dispose', () => {
  it('a chunk in flight when the backend is disposed still arrives, exact; the next one rejects with DisposedError', async () => {
    const b = await createWebGpuBackend({ adapter: 'software' });
    // 4 KiB staging slices: the second chunk's readback takes hundreds of map round trips, so
    // it is certainly still running when dispose() is called below.
    await setStagingShape(b, 2, 4096);
    const n = 1 << 18;
    let returned = false;
    async function* source(): AsyncGenerator<Uint32Array> {
      try {
        yield new Uint32Array(1000).fill(1);
        yield new Uint32Array(n).fill(2);
        for (;;) yield new Uint32Array(10).fill(3);
      } finally {
        returned = true;
      }
    }
    const stream = webgpuScanStream(b, source());
    // Two buffer sets: the first chunk comes out once the second one is submitted.
    const first = await stream.next();
    expect(first.value?.[999]).toBe(1000);
    const disposing = b.dispose();
    let disposed = false;
    void disposing.then(() => (disposed = true));
    const second = await stream.next();
    expect(second.done).toBe(false);
    const out = second.value!;
    expect(out.length).toBe(n);
    expect(out[0]).toBe(1002);
    expect(out[n - 1]).toBe(1000 + 2 * n);
    expect(out[12345]).toBe(1000 + 2 * 12346);
    await expect(stream.next()).rejects.toBeInstanceOf(DisposedError);
    expect(returned).toBe(true);
    await disposing;
    expect(disposed).toBe(true);
    expect(liveGpuBuffers(b)).toBe(0);
  });

  it('a stream whose consumer stops pulling does not hold dispose up: it settles, and the stream then rejects with DisposedError', async () => {
    const b = await createWebGpuBackend({ adapter: 'software' });
    const stream = webgpuScanStream(b, (function* () {
      for (;;) yield new Uint32Array(5000).fill(1);
    })());
    expect((await stream.next()).value?.[4999]).toBe(5000);
    await b.dispose();
    expect(liveGpuBuffers(b)).toBe(0);
    // The piece in flight at the dispose completed its chunk: it comes out, then the refusal.
    const next = await stream.next();
    expect(next.value?.[4999]).toBe(10_000);
    await expect(stream.next()).rejects.toBeInstanceOf(DisposedError);
  });
});
