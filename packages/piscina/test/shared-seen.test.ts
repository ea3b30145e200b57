import { describe, expect, it } from 'vitest';
import { SharedSeen } from '../src/shared-seen.js';

const KiB = 1024;
const ref = (buf: SharedArrayBuffer, id?: number) => ({ buf, off: 0, len: 1, dtype: 'f32', ...(id === undefined ? {} : { id }) });

describe('SharedSeen', () => {
  it("counts a caller's shared array every time it comes", () => {
    const seen = new SharedSeen(10 * KiB);
    const buf = new SharedArrayBuffer(4 * KiB);
    expect(seen.note({ kind: 'x', input: ref(buf) })).toBe(false);
    expect(seen.note({ kind: 'x', input: ref(buf) })).toBe(false);
    expect(seen.note({ kind: 'x', input: ref(buf) })).toBe(true);
  });

  it("counts the pool's own buffers once per id until the next collection", () => {
    const seen = new SharedSeen(10 * KiB);
    const a = new SharedArrayBuffer(4 * KiB);
    const memory = { memory: { buffer: new SharedArrayBuffer(4 * KiB) }, id: 2 };
    for (let i = 0; i < 100; i++) expect(seen.note({ kind: 'x', input: ref(a, 1), memory, n: 3 })).toBe(false);
    // A new buffer past the limit prompts, and the count starts over: the old ids count again.
    expect(seen.note({ kind: 'x', input: ref(new SharedArrayBuffer(4 * KiB), 3) })).toBe(true);
    expect(seen.note({ kind: 'x', input: ref(a, 1), memory })).toBe(false);
    expect(seen.note({ kind: 'x', input: ref(new SharedArrayBuffer(4 * KiB), 4) })).toBe(true);
  });

  it('ignores values that are not shared memory', () => {
    const seen = new SharedSeen(0);
    expect(seen.note({ kind: 'x', n: 5, bounds: [0, 1], input: { buf: new ArrayBuffer(64) } })).toBe(false);
  });
});
