// Every call of the given small-workload cases through createKernels() (route auto, a fresh
// calibration cache) in order: backend/variant:choice:ms, to see warm-ups, trials and settled calls.
//   node benchmarks/scripts/router-trial-calls.mjs scan-4M-u32,conv2d-1x1024-k5 [calls per case]
import os from 'node:os';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { createKernels } from 'kernelkit';
import { benchCases } from '@kernelkit/bench';

const ids = (process.argv[2] ?? 'scan-4M-u32').split(',');
const calls = Number(process.argv[3] ?? 120);
const cache = join(await mkdtemp(join(os.tmpdir(), 'kk-trial-')), 'calibration.json');
const k = await createKernels({ route: 'auto', calibrationCache: cache });
await k.calibrate();
for (const c of benchCases('small').filter((c) => ids.includes(c.id))) {
  const args = await c.make();
  const rows = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    const r = await k[c.op](args);
    const ms = performance.now() - t0;
    rows.push(`${r.backend}/${r.variant}:${r.route.choice}:${ms.toFixed(2)}`);
  }
  console.log(c.id, '\n ', rows.join(' '));
}
await k.dispose();
