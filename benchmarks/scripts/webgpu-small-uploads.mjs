// Upload of 256 KiB to 16 MiB from an ordinary host array into a storage buffer, as an op's call
// does it (inside GpuDevice.exclusive, so each call starts at the ring's first slice): through the
// staging ring (GpuDevice.write with the ring of 8 × 32 MiB slices and nothing past SMALL_WRITE_BYTES
// sent to writeBuffer) against
// queue.writeBuffer (Dawn's own staging copy). "host": ms until the call returns; "done": until
// onSubmittedWorkDone after it. Alternating, medians of KK_SAMPLES (50) after 10 warm-ups.
// On the GPU host: . .gpu-host/on-host.sh && node benchmarks/scripts/webgpu-small-uploads.mjs
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { gpuDeviceOf, setStagingShape } from '@kernelkit/webgpu/testing';
const samples = Number(process.env.KK_SAMPLES ?? 50);
const backend = await createWebGpuBackend({ adapter: 'any' });
// The hardware default's ring (8 × 32 MiB uploads), with no size sent to writeBuffer past SMALL_WRITE_BYTES.
await setStagingShape(backend, 8, 32 << 20);
const gpu = gpuDeviceOf(backend);
const device = gpu.device;
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return +s[s.length >> 1].toFixed(3); };
const paths = {
  ring: (dst, host) => gpu.write(dst, 0, host),
  writeBuffer: async (dst, host) => device.queue.writeBuffer(dst, 0, host),
};
for (const bytes of [256 << 10, 1 << 20, 2 << 20, 3 << 20, 3.5 * 2 ** 20, 4 << 20, 8 << 20, 16 << 20]) {
  const host = new Float32Array(bytes / 4).fill(1.5);
  const dst = gpu.storage(bytes);
  const t = Object.fromEntries(Object.keys(paths).map((k) => [k, { host: [], done: [] }]));
  for (let i = 0; i < samples + 10; i++) {
    const order = i % 2 ? ['ring', 'writeBuffer'] : ['writeBuffer', 'ring'];
    for (const k of order) {
      let t1 = 0;
      const t0 = performance.now();
      await gpu.exclusive(async () => {
        await paths[k](dst, host);
        t1 = performance.now();
        await device.queue.onSubmittedWorkDone();
      });
      const t2 = performance.now();
      if (i >= 10) { t[k].host.push(t1 - t0); t[k].done.push(t2 - t0); }
    }
  }
  gpu.release(dst);
  console.log(JSON.stringify({ bytes, adapter: backend.info?.adapter?.description ?? '', ...Object.fromEntries(Object.entries(t).map(([k, v]) => [k, { host: med(v.host), done: med(v.done) }])) }));
}
await backend.dispose();
