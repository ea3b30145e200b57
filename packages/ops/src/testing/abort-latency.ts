import { afterAll, expect, it } from 'vitest';
import { AbortError } from '@kernelkit/core';
import type { Backend, OpName } from '../backend.js';
import { OP_NAMES } from '../backend.js';
import type { ConvLayerArgs } from '../conv-layer/types.js';
import type { Conv2dArgs } from '../conv2d/types.js';
import type { GridSearchArgs } from '../grid-search/types.js';
import { changedSince, snapshot } from './buffers.js';
import { conv2dCase, convLayerCase, scanCase, stencilCase } from './cases.js';

/** One long call: its arguments, the `out` to pass (none for gridSearch), and when to abort it. */
export interface AbortCase {
  readonly args: object;
  readonly out?: ArrayBufferView;
  /** Milliseconds after the call is made; default the suite's `abortAfterMs`. */
  readonly abortAfterMs?: number;
}

export interface AbortLatencyOptions {
  /** Variants to call per op; default every variant the backend lists. */
  readonly variants?: (op: OpName, backend: Backend) => readonly string[];
  /** Replaces the default long call of an op (see `defaultAbortCase`); return undefined to leave the op out. */
  readonly cases?: Partial<Record<OpName, () => AbortCase | undefined>>;
  /** When to abort; default 100 ms after the call is made. */
  readonly abortAfterMs?: number;
  /**
   * Most milliseconds from the abort to the rejection, and the longest the event loop may go
   * without a turn during the call; default 1000 (generous for a loaded 2-core machine).
   */
  readonly boundMs?: number;
  readonly timeoutMs?: number;
}

/** `out` filled with a value no kernel writes for these inputs, so any write shows. */
function sentinel<T extends Float32Array | Uint32Array>(a: T): T {
  a.fill(a instanceof Float32Array ? -12345.5 : 0xdeadbeef);
  return a;
}

/**
 * A call that runs for seconds on one CPU thread at the fastest kernel here (minutes on the
 * slow ones), so an abort after 100 ms always lands mid-work.
 */
export function defaultAbortCase(op: OpName): AbortCase {
  switch (op) {
    case 'conv2d': {
      const args: Conv2dArgs = conv2dCase([1, 2048, 2048, 63], 5);
      return { args, out: sentinel(new Float32Array(2048 * 2048)) };
    }
    case 'stencil3d': {
      // The case: a small grid over many steps (long sequential work, short steps).
      const args = stencilCase([16, 16, 16, 500_000, 'copy'], 6);
      return { args, out: sentinel(new Float32Array(16 ** 3)) };
    }
    case 'scan': {
      // Linear work: the longest input kept reasonable in memory takes ~100 ms on one thread,
      // so this one is aborted sooner.
      const args = scanCase('u32', 2 ** 25, 7);
      return { args, out: sentinel(new Uint32Array(2 ** 25)), abortAfterMs: 10 };
    }
    case 'gridSearch': {
      // 10^8 prefixes of four 100-point axes, each with a 200 001-point last axis on which no
      // point passes but every prefix stays feasible, so pruning cannot skip the work.
      const axis = { lower: 0, upper: 0.99, step: 0.01 };
      const args: GridSearchArgs = {
        dims: [axis, axis, axis, axis, { lower: -100, upper: 100, step: 0.001 }],
        coefficients: [1, 1, 1, 1, 1],
        targets: [0.0003],
        tolerances: [0],
      };
      return { args };
    }
    case 'convLayer': {
      const args: ConvLayerArgs = convLayerCase([16, 32, 128, 128, 32, 7], 8, { bias: true });
      return { args, out: sentinel(new Float32Array(16 * 32 * 122 * 122)) };
    }
  }
}

type AnyCall = (args: unknown, options?: unknown) => Promise<unknown>;

/**
 * Registers one test per op and variant: a call sized to run for seconds, aborted after
 * ~100 ms, must reject with `AbortError` within `boundMs` of the abort, keep the event loop
 * turning meanwhile (a 5 ms interval never waits longer than `boundMs`), and leave `out` as
 * it was.
 */
export function describeAbortLatency(name: string, create: () => Backend | Promise<Backend>, options: AbortLatencyOptions = {}): void {
  const bound = options.boundMs ?? 1000;
  const timeout = options.timeoutMs ?? 60_000;
  let backend: Backend | undefined;
  const get = async (): Promise<Backend> => (backend ??= await create());
  for (const op of OP_NAMES) {
    const make = options.cases?.[op] ?? (() => defaultAbortCase(op));
    it(`${name}: ${op}, every variant, aborted mid-work, rejects with AbortError within ${bound} ms; the event loop keeps turning; out untouched`, { timeout }, async () => {
      const b = await get();
      const c = make();
      if (c === undefined) return;
      const before = c.out === undefined ? undefined : snapshot(c.out);
      const afterMs = c.abortAfterMs ?? options.abortAfterMs ?? 100;
      for (const variant of options.variants?.(op, b) ?? b.variants(op)) {
        const label = `${name} ${op}/${variant}`;
        const ac = new AbortController();
        let lastTick = performance.now();
        let longestGap = 0;
        const ticker = setInterval(() => {
          const t = performance.now();
          longestGap = Math.max(longestGap, t - lastTick);
          lastTick = t;
        }, 5);
        const timer = setTimeout(() => ac.abort(), afterMs);
        const t0 = performance.now();
        let outcome: unknown;
        let endedAt: number;
        try {
          await (b[op] as AnyCall).call(b, c.args, { variant, signal: ac.signal, ...(c.out === undefined ? {} : { out: c.out }) });
          outcome = 'resolved';
        } catch (e) {
          outcome = e;
        } finally {
          endedAt = performance.now();
          clearInterval(ticker);
          clearTimeout(timer);
        }
        longestGap = Math.max(longestGap, endedAt - lastTick);
        // From when the abort was due, so a call that blocks the loop and delays the abort counts.
        const latency = endedAt - (t0 + afterMs);
        if (outcome === 'resolved') {
          throw new Error(
            endedAt - t0 > afterMs + bound
              ? `${label}: resolved ${(endedAt - t0).toFixed(0)} ms after the call, though aborted at ${afterMs} ms`
              : `${label}: finished in ${(endedAt - t0).toFixed(0)} ms, before the abort at ${afterMs} ms: the case is too small for this backend`,
          );
        }
        expect(outcome, `${label}: rejection`).toBeInstanceOf(AbortError);
        expect(latency, `${label}: ms from the abort to the rejection`).toBeLessThanOrEqual(bound);
        expect(longestGap, `${label}: longest ms the event loop went without a turn`).toBeLessThanOrEqual(bound);
        if (before !== undefined) expect(changedSince(before, c.out, 'options.out'), `${label}: out after the abort`).toBeUndefined();
      }
    });
  }
  afterAll(async () => {
    await backend?.dispose();
  });
}
