// Host copy speeds on this machine for a readback of BYTES (default 160 MB, scan 40M's output):
// out of a mapped MAP_READ buffer and out of an ordinary array, into a reused ArrayBuffer, a
// reused SharedArrayBuffer and fresh memory of each kind (TypedArray#set, and Buffer#fill from the
// mapped range); medians of 7 in one process.
// On the GPU host: . .gpu-host/on-host.sh && node benchmarks/scripts/webgpu-copy-speeds.mjs [BYTES]
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { BUF, gpuDeviceOf, MAP_READ } from '@kernelkit/webgpu/testing';
const bytes = Number(process.argv[2] ?? 160_000_000);
const backend = await createWebGpuBackend({ adapter: 'any' });
const { device } = gpuDeviceOf(backend);
const src = device.createBuffer({ size: bytes, usage: BUF.STORAGE | BUF.COPY_SRC | BUF.COPY_DST });
const read = device.createBuffer({ size: bytes, usage: BUF.MAP_READ | BUF.COPY_DST });
const host = new Uint8Array(bytes).fill(7);
const touched = (u) => { for (let i = 0; i < u.length; i += 4096) u[i] = 1; return u; };
const reusedAB = touched(new Uint8Array(bytes));
const reusedSAB = touched(new Uint8Array(new SharedArrayBuffer(bytes)));
const dests = {
  'reused ArrayBuffer': () => reusedAB,
  'reused SharedArrayBuffer': () => reusedSAB,
  'fresh ArrayBuffer': () => new Uint8Array(bytes),
  'fresh SharedArrayBuffer': () => new Uint8Array(new SharedArrayBuffer(bytes)),
};
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };
const gbs = (ms) => (bytes / ms / 1e6).toFixed(2);
const rows = [];
let dma = [];
for (const [name, dest] of Object.entries(dests)) {
  const fromMapped = [], fromHost = [], fillMapped = [];
  for (let i = 0; i < 7; i++) {
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(src, 0, read, 0, bytes);
    device.queue.submit([enc.finish()]);
    let t = performance.now();
    await read.mapAsync(MAP_READ);
    dma.push(performance.now() - t);
    const mapped = new Uint8Array(read.getMappedRange());
    const d = dest();
    t = performance.now(); d.set(mapped); fromMapped.push(performance.now() - t);
    // Buffer#fill with a value as long as the range: one memcpy in Node's C++, shared or not.
    const f = dest();
    t = performance.now(); Buffer.from(f.buffer, f.byteOffset, f.byteLength).fill(mapped); fillMapped.push(performance.now() - t);
    read.unmap();
    const d2 = dest();
    t = performance.now(); d2.set(host); fromHost.push(performance.now() - t);
  }
  rows.push({ dest: name, fromMappedGBs: gbs(med(fromMapped)), fromHostArrayGBs: gbs(med(fromHost)), bufferFillFromMappedGBs: gbs(med(fillMapped)) });
}
console.log(JSON.stringify({ bytes, gpuToMappedGBs: gbs(med(dma)), rows }));
src.destroy(); read.destroy(); await backend.dispose();
