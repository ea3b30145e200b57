// Runs on Node 20+: `node examples/quickstart.mjs` after `npm ci` (or in a project that installed kernelkit).
import { createKernels } from 'kernelkit';

const kernels = await createKernels(); // each call goes to the backend fastest for it here
try {
  console.log(`backend: ${kernels.selected}`);
  for (const s of kernels.skipped) console.log(`  skipped ${s.backend}: ${s.reason}`);

  // A 3×3 box blur of one 4×4 image ('same' size, zero padding outside the image).
  const input = Float32Array.from({ length: 16 }, (_, i) => i);
  const filter = new Float32Array(9).fill(1 / 9);
  const blurred = await kernels.conv2d({ input, filter, height: 4, width: 4, k: 3 }, { timing: true });
  console.log(`conv2d ran ${blurred.backend}/${blurred.variant} in ${blurred.timing?.totalMs.toFixed(2)} ms`);
  console.log(Array.from(blurred.data, (v) => v.toFixed(2)).join(' '));

  // Prefix sums: integers wrap modulo 2^32 and are bit-exact on every backend.
  const sums = await kernels.scan({ input: Uint32Array.from([1, 2, 3, 4]) });
  console.log(`scan: ${Array.from(sums.data).join(' ')}`); // 1 3 6 10
} finally {
  await kernels.dispose(); // releases workers and GPU devices: the process then exits by itself
}
