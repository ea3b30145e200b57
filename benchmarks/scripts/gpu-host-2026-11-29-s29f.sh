#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s29f.sh
# Piscina's grid search at 64, 256, 1024 (this build) and 4096 claimed ranges per thread, and s28's 8
# fixed ranges per thread, alternating in one process (piscina-grid-ab.mjs; the other builds are
# this build's packages/piscina/dist with RANGES_PER_THREAD edited, packed at node_modules/.kk-rN/dist,
# and e1101dd's at node_modules/.kk-old/dist): 16 threads on CS610 8 steps/dim and the full grid,
# 4 threads on 8 steps/dim, and 2 threads on a 2-core slice (taskset -c 2,3) on 6 steps/dim.
# Everything in $OUT/s29f.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
others=node_modules/.kk-r64/dist,node_modules/.kk-r256/dist,node_modules/.kk-r4096/dist,node_modules/.kk-old/dist
for spec in "8 16 9" "13 16 7" "8 4 5"; do
  set -- $spec
  timeout 150 node benchmarks/scripts/piscina-grid-ab.mjs $others $1 $2 $3 >> "$OUT/grid-ranges.txt" 2>> "$OUT/grid-ranges.log"
  echo "steps $1 threads $2 rc=$? at $SECONDS s"; tail -1 "$OUT/grid-ranges.txt" | head -c 400; echo
done
timeout 120 taskset -c 2,3 node benchmarks/scripts/piscina-grid-ab.mjs $others 6 2 9 >> "$OUT/grid-ranges.txt" 2>> "$OUT/grid-ranges.log"
echo "2-core slice rc=$? at $SECONDS s"; tail -1 "$OUT/grid-ranges.txt" | head -c 400; echo
host_end s29f
