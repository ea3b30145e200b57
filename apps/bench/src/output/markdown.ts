import { OP_NAMES } from '@kernelkit/ops';
import type { MemoryFloor } from '../floor.js';
import { ceilingLine } from '../ceiling.js';
import type { BenchReport, Row } from '../types.js';
import { fmtFloor, fmtMs, fmtNum, fmtX } from './format.js';
import { footnotes } from './notes.js';
import { routerSummaryMarkdown } from './router-summary.js';

/** The paragraph on the transfer columns, in reports that have them. */
const DEVICE_COLUMNS =
  'Where a backend has device memory (WebGPU) the tables also show "resident": the median of the same call with its input already a DeviceArray and its output kept on the device (no host copies; the throughput in brackets), and "upload" / "readback": the medians of the backend-reported host-to-device and device-to-host copy times inside the end-to-end call. So "median" ≈ upload + kernel + readback + overhead, and "resident" is the call without the two copies. Empty cells: the backend has no device or does not report that time, or the op does not run with both input and output in device memory there (the row\'s note says why).';

const TITLES = { conv2d: '2-D convolution', stencil3d: '3-D 7-point stencil', scan: 'Prefix sum (scan)', gridSearch: 'Grid search (CS610)', convLayer: 'Convolution layer (ECE408)' } as const;

/** The course reports' layout: per op, one table of backend/variant rows with time, throughput and speed-ups. */
export function formatMarkdown(r: BenchReport): string {
  const m = r.machine;
  const out: string[] = [
    `# kernelkit bench — ${r.workload} workload, ${r.date.slice(0, 10)}`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores${m.hostCores === undefined ? '' : ` (of the machine's ${m.hostCores})`}, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}. Wall time ${fmtMs(r.wallMs)}.`,
    '',
    '| backend | status | start | on |',
    '|---|---|---|---|',
    ...r.backends.map((b) => `| ${b.backend} | ${b.status} | ${b.startMs === undefined ? '' : fmtMs(b.startMs)} | ${(b.description ?? b.reason ?? '').replace(/\|/g, '\\|')} |`),
    '',
    ...(r.partial ? [`**Partial**: ${partialDone(r.partial)}; the run was still going (or was stopped) when this was written.`, ''] : []),
    ...(r.mergedFrom ? [`Merged from ${r.mergedFrom.length} runs on this machine: ${r.mergedFrom.join(', ')}.`, ''] : []),
    ...(r.isolation ? [`Isolation: ${r.isolation}.`, ''] : []),
    ...(r.rounds ? [`Rounds: each backend ran in ${r.rounds} child processes, round-robin (every backend once, then again); each row is the round with the median median, whole, and "rounds" lists the median of every round that measured it, in order (for the router, with where that round sent its calls).`, ''] : []),
    `Correctness: ${r.checkPolicy}`,
    '',
    `Times are medians of sequential runs (tinybench; rows over the single-shot bound (1.5 s small, 5 s seed) are timed once: samples = 1, the checked first run when it alone is over the bound)${r.warmUp === undefined ? '' : `, after ${r.warmUp}`}; "first call" is the cold first run (pipeline compiles, pool warm-up); "kernel" is the backend-reported compute time where it has one (WebGPU: timestamps around the call's passes, right after the call's own upload; big batches in chunks sum their chunks' passes; resident back-to-back times: apps/studies/dist/webgpu/steady.js); speed-ups are of medians, over the sequential CPU backend and over the previous variant of the same backend (simplest first).`,
    ...(r.rows.some(hasTransferTimes) ? ['', DEVICE_COLUMNS] : []),
    ...(r.floor ? ['', floorParagraph(r.floor)] : []),
    ...(r.floor?.computeCeiling ? ['', `${ceilingLine(r.floor.computeCeiling)}.`] : []),
  ];
  for (const op of OP_NAMES) {
    const rows = r.rows.filter((x) => x.op === op);
    if (!rows.length) continue;
    const notes = footnotes(rows);
    // With transfer times, kernel sits beside them; without (reports from before those columns, or
    // no backend with a device), the table keeps its earlier layout.
    const transfers = rows.some(hasTransferTimes);
    // "vs floor" beside the median, in reports that measured the floor (older ones keep their layout).
    const floor = r.floor;
    const rounds = rows.some((x) => x.status === 'ok' && x.roundMediansMs !== undefined);
    const median = [...(floor ? ['median', 'vs floor'] : ['median']), ...(rounds ? ['rounds'] : [])];
    const head = transfers
      ? ['case', 'backend', 'variant', ...median, 'resident', 'kernel', 'upload', 'readback', 'p75 / p99', 'first call', 'throughput', 'vs sequential', 'vs previous variant']
      : ['case', 'backend', 'variant', ...median, 'p75 / p99', 'first call', 'throughput', 'kernel', 'vs sequential', 'vs previous variant'];
    out.push('', `## ${TITLES[op]}`, '', `| ${head.join(' | ')} |`, `|${'---|'.repeat(head.length)}`);
    for (const x of rows) {
      if (x.status === 'ok') {
        const kernel = withRate(x.kernelMedianMs, x.kernelThroughput?.value);
        const spread = [`${fmtMs(x.stats.p75Ms)} / ${fmtMs(x.stats.p99Ms)}`, fmtMs(x.firstCallMs), `${fmtNum(x.throughput.value)} ${x.throughput.unit}`];
        const cells = [
          x.label, `${x.backend}${x.software ? ' (software)' : ''}`, `${x.variant}${notes.marker(x)}`, fmtMs(x.stats.medianMs),
          ...(floor ? [fmtFloor(x, floor)] : []),
          ...(rounds ? [(x.roundMediansMs ?? []).map((ms, i) => fmtMs(ms) + (x.roundRoutes ? ` (${x.roundRoutes[i]})` : '')).join(' · ')] : []),
          ...(transfers ? [withRate(x.residentMedianMs, x.residentThroughput?.value), kernel, optMs(x.uploadMedianMs), optMs(x.readbackMedianMs), ...spread] : [...spread, kernel]),
          fmtX(x.speedupVsSequential), x.speedupVsPrevious ? `${fmtX(x.speedupVsPrevious.value)} over ${x.speedupVsPrevious.over}` : '',
        ];
        out.push(`| ${cells.join(' | ')} |`);
      } else {
        const why = (x.status === 'errored' ? `**errored**: ${x.message}` : `skipped: ${x.reason}`).replace(/\|/g, '\\|').replace(/\n/g, ' ');
        out.push(`| ${x.label} | ${x.backend} | ${x.variant} | ${why} |${' |'.repeat(head.length - 4)}`);
      }
    }
    // The backends' notes can change what a row measured (another kernel form ran, a pool call ran inline).
    if (notes.texts.length) out.push('', 'Notes (the [n] after a variant):', '', ...notes.texts.map((t, i) => `${i + 1}. ${t.replace(/\n/g, ' ')}`));
  }
  out.push(...routerSummaryMarkdown(r));
  return out.join('\n') + '\n';
}

/** How far a partial report got (reports written before `pairsDone` counted rows). */
function partialDone(p: NonNullable<BenchReport['partial']>): string {
  return p.pairsDone !== undefined
    ? `${p.pairsDone} of ${p.pairsPlanned} backend × case pairs planned measured`
    : `${p.rowsDone ?? 0} rows measured of ${p.pairsPlanned} backend × case pairs planned`;
}

/** What the probe measured and what the "vs floor" column divides by. */
function floorParagraph(f: MemoryFloor): string {
  const gb = (v: number): string => `${fmtNum(v)} GB/s`;
  return (
    `Memory floor (measured once in this run, before any backend, ${f.bytes / 2 ** 20} MiB per probe, median of ${f.samples}): ` +
    `copy into a reused array ${gb(f.copyGBps)} on one thread; writing a new array (page faults on first touch included) ${gb(f.freshWriteGBps)} on one thread, ` +
    `${gb(f.freshWriteAllThreadsGBps)} on ${f.threads} threads at once. "vs floor" is the row's median ÷ the time to write its output array at the faster of the two fresh-write speeds: ` +
    'the least time any contender returning a fresh output of that size spends (1× would be writing the output and nothing else). ' +
    'Outputs far smaller than the probe may fit in the caches or reuse freed pages, where this is no bound; grid search returns no array and has no figure.'
  );
}

const hasTransferTimes = (x: Row): boolean => x.status === 'ok' && (x.residentMedianMs !== undefined || x.uploadMedianMs !== undefined || x.readbackMedianMs !== undefined);
const optMs = (ms: number | undefined): string => (ms === undefined ? '' : fmtMs(ms));
const withRate = (ms: number | undefined, rate: number | undefined): string => (ms === undefined ? '' : `${fmtMs(ms)} (${fmtNum(rate ?? 0)})`);
