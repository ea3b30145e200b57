import { expect, it } from 'vitest';
import { AbortError } from '@kernelkit/core';
import type { Backend, OpName, RunOptions } from '../backend.js';
import { Rng } from '../common/random.js';
import type { ScanDtype } from '../scan/types.js';
import { verifyResult } from '../verify.js';
import { changedSince, snapshot } from './buffers.js';
import { conv2dCase, convLayerCase, randomGridCase, scanCase, stencilCase } from './cases.js';

export interface ConcurrencyContext {
  /** Variants to draw from per op (the suite's skips applied); ops with none are left out. */
  readonly variants: (op: OpName) => readonly string[];
  readonly scanDtypes: readonly ScanDtype[];
  /** Calls per batch; default 64. */
  readonly calls?: number;
}

/**
 * A few fixed tiny shapes per op, new data per call: a GPU backend compiles a pipeline per shape
 * at most, so a batch costs a bounded number of shader compiles (software adapters compile slowly).
 */
const CONV2D_SHAPES = [
  [1, 5, 7, 3],
  [2, 4, 4, 1],
  [1, 9, 6, 5],
] as const;
const STENCIL_SHAPES = [
  [4, 5, 6, 2, 'copy'],
  [3, 3, 3, 1, 'zero'],
  [6, 4, 5, 3, 'zero'],
] as const;
const SCAN_LENGTHS = [1, 37, 300] as const;
const GRID_SEEDS = [3, 5, 8] as const;
const LAYER_SHAPES = [
  [1, 2, 6, 5, 3, 3, { bias: true, relu: true }],
  [2, 1, 4, 4, 2, 1, {}],
  [1, 3, 5, 6, 2, 3, { bias: true }],
] as const;

interface Job {
  readonly op: OpName;
  readonly variant: string;
  readonly args: object;
  /** An ordinary preallocated `out`, for about a quarter of the calls of ops that take one. */
  readonly out: ArrayBufferView | undefined;
  readonly label: string;
}

function makeJob(rng: Rng, ops: readonly OpName[], ctx: ConcurrencyContext, i: number): Job {
  const op = ops[i % ops.length]!;
  const variants = ctx.variants(op);
  const variant = variants[rng.int(0, variants.length - 1)]!;
  const seed = rng.int(1, 1_000_000);
  const pick = <T>(xs: readonly T[]): T => xs[rng.int(0, xs.length - 1)]!;
  const withOut = rng.next() < 0.25;
  let args: object;
  let out: ArrayBufferView | undefined;
  switch (op) {
    case 'conv2d': {
      const a = conv2dCase(pick(CONV2D_SHAPES), seed);
      args = a;
      if (withOut) out = new Float32Array(a.input.length);
      break;
    }
    case 'stencil3d': {
      const a = stencilCase(pick(STENCIL_SHAPES), seed);
      args = a;
      if (withOut) out = new Float32Array(a.input.length);
      break;
    }
    case 'scan': {
      const dtype = pick(ctx.scanDtypes);
      const a = scanCase(dtype, pick(SCAN_LENGTHS), seed, rng.next() < 0.5);
      args = a;
      if (withOut) out = new (a.input.constructor as Float32ArrayConstructor)(a.input.length);
      break;
    }
    case 'gridSearch':
      args = randomGridCase(pick(GRID_SEEDS));
      break;
    case 'convLayer': {
      const [b, c, h, w, m, k, extras] = pick(LAYER_SHAPES);
      const a = convLayerCase([b, c, h, w, m, k], seed, extras);
      args = a;
      if (withOut) out = new Float32Array(b * m * (h - k + 1) * (w - k + 1));
      break;
    }
  }
  return { op, variant, args, out, label: `call ${i} (${op}/${variant}, seed ${seed}${out ? ', out' : ''})` };
}

function issue(backend: Backend, job: Job, signal?: AbortSignal): Promise<{ data: unknown }> {
  const options: RunOptions<unknown> = { variant: job.variant, ...(job.out ? { out: job.out } : {}), ...(signal ? { signal } : {}) };
  return (backend[job.op] as (a: unknown, o: unknown) => Promise<{ data: unknown }>)(job.args, options);
}

/** Checks a fulfilled call: the reference, `out` returned when given, inputs untouched. */
function check(job: Job, before: unknown, data: unknown): string | undefined {
  if (job.out !== undefined && data !== job.out) return `${job.label}: did not return options.out`;
  // Inputs first: a written input would also make the reference (computed from it now) disagree.
  const changed = changedSince(before, job.args);
  if (changed !== undefined) return `${job.label}: ${changed}`;
  const msg = verifyResult(job.op, job.args as never, data as never);
  return msg === undefined ? undefined : `${job.label}: ${msg}`;
}

const ops = (ctx: ConcurrencyContext): OpName[] => (['conv2d', 'stencil3d', 'scan', 'gridSearch', 'convLayer'] as const).filter((op) => ctx.variants(op).length > 0);

/**
 * Issues a batch of mixed calls at once (none awaited before all are issued) and checks every
 * result; returns the problems (empty when all is well).
 */
export async function concurrentBatchProblems(backend: Backend, ctx: ConcurrencyContext, seed: number): Promise<string[]> {
  const rng = new Rng(seed);
  const jobs = Array.from({ length: ctx.calls ?? 64 }, (_, i) => makeJob(rng, ops(ctx), ctx, i));
  const befores = jobs.map((j) => snapshot(j.args));
  const settled = await Promise.allSettled(jobs.map((j) => issue(backend, j)));
  return settled.map((s, i) => (s.status === 'rejected' ? `${jobs[i]!.label}: rejected: ${String(s.reason)}` : check(jobs[i]!, befores[i], s.value.data))).filter((p) => p !== undefined);
}

type AbortPlan = 'none' | 'before' | 'after-issue' | 'racing';

/**
 * A batch in which about a quarter of the calls are aborted (signal aborted before the call, or
 * right after issuing it in the same tick) and an eighth race an abort a few milliseconds later,
 * then a clean batch. Returns the problems (empty when all is well).
 */
export async function abortBatchProblems(backend: Backend, ctx: ConcurrencyContext, seed: number): Promise<string[]> {
  const n = ctx.calls ?? 64;
  const rng = new Rng(seed);
  const jobs = Array.from({ length: n }, (_, i) => makeJob(rng, ops(ctx), ctx, i));
  const plans: AbortPlan[] = jobs.map((_, i) => (i % 8 === 1 ? 'before' : i % 8 === 5 ? 'after-issue' : i % 8 === 3 ? 'racing' : 'none'));
  const befores = jobs.map((j) => snapshot(j.args));
  const outBefores = jobs.map((j) => (j.out === undefined ? undefined : snapshot(j.out)));
  const timers: NodeJS.Timeout[] = [];
  const calls = jobs.map((job, i) => {
    const plan = plans[i]!;
    if (plan === 'none') return issue(backend, job);
    const ac = new AbortController();
    if (plan === 'before') ac.abort(new Error(`stop ${i} before`));
    const p = issue(backend, job, ac.signal);
    if (plan === 'after-issue') ac.abort(new Error(`stop ${i} after issue`));
    if (plan === 'racing') timers.push(setTimeout(() => ac.abort(new Error(`stop ${i} racing`)), rng.int(0, 3)));
    return p;
  });
  const settled = await Promise.allSettled(calls);
  for (const t of timers) clearTimeout(t);
  const problems: string[] = [];
  settled.forEach((s, i) => {
    const job = jobs[i]!;
    const plan = plans[i]!;
    if (s.status === 'rejected') {
      if (plan === 'none') problems.push(`${job.label}: rejected without an abort: ${String(s.reason)}`);
      else if (!(s.reason instanceof AbortError)) problems.push(`${job.label} (${plan}): rejected with ${String(s.reason)}, expected AbortError`);
      else {
        const cause = (s.reason as AbortError).cause;
        if (!(cause instanceof Error) || !cause.message.startsWith(`stop ${i} `)) problems.push(`${job.label}: AbortError without the signal's reason as cause`);
      }
      // An abort seen before any work (already aborted) must leave `out` as it was.
      if (plan === 'before' && job.out !== undefined) {
        const d = changedSince(outBefores[i], job.out, 'options.out');
        if (d !== undefined) problems.push(`${job.label}: ${d}`);
      }
      const d = changedSince(befores[i], job.args);
      if (d !== undefined) problems.push(`${job.label}: ${d}`);
      return;
    }
    if (plan === 'before' || plan === 'after-issue') problems.push(`${job.label}: fulfilled although its signal was aborted ${plan === 'before' ? 'before the call' : 'right after issuing it'}`);
    const msg = check(job, befores[i], s.value.data);
    if (msg !== undefined) problems.push(msg);
  });
  // Nothing left corrupted: a clean batch afterwards.
  problems.push(...(await concurrentBatchProblems(backend, ctx, seed + 1)).map((p) => `after the aborts: ${p}`));
  return problems;
}

/**
 * Registers the concurrency tests: a batch of mixed calls (all five ops, random variants, tiny
 * shapes) on one instance; then a batch with aborts followed by a clean batch (see
 * `abortBatchProblems`).
 */
export function describeConcurrency(backend: Backend, ctx: ConcurrencyContext): void {
  const n = ctx.calls ?? 64;
  it(`${n} concurrent calls of mixed ops and variants on one instance all match the reference`, async () => {
    expect(await concurrentBatchProblems(backend, ctx, 101)).toEqual([]);
  });
  it(`${n} concurrent calls with about a quarter aborted: AbortError for those, correct results for the rest, then a clean batch`, async () => {
    expect(await abortBatchProblems(backend, ctx, 202)).toEqual([]);
  });
}
