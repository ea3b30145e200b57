#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s28b.sh
# Piscina's grid search with its prefix ranges largest first (guided; tried, then reverted) on the seed rows, 3 processes,
# to set beside the even split of s28 (bench-seed-h200-2026-11-29-s28-grid.md), and its thread
# scaling. Everything in $OUT/s28b.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
bench grid-guided 150 --op gridSearch --backend cpu,piscina --variant wasm-simd --rounds 3 --no-floor
timeout 90 node apps/studies/dist/piscina/scaling.js --ops gridSearch --budget-s 70 --out "$OUT/scaling-grid" > "$OUT/scaling-grid.out" 2>&1
echo "scaling rc=$? at $SECONDS s"; tail -12 "$OUT/scaling-grid.out"
host_end s28b
