#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s29e.sh
# The router calibrating the grid search at 4, 5 and 6 steps/dim (not 3, 4, 5): where it sends the
# CS610 grid (8 steps/dim) and why in three fresh processes, each with a fresh cache
# (router-grid-diag.mjs), and the full grid in a fourth; then the grid seed rows with every backend
# (WebGPU's pruned variant included) and the router, 3 processes each. Everything in
# $OUT/s29e.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
for run in 1 2 3 4; do
  steps=8; [ $run = 4 ] && steps=13
  echo "# process $run, $steps steps/dim" >> "$OUT/router-grid-diag.txt"
  KERNELKIT_CALIBRATION_CACHE="$OUT/calibration-$run.json" timeout 120 node benchmarks/scripts/router-grid-diag.mjs $steps 40 >> "$OUT/router-grid-diag.txt" 2>> "$OUT/router-grid-diag.log"
  echo "run $run rc=$? at $SECONDS s"
done
grep -h '"i":0' "$OUT/router-grid-diag.txt"
bench grid 300 --op gridSearch --backend cpu,piscina,webgpu,kernelkit --variant wasm-simd,pruned,routed --rounds 3 --no-floor
host_end s29e
