#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s33.sh a|b|c|d|e|f
# Issue 16's H200 rows that missed 1.1x on 2026-11-29 (scan 40M u32 and f32, convLayer L1 B=10 000)
# on the code with the warm-ups until results reuse memory. a = the router against the backend it
# settles on, alternated in one process and that backend alone in its own (router-vs-direct-op.mjs),
# then the two scan rows, 3 processes per backend; b = why the router's Piscina calls ran slower in
# a's scan rows, then convLayer L1 B=10 000 as in a; c = the rows that were within 1.1x by under 8%
# (convLayer L2 B=100, stencil3d 512^3, conv2d 8192^2), 3 processes per backend, after two more
# runs of the router against Piscina; d = heap size and full collections there; e = five more seed
# rows as a-c, with what was left of the session's device time; f = stencil3d 64^3 as in a. Pack with GPU_HOST_PACK_LEAN=1.
# Everything in $OUT/s33-PART.tar.gz.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
B=$ROUTER_RACE_BACKENDS
V=$ROUTER_RACE_VARIANTS
diag() { timeout 150 node benchmarks/scripts/router-vs-direct-op.mjs "$@" 2>/dev/null | grep '^{' >> "$OUT/router-vs-direct.txt"; }
case "${1:?a, b or c}" in
  a)
    diag router scan-40M-u32 seed 40
    KK_BACKEND=webgpu KK_VARIANT=decoupled-subgroups diag direct scan-40M-u32 seed 40
    KK_BACKEND=piscina KK_VARIANT=wasm-simd diag direct scan-40M-u32 seed 40
    diag router scan-40M-f32 seed 40
    bench s33a 330 --op scan --case scan-40M-u32,scan-40M-f32 --backend $B --variant $V --rounds 3 --no-floor ;;
  b)
    # Why the router's Piscina calls on scan 40M u32 ran slower in the bench's rows than in a: the
    # router holding two results as the bench's row does, and both rows in one process.
    KK_HOLD=2 diag router scan-40M-u32 seed 40
    bench s33b-in-process 150 --op scan --case scan-40M-u32 --backend piscina,kernelkit --variant wasm-simd,routed --in-process --no-floor
    diag router convlayer-L1-b10000 seed 30
    KK_BACKEND=piscina KK_VARIANT=wasm-simd diag direct convlayer-L1-b10000 seed 30
    bench s33b 300 --op convLayer --case convlayer-L1-b10000 --backend $B --variant $V --rounds 3 --no-floor ;;
  c)
    # Whether the router's other backends (the cpu backend started for trials, WebGPU) slow its
    # Piscina calls when results are held: the router with some backends' loaders failing.
    KK_CANDIDATES=piscina,webgpu KK_HOLD=2 diag router scan-40M-u32 seed 40
    KK_CANDIDATES=piscina KK_HOLD=2 diag router scan-40M-u32 seed 40
    bench s33c 430 --op conv2d,stencil3d,convLayer --case convlayer-L2-b100,stencil-512-s10,conv2d-1x8192-k5 --backend $B --variant $V --rounds 3 --no-floor ;;
  e) bench s33e 500 --op conv2d,stencil3d,convLayer --case conv2d-16x2048-k11,stencil-64-s100,stencil-256-s10,convlayer-L1-b100,convlayer-L1-b1000 --backend $B --variant $V --rounds 3 --no-floor ;;
  f)
    # stencil3d 64^3 x 100 (2 ms calls), where the router's processes ran WebGPU's streamed 0.45 ms
    # slower than WebGPU's own in e: the router against WebGPU in one process, and WebGPU alone.
    diag router stencil-64-s100 seed 60
    KK_BACKEND=webgpu KK_VARIANT=streamed diag direct stencil-64-s100 seed 60 ;;
  d)
    # Heap size and full collections with results held (the result memory prompts a collection
    # after max(64 MiB, 4x the heap) of held results): the router's process and Piscina's own.
    KK_HOLD=2 diag router scan-40M-u32 seed 40
    KK_HOLD=2 KK_BACKEND=piscina KK_VARIANT=wasm-simd diag direct scan-40M-u32 seed 40
    KK_BACKEND=piscina KK_VARIANT=wasm-simd diag direct scan-40M-u32 seed 40
    KK_HOLD=2 diag router scan-40M-f32 seed 40 ;;
  *) echo "unknown part $1" >&2; exit 2 ;;
esac
host_end "s33-$1"
