import { describe, expect, it } from 'vitest';
import { AbortError, DeviceError } from '@kernelkit/core';
import { LANDING_RECENT_CALLS, LandingPool } from '../src/runtime/landing.js';
import { BufferLedger } from '../src/runtime/ledger.js';

/**
 * The landing pool's sizing and failure rules on a stand-in device (what the GPU tests in
 * conv2d-chunks.test.ts cannot reach on llvmpipe: a device out of memory for the buffer, a
 * failed map).
 */
function fakeHost(options: { oom?: (size: number) => boolean; failMap?: boolean } = {}) {
  const live = new Set<{ size: number }>();
  let scopeOom = false;
  const device = {
    pushErrorScope: () => {
      scopeOom = false;
    },
    popErrorScope: async () => (scopeOom ? { message: 'out of memory' } : null),
    createBuffer: ({ size, usage, mappedAtCreation }: { size: number; usage: number; mappedAtCreation?: boolean }) => {
      if (options.oom?.(size)) scopeOom = true;
      const bytes = new ArrayBuffer(size);
      const b = {
        size,
        usage,
        mapped: mappedAtCreation === true,
        maps: 0,
        destroy: () => void live.delete(b),
        mapAsync: async () => {
          b.maps++;
          if (options.failMap) throw new Error('map refused');
          b.mapped = true;
        },
        // The whole buffer's memory (the code under test views only the range it asked for).
        getMappedRange: () => {
          if (!b.mapped) throw new Error('not mapped');
          return bytes;
        },
        unmap: () => {
          b.mapped = false;
        },
        bytes: () => new Uint8Array(bytes),
      };
      live.add(b);
      return b;
    },
  };
  const host = { device: device as unknown as GPUDevice, ledger: new BufferLedger(), race: <T>(p: Promise<T>) => p };
  return { host, live };
}

describe('LandingPool', () => {
  it('is as large as the largest of the recent calls: grows for a larger one, shrinks once none of the last calls needed it', async () => {
    const { host, live } = fakeHost();
    const pool = new LandingPool(host);
    const take = async (bytes: number) => {
      const l = (await pool.take(bytes))!;
      expect(l.buffer.size).toBeGreaterThanOrEqual(bytes);
      l.release();
    };
    await take(10_000);
    expect(pool.bytes).toBe(12_288);
    await take(100_000);
    expect(pool.bytes).toBe(102_400);
    for (let i = 1; i < LANDING_RECENT_CALLS; i++) await take(5000);
    expect(pool.bytes).toBe(102_400);
    await take(5000);
    expect(pool.bytes).toBe(8192);
    expect(live.size).toBe(1);
    pool.destroy();
    expect(live.size).toBe(0);
    expect(await pool.take(16)).toBeUndefined();
  });

  it('one call at a time; a device out of memory for it gives undefined and keeps nothing', async () => {
    const { host, live } = fakeHost({ oom: (size) => size > 1 << 20 });
    const pool = new LandingPool(host);
    const held = (await pool.take(1000))!;
    expect(await pool.take(1000)).toBeUndefined();
    held.release();
    held.release();
    expect(await pool.take(2 << 20)).toBeUndefined();
    expect(live.size).toBe(0);
    const again = await pool.take(1000);
    expect(again).toBeDefined();
    again!.release();
  });

  it('copyOut writes the bytes; a failed map leaves the target untouched, drops the buffer and says DeviceError', async () => {
    const ok = new LandingPool(fakeHost().host);
    const l = (await ok.take(8))!;
    (l.buffer as unknown as { bytes(): Uint8Array }).bytes().fill(7);
    const into = new Uint8Array(8);
    await l.copyOut(into);
    expect([...into]).toEqual([7, 7, 7, 7, 7, 7, 7, 7]);
    l.release();
    const { host, live } = fakeHost({ failMap: true });
    const failing = new LandingPool(host);
    const f = (await failing.take(8))!;
    const target = new Uint8Array(8).fill(3);
    await expect(f.copyOut(target)).rejects.toBeInstanceOf(DeviceError);
    expect([...target]).toEqual([3, 3, 3, 3, 3, 3, 3, 3]);
    expect(live.size).toBe(0);
    f.release();
  });

  it('write pools: copyIn fills the mapped buffer (a ragged tail padded with zeros) and unmaps it; release maps it again for the next call', async () => {
    const { host } = fakeHost();
    const pool = new LandingPool(host, 'write');
    const l = (await pool.take(6))!;
    type Fake = { mapped: boolean; maps: number; bytes(): Uint8Array };
    const fake = l.buffer as unknown as Fake;
    fake.bytes().fill(9);
    await l.copyIn(new Uint8Array([1, 2, 3, 4, 5, 6]));
    expect([...fake.bytes().subarray(0, 9)]).toEqual([1, 2, 3, 4, 5, 6, 0, 0, 9]);
    expect(fake.mapped).toBe(false);
    await expect(l.copyOut(new Uint8Array(4))).rejects.toThrow(/for writes/);
    l.release();
    expect(fake.maps).toBe(1);
    const again = (await pool.take(6))!;
    expect(again.buffer).toBe(l.buffer);
    await again.copyIn(new Uint8Array([7, 7, 7, 7]));
    expect([...fake.bytes().subarray(0, 4)]).toEqual([7, 7, 7, 7]);
    again.release();
    // Released without a copy: still mapped, nothing to map again.
    const idle = (await pool.take(6))!;
    idle.release();
    expect(fake.maps).toBe(2);
    const unused = (await pool.take(6))!;
    await unused.copyIn(new Uint8Array(4));
    unused.release();
    expect(fake.maps).toBe(3);
  });

  it('write pools: an abort between pieces of a large copy rejects with AbortError and leaves the buffer to be mapped afresh', async () => {
    const { host } = fakeHost();
    const piece = 1 << 20;
    const pool = new LandingPool(host, 'write', piece);
    const bytes = 2 * piece + 8;
    const l = (await pool.take(bytes))!;
    const fake = l.buffer as unknown as { mapped: boolean; maps: number };
    const ac = new AbortController();
    const copy = l.copyIn(new Uint8Array(bytes), ac.signal);
    ac.abort(new Error('stop'));
    await expect(copy).rejects.toBeInstanceOf(AbortError);
    expect(fake.mapped).toBe(false);
    l.release();
    expect(fake.maps).toBe(1);
    const next = (await pool.take(bytes))!;
    await next.copyIn(new Uint8Array(bytes));
    next.release();
  });
});
