import { KEEP_BYTES, RESULT_MIN_BYTES, ResultArrays, type ResultCtor } from '@kernelkit/core';

/** Makes a call's result array when the caller gave no `out`: its content is undefined, so the op writes every element (as into an `out`). */
export type NewOutput = <T>(ctor: ResultCtor<T>, length: number) => Promise<T>;

/**
 * The backend's result arrays (ResultArrays in @kernelkit/core): a loop of calls writes memory
 * already faulted in rather than fresh pages. A dropped result comes back through a finalizer,
 * which runs as a task of its own: a call shorter than the pacer's slice never yields, so a large
 * result yields one turn of the event loop first while earlier results are out, or a loop of
 * calls would never see one come back. With one thread there is nothing to overlap a prompted
 * collection with, so it runs as the result is made.
 */
export function resultOutputs(): { readonly results: ResultArrays; readonly newOutput: NewOutput } {
  const results = new ResultArrays(RESULT_MIN_BYTES, KEEP_BYTES);
  const newOutput: NewOutput = async (ctor, length) => {
    if (length * ctor.BYTES_PER_ELEMENT >= results.minBytes && results.outstandingBytes > 0) await new Promise((r) => setImmediate(r));
    const out = results.array(ctor, length);
    results.collectIfDue();
    return out;
  };
  return { results, newOutput };
}
