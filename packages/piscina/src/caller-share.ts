/**
 * The calling thread's share of a pooled conv call. Without one it stages the input and then
 * waits: with a thread per core its core idles while the last worker wakes up and works, and a
 * wake-up alone can take most of a millisecond on a VM. With one the call runs on threads − 1
 * workers and the calling thread, which claims units from the same counter once everything is
 * staged, on its own instance of the shared-memory kernels over the call's memory.
 */
import { sharedKernels, type KernelExports } from '@kernelkit/cpu/range-kernels';
import { conv2dModuleUnits, convLayerModuleUnits } from './claimed-units.js';
import { CALLER_SHARE_MAX_WORK } from './options.js';
import type { Env } from './ops/context.js';
import type { Conv2dModuleTask, ConvLayerModuleTask, ModuleMemory, TaskTimes } from './protocol.js';

/** Whether a pooled call of `work` multiply-adds gets the calling thread's share (a pool of two threads or more). */
export function callerShares(env: Env, work: number): boolean {
  const threads = env.pool.threads;
  return env.options.callerShare && threads >= 2 && env.pool.sharedModule !== undefined && work / threads <= CALLER_SHARE_MAX_WORK;
}

// One instance per memory, dropped with it: the pool's memory cache hands the same memory to the next call of its size.
const instances = new WeakMap<ModuleMemory['memory'], KernelExports>();

function kernelsFor(env: Env, memory: ModuleMemory['memory']): KernelExports {
  let k = instances.get(memory);
  if (k === undefined) instances.set(memory, (k = sharedKernels(env.pool.sharedModule!, memory)));
  return k;
}

/** The calling thread's share of a conv2d module task: see `Units.runSharing`. */
export const conv2dShare = (env: Env, task: Conv2dModuleTask) => (): TaskTimes => conv2dModuleUnits(task, kernelsFor(env, task.memory.memory));

/** The calling thread's share of a convLayer module task. */
export const convLayerShare = (env: Env, task: ConvLayerModuleTask) => (): TaskTimes => convLayerModuleUnits(task, kernelsFor(env, task.memory.memory));
