#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s26.sh
# Piscina pool start with the workers on the narrow entries against the main entries
# (pool-start.mjs): all 16 cores at 1-16 threads, and a 2-core slice (taskset -c 2,3) at 1 and 2.
# Everything in $OUT/s26.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
timeout 240 node benchmarks/scripts/pool-start.mjs 1,2,4,8,16 20 > "$OUT/pool-start-16core.txt" 2>&1
echo "16 cores rc=$? at $SECONDS s"; cat "$OUT/pool-start-16core.txt"
timeout 120 taskset -c 2,3 node benchmarks/scripts/pool-start.mjs 1,2 20 > "$OUT/pool-start-2core-slice.txt" 2>&1
echo "2-core slice rc=$? at $SECONDS s"; cat "$OUT/pool-start-2core-slice.txt"
host_end s26
