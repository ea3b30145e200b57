#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-12-03-s45.sh PART
# Issue 16's sixteen seed rows on one code (GPU fits with a bytes term, be5be95; in-place pooled
# results bounded, ba244a6): the router against the backends it races, one process per backend.
# race-rest: stencil3d, scan and the grid search (not re-run since the bytes term); race-conv:
# conv2d and convLayer again, on a fresh machine, so both halves come from this code.
# Pack with GPU_HOST_PACK_LEAN=1. Everything in $OUT/s45-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
part=${1:?usage: gpu-host-2026-12-03-s45.sh race-rest|race-conv}
host_begin
case "$part" in
  race-rest) race s45-race-rest stencil3d,scan,gridSearch "$ROUTER_RACE_VARIANTS" ;;
  race-conv) race s45-race-conv conv2d,convLayer wasm-simd,auto,gemm,routed ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
host_end "s45-$part"
