// The router against the best single backend over every process of several runs of one command
// (issue 16): per case, each row's round medians from all the named runs pooled, then the router's
// pooled median over the fastest other row's. On a machine whose speed differs from one process
// to the next, one run's median of 9-15 processes moves by more than the 1.1x being judged; the
// pooled medians move less. Name only runs whose routing is the same for every case they share.
//   node benchmarks/scripts/router-pooled-rounds.mjs FILE.json FILE.json ... (in benchmarks/results)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { median } from './committed-runs.mjs';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: router-pooled-rounds.mjs FILE.json [FILE.json ...] (names in benchmarks/results, or paths)');
  process.exit(2);
}
const read = (f) => JSON.parse(readFileSync(f.includes('/') ? f : join('benchmarks/results', f), 'utf8'));

// case id -> { label, op, rows: Map("backend/variant" -> round medians), routed: Map(route -> the router's round medians there) }
const cases = new Map();
for (const file of files) {
  for (const row of read(file).rows ?? []) {
    if (row.status !== 'ok' || !Array.isArray(row.roundMediansMs)) continue;
    const c = cases.get(row.caseId) ?? { op: row.op, label: row.label, rows: new Map(), routed: new Map() };
    const key = `${row.backend}/${row.variant}`;
    c.rows.set(key, [...(c.rows.get(key) ?? []), ...row.roundMediansMs]);
    row.roundRoutes?.forEach((route, i) => c.routed.set(route, [...(c.routed.get(route) ?? []), row.roundMediansMs[i]]));
    cases.set(row.caseId, c);
  }
}

const PEERS = new Set(['onnxruntime', 'tfjs-wasm']);
const fmt = (ms) => `${ms.toFixed(ms < 10 ? 3 : 1)} ms`;
let within = 0;
let judged = 0;
console.log(`runs pooled: ${files.join(', ')}`);
console.log('| op | case | router (processes) | its median | best row (processes) | its median | router ÷ best | the router\'s processes by where they ran: processes, median |');
console.log('|---|---|---|---|---|---|---|---|');
for (const c of cases.values()) {
  const router = c.rows.get('kernelkit/routed');
  const others = [...c.rows].filter(([key]) => !key.startsWith('kernelkit/') && !PEERS.has(key.split('/')[0]));
  if (router === undefined || others.length === 0) continue;
  const [bestKey, best] = others.reduce((a, b) => (median(b[1]) < median(a[1]) ? b : a));
  const ratio = median(router) / median(best);
  judged++;
  if (ratio <= 1.1) within++;
  const where = [...c.routed].map(([route, ms]) => `${route}: ${ms.length}, ${fmt(median(ms))}`).join(' · ');
  console.log(`| ${c.op} | ${c.label} | kernelkit (${router.length}) | ${fmt(median(router))} | ${bestKey} (${best.length}) | ${fmt(median(best))} | ${ratio.toFixed(2)}× | ${where} |`);
}
console.log(`\n${within} of ${judged} within 1.1× over the pooled processes`);
