/**
 * The router's rows against the best single backend of the same run: per case, the router's
 * median, where it ran, the fastest other kernelkit row (peers are for comparison only: the router
 * never picks them) and the ratio.
 */
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
}

/** One comparison per case that has an ok router row and an ok row of another kernelkit backend. */
export function routerComparisons(rows: readonly Row[]): RouterComparison[] {
  const out: RouterComparison[] = [];
  for (const router of rows) {
    if (router.status !== 'ok' || router.backend !== ROUTER) continue;
    let best: OkRow | undefined;
    for (const x of rows) {
      if (x.status !== 'ok' || x.caseId !== router.caseId || x.op !== router.op || x.backend === ROUTER || isPeer(x.backend)) continue;
      if (best === undefined || x.stats.medianMs < best.stats.medianMs) best = x;
    }
    if (best !== undefined) out.push({ op: router.op, label: router.label, router, best, ratio: router.stats.medianMs / best.stats.medianMs });
  }
  return out;
}

/** The comparisons and how many of them are within ROUTER_TARGET. */
function summary(r: BenchReport): { readonly all: RouterComparison[]; readonly within: number } {
  const all = routerComparisons(r.rows);
  return { all, within: all.filter((c) => c.ratio <= ROUTER_TARGET).length };
}

/** Where the router's timed calls went: each round's pick, or the row's (reports before the field: —). */
const ranOn = (r: OkRow): string => (r.roundRoutes?.length ? r.roundRoutes.join(' · ') : (r.routedTo ?? '—'));

/** The markdown section, or no lines where the report has no router row to compare. */
export function routerSummaryMarkdown(r: BenchReport): string[] {
  const { all, within } = summary(r);
  if (all.length === 0) return [];
  return [
    '',
    '## The router against the best single backend',
    '',
    `Per case, the router's median against the fastest row of another kernelkit backend in this run (peers left out: the router never picks them): ${within} of ${all.length} within ${ROUTER_TARGET}×.`,
    '',
    '| op | case | router | ran on | best row | its median | router ÷ best |',
    '|---|---|---|---|---|---|---|',
    ...all.map((c) => `| ${c.op} | ${c.label} | ${fmtMs(c.router.stats.medianMs)} | ${ranOn(c.router)} | ${c.best.backend}/${c.best.variant} | ${fmtMs(c.best.stats.medianMs)} | ${c.ratio.toFixed(2)}× |`),
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
