#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-02-s36.sh
# Issue 16: the rows that missed 1.1x on 2026-12-02 (s35), after a trial's time became the median
# of its later half of calls (it was the median of that half's fastest half, which ranked a
# candidate whose calls vary widely by its lucky ones). 3 processes per backend.
# Pack with GPU_HOST_PACK_LEAN=1. Everything in $OUT/s36.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
bench s36 560 --op conv2d,scan,convLayer --case conv2d-1x8192-k5,scan-40M-u32,scan-40M-f32,convlayer-L1-b100,convlayer-L2-b100 --backend $ROUTER_RACE_BACKENDS --variant $ROUTER_RACE_VARIANTS --rounds 3 --no-floor
host_end s36
