#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-01-s34.sh a|b|c
# Issue 16's router rows on the code with calibration fitted in relative error and outclassed sizes
# left out. a = calibration from an empty cache (its time and what it left out), then the four rows
# that missed 1.1x on 2026-11-29 (conv2d 8192^2, stencil3d 64^3 x 100, scan 40M u32, convLayer L1
# B=1000); b = six more seed rows; c and d = the other six. 3 processes per backend.
# Pack with GPU_HOST_PACK_LEAN=1. Everything in $OUT/s34-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
B=$ROUTER_RACE_BACKENDS
V=$ROUTER_RACE_VARIANTS
case "${1:?a, b, c or d}" in
  a)
    t0=$(date +%s%N)
    node packages/kernelkit/dist/cli.js calibrate --cache "$OUT/calibration.json" --no-progress > "$OUT/calibration.txt" 2>&1
    echo "calibrate: exit $?, wall $(( ($(date +%s%N) - t0) / 1000000 )) ms (process start to exit)" >> "$OUT/calibration.txt"
    grep -v '^Warning\|^    at \|^$' "$OUT/calibration.txt" | head -12
    bench s34a 470 --op conv2d,stencil3d,scan,convLayer --case conv2d-1x8192-k5,stencil-64-s100,scan-40M-u32,convlayer-L1-b1000 --backend $B --variant $V --rounds 3 --no-floor ;;
  b) bench s34b 560 --op conv2d,stencil3d,scan,convLayer --case conv2d-16x2048-k11,stencil-256-s10,stencil-512-s10,convlayer-L1-b100,convlayer-L2-b100,scan-40M-f32 --backend $B --variant $V --rounds 3 --no-floor ;;
  c) bench s34c 560 --op convLayer,gridSearch,scan --case convlayer-L1-b10000,convlayer-L2-b1000,grid-cs610-8,grid-cs610-full --backend $B --variant $V --rounds 3 --no-floor ;;
  d) bench s34d 450 --op convLayer,scan --case convlayer-L2-b10000,scan-400M-f32 --backend $B --variant $V --rounds 3 --no-floor ;;
  *) echo "unknown part $1" >&2; exit 2 ;;
esac
host_end "s34-$1"
