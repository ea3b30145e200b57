#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s27.sh
# Piscina's chained wasm-simd scan beside its JavaScript two-pass, the cpu backend, WebGPU and the
# router: the seed scan rows (40M f32 and u32, 3 processes each) on all 16 cores; the small
# workload's scan rows (4M) on a 2-core slice (taskset -c 2,3); where the pool starts to pay on a
# scan (threshold study, 16 and 2 threads). Everything in $OUT/s27.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
bench scan40 240 --case scan-40M-f32,scan-40M-u32 --backend cpu,piscina,webgpu,kernelkit --variant wasm-simd,two-pass,decoupled-subgroups,routed --rounds 3 --no-floor
timeout 120 taskset -c 2,3 node apps/bench/dist/cli.js --workload small --no-progress --op scan --backend cpu,piscina,kernelkit --variant wasm-simd,two-pass,routed --rounds 3 --no-floor \
  --json "$OUT/bench-scan4-2core-slice.json" --md "$OUT/bench-scan4-2core-slice.md" > "$OUT/bench-scan4-2core-slice.out" 2> "$OUT/bench-scan4-2core-slice.log"
echo "2-core slice rc=$? at $SECONDS s"
timeout 90 node apps/studies/dist/piscina/threshold.js --ops scan > "$OUT/threshold-scan-16.txt" 2>&1
echo "threshold 16 rc=$? at $SECONDS s"; tail -15 "$OUT/threshold-scan-16.txt"
timeout 90 taskset -c 2,3 node apps/studies/dist/piscina/threshold.js --ops scan --threads 2 > "$OUT/threshold-scan-2core-slice.txt" 2>&1
echo "threshold 2 rc=$? at $SECONDS s"; tail -15 "$OUT/threshold-scan-2core-slice.txt"
host_end s27
