import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { callsUntilResultsReused, HELD_PER_HEAP_BYTE, HELD_RESULT_BYTES, RESULT_MIN_BYTES, ResultArrays, ResultMemory } from '../src/result-memory.js';

// Collection decides when memory comes back, so these tests collect garbage themselves.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Collects until `done()` (finalization callbacks run as tasks after a collection), at most 20 rounds. */
async function collectUntil(done: () => boolean): Promise<boolean> {
  for (let i = 0; i < 20 && !done(); i++) {
    gc();
    await new Promise((r) => setTimeout(r, 5));
  }
  return done();
}

describe('ResultMemory', () => {
  it("gives the caller its own handle on the kept memory", () => {
    const m = new ResultMemory(1 << 20);
    const { kept, forCaller } = m.take(64);
    expect(forCaller).not.toBe(kept);
    new Int32Array(kept)[3] = 42;
    expect(new Int32Array(forCaller)[3]).toBe(42);
  });

  it("reuses handed-over memory once the caller's handle is collected", async () => {
    const m = new ResultMemory(1 << 20);
    const kept = (() => {
      const r = m.take(4096);
      m.handOver(r.forCaller, r.kept);
      return r.kept;
    })();
    expect(await collectUntil(() => m.keptBytes === 4096)).toBe(true);
    expect(m.take(4096).kept).toBe(kept);
    expect(m.keptBytes).toBe(0);
  });

  it('never reuses memory that was not handed over (a failed call), nor any after close', async () => {
    const m = new ResultMemory(1 << 20);
    (() => void m.take(4096))();
    expect(await collectUntil(() => m.keptBytes > 0)).toBe(false);
    (() => {
      const r = m.take(4096);
      m.handOver(r.forCaller, r.kept);
    })();
    m.close();
    expect(await collectUntil(() => m.keptBytes > 0)).toBe(false);
  });

  it('makes room for the size in use by dropping the sizes handed back longest ago', async () => {
    const m = new ResultMemory(5 * 4096);
    const handBack = (bytes: number) => {
      const r = m.take(bytes);
      m.handOver(r.forCaller, r.kept);
      return r.kept;
    };
    // Four results of one size; then one of another size, which only fits if one of them goes.
    (() => {
      for (let i = 0; i < 4; i++) handBack(4096);
    })();
    expect(await collectUntil(() => m.keptBytes === 4 * 4096)).toBe(true);
    const bigger = (() => handBack(2 * 4096))();
    expect(await collectUntil(() => m.keptBytes === 3 * 4096 + 2 * 4096)).toBe(true);
    expect(m.take(2 * 4096).kept).toBe(bigger);
  });

  it('counts results taken, those on reused memory and prompted collections', async () => {
    const prompts: number[] = [];
    const m = new ResultMemory(1 << 20, { prompt: (bytes) => prompts.push(bytes) });
    expect(m.stats).toEqual({ takes: 0, reused: 0, prompts: 0, keptBytes: 0, outstandingBytes: 0 });
    (() => {
      const r = m.take(4096);
      m.handOver(r.forCaller, r.kept);
    })();
    expect(m.stats).toMatchObject({ takes: 1, reused: 0, outstandingBytes: 4096 });
    expect(await collectUntil(() => m.keptBytes === 4096)).toBe(true);
    m.take(4096);
    m.take(4096);
    expect(m.stats).toEqual({ takes: 3, reused: 1, prompts: 0, keptBytes: 0, outstandingBytes: 0 });
    const held = Array.from({ length: HELD_RESULT_BYTES / 2 ** 20 + 2 }, () => {
      const r = m.take(2 ** 20);
      m.handOver(r.forCaller, r.kept);
      return r.forCaller;
    });
    m.collectIfDue();
    // Due at the last take, over what callers held before it.
    expect(prompts).toEqual([(held.length - 1) * 2 ** 20]);
    expect(m.stats.prompts).toBe(1);
  });

  it('prompts a collection once callers hold another HELD_RESULT_BYTES, at collectIfDue and not in take', () => {
    const prompts: number[] = [];
    const m = new ResultMemory(0, { prompt: (bytes) => prompts.push(bytes) });
    const held: SharedArrayBuffer[] = [];
    const size = 8 * 2 ** 20;
    const call = () => {
      const r = m.take(size);
      held.push(r.forCaller);
      m.handOver(r.forCaller, r.kept);
      m.collectIfDue();
    };
    for (let i = 0; i * size <= HELD_RESULT_BYTES; i++) call();
    expect(prompts).toEqual([]);
    m.take(size);
    expect(prompts).toEqual([]);
    m.collectIfDue();
    expect(prompts).toEqual([held.length * size]);
    m.collectIfDue();
    expect(prompts).toHaveLength(1);
  });

  it('waits for HELD_PER_HEAP_BYTE times the heap in use between prompts when that is more, up to the bytes it keeps', () => {
    const size = 8 * 2 ** 20;
    const run = (heap: number, keep: number, calls: number): number[] => {
      const prompts: number[] = [];
      const m = new ResultMemory(keep, { prompt: (bytes) => prompts.push(bytes), heapBytes: () => heap });
      for (let i = 0; i < calls; i++) {
        const r = m.take(size);
        m.handOver(r.forCaller, r.kept);
        m.collectIfDue();
      }
      return prompts;
    };
    const heap = 48 * 2 ** 20;
    const every = HELD_PER_HEAP_BYTE * heap;
    expect(every).toBeGreaterThan(HELD_RESULT_BYTES);
    // A prompt once more than `every` is held (the take that sees it comes one call later).
    expect(run(heap, 2 ** 31, every / size + 1)).toEqual([]);
    expect(run(heap, 2 ** 31, every / size + 2)).toEqual([every + size]);
    // Capped by the bytes kept free, but never below HELD_RESULT_BYTES.
    expect(run(heap, 80 * 2 ** 20, 12)).toEqual([88 * 2 ** 20]);
    expect(run(heap, 0, HELD_RESULT_BYTES / size + 2)).toEqual([HELD_RESULT_BYTES + size]);
  });
});

describe('callsUntilResultsReused', () => {
  it('is 0 under RESULT_MIN_BYTES, else the calls whose results fill the held bound and three more', () => {
    const held = 64 * 2 ** 20;
    expect(callsUntilResultsReused(RESULT_MIN_BYTES - 1, held)).toBe(0);
    expect(callsUntilResultsReused(RESULT_MIN_BYTES, held)).toBe(64 + 3);
    expect(callsUntilResultsReused(2 ** 22, held)).toBe(16 + 3);
    expect(callsUntilResultsReused(5 * 2 ** 20, held)).toBe(12 + 3);
    expect(callsUntilResultsReused(2 ** 28, held)).toBe(3);
  });

  it("is how many calls a loop that keeps only its latest result makes until a ResultMemory's result comes back, the last of them the first reused", async () => {
    const bytes = 2 ** 22;
    let prompted = false;
    const memory = new ResultMemory(2 ** 30, { prompt: () => void (prompted = true), heapBytes: () => 0 });
    const calls = callsUntilResultsReused(bytes, HELD_RESULT_BYTES);
    const reused: boolean[] = [];
    let latest: SharedArrayBuffer | undefined;
    for (let i = 0; i < calls; i++) {
      const r = memory.take(bytes);
      reused.push(r.reused);
      memory.collectIfDue();
      memory.handOver(r.forCaller, r.kept);
      latest = r.forCaller;
      if (prompted) {
        prompted = false;
        expect(await collectUntil(() => memory.keptBytes > 0)).toBe(true);
      }
    }
    expect(latest?.byteLength).toBe(bytes);
    expect(reused.indexOf(true)).toBe(calls - 1);
  });
});

describe('ResultArrays', () => {
  const MIN = 4096;

  it('makes small results plain arrays, larger ones views of kept shared memory', () => {
    const r = new ResultArrays(MIN, 1 << 20);
    expect(r.array(Float32Array, MIN / 4 - 1).buffer).toBeInstanceOf(ArrayBuffer);
    expect(r.array(Float32Array, MIN / 4).buffer).toBeInstanceOf(SharedArrayBuffer);
  });

  it('reuses a result only once it was handed over and collected, and tells fresh memory apart', async () => {
    const r = new ResultArrays(MIN, 1 << 20);
    const fresh: number[] = [];
    const make = () => r.array(Uint32Array, 2048, (kept) => fresh.push(kept.byteLength));
    (() => void make())();
    expect(await collectUntil(() => r.keptBytes > 0)).toBe(false);
    (() => {
      const a = make();
      a[5] = 99;
      r.handOver(a);
      // Handing over twice, or something that is no result, changes nothing.
      r.handOver(a);
      r.handOver(new Uint32Array(2048));
      r.handOver({});
    })();
    expect(await collectUntil(() => r.keptBytes === 8192)).toBe(true);
    expect(fresh).toEqual([8192, 8192]);
    const again = make();
    expect(fresh).toHaveLength(2);
    expect(r.keptBytes).toBe(0);
    // The memory of the dropped result: its content is what that result left.
    expect(again[5]).toBe(99);
    r.close();
  });
});
