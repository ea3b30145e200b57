/**
 * Where a big call's end-to-end time goes on the host side: upload (queue.writeBuffer in slices
 * of several sizes, until the queue is idle), readback (mapAsync, getMappedRange, the copy out),
 * and one scan call for comparison. A diagnostic for the bench's end-to-end column.
 *
 *   node apps/studies/dist/webgpu/transfer.js [--mib 1600] [--adapter hardware|any]
 */
import { makeScanArgs } from '@kernelkit/ops';
import { createWebGpuBackend, type AdapterKind } from '@kernelkit/webgpu';
import { BUF, GpuDevice, MAP_READ, openAdapter } from '@kernelkit/webgpu/testing';
import { Command, integer, oneOf, parseStudyArgs } from '../common.js';

const argv = parseStudyArgs<{ mib: number; adapter: AdapterKind }>(
  new Command('transfer')
    .description("where a big call's host-side time goes: uploads in slices, readback steps, one scan call")
    .option('--mib <n>', 'MiB moved each way', integer(), 1600)
    .option('--adapter <kind>', 'hardware, software or any', oneOf<AdapterKind>(['hardware', 'software', 'any']), 'hardware'),
);
const bytes = argv.mib * 2 ** 20;
const ms = (t0: number) => (performance.now() - t0).toFixed(1);

const opened = await openAdapter(argv.adapter);
if ('reasons' in opened) throw new Error(opened.reasons.join('; '));
const gpu = await GpuDevice.open(opened);
const device = gpu.device;
const host = new Float32Array(bytes / 4);
for (let i = 0; i < host.length; i += 1024) host[i] = i;
const buf = gpu.storage(bytes);
console.log(`transfer: ${gpu.info.description}; ${argv.mib} MiB`);
for (const stepMiB of [16, 64, 256]) {
  for (let rep = 0; rep < 2; rep++) {
    const t0 = performance.now();
    const u8 = new Uint8Array(host.buffer);
    for (let o = 0; o < bytes; o += stepMiB << 20) device.queue.writeBuffer(buf, o, u8, o, Math.min(stepMiB << 20, bytes - o));
    const queued = ms(t0);
    await device.queue.onSubmittedWorkDone();
    console.log(`upload in ${stepMiB} MiB slices: writeBuffer calls ${queued} ms, until idle ${ms(t0)} ms`);
  }
}
for (let rep = 0; rep < 2; rep++) {
  let t0 = performance.now();
  const staging = device.createBuffer({ size: bytes, usage: BUF.MAP_READ | BUF.COPY_DST });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(buf, 0, staging, 0, bytes);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(MAP_READ);
  const mapped = ms(t0);
  t0 = performance.now();
  const range = staging.getMappedRange();
  const got = ms(t0);
  t0 = performance.now();
  const copy = range.slice(0);
  const sliced = ms(t0);
  t0 = performance.now();
  const out = new Float32Array(bytes / 4);
  const alloc = ms(t0);
  t0 = performance.now();
  out.set(new Float32Array(copy));
  const set = ms(t0);
  t0 = performance.now();
  out.set(new Float32Array(range));
  const setDirect = ms(t0);
  staging.unmap();
  staging.destroy();
  console.log(`readback: copy + mapAsync ${mapped} ms, getMappedRange ${got} ms, slice ${sliced} ms, new array ${alloc} ms, set from the slice ${set} ms, set straight from the mapped range ${setDirect} ms`);
}
gpu.release(buf);
gpu.destroy();

const be = await createWebGpuBackend({ adapter: argv.adapter });
const args = makeScanArgs({ n: bytes / 4, dtype: 'f32' });
for (let rep = 0; rep < 3; rep++) {
  const t0 = performance.now();
  const r = await be.scan(args, { variant: 'decoupled', timing: true });
  console.log(`scan ${bytes / 4} f32: ${ms(t0)} ms end to end, kernel ${r.timing?.kernelMs?.toFixed(3)} ms`);
}
await be.dispose();
