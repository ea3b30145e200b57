import { describe, expect, it } from 'vitest';
import { DeviceError } from '@kernelkit/core';
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
    createBuffer: ({ size, usage }: { size: number; usage: number }) => {
      if (options.oom?.(size)) scopeOom = true;
      const bytes = new ArrayBuffer(size);
      const b = {
        size,
        usage,
        destroy: () => void live.delete(b),
        mapAsync: async () => {
          if (options.failMap) throw new Error('map refused');
        },
        getMappedRange: (offset: number, length: number) => bytes.slice(offset, offset + length),
        unmap: () => {},
        fill: (v: number) => new Uint8Array(bytes).fill(v),
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
    (l.buffer as unknown as { fill(v: number): void }).fill(7);
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
});
