import type { BenchReport } from '../types.js';
import { ceilingLine } from '../ceiling.js';
import { fmtFloor, fmtMs, fmtNum, fmtX } from './format.js';
import { footnotes } from './notes.js';
import { routerSummaryLines } from './router-summary.js';

/** The compact stdout table: one line per row. */
export function formatTable(r: BenchReport): string {
  // The transfer columns only when some row has them (a run without WebGPU keeps the narrow table).
  const transfers = r.rows.some((x) => x.status === 'ok' && (x.residentMedianMs !== undefined || x.uploadMedianMs !== undefined || x.readbackMedianMs !== undefined));
  const floor = r.floor;
  const median = floor ? ['median', 'vs floor'] : ['median'];
  const head = transfers
    ? ['op', 'case', 'backend', 'variant', ...median, 'resident', 'kernel', 'upload', 'readback', 'p75', 'throughput', 'vs cpu', 'vs prev', 'status']
    : ['op', 'case', 'backend', 'variant', ...median, 'p75', 'throughput', 'kernel', 'vs cpu', 'vs prev', 'status'];
  const lines: string[][] = [head];
  const notes = footnotes(r.rows);
  const ms = (v: number | undefined): string => (v === undefined ? '' : fmtMs(v));
  for (const row of r.rows) {
    if (row.status === 'ok') {
      lines.push([
        row.op, row.caseId, row.backend + (row.software ? ' (sw)' : ''), row.variant + notes.marker(row), fmtMs(row.stats.medianMs),
        ...(floor ? [fmtFloor(row, floor)] : []),
        ...(transfers
          ? [ms(row.residentMedianMs), ms(row.kernelMedianMs), ms(row.uploadMedianMs), ms(row.readbackMedianMs), fmtMs(row.stats.p75Ms), `${fmtNum(row.throughput.value)} ${row.throughput.unit}`]
          : [fmtMs(row.stats.p75Ms), `${fmtNum(row.throughput.value)} ${row.throughput.unit}`, ms(row.kernelMedianMs)]),
        fmtX(row.speedupVsSequential), row.speedupVsPrevious ? `${fmtX(row.speedupVsPrevious.value)} ${row.speedupVsPrevious.over}` : '', 'ok',
      ]);
    } else {
      lines.push([row.op, row.caseId, row.backend, row.variant, ...head.slice(4, -1).map(() => ''), row.status === 'errored' ? `ERRORED: ${row.message}` : `skipped: ${row.reason}`]);
    }
  }
  const widths = head.map((_, i) => Math.max(...lines.map((l) => (i === head.length - 1 ? 0 : (l[i] ?? '').length))));
  const table = lines.map((l) => l.map((c, i) => (i === head.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n');
  const noteLines = notes.texts.map((t, i) => `[${i + 1}] ${t}`);
  const floorLine = floor
    ? `\nMemory floor (${floor.bytes / 2 ** 20} MiB): copy ${fmtNum(floor.copyGBps)} GB/s, fresh write ${fmtNum(floor.freshWriteGBps)} GB/s on 1 thread, ${fmtNum(floor.freshWriteAllThreadsGBps)} GB/s on ${floor.threads}; vs floor = median ÷ (output bytes at the faster fresh-write speed)\n${floor.computeCeiling ? `${ceilingLine(floor.computeCeiling)}\n` : ''}`
    : '';
  const router = routerSummaryLines(r);
  return `${table}\n${floorLine}${noteLines.length ? `\nNotes:\n${noteLines.join('\n')}\n` : ''}${router.length ? `\n${router.join('\n')}\n` : ''}\n${r.rows.length} rows in ${fmtMs(r.wallMs)}\n`;
}
