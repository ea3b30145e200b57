#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-03-s44.sh PART
# Issue 16 re-measured on the seed workload's conv rows after pooled conv results stopped being
# copied out of module memory (d50ca7a): the router against the backends it races, each in its own
# process. race-conv: conv2d and convLayer, one process per backend, no side-by-side turns (s43
# timed those) so the part fits one command (at most 600 s); race-rest: stencil3d, scan and the
# grid search the same way, so that one run covers all 16 rows. pool-conv: Piscina's seed conv rows
# alone once results past IN_PLACE_RESULT_MAX_BYTES are copied out again (race-conv found its
# conv2d 8192² K=5 and convLayer L1 B=10 000 rows 2.5-3.5x slower with every result in place).
# race-conv-bytes: race-conv again once GPU fits have a bytes term (the router's calibration had
# predicted WebGPU's seed conv2d from copy-bound small calls as if multiply-adds took the time). Pack with GPU_HOST_PACK_LEAN=1.
# Everything in $OUT/s44-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
part=${1:?usage: gpu-host-2026-12-03-s44.sh race-conv|race-rest|pool-conv|race-conv-bytes}
# race NAME OPS VARIANTS: the router against the backends it races, one process each.
host_begin
case "$part" in
  race-conv) race s44-race-conv conv2d,convLayer wasm-simd,auto,gemm,routed ;;
  race-rest) race s44-race-rest stencil3d,scan,gridSearch "$ROUTER_RACE_VARIANTS" ;;
  pool-conv) bench s44-pool-conv 400 --op conv2d,convLayer --backend piscina --variant wasm-simd --no-floor ;;
  race-conv-bytes) race s44c-race-conv conv2d,convLayer wasm-simd,auto,gemm,routed ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "s44-$part"
