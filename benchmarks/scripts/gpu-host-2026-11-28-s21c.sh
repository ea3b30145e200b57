#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-28-s21c.sh
# Third call of the session, everything in $OUT/s21c.tar.gz:
#   probes: stencil3d 64^3 x 100 on WebGPU after 1.6 GB kept untouched or written (alloc-first,
#           alloc-first-touched) or a long integer loop (js-first) once the backend exists, against
#           alone and make-first (scan 400M's input made: a 1.6 GB write by a JS loop)
#   rows:   scan 400M f32 (not yet run on the H200) on piscina, webgpu and the router, 2 processes each
set -u
final=$OUT
OUT=$(mktemp -d)
. "$(dirname "$0")/h100-bench.sh"
s=benchmarks/scripts/webgpu-process-state.mjs
probe() { KK_SAMPLES=80 timeout 90 node $s "$@" stencil-64-s100 2>/dev/null | grep '^{' >> "$OUT/process-state.txt"; }
t0=$SECONDS
for sc in alone alloc-first alloc-first-touched js-first make-first alone alloc-first-touched alloc-first js-first; do probe $sc; done
echo "probes $((SECONDS - t0)) s"
rem=$((575 - SECONDS))
bench scan400 $rem --case scan-400M-f32 --backend piscina,webgpu,kernelkit --variant two-pass,decoupled-subgroups,routed --rounds 2 --no-floor
tar -czf "$final/s21c.tar.gz" -C "$OUT" .
echo "done $SECONDS s"
