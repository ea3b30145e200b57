import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { prefault, PREFAULT_MIN_BYTES, untilTouched } from '../src/runtime/fresh-output.js';

// Collection decides when dropped outputs' memory goes, so this test collects on this thread itself.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

describe('fresh outputs faulted in by worker threads', () => {
  it('are zeroed, and dropped ones do not stay alive in the workers', async () => {
    const before = process.memoryUsage().arrayBuffers;
    const length = PREFAULT_MIN_BYTES / 4;
    for (let i = 0; i < 40; i++) {
      const kept = new SharedArrayBuffer(length * 4);
      const out = new Float32Array(structuredClone(kept));
      prefault(kept, out.buffer as SharedArrayBuffer);
      await untilTouched(out.buffer);
      if (i === 0) expect(out.every((x) => x === 0)).toBe(true);
    }
    for (let i = 0; i < 5; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    // 40 outputs of 16 MiB: 640 MiB if the workers' handles kept them.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(320 * 2 ** 20);
  });
});
