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
