#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s28.sh
# The grid search's wasm-simd variant (the pruned search in WebAssembly SIMD) beside the JavaScript
# pruned search, on the cpu backend and Piscina, with WebGPU and the router: the seed rows (CS610 8
# steps/dim and the full grid, 3 processes each) on all 16 cores; the small workload's row (6 steps/dim)
# on a 2-core slice (taskset -c 2,3); Piscina's thread scaling on the grid search. Everything in
# $OUT/s28.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
bench grid 270 --op gridSearch --backend cpu,piscina,webgpu,kernelkit --variant wasm-simd,pruned,routed --rounds 3 --no-floor
timeout 150 taskset -c 2,3 node apps/bench/dist/cli.js --workload small --no-progress --op gridSearch --backend cpu,piscina,kernelkit --variant wasm-simd,pruned,routed --rounds 3 --no-floor \
  --json "$OUT/bench-grid6-2core-slice.json" --md "$OUT/bench-grid6-2core-slice.md" > "$OUT/bench-grid6-2core-slice.out" 2> "$OUT/bench-grid6-2core-slice.log"
echo "2-core slice rc=$? at $SECONDS s"; tail -5 "$OUT/bench-grid6-2core-slice.log"
timeout 120 node apps/studies/dist/piscina/scaling.js --ops gridSearch --budget-s 100 --out "$OUT/scaling-grid" > "$OUT/scaling-grid.out" 2>&1
echo "scaling rc=$? at $SECONDS s"; tail -20 "$OUT/scaling-grid.out"
host_end s28
