#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s30.sh
# The router with the grid search's work counted as the pruned search's node tests (gridSearchWork)
# instead of grid points. First, while no process of this host session has used the GPU: the
# router alone on the grid seed rows, 5 processes from empty caches (the case that misrouted);
# then the grid rows beside WebGPU and Piscina (3 processes each), two processes of
# router-grid-diag.mjs (predictions against measured), and `kernelkit calibrate` from an empty
# cache (issue 16's 60 s bound). Everything in $OUT/s30.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
bench grid-router 230 --op gridSearch --backend kernelkit --rounds 5 --no-floor
bench grid 300 --op gridSearch --backend piscina,webgpu,kernelkit --variant wasm-simd,pruned,routed --rounds 3 --no-floor
for steps in 8 13; do
  echo "# router-grid-diag.mjs $steps steps/dim, fresh cache" >> "$OUT/router-grid-diag.txt"
  KERNELKIT_CALIBRATION_CACHE="$(mktemp -u).json" timeout 90 node benchmarks/scripts/router-grid-diag.mjs "$steps" 40 2>/dev/null | grep '^{' >> "$OUT/router-grid-diag.txt"
  echo "diag $steps rc=$?"
done
t0=$SECONDS
KERNELKIT_CALIBRATION_CACHE="$OUT/calibration.json" timeout 120 node packages/kernelkit/bin/kernelkit.js calibrate > "$OUT/calibrate.txt" 2> "$OUT/calibrate.log"
echo "calibrate rc=$? $((SECONDS - t0)) s" | tee -a "$OUT/calibrate.txt"
host_end s30
