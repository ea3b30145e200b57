import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import { OP_NAMES, type OpName } from '@kernelkit/ops';
import type { BenchReport } from '../types.js';
import { footnotes, formatMarker } from './notes.js';

/**
 * One bar chart per op: throughput of every ok row, grouped by case. Rendered headless (no
 * canvas). Row labels are never cut (two long variant names would read the same) and carry the
 * same note numbers as the markdown table, with the notes under the title.
 */
export async function renderCharts(r: BenchReport): Promise<Map<OpName, string>> {
  const charts = new Map<OpName, string>();
  for (const op of OP_NAMES) {
    const rows = r.rows.filter((x) => x.op === op);
    const notes = footnotes(rows);
    // One label per backend/variant across cases: the union of its rows' note numbers.
    const label = (backend: string, variant: string): string => {
      const ns = rows.filter((x) => x.backend === backend && x.variant === variant).flatMap((x) => notes.numbers(x));
      const sw = rows.some((x) => x.backend === backend && x.status === 'ok' && x.software);
      return `${backend}${sw ? ' (sw)' : ''} / ${variant}${formatMarker(ns)}`;
    };
    const values = rows.flatMap((x) => (x.status === 'ok' ? [{ row: label(x.backend, x.variant), case: x.label, throughput: x.throughput.value, unit: x.throughput.unit }] : []));
    if (!values.length) continue;
    const title = `${op} — ${r.machine.cpu} (${r.workload})`;
    const spec: vegaLite.TopLevelSpec = {
      $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
      title: notes.texts.length ? { text: title, subtitle: notes.texts.map((t, i) => `[${i + 1}] ${t}`), subtitleFontSize: 10, anchor: 'start' } : title,
      data: { values },
      mark: 'bar',
      width: 480,
      encoding: {
        y: { field: 'row', type: 'nominal', title: null, sort: null, axis: { labelLimit: 0 } },
        yOffset: { field: 'case', type: 'nominal' },
        x: { field: 'throughput', type: 'quantitative', title: values[0]!.unit },
        color: { field: 'case', type: 'nominal', title: 'case', legend: { labelLimit: 0 } },
      },
    };
    const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
    charts.set(op, await view.toSVG());
    view.finalize();
  }
  return charts;
}
