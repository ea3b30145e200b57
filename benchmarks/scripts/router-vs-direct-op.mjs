// The router's settled calls against a direct backend of its choice (cpu, piscina or webgpu) in
// the same process, timed alternately, for any bench case; then the router alone, back to back.
// Medians of the wall time, GC ms and full collections over each set, and the heap in use at its
// start: a gap within one process is the router's own; one between processes is process state.
// SCENARIO: router (router and direct alternately, then the router alone) | direct (the direct
// backend alone in the process: KK_BACKEND, KK_VARIANT). KK_HOLD=n keeps each set's last n
// results alive while it runs (the bench's row holds its first two calls' results as it times).
//   node benchmarks/scripts/router-vs-direct-op.mjs SCENARIO CASE [WORKLOAD=seed] [PAIRS=60]
import { benchCases } from '@kernelkit/bench';
import { createCpuBackend } from '@kernelkit/cpu';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { createKernels, defaultLoaders } from 'kernelkit';
import { BackendUnavailableError } from '@kernelkit/core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

const [scenario, caseId, workload = 'seed', pairsArg = '60'] = process.argv.slice(2);
const pairs = Number(pairsArg);
const cases = benchCases(workload);
const at = cases.findIndex((c) => c.id === caseId);
if (at < 0 || (scenario !== 'router' && scenario !== 'direct')) {
  console.error('usage: router-vs-direct-op.mjs router|direct CASE [WORKLOAD] [PAIRS]');
  process.exit(2);
}
const c = cases[at];
const args = await c.make();
let gcMs = 0;
let majorGcs = 0;
// Kind 4: a full (mark-compact) collection, the kind a result memory's prompt asks for.
new PerformanceObserver((l) => { for (const e of l.getEntries()) { gcMs += e.duration; if (e.detail?.kind === 4) majorGcs++; } }).observe({ entryTypes: ['gc'] });

/** A set of timed calls: wall ms, the result's timing parts, and GC ms during each call. */
const newSet = () => ({ wall: [], gc: [], major: 0, heapMiB: +(getHeapStatistics().used_heap_size / 2 ** 20).toFixed(1) });
const hold = Number(process.env.KK_HOLD ?? '0');
const timed = async (f, set) => {
  const g = gcMs;
  const m = majorGcs;
  const s = performance.now();
  const r = await f();
  if (hold > 0) { (set.held ??= []).push(r.data); if (set.held.length > hold) set.held.shift(); }
  set.wall.push(performance.now() - s);
  set.gc.push(gcMs - g);
  set.major += majorGcs - m;
};
const med = (xs) => (xs.length === 0 ? null : +[...xs].sort((a, b) => a - b)[xs.length >> 1].toFixed(3));
const summary = (set) => ({ wall: med(set.wall), gcTotal: +set.gc.reduce((a, b) => a + b, 0).toFixed(1), majorGcs: set.major, heapMiB: set.heapMiB });
const makeDirect = (name) => (name === 'piscina' ? createPiscinaBackend() : name === 'webgpu' ? createWebGpuBackend({ adapter: 'any' }) : createCpuBackend());

if (scenario === 'direct') {
  const name = process.env.KK_BACKEND ?? 'cpu';
  const b = await makeDirect(name);
  const opts = { variant: process.env.KK_VARIANT };
  for (let i = 0; i < 10; i++) await b[c.op](args, opts);
  const d = newSet();
  for (let i = 0; i < pairs; i++) await timed(() => b[c.op](args, opts), d);
  console.log(JSON.stringify({ scenario, caseId, hold, backend: name, variant: opts.variant, direct: summary(d) }));
  await b.dispose();
} else {
  // KK_CANDIDATES (comma-separated): the backends the router may start, e.g. piscina alone on a
  // machine where it would pick cpu (the others' loaders fail, as for a package not installed).
  const only = process.env.KK_CANDIDATES?.split(',');
  const leftOut = (name) => async () => { throw new BackendUnavailableError(`${name} left out (KK_CANDIDATES)`); };
  // The WebGPU adapter probe stays only where webgpu may start.
  const loaders = Object.fromEntries(
    Object.entries(defaultLoaders)
      .filter(([name]) => !name.startsWith('probe') || only === undefined || only.includes('webgpu'))
      .map(([name, load]) => [name, only === undefined || only.includes(name) || name.startsWith('probe') ? load : leftOut(name)]),
  );
  const k = await createKernels({ route: 'auto', calibrationCache: join(mkdtempSync(join(tmpdir(), 'kk-probe-')), 'c.json') }, loaders);
  await k.calibrate();
  const settle = async (op, a) => { let r; for (let i = 0; i < 800; i++) { r = (await k[op](a)).route; if (r.settled) break; } return r; };
  // The cases before this one of the same op, as a bench process runs them first.
  for (const before of cases.slice(0, at).filter((x) => x.op === c.op)) await settle(before.op, await before.make());
  const route = await settle(c.op, args);
  const direct = await makeDirect(route.backend);
  const opts = { variant: route.variant };
  for (let i = 0; i < 10; i++) await direct[c.op](args, opts);
  const r = newSet();
  const d = newSet();
  for (let i = 0; i < pairs; i++) {
    if (i % 2) { await timed(() => direct[c.op](args, opts), d); await timed(() => k[c.op](args), r); }
    else { await timed(() => k[c.op](args), r); await timed(() => direct[c.op](args, opts), d); }
  }
  const alone = newSet();
  for (let i = 0; i < pairs; i++) await timed(() => k[c.op](args), alone);
  console.log(JSON.stringify({ scenario, caseId, hold, route: `${route.backend}/${route.variant}`, router: summary(r), direct: summary(d), routerAlone: summary(alone), reason: route.reason }));
  await direct.dispose();
  await k.dispose();
}
