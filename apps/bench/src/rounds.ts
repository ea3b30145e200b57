import { rowKey } from './merge.js';
import type { Row } from './types.js';

/**
 * One row per backend × case × variant out of several rounds of the same run: of the rounds that
 * measured it, the one whose median is the median of their medians (the lower middle for an even
 * count), whole, so every figure in the row comes from one process. `roundMediansMs` lists the
 * median of every round that measured it, in round order, and the router's rows `roundRoutes`
 * where each of those rounds sent its calls, `roundRouterNotes` how each settled (trials, predictions) and `roundSideBySide` each round's side-by-side timing. A row no round measured keeps its last round's error or skip.
 * Rows come in the order they first appeared.
 */
export function medianRounds(rounds: readonly (readonly Row[])[]): Row[] {
  const byKey = new Map<string, Row[]>();
  for (const rows of rounds) {
    for (const r of rows) {
      const k = rowKey(r);
      const seen = byKey.get(k);
      if (seen === undefined) byKey.set(k, [r]);
      else seen.push(r);
    }
  }
  return [...byKey.values()].map((all) => {
    const ok = all.filter((r): r is Extract<Row, { status: 'ok' }> => r.status === 'ok');
    if (!ok.length) return all[all.length - 1]!;
    const sorted = [...ok].sort((a, b) => a.stats.medianMs - b.stats.medianMs);
    const middle = sorted[Math.floor((sorted.length - 1) / 2)]!;
    if (ok.length === 1) return middle;
    const routes = ok.every((r) => r.routedTo !== undefined)
      ? { roundRoutes: ok.map((r) => r.routedTo!), roundRouterNotes: ok.map((r) => r.notes?.find((n) => n.startsWith('router ')) ?? '') }
      : {};
    const side = ok.every((r) => r.sideBySide !== undefined) ? { roundSideBySide: ok.map((r) => r.sideBySide!) } : {};
    return { ...middle, roundMediansMs: ok.map((r) => r.stats.medianMs), ...routes, ...side };
  });
}
