// A timeline of WebGPU API calls inside repeated calls of one bench case on the WebGPU backend:
// when each submit, writeBuffer, mapAsync and onSubmittedWorkDone starts and (for promises)
// resolves, and host copies of 1 MiB or more, relative to the call's start. Shows where an end-to-end call spends what the kernel
// does not. On the GPU host: . .gpu-host/on-host.sh && node benchmarks/scripts/webgpu-call-trace.mjs CASE [CALLS] [WORKLOAD]
import { benchCases } from '@kernelkit/bench';
import { createKernels } from 'kernelkit';
import { globals } from 'webgpu';
const [caseId = 'grid-cs610-8', callsArg = '8', workload = 'seed'] = process.argv.slice(2);
const c = benchCases(workload).find((x) => x.id === caseId);
if (c === undefined) throw new Error(`unknown case ${caseId}`);
let t0 = 0;
let log = [];
const at = () => Number((performance.now() - t0).toFixed(2));
const wrap = (cls, name, isPromise) => {
  const orig = cls.prototype[name];
  cls.prototype[name] = function (...a) {
    const start = at();
    const size = name === 'writeBuffer' ? a[2]?.byteLength ?? '' : name === 'mapAsync' ? a[2] ?? this.size : name === 'createBuffer' ? a[0]?.size : '';
    const r = orig.apply(this, a);
    const entry = [name, start, size];
    log.push(entry);
    if (isPromise && r && typeof r.then === 'function') r.then(() => entry.push(at()), () => entry.push('rejected'));
    return r;
  };
};
wrap(globals.GPUQueue, 'submit', false);
wrap(globals.GPUQueue, 'writeBuffer', false);
wrap(globals.GPUQueue, 'onSubmittedWorkDone', true);
wrap(globals.GPUBuffer, 'mapAsync', true);
wrap(globals.GPUDevice, 'createBuffer', false);
wrap(globals.GPUDevice, 'popErrorScope', true);
// Host copies of 1 MiB or more (into or out of mapped ranges, staging), with their end time:
// TypedArray#set, and Buffer#fill, which copyInto (@kernelkit/core) uses where memory is shared.
const stampCopies = (proto, name) => {
  const original = proto[name];
  proto[name] = function (...a) {
    if (this.byteLength < 1 << 20) return original.apply(this, a);
    const start = at();
    const r = original.apply(this, a);
    log.push(['copy', start, this.byteLength, at()]);
    return r;
  };
};
stampCopies(Uint8Array.prototype, 'set');
stampCopies(Buffer.prototype, 'fill');
const args = await c.make();
const k = await createKernels({ backend: 'webgpu' });
// KK_FRESH_LANDING=1 or 0: calls without out gather their output in the landing buffer, or read it through the ring.
if (process.env.KK_FRESH_LANDING !== undefined) (await import('@kernelkit/webgpu/testing')).setFreshOutputLanding(k.backend, process.env.KK_FRESH_LANDING === '1');
for (let i = 0; i < Number(callsArg); i++) {
  log = [];
  t0 = performance.now();
  const r = await k[c.op](args);
  const ms = performance.now() - t0;
  console.log(JSON.stringify({ call: i, ms: Number(ms.toFixed(2)), variant: r.variant, notes: r.notes }));
  if (i >= Number(callsArg) - 3) for (const e of log) console.log('  ' + JSON.stringify(e));
}
await k.dispose();
