#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-28-s25.sh
# Issue 19's 2-core targets on a quiet 2-core slice of the host (taskset -c 2,3: two of its 16 cores,
# the rest idle), where the dev VM's two cores are shared with other tenants: the interleaved
# cpu / piscina / onnxruntime / tfjs-wasm script with the plain and the relaxed build, the conv-layer
# kernel's own 2-thread scaling, and the small bench with onnxruntime. Pack with GPU_HOST_PACK_LEAN=onnxruntime (the full pack is
# over the carry limit; tfjs-wasm, which the cpu backend already beats on every row, is left out).
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
T="taskset -c 2,3"
{ lscpu; $T node -p 'require("os").availableParallelism()'; } > "$OUT/machine.txt" 2>&1
cases=conv2d-4x512-k11,conv2d-1x1024-k5,convlayer-L1-b100,convlayer-L2-b100
for i in 1 2; do
  for f in plain relaxed; do
    echo "== $f $i" >> "$OUT/interleaved.txt"
    KERNELKIT_WASM_SIMD=$f timeout 120 $T node benchmarks/scripts/cpu-vs-peers-interleaved.mjs $cases 10 6 >> "$OUT/interleaved.txt" 2>> "$OUT/interleaved.log"
    echo "interleaved $f $i rc=$? at $SECONDS s"
  done
done
for l in L1 L2; do for f in plain relaxed; do
  timeout 60 $T node benchmarks/scripts/kernel-thread-scaling.mjs $l 2 15 $f >> "$OUT/scaling.txt" 2>&1
done; done
echo "scaling at $SECONDS s"; cat "$OUT/scaling.txt"
timeout 200 $T node apps/bench/dist/cli.js --workload small --op conv2d,convLayer --backend cpu,piscina,onnxruntime \
  --variant wasm-simd,1t,2t --no-progress --json "$OUT/bench-small.json" --md "$OUT/bench-small.md" > "$OUT/bench-small.out" 2> "$OUT/bench-small.log"
echo "bench rc=$? at $SECONDS s"
cat "$OUT/interleaved.txt"
host_end s25
