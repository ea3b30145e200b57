// Node 22+ (explicit resource management): `await using` disposes the kernels at the end of the scope.
import { createKernels } from 'kernelkit';

await using kernels = await createKernels();
const sums = await kernels.scan({ input: Uint32Array.from([1, 2, 3, 4]) });
console.log(kernels.selected, Array.from(sums.data).join(' ')); // e.g. piscina 1 3 6 10
