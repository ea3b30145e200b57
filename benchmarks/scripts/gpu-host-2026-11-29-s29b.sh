#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s29b.sh
# Piscina's grid search with prefix ranges claimed from a shared counter (1024 per thread, one layout per task, restarted per range) beside the
# even split of s28 (8 ranges per thread, one task each: packages/piscina/dist built at e1101dd, packed at node_modules/.kk-old/dist),
# alternating in one process on 16 threads: CS610 8 steps/dim and the full grid. Then the seed rows
# (3 processes) with the cpu backend, WebGPU and the router, the small workload's row on a 2-core
# slice (taskset -c 2,3), and Piscina's thread scaling. Everything in $OUT/s29b.tar.gz. Pack with
# GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
for s in 8 13; do
  timeout 150 node benchmarks/scripts/piscina-grid-ab.mjs node_modules/.kk-old/dist $s 16 $([ $s = 8 ] && echo 11 || echo 7) >> "$OUT/grid-ab-16t.txt" 2>> "$OUT/grid-ab-16t.log"
  echo "ab $s rc=$? at $SECONDS s"; tail -1 "$OUT/grid-ab-16t.txt"
done
bench grid 270 --op gridSearch --backend cpu,piscina,webgpu,kernelkit --variant wasm-simd,routed --rounds 3 --no-floor
timeout 150 taskset -c 2,3 node apps/bench/dist/cli.js --workload small --no-progress --op gridSearch --backend cpu,piscina,kernelkit --variant wasm-simd,routed --rounds 3 --no-floor \
  --json "$OUT/bench-grid6-2core-slice.json" --md "$OUT/bench-grid6-2core-slice.md" > "$OUT/bench-grid6-2core-slice.out" 2> "$OUT/bench-grid6-2core-slice.log"
echo "2-core slice rc=$? at $SECONDS s"; tail -5 "$OUT/bench-grid6-2core-slice.log"
timeout 120 node apps/studies/dist/piscina/scaling.js --ops gridSearch --budget-s 100 --out "$OUT/scaling-grid" > "$OUT/scaling-grid.out" 2>&1
echo "scaling rc=$? at $SECONDS s"; tail -20 "$OUT/scaling-grid.out"
host_end s29b
