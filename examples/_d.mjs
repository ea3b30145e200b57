import { createPiscinaBackend } from '@kernelkit/piscina';
import { makeConvLayerArgs, makeScanArgs } from '@kernelkit/ops';
const detach = process.argv[2] === 'detach';
if (detach) structuredClone(new ArrayBuffer(8), { transfer: [] }), (() => { const b = new ArrayBuffer(8); structuredClone(b, { transfer: [b] }); })();
const which = process.argv[3] ?? 'conv';
const b = await createPiscinaBackend({});
const args = which === 'conv' ? makeConvLayerArgs({ batch: 300, channels: 1, height: 86, width: 86, maps: 4, k: 7 }) : makeScanArgs({ n: 2**23, dtype: 'u32' });
const op = which === 'conv' ? 'convLayer' : 'scan';
const walls = [], ups = [];
let hold = [];
for (let i = 0; i < 60; i++) {
  const t = performance.now();
  const r = await b[op](args, { timing: true });
  const w = performance.now() - t;
  hold.push(r); if (hold.length > 2) hold.shift();
  if (i >= 20) { walls.push(w); ups.push(r.timing?.uploadMs ?? NaN); }
}
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
console.log(which, detach ? 'detached' : 'clean   ', 'wall', med(walls).toFixed(2), 'upload', med(ups).toFixed(2));
await b.dispose();
