#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-28-s21d.sh
# Fourth call of the session: stencil3d 64^3 x 100 on WebGPU alone and after a 4e8-iteration integer
# loop once the backend exists (js-first), on all 16 cores and pinned to 4 of them (taskset), and
# with the loop in a worker thread (js-first-worker: the main thread stays free), into $OUT/s21d.txt.
set -u
s=benchmarks/scripts/webgpu-process-state.mjs
probe() { local tag=$1; shift; echo "== $tag" >> "$OUT/s21d.txt"; KK_SAMPLES=80 timeout 60 "$@" stencil-64-s100 2>/dev/null | grep '^{' >> "$OUT/s21d.txt"; }
for i in 1 2; do
  probe alone node $s alone
  probe js-first node $s js-first
  probe alone-pinned4 taskset -c 4-7 node $s alone
  probe js-first-pinned4 taskset -c 4-7 node $s js-first
  probe js-first-worker node $s js-first-worker
done
echo "done $SECONDS s"
