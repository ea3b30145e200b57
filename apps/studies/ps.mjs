import { createPiscinaBackend } from '@kernelkit/piscina';
const med = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1].toFixed(1);
for (const threads of [1, 2, 1, 2]) {
  const a = [];
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    const k = await createPiscinaBackend({ threads });
    a.push(performance.now() - t0);
    await k.dispose();
  }
  console.log(`threads ${threads}: kernelkit pool ${med(a)} ms`);
}
