// Does a worker pool's trial lead over another backend carry over to their own rows (issue 16,
// POOL_MARGIN)? For every router process of every committed run whose trials timed both Piscina
// and OTHER (webgpu: the H100/H200 seed runs; cpu: the 2-core small runs), the ratio OTHER trial ÷
// Piscina trial (above 1: the pool measured faster there, best variant of each) against the same
// run's rows (OTHER's best row median ÷ Piscina's), grouped by the trial ratio: how often the
// pool's own row was the faster one; then the same for calls of 100 ms or more (POOL_MARGIN_MAX_MS)
// and for shorter ones.
//   node benchmarks/scripts/router-pool-margin.mjs [webgpu|cpu] [benchmarks/results]
import { committedRuns, median, noteTrials, RUN_FILES } from './committed-runs.mjs';

const other = process.argv[2] ?? 'webgpu';
const dir = process.argv[3] ?? 'benchmarks/results';
if (other !== 'webgpu' && other !== 'cpu') {
  console.error('usage: router-pool-margin.mjs [webgpu|cpu] [DIR]');
  process.exit(2);
}
const RUNS = other === 'cpu' ? RUN_FILES['2core'] : RUN_FILES.gpu;
const BANDS = [[0, 0.95], [0.95, 1], [1, 1.05], [1.05, 1.1], [1.1, 1.25], [1.25, Infinity]];
const LONG_MS = 100;

/** The fastest trial per backend in a router note. */
function trialsOf(note) {
  const best = {};
  for (const t of noteTrials(note)) best[t.backend] = Math.min(best[t.backend] ?? Infinity, t.ms);
  return best;
}

const pairs = [];
for (const { file, run } of committedRuns(dir, RUNS)) {
  const rows = (run.rows ?? []).filter((r) => r.status === 'ok' && r.stats !== undefined);
  const bestRow = (caseId, backend) => Math.min(...rows.filter((r) => r.caseId === caseId && r.backend === backend).map((r) => r.stats.medianMs));
  for (const router of rows.filter((r) => r.backend === 'kernelkit')) {
    const pool = bestRow(router.caseId, 'piscina');
    const rival = bestRow(router.caseId, other);
    if (!Number.isFinite(pool) || !Number.isFinite(rival)) continue;
    const notes = router.roundRouterNotes ?? (router.notes ?? []).filter((n) => n.includes('trials:'));
    for (const note of notes) {
      const t = trialsOf(note);
      if (t.piscina !== undefined && t[other] !== undefined) pairs.push({ file, caseId: router.caseId, trial: t[other] / t.piscina, rows: rival / pool, ms: Math.min(t.piscina, t[other]) });
    }
  }
}
function table(title, list) {
  console.log(`${title}: ${list.length} router processes with both trials, in ${new Set(list.map((p) => p.file)).size} runs`);
  console.log(`| ${other} trial ÷ Piscina trial | processes | Piscina row faster | median ${other} row ÷ Piscina row |`);
  console.log('|---|---|---|---|');
  for (const [lo, hi] of BANDS) {
    const band = list.filter((p) => p.trial >= lo && p.trial < hi);
    if (band.length === 0) continue;
    const faster = band.filter((p) => p.rows > 1).length;
    console.log(`| ${lo}–${hi === Infinity ? '' : hi} | ${band.length} | ${faster} | ${median(band.map((p) => p.rows)).toFixed(3)} |`);
  }
}
table('all calls', pairs);
// Split where the router stops applying the margin (POOL_MARGIN_MAX_MS): the faster trial's ms per call.
console.log();
table(`calls of ${LONG_MS} ms or more`, pairs.filter((p) => p.ms >= LONG_MS));
console.log();
table(`calls under ${LONG_MS} ms`, pairs.filter((p) => p.ms < LONG_MS));
