// What a result array's first write costs on this machine: new Float32Array(n) filled from a
// source, 40 times in a row (fresh memory page-faults until the allocator reuses freed blocks),
// for 1, 4 and 16 MiB.   node benchmarks/scripts/fresh-array-writes.mjs
for (const mib of [1, 4, 16]) {
  const n = (mib * 2 ** 20) / 4;
  const src = new Float32Array(n).fill(1);
  const ms = [];
  for (let i = 0; i < 40; i++) {
    const t0 = performance.now();
    new Float32Array(n).set(src);
    ms.push(performance.now() - t0);
  }
  const sorted = [...ms].sort((a, b) => a - b);
  console.log(`${mib} MiB: ${ms.map((x) => x.toFixed(2)).join(' ')}\n  min ${sorted[0].toFixed(2)} ms, max ${sorted.at(-1).toFixed(2)} ms`);
}
