import { describe, expect, it } from 'vitest';
import { BufferPool } from '../src/runtime/buffer-pool.js';
import { BufferLedger } from '../src/runtime/ledger.js';

/** The pool's idle limit on a stand-in device: which buffers it keeps, reuses and destroys. */
function fakePool(maxBytes: number) {
  const live = new Set<GPUBuffer>();
  let created = 0;
  const device = {
    createBuffer: ({ size, usage }: { size: number; usage: number }) => {
      created++;
      const b = { size, usage, destroy: () => void live.delete(b as unknown as GPUBuffer) } as unknown as GPUBuffer;
      live.add(b);
      return b;
    },
  } as unknown as GPUDevice;
  const ledger = new BufferLedger();
  ledger.instrument(device, 1);
  const pool = new BufferPool(device, ledger, 1, maxBytes);
  return { pool, live, created: () => created };
}

describe('BufferPool', () => {
  it('hands a released buffer of the same size and usage back instead of creating one', () => {
    const { pool, created } = fakePool(1000);
    const a = pool.acquire(400, 1);
    pool.release(a);
    expect(pool.acquire(400, 1)).toBe(a);
    expect(pool.acquire(400, 2)).not.toBe(a);
    expect(created()).toBe(2);
  });

  it('keeps at most maxBytes idle, dropping the buffer idle longest first', () => {
    const { pool, live } = fakePool(1000);
    const [a, b, c] = [pool.acquire(400, 1), pool.acquire(400, 1), pool.acquire(400, 1)];
    pool.release(a);
    pool.release(b);
    pool.release(c);
    expect(pool.heldBytes).toBe(800);
    expect(live.has(a)).toBe(false);
    expect(live.has(b) && live.has(c)).toBe(true);
  });

  it('makes room before it creates a buffer, so idle and new buffers stay within the limit', () => {
    const { pool, live } = fakePool(1000);
    const old = pool.acquire(600, 1);
    pool.release(old);
    const big = pool.acquire(700, 1);
    expect(live.has(old)).toBe(false);
    expect(pool.heldBytes).toBe(0);
    pool.release(big);
    expect(pool.acquire(700, 1)).toBe(big);
  });

  it('destroys a buffer larger than the limit on release, and everything idle on clear', () => {
    const { pool, live } = fakePool(1000);
    const huge = pool.acquire(2000, 1);
    pool.release(huge);
    expect(live.has(huge)).toBe(false);
    const a = pool.acquire(100, 1);
    pool.release(a);
    pool.clear();
    expect(live.size).toBe(0);
    expect(pool.heldBytes).toBe(0);
    expect(pool.acquire(100, 1)).not.toBe(a);
  });
});
