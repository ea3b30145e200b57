#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`:  bash benchmarks/scripts/h100-2026-11-24-s10.sh PART
# The router against the backends it chooses among, each backend in 3 child processes round-robin
# (--rounds 3: a row keeps its median round and lists all three), so one slow process moves no row.
#   conv:  seed conv2d and convLayer: Piscina, WebGPU, onnxruntime on 16 threads, the router
#   rest:  seed stencil3d and scan: Piscina, WebGPU, the router (past one call's 10 minutes: see
#          stencil and scan, the same rows in two calls)
#   scan40, scan400: the scan rows in two calls (all of them past one call's 10 minutes)
#   router: the router's conv2d and convLayer rows alone, three processes, each saying where it routed
#   grid:  seed grid search: cpu (the exact point list every row is checked against), WebGPU, the router
set -u
part=${1:?part conv|rest|stencil|scan|scan40|scan400|router|grid}
. "$(dirname "$0")/h100-bench.sh"
case $part in
  conv) bench conv 585 --op conv2d,convLayer --backend piscina,webgpu,onnxruntime,kernelkit --variant wasm-simd,auto,gemm,16t,routed --rounds 3 ;;
  rest) bench rest 585 --op stencil3d,scan --backend piscina,webgpu,kernelkit --variant wasm-simd,two-pass,streamed,decoupled-subgroups,decoupled,routed --rounds 3 ;;
  stencil) bench stencil 500 --op stencil3d --backend piscina,webgpu,kernelkit --variant wasm-simd,streamed,routed --rounds 3 ;;
  scan) bench scan 585 --op scan --backend piscina,webgpu,kernelkit --variant two-pass,decoupled-subgroups,decoupled,routed --rounds 3 ;;
  scan40) bench scan40 585 --op scan --case scan-40M-u32,scan-40M-f32 --backend piscina,webgpu,kernelkit --variant two-pass,decoupled-subgroups,decoupled,routed --rounds 3 ;;
  scan400) bench scan400 585 --op scan --case scan-400M-f32 --backend piscina,webgpu,kernelkit --variant two-pass,decoupled-subgroups,decoupled,routed --rounds 3 ;;
  router) bench router 400 --op conv2d,convLayer --backend kernelkit --no-floor --rounds 3 ;;
  grid) bench grid 585 --op gridSearch --backend cpu,webgpu,kernelkit --variant pruned,routed --rounds 3 ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
