#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-28-s21b.sh
# Second call of the session, everything in $OUT/s21b.tar.gz:
#   probes: why stencil3d 64^3 x 100 on WebGPU runs slower after scan 400M's input was only made
#           (make-first): with a self-time profile against alone; with a full collection after the
#           make (KK_GC_AFTER, node --expose-gc); with glibc's mmap threshold fixed at its default
#           (MALLOC_MMAP_THRESHOLD_, no dynamic raise); with the input made before the backend
#           (make-before); big-first with a full collection after the large calls
#   rows:   stencil3d 256^3 / 512^3 x 10 and the CS610 grid search (8 steps, full) on piscina,
#           webgpu and the router, not yet run
#           on the H200, 3 processes each, with the router
set -u
final=$OUT
OUT=$(mktemp -d)
. "$(dirname "$0")/h100-bench.sh"
s=benchmarks/scripts/webgpu-process-state.mjs
probe() { local tag=$1; shift; echo "== $tag" >> "$OUT/process-state.txt"; timeout 90 "$@" stencil-64-s100 2>/dev/null | grep '^{' >> "$OUT/process-state.txt"; }
t0=$SECONDS
probe alone-profile env KK_PROFILE=15 node $s alone
probe make-first-profile env KK_PROFILE=15 node $s make-first
probe make-first-gc env KK_GC_AFTER=1 node --expose-gc $s make-first
probe make-first-mmap env MALLOC_MMAP_THRESHOLD_=131072 node $s make-first
probe make-before node $s make-before
probe big-first-gc env KK_GC_AFTER=1 node --expose-gc $s big-first
probe make-first node $s make-first
probe make-first-gc env KK_GC_AFTER=1 node --expose-gc $s make-first
probe alone node $s alone
probe big-first-mmap env MALLOC_MMAP_THRESHOLD_=131072 node $s big-first
echo "probes $((SECONDS - t0)) s"
bench stencil 230 --case stencil-256-s10,stencil-512-s10 --backend piscina,webgpu,kernelkit --variant wasm-simd,streamed,routed --rounds 3 --no-floor
rem=$((570 - SECONDS))
bench grid $rem --case grid-cs610-8,grid-cs610-full --backend piscina,webgpu,kernelkit --variant pruned,routed --rounds 3 --no-floor
tar -czf "$final/s21b.tar.gz" -C "$OUT" .
echo "done $SECONDS s"
