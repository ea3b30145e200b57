import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import { OP_NAMES, type OpName } from '@kernelkit/ops';
import type { BenchReport } from '../types.js';

/** One bar chart per op: throughput of every ok row, grouped by case. Rendered headless (no canvas). */
export async function renderCharts(r: BenchReport): Promise<Map<OpName, string>> {
  const charts = new Map<OpName, string>();
  for (const op of OP_NAMES) {
    const values = r.rows.flatMap((x) =>
      x.op === op && x.status === 'ok' ? [{ row: `${x.backend}${x.software ? ' (sw)' : ''} / ${x.variant}`, case: x.label, throughput: x.throughput.value, unit: x.throughput.unit }] : [],
    );
    if (!values.length) continue;
    const spec: vegaLite.TopLevelSpec = {
      $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
      title: `${op} — ${r.machine.cpu} (${r.workload})`,
      data: { values },
      mark: 'bar',
      width: 480,
      encoding: {
        y: { field: 'row', type: 'nominal', title: null, sort: null },
        yOffset: { field: 'case', type: 'nominal' },
        x: { field: 'throughput', type: 'quantitative', title: values[0]!.unit },
        color: { field: 'case', type: 'nominal', title: 'case' },
      },
    };
    const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
    charts.set(op, await view.toSVG());
    view.finalize();
  }
  return charts;
}
