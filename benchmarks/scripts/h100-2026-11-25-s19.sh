#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`:  bash benchmarks/scripts/h100-2026-11-25-s19.sh PART
# Every seed part again on one build, after each row's timed calls start warm: its calls with
# `timing` (each with a GPU clock warm-up) run before the samples, and cheap rows warm up for a
# quarter of the row's budget (a row timed after a few calls ranked by how many its process made before):
#   conv:      conv2d and convLayer B=10000: Piscina, WebGPU, onnxruntime on 16 threads, the router (3 processes each)
#   convsmall: the rows of calls under 30 ms in 5 processes each: one process's median differs from
#              the next by up to 30 % there (roundMediansMs in bench-seed-h100-2026-11-25-s17-conv)
#   stencil, grid, scan40 (5 processes), scan400: as in h100-2026-11-24-s10.sh and h100-2026-11-25-s17.sh
set -u
part=${1:?part conv|convsmall|stencil|grid|scan40|scan400}
. "$(dirname "$0")/h100-bench.sh"
case $part in
  conv) bench conv 585 --op conv2d,convLayer --case conv2d-16x2048-k11,conv2d-1x8192-k5,convlayer-L1-b10000,convlayer-L2-b10000 --backend piscina,webgpu,onnxruntime,kernelkit --variant wasm-simd,auto,gemm,16t,routed --rounds 3 ;;
  convsmall) bench convsmall 585 --op convLayer --case convlayer-L1-b100,convlayer-L2-b100,convlayer-L1-b1000,convlayer-L2-b1000 --backend piscina,webgpu,kernelkit --variant wasm-simd,auto,gemm,routed --rounds 5 ;;
  stencil) bench stencil 500 --op stencil3d --backend piscina,webgpu,kernelkit --variant wasm-simd,streamed,routed --rounds 3 ;;
  grid) bench grid 585 --op gridSearch --backend cpu,webgpu,kernelkit --variant pruned,routed --rounds 3 ;;
  scan40) bench scan40 590 --op scan --case scan-40M-u32,scan-40M-f32 --backend piscina,webgpu,kernelkit --variant two-pass,decoupled-subgroups,decoupled,routed --rounds 5 ;;
  scan400) bench scan400 585 --op scan --case scan-400M-f32 --backend piscina,webgpu,kernelkit --variant two-pass,decoupled-subgroups,decoupled,routed --rounds 3 ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
