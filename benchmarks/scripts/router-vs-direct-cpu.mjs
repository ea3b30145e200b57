// The router's settled calls against a direct backend of its choice (cpu or piscina) in the same
// process, timed alternately, on a machine without a GPU. The router first settles the cases
// before CASE in the bench's order (as in a bench process). SCENARIO: router (router and direct
// alternately) | direct (a direct backend alone in the process).
//   node benchmarks/scripts/router-vs-direct-cpu.mjs SCENARIO CASE [WORKLOAD=small] [PAIRS=60]
import { benchCases } from '@kernelkit/bench';
import { createCpuBackend } from '@kernelkit/cpu';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { createKernels } from 'kernelkit';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [scenario, caseId, workload = 'small', pairsArg = '60'] = process.argv.slice(2);
const pairs = Number(pairsArg);
const cases = benchCases(workload);
const at = cases.findIndex((c) => c.id === caseId);
if (at < 0 || (scenario !== 'router' && scenario !== 'direct')) {
  console.error('usage: router-vs-direct-cpu.mjs router|direct CASE [WORKLOAD] [PAIRS]');
  process.exit(2);
}
const c = cases[at];
const args = await c.make();
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const timed = async (f, into) => { const s = performance.now(); await f(); into.push(performance.now() - s); };
const makeDirect = (name) => (name === 'piscina' ? createPiscinaBackend() : createCpuBackend());

if (scenario === 'direct') {
  const name = process.env.KK_BACKEND ?? 'cpu';
  const b = await makeDirect(name);
  for (let i = 0; i < 10; i++) await b[c.op](args, { variant: process.env.KK_VARIANT });
  const t = [];
  for (let i = 0; i < pairs; i++) await timed(() => b[c.op](args, { variant: process.env.KK_VARIANT }), t);
  console.log(JSON.stringify({ scenario, caseId, backend: name, medianMs: +med(t).toFixed(3) }));
  await b.dispose();
} else {
  const k = await createKernels({ route: 'auto', calibrationCache: join(mkdtempSync(join(tmpdir(), 'kk-probe-')), 'c.json') });
  await k.calibrate();
  const settle = async (op, a) => { let r; for (let i = 0; i < 800; i++) { r = (await k[op](a)).route; if (r.settled) break; } return r; };
  // The cases before this one of the same op, as a bench process runs them first.
  for (const before of cases.slice(0, at).filter((x) => x.op === c.op)) await settle(before.op, await before.make());
  const route = await settle(c.op, args);
  const direct = await makeDirect(route.backend);
  const opts = { variant: route.variant };
  for (let i = 0; i < 10; i++) await direct[c.op](args, opts);
  const r = [], d = [];
  for (let i = 0; i < pairs; i++) {
    if (i % 2) { await timed(() => direct[c.op](args, opts), d); await timed(() => k[c.op](args), r); }
    else { await timed(() => k[c.op](args), r); await timed(() => direct[c.op](args, opts), d); }
  }
  console.log(JSON.stringify({ scenario, caseId, route: `${route.backend}/${route.variant}`, routerMs: +med(r).toFixed(3), directMs: +med(d).toFixed(3), reason: route.reason }));
  await direct.dispose();
  await k.dispose();
}
