import { copyInto, DeviceError } from '@kernelkit/core';
import type { OpContext, OpData, OpImplementation, OpName, OpOutput, OpProblem, OpRunner } from '@kernelkit/ops';
import type { GpuDevice } from './device.js';

/**
 * Several devices running one call's work (backend option `devices`): the call is cut into
 * shards, each device takes the next shard as soon as it is free, and the op merges the shard
 * results in shard order, so the result is the same whichever device ran which shard.
 */

// DeviceErrors that mean "this device is gone" (lost during the call, or lost and not
// recreatable): the shard it ran can run on another device. A WeakSet, not a subclass, so the
// error a single-device caller sees stays a plain DeviceError.
const losses = new WeakSet<object>();

export function markDeviceLoss<E extends Error>(e: E): E {
  losses.add(e);
  return e;
}

export function isDeviceLoss(e: unknown): boolean {
  return typeof e === 'object' && e !== null && losses.has(e);
}

// Outputs of the backend's own that a sharded call copies into the caller's `out` only once
// every shard is done: a shard may write its slice straight in, in as many chunks as it takes.
const scratchOutputs = new WeakSet<ArrayBufferLike>();

/** Whether `out` is (a slice of) such an output, so a failure half way cannot reach the caller. */
export function isScratchOutput(out: ArrayBufferView): boolean {
  return scratchOutputs.has(out.buffer);
}

export interface ShardRun<T> {
  /** Each shard's result, in shard order. */
  readonly results: readonly T[];
  /** The device (index into the devices) that produced each shard's result. */
  readonly ranOn: readonly number[];
  /** Devices lost during the call (they took no more shards), in the order they were lost. */
  readonly lost: readonly number[];
}

/**
 * Runs shards 0 … count−1 over `devices`. A shard whose device is lost goes back to the front of
 * the queue for another device, and the lost device takes no more shards in this call; when every
 * device was lost the call rejects with DeviceError. Any other failure (an abort, a refused pass,
 * a limit) aborts the shards still running at their next abort check, waits for them, and rejects
 * with that first failure: no partial result ever comes back.
 */
export async function runShards<T>(
  devices: readonly GpuDevice[],
  count: number,
  signal: AbortSignal | undefined,
  run: (gpu: GpuDevice, shard: number, signal: AbortSignal, device: number) => Promise<T>,
): Promise<ShardRun<T>> {
  const stop = new AbortController();
  const shardSignal = signal === undefined ? stop.signal : AbortSignal.any([signal, stop.signal]);
  const queue = Array.from({ length: count }, (_, i) => i);
  const results = new Array<T>(count);
  const ranOn = new Array<number>(count).fill(-1);
  const lost: number[] = [];
  let failure: { error: unknown } | undefined;
  let lastLoss: unknown;
  const worker = async (d: number): Promise<void> => {
    while (failure === undefined && queue.length > 0) {
      const shard = queue.shift()!;
      try {
        results[shard] = await run(devices[d]!, shard, shardSignal, d);
        ranOn[shard] = d;
      } catch (e) {
        if (failure !== undefined) return;
        if (isDeviceLoss(e)) {
          queue.unshift(shard);
          lost.push(d);
          lastLoss = e;
        } else {
          // The caller's abort reaches every shard anyway; anything else stops the others.
          failure = { error: e };
          stop.abort(e);
        }
        return;
      }
    }
  };
  // A device lost after the others went idle leaves its shard queued: the survivors go again.
  while (failure === undefined && queue.length > 0) {
    const alive = devices.map((_, d) => d).filter((d) => !lost.includes(d));
    if (alive.length === 0) break;
    await Promise.all(alive.map(worker));
  }
  if (failure !== undefined) throw failure.error;
  if (queue.length > 0) {
    throw markDeviceLoss(new DeviceError(`every one of the ${devices.length} WebGPU devices was lost during this call; the next call recreates them`, { cause: lastLoss }));
  }
  return { results, ranOn, lost };
}

/** Shard counts per device and any re-runs, for the call's notes (how many devices ran it is never silent). */
export function shardNote(devices: number, run: ShardRun<unknown>): string {
  const per = new Array<number>(devices).fill(0);
  for (const d of run.ranOn) per[d]!++;
  const used = per.filter((n) => n > 0).length;
  const parts = [`sharded over ${used} of ${devices} WebGPU devices: ${run.ranOn.length} shards (${per.map((n, d) => `device ${d}: ${n}`).join(', ')})`];
  for (const d of run.lost) parts.push(`device ${d} was lost during the call; its shard re-ran on another device`);
  return parts.join('; ');
}

/**
 * Timing of a sharded call: devices work side by side, so each time is the largest over devices
 * of that device's shard sum (kernel undefined as soon as one shard was not measured).
 */
export function shardTimes(devices: number, run: ShardRun<OpOutput<unknown>>): { kernelMs: number | undefined; uploadMs: number; readbackMs: number } {
  const kernel = new Array<number>(devices).fill(0);
  const upload = new Array<number>(devices).fill(0);
  const readback = new Array<number>(devices).fill(0);
  let measured = true;
  run.results.forEach((r, i) => {
    const d = run.ranOn[i]!;
    if (r.kernelMs === undefined) measured = false;
    else kernel[d]! += r.kernelMs;
    upload[d]! += r.uploadMs ?? 0;
    readback[d]! += r.readbackMs ?? 0;
  });
  return { kernelMs: measured ? Math.max(...kernel) : undefined, uploadMs: Math.max(...upload), readbackMs: Math.max(...readback) };
}

/** Notes of every shard, each once, in first-seen order. */
export function shardNotes(run: ShardRun<OpOutput<unknown>>): string[] {
  const seen = new Set<string>();
  for (const r of run.results) for (const n of r.notes ?? []) seen.add(n);
  return [...seen];
}

/** `batch` items cut into at most `parts` contiguous ranges of near-equal size, in order. */
export function batchRanges(batch: number, parts: number): { start: number; count: number }[] {
  const n = Math.max(1, Math.min(batch, parts));
  const out: { start: number; count: number }[] = [];
  for (let i = 0; i < n; i++) {
    const start = Math.floor((i * batch) / n);
    out.push({ start, count: Math.floor(((i + 1) * batch) / n) - start });
  }
  return out;
}

/** A shard's context: its own slice of `out`, progress added up over shards, the shards' signal. */
export function shardContext<D>(ctx: OpContext<D>, out: D | undefined, signal: AbortSignal, progress: ((done: number) => void) | undefined): OpContext<D> {
  return {
    ...ctx,
    out,
    signal,
    output: 'array',
    onProgress: progress === undefined ? undefined : (p) => progress(p.done),
  };
}

/** Adds up per-shard progress into the call's: each shard reports its own `done`; `report` gets the sum. */
export function progressSum(shards: number, total: number, unit: string, report: OpContext<unknown>['onProgress']): ((shard: number) => (done: number) => void) | undefined {
  if (report === undefined) return undefined;
  const done = new Array<number>(shards).fill(0);
  return (shard) => (d) => {
    done[shard] = d;
    report({ done: done.reduce((a, b) => a + b, 0), total, unit });
  };
}

/**
 * A batch op (conv2d, convLayer) sharded by image ranges: `parts` ranges, each run by `run` on
 * the device that takes it, writing its slice of one output of our own, which is copied into the
 * caller's `out` (if any) only once every shard is done.
 */
export async function runBatchShards<P extends { readonly input: Float32Array; readonly batch: number }>(
  devices: readonly GpuDevice[],
  p: P,
  ctx: OpContext<Float32Array>,
  perImage: { readonly input: number; readonly output: number },
  parts: number,
  run: (device: number, shard: P, ctx: OpContext<Float32Array>) => Promise<OpOutput<Float32Array>>,
): Promise<OpOutput<Float32Array>> {
  const ranges = batchRanges(p.batch, parts);
  const target = devices[0]!.output(Float32Array, p.batch * perImage.output);
  scratchOutputs.add(target.buffer);
  const progress = progressSum(ranges.length, p.batch, 'images', ctx.onProgress);
  const r = await runShards(devices, ranges.length, ctx.signal, async (_gpu, i, signal, d) => {
    const { start, count } = ranges[i]!;
    const slice = target.subarray(start * perImage.output, (start + count) * perImage.output);
    const shard = { ...p, batch: count, input: p.input.subarray(start * perImage.input, (start + count) * perImage.input) };
    const out = await run(d, shard, shardContext(ctx, slice, signal, progress?.(i)));
    if (out.data !== slice) copyInto(slice, out.data as Float32Array);
    return out;
  });
  if (ctx.out !== undefined) copyInto(ctx.out, target);
  return { data: ctx.out ?? target, ...shardTimes(devices.length, r), notes: [shardNote(devices.length, r), ...shardNotes(r)] };
}

/**
 * One op over several devices, batch-sharded: `impls[d]` is the op on device d. Calls that cannot
 * be split (one image, a resident input or a device output, which live on device 0) run on device 0.
 */
export function shardBatchOp<O extends 'conv2d' | 'convLayer'>(
  devices: readonly GpuDevice[],
  impls: readonly OpImplementation<O>[],
  perImage: (p: OpProblem<O>) => { input: number; output: number },
  shardsPerDevice: number,
): OpImplementation<O> {
  const first = impls[0]!;
  const variants: Record<string, OpRunner<O>> = {};
  for (const name of Object.keys(first.variants)) {
    variants[name] = (p, ctx) => {
      const input = (p as { input: unknown }).input;
      if (ctx.output === 'device' || !(input instanceof Float32Array) || (p as { batch: number }).batch < 2) {
        return onFirstDevice(first.variants[name]!, devices.length, 'device-resident data or one image is not sharded')(p, ctx);
      }
      type Batch = { readonly input: Float32Array; readonly batch: number };
      return runBatchShards(devices, p as unknown as Batch, ctx as unknown as OpContext<Float32Array>, perImage(p), devices.length * shardsPerDevice, async (d, shard, shardCtx) =>
        (await impls[d]!.variants[name]!(shard as unknown as OpProblem<O>, shardCtx as unknown as OpContext<OpData<O>>)) as unknown as OpOutput<Float32Array>,
      ) as unknown as Promise<OpOutput<OpData<O>>>;
    };
  }
  return { ...first, variants };
}

/** A runner that uses only the first of `devices` devices, with a note saying so and why. */
export function onFirstDevice<O extends OpName>(run: OpRunner<O>, devices: number, why: string): OpRunner<O> {
  return async (p, ctx) => {
    const out = await run(p, ctx);
    return { ...out, notes: [...(out.notes ?? []), `ran on the first of ${devices} WebGPU devices (${why})`] };
  };
}

/** `impl` with every variant on the first of `devices` devices, noted (ops that are not sharded). */
export function firstDeviceOp<O extends OpName>(impl: OpImplementation<O>, devices: number, why: string): OpImplementation<O> {
  const variants: Record<string, OpRunner<O>> = {};
  for (const [name, run] of Object.entries(impl.variants)) variants[name] = onFirstDevice(run, devices, why);
  return { ...impl, variants };
}
