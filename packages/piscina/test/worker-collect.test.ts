import { once } from 'node:events';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { ScanSumTask } from '../src/protocol.js';

// Collection decides when dropped buffers' memory goes, so this test collects on this thread itself.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const WORKER = new URL('../dist/worker.js', import.meta.url).href;
const MiB = 2 ** 20;

describe("the pool's worker", () => {
  it("does not keep past tasks' shared buffers alive once nothing else holds them", async () => {
    // The pool's worker function in a plain worker thread, fed one task per message.
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       import(${JSON.stringify(WORKER)}).then(({ default: run }) => {
         parentPort.on('message', (task) => parentPort.postMessage(run(task)));
         parentPort.postMessage('ready');
       });`,
      { eval: true },
    );
    try {
      await once(worker, 'message');
      const before = process.memoryUsage().arrayBuffers;
      for (let i = 0; i < 40; i++) {
        const buf = new SharedArrayBuffer(16 * MiB);
        new Uint8Array(buf).fill(1);
        const task: ScanSumTask = { kind: 'scanSum', input: { buf, off: 0, len: 4, dtype: 'u32' }, start: 0, end: 4, dtype: 'u32' };
        worker.postMessage(task);
        const [sum] = (await once(worker, 'message')) as [number];
        expect(sum).toBe(4 * 0x01010101);
      }
      for (let i = 0; i < 5; i++) {
        gc();
        await new Promise((r) => setTimeout(r, 20));
      }
      // 40 buffers of 16 MiB: 640 MiB if the worker's handles kept them all.
      expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(400 * MiB);
    } finally {
      await worker.terminate();
    }
  });
});

describe("a module path's result left in module memory", () => {
  it('comes back for the next call of its size once the caller drops it, and is not taken while held', async () => {
    const { createPiscinaBackend } = await import('../src/index.js');
    const { moduleResultStats } = await import('../src/testing.js');
    const { convLayerCase } = await import('@kernelkit/ops/testing');
    const { verifyResult } = await import('@kernelkit/ops');
    await using backend = await createPiscinaBackend({ threads: 2, inlineBelow: { conv2d: 0, stencil3d: 0, scan: 0, gridSearch: 0, convLayer: 0 } });
    const l = convLayerCase([9, 2, 30, 26, 6, 5], 7);
    const held = await backend.convLayer(l);
    const heldCopy = held.data.slice();
    const problems: unknown[] = [];
    // Each result lives only inside this function's frame, so the collection can take it.
    const callAndDrop = async (i: number) => {
      const r = await backend.convLayer(l);
      if (r.data.buffer === held.data.buffer) problems.push(`call ${i} got the held result's memory`);
      const wrong = verifyResult('convLayer', l, r.data);
      if (wrong !== undefined) problems.push(wrong);
    };
    for (let i = 0; i < 8; i++) {
      await callAndDrop(i);
      // Drop r, and let the collection hand its memory back.
      gc();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(problems).toEqual([]);
    const s = moduleResultStats(backend);
    expect(s.takes).toBe(9);
    expect(s.reused).toBeGreaterThan(0);
    // The held result is the only one outstanding, and still as it was.
    expect(s.outstandingBytes).toBe(held.data.buffer.byteLength);
    expect(held.data).toEqual(heldCopy);
  });
});
