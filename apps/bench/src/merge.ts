import type { OpName } from '@kernelkit/ops';
import { withSpeedups } from './ladder.js';
import type { BackendStart, BenchReport, Row } from './types.js';

const STOPPED = / ?Parts stopped before their end \(([^)]*)\): (.+?)\.(?= |$)/g;

/** The stopped parts a report already carries: its field, or (reports merged before the field existed) its note. */
const stoppedOf = (r: BenchReport): string[] => [...(r.stoppedParts ?? [...r.checkPolicy.matchAll(STOPPED)].flatMap((m) => m[2]!.split(', ')))];

/** A row's identity across runs and rounds: op, case, backend and variant. */
export const rowKey = (r: Row): string => `${r.op}\u0000${r.caseId}\u0000${r.backend}\u0000${r.variant}`;

/**
 * Rows of several runs as one list: a row whose `key` comes again is replaced by the later one,
 * which moves to the later place. Bench reports and the studies' result files merge through it.
 */
export function mergeRows<R>(lists: readonly (readonly R[])[], key: (r: R) => string): R[] {
  const rows = new Map<string, R>();
  for (const list of lists) {
    for (const r of list) {
      rows.delete(key(r));
      rows.set(key(r), r);
    }
  }
  return [...rows.values()];
}

/** A row without its speed-ups, to be worked out again among the rows it now stands with. */
export function withoutSpeedups(r: Row): Row {
  if (r.status !== 'ok') return r;
  const { speedupVsSequential: _s, speedupVsPrevious: _p, ...rest } = r;
  return rest as Row;
}

/**
 * Joins the parts of one machine's run that had to be split (a 10-minute GPU-host call each)
 * into one report. Refuses parts from different workloads or hosts: speed-ups across machines
 * would be meaningless. A row measured in several parts keeps its last measurement.
 */
export function mergeReports(parts: readonly { readonly name: string; readonly report: BenchReport }[]): BenchReport {
  const first = parts[0];
  if (first === undefined) throw new Error('merge: no reports given');
  for (const { name, report } of parts) {
    if (report.schema !== 'kernelkit-bench/1') throw new Error(`merge: ${name} is not a kernelkit-bench/1 report`);
    if (report.workload !== first.report.workload) throw new Error(`merge: ${name} is the ${report.workload} workload, ${first.name} is ${first.report.workload}`);
    if (report.machine.hostname !== first.report.machine.hostname || report.machine.cpu !== first.report.machine.cpu) {
      throw new Error(`merge: ${name} ran on ${report.machine.hostname} (${report.machine.cpu}), ${first.name} on ${first.report.machine.hostname} (${first.report.machine.cpu})`);
    }
  }
  const backends = new Map<string, BackendStart>();
  const baseline: Partial<Record<OpName, string>> = {};
  for (const { report } of parts) {
    for (const b of report.backends) {
      const had = backends.get(b.backend);
      // A part stopped by its time limit may list a backend with no start time or description: keep what another part said.
      if (had === undefined || (b.status === 'ok' && !(had.status === 'ok' && had.description !== undefined && b.description === undefined))) backends.set(b.backend, b);
    }
    Object.assign(baseline, report.sequentialBaseline ?? {});
  }
  // One probe per run; of several, the last part's (the latest measurement of this machine).
  const floor = parts.findLast((p) => p.report.floor !== undefined)?.report.floor;
  const isolation = [...new Set(parts.flatMap((p) => (p.report.isolation === undefined ? [] : [p.report.isolation])))];
  // Said only when some part did more than tinybench's warm-up; a part that did not says so.
  const warmUp = parts.some((p) => p.report.warmUp !== undefined) ? [...new Set(parts.map((p) => p.report.warmUp ?? "none beyond tinybench's"))].join('; ') : undefined;
  // Parts run with different --rounds keep the figure per row only (its list of round medians).
  const rounds = [...new Set(parts.map((p) => p.report.rounds ?? 1))];
  const partial = [...new Set(parts.flatMap((p) => [...stoppedOf(p.report), ...(p.report.partial !== undefined ? [p.name] : [])]))];
  const stripped = mergeRows(parts.map((p) => p.report.rows), rowKey).map(withoutSpeedups);
  return {
    schema: 'kernelkit-bench/1',
    date: parts.map((p) => p.report.date).sort()[0]!,
    workload: first.report.workload,
    machine: first.report.machine,
    backends: [...backends.values()],
    rows: withSpeedups(stripped, baseline),
    wallMs: parts.reduce((s, p) => s + p.report.wallMs, 0),
    checkPolicy:
      first.report.checkPolicy.replace(STOPPED, '') +
      (partial.length ? ` Parts stopped before their end (a row they did not reach is here only if another part measured it): ${partial.join(', ')}.` : ''),
    sequentialBaseline: baseline,
    ...(isolation.length ? { isolation: isolation.join('; ') } : {}),
    ...(warmUp === undefined ? {} : { warmUp }),
    mergedFrom: parts.map((p) => p.name),
    ...(partial.length ? { stoppedParts: partial } : {}),
    ...(floor ? { floor } : {}),
    ...(rounds.length === 1 && rounds[0]! > 1 ? { rounds: rounds[0]! } : {}),
  };
}
