// WebGPU with and without uploads through queue.writeBuffer, in one process: backend "direct" with
// the adapter's default staging, backend "ring" with the same ring shape but nothing past
// SMALL_WRITE_BYTES sent to writeBuffer (setStagingShape); blocks of 20 calls alternating, 3 each
// after warm-ups; median end-to-end and upload ms per backend. Cases of the small workload unless named.
// Usage: EGL_PLATFORM=surfaceless node benchmarks/scripts/webgpu-direct-write-ab.mjs [CASE_ID...]
import { benchCases } from '@kernelkit/bench';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { setStagingShape } from '@kernelkit/webgpu/testing';
const cases = benchCases('small');
const ids = process.argv.slice(2);
const picked = ids.length > 0 ? ids.map((id) => cases.find((c) => c.id === id)) : cases.filter((c) => c.op !== 'gridSearch');
const direct = await createWebGpuBackend({ adapter: 'any' });
const ring = await createWebGpuBackend({ adapter: 'any' });
const software = direct.info?.adapter?.software ?? false;
await setStagingShape(ring, 4, software ? 4 << 20 : 32 << 20);
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return +s[s.length >> 1].toFixed(3); };
for (const c of picked) {
  const args = await c.make();
  const t = { direct: { e2e: [], upload: [] }, ring: { e2e: [], upload: [] } };
  const bs = { direct, ring };
  for (const k of ['direct', 'ring']) for (let i = 0; i < 3; i++) await bs[k][c.op](args, { timing: true });
  for (let block = 0; block < 6; block++) {
    const k = block % 2 ? 'ring' : 'direct';
    for (let i = 0; i < 20; i++) {
      const s = performance.now();
      const r = await bs[k][c.op](args, { timing: true });
      t[k].e2e.push(performance.now() - s);
      t[k].upload.push(r.timing?.uploadMs ?? NaN);
    }
  }
  console.log(JSON.stringify({ id: c.id, adapter: direct.info?.adapter?.description, direct: { e2e: med(t.direct.e2e), upload: med(t.direct.upload) }, ring: { e2e: med(t.ring.e2e), upload: med(t.ring.upload) } }));
}
await ring.dispose(); await direct.dispose();
