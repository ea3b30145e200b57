import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { HELD_RESULT_BYTES, ResultMemory } from '../src/result-memory.js';

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
  it("gives the caller its own handle on the workers' memory", () => {
    const m = new ResultMemory(1 << 20);
    const { forWorkers, forCaller } = m.take(64);
    expect(forCaller).not.toBe(forWorkers);
    new Int32Array(forWorkers)[3] = 42;
    expect(new Int32Array(forCaller)[3]).toBe(42);
  });

  it("reuses handed-over memory once the caller's handle is collected", async () => {
    const m = new ResultMemory(1 << 20);
    const forWorkers = (() => {
      const r = m.take(4096);
      m.handOver(r.forCaller, r.forWorkers);
      return r.forWorkers;
    })();
    expect(await collectUntil(() => m.keptBytes === 4096)).toBe(true);
    expect(m.take(4096).forWorkers).toBe(forWorkers);
    expect(m.keptBytes).toBe(0);
  });

  it('never reuses memory that was not handed over (a failed call), nor any after close', async () => {
    const m = new ResultMemory(1 << 20);
    (() => void m.take(4096))();
    expect(await collectUntil(() => m.keptBytes > 0)).toBe(false);
    (() => {
      const r = m.take(4096);
      m.handOver(r.forCaller, r.forWorkers);
    })();
    m.close();
    expect(await collectUntil(() => m.keptBytes > 0)).toBe(false);
  });

  it('makes room for the size in use by dropping the sizes handed back longest ago', async () => {
    const m = new ResultMemory(5 * 4096);
    const handBack = (bytes: number) => {
      const r = m.take(bytes);
      m.handOver(r.forCaller, r.forWorkers);
      return r.forWorkers;
    };
    // Four results of one size; then one of another size, which only fits if one of them goes.
    (() => {
      for (let i = 0; i < 4; i++) handBack(4096);
    })();
    expect(await collectUntil(() => m.keptBytes === 4 * 4096)).toBe(true);
    const bigger = (() => handBack(2 * 4096))();
    expect(await collectUntil(() => m.keptBytes === 3 * 4096 + 2 * 4096)).toBe(true);
    expect(m.take(2 * 4096).forWorkers).toBe(bigger);
  });

  it('prompts a collection once callers hold another HELD_RESULT_BYTES, at collectIfDue and not in take', () => {
    const prompts: number[] = [];
    const m = new ResultMemory(0, (bytes) => prompts.push(bytes));
    const held: SharedArrayBuffer[] = [];
    const size = 8 * 2 ** 20;
    const call = () => {
      const r = m.take(size);
      held.push(r.forCaller);
      m.handOver(r.forCaller, r.forWorkers);
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
});
