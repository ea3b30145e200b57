/**
 * The router's rows against the best single backend of the same run: per case, the router's
 * median, where it ran, the fastest other kernelkit row (peers are for comparison only: the router
 * never picks them) and the ratio. With rounds, also the ratio round by round (each round runs
 * every backend in a process of its own, one after another) and how far the best row's own rounds
 * spread: the process-to-process noise the ratio carries. Where the router's rows timed it, also
 * the ratio side by side in the router's own process (side-by-side.ts).
 */
import { median } from '@kernelkit/core';
import { ROUTER } from '../backends.js';
import { isPeer } from '../peers/index.js';
import type { BenchReport, Row } from '../types.js';
import { fmtMs } from './format.js';
import { sideBySideRatio, type SideBySide } from '../side-by-side.js';

/** The router's goal against the best single backend (issue 16): its median within this factor. */
export const ROUTER_TARGET = 1.1;

type OkRow = Extract<Row, { status: 'ok' }>;

export interface RouterComparison {
  readonly op: string;
  readonly label: string;
  readonly router: OkRow;
  readonly best: OkRow;
  /** Router median ÷ best row median. */
  readonly ratio: number;
  /** The median over rounds of the router's round median ÷ the best row's in the same round (both measured in every round). */
  readonly perRoundRatio?: number;
  /** The best row's slowest round median ÷ its fastest. */
  readonly bestSpread?: number;
  /** Side by side in the router's process: its median ÷ the fastest candidate's (with rounds, the median over rounds). */
  readonly sideBySide?: number;
  /** Whether the best row's backend/variant was among the candidates timed side by side. */
  readonly bestBeside?: boolean;
  /**
   * The best row's backend/variant called side by side in the router's process over its own row
   * (with rounds, round for round, the median): above 1, the router's processes ran slower, for
   * whatever reason, which the side-by-side ratio does not show.
   */
  readonly bestHereOverOwn?: number;
}

/** Both rows' round medians, when each measured every one of `rounds` rounds (so index i is round i for both). */
function sameRounds(a: OkRow, b: OkRow, rounds: number | undefined): [readonly number[], readonly number[]] | undefined {
  const x = a.roundMediansMs;
  const y = b.roundMediansMs;
  if (rounds === undefined || rounds < 2 || x?.length !== rounds || y?.length !== rounds) return undefined;
  return [x, y];
}

/** One comparison per case that has an ok router row and an ok row of another kernelkit backend; `rounds`: the report's round count. */
export function routerComparisons(rows: readonly Row[], rounds?: number): RouterComparison[] {
  const out: RouterComparison[] = [];
  for (const router of rows) {
    if (router.status !== 'ok' || router.backend !== ROUTER) continue;
    let best: OkRow | undefined;
    for (const x of rows) {
      if (x.status !== 'ok' || x.caseId !== router.caseId || x.op !== router.op || x.backend === ROUTER || isPeer(x.backend)) continue;
      if (best === undefined || x.stats.medianMs < best.stats.medianMs) best = x;
    }
    if (best === undefined) continue;
    const paired = sameRounds(router, best, rounds);
    const own = best.roundMediansMs;
    const sides = router.roundSideBySide !== undefined && router.roundSideBySide.length >= 2 ? router.roundSideBySide : router.sideBySide === undefined ? undefined : [router.sideBySide];
    const beside = sides === undefined ? undefined : median(sides.map(sideBySideRatio));
    // The best row's backend/variant called in the router's process over its own row, round for round.
    const bestKey = `${best.backend}/${best.variant}`;
    const ownRounds = sides !== undefined && sides.length >= 2 ? paired?.[1] : [best.stats.medianMs];
    const hereOverOwn = sides === undefined || ownRounds === undefined || sides.some((x) => x.direct[bestKey] === undefined) ? undefined : median(sides.map((x, i) => x.direct[bestKey]! / ownRounds[i]!));
    out.push({
      op: router.op, label: router.label, router, best, ratio: router.stats.medianMs / best.stats.medianMs,
      ...(paired ? { perRoundRatio: median(paired[0].map((v, i) => v / paired[1][i]!)) } : {}),
      ...(own !== undefined && own.length >= 2 ? { bestSpread: Math.max(...own) / Math.min(...own) } : {}),
      ...(beside === undefined ? {} : { sideBySide: beside, bestBeside: router.sideBySide!.direct[bestKey] !== undefined }),
      ...(hereOverOwn === undefined ? {} : { bestHereOverOwn: hereOverOwn }),
    });
  }
  return out;
}

/** The comparisons and how many of them are within ROUTER_TARGET. */
function summary(r: BenchReport): { readonly all: RouterComparison[]; readonly within: number; readonly beside: number; readonly besideWithin: number } {
  const all = routerComparisons(r.rows, r.rounds);
  const side = all.filter((c) => c.sideBySide !== undefined);
  return { all, within: all.filter((c) => c.ratio <= ROUTER_TARGET).length, beside: side.length, besideWithin: side.filter((c) => c.sideBySide! <= ROUTER_TARGET).length };
}

/** How the side-by-side calls ran, from the rows' own record of it. */
function blocks(all: readonly RouterComparison[]): string {
  const forms = new Set(all.flatMap((c) => (c.router.sideBySide === undefined ? [] : [blockForm(c.router.sideBySide)])));
  return [...forms].join(' or ');
}

/** One side-by-side timing's blocks in words. */
function blockForm(s: SideBySide): string {
  if (s.leadInMs !== undefined) return `untimed calls for ${s.leadInMs} ms (one at least), then ${s.timedCalls ?? 1} timed, back to back each`;
  const n = s.blockCalls ?? 1;
  return n === 1 ? 'one call each' : `${n} calls back to back each (the first untimed)`;
}

/** The side-by-side ratio, marked where the run's best row was not among the candidates timed beside the router. */
const besideCell = (c: RouterComparison): string => (c.sideBySide === undefined ? '—' : `${c.sideBySide.toFixed(2)}×${c.bestBeside === false ? ' (best row not beside it)' : ''}`);

/** Where the router's timed calls went: each round's pick, or the row's (reports before the field: —). */
const ranOn = (r: OkRow): string => (r.roundRoutes?.length ? r.roundRoutes.join(' · ') : (r.routedTo ?? '—'));

const times = (x: number | undefined): string => (x === undefined ? '—' : `${x.toFixed(2)}×`);

/** The markdown section, or no lines where the report has no router row to compare. */
export function routerSummaryMarkdown(r: BenchReport): string[] {
  const { all, within, beside, besideWithin } = summary(r);
  if (all.length === 0) return [];
  const roundColumns = all.some((c) => c.bestSpread !== undefined);
  const besideColumn = beside > 0;
  return [
    '',
    '## The router against the best single backend',
    '',
    `Per case, the router's median against the fastest row of another kernelkit backend in this run (peers left out: the router never picks them): ${within} of ${all.length} within ${ROUTER_TARGET}×.`,
    ...(roundColumns
      ? ['', "\"Per round\" is the median of the router's round median over the best row's in the same round; \"best's spread\" is the best row's slowest round over its fastest, the process-to-process noise these ratios carry."]
      : []),
    ...(besideColumn
      ? [
          '',
          `"Side by side" is the router's median over the fastest of the backends it weighed (its trials and its pick), each opened afresh in the router's process and called in turn with the router, ${blocks(all)}, the order rotated every turn${r.rounds !== undefined && r.rounds > 1 ? '; the median over rounds' : ''}: a process's speed, which differs from one process to the next, is then the same for all of them. ${besideWithin} of ${beside} within ${ROUTER_TARGET}× side by side. "Best there ÷ own" is the best row's backend and variant called there over its own row${r.rounds !== undefined && r.rounds > 1 ? ' (round for round, the median)' : ''}: above 1, the router's processes ran slower, which the side-by-side ratio does not show.`,
        ]
      : []),
    '',
    `| op | case | router | ran on | best row | its median | router ÷ best |${roundColumns ? " per round | best's spread |" : ''}${besideColumn ? ' side by side | best there ÷ own |' : ''}`,
    `|---|---|---|---|---|---|---|${roundColumns ? '---|---|' : ''}${besideColumn ? '---|---|' : ''}`,
    ...all.map(
      (c) =>
        `| ${c.op} | ${c.label} | ${fmtMs(c.router.stats.medianMs)} | ${ranOn(c.router)} | ${c.best.backend}/${c.best.variant} | ${fmtMs(c.best.stats.medianMs)} | ${c.ratio.toFixed(2)}× |` +
        (roundColumns ? ` ${times(c.perRoundRatio)} | ${times(c.bestSpread)} |` : '') +
        (besideColumn ? ` ${besideCell(c)} | ${times(c.bestHereOverOwn)} |` : ''),
    ),
  ];
}

/** The stdout table's lines: the count, then one line per case. */
export function routerSummaryLines(r: BenchReport): string[] {
  const { all, within, beside, besideWithin } = summary(r);
  if (all.length === 0) return [];
  return [
    `Router against the best single backend: ${within} of ${all.length} cases within ${ROUTER_TARGET}×${beside > 0 ? `; side by side in its process ${besideWithin} of ${beside}` : ''}`,
    ...all.map(
      (c) =>
        `  ${c.op} ${c.router.caseId}: ${c.ratio.toFixed(2)}× (${fmtMs(c.router.stats.medianMs)} on ${ranOn(c.router)}; best ${c.best.backend}/${c.best.variant} ${fmtMs(c.best.stats.medianMs)})` +
        (c.sideBySide === undefined ? '' : `; side by side ${besideCell(c)}`),
    ),
  ];
}
