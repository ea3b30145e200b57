import type { OpName } from '@kernelkit/ops';
import type { BenchBackend } from './backends.js';
import type { MemoryFloor } from './floor.js';
import type { SideBySide } from './side-by-side.js';

/**
 * Case sets: `small` fits a 2-core CI machine; `seed` is the sizes of the course reports
 * (ECE408, CS610) the project grew from; `tiny` is smoke-test sizes.
 */
export const WORKLOAD_NAMES = ['small', 'seed', 'tiny'] as const;
export type WorkloadName = (typeof WORKLOAD_NAMES)[number];

export interface BenchOptions {
  readonly workload: WorkloadName;
  readonly ops: readonly OpName[];
  readonly backends: readonly BenchBackend[];
  readonly variants?: readonly string[];
  readonly cases?: readonly string[];
  readonly threads?: number;
  readonly json?: string;
  readonly md?: string;
  readonly svg?: string;
  readonly out?: string;
  readonly progress: boolean;
  /** Every backend in this process instead of one child process each. */
  readonly inProcess?: boolean;
  /** Measure the machine's memory floor for the report (default true; `--no-floor` skips it). */
  readonly floor?: boolean;
  /** Child processes per backend, run round-robin; each row keeps its median round (default 1). */
  readonly rounds?: number;
  /** Time the router's rows again beside the backends it weighed, in its own process (default true; `--no-side-by-side` skips it). */
  readonly sideBySide?: boolean;
}

export interface Stats {
  readonly samples: number;
  readonly medianMs: number;
  readonly meanMs: number;
  readonly p75Ms: number;
  readonly p99Ms: number;
  readonly minMs: number;
  readonly maxMs: number;
}

export interface Throughput {
  readonly value: number;
  readonly unit: string;
}

interface RowKey {
  readonly op: OpName;
  readonly caseId: string;
  readonly label: string;
  readonly backend: BenchBackend;
  readonly variant: string;
}

export type Row =
  | (RowKey & {
      readonly status: 'ok';
      readonly software: boolean;
      /** Wall time of the first call (pipeline compiles, pool warm-up); the backend's own start is in `backendStarts`. */
      readonly firstCallMs: number;
      readonly stats: Stats;
      readonly kernelMedianMs?: number;
      /** Medians of the backend-reported host-to-device and device-to-host copy times (`timing.uploadMs` / `readbackMs`), where it reports them. */
      readonly uploadMedianMs?: number;
      readonly readbackMedianMs?: number;
      /** Median of the call with its input already a DeviceArray and its output kept on the device (backends with device memory). */
      readonly residentMedianMs?: number;
      /** Bytes of the (checked first) result, where the op returns a typed array: what "vs floor" weighs the median against. */
      readonly outputBytes?: number;
      readonly throughput: Throughput;
      readonly kernelThroughput?: Throughput;
      readonly residentThroughput?: Throughput;
      readonly speedupVsSequential?: number;
      readonly speedupVsPrevious?: { readonly over: string; readonly value: number };
      /** How the result was checked before timing. */
      readonly check: string;
      readonly notes?: readonly string[];
      /** The router's rows: the backend/variant most of its timed calls went to (a note lists them when they split). */
      readonly routedTo?: string;
      /** The router's rows: the router and each backend/variant it weighed, called in turn in the router's process (side-by-side.ts). */
      readonly sideBySide?: SideBySide;
      /** With `--rounds`, the router's rows: each round's side-by-side timing, in round order. */
      readonly roundSideBySide?: readonly SideBySide[];
      /** With `--rounds`: the median of every round that measured this row, in round order (the row is the median one). */
      readonly roundMediansMs?: readonly number[];
      /** With `--rounds`, the router's rows: where each round's timed calls went, in round order. */
      readonly roundRoutes?: readonly string[];
      /** With `--rounds`, the router's rows: each round's note on how the router settled (its trials and predictions), in round order. */
      readonly roundRouterNotes?: readonly string[];
    })
  | (RowKey & { readonly status: 'errored'; readonly message: string })
  | (RowKey & { readonly status: 'skipped'; readonly reason: string });

export interface BackendStart {
  readonly backend: BenchBackend;
  readonly status: 'ok' | 'errored' | 'skipped';
  readonly startMs?: number;
  readonly description?: string;
  readonly info?: unknown;
  readonly reason?: string;
}

export interface MachineInfo {
  readonly cpu: string;
  /** Cores this process may run on (its CPU affinity), which the backends' thread counts follow. */
  readonly cores: number;
  /** The machine's cores, where more than `cores` (a process pinned to some of them). */
  readonly hostCores?: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly hostname: string;
}

export interface BenchReport {
  readonly schema: 'kernelkit-bench/1';
  readonly date: string;
  readonly workload: WorkloadName;
  readonly machine: MachineInfo;
  readonly backends: readonly BackendStart[];
  readonly rows: readonly Row[];
  readonly wallMs: number;
  readonly checkPolicy: string;
  /** What ran untimed before a row's samples beyond tinybench's warm-up (absent in reports from before it did). */
  readonly warmUp?: string;
  /** How rows were kept apart: one process per backend, or all in one (`--in-process`). */
  readonly isolation?: string;
  /** The CPU backend's default variant per op: the sequential baseline of `speedupVsSequential`. */
  readonly sequentialBaseline?: Readonly<Partial<Record<OpName, string>>>;
  /** Present while a run is still going: the file was written after a row, not at the end. */
  readonly partial?: {
    /** backend × workload-case pairs measured (each has one row per variant) */
    readonly pairsDone?: number;
    /** Reports written before pairsDone: the rows measured. */
    readonly rowsDone?: number;
    readonly pairsPlanned: number;
  };
  /** Set by `report.js merge`: the part files this report was merged from. */
  readonly mergedFrom?: readonly string[];
  /** Set by `report.js merge`: the parts (here or in a report merged earlier) that stopped before their end. */
  readonly stoppedParts?: readonly string[];
  /** The machine's memory floor, measured once in this run (absent with `--no-floor` and in older reports). */
  readonly floor?: MemoryFloor;
  /** With `--rounds`: how many child processes each backend ran in, round-robin. */
  readonly rounds?: number;
}
