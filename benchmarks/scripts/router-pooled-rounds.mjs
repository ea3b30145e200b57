// The router against the best single backend over every process of several runs of one command
// (issue 16): per case, each row's round medians from all the named runs pooled, then the router's
// pooled median over the fastest other row's. On a machine whose speed differs from one process
// to the next, one run's median of 9-15 processes moves by more than the 1.1x being judged; the
// pooled medians move less. Name only runs whose routing is the same for every case they share.
//   node benchmarks/scripts/router-pooled-rounds.mjs FILE.json FILE.json ... (in benchmarks/results)
import { routerComparisons, ROUTER_TARGET } from '@kernelkit/bench';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { median } from './committed-runs.mjs';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: router-pooled-rounds.mjs FILE.json [FILE.json ...] (names in benchmarks/results, or paths)');
  process.exit(2);
}
const read = (f) => JSON.parse(readFileSync(f.includes('/') ? f : join('benchmarks/results', f), 'utf8'));

// One row per op, case, backend and variant, its median that of every run's round medians; the
// router's round medians also by where each round ran.
const pooled = new Map();
const routed = new Map();
for (const file of files) {
  for (const row of read(file).rows ?? []) {
    if (row.status !== 'ok' || !Array.isArray(row.roundMediansMs)) continue;
    const key = `${row.op}/${row.caseId}/${row.backend}/${row.variant}`;
    const rounds = [...(pooled.get(key)?.roundMediansMs ?? []), ...row.roundMediansMs];
    // The side-by-side fields are one process's, not the pool's: left out.
    const one = { ...row, roundMediansMs: rounds, stats: { ...row.stats, medianMs: median(rounds) } };
    delete one.sideBySide;
    delete one.roundSideBySide;
    pooled.set(key, one);
    row.roundRoutes?.forEach((route, i) => {
      const at = `${row.op}/${row.caseId}`;
      const byRoute = routed.get(at) ?? new Map();
      byRoute.set(route, [...(byRoute.get(route) ?? []), row.roundMediansMs[i]]);
      routed.set(at, byRoute);
    });
  }
}

const fmt = (ms) => `${ms.toFixed(ms < 10 ? 3 : 1)} ms`;
const all = routerComparisons([...pooled.values()]);
console.log(`runs pooled: ${files.join(', ')}`);
console.log('| op | case | router (processes) | its median | best row (processes) | its median | router ÷ best | the router\'s processes by where they ran: processes, median |');
console.log('|---|---|---|---|---|---|---|---|');
for (const c of all) {
  const where = [...(routed.get(`${c.router.op}/${c.router.caseId}`) ?? [])].map(([route, ms]) => `${route}: ${ms.length}, ${fmt(median(ms))}`).join(' · ');
  const [r, b] = [c.router, c.best];
  console.log(`| ${c.op} | ${c.label} | kernelkit (${r.roundMediansMs.length}) | ${fmt(r.stats.medianMs)} | ${b.backend}/${b.variant} (${b.roundMediansMs.length}) | ${fmt(b.stats.medianMs)} | ${c.ratio.toFixed(2)}× | ${where} |`);
}
console.log(`\n${all.filter((c) => c.ratio <= ROUTER_TARGET).length} of ${all.length} within ${ROUTER_TARGET}× over the pooled processes`);
