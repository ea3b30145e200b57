#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s29c.sh
# Where the router sends the CS610 grid search (8 steps/dim) and why, in three fresh processes each
# calibrating into a fresh cache, then the full grid in one more: router-grid-diag.mjs's lines in
# $OUT/router-grid-diag.txt, packed as $OUT/s29c.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
for run in 1 2 3 4; do
  steps=8; [ $run = 4 ] && steps=13
  echo "# process $run, $steps steps/dim" >> "$OUT/router-grid-diag.txt"
  KERNELKIT_CALIBRATION_CACHE="$OUT/calibration-$run.json" timeout 120 node benchmarks/scripts/router-grid-diag.mjs $steps 40 >> "$OUT/router-grid-diag.txt" 2>> "$OUT/router-grid-diag.log"
  echo "run $run rc=$? at $SECONDS s"
done
cat "$OUT/router-grid-diag.txt"
host_end s29c
