/**
 * The vitest-free part of the testing kit, exported as `@kernelkit/ops/testing/data`: cases,
 * tolerances, comparisons, buffer checks, the bad-input table, env parsing, GC and CLI helpers.
 * Scripts that run where vitest is not installed (the GPU host) import this entry;
 * `@kernelkit/ops/testing` re-exports it beside the vitest suites.
 */
export { BAD_INPUT_CASES } from './bad-input-cases.js';
export type { BadInputCase, ErrorClass, OversizeCase } from './bad-input-cases.js';
export { changedSince, detachedArray, isDetachedView, sharedCopy, snapshot } from './buffers.js';
export * from './cases.js';
export { compareFloat, compareExact } from './compare.js';
export type { Mismatch } from './compare.js';
export { DEFAULT_FC_SEED, DEFAULT_PROPERTY_RUNS, fcSeedFromEnv, lifetimeCyclesFromEnv, propertyRunsFromEnv, readPositiveIntEnv } from './env.js';
export { collectUntil, gcFunction } from './gc.js';
export { refusalProblem } from './refusal.js';
export type { Refusal } from './refusal.js';
export { expectExitCode, spawnCli } from './spawn-cli.js';
export type { Exit, SpawnOptions } from './spawn-cli.js';
export * from './tolerance.js';
