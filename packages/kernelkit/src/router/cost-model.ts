import type { BackendName, OpName } from '@kernelkit/ops';

/**
 * A straight-line time model: `fixedMs + msPerWork·work + msPerPass·passes + msPerByte·bytes`.
 * `work` is the op's own count from @kernelkit/ops (multiply-adds, point updates, bytes, the grid
 * search's node tests); `passes` is how many dependent rounds the call makes (stencil steps),
 * which is where GPU dispatch overhead shows up; `bytes` is what the call moves between host and
 * device (its input and output), fitted only for backends with device memory: a GPU's calls at
 * calibration sizes take their time in those copies, which grow with pixels, not multiply-adds.
 */
export interface TimeFit {
  readonly fixedMs: number;
  readonly msPerWork: number;
  readonly msPerPass: number;
  /** Absent: 0 (a host-memory backend, or one fitted without the term). */
  readonly msPerByte?: number;
}

/** Host↔device copy time: `fixedMs + msPerByte·bytes`. Zero for backends that keep host arrays. */
export interface TransferFit {
  readonly fixedMs: number;
  readonly msPerByte: number;
}

/** One calibration run: the call's size and its end-to-end wall time (host arrays in and out). */
export interface CalibrationSample {
  readonly work: number;
  readonly passes: number;
  readonly ms: number;
  /** Input plus output bytes, recorded for backends with device memory only (see TimeFit). */
  readonly bytes?: number;
}

export interface OpCost {
  readonly fit: TimeFit;
  readonly samples: readonly CalibrationSample[];
}

/** What calibration learned about one backend on this machine. */
export interface BackendCost {
  /** Identifies the instance measured: backend plus adapter (WebGPU) or worker count (Piscina). */
  readonly key: string;
  readonly description: string;
  readonly software: boolean;
  /** Time to create the backend (pool spawn, device request). */
  readonly startMs: number;
  readonly upload: TransferFit;
  readonly download: TransferFit;
  /** The backend's variant names per op, default first. */
  readonly variants: Readonly<Partial<Record<OpName, readonly string[]>>>;
  /** End-to-end fits per op and variant (calibration measures each op's default variant). */
  readonly ops: Readonly<Partial<Record<OpName, Readonly<Record<string, OpCost>>>>>;
}

/** The per-machine model the router predicts with; calibration makes it, tests inject one. */
export interface CostModel {
  readonly backends: Readonly<Partial<Record<BackendName, BackendCost>>>;
}

/** Where a call's input lives: the host, or a DeviceArray of a backend the router started. */
export type InputPlace = { readonly kind: 'host' } | { readonly kind: 'device'; readonly backend: BackendName; readonly location: 'device' | 'host' };

/** What the router needs to know about one call. */
export interface CallShape {
  readonly op: OpName;
  readonly work: number;
  readonly passes: number;
  readonly inputBytes: number;
  readonly outputBytes: number;
  readonly input: InputPlace;
  readonly output: 'array' | 'device';
  /** The input's element type where the op takes several (scan, stencil3d): part of the routing key. */
  readonly dtype?: string;
}

export const timeOf = (f: TimeFit, work: number, passes: number, bytes = 0): number => f.fixedMs + f.msPerWork * work + f.msPerPass * passes + (f.msPerByte ?? 0) * bytes;

/** The bytes a call moves between host and device, as `TimeFit.msPerByte` counts them. */
export const movedBytes = (call: Pick<CallShape, 'inputBytes' | 'outputBytes'>): number => call.inputBytes + call.outputBytes;
export const transferMs = (f: TransferFit, bytes: number): number => (bytes > 0 ? f.fixedMs + f.msPerByte * bytes : 0);

/**
 * The variants of `op` the router considers on `b`: those calibration measured, and the
 * backend's `auto` (which picks its kernel per call, predicted by the default variant's fit).
 */
export function routedVariants(b: BackendCost, op: OpName): string[] {
  const measured = b.ops[op] ?? {};
  return (b.variants[op] ?? []).filter((v) => measured[v] !== undefined || v === 'auto');
}

/** The fit for `variant` of `op`, or the op's default variant's as a stand-in when it was not measured. */
export function opCostOf(b: BackendCost, op: OpName, variant: string): { cost: OpCost; measured: boolean } | undefined {
  const byVariant = b.ops[op];
  if (byVariant === undefined) return undefined;
  const own = byVariant[variant];
  if (own !== undefined) return { cost: own, measured: true };
  const def = b.variants[op]?.[0];
  const stand = def === undefined ? undefined : byVariant[def];
  return stand === undefined ? undefined : { cost: stand, measured: false };
}

/**
 * Predicted end-to-end ms of `call` on backend `b` (`started`: no start-up cost). Calibration
 * times host-in/host-out calls, so a resident input subtracts the upload it saves, a device
 * output the download, and an input resident on another backend adds that backend's download.
 */
export function predictMs(model: CostModel, name: BackendName, b: BackendCost, fit: TimeFit, call: CallShape, started: boolean): number {
  let ms = timeOf(fit, call.work, call.passes, movedBytes(call)) + (started ? 0 : b.startMs);
  if (call.input.kind === 'device') {
    if (call.input.backend === name) ms -= transferMs(b.upload, call.inputBytes);
    else {
      const owner = model.backends[call.input.backend];
      if (owner !== undefined) ms += transferMs(owner.download, call.inputBytes);
    }
  }
  if (call.output === 'device') ms -= transferMs(b.download, call.outputBytes);
  return Math.max(0, ms);
}
