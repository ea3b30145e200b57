import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * A full GC: `global.gc` when Node runs with --expose-gc, else the flag turned on now and gc
 * taken from a fresh context; undefined where neither works.
 */
export function gcFunction(): (() => void) | undefined {
  const g = (globalThis as { gc?: unknown }).gc;
  if (typeof g === 'function') return g as () => void;
  try {
    v8.setFlagsFromString('--expose-gc');
    const fn = vm.runInNewContext('gc') as unknown;
    return typeof fn === 'function' ? (fn as () => void) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Collects garbage until `done()`, at most `rounds` times; resolves to `done()`. Each round waits
 * 5 ms, since finalization callbacks run as tasks after a collection. Throws where no GC can be had.
 */
export async function collectUntil(done: () => boolean, rounds = 20): Promise<boolean> {
  const gc = gcFunction();
  if (gc === undefined) throw new Error('collectUntil: no garbage collector to call (run node with --expose-gc)');
  for (let i = 0; i < rounds && !done(); i++) {
    gc();
    await new Promise((r) => setTimeout(r, 5));
  }
  return done();
}
