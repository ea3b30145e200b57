// Piscina's grid search from two builds side by side in one process, calls alternating:
//   node benchmarks/scripts/piscina-grid-ab.mjs OTHER_DIST STEPS THREADS ROUNDS
// OTHER_DIST: another build's packages/piscina/dist (copied next to a node_modules that resolves
// @kernelkit/*, with the worker beside it); STEPS 13 is the full CS610 grid. Prints one JSON line:
// the medians and every timed call (the first two rounds are warm-up).
import { pathToFileURL } from 'node:url';
import { CS610_DISP_PATH, CS610_GRID_PATH, readCs610Problem, reduceGrid } from '@kernelkit/ops';
import { createPiscinaBackend } from '@kernelkit/piscina';

const [otherDist, stepsArg = '8', threadsArg = '16', roundsArg = '7'] = process.argv.slice(2);
if (otherDist === undefined) throw new Error('usage: piscina-grid-ab.mjs OTHER_DIST [STEPS] [THREADS] [ROUNDS]');
const steps = Number(stepsArg);
const threads = Number(threadsArg);
const rounds = Number(roundsArg);
const full = await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH);
const args = steps >= 13 ? full : reduceGrid(full, steps);
const other = await import(pathToFileURL(`${otherDist}/index.js`).href);
const backends = { this: await createPiscinaBackend({ threads }), other: await other.createPiscinaBackend({ threads }) };
const times = { this: [], other: [] };
const counts = {};
for (let r = 0; r < rounds + 2; r++) {
  for (const k of r % 2 ? ['other', 'this'] : ['this', 'other']) {
    const t0 = performance.now();
    const res = await backends[k].gridSearch(args);
    const ms = performance.now() - t0;
    counts[k] = res.data.count;
    if (r >= 2) times[k].push(+ms.toFixed(2));
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(JSON.stringify({ steps, threads, counts, thisMs: median(times.this), otherMs: median(times.other), times }));
for (const b of Object.values(backends)) await b.dispose();
