// Where the router sends the CS610 grid search and why, in this process: each call's route
// (choice, predicted ms of the pick and of the runner-up, measured trials), for STEPS per dimension.
//   KERNELKIT_CALIBRATION_CACHE=/tmp/fresh.json node benchmarks/scripts/router-grid-diag.mjs STEPS CALLS
import { CS610_DISP_PATH, CS610_GRID_PATH, readCs610Problem, reduceGrid } from '@kernelkit/ops';
import { createKernels } from 'kernelkit';

const steps = Number(process.argv[2] ?? 8);
const calls = Number(process.argv[3] ?? 30);
const full = await readCs610Problem(CS610_GRID_PATH, CS610_DISP_PATH);
const args = steps >= 13 ? full : reduceGrid(full, steps);
const t0 = performance.now();
const k = await createKernels();
console.log(JSON.stringify({ created: +(performance.now() - t0).toFixed(0) }));
let last;
for (let i = 0; i < calls; i++) {
  const t = performance.now();
  const r = await k.gridSearch(args);
  const ms = +(performance.now() - t).toFixed(1);
  const { route } = r;
  const line = { i, ms, to: `${route?.backend}/${route?.variant}`, choice: route?.choice, predictedMs: route?.predictedMs && +route.predictedMs.toFixed(1), runnerUp: route?.runnerUp, note: r.notes?.[0] };
  if (i < 3 || line.to !== last || i === calls - 1) console.log(JSON.stringify(line));
  last = line.to;
}
await k.dispose();
