import { assertInteger } from '@kernelkit/core';
import { Rng } from './random.js';

/** One output of an op in f64, with the error its tolerance allows there. */
export interface SampledValue {
  readonly index: number;
  readonly value: number;
  /** Largest |got − value| the op's tolerance allows at this index (0 where results are exact). */
  readonly bound: number;
}

/** Checks that every index names an output of an array of `length` elements. */
export function assertIndices(indices: readonly number[], length: number): void {
  for (const [i, index] of indices.entries()) assertInteger(index, `indices[${i}]`, 0, length - 1);
}

/**
 * `count` output indices drawn from a seeded generator, plus the first and the last, sorted and
 * without repeats: the same indices on every run, so a failure can be reproduced.
 */
export function sampleIndices(length: number, count: number, seed = 1): number[] {
  assertInteger(length, 'length', 1);
  assertInteger(count, 'count', 0);
  const rng = new Rng(seed);
  const set = new Set<number>([0, length - 1]);
  for (let i = 0; i < count; i++) set.add(rng.int(0, length - 1));
  return [...set].sort((a, b) => a - b);
}
