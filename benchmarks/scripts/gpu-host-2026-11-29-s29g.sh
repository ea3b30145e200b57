#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s29g.sh
# The grid seed rows with Piscina's claimed ranges at 64 per thread (the build this session ends
# with), beside WebGPU and the router, 3 processes each (the cpu backend's rows: -s29e).
# Everything in $OUT/s29g.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
bench grid 300 --op gridSearch --backend piscina,webgpu,kernelkit --variant wasm-simd,pruned,routed --rounds 3 --no-floor
timeout 60 taskset -c 2,3 node apps/bench/dist/cli.js --workload small --no-progress --op gridSearch --backend cpu,piscina --variant wasm-simd --rounds 3 --no-floor \
  --json "$OUT/bench-grid6-2core-slice.json" --md "$OUT/bench-grid6-2core-slice.md" > "$OUT/bench-grid6-2core-slice.out" 2> "$OUT/bench-grid6-2core-slice.log"
echo "2-core slice rc=$? at $SECONDS s"; tail -3 "$OUT/bench-grid6-2core-slice.log"
host_end s29g
