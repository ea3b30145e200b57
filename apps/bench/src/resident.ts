import type { DeviceArray, OpArgs, OpName, RunOptions } from '@kernelkit/ops';
import type { Contender } from './backends.js';
import { checkResult, type Reference } from './check.js';
import { measure, singleSample } from './measure.js';
import { errorMessage } from '@kernelkit/core';

/** The backends whose rows get a `resident` time: those that keep a DeviceArray in device memory. */
export const RESIDENT_BACKENDS: readonly string[] = ['webgpu'];

/** What the resident measurement adds to a row: its median, or notes saying why there is none. */
export interface ResidentResult {
  readonly medianMs?: number;
  readonly notes: readonly string[];
}

const skipped = (why: string): ResidentResult => ({ notes: [`resident not measured: ${why}`] });

type DeviceCall = (op: OpName, args: OpArgs<OpName>, o: RunOptions<never>) => Promise<DeviceArray>;

/**
 * Puts a host array on the device through the public API, which has no upload call of its own:
 * a zero-step stencil returns its f32 grid as a DeviceArray, and an integer scan of the
 * wrap-around differences gives back the array itself, bit for bit.
 */
export async function toDevice(run: DeviceCall, input: unknown): Promise<DeviceArray> {
  const o = { output: 'device' } as RunOptions<never>;
  if (input instanceof Float32Array) return run('stencil3d', { input, nx: input.length, ny: 1, nz: 1, steps: 0 } as OpArgs<'stencil3d'>, o);
  if (input instanceof Uint32Array || input instanceof Int32Array) {
    const diff = new (input.constructor as Uint32ArrayConstructor | Int32ArrayConstructor)(input.length);
    for (let i = input.length - 1; i > 0; i--) diff[i] = input[i]! - input[i - 1]!;
    if (input.length > 0) diff[0] = input[0]!;
    return run('scan', { input: diff } as OpArgs<'scan'>, o);
  }
  throw new Error(`no way to put a ${Object.prototype.toString.call(input).slice(8, -1)} input on the device`);
}

/**
 * Times `op` with its input already a DeviceArray and its output kept on the device (disposed
 * after each call): the call's cost without either host transfer. A time is given only when the
 * call really ran that way and its output (read back once) passes the check against `ref`;
 * otherwise a note says why not.
 */
export async function measureResident(
  b: Contender,
  op: OpName,
  args: OpArgs<OpName>,
  variant: string | undefined,
  ref: Reference | undefined,
  budgetMs: number,
  singleShotMs: number,
): Promise<ResidentResult> {
  if (op === 'gridSearch') return { notes: [] };
  const run: DeviceCall = async (o, a, opts) => (await b.call(o, a, opts)).data as unknown as DeviceArray;
  let handle: DeviceArray;
  try {
    handle = await toDevice(run, (args as { input: unknown }).input);
  } catch (err) {
    return skipped(`the input could not be put on the device (${errorMessage(err)})`);
  }
  try {
    // A backend may hold a DeviceArray in host memory (an op that returns host arrays): a time
    // with such an input or output would include the copies this column leaves out.
    if (handle.location !== 'device') return skipped(`this backend holds a ${handle.dtype} DeviceArray from ${handle.dtype === 'f32' ? 'stencil3d' : 'scan'} in host memory, so there is no device-resident input to start from`);
    const opts = { ...(variant === undefined ? {} : { variant }), output: 'device' } as RunOptions<never>;
    // The Contender call types array inputs; the backend behind it takes a DeviceArray in their place.
    const onDevice = { ...args, input: handle } as unknown as OpArgs<OpName>;
    const t = performance.now();
    const first = await b.call(op, onDevice, opts);
    const estMs = performance.now() - t;
    const out = first.data as unknown as DeviceArray;
    const host = await out.read().finally(() => out.dispose());
    // The backend kit notes an input it read back to the host first (an op that takes host arrays).
    const readBack = (first.notes ?? []).find((n) => n.startsWith('input '));
    if (readBack !== undefined) return skipped(`${b.name} ${op} takes host arrays (a DeviceArray input is read back first)`);
    if (out.location !== 'device') return skipped(`${b.name} ${op} with output 'device' returns a host-held array`);
    if (ref) {
      const r = checkResult(op, args, host as never, ref);
      if (r.message !== undefined) return skipped(`its output is wrong (${r.how}): ${r.message}`);
    }
    const m =
      estMs > singleShotMs
        ? singleSample(estMs, undefined)
        : await measure(
            async () => {
              (await run(op, onDevice, opts)).dispose();
              return undefined;
            },
            estMs,
            budgetMs,
            singleShotMs,
          );
    return { medianMs: m.stats.medianMs, notes: [] };
  } catch (err) {
    return skipped(errorMessage(err));
  } finally {
    handle.dispose();
  }
}
