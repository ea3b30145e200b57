// Piscina's grid search from several builds side by side in one process, calls alternating:
//   node benchmarks/scripts/piscina-grid-ab.mjs OTHER_DISTS STEPS THREADS ROUNDS
// OTHER_DISTS: comma-separated paths of other builds' packages/piscina/dist (each copied next to a
// node_modules that resolves @kernelkit/*, with the worker beside it); STEPS 13 is the full CS610
// grid. Prints one JSON line: the medians and every timed call (the first two rounds are warm-up),
// this checkout's build as "this", the others by path.
import { pathToFileURL } from 'node:url';
import { CS610_DISP_PATH, CS610_GRID_PATH, readCs610Problem, reduceGrid } from '@kernelkit/ops';
import { createPiscinaBackend } from '@kernelkit/piscina';

const [otherDists, stepsArg = '8', threadsArg = '16', roundsArg = '7'] = process.argv.slice(2);
if (otherDists === undefined) throw new Error('usage: piscina-grid-ab.mjs OTHER_DISTS [STEPS] [THREADS] [ROUNDS]');
const steps = Number(stepsArg);
const threads = Number(threadsArg);
const rounds = Number(roundsArg);
const full = await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH);
const args = steps >= 13 ? full : reduceGrid(full, steps);
const backends = { this: await createPiscinaBackend({ threads }) };
for (const dist of otherDists.split(',')) backends[dist] = await (await import(pathToFileURL(`${dist}/index.js`).href)).createPiscinaBackend({ threads });
const names = Object.keys(backends);
const times = Object.fromEntries(names.map((k) => [k, []]));
const counts = {};
for (let r = 0; r < rounds + 2; r++) {
  // Each round starts with the next build, so none always runs first.
  for (let i = 0; i < names.length; i++) {
    const k = names[(i + r) % names.length];
    const t0 = performance.now();
    const res = await backends[k].gridSearch(args);
    const ms = performance.now() - t0;
    counts[k] = res.data.count;
    if (r >= 2) times[k].push(+ms.toFixed(2));
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(JSON.stringify({ steps, threads, counts, medians: Object.fromEntries(names.map((k) => [k, median(times[k])])), times }));
for (const b of Object.values(backends)) await b.dispose();
