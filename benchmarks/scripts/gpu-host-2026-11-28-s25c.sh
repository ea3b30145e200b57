#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-28-s25c.sh
# The seed convLayer rows on 16 cores after the convLayer module tasks' chunked copy-out: Piscina
# (16 threads) against onnxruntime on 16 intra-op threads, with the memory floor. Everything in
# $OUT/s25c.tar.gz. Pack with GPU_HOST_PACK_LEAN=onnxruntime.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
bench seedconvlayer 480 --op convLayer --backend piscina,onnxruntime --variant wasm-simd,16t
host_end s25c
