#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s29d.sh
# After the router's prediction-bias change and Piscina's claimed grid ranges: Piscina's grid search
# against s28's build (packages/piscina/dist built at e1101dd, packed at node_modules/.kk-old/dist) on a 2-core slice (taskset -c 2,3, 6 steps/dim,
# 2 threads, alternating in one process); the grid seed rows with every backend and the router,
# 3 processes each; the router alone on the other ops' seed rows, one process. Everything in
# $OUT/s29d.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
timeout 60 taskset -c 2,3 node benchmarks/scripts/piscina-grid-ab.mjs node_modules/.kk-old/dist 6 2 11 > "$OUT/grid-ab-2core-slice.txt" 2> "$OUT/grid-ab-2core-slice.log"
echo "ab 2-core rc=$? at $SECONDS s"; cat "$OUT/grid-ab-2core-slice.txt"
bench grid 200 --op gridSearch --backend cpu,piscina,webgpu,kernelkit --variant wasm-simd,routed --rounds 3 --no-floor
echo "at $SECONDS s"
bench router-other 300 --op conv2d,convLayer,stencil3d,scan --backend kernelkit --no-floor
host_end s29d
