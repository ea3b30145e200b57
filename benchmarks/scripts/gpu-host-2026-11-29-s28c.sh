#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s28c.sh
# Piscina's grid search in 32 even prefix ranges per thread (not 8) on the seed rows, 3 processes,
# to set beside s28's 8 (bench-seed-h200-2026-11-29-s28-grid.md). Everything in $OUT/s28c.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
bench grid-32 150 --op gridSearch --backend piscina --variant wasm-simd --rounds 3 --no-floor
host_end s28c
