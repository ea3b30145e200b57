/**
 * The router's rows against the best single backend of the same run: per case, the router's
 * median, where it ran, the fastest other kernelkit row (peers are for comparison only: the router
 * never picks them) and the ratio. With rounds, also the ratio round by round (each round runs
 * every backend in a process of its own, one after another) and how far the best row's own rounds
 * spread: the process-to-process noise the ratio carries.
 */
import { median } from '@kernelkit/core';
import { ROUTER } from '../backends.js';
import { isPeer } from '../peers/index.js';
import type { BenchReport, Row } from '../types.js';
import { fmtMs } from './format.js';

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
    out.push({
      op: router.op, label: router.label, router, best, ratio: router.stats.medianMs / best.stats.medianMs,
      ...(paired ? { perRoundRatio: median(paired[0].map((v, i) => v / paired[1][i]!)) } : {}),
      ...(own !== undefined && own.length >= 2 ? { bestSpread: Math.max(...own) / Math.min(...own) } : {}),
    });
  }
  return out;
}

/** The comparisons and how many of them are within ROUTER_TARGET. */
function summary(r: BenchReport): { readonly all: RouterComparison[]; readonly within: number } {
  const all = routerComparisons(r.rows, r.rounds);
  return { all, within: all.filter((c) => c.ratio <= ROUTER_TARGET).length };
}

/** Where the router's timed calls went: each round's pick, or the row's (reports before the field: —). */
const ranOn = (r: OkRow): string => (r.roundRoutes?.length ? r.roundRoutes.join(' · ') : (r.routedTo ?? '—'));

const times = (x: number | undefined): string => (x === undefined ? '—' : `${x.toFixed(2)}×`);

/** The markdown section, or no lines where the report has no router row to compare. */
export function routerSummaryMarkdown(r: BenchReport): string[] {
  const { all, within } = summary(r);
  if (all.length === 0) return [];
  const roundColumns = all.some((c) => c.bestSpread !== undefined);
  return [
    '',
    '## The router against the best single backend',
    '',
    `Per case, the router's median against the fastest row of another kernelkit backend in this run (peers left out: the router never picks them): ${within} of ${all.length} within ${ROUTER_TARGET}×.`,
    ...(roundColumns
      ? ['', "\"Per round\" is the median of the router's round median over the best row's in the same round; \"best's spread\" is the best row's slowest round over its fastest, the process-to-process noise these ratios carry."]
      : []),
    '',
    `| op | case | router | ran on | best row | its median | router ÷ best |${roundColumns ? " per round | best's spread |" : ''}`,
    `|---|---|---|---|---|---|---|${roundColumns ? '---|---|' : ''}`,
    ...all.map(
      (c) =>
        `| ${c.op} | ${c.label} | ${fmtMs(c.router.stats.medianMs)} | ${ranOn(c.router)} | ${c.best.backend}/${c.best.variant} | ${fmtMs(c.best.stats.medianMs)} | ${c.ratio.toFixed(2)}× |` +
        (roundColumns ? ` ${times(c.perRoundRatio)} | ${times(c.bestSpread)} |` : ''),
    ),
  ];
}

/** The stdout table's lines: the count, then one line per case. */
export function routerSummaryLines(r: BenchReport): string[] {
  const { all, within } = summary(r);
  if (all.length === 0) return [];
  return [
    `Router against the best single backend: ${within} of ${all.length} cases within ${ROUTER_TARGET}×`,
    ...all.map((c) => `  ${c.op} ${c.router.caseId}: ${c.ratio.toFixed(2)}× (${fmtMs(c.router.stats.medianMs)} on ${ranOn(c.router)}; best ${c.best.backend}/${c.best.variant} ${fmtMs(c.best.stats.medianMs)})`),
  ];
}
